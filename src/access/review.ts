import {FleetError} from '../base/errors.js'
import type {KubeClient} from '../kube/client.js'
import {httpError} from '../kube/errors.js'

/**
 * Creates a review object (SelfSubjectReview, SelfSubjectAccessReview, SelfSubjectRulesReview): a POST whose answer is
 * the object with its status filled in. Versions are tried in order, as kubectl does for SelfSubjectReview; a 404 on
 * every version means the API is not served there (`api-missing`), which is not the same as a missing object.
 */
export interface ReviewRequest {
  group: string
  versions: string[]
  /** Plural resource name, e.g. selfsubjectreviews. */
  resource: string
  kind: string
  spec?: Record<string, unknown>
}

export interface ReviewAnswer<S> {
  apiVersion: string
  status: S
}

export async function createReview<S>(client: KubeClient, r: ReviewRequest): Promise<ReviewAnswer<S>> {
  for (const version of r.versions) {
    const apiVersion = `${r.group}/${version}`
    const res = await client.request('POST', `/apis/${apiVersion}/${r.resource}`, {
      apiVersion,
      kind: r.kind,
      ...(r.spec ? {spec: r.spec} : {}),
    })
    if (res.status === 404) continue
    if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `create ${r.resource}.${r.group}`)
    let body: {kind?: unknown; status?: S}
    try {
      body = JSON.parse(res.body)
    } catch {
      throw new FleetError('server', `create ${r.resource}.${r.group}: the answer is not JSON`)
    }
    // A 200 that is not the object asked for (a proxy's page, another API) answers nothing: never read it as "no".
    if (!body || typeof body !== 'object' || body.kind !== r.kind) {
      const got = body && typeof body === 'object' && typeof body.kind === 'string' ? `a ${body.kind}` : 'no kind'
      throw new FleetError('server', `create ${r.resource}.${r.group}: the server answered ${res.status} with ${got}, not a ${r.kind}`)
    }
    // Status fields are omitempty, so an absent status is an empty one; anything but an object is not this kind.
    if (body.status !== undefined && !isRecord(body.status)) throw wrongShape(r.kind, 'status is not an object')
    return {apiVersion, status: (body.status ?? {}) as S}
  }
  const tried = r.versions.map((v) => `${r.group}/${v}`).join(', ')
  throw new FleetError('api-missing', `the server does not serve ${r.resource} (tried ${tried})`)
}

/**
 * An answer of the right kind whose fields have the wrong types answers nothing (a server or proxy that is not what it
 * says): one line naming the field, `answer is not a SelfSubjectReview: status.userInfo.username is not a string`.
 */
export function wrongShape(kind: string, problem: string): FleetError {
  return new FleetError('server', `answer is not a ${kind}: ${problem}`)
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
}

/** Checks an optional field of a review's status: absent is fine (omitempty), present must pass `ok`. */
export function optionalField(kind: string, status: Record<string, unknown>, path: string, field: string, ok: (v: unknown) => boolean, what: string): void {
  if (status[field] !== undefined && !ok(status[field])) throw wrongShape(kind, `${path}.${field} is not ${what}`)
}
