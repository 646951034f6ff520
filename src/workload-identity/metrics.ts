import {createHash} from 'node:crypto'

import type {KubeClient} from '../kube/client.js'

/**
 * Since 1.32 a kube-apiserver with structured authentication exports, per configured JWT issuer, when it last fetched
 * that issuer's keys and whether it worked, labelled with a hash of the issuer URL (not the URL itself). Reading them
 * (with the user's own credentials: /metrics needs a grant) tells from outside whether the target trusts an issuer at
 * all and whether it could reach it, which its 401 never says.
 */
export const JWKS_FETCH_METRIC = 'apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds'

export function issuerHash(issuer: string): string {
  return 'sha256:' + createHash('sha256').update(issuer).digest('hex')
}

export interface IssuerFetch {
  hash: string
  /** `success` or `failure`, per the metric's `result` label, with the time of the last attempt of each. */
  results: Record<string, number>
}

export type MetricsRead = {readable: true; issuers: Map<string, IssuerFetch>} | {readable: false; why: string}

export function parseJwksMetrics(text: string): Map<string, IssuerFetch> {
  const issuers = new Map<string, IssuerFetch>()
  for (const line of text.split('\n')) {
    if (!line.startsWith(JWKS_FETCH_METRIC + '{')) continue
    const labels = line.slice(JWKS_FETCH_METRIC.length + 1, line.indexOf('}'))
    const hash = /jwt_issuer_hash="([^"]*)"/.exec(labels)?.[1]
    const result = /result="([^"]*)"/.exec(labels)?.[1] ?? 'unknown'
    const value = Number(line.slice(line.indexOf('}') + 1).trim().split(/\s+/)[0])
    if (!hash) continue
    const entry = issuers.get(hash) ?? {hash, results: {}}
    entry.results[result] = value
    issuers.set(hash, entry)
  }
  return issuers
}

export async function readJwksMetrics(admin: KubeClient): Promise<MetricsRead> {
  try {
    const res = await admin.request('GET', '/metrics', undefined, {accept: 'text/plain'})
    if (res.status !== 200) return {readable: false, why: `GET /metrics on the target: HTTP ${res.status}`}
    return {readable: true, issuers: parseJwksMetrics(res.body)}
  } catch (error) {
    return {readable: false, why: `GET /metrics on the target: ${(error as Error).message}`}
  }
}

/** Spellings of an issuer URL that people confuse with it, to name the one the target has. */
export function issuerVariants(iss: string): Array<{url: string; how: string}> {
  const out: Array<{url: string; how: string}> = []
  if (iss.endsWith('/')) out.push({url: iss.replace(/\/+$/, ''), how: 'without the trailing slash'})
  else out.push({url: iss + '/', how: 'with a trailing slash'})
  try {
    const u = new URL(iss)
    if (u.protocol === 'https:' && u.port === '') {
      out.push({url: `${u.protocol}//${u.hostname}:443${u.pathname === '/' && !iss.endsWith('/') ? '' : u.pathname}`, how: 'with an explicit :443'})
    }
    if (/^https:\/\/[^/]+:443(\/|$)/.test(iss)) out.push({url: iss.replace(':443', ''), how: 'without :443'})
  } catch {
    // Not a URL: nothing else to try.
  }
  return out
}
