import {UsageError} from './errors.js'

const UNITS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000}

/**
 * The longest delay a Node timer (and AbortSignal.timeout) can hold: 2^31-1 ms, about 24.8 days. A longer one is not an
 * error there: Node warns and fires after 1 ms, so a generous time limit would become an instant timeout.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** Parses kubectl's --request-timeout syntax: "0" (none), a bare number of seconds, or units like 500ms, 10s, 1m30s. */
export function parseDuration(value: string, flag = '--request-timeout'): number {
  const v = value.trim()
  if (/^\d+$/.test(v)) return withinTimer(Number(v) * 1000, value, flag)
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g
  let total = 0
  let consumed = 0
  for (const m of v.matchAll(re)) {
    total += Number(m[1]) * UNITS[m[2]]
    consumed += m[0].length
  }
  if (v === '' || consumed !== v.length) {
    throw new UsageError(`${flag}: invalid duration "${value}" (use forms like 30s, 1m, 500ms, or 0 for none)`)
  }
  return withinTimer(Math.round(total), value, flag)
}

function withinTimer(ms: number, value: string, flag: string): number {
  if (ms > MAX_TIMER_MS) {
    throw new UsageError(`${flag}: "${value}" is longer than the longest time limit fleet can keep (${MAX_TIMER_MS}ms, about 24 days); use 0 for none`)
  }
  return ms
}

export function formatAge(iso: string | undefined, now = Date.now()): string {
  if (!iso) return ''
  const ms = Date.parse(iso) - now
  const past = ms < 0
  let s = Math.abs(ms) / 1000
  let text: string
  if (s < 120) text = `${Math.round(s)}s`
  else if ((s /= 60) < 120) text = `${Math.round(s)}m`
  else if ((s /= 60) < 48) text = `${Math.round(s)}h`
  else text = `${Math.round(s / 24)}d`
  return past ? `expired ${text} ago` : text
}

/** A time limit as people write it: whole seconds as `30s`, anything else as `700ms` (the forms parseDuration reads). */
export function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`
}
