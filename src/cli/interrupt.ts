import { Cancellation } from '../base/cancel.js';
import { EXIT_INTERRUPTED, EXIT_TERMINATED, type InterruptSignal } from '../base/errors.js';
import { killChildren } from '../base/subprocess.js';

/**
 * SIGINT and SIGTERM for every command, installed once per process. Whatever the command, the programs it started (exec
 * credential plugins, kind) are killed with their process groups at once: none outlives fleet. Then:
 * - a command that makes things on clusters (creds generate, creds rotate) asked for a Cancellation: the first signal
 *   cancels it and the command unwinds itself (undoing what it made, as on a failure) and exits 130 (143 for SIGTERM);
 *   a second signal while it undoes ends the process at once, naming what was not undone yet;
 * - any other command only reads, and ends at once with one line and the same exit code.
 */
let installed = false;
let active: Cancellation | undefined;
let received = 0;
/** When the first signal was handled (performance.now(), monotonic). */
let firstAt: number | undefined;

/**
 * A second signal within this long of the first is the same interrupt, not a second one. GNU timeout (`timeout -s INT`)
 * signals fleet, then fleet's process group, so fleet receives two SIGINTs microseconds apart (a wrapper that forwards
 * the Ctrl-C its own process group got, as npm run does, is the same). Taken as a double Ctrl-C, the second ended the run
 * before its undo and left what it made (1 run in 7 under timeout). Measured from when the handler runs, not when the
 * kernel delivered: two signals that arrive while the event loop is busy are handled one after the other at once, and
 * count as one. A person pressing Ctrl-C twice is slower than this; the second press is still a second interrupt.
 */
export const SAME_INTERRUPT_MS = 50;
let write: (line: string) => void = (line) => process.stderr.write(line + '\n');

const codeOf = (signal: InterruptSignal) => (signal === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED);

function onSignal(signal: InterruptSignal): void {
  const now = performance.now();
  // The echo of the first signal (timeout's, then its process group's): nothing more to do.
  if (firstAt !== undefined && now - firstAt < SAME_INTERRUPT_MS) return;
  firstAt ??= now;
  // Already ending (waiting for the thread pool): a second signal ends it at once.
  if (ending) return end(signal);
  received++;
  killChildren();
  if (active && received === 1) {
    active.cancel(signal);
    // Acknowledged at once (at a terminal or not): what the run finishes before it stops, how long that may take, and
    // what a second signal would leave. Nothing when the command reports nothing in progress (it ends at once).
    const ack = acknowledge?.();
    if (ack) write(ack);
    return;
  }
  if (active) {
    write(`error: ${active.forcedExit(signal)}`);
  } else {
    write(`error: interrupted (${signal})`);
  }
  end(signal);
}

/**
 * Work that runs on libuv's thread pool: file system calls, DNS lookups (getaddrinfo), crypto and zlib jobs, as
 * process.getActiveResourcesInfo() names them.
 */
const POOL_WORK = /^(FSReq|GetAddrInfoReqWrap|GetNameInfoReqWrap|Zlib)|Job$/;
const poolBusy = () => process.getActiveResourcesInfo().some((r) => POOL_WORK.test(r));

/** How long the end waits for work on the thread pool to finish before the process dies of the signal instead. */
const END_GRACE_MS = 200;

let ending = false;

/**
 * Ends the process, whatever it is waiting for. process.exit joins the thread pool's threads at teardown, so a thread
 * blocked in a system call (opening a FIFO nobody writes to) kept fleet alive for hours after its last line. So: the
 * exit code is set and nothing more is printed; when the pool is idle (at once, or within END_GRACE_MS, the usual
 * file read finishing) process.exit ends it with 130/143; when it is not, the process dies of the signal itself, its
 * default action restored: nothing waits, and a shell reports the same status (128 + the signal). A second signal
 * meanwhile does that at once.
 */
function end(signal: InterruptSignal): void {
  const code = codeOf(signal);
  const die = () => {
    killChildren();
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    // Reached only if the signal went to another thread: it ends the process a moment later.
    process.exit(code);
  };
  if (ending) die();
  ending = true;
  process.exitCode = code;
  // What the command still does in the grace period (a result arriving, a table) is not printed after the line.
  for (const stream of [process.stdout, process.stderr]) stream.write = () => true;
  const deadline = Date.now() + END_GRACE_MS;
  const attempt = () => {
    if (!poolBusy()) {
      killChildren();
      process.exit(code);
    }
    if (Date.now() >= deadline) die();
  };
  attempt();
  setInterval(attempt, 5);
}

let acknowledge: (() => string | undefined) | undefined;

/**
 * What the first signal to a command that unwinds itself is answered with (the command's live line knows what is in
 * progress: src/cli/progress.ts ProgressBoard.acknowledgement); undefined: no line.
 */
export function acknowledgeInterruptsWith(describe: () => string | undefined): void {
  acknowledge = describe;
}

/** Installs the handlers (once); `sink` writes one line on stderr the command's way (scrubbed). */
export function watchInterrupts(sink?: (line: string) => void): void {
  if (sink) write = sink;
  if (installed) return;
  installed = true;
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

/** The command will unwind itself on an interrupt: the first signal cancels this instead of ending the process. */
export function cancellation(): Cancellation {
  active ??= new Cancellation();
  return active;
}
