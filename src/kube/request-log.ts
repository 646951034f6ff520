import { maskUrlCredentials, scrub } from '../kubeconfig/redact.js';

/**
 * Request logging at kubectl's -v levels, for whoever creates a client to pass down (the CLI writes it to stderr):
 * 6 logs each request's method, URL, status and time; 7 adds the request headers; 8 adds the response headers.
 * Credentials never reach the log: Authorization keeps only its scheme (as kubectl's "Bearer <masked>"), URLs lose
 * their password and token-like query values, and every line goes through the scrubber.
 */
export interface RequestLog {
  /** kubectl's verbosity: below 6 nothing is logged. */
  level: number;
  write(line: string): void;
}

export const LOG_REQUESTS = 6;
export const LOG_REQUEST_HEADERS = 7;
export const LOG_RESPONSE_HEADERS = 8;

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-auth-token']);

/** A header value fit for a log: credentials masked, keeping the scheme so the log still says which kind was sent. */
export function maskHeader(name: string, value: string): string {
  if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) return scrub(value);
  const scheme = /^(Basic|Bearer|Negotiate|Digest)\s/i.exec(value);
  return scheme ? `${scheme[1]} <masked>` : '<masked>';
}

type Headers = Record<string, string | string[] | number | undefined>;

function headerLines(title: string, headers: Headers): string[] {
  const lines = [`${title}:`];
  for (const [name, raw] of Object.entries(headers)) {
    // HTTP/2's pseudo-headers (:status) are the status line's, already on the first line.
    if (raw === undefined || name.startsWith(':')) continue;
    for (const v of Array.isArray(raw) ? raw : [String(raw)]) lines.push(`    ${name}: ${maskHeader(name, v)}`);
  }
  return lines;
}

export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Headers;
  status?: number;
  statusText?: string;
  responseHeaders?: Headers;
  elapsedMs: number;
  /** A transport failure instead of a response. */
  error?: string;
}

export function logExchange(log: RequestLog | undefined, x: Exchange): void {
  if (!log || log.level < LOG_REQUESTS) return;
  const url = maskUrlCredentials(x.url);
  const ms = Math.round(x.elapsedMs);
  const outcome = x.error === undefined ? `${x.status} ${x.statusText ?? ''}`.trim() : `failed: ${x.error}`;
  const lines = [`${x.method} ${url} ${outcome} in ${ms} milliseconds`];
  if (log.level >= LOG_REQUEST_HEADERS) lines.push(...headerLines('Request headers', x.requestHeaders));
  if (log.level >= LOG_RESPONSE_HEADERS && x.responseHeaders)
    lines.push(...headerLines('Response headers', x.responseHeaders));
  for (const line of lines) log.write(scrub(line));
}
