import {type ErrorInfo, FleetError, toErrorInfo} from '../base/errors.js'
import {cursorControlAllowed} from '../base/terminal.js'
import {KubeClient} from '../kube/client.js'
import {ExecCredentialRunner} from '../kube/exec-credential.js'
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
  /** Show a progress line on stderr (only when stderr is a terminal that is not TERM=dumb). */
  progress?: boolean
  /** Whether exec plugins may talk to the user. */
  interactive?: boolean
  exec?: ExecCredentialRunner
  /** Request logging (-v 6 and up) for every cluster's client. */
  log?: RequestLog
}

export interface ClusterTask {
  ref: ClusterRef
  client: KubeClient
  /** Aborted when the cluster's time limit passes. */
  signal: AbortSignal
}

const formatMs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)

function progressLine(done: number, total: number, failed: number): string {
  return `\r\u001B[2K[${done}/${total}] clusters${failed > 0 ? `, ${failed} failed` : ''}`
}

export async function runOverClusters<T>(
  refs: ClusterRef[],
  work: (task: ClusterTask) => Promise<T>,
  options: RunOptions,
): Promise<ClusterResult<T>[]> {
  // One exec runner for the whole run, so concurrent requests to clusters sharing a plugin config share its output.
  const exec = options.exec ?? new ExecCredentialRunner({interactiveAvailable: options.interactive ?? false})
  const results: ClusterResult<T>[] = new Array(refs.length)
  const showProgress = options.progress === true && cursorControlAllowed(process.stderr) && refs.length > 1
  let next = 0
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
        const client = await KubeClient.connect(context, {
          timeoutMs: options.requestTimeoutMs,
          clusterName: ref.name,
          exec,
          signal: abort.signal,
          log: options.log,
        })
        return work({ref, client, signal: abort.signal})
      })()
      const limit =
        options.clusterTimeoutMs > 0
          ? new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                const error = new FleetError('timeout', `no result within ${formatMs(options.clusterTimeoutMs)} (--cluster-timeout)`)
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

  const worker = async () => {
    while (next < refs.length) {
      const i = next++
      results[i] = await one(refs[i])
      done++
      if (!results[i].ok) failed++
      if (showProgress) process.stderr.write(progressLine(done, refs.length, failed))
    }
  }
  await Promise.all(Array.from({length: Math.min(options.concurrency, refs.length)}, worker))
  if (showProgress) process.stderr.write('\r\u001B[2K')
  return results
}
