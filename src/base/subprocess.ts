import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

import type { Invocation } from './invocation.js';
import { MAX_PROCESS_OUTPUT_BYTES } from './limits.js';
import { IN_EXECUTABLE } from './self.js';

// node:child_process (with net, dgram and streams under it) is loaded at the first program fleet starts, not when this
// module loads: the commands that start none (clusters list, --help) skipped ~5 ms of CPU at start-up that way.
const childProcess = (): typeof import('node:child_process') =>
  createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');

/**
 * The one way fleet runs another program (kind, exec credential plugins): a time limit that holds, and on timeout the
 * child's whole process group is killed, so a grandchild holding stdout open cannot keep fleet waiting. Callers word
 * the failures (ProcessTimeout, ProcessStartError) for their own context. What runs (program, arguments, environment)
 * is an approved Invocation (src/base/invocation.ts), never a name: the options only say how it runs.
 */
export interface RunProcessOptions {
  timeoutMs: number;
  /**
   * Give the child our terminal (stdin inherited). It then stays in our process group (a terminal's foreground group
   * is ours), so only the child itself is killed on timeout.
   */
  interactive?: boolean;
  /** Each piece of the child's stderr as it arrives, until the run is settled (e.g. passed on to the user). */
  onStderr?: (chunk: string) => void;
  /** Ends the child (and its group) early, as the time limit does: the caller no longer wants its answer. */
  signal?: AbortSignal;
  /**
   * How much the child may write on stdout, and on stderr, before it is killed and the run fails (ProcessOutputTooLarge):
   * a program that streams without end must not fill fleet's memory. Default MAX_PROCESS_OUTPUT_BYTES.
   */
  maxOutputBytes?: number;
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The child gave no result within the time limit (and was killed). */
export class ProcessTimeout extends Error {
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`${command}: no answer within ${timeoutMs}ms`);
    this.name = 'ProcessTimeout';
  }
}

/** The child was ended because `signal` aborted (and was killed). */
export class ProcessStopped extends Error {
  constructor(readonly command: string) {
    super(`${command}: stopped`);
    this.name = 'ProcessStopped';
  }
}

/** The child wrote more than its limit on stdout or stderr (and was killed). */
export class ProcessOutputTooLarge extends Error {
  constructor(
    readonly command: string,
    readonly stream: 'stdout' | 'stderr',
    readonly limit: number,
  ) {
    super(`${command}: wrote more than ${limit} bytes on ${stream}`);
    this.name = 'ProcessOutputTooLarge';
  }
}

/** The child could not be started; `code` is the system's (ENOENT: no such program, EACCES: not executable). */
export class ProcessStartError extends Error {
  constructor(
    readonly command: string,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ProcessStartError';
  }
}

/** The children running now (pid, and whether it leads a process group of its own), for killChildren. */
const live = new Map<number, boolean>();

/**
 * Kills every child runProcess started that is still running, each with its whole process group (a plugin's own
 * children too): what a command does when it is interrupted, so that no plugin outlives fleet. A child in our own group
 * (interactive) is killed alone; the terminal's Ctrl-C reached it anyway. Returns how many were killed.
 */
export function killChildren(): number {
  const pids = [...live.entries()];
  for (const [pid, group] of pids) kill(pid, group);
  // Programs the spawner is starting right now have no pid here yet: it kills those itself.
  spawner?.killAll();
  return pids.length;
}

/**
 * Runs an approved invocation: the file started is `invocation.program` (an absolute path, so neither Node nor the
 * spawner looks anything up on PATH), with argv[0] the name it was written as.
 */
export function runProcess(invocation: Invocation, options: RunProcessOptions): Promise<ProcessResult> {
  directRuns++;
  if (options.interactive !== true && directRuns > SPAWNER_AFTER) {
    const s = spawnerNow();
    if (s) return s.run(invocation, options);
  }
  return runDirect(invocation, options);
}

/**
 * What both ways of starting a program (directly, or through the spawner) share: one settlement, the time limit, the
 * caller's stop, and the pid known to killChildren while the program runs. `stopChild` ends the program (and its group).
 */
class Run {
  settled = false;
  private pid: number | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onStop = () => this.end(new ProcessStopped(this.command));

  constructor(
    private readonly command: string,
    private readonly options: RunProcessOptions,
    private readonly group: boolean,
    private readonly resolve: (result: ProcessResult) => void,
    private readonly reject: (error: Error) => void,
    private readonly stopChild: (pid: number | undefined) => void,
  ) {
    // Our own timer: spawn's `timeout` option neither kills the group nor fires when the command does not exist.
    this.timer = setTimeout(() => this.end(new ProcessTimeout(command, options.timeoutMs)), options.timeoutMs);
    if (options.signal?.aborted) this.onStop();
    else options.signal?.addEventListener('abort', this.onStop, { once: true });
  }

  /** The program runs as `pid`; one that started after the run was settled (stopped meanwhile) is killed at once. */
  started(pid: number | undefined): void {
    if (pid === undefined) return;
    if (this.settled) return kill(pid, this.group);
    this.pid = pid;
    live.set(pid, this.group);
  }

  succeed(result: ProcessResult): void {
    if (this.settle()) this.resolve(result);
  }

  fail(error: Error): void {
    if (this.settle()) this.reject(error);
  }

  /** Another run takes over (and settles it): this one's timer and stop are dropped. */
  handOver(other: () => Promise<ProcessResult>): void {
    if (this.settle()) other().then(this.resolve, this.reject);
  }

  /** The program wrote more than it may: ended, and the run fails with that. */
  tooLarge(stream: 'stdout' | 'stderr', limit: number): void {
    this.end(new ProcessOutputTooLarge(this.command, stream, limit));
  }

  /** Ends the program early (time limit, stop) and reports why. */
  private end(error: Error): void {
    if (this.settled) return;
    this.stopChild(this.pid);
    this.fail(error);
  }

  /** Settles the run once: false when it already was. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.pid !== undefined) live.delete(this.pid);
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onStop);
    return true;
  }
}

function runDirect(invocation: Invocation, options: RunProcessOptions): Promise<ProcessResult> {
  const command = invocation.program;
  return new Promise<ProcessResult>((resolve, reject) => {
    const group = options.interactive !== true;
    const child = childProcess().spawn(command, [...invocation.args], {
      argv0: invocation.argv0,
      env: { ...invocation.env },
      stdio: [options.interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
      detached: group,
    });
    const run = new Run(command, options, group, resolve, reject, () => {
      kill(child.pid, group);
      child.stdout?.destroy();
      child.stderr?.destroy();
    });
    run.started(child.pid);
    const out: Buffer[] = [];
    let err = '';
    const limit = options.maxOutputBytes ?? MAX_PROCESS_OUTPUT_BYTES;
    let outBytes = 0;
    let errBytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      if ((outBytes += d.length) > limit) return run.tooLarge('stdout', limit);
      out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if ((errBytes += d.length) > limit) return run.tooLarge('stderr', limit);
      const text = d.toString();
      err += text;
      if (!run.settled) options.onStderr?.(text);
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      run.fail(new ProcessStartError(command, error.code, error.message)),
    );
    child.on('close', (code, signal) =>
      run.succeed({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: err }),
    );
  });
}

/**
 * Starting a program forks fleet first, and fork copies the page tables of the whole process: about 1 ms per 50 MB
 * of memory, 2 to 4 ms for fleet in the middle of a thousand clusters, on the main thread, once per exec plugin (Go's
 * os/exec uses a vfork-like clone and pays almost nothing). So once a run has started SPAWNER_AFTER programs, the rest
 * are started by the spawner: a small Node process (about 40 MB) that forks cheaply, started once, talking JSON over
 * an IPC channel. What the caller sees does not change: the same result, time limit, stop and group kill. Only
 * non-interactive programs go there (an interactive one needs our terminal). The spawner ignores Ctrl-C (fleet
 * decides what to kill, as killChildren does) and, when fleet's channel closes for any reason (an exit, a crash, a
 * SIGKILL), kills every program it started and exits. If it cannot be started or dies, programs start directly again.
 */
const SPAWNER_AFTER = 16;
let directRuns = 0;
let spawner: Spawner | null | undefined;

const SPAWNER_SOURCE = `
const {spawn} = require('node:child_process')
const kids = new Map()
const killGroup = (pid) => { try { process.kill(-pid, 'SIGKILL') } catch {} }
const killAll = () => { for (const pid of kids.values()) killGroup(pid) }
process.on('SIGINT', () => {})
process.on('SIGTERM', () => {})
process.on('disconnect', () => { killAll(); process.exit(0) })
const send = (m) => { if (process.connected) process.send(m) }
process.on('message', (m) => {
  if (m.op === 'kill') { const pid = kids.get(m.id); if (pid !== undefined) killGroup(pid); return }
  if (m.op === 'killAll') { killAll(); return }
  let c
  try {
    c = spawn(m.command, m.args, {argv0: m.argv0, env: m.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true})
  } catch (e) {
    send({id: m.id, error: {code: e.code, message: e.message}})
    return
  }
  if (c.pid !== undefined) { kids.set(m.id, c.pid); send({id: m.id, pid: c.pid}) }
  const out = [], err = []
  let sizes = {stdout: 0, stderr: 0}, over
  const collect = (stream, list) => (d) => {
    if (over) return
    if ((sizes[stream] += d.length) > m.limit) {
      over = stream
      killGroup(c.pid)
      send({id: m.id, error: {code: 'ETOOLARGE', message: stream}})
      return
    }
    list.push(d)
  }
  c.stdout.on('data', collect('stdout', out))
  c.stderr.on('data', collect('stderr', err))
  c.on('error', (e) => { kids.delete(m.id); send({id: m.id, error: {code: e.code, message: e.message}}) })
  c.on('close', (code, signal) => {
    kids.delete(m.id)
    if (over) return
    send({id: m.id, code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8')})
  })
})
`;

interface SpawnerAnswer {
  id: number;
  pid?: number;
  error?: { code?: string; message: string };
  code?: number | null;
  signal?: NodeJS.Signals | null;
  stdout?: string;
  stderr?: string;
}

interface Waiting {
  command: string;
  /** The spawner said it started the program. */
  started?: boolean;
  answer: (a: SpawnerAnswer) => void;
}

function spawnerNow(): Spawner | undefined {
  if (spawner === undefined) {
    try {
      spawner = new Spawner();
    } catch {
      spawner = null;
    }
  }
  return spawner ?? undefined;
}

/**
 * How many programs the spawner has started in this process, its pid, and how many of them it has not yet answered for
 * (tests check that it is used, that it ends, and what is left after a stop).
 */
export function spawnerState(): { runs: number; pid?: number; waiting: number } {
  return spawner ? { runs: spawner.runs, pid: spawner.pid, waiting: spawner.answersDue } : { runs: 0, waiting: 0 };
}

class Spawner {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, Waiting>();
  private next = 1;
  runs = 0;

  get pid(): number | undefined {
    return this.child.pid;
  }

  get answersDue(): number {
    return this.waiting.size;
  }

  constructor() {
    // fleet's single executable reads no -e: it is given the source in its environment instead (scripts/executable.mjs).
    const [args, env] = IN_EXECUTABLE
      ? [[], { ...process.env, FLEET_EXE_SPAWNER: SPAWNER_SOURCE }]
      : [['-e', SPAWNER_SOURCE], process.env];
    this.child = childProcess().spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env });
    // Never what keeps fleet running: every run waiting on it holds a timer of its own.
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
    this.child.on('message', (m: SpawnerAnswer) => this.waiting.get(m.id)?.answer(m));
    const gone = () => {
      if (spawner === this) spawner = null;
      // A run it had not started yet starts directly; one it had started is lost with it (its group was killed).
      for (const [id, w] of this.waiting) {
        this.waiting.delete(id);
        if (!w.started) w.answer({ id, error: { code: 'ESPAWNER', message: 'restart' } });
        else w.answer({ id, error: { message: `${w.command}: the process that started it exited` } });
      }
    };
    this.child.on('exit', gone);
    this.child.on('error', gone);
    // When fleet has nothing left to do, the spawner is told to go and waited for (a few milliseconds): fleet's exit then
    // accounts for its CPU time and its programs' (getrusage of children, what time(1) and the bench read), as it did
    // when fleet started them itself, and no process of fleet's outlives it even briefly.
    process.once('beforeExit', () => {
      if (!this.child.connected) return;
      this.child.ref();
      this.child.disconnect();
    });
  }

  run(invocation: Invocation, options: RunProcessOptions): Promise<ProcessResult> {
    const command = invocation.program;
    const id = this.next++;
    return new Promise<ProcessResult>((resolve, reject) => {
      const run = new Run(command, options, true, resolve, reject, (pid) => {
        // Started: its group is ours to kill; not yet: the spawner kills it when it starts it.
        if (pid !== undefined) kill(pid, true);
        else this.send({ op: 'kill', id });
      });
      // Stopped before it was asked for: nothing is started.
      if (run.settled) return;
      const w: Waiting = {
        command,
        answer: (a) => {
          if (a.pid !== undefined && a.error === undefined && a.code === undefined) {
            w.started = true;
            run.started(a.pid);
            return;
          }
          this.waiting.delete(id);
          // The spawner could not take it (it died before starting it): started directly instead, which has its own
          // time limit and stop.
          if (a.error?.code === 'ESPAWNER') return run.handOver(() => runDirect(invocation, options));
          if (a.error?.code === 'ETOOLARGE')
            return run.tooLarge(
              a.error.message === 'stderr' ? 'stderr' : 'stdout',
              options.maxOutputBytes ?? MAX_PROCESS_OUTPUT_BYTES,
            );
          if (a.error) return run.fail(new ProcessStartError(command, a.error.code, a.error.message));
          if (a.stderr && !run.settled) options.onStderr?.(a.stderr);
          run.succeed({
            code: a.code ?? null,
            signal: a.signal ?? null,
            stdout: a.stdout ?? '',
            stderr: a.stderr ?? '',
          });
        },
      };
      this.waiting.set(id, w);
      this.runs++;
      if (
        !this.send({
          op: 'run',
          id,
          command,
          argv0: invocation.argv0,
          args: invocation.args,
          env: invocation.env,
          limit: options.maxOutputBytes ?? MAX_PROCESS_OUTPUT_BYTES,
        })
      ) {
        w.answer({ id, error: { code: 'ESPAWNER', message: 'restart' } });
      }
    });
  }

  /** Tells the spawner something; false when its channel is closed (it died). */
  send(message: object): boolean {
    if (!this.child.connected) return false;
    this.child.send(message);
    return true;
  }

  killAll(): void {
    this.send({ op: 'killAll' });
  }
}

function kill(pid: number | undefined, group: boolean): void {
  if (pid === undefined) return;
  try {
    process.kill(group ? -pid : pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
