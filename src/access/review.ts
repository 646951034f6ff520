import { FleetError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { httpError } from '../kube/errors.js';
import { type Resource, apiVersionOf, atVersion } from '../kube/resources.js';
import { sendObject } from '../kube/typed.js';

/**
 * Creates a review object (SelfSubjectReview, SelfSubjectAccessReview, SelfSubjectRulesReview): a POST whose answer is
 * the object with its status filled in. Versions are tried in order, as kubectl does for SelfSubjectReview; a 404 on
 * every version means the API is not served there (`api-missing`), which is not the same as a missing object.
 */
export interface ReviewRequest {
  /** The review's resource (kube/resources.ts), e.g. SELF_SUBJECT_REVIEW. */
  resource: Resource;
  /** The versions to try, in order (default: the resource's own). */
  versions?: string[];
  spec?: Record<string, unknown>;
}

export interface ReviewAnswer<S> {
  apiVersion: string;
  status: S;
}

export async function createReview<S>(client: KubeClient, r: ReviewRequest): Promise<ReviewAnswer<S>> {
  const { kind, plural, group } = r.resource;
  const versions = r.versions ?? [r.resource.version];
  for (const version of versions) {
    const resource = atVersion(r.resource, version);
    const apiVersion = apiVersionOf(resource);
    const res = await sendObject(
      client,
      'POST',
      resource,
      {},
      { body: { apiVersion, kind, ...(r.spec ? { spec: r.spec } : {}) } },
    );
    if (res.status === 404) continue;
    if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `create ${plural}.${group}`);
    let body: { kind?: unknown; status?: S };
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      throw new FleetError('server', `create ${plural}.${group}: the answer is not JSON`);
    }
    // A 200 that is not the object asked for (a proxy's page, another API) answers nothing: never read it as "no".
    if (!body || typeof body !== 'object' || body.kind !== kind) {
      const got = body && typeof body === 'object' && typeof body.kind === 'string' ? `a ${body.kind}` : 'no kind';
      throw new FleetError(
        'server',
        `create ${plural}.${group}: the server answered ${res.status} with ${got}, not a ${kind}`,
      );
    }
    // Status fields are omitempty, so an absent status is an empty one; anything but an object is not this kind.
    if (body.status !== undefined && !isRecord(body.status)) throw wrongShape(kind, 'status is not an object');
    return { apiVersion, status: (body.status ?? {}) as S };
  }
  const tried = versions.map((v) => `${group}/${v}`).join(', ');
  throw new FleetError('api-missing', `the server does not serve ${plural} (tried ${tried})`);
}

/**
 * An answer of the right kind whose fields have the wrong types answers nothing (a server or proxy that is not what it
 * says): one line naming the field, `answer is not a SelfSubjectReview: status.userInfo.username is not a string`.
 */
export function wrongShape(kind: string, problem: string): FleetError {
  return new FleetError('server', `answer is not a ${kind}: ${problem}`);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Checks an optional field of a review's status: absent is fine (omitempty), present must pass `ok`. */
export function optionalField(
  kind: string,
  status: Record<string, unknown>,
  path: string,
  field: string,
  ok: (v: unknown) => boolean,
  what: string,
): void {
  if (status[field] !== undefined && !ok(status[field])) throw wrongShape(kind, `${path}.${field} is not ${what}`);
}
