import {Cancellation} from '../base/cancel.js'
import {EXIT_INTERRUPTED, EXIT_TERMINATED, type InterruptSignal} from '../base/errors.js'
import {killChildren} from '../base/subprocess.js'

/**
 * SIGINT and SIGTERM for every command, installed once per process. Whatever the command, the programs it started (exec
 * credential plugins, kind) are killed with their process groups at once: none outlives fleet. Then:
 * - a command that makes things on clusters (creds generate, creds rotate) asked for a Cancellation: the first signal
 *   cancels it and the command unwinds itself (undoing what it made, as on a failure) and exits 130 (143 for SIGTERM);
 *   a second signal while it undoes ends the process at once, naming what was not undone yet;
 * - any other command only reads, and ends at once with one line and the same exit code.
 */
let installed = false
let active: Cancellation | undefined
let received = 0
let write: (line: string) => void = (line) => process.stderr.write(line + '\n')

const codeOf = (signal: InterruptSignal) => (signal === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED)

function onSignal(signal: InterruptSignal): void {
  received++
  killChildren()
  if (active && received === 1) {
    active.cancel(signal)
    return
  }
  if (active) {
    const left = active.leftBehind()
    const what = left === undefined ? 'it had not started undoing' : left.length === 0 ? 'nothing was left' : `left behind: ${left.join('; ')}`
    write(`error: interrupted again (${signal}) while undoing what this run made; ${what}`)
  } else {
    write(`error: interrupted (${signal})`)
  }
  process.exit(codeOf(signal))
}

/** Installs the handlers (once); `sink` writes one line on stderr the command's way (scrubbed). */
export function watchInterrupts(sink?: (line: string) => void): void {
  if (sink) write = sink
  if (installed) return
  installed = true
  process.on('SIGINT', () => onSignal('SIGINT'))
  process.on('SIGTERM', () => onSignal('SIGTERM'))
}

/** The command will unwind itself on an interrupt: the first signal cancels this instead of ending the process. */
export function cancellation(): Cancellation {
  active ??= new Cancellation()
  return active
}
