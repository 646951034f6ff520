// A program fleet runs (an exec credential plugin) that writes without end is killed once it passes its output limit,
// and the run fails with one line; fleet's memory stays small. Direct starts here (this file runs in a process of its
// own, so the spawner has not taken over); the spawner's path is in spawner.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ProcessOutputTooLarge, spawnerState } from '../../src/base/subprocess.js';
import { runCommand } from '../support/approved.js';
import { FleetError } from '../../src/base/errors.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { approvedExec } from '../support/approved.js';

describe('a program that writes without end', () => {
  for (const stream of ['stdout', 'stderr'] as const) {
    it(`is killed once it passes the limit on ${stream}`, async () => {
      const started = performance.now();
      const script = stream === 'stdout' ? 'yes fleet' : 'yes fleet >&2';
      await assert.rejects(
        runCommand('/bin/sh', { args: ['-c', script], timeoutMs: 30_000, maxOutputBytes: 256 * 1024 }),
        (e: ProcessOutputTooLarge) =>
          e instanceof ProcessOutputTooLarge && e.stream === stream && e.limit === 256 * 1024,
      );
      assert.ok(performance.now() - started < 10_000, 'ended long before its time limit');
      assert.equal(spawnerState().runs, 0, 'started directly');
    });
  }

  it('an exec plugin streaming its answer: one line naming the plugin and the limit (4 MiB by default), fleet stays small', async () => {
    const before = process.memoryUsage().rss;
    const runner = new ExecCredentialRunner({ timeoutMs: 60_000 });
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never' as const,
      command: '/bin/sh',
      args: ['-c', 'yes "{\\"kind\\": \\"ExecCredential\\"}"'],
    };
    await assert.rejects(runner.get(await approvedExec(exec), { server: 'https://127.0.0.1:1' }), (e: FleetError) => {
      assert.equal(e.kind, 'plugin');
      assert.equal(e.message, 'exec plugin /bin/sh: wrote more than 4 MiB on stdout; it was killed');
      return true;
    });
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024);
  });
});
