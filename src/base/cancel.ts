import {type InterruptSignal, Interrupted} from './errors.js'

/**
 * How a command tells a service that the user interrupted it (SIGINT, SIGTERM), and how the service tells the command
 * what a forced exit would leave behind. The command makes it from the process signals (src/cli/interrupt.ts); a
 * service only reads it, between its steps, so that it can undo what it made before the command exits (services never
 * install signal handlers themselves). Undoing is not itself cancelled by the same signal: only a second signal ends
 * the process at once, and then the command names what `leftBehind` still lists.
 */
export class Cancellation {
  private readonly controller = new AbortController()
  private pending?: () => string[]

  /** Aborted once interrupted; its reason is the Interrupted error. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  get interrupted(): Interrupted | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as Interrupted) : undefined
  }

  cancel(signalName: InterruptSignal): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Interrupted(signalName))
  }

  /** Between two steps: throws the Interrupted error when the command was interrupted. */
  check(): void {
    const i = this.interrupted
    if (i) throw i
  }

  /** The Interrupted error with a message that says what became of the run's work. */
  error(message: string): Interrupted {
    const i = this.interrupted
    return new Interrupted(i?.signalName ?? 'SIGINT', `interrupted (${i?.signalName ?? 'SIGINT'}) ${message}`)
  }

  /** The service, while it undoes its work: what is not undone yet (for the message of a forced exit). */
  undoing(pending: () => string[]): void {
    this.pending = pending
  }

  leftBehind(): string[] | undefined {
    return this.pending?.()
  }
}
