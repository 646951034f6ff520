// Child processes of the control plane: each runs in its own process group (so a Ctrl-C aimed at the test runner does not
// kill it half-way, and teardown can kill it with everything it started), with output in a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import type { ProcessRecord } from './state.js';

export interface Started {
  pid: number;
  child: ChildProcess;
  /** Resolves when the process exits; lets start-up fail fast instead of waiting for a timeout. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** onPid runs synchronously right after the fork, before any await, so a signal handler can never miss a process. */
export function spawnDetached(
  bin: string,
  args: string[],
  log: string,
  onPid: (pid: number) => void,
): Promise<Started> {
  const fd = openSync(log, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (child.pid !== undefined) onPid(child.pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // A detached child must not keep a short-lived parent (sandbox up) alive.
  child.unref();
  return new Promise((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`cannot start ${bin}: ${err.message}`)));
    child.once('spawn', () => resolve({ pid: child.pid!, child, exited }));
  });
}

/** Alive and not a zombie (a dead child that its parent has not reaped yet still answers kill(pid, 0)). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The pid still runs the binary we started, not an unrelated process that reused the number after a reboot. */
export function isOurs(rec: ProcessRecord): boolean {
  if (!isAlive(rec.pid)) return false;
  try {
    const argv0 = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 === rec.bin;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitDead(pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** SIGTERM the groups, SIGKILL what is left after graceMs. Returns the pids still alive afterwards (should be none). */
export async function killGroups(records: ProcessRecord[], graceMs = 5000): Promise<number[]> {
  const ours = records.filter(isOurs).map((r) => r.pid);
  for (const pid of ours) signalGroup(pid, 'SIGTERM');
  const stubborn = await waitDead(ours, graceMs);
  for (const pid of stubborn) signalGroup(pid, 'SIGKILL');
  return waitDead(stubborn, 5000);
}

/** Killed processes whose parent is gone linger as zombies until init reaps them; waiting for that keeps a `pgrep`
 * right after teardown honest. Bounded: an init that never reaps must not hang teardown. */
export async function waitReaped(pids: number[], ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (pids.some((p) => existsSync(`/proc/${p}`)) && Date.now() < deadline) await sleep(50);
}

/** Synchronous last resort for process 'exit' handlers, where no promise can be awaited. */
export function killGroupsNow(records: ProcessRecord[]): void {
  for (const rec of records) if (isOurs(rec)) signalGroup(rec.pid, 'SIGKILL');
}

export function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Node source for a program that starts a grandchild (in the program's process group, so only a kill of the whole group reaches it), writes
 * the grandchild's pid to pidFile and waits forever. The file is written under another name and renamed, so a reader
 * never sees it empty (an empty file read as pid 0 is our own group, which is always "alive").
 */
export function parentOfGrandchild(pidFile: string): string {
  return `const {spawn} = require('node:child_process'); const fs = require('node:fs');
const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {stdio: 'ignore'});
fs.writeFileSync(${JSON.stringify(pidFile + '.tmp')}, String(c.pid)); fs.renameSync(${JSON.stringify(pidFile + '.tmp')}, ${JSON.stringify(pidFile)});
setInterval(() => {}, 1000)`;
}

/** The pid parentOfGrandchild wrote, waiting for it as long as a loaded machine needs to start two Node processes. */
export async function grandchildPid(pidFile: string, ms = 20_000): Promise<number> {
  const deadline = Date.now() + ms;
  while (!existsSync(pidFile)) {
    if (Date.now() > deadline)
      throw new Error(`${pidFile}: no pid within ${ms} ms (the program did not start its child)`);
    await sleep(25);
  }
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (!(pid > 0)) throw new Error(`${pidFile}: not a pid`);
  return pid;
}

/** Waits (bounded) for a process to be gone; returns whether it is. */
export async function gone(pid: number, ms = 10_000): Promise<boolean> {
  return (await waitDead([pid], ms)).length === 0;
}
