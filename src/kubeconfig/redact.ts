import type { KubeconfigDoc, UserEntry } from './types.js';

/**
 * Secrets must never reach output. Two layers: structured redaction of kubeconfig documents (fields known to hold
 * secrets), and a scrubber that every output path runs text through, which removes any secret fleet has seen in this
 * process (registered when it is read) plus anything shaped like a JWT or a private key.
 */
export const REDACTED = 'REDACTED';
export const OMITTED = 'DATA+OMITTED';

const SECRET_USER_FIELDS = ['token', 'client-key-data', 'password'] as const;
const SECRET_NAME = /token|secret|password|passwd|key|credential/i;

const knownSecrets = new Set<string>();
// Known secrets by their first MIN_SECRET characters, longest first: one pass over a text finds every one of them, so
// scrubbing stays linear in the text however many clusters' secrets were read (a loop over the secrets made output
// over N clusters cost N x N).
const MIN_SECRET = 8;
const byPrefix = new Map<string, string[]>();
// A hash of the first three characters of every known secret, in a 64 KiB table: most positions of a text are ruled
// out by three char codes and one array read, without cutting a string out of the text (which, at every position of a
// table over 2,000 clusters, cost more CPU than listing them, and garbage). A hash that collides only costs the lookup.
const heads = new Uint8Array(0x10000);
const headAt = (text: string, i: number) =>
  (text.charCodeAt(i) * 961 + text.charCodeAt(i + 1) * 31 + text.charCodeAt(i + 2)) & 0xffff;

/** Remember a secret so that it is scrubbed from anything fleet prints. Short strings are ignored (too many false hits). */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < MIN_SECRET || knownSecrets.has(value)) return;
  knownSecrets.add(value);
  const prefix = value.slice(0, MIN_SECRET);
  let list = byPrefix.get(prefix);
  if (!list) byPrefix.set(prefix, (list = []));
  // Kept longest first by inserting in place: JWTs from one issuer share far more than the first 8 characters, so one
  // list holds every ServiceAccount token of a fleet, and sorting it at each insert made reading 1,000 clusters' tokens
  // cost N x N log N.
  let at = 0;
  while (at < list.length && list[at].length >= value.length) at++;
  list.splice(at, 0, value);
  heads[headAt(value, 0)] = 1;
}

function scrubKnown(text: string): string {
  if (knownSecrets.size === 0) return text;
  let out = '';
  let last = 0;
  for (let i = 0; i + MIN_SECRET <= text.length; i++) {
    if (heads[headAt(text, i)] === 0) continue;
    const candidates = byPrefix.get(text.slice(i, i + MIN_SECRET));
    const hit = candidates?.find((s) => text.startsWith(s, i));
    if (!hit) continue;
    out += text.slice(last, i) + REDACTED;
    last = i + hit.length;
    i = last - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Every secret a kubeconfig user holds inline (token, client key, password, auth-provider settings), registered in one
 * place so that each reader of a user (a file, a Secret, kind's output) scrubs the same fields.
 */
export function registerUserSecrets(user: UserEntry): void {
  for (const field of SECRET_USER_FIELDS) registerSecret(user[field]);
  for (const value of Object.values(user['auth-provider']?.config ?? {})) registerSecret(value);
}

const JWT_SHAPE = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;
const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g;
/**
 * An Authorization value a server may echo back (in a Status message, an HTML error page, a debug endpoint). Bearer
 * tokens fleet sent are registered, but an echo of `Basic base64(user:password)` or of a token fleet never saw (a proxy
 * adding its own) would otherwise pass; the scheme word is matched case-sensitively so prose ("a bearer token") stays.
 */
const AUTH_SCHEME_VALUE = /\b(Basic|Bearer) +([A-Za-z0-9+/._~-]{4,}=*)/g;

function authValue(match: string, scheme: string, value: string): string {
  if (value === REDACTED) return match;
  // Basic is base64("user:password"); Bearer is anything token-like (not a lower-case word such as "tokens").
  const secret =
    scheme === 'Basic'
      ? Buffer.from(value, 'base64').toString('utf8').includes(':')
      : value.length >= 8 && /[^a-z]/.test(value);
  return secret ? `${scheme} ${REDACTED}` : match;
}
/** `scheme://user:password@host`: the password part (client-go and Go's url.Redacted hide it too). */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#@]*@/gi;
/**
 * Query parameters whose name says they carry a credential (`?access_token=`, `&sig=`, `X-Amz-Signature=`). A value ends
 * at punctuation that follows a URL in prose (`url: message`); inside a URL those characters are percent-encoded.
 */
const SECRET_QUERY =
  /([?&;](?:[^\s=&#]*?(?:token|secret|password|passwd|pwd|key|credential|signature|sig|auth)[^\s=&#]*))=([^\s&#"'<>:,;)]+)/gi;

export function scrub(text: string): string {
  // Nothing shorter than 8 characters can hold a secret (registered ones have at least 8; the shapes below need more)
  // unless it is a query parameter; every string of a large report goes through here, and most are words and names.
  if (text.length < MIN_SECRET && !text.includes('=')) return text;
  let out = scrubKnown(text);
  // Each shape is looked for only when the text has the characters it cannot do without (a quick includes, where the
  // regular expression would scan the whole text even when it cannot match).
  if (out.includes('eyJ')) out = out.replace(JWT_SHAPE, REDACTED);
  if (out.includes('PRIVATE KEY-----')) out = out.replace(PRIVATE_KEY_BLOCK, REDACTED);
  if (out.includes('Basic ') || out.includes('Bearer ')) out = out.replace(AUTH_SCHEME_VALUE, authValue);
  return maskUrlCredentials(out);
}

/**
 * Masks the credentials a URL may carry: the password of `user:password@` and the value of token-like query
 * parameters; everything else (scheme, host, port, path) stays as written, so a masked server still says where it is.
 * Works on a URL or on any text containing URLs.
 */
export function maskUrlCredentials(text: string): string {
  if (!text.includes('://') && !/[?&;]/.test(text)) return text;
  return text.replace(URL_PASSWORD, `$1:${REDACTED}@`).replace(SECRET_QUERY, `$1=${REDACTED}`);
}

/** Registers the secret parts of a URL (a password in it, token-like query values), decoded and as written. */
export function registerUrlSecrets(url: string | undefined): void {
  if (!url) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  if (parsed.password) {
    registerSecret(parsed.password);
    registerSecret(decodeURIComponent(parsed.password));
  }
  for (const [name, value] of parsed.searchParams) {
    if (/token|secret|password|passwd|pwd|key|credential|signature|sig|auth/i.test(name)) registerSecret(value);
  }
}

/**
 * Text from another program (an exec plugin's stderr), passed on one scrubbed line at a time: a chunk boundary can fall
 * inside a secret, and a secret cut in two matches nothing. A line longer than the limit is passed on in pieces rather
 * than held forever (nothing fleet registers is that long).
 */
export class ScrubbedLines {
  private pending = '';
  private ended = false;
  private idle?: NodeJS.Timeout;

  /**
   * `idleFlushMs`: pass on a partial line once nothing more has arrived for that long. For a program that may prompt
   * ("Password: " with no newline, then waiting for input), which would otherwise never be shown.
   */
  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: { maxLine?: number; idleFlushMs?: number } = {},
  ) {}

  write(chunk: Buffer | string): void {
    if (this.ended) return;
    if (this.idle) clearTimeout(this.idle);
    this.pending += chunk.toString();
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) !== -1) {
      this.emit(scrub(this.pending.slice(0, nl + 1)));
      this.pending = this.pending.slice(nl + 1);
    }
    if (this.pending.length > (this.options.maxLine ?? 64 * 1024)) this.flushPartial();
    if (this.pending !== '' && this.options.idleFlushMs !== undefined) {
      this.idle = setTimeout(() => this.flushPartial(), this.options.idleFlushMs);
      this.idle.unref();
    }
  }

  private flushPartial(): void {
    if (this.pending === '') return;
    this.emit(scrub(this.pending));
    this.pending = '';
  }

  /** Flushes a last line that had no newline. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.idle) clearTimeout(this.idle);
    if (this.pending !== '') this.emit(scrub(this.pending) + '\n');
    this.pending = '';
  }
}

/** Deep-scrubs every string in a JSON-like value. */
export function scrubValue<T>(value: T): T {
  if (typeof value === 'string') return scrub(value) as T;
  if (Array.isArray(value)) return (value as unknown[]).map((v) => scrubValue(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v);
    return out as T;
  }
  return value;
}

export function redactUser(user: UserEntry): UserEntry {
  const out: UserEntry = { ...user };
  for (const field of SECRET_USER_FIELDS) if (out[field]) out[field] = REDACTED;
  if (out['client-certificate-data']) out['client-certificate-data'] = OMITTED;
  if (out['auth-provider']?.config) {
    const config: Record<string, string> = {};
    for (const [k, v] of Object.entries(out['auth-provider'].config)) config[k] = SECRET_NAME.test(k) ? REDACTED : v;
    out['auth-provider'] = { ...out['auth-provider'], config };
  }
  if (out.exec?.env) {
    out.exec = {
      ...out.exec,
      env: out.exec.env.map((e) => (SECRET_NAME.test(e.name) ? { ...e, value: REDACTED } : e)),
    };
  }
  return out;
}

/** A copy of the document fit for output: secrets replaced, bulky certificate data omitted, everything else kept. */
export function redactKubeconfig(doc: KubeconfigDoc): KubeconfigDoc {
  const out: KubeconfigDoc = { ...doc };
  if (Array.isArray(doc.users)) out.users = doc.users.map((u) => ({ ...u, user: redactUser(u.user ?? {}) }));
  if (Array.isArray(doc.clusters)) {
    out.clusters = doc.clusters.map((c) =>
      c.cluster?.['certificate-authority-data']
        ? { ...c, cluster: { ...c.cluster, 'certificate-authority-data': OMITTED } }
        : c,
    );
  }
  return out;
}
