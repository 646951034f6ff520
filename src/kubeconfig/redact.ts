import type {KubeconfigDoc, UserEntry} from './types.js'

/**
 * Secrets must never reach output. Two layers: structured redaction of kubeconfig documents (fields known to hold
 * secrets), and a scrubber that every output path runs text through, which removes any secret fleet has seen in this
 * process (registered when it is read) plus anything shaped like a JWT or a private key.
 */
export const REDACTED = 'REDACTED'
export const OMITTED = 'DATA+OMITTED'

const SECRET_USER_FIELDS = ['token', 'client-key-data', 'password'] as const
const SECRET_NAME = /token|secret|password|passwd|key|credential/i

const knownSecrets = new Set<string>()
// Known secrets by their first MIN_SECRET characters, longest first: one pass over a text finds every one of them, so
// scrubbing stays linear in the text however many clusters' secrets were read (a loop over the secrets made output
// over N clusters cost N x N).
const MIN_SECRET = 8
const byPrefix = new Map<string, string[]>()

/** Remember a secret so that it is scrubbed from anything fleet prints. Short strings are ignored (too many false hits). */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < MIN_SECRET || knownSecrets.has(value)) return
  knownSecrets.add(value)
  const prefix = value.slice(0, MIN_SECRET)
  const list = byPrefix.get(prefix) ?? []
  list.push(value)
  list.sort((a, b) => b.length - a.length)
  byPrefix.set(prefix, list)
}

function scrubKnown(text: string): string {
  if (knownSecrets.size === 0) return text
  let out = ''
  let last = 0
  for (let i = 0; i + MIN_SECRET <= text.length; i++) {
    const candidates = byPrefix.get(text.slice(i, i + MIN_SECRET))
    const hit = candidates?.find((s) => text.startsWith(s, i))
    if (!hit) continue
    out += text.slice(last, i) + REDACTED
    last = i + hit.length
    i = last - 1
  }
  return last === 0 ? text : out + text.slice(last)
}

/**
 * Every secret a kubeconfig user holds inline (token, client key, password, auth-provider settings), registered in one
 * place so that each reader of a user (a file, a Secret, kind's output) scrubs the same fields.
 */
export function registerUserSecrets(user: UserEntry): void {
  for (const field of SECRET_USER_FIELDS) registerSecret(user[field])
  for (const value of Object.values(user['auth-provider']?.config ?? {})) registerSecret(value)
}

const JWT_SHAPE = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g
const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g

export function scrub(text: string): string {
  return scrubKnown(text).replace(JWT_SHAPE, REDACTED).replace(PRIVATE_KEY_BLOCK, REDACTED)
}

/** Deep-scrubs every string in a JSON-like value. */
export function scrubValue<T>(value: T): T {
  if (typeof value === 'string') return scrub(value) as T
  if (Array.isArray(value)) return value.map((v) => scrubValue(v)) as T
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v)
    return out as T
  }
  return value
}

export function redactUser(user: UserEntry): UserEntry {
  const out: UserEntry = {...user}
  for (const field of SECRET_USER_FIELDS) if (out[field]) out[field] = REDACTED
  if (out['client-certificate-data']) out['client-certificate-data'] = OMITTED
  if (out['auth-provider']?.config) {
    const config: Record<string, string> = {}
    for (const [k, v] of Object.entries(out['auth-provider'].config)) config[k] = SECRET_NAME.test(k) ? REDACTED : v
    out['auth-provider'] = {...out['auth-provider'], config}
  }
  if (out.exec?.env) {
    out.exec = {
      ...out.exec,
      env: out.exec.env.map((e) => (SECRET_NAME.test(e.name) ? {...e, value: REDACTED} : e)),
    }
  }
  return out
}

/** A copy of the document fit for output: secrets replaced, bulky certificate data omitted, everything else kept. */
export function redactKubeconfig(doc: KubeconfigDoc): KubeconfigDoc {
  const out: KubeconfigDoc = {...doc}
  if (Array.isArray(doc.users)) out.users = doc.users.map((u) => ({...u, user: redactUser(u.user ?? {})}))
  if (Array.isArray(doc.clusters)) {
    out.clusters = doc.clusters.map((c) =>
      c.cluster?.['certificate-authority-data'] ? {...c, cluster: {...c.cluster, 'certificate-authority-data': OMITTED}} : c,
    )
  }
  return out
}
