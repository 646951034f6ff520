import {spawn} from 'node:child_process'

/**
 * The one way fleet runs another program (kind, exec credential plugins): a time limit that holds, and on timeout the
 * child's whole process group is killed, so a grandchild holding stdout open cannot keep fleet waiting. Callers word
 * the failures (ProcessTimeout, ProcessStartError) for their own context.
 */
export interface RunProcessOptions {
  args?: string[]
  env?: NodeJS.ProcessEnv
  timeoutMs: number
  /**
   * Give the child our terminal (stdin inherited). It then stays in our process group (a terminal's foreground group
   * is ours), so only the child itself is killed on timeout.
   */
  interactive?: boolean
  /** Each piece of the child's stderr as it arrives, until the run is settled (e.g. passed on to the user). */
  onStderr?: (chunk: string) => void
  /** Ends the child (and its group) early, as the time limit does: the caller no longer wants its answer. */
  signal?: AbortSignal
}

export interface ProcessResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** The child gave no result within the time limit (and was killed). */
export class ProcessTimeout extends Error {
  constructor(readonly command: string, readonly timeoutMs: number) {
    super(`${command}: no answer within ${timeoutMs}ms`)
    this.name = 'ProcessTimeout'
  }
}

/** The child was ended because `signal` aborted (and was killed). */
export class ProcessStopped extends Error {
  constructor(readonly command: string) {
    super(`${command}: stopped`)
    this.name = 'ProcessStopped'
  }
}

/** The child could not be started; `code` is the system's (ENOENT: no such program, EACCES: not executable). */
export class ProcessStartError extends Error {
  constructor(readonly command: string, readonly code: string | undefined, message: string) {
    super(message)
    this.name = 'ProcessStartError'
  }
}

/** The children running now (pid, and whether it leads a process group of its own), for killChildren. */
const live = new Map<number, boolean>()

/**
 * Kills every child runProcess started that is still running, each with its whole process group (a plugin's own
 * children too): what a command does when it is interrupted, so that no plugin outlives fleet. A child in our own group
 * (interactive) is killed alone; the terminal's Ctrl-C reached it anyway. Returns how many were killed.
 */
export function killChildren(): number {
  const pids = [...live.entries()]
  for (const [pid, group] of pids) kill(pid, group)
  return pids.length
}

export function runProcess(command: string, options: RunProcessOptions): Promise<ProcessResult> {
  return new Promise<ProcessResult>((resolve, reject) => {
    const group = options.interactive !== true
    let settled = false
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      if (child.pid !== undefined) live.delete(child.pid)
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onStop)
      fn()
    }
    const child = spawn(command, options.args ?? [], {
      env: options.env ?? process.env,
      stdio: [options.interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
      detached: group,
    })
    if (child.pid !== undefined) live.set(child.pid, group)
    const end = (error: Error) => {
      kill(child.pid, group)
      child.stdout?.destroy()
      child.stderr?.destroy()
      settle(() => reject(error))
    }
    // Our own timer: spawn's `timeout` option neither kills the group nor fires when the command does not exist.
    const timer = setTimeout(() => end(new ProcessTimeout(command, options.timeoutMs)), options.timeoutMs)
    const onStop = () => end(new ProcessStopped(command))
    if (options.signal?.aborted) onStop()
    else options.signal?.addEventListener('abort', onStop, {once: true})
    const out: Buffer[] = []
    let err = ''
    child.stdout!.on('data', (d: Buffer) => out.push(d))
    child.stderr!.on('data', (d: Buffer) => {
      const text = d.toString()
      err += text
      if (!settled) options.onStderr?.(text)
    })
    child.on('error', (error: NodeJS.ErrnoException) => {
      settle(() => reject(new ProcessStartError(command, error.code, error.message)))
    })
    child.on('close', (code, signal) => {
      settle(() => resolve({code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: err}))
    })
  })
}

function kill(pid: number | undefined, group: boolean): void {
  if (pid === undefined) return
  try {
    process.kill(group ? -pid : pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}
