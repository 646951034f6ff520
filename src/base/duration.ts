import { UsageError } from './errors.js';

/**
 * Two kinds of duration, two parsers, one grammar (a number and a unit, repeated: 90m, 1h30m, 30d, 2w, 1y):
 * - a time limit (--request-timeout, --cluster-timeout: anything that becomes a timer) is held by a Node timer, so it
 *   keeps the timer's cap; it also reads kubectl's forms "0" (none) and a bare number of seconds;
 * - a lifetime or a window (--duration, --expiration, --expiring-within, a verify policy's minLifetime) is never a
 *   timer: it is sent to the API server or compared with an expiry, so days, weeks and years are fine.
 * Every caller picks one of parseTimeLimit and parseLifetime; nothing else reads a duration.
 */
const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  y: 365 * 86_400_000,
};
const TERM = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/g;

/**
 * The longest delay a Node timer (and AbortSignal.timeout) can hold: 2^31-1 ms, about 24.8 days. A longer one is not an
 * error there: Node warns and fires after 1 ms, so a generous time limit would become an instant timeout.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The longest lifetime fleet accepts: 2^31-1 seconds (about 68 years), the most a CertificateSigningRequest's
 * expirationSeconds (an int32) can ask for. Longer is a typo, not a wish.
 */
export const MAX_LIFETIME_SECONDS = 2 ** 31 - 1;

/** Milliseconds, or undefined when the text is not a sum of number-unit terms. */
function sumOfTerms(v: string): number | undefined {
  let total = 0;
  let consumed = 0;
  for (const m of v.matchAll(TERM)) {
    total += Number(m[1]) * UNITS[m[2]];
    consumed += m[0].length;
  }
  return v === '' || consumed !== v.length ? undefined : Math.round(total);
}

/** A time limit, in ms: kubectl's --request-timeout syntax ("0" for none, a bare number of seconds, or 500ms, 10s, 1m30s). */
export function parseTimeLimit(value: string, flag = '--request-timeout'): number {
  const v = value.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : sumOfTerms(v);
  if (ms === undefined)
    throw new UsageError(`${flag}: invalid duration "${value}" (use forms like 30s, 1m, 500ms, or 0 for none)`);
  if (ms > MAX_TIMER_MS) {
    throw new UsageError(
      `${flag}: "${value}" is longer than the longest time limit fleet can keep (${MAX_TIMER_MS}ms, about 24 days); use 0 for none`,
    );
  }
  return ms;
}

/**
 * A lifetime or a window, in ms: 30d, 720h, 2w, 1y, 1h30m (units ms, s, m, h, d = 24h, w = 7d, y = 365d; "m" is
 * minutes, as in kubectl). No timer cap: it is never waited for. Callers check their own minimum (10m for what the API
 * server issues); a negative or unitless number is refused here, since "30" could mean seconds, minutes or days.
 */
export function parseLifetime(value: string, flag: string): number {
  const v = value.trim();
  const ms = v === '0' ? 0 : sumOfTerms(v);
  if (ms === undefined)
    throw new UsageError(`${flag}: invalid duration "${value}" (use a number and a unit, e.g. 30d, 720h, 90m, 2w, 1y)`);
  if (ms > MAX_LIFETIME_SECONDS * 1000) {
    throw new UsageError(
      `${flag}: "${value}" is longer than fleet accepts (${MAX_LIFETIME_SECONDS}s, about 68 years: the most a certificate request can ask for)`,
    );
  }
  return ms;
}

export function formatAge(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '';
  const ms = Date.parse(iso) - now;
  const past = ms < 0;
  let s = Math.abs(ms) / 1000;
  let text: string;
  if (s < 120) text = `${Math.round(s)}s`;
  else if ((s /= 60) < 120) text = `${Math.round(s)}m`;
  else if ((s /= 60) < 48) text = `${Math.round(s)}h`;
  else text = `${Math.round(s / 24)}d`;
  return past ? `expired ${text} ago` : text;
}

/** A time limit as people write it: whole seconds as `30s`, anything else as `700ms` (the forms parseTimeLimit reads). */
export function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * A lifetime in seconds as parseLifetime reads it back: whole years when exact (1y, 2y), whole days from 2 days up
 * (30d, 400d), hours below (24h, 8h), then minutes and seconds for what is left (1h30m, 10m5s).
 */
export function formatLifetime(seconds: number): string {
  let s = Math.round(seconds);
  if (s <= 0) return '0s';
  if (s % (365 * 86_400) === 0) return `${s / (365 * 86_400)}y`;
  let out = '';
  if (s >= 2 * 86_400) {
    out += `${Math.floor(s / 86_400)}d`;
    s %= 86_400;
  }
  for (const [unit, size] of [
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (s >= size) {
      out += `${Math.floor(s / size)}${unit}`;
      s %= size;
    }
  }
  return out;
}
