import { type ErrorInfo, toErrorInfo } from '../base/errors.js';
import type { Collection } from './collect.js';
import type { ExporterMetrics } from './metrics.js';

/**
 * The exporter's schedule: a collection at once, then one per interval, each interval drawn anew within ±jitter of
 * the configured one (several exporters, or one restarted, do not ask every member at the same second) and counted
 * from the end of the previous collection, so collections never overlap however long one takes. A collection that
 * fails (no provider could be built, a hub's kubeconfig unreadable) is counted and reported; the previous result stays
 * published, and the next interval tries again: nothing a hub or member does ends the process.
 */
export interface ScheduleOptions {
  intervalMs: number;
  /** The fraction of the interval the wait may be shorter or longer by (0.1: ±10 %). */
  jitter: number;
  /** Stops the schedule (the command's interrupt, a test). */
  signal: AbortSignal;
  /** After --max-collections collections (tests, a one-off run): stop. */
  maxCollections?: number;
  random?: () => number;
}

/** What one collection came to, for the command's log line. */
export interface CollectionOutcome {
  n: number;
  ok: boolean;
  durationMs: number;
  collection?: Collection;
  error?: ErrorInfo;
  /** The wait before the next one (undefined when the schedule ends here). */
  nextInMs?: number;
}

export interface ExporterSummary {
  collections: number;
  failures: number;
  /** When the last published collection ended (ISO), if one was. */
  lastSuccess?: string;
}

/** The wait before the next collection: the interval, moved by up to ±jitter of it. */
export function nextWait(intervalMs: number, jitter: number, random: () => number = Math.random): number {
  return Math.max(0, Math.round(intervalMs * (1 + jitter * (2 * random() - 1))));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function runSchedule(
  collectOnce: (signal: AbortSignal) => Promise<Collection>,
  metrics: ExporterMetrics,
  o: ScheduleOptions,
  told: (outcome: CollectionOutcome) => void,
): Promise<ExporterSummary> {
  const summary: ExporterSummary = { collections: 0, failures: 0 };
  for (let n = 1; !o.signal.aborted; n++) {
    const started = Date.now();
    let outcome: CollectionOutcome;
    try {
      const collection = await collectOnce(o.signal);
      if (o.signal.aborted) break;
      await metrics.publish(collection);
      summary.lastSuccess = new Date(collection.finishedAt).toISOString();
      outcome = { n, ok: true, durationMs: Date.now() - started, collection };
    } catch (error) {
      if (o.signal.aborted) break;
      summary.failures++;
      await metrics.failed();
      outcome = { n, ok: false, durationMs: Date.now() - started, error: toErrorInfo(error) };
    }
    summary.collections = n;
    const last = o.maxCollections !== undefined && n >= o.maxCollections;
    if (!last) outcome.nextInMs = nextWait(o.intervalMs, o.jitter, o.random);
    told(outcome);
    if (last) break;
    await sleep(outcome.nextInMs!, o.signal);
  }
  return summary;
}
