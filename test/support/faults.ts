// Faults on the running control plane (issue 33): kill, pause (SIGSTOP) and restart one kube-apiserver, controller
// manager or etcd while the others run, as an outage, an upgrade or an etcd stall does. Processes are found by name in
// processes.json (`etcd`, `hub-apiserver`, `member-1-apiserver`, `member-1-controller-manager`, an extra apiserver's
// `<name>-apiserver`). A restarted process runs the exact argv it ran before (read from /proc before the first fault, so
// the same port, certificates, etcd prefix and flags), in its own process group with its log appended, and is recorded
// in processes.json and state.json under its new pid, so the run's teardown and `sandbox down` stop it as before.
// restart() returns once the server is ready (/readyz, etcd /health).
//
// A test that faults the shared control plane must restore it (restoreAll() in `after`/`finally`): the e2e files run
// one at a time against the same servers. A paused process is also resumed if this test process exits without that.
import { readFileSync } from 'node:fs';
import { apiRequest } from './http.js';
import { loadControlPlane } from './fixture.js';
import { isAlive, isOurs, killGroups, spawnDetached, tail, waitReaped } from './procs.js';
import {
  processesFile,
  readProcesses,
  stateFile,
  writeJsonAtomic,
  type ControlPlaneState,
  type ProcessRecord,
} from './state.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** argv of each process by name, read while it ran (a killed process has no /proc entry to read it from). */
const argvs = new Map<string, string[]>();
const paused = new Set<number>();

function record(name: string): ProcessRecord {
  const cp = loadControlPlane();
  const r = readProcesses(cp.dir)?.processes.find((p) => p.name === name);
  if (!r)
    throw new Error(
      `no process ${name} in ${processesFile(cp.dir)} (have ${(readProcesses(cp.dir)?.processes ?? []).map((p) => p.name).join(', ')})`,
    );
  return r;
}

/** Reads the argv of every process of the control plane now, so any of them can be started again later. */
export function rememberArgv(): void {
  const cp = loadControlPlane();
  for (const p of readProcesses(cp.dir)?.processes ?? []) {
    if (argvs.has(p.name) || !isOurs(p)) continue;
    const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((x, i, a) => i < a.length - 1 || x !== '');
    argvs.set(p.name, argv.slice(1));
  }
}

export function pidOf(name: string): number {
  return record(name).pid;
}

/** SIGKILL: a crash, no shutdown. Returns once the process is gone. */
export async function kill(name: string): Promise<void> {
  rememberArgv();
  const r = record(name);
  paused.delete(r.pid);
  try {
    process.kill(-r.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
  await waitReaped([r.pid], 10_000);
}

/** SIGSTOP: the process holds its sockets open and answers nothing (a stalled etcd, a hung apiserver). */
export function pause(name: string): void {
  rememberArgv();
  const pid = record(name).pid;
  process.kill(pid, 'SIGSTOP');
  paused.add(pid);
}

export function resume(name: string): void {
  const pid = record(name).pid;
  process.kill(pid, 'SIGCONT');
  paused.delete(pid);
}

// A test that dies with a process paused must not leave the control plane hung for the files after it.
process.on('exit', () => {
  for (const pid of paused) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone.
    }
  }
});

/** Ready: an apiserver's /readyz answers 200 (with the admin certificate), etcd's /health says healthy. */
async function waitReady(name: string, argv: string[], timeoutMs: number): Promise<void> {
  const cp = loadControlPlane();
  const flag = (f: string) => argv.find((a) => a.startsWith(`--${f}=`))?.slice(f.length + 3);
  const deadline = Date.now() + timeoutMs;
  const log = record(name).log;
  for (;;) {
    let ok: boolean;
    if (name === 'etcd') {
      ok = await fetch(`${flag('listen-client-urls')}/health`).then(
        async (r) => r.ok && ((await r.json()) as { health?: string }).health === 'true',
        () => false,
      );
    } else if (name.endsWith('-apiserver')) {
      const url = `https://127.0.0.1:${flag('secure-port')}`;
      ok =
        (
          await apiRequest({
            url,
            path: '/readyz',
            caFile: cp.serverCa.certFile,
            certFile: cp.admin.certFile,
            keyFile: cp.admin.keyFile,
            timeoutMs: 3000,
          }).catch(() => undefined)
        )?.status === 200;
    } else {
      // A controller manager serves nothing (--secure-port=0): alive for a second is as ready as it can be seen.
      await sleep(1000);
      ok = isAlive(record(name).pid);
    }
    if (ok) return;
    if (!isAlive(record(name).pid))
      throw new Error(`${name} exited while starting again; last lines of ${log}:\n${tail(log)}`);
    if (Date.now() > deadline)
      throw new Error(`${name} not ready ${timeoutMs} ms after its restart; last lines of ${log}:\n${tail(log)}`);
    await sleep(200);
  }
}

/**
 * Starts the process again with its argv (killing it first if it still runs) and waits until it is ready. Its pid is
 * replaced in processes.json and state.json.
 */
export async function restart(name: string, o: { readyTimeoutMs?: number } = {}): Promise<number> {
  rememberArgv();
  const argv = argvs.get(name);
  if (!argv) throw new Error(`${name}: its command line was never read (call rememberArgv() while it runs)`);
  const cp = loadControlPlane();
  const old = record(name);
  if (isAlive(old.pid)) {
    try {
      process.kill(old.pid, 'SIGCONT');
    } catch {
      // Gone.
    }
    await killGroups([old], 2000);
    await waitReaped([old.pid]);
  }
  paused.delete(old.pid);
  await spawnDetached(old.bin, argv, old.log, (pid) => {
    const book = readProcesses(cp.dir)!;
    book.processes = book.processes.map((p) => (p.name === name ? { ...p, pid } : p));
    writeJsonAtomic(processesFile(cp.dir), book);
    // state.json names the pids of the servers and etcd too (tests and people read them there).
    const state = JSON.parse(readFileSync(stateFile(cp.dir), 'utf8')) as ControlPlaneState;
    if (name === 'etcd') state.etcd.pid = pid;
    for (const s of state.servers) s.pids = s.pids.map((x) => (x === old.pid ? pid : x));
    writeJsonAtomic(stateFile(cp.dir), state);
  });
  await waitReady(name, argv, o.readyTimeoutMs ?? 90_000);
  return pidOf(name);
}

/**
 * Puts the control plane back: every paused process resumed, and every process whose argv was read and that is no
 * longer running (killed by a test, or a controller manager that gave up while its apiserver was down) started again.
 * For `after` hooks and `finally` blocks.
 */
export async function restoreAll(): Promise<string[]> {
  const cp = loadControlPlane();
  for (const pid of paused) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone.
    }
  }
  paused.clear();
  const restarted: string[] = [];
  // etcd first, then the apiservers, then their controller managers: each needs the one before.
  const order = (n: string) => (n === 'etcd' ? 0 : n.endsWith('-apiserver') ? 1 : 2);
  const names = [...argvs.keys()].sort((a, b) => order(a) - order(b));
  for (const name of names) {
    const r = readProcesses(cp.dir)?.processes.find((p) => p.name === name);
    if (r && !isOurs(r)) {
      await restart(name);
      restarted.push(name);
    }
  }
  return restarted;
}

/** Stops tracking a process: restoreAll() no longer starts it again (for a server a test stops on purpose). */
export function forget(name: string): void {
  argvs.delete(name);
}
