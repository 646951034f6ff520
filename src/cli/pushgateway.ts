/**
 * `--pushgateway URL`: the metrics `-o prometheus` prints, also PUT to a Prometheus Pushgateway, so a CronJob's run is
 * seen by Prometheus whatever its Pod logs (the rotation CronJob logs its JSON report and pushes its metrics). PUT
 * replaces the group's metrics, so a run's gauges never mix with an older run's. The group is the job name, and the
 * shard when the run is one part of an Indexed Job (the parts would otherwise replace each other's metrics).
 */
import { UsageError } from '../base/errors.js';
import { type MetricFamily, formatMetrics } from './prometheus.js';

/** How long a push may take: the Pushgateway is one small HTTP request; a run is not held up by a dead one. */
const PUSH_TIMEOUT_MS = 10_000;

export interface Pushgateway {
  url: URL;
  /** The URL as it may be printed: without user and password. */
  shown: string;
}

/** The flag's value checked (exit 2 before anything runs): an http(s) URL without query or fragment. */
export function parsePushgateway(flag: string, value: string): Pushgateway {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag}: not a URL (expected http(s)://HOST:PORT of a Prometheus Pushgateway)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash)
    throw new UsageError(`${flag}: expected http(s)://HOST:PORT[/PATH] of a Prometheus Pushgateway, without ? or #`);
  const shown = `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
  return { url, shown };
}

/** PUTs the metrics to `/metrics/job/<job>[/<label>/<value>...]`; throws one line on a refusal or no answer. */
export async function pushMetrics(
  gateway: Pushgateway,
  grouping: [string, string][],
  families: MetricFamily[],
): Promise<void> {
  const path = grouping.map(([k, v]) => `/${encodeURIComponent(k)}/${encodeURIComponent(v)}`).join('');
  const target = new URL(`${gateway.url.pathname.replace(/\/$/, '')}/metrics${path}`, gateway.url);
  const headers: Record<string, string> = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' };
  if (gateway.url.username)
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(gateway.url.username)}:${decodeURIComponent(gateway.url.password)}`).toString('base64')}`;
  target.username = '';
  target.password = '';
  let res: Response;
  try {
    res = await fetch(target, {
      method: 'PUT',
      headers,
      body: formatMetrics(families),
      signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === 'TimeoutError'
        ? `no answer within ${PUSH_TIMEOUT_MS / 1000}s`
        : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new Error(`pushing the metrics to ${gateway.shown}: ${why}`, { cause: err });
  }
  if (!res.ok) {
    const body = (await res.text()).trim().split('\n')[0].slice(0, 200);
    throw new Error(`pushing the metrics to ${gateway.shown}: HTTP ${res.status}${body ? `: ${body}` : ''}`);
  }
}
