// Without a cluster: generate's offline checks (validate) and its pure plan, the Cancellation a command hands to a
// service, ApplyLog's account of what is not undone yet, and killChildren ending a plugin's whole process group.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { Cancellation } from '../../src/base/cancel.js';
import { Interrupted } from '../../src/base/errors.js';
import { ProcessStartError, killChildren } from '../../src/base/subprocess.js';
import { runCommand } from '../support/approved.js';
import { type GenerateFacts, type GenerateRequest, plan, validate } from '../../src/creds/generate.js';
import { findPreset } from '../../src/creds/presets.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { ClusterRef } from '../../src/providers/types.js';
import { gone, grandchildPid, isAlive, parentOfGrandchild } from '../support/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-intr-'));
const ref = { name: 'member-1', source: { kind: 'kubeconfig', context: 'member-1' } } as unknown as ClusterRef;

function request(over: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    ref,
    identity: { kind: 'ServiceAccount', namespace: 'team-a', name: 'reader' },
    access: { preset: 'view' },
    namespaces: ['team-a'],
    method: 'token',
    durationSeconds: 3600,
    destination: { kind: 'file', path: join(dir, 'reader.kubeconfig') },
    ...over,
  };
}

/** A client that fails the test if anything is asked of it: plan() must make no request. */
const untouchable = (name: string) =>
  new Proxy(
    {},
    {
      get: (_, p) =>
        p === 'context'
          ? { contextName: name }
          : p === 'then'
            ? undefined
            : assert.fail(`plan used ${name}.${String(p)}`),
    },
  ) as KubeClient;

function facts(over: Partial<GenerateFacts> = {}): GenerateFacts {
  const view = findPreset('view');
  return {
    target: untouchable('member-1'),
    access: { kind: 'preset', name: view.name, rules: view.rules },
    missingNamespaces: ['team-a'],
    serviceAccountExists: false,
    clusterFacts: { server: 'https://127.0.0.1:6443', context: 'member-1' },
    cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': 'Q0E=' },
    ...over,
  };
}

describe('generate: validate (offline)', () => {
  it('--out in a missing directory, under a file, or a foreign file: exit 2 naming it, nothing contacted', async () => {
    await assert.rejects(
      validate(request({ destination: { kind: 'file', path: '/missing-dir/x.kubeconfig' } })),
      (e: any) =>
        e.exitCode === 2 && e.message === '--out /missing-dir/x.kubeconfig: directory /missing-dir does not exist',
    );
    const file = join(dir, 'plain');
    writeFileSync(file, 'x');
    await assert.rejects(
      validate(request({ destination: { kind: 'file', path: join(file, 'x') } })),
      new RegExp(`^ConfigError: --out ${file}/x: ${file} is not a directory$`),
    );
    await assert.rejects(
      validate(request({ destination: { kind: 'file', path: file } })),
      /the file exists and was not written by fleet; pass --force/,
    );
    // The ref is never resolved by validate: a ref whose resolve() throws is not reached.
    await validate(request({ ref: { ...ref, resolve: () => assert.fail('resolved') } as unknown as ClusterRef }));
  });

  it('--allow-risky lets a risky rules file through the offline check too (the cluster check already honoured it)', async () => {
    const star = join(dir, 'star.yaml');
    writeFileSync(star, '- apiGroups: ["*"]\n  resources: ["*"]\n  verbs: ["*"]\n');
    await assert.rejects(validate(request({ access: { rulesFile: star } })), /risk rule "cluster-admin"/);
    await validate(request({ access: { rulesFile: star }, allowRisky: true }));
  });
});

describe('generate: plan (pure)', () => {
  it('the objects in order, the destination, and for --dry-run exactly that plan; no request made', async () => {
    const v = await validate(request());
    const p = plan(v, facts());
    assert.deepEqual(
      p.objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
      [
        'Namespace /team-a',
        'ServiceAccount team-a/reader',
        'Role team-a/fleet-creds-team-a-reader',
        'RoleBinding team-a/fleet-creds-team-a-reader',
        `Secret team-a/${p.credentialObject!.metadata.name}`,
      ],
    );
    assert.equal(p.result.plan, undefined);
    assert.deepEqual(p.result.destination, { kind: 'file', path: join(dir, 'reader.kubeconfig') });
    // The same input gives the same plan.
    assert.deepEqual(plan(v, facts()), p);
    const dry = plan(
      await validate(request({ dryRun: true })),
      facts({ missingNamespaces: [], serviceAccountExists: true }),
    );
    assert.deepEqual(dry.result.plan, dry.objects);
    assert.deepEqual(
      dry.objects.map((o) => o.kind),
      ['Role', 'RoleBinding', 'Secret'],
    );
    assert.equal(dry.result.anchor?.name, dry.credentialObject!.metadata.name);
  });

  it('a hub Secret destination: the preview without data is the last object of the dry-run plan', async () => {
    const v = await validate(
      request({
        dryRun: true,
        destination: { kind: 'secret', namespace: 'fleet', name: 'm1', format: 'multicluster-runtime' },
      }),
    );
    const p = plan(v, facts({ hub: untouchable('hub') }));
    const last = p.result.plan!.at(-1)!;
    assert.equal(last.kind, 'Secret');
    assert.equal(last.metadata.namespace, 'fleet');
    assert.match(JSON.stringify(last.data), /made when run without --dry-run/);
    assert.deepEqual(p.result.destination, {
      kind: 'secret',
      hub: 'hub',
      namespace: 'fleet',
      name: 'm1',
      format: 'multicluster-runtime',
    });
  });
});

describe('Cancellation', () => {
  it('checks pass until cancelled; then they throw Interrupted (130 for SIGINT, 143 for SIGTERM), once', () => {
    const c = new Cancellation();
    c.check();
    assert.equal(c.leftBehind(), undefined);
    c.cancel('SIGTERM');
    c.cancel('SIGINT');
    assert.throws(
      () => c.check(),
      (e: any) => e instanceof Interrupted && e.exitCode === 143 && e.kind === 'interrupted',
    );
    assert.equal(c.error('after step "x": rolled back').message, 'interrupted (SIGTERM) after step "x": rolled back');
    const i = new Cancellation();
    i.cancel('SIGINT');
    assert.equal(i.interrupted?.exitCode, 130);
    i.undoing(() => ['Secret a/b on m1']);
    assert.deepEqual(i.leftBehind(), ['Secret a/b on m1']);
  });
});

describe('killChildren', () => {
  it('kills every running child with its process group (a plugin and the child it started)', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const running = runCommand(process.execPath, { args: ['-e', parentOfGrandchild(pidFile)], timeoutMs: 60_000 });
    const grandchild = await grandchildPid(pidFile);
    assert.ok(isAlive(grandchild));
    assert.equal(killChildren(), 1);
    const result = await running;
    assert.equal(result.signal, 'SIGKILL');
    assert.ok(await gone(grandchild), 'the grandchild survived');
    assert.equal(killChildren(), 0, 'a finished child is forgotten');
    await assert.rejects(runCommand('/nonexistent-program', { timeoutMs: 1000 }), ProcessStartError);
    assert.equal(killChildren(), 0, 'a child that never started is forgotten');
  });
});

describe('cli interrupt handler (real signals, in a process of its own)', () => {
  const handler = new URL('../../src/cli/interrupt.ts', import.meta.url).pathname;
  // A second interrupt comes later than SAME_INTERRUPT_MS after the first (one within it is the same interrupt:
  // test/unit/lost-or-orphaned.test.ts), as a person's second Ctrl-C does.
  const SECOND = 150;
  const run = (body: string) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `import {watchInterrupts, cancellation} from ${JSON.stringify(handler)}\nconst SECOND = ${SECOND}\n${body}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });

  it('a command that does not unwind itself ends at once: one line, 130', async () => {
    const r = await run(`watchInterrupts(); setInterval(() => {}, 1000); process.kill(process.pid, 'SIGINT')`);
    assert.deepEqual(r, { code: 130, stderr: 'error: interrupted (SIGINT)\n' });
  });

  it('a cancellable command: the first signal cancels, the second during the undo ends it naming what is left (143 for SIGTERM)', async () => {
    const r = await run(`watchInterrupts(); const c = cancellation(); setInterval(() => {}, 1000)
      c.signal.addEventListener('abort', () => { c.undoing(() => ['Secret a/anchor on member-1', 'Role a/r on member-1']); setTimeout(() => process.kill(process.pid, 'SIGTERM'), SECOND) })
      process.kill(process.pid, 'SIGTERM')`);
    assert.deepEqual(r, {
      code: 143,
      stderr:
        'error: interrupted again (SIGTERM) while undoing what this run made; left behind: Secret a/anchor on member-1; Role a/r on member-1\n',
    });
  });

  it('two quick signals before the undo has begun (a request in flight): the second names what the run has made so far (issue 41)', async () => {
    // The service registered what it made as it went (making), and the first signal is still waiting for a request: the
    // undo has not begun when the second arrives. It used to say "it had not started undoing" and name nothing.
    const r = await run(`watchInterrupts(); const c = cancellation(); setInterval(() => {}, 1000)
      c.making(() => ['RoleBinding a/rb on member-1 (its apply had been sent: it may exist)', 'ServiceAccount a/sa on member-1'])
      process.kill(process.pid, 'SIGINT'); setTimeout(() => process.kill(process.pid, 'SIGINT'), SECOND)`);
    assert.deepEqual(r, {
      code: 130,
      stderr:
        'error: interrupted again (SIGINT) before the undo of what this run made had begun; left behind: RoleBinding a/rb on member-1 (its apply had been sent: it may exist); ServiceAccount a/sa on member-1\n',
    });
  });

  it('two quick signals after the credential was delivered: the second says it is kept, and where (issue 41)', async () => {
    const r = await run(`watchInterrupts(); const c = cancellation(); setInterval(() => {}, 1000)
      c.making(() => ['Secret a/anchor on member-1']); c.delivered('/tmp/ci.kubeconfig')
      process.kill(process.pid, 'SIGINT'); setTimeout(() => process.kill(process.pid, 'SIGINT'), SECOND)`);
    assert.deepEqual(r, {
      code: 130,
      stderr: 'error: interrupted again (SIGINT) after the credential was delivered: it is kept (/tmp/ci.kubeconfig)\n',
    });
  });

  it('a service that registered nothing (rotate before its undo): the second signal does not claim more than it knows', async () => {
    const r = await run(`watchInterrupts(); const c = cancellation(); setInterval(() => {}, 1000)
      process.kill(process.pid, 'SIGINT'); setTimeout(() => process.kill(process.pid, 'SIGINT'), SECOND)`);
    assert.deepEqual(r, {
      code: 130,
      stderr: 'error: interrupted again (SIGINT) before this run had begun undoing what it made\n',
    });
  });
});
