// The spawner (src/base/subprocess.ts): after 16 programs started directly, runProcess starts the rest from a small
// helper process so that fleet's own fork cost (its page tables) is paid once. What a caller sees must not change:
// the same answers, errors, time limit, stop, group kill, and nothing left running when fleet ends. Real processes,
// no doubles. This file runs in a process of its own (node --test), so its run count starts at 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  ProcessOutputTooLarge,
  ProcessStartError,
  ProcessStopped,
  ProcessTimeout,
  killChildren,
  spawnerState,
} from '../../src/base/subprocess.js';
import { runCommand } from '../support/approved.js';
import { gone, grandchildPid, isAlive, parentOfGrandchild } from '../support/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-spawner-'));
const sh = (script: string, env: NodeJS.ProcessEnv = {}) =>
  runCommand('/bin/sh', {
    args: ['-c', script, 'arg0', 'two words', "it's"],
    env: { ...process.env, ...env },
    timeoutMs: 10_000,
  });
async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
}

describe('the spawner', () => {
  it('takes over after 16 programs, with the same answers as a direct start', async () => {
    const script = 'printf "%s|%s|%s|%s" "$FLEET_SPAWNER_TEST" "$1" "$2" "$(pwd)"; printf "to stderr" >&2; exit 3';
    const direct = [];
    for (let i = 0; i < 16; i++) direct.push(await sh(script, { FLEET_SPAWNER_TEST: 'v=1 "q"' }));
    assert.equal(spawnerState().runs, 0, 'the first 16 start directly');
    const via = await Promise.all(Array.from({ length: 8 }, () => sh(script, { FLEET_SPAWNER_TEST: 'v=1 "q"' })));
    assert.equal(spawnerState().runs, 8);
    for (const r of [...direct, ...via]) assert.deepEqual(r, direct[0]);
    assert.deepEqual(direct[0], {
      code: 3,
      signal: null,
      stdout: `v=1 "q"|two words|it's|${process.cwd()}`,
      stderr: 'to stderr',
    });
  });

  it('kills a program that writes past its limit, on stdout or stderr, as a direct start does', async () => {
    const runs = spawnerState().runs;
    for (const [stream, script] of [
      ['stdout', 'yes fleet'],
      ['stderr', 'yes fleet >&2'],
    ] as const) {
      await assert.rejects(
        runCommand('/bin/sh', { args: ['-c', script], timeoutMs: 30_000, maxOutputBytes: 256 * 1024 }),
        (e: ProcessOutputTooLarge) => e instanceof ProcessOutputTooLarge && e.stream === stream,
      );
    }
    assert.equal(spawnerState().runs, runs + 2, 'through the spawner');
    // Still usable afterwards.
    assert.equal((await sh('printf ok')).stdout, 'ok');
  });

  it('reports a program that does not exist, or may not run, as a start error with its code', async () => {
    await assert.rejects(
      runCommand('/nonexistent-program', { timeoutMs: 5000 }),
      (e: ProcessStartError) => e instanceof ProcessStartError && e.code === 'ENOENT',
    );
    await assert.rejects(
      runCommand(dir, { timeoutMs: 5000 }),
      (e: ProcessStartError) => e instanceof ProcessStartError && e.code === 'EACCES',
    );
    assert.ok(spawnerState().runs >= 10);
  });

  it('on the time limit, and on stop, kills the program with its process group', async () => {
    for (const how of ['timeout', 'stop'] as const) {
      const pidFile = join(dir, `${how}.pid`);
      const stop = new AbortController();
      // The time limit leaves a loaded machine (the unit suite runs files in parallel) room to start two Node processes.
      const running = runCommand(process.execPath, {
        args: ['-e', parentOfGrandchild(pidFile)],
        timeoutMs: how === 'timeout' ? 4000 : 60_000,
        signal: stop.signal,
      });
      const grandchild = await grandchildPid(pidFile);
      assert.ok(isAlive(grandchild));
      if (how === 'stop') stop.abort();
      await assert.rejects(running, how === 'timeout' ? ProcessTimeout : ProcessStopped);
      assert.ok(await gone(grandchild), `${how}: the grandchild survived`);
    }
  });

  it('a program stopped before the spawner said it started is killed as it starts, and not left counted as running', async () => {
    const before = spawnerState().runs;
    const stop = new AbortController();
    const running = runCommand(process.execPath, {
      args: ['-e', 'setInterval(() => {}, 1000)'],
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    stop.abort();
    await assert.rejects(running, ProcessStopped);
    assert.equal(spawnerState().runs, before + 1, 'it went through the spawner');
    // The spawner still reports the start, then the end of the program it killed.
    await waitFor(() => spawnerState().waiting === 0);
    assert.equal(spawnerState().waiting, 0, 'the spawner never reported the end of the program');
    assert.equal(killChildren(), 0, 'a program that was stopped is still counted as running');
  });

  it('killChildren ends what the spawner started, group and all', async () => {
    const pidFile = join(dir, 'kill.pid');
    const running = runCommand(process.execPath, { args: ['-e', parentOfGrandchild(pidFile)], timeoutMs: 60_000 });
    const grandchild = await grandchildPid(pidFile);
    // The spawner's message with the program's pid may arrive after the file is written.
    await waitFor(() => killChildren() > 0);
    const result = await running;
    assert.equal(result.signal, 'SIGKILL');
    assert.ok(await gone(grandchild), 'the grandchild survived');
    assert.equal(killChildren(), 0, 'a finished child is forgotten');
  });

  it('ends with fleet, even when fleet is killed: what it was running is killed too', async () => {
    const pidFile = join(dir, 'orphan.pid');
    const module = new URL('../../src/base/subprocess.ts', import.meta.url).pathname;
    const support = new URL('../support/approved.ts', import.meta.url).pathname;
    // A fleet stand-in: 17 quick programs (the 17th through the spawner), then a long one through it; prints the
    // spawner's pid, then waits to be killed.
    const body = `import {spawnerState} from ${JSON.stringify(module)}
import {runCommand} from ${JSON.stringify(support)}
for (let i = 0; i < 17; i++) await runCommand('/bin/true', {timeoutMs: 10000})
void runCommand(process.execPath, {args: ['-e', ${JSON.stringify(parentOfGrandchild(pidFile))}], timeoutMs: 60000})
process.stdout.write(String(spawnerState().pid) + '\\n')
setInterval(() => {}, 1000)`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const grandchild = await grandchildPid(pidFile);
    await waitFor(() => out.includes('\n'));
    const spawnerPid = Number(out.trim());
    assert.ok(spawnerPid > 0 && isAlive(spawnerPid), `spawner pid ${out}`);
    assert.ok(isAlive(grandchild));
    child.kill('SIGKILL');
    assert.ok(await gone(spawnerPid), 'the spawner outlived fleet');
    assert.ok(await gone(grandchild), 'a program outlived fleet');
  });

  it("when fleet is done it waits for the spawner, which is gone when fleet exits (its CPU time is then fleet's children's)", async () => {
    const module = new URL('../../src/base/subprocess.ts', import.meta.url).pathname;
    const support = new URL('../support/approved.ts', import.meta.url).pathname;
    const body = `import {spawnerState} from ${JSON.stringify(module)}
import {runCommand} from ${JSON.stringify(support)}
for (let i = 0; i < 20; i++) await runCommand('/bin/true', {timeoutMs: 10000})
process.stdout.write(String(spawnerState().pid) + ' ' + spawnerState().runs + '\\n')`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0);
    const [pid, runs] = out.trim().split(' ').map(Number);
    assert.equal(runs, 4);
    assert.equal(isAlive(pid), false, 'the spawner is still running after fleet exited');
  });
});
