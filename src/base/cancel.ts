import { type InterruptSignal, Interrupted } from './errors.js';

/**
 * How a command tells a service that the user interrupted it (SIGINT, SIGTERM), and how the service tells the command
 * what a forced exit would leave behind. The command makes it from the process signals (src/cli/interrupt.ts); a
 * service only reads it, between its steps, so that it can undo what it made before the command exits (services never
 * install signal handlers themselves). Undoing is not itself cancelled by the same signal: only a second signal ends
 * the process at once, and then the command names what `leftBehind` still lists.
 */
export class Cancellation {
  private readonly controller = new AbortController();
  private pending?: () => string[];
  private phase: 'working' | 'undoing' | 'delivered' = 'working';
  private kept?: string;
  private what = 'the credential was delivered';

  /** Aborted once interrupted; its reason is the Interrupted error. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interrupted(): Interrupted | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as Interrupted) : undefined;
  }

  cancel(signalName: InterruptSignal): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Interrupted(signalName));
  }

  /** Between two steps: throws the Interrupted error when the command was interrupted. */
  check(): void {
    const i = this.interrupted;
    if (i) throw i;
  }

  /** The Interrupted error with a message that says what became of the run's work. */
  error(message: string): Interrupted {
    const i = this.interrupted;
    return new Interrupted(i?.signalName ?? 'SIGINT', `interrupted (${i?.signalName ?? 'SIGINT'}) ${message}`);
  }

  /**
   * The service, from the moment it starts making things: what it has made so far and not undone, kept current, so a
   * second signal that arrives before the undo has begun (the first one is honoured between steps, after the request in
   * flight) still names what is on the clusters.
   */
  making(made: () => string[]): void {
    this.pending = made;
  }

  /** The service, while it undoes its work: what is not undone yet (for the message of a forced exit). */
  undoing(pending: () => string[]): void {
    this.pending = pending;
    this.phase = 'undoing';
  }

  /**
   * The service delivered its result (`where`: where it is; `what`: what happened, "the credential was delivered" unless
   * said): nothing will be undone any more, the result is kept.
   */
  delivered(where: string, what = 'the credential was delivered'): void {
    this.phase = 'delivered';
    this.kept = where;
    this.what = what;
  }

  /** Whether the result was delivered (a signal from then on changes nothing). */
  get isDelivered(): boolean {
    return this.phase === 'delivered';
  }

  /** What a forced exit now would leave: undefined when the service said nothing (it had made nothing to name). */
  leftBehind(): string[] | undefined {
    return this.pending?.();
  }

  /** The line a second signal ends the process with: what this run made, and what becomes of it. */
  forcedExit(signalName: string): string {
    if (this.phase === 'delivered')
      return `interrupted again (${signalName}) after ${this.what}: it is kept (${this.kept})`;
    const left = this.leftBehind();
    const when =
      this.phase === 'undoing' ? 'while undoing what this run made' : 'before the undo of what this run made had begun';
    if (left === undefined) return `interrupted again (${signalName}) before this run had begun undoing what it made`;
    return `interrupted again (${signalName}) ${when}; ${left.length === 0 ? 'nothing was left' : `left behind: ${left.join('; ')}`}`;
  }
}
