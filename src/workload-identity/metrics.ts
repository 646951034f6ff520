import { createHash } from 'node:crypto';

import type { KubeClient } from '../kube/client.js';
import { METRICS_PATH } from '../kube/paths.js';

/**
 * A kube-apiserver with structured authentication (1.30+) exports, per JWT authenticator, a latency histogram labelled
 * with a hash of the issuer URL and the result. It is recorded only when a token's `iss` is exactly that authenticator's
 * issuer, so after presenting the hub token the series for hash(iss) exists if and only if the target has an
 * authenticator for exactly that issuer. It also exports the hash of the configuration file it runs. Reading /metrics
 * needs a grant the user may not have; then these checks are skipped.
 */
export const JWT_LATENCY_COUNT = 'apiserver_authentication_jwt_authenticator_latency_seconds_count';
export const CONFIG_INFO = 'apiserver_authentication_config_controller_last_config_info';

export function sha256Label(value: string | Buffer): string {
  return 'sha256:' + createHash('sha256').update(value).digest('hex');
}

export const issuerHash = (issuer: string): string => sha256Label(issuer);

export interface AuthnMetrics {
  /** Per issuer hash: the count of authentications per result (`success`, `failure`, ...). */
  issuers: Map<string, Record<string, number>>;
  /** Hashes of the authentication configuration the server runs (one per apiserver identity). */
  configHashes: string[];
}

export type MetricsRead = ({ readable: true } & AuthnMetrics) | { readable: false; why: string };

function labels(line: string, metric: string): string {
  return line.slice(metric.length + 1, line.indexOf('}'));
}

export function parseAuthnMetrics(text: string): AuthnMetrics {
  const issuers = new Map<string, Record<string, number>>();
  const configHashes: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(JWT_LATENCY_COUNT + '{')) {
      const l = labels(line, JWT_LATENCY_COUNT);
      const hash = /jwt_issuer_hash="([^"]*)"/.exec(l)?.[1];
      if (!hash) continue;
      const result = /result="([^"]*)"/.exec(l)?.[1] ?? 'unknown';
      const entry = issuers.get(hash) ?? {};
      entry[result] = Number(
        line
          .slice(line.indexOf('}') + 1)
          .trim()
          .split(/\s+/)[0],
      );
      issuers.set(hash, entry);
    } else if (line.startsWith(CONFIG_INFO + '{')) {
      const hash = /(?:^|,)hash="([^"]*)"/.exec(labels(line, CONFIG_INFO))?.[1];
      if (hash) configHashes.push(hash);
    }
  }
  return { issuers, configHashes };
}

export async function readAuthnMetrics(admin: KubeClient): Promise<MetricsRead> {
  try {
    const res = await admin.request('GET', METRICS_PATH, undefined, { accept: 'text/plain' });
    if (res.status !== 200) return { readable: false, why: `GET /metrics on the target: HTTP ${res.status}` };
    return { readable: true, ...parseAuthnMetrics(res.body) };
  } catch (error) {
    return { readable: false, why: `GET /metrics on the target: ${(error as Error).message}` };
  }
}

/** How many authentications of each result happened for this issuer between two reads. */
export function delta(before: MetricsRead, after: MetricsRead, hash: string): Record<string, number> | undefined {
  if (!after.readable) return undefined;
  const now = after.issuers.get(hash);
  if (!now) return undefined;
  const then = (before.readable ? before.issuers.get(hash) : undefined) ?? {};
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (then[k] ?? 0)]));
}
