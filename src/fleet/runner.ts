import {mapLimit} from '../base/concurrency.js'
import {formatDuration} from '../base/duration.js'
import {type ErrorInfo, FleetError, toErrorInfo} from '../base/errors.js'
import type {Impersonation, KubeClient} from '../kube/client.js'
import type {ExecCredentialRunner} from '../kube/exec-credential.js'
import type {RequestLog} from '../kube/request-log.js'
import type {ClusterRef} from '../providers/types.js'

/** One cluster's outcome. Results come back in input order; a failure never stops the others. */
export interface ClusterResult<T> {
  cluster: string
  ok: boolean
  value?: T
  error?: ErrorInfo
  durationMs: number
}

export interface RunOptions {
  concurrency: number
  /** Time limit for one request. */
  requestTimeoutMs: number
  /** Time limit for all the work on one cluster (0: none). */
  clusterTimeoutMs: number
  /** Told after each cluster finishes (the command draws a progress line; the runner itself never prints). */
  onProgress?: (progress: Progress) => void
  /** Told each cluster's result as soon as it is in (-o jsonl prints it then), in the order they finish. */
  onResult?: (result: ClusterResult<unknown>) => void
  /** The command's one exec credential runner (required: a second runner would run each plugin again). */
  exec: ExecCredentialRunner
  /** Request logging (-v 6 and up) for every cluster's client. */
  log?: RequestLog
  /** --as/--as-group/--as-uid: every request to every selected cluster acts as this identity. */
  impersonate?: Impersonation
}

export interface ClusterTask {
  ref: ClusterRef
  client: KubeClient
  /** Aborted when the cluster's time limit passes. */
  signal: AbortSignal
}

export interface Progress {
  done: number
  total: number
  failed: number
}

export async function runOverClusters<T>(
  refs: ClusterRef[],
  work: (task: ClusterTask) => Promise<T>,
  options: RunOptions,
): Promise<ClusterResult<T>[]> {
  // The command's runner for the whole run, so concurrent requests to clusters sharing a plugin config share its output.
  const exec = options.exec
  let done = 0
  let failed = 0

  const one = async (ref: ClusterRef): Promise<ClusterResult<T>> => {
    const started = performance.now()
    const abort = new AbortController()
    let timer: NodeJS.Timeout | undefined
    try {
      if (!ref.ready && !ref.server) throw new FleetError('config', ref.reason ?? 'not ready')
      const job = (async () => {
        const context = await ref.resolve()
        // Loaded on the first connection, not with the module: commands that only list clusters never load the HTTP
        // client (node:https, node:tls) at start-up.
        const {KubeClient} = await import('../kube/client.js')
        const client = await KubeClient.connect(context, {
          timeoutMs: options.requestTimeoutMs,
          clusterName: ref.name,
          exec,
          signal: abort.signal,
          log: options.log,
          impersonate: options.impersonate,
        })
        return work({ref, client, signal: abort.signal})
      })()
      const limit =
        options.clusterTimeoutMs > 0
          ? new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                const error = new FleetError('timeout', `no result within ${formatDuration(options.clusterTimeoutMs)} (--cluster-timeout)`)
                // Requests still in flight end now instead of holding the process open after the result is in.
                abort.abort(error)
                reject(error)
              }, options.clusterTimeoutMs)
            })
          : undefined
      const value = await (limit ? Promise.race([job, limit]) : job)
      return {cluster: ref.name, ok: true, value, durationMs: Math.round(performance.now() - started)}
    } catch (error) {
      return {cluster: ref.name, ok: false, error: toErrorInfo(error), durationMs: Math.round(performance.now() - started)}
    } finally {
      if (timer) clearTimeout(timer)
    }
  }

  return mapLimit(refs, options.concurrency, async (ref) => {
    const result = await one(ref)
    done++
    if (!result.ok) failed++
    options.onResult?.(result)
    options.onProgress?.({done, total: refs.length, failed})
    return result
  })
}
