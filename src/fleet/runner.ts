import { mapLimit } from '../base/concurrency.js';
import { formatDuration } from '../base/duration.js';
import { type ErrorInfo, FleetError, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import type { ClusterRef } from '../providers/types.js';

/** One cluster's outcome. Results come back in input order; a failure never stops the others. */
export interface ClusterResult<T> {
  cluster: string;
  ok: boolean;
  value?: T;
  error?: ErrorInfo;
  durationMs: number;
}

export interface RunOptions {
  concurrency: number;
  /** Time limit for all the work on one cluster (0: none). */
  clusterTimeoutMs: number;
  /** Told after each cluster finishes (the command draws a progress line; the runner itself never prints). */
  onProgress?: (progress: Progress) => void;
  /** Told each cluster's result as soon as it is in (-o jsonl prints it then), in the order they finish. */
  onResult?: (result: ClusterResult<unknown>) => void;
  /**
   * The command's connector (required: its one exec runner, since a second would run each plugin again), with
   * --as/--as-group/--as-uid when given: every request to every selected cluster acts as that identity.
   */
  connector: Connector;
}

export interface ClusterTask {
  ref: ClusterRef;
  client: KubeClient;
  /** Aborted when the cluster's time limit passes. */
  signal: AbortSignal;
}

export interface Progress {
  done: number;
  total: number;
  failed: number;
}

export async function runOverClusters<T>(
  refs: ClusterRef[],
  work: (task: ClusterTask) => Promise<T>,
  options: RunOptions,
): Promise<ClusterResult<T>[]> {
  let done = 0;
  let failed = 0;

  const one = async (ref: ClusterRef): Promise<ClusterResult<T>> => {
    const started = performance.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!ref.ready && !ref.server) throw new FleetError('config', ref.reason ?? 'not ready');
      const job = (async () => {
        // The command's one connector (and exec runner) for the whole run, so clusters sharing a plugin config share its output.
        const client = await options.connector.with({ signal: abort.signal }).cluster(ref);
        return work({ ref, client, signal: abort.signal });
      })();
      const limit =
        options.clusterTimeoutMs > 0
          ? new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                const error = new FleetError(
                  'timeout',
                  `no result within ${formatDuration(options.clusterTimeoutMs)} (--cluster-timeout)`,
                );
                // Requests still in flight end now instead of holding the process open after the result is in.
                abort.abort(error);
                reject(error);
              }, options.clusterTimeoutMs);
            })
          : undefined;
      const value = await (limit ? Promise.race([job, limit]) : job);
      return { cluster: ref.name, ok: true, value, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      return {
        cluster: ref.name,
        ok: false,
        error: toErrorInfo(error),
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      if (timer) clearTimeout(timer);
    }
  };

  return mapLimit(refs, options.concurrency, async (ref) => {
    const result = await one(ref);
    done++;
    if (!result.ok) failed++;
    options.onResult?.(result);
    options.onProgress?.({ done, total: refs.length, failed });
    return result;
  });
}
