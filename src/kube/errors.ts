import { FleetError, type ErrorKind } from '../base/errors.js';
import { parseJson } from '../base/json.js';

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
  'EADDRNOTAVAIL',
]);
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|HOSTNAME_MISMATCH|EPROTO$)/;

/** Codes of a connection that never opened: through a proxy, that connection is the one to the proxy. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

const PLAIN_HTTP = 'this port speaks plain HTTP, not HTTPS';
const PROXY_FAILED = 'the proxy (proxy-url) failed';

/**
 * Maps a transport failure (no HTTP response) to fleet's error kinds, keeping the system's own words. `proxy` is the
 * cluster's proxy-url as it may be shown (credentials masked): every connection goes to it, so a connection that could
 * not be opened is the proxy's failure, not the API server's.
 */
export function classifyTransportError(error: unknown, server: string, proxy?: string): FleetError {
  if (error instanceof FleetError) return error;
  const e = error as NodeJS.ErrnoException & { reason?: string };
  const code = e.code ?? '';
  // An AbortSignal.timeout() abort surfaces as an AbortError whose cause is the TimeoutError.
  const cause = (e as { cause?: { name?: string } }).cause;
  if (
    e.name === 'TimeoutError' ||
    cause?.name === 'TimeoutError' ||
    code === 'ETIMEDOUT' ||
    code === 'ESOCKETTIMEDOUT'
  ) {
    return new FleetError(
      'timeout',
      `${server}: no answer within the request timeout${proxy ? ` (through proxy ${proxy})` : ''}`,
      { cause: error },
    );
  }
  const said = (c: string) =>
    c === 'ECONNREFUSED'
      ? 'connection refused'
      : c === 'ENOTFOUND'
        ? 'host not found'
        : c === 'ECONNRESET'
          ? 'connection reset'
          : e.message;
  // socks-proxy-agent's errors carry no code, only Node's words ("connect ECONNREFUSED 127.0.0.1:1080").
  const proxyCode = proxy ? code || (/\b(E[A-Z]+)\b/.exec(e.message ?? '')?.[1] ?? '') : '';
  if (proxy && NOT_CONNECTED.has(proxyCode)) {
    return new FleetError(
      'unreachable',
      `proxy ${proxy}: ${said(proxyCode)}: ${PROXY_FAILED}, the API server ${server} was not contacted`,
      { cause: error },
    );
  }
  if (UNREACHABLE.has(code)) {
    return new FleetError('unreachable', `${server}: ${said(code)}${proxy ? ` (through proxy ${proxy})` : ''}`, {
      cause: error,
    });
  }
  // An https request answered in plain HTTP: OpenSSL's "wrong version number" (Go: "server gave HTTP response to HTTPS client").
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    /wrong version number|packet length too long/.test(e.message ?? '')
  ) {
    return new FleetError('tls', `${server}: ${PLAIN_HTTP} (it answered the TLS handshake in HTTP)`, { cause: error });
  }
  if (TLS_CODES.test(code)) {
    return new FleetError(
      'tls',
      `${server}: TLS verification failed: ${tlsReason(code, e.message, e as AltNameError)}`,
      { cause: error },
    );
  }
  return new FleetError('unreachable', `${server}: ${e.message || String(error)}`, { cause: error });
}

/**
 * The fix for a transport failure whose cause is not what its kind suggests: a plain-HTTP port is a "tls" failure that
 * no CA fixes, a dead proxy an "unreachable" one the API server has nothing to do with. Undefined for the others.
 */
export function transportFix(e: { kind: ErrorKind; message: string }): string | undefined {
  if (e.kind === 'tls' && e.message.includes(PLAIN_HTTP)) {
    return 'write the server as http://HOST:PORT if this endpoint is meant to be plain HTTP, or use the port where the API server serves TLS (often 6443 or 443); no CA setting helps';
  }
  if (e.kind === 'unreachable' && e.message.includes(PROXY_FAILED)) {
    return "check the cluster's proxy-url: that the proxy runs and is reachable from here, or remove proxy-url to connect directly";
  }
  return undefined;
}

/**
 * OpenSSL errors raised while building the TLS context (a key that does not match its certificate, a PEM it cannot
 * read) are configuration errors, said in plain words instead of "error:05800074:x509 certificate routines::...".
 */
export function classifyOpenSslError(error: unknown, where: string): FleetError {
  if (error instanceof FleetError) return error;
  const e = error as NodeJS.ErrnoException & { library?: string; reason?: string };
  const message = e?.message ?? String(error);
  if (!/^ERR_OSSL|^ERR_SSL|^ERR_CRYPTO/.test(e?.code ?? '') && !e?.library && !/routines:/.test(message)) {
    return new FleetError('internal', `${where}: ${oneLineText(message)}`, { cause: error });
  }
  const reason = (e.reason ?? message.split(':').pop() ?? '').trim();
  let plain: string;
  if (/key values mismatch/i.test(reason)) plain = 'client-key does not match client-certificate';
  else if (/no start line|unsupported|bad base64|decode|asn1|PEM/i.test(reason))
    plain = 'the client certificate or key is not valid PEM';
  else if (/bad decrypt|bad password/i.test(reason))
    plain = 'the client key is encrypted (kubeconfig keys must not have a passphrase)';
  else plain = `TLS configuration rejected: ${reason || oneLineText(message)}`;
  return new FleetError('config', `${where}: ${plain}`, { cause: error });
}

function oneLineText(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(': ');
}

/** What Node's checkServerIdentity error carries besides its message: the name asked for and the certificate. */
interface AltNameError {
  host?: string;
  cert?: { subjectaltname?: string; subject?: { CN?: string | string[] } };
}

/** A certificate for another name, when only the code is known (no certificate at hand). */
export function nameMismatch(host: string): Error {
  return Object.assign(new Error(`the certificate is not valid for ${host}`), {
    code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    host,
  });
}

/**
 * Which names the certificate is valid for and which one was expected, in Go's words ("x509: certificate is valid for
 * a.example, 127.0.0.2, not 127.0.0.1"), instead of Node's code or its "Hostname/IP does not match certificate's
 * altnames". Like Go, a certificate with no subject alternative names is valid for no name (its CN is not used).
 */
function altNameReason(message: string, e: AltNameError): string {
  const host = e.host;
  if (!host || !e.cert) return message;
  const names = (e.cert.subjectaltname ?? '')
    .split(/,\s*/)
    .map((n) => /^(?:DNS|IP Address):(.+)$/.exec(n.trim())?.[1])
    .filter((n): n is string => Boolean(n));
  if (names.length === 0) {
    const cn = [e.cert.subject?.CN ?? []].flat()[0];
    return `the certificate names no host (no subject alternative names${cn ? `, only the common name "${cn}", which is not used` : ''}), not ${host} (ERR_TLS_CERT_ALTNAME_INVALID)`;
  }
  return `the certificate is valid for ${names.join(', ')}, not ${host} (ERR_TLS_CERT_ALTNAME_INVALID; tls-server-name in the cluster names the host to expect)`;
}

function tlsReason(code: string, message: string, e: AltNameError = {}): string {
  switch (code) {
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return `certificate signed by unknown authority (${code})`;
    case 'CERT_HAS_EXPIRED':
      return 'the server certificate has expired';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return altNameReason(message, e);
    default:
      return `${oneLineText(message)} (${code})`;
  }
}

/** The `Status` object an API server returns with an error, if the body is one. */
export interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

export function parseStatus(body: string): Status | undefined {
  try {
    const value = parseJson(body) as { kind?: unknown } | null;
    return value && typeof value === 'object' && value.kind === 'Status' ? (value as Status) : undefined;
  } catch {
    return undefined;
  }
}

/** An error the server answered with an HTTP status: the status is kept, so a caller can tell a 409 (conflict) apart. */
export class HttpStatusError extends FleetError {
  constructor(
    kind: ErrorKind,
    message: string,
    readonly status: number,
  ) {
    super(kind, message);
  }
}

/** The HTTP status a request failed with, if it failed with one (not a transport failure). */
export const statusOf = (error: unknown): number | undefined =>
  error instanceof HttpStatusError ? error.status : undefined;

/** Maps an HTTP error status to an error kind, passing the server's own message through. */
export function httpError(status: number, body: string, what: string): FleetError {
  const s = parseStatus(body);
  const serverMessage = s?.message || body.trim().split('\n')[0].slice(0, 300) || `HTTP ${status}`;
  let kind: ErrorKind;
  if (status === 401) kind = 'unauthorized';
  else if (status === 403) kind = 'forbidden';
  else if (status === 404) kind = 'not-found';
  else if (status === 408 || status === 504) kind = 'timeout';
  else kind = 'server';
  // Redirects are never followed (Node's client does not, and fleet adds no code that would): the credential stays
  // with the server it was meant for. An API server does not redirect; saying so beats printing a redirect page.
  if (status >= 300 && status < 400)
    return new HttpStatusError(
      'server',
      `${what}: the server answered ${status}, a redirect, which fleet does not follow`,
      status,
    );
  return new HttpStatusError(kind, `${what}: ${status === 401 ? 'Unauthorized' : serverMessage}`, status);
}
