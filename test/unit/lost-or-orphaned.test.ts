// Issue 49, "lost or orphaned", without a cluster: what `kubeconfig export --out` and `creds generate --out` refuse to
// replace (a file with what fleet did not write, a file holding another credential) and what --force says; `creds list`
// with a directory as --kubeconfig (no hub guessed from it, or one line before anything is listed); and the interrupt
// handler taking a second signal a few milliseconds after the first as the same interrupt (GNU timeout signals fleet,
// then its process group), sent by another process to a real child.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Parser } from '@oclif/core';
import yaml from 'js-yaml';

import { BaseCommand, type BaseFlags } from '../../src/cli/base-command.js';
import KubeconfigExport, { exportOptions } from '../../src/commands/kubeconfig/export.js';
import { type GenerateFacts, type GenerateRequest, plan, validate } from '../../src/creds/generate.js';
import { buildKubeconfig } from '../../src/creds/kubeconfig-out.js';
import { listHubs } from '../../src/creds/list.js';
import { findPreset } from '../../src/creds/presets.js';
import { FLEET_EXPORT_EXTENSION } from '../../src/kubeconfig/export-marker.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeconfigDoc } from '../../src/kubeconfig/types.js';
import type { ClusterRef } from '../../src/providers/types.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-lost-'));
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

/** A kubeconfig as kubeadm writes an admin's: one context, cluster and user, the user with its client key. */
const ADMIN = yaml.dump({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'kubernetes', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': CA } }],
  users: [{ name: 'kubernetes-admin', user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ' } }],
  contexts: [{ name: 'kubernetes-admin@kubernetes', context: { cluster: 'kubernetes', user: 'kubernetes-admin' } }],
  'current-context': 'kubernetes-admin@kubernetes',
});

/** What `kubeconfig export --out` wrote: every entry marked. */
function exported(names: string[]): string {
  const marker = (name: string) => [{ name: FLEET_EXPORT_EXTENSION, extension: { cluster: name, provider: 'file' } }];
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: names.map((n) => ({ name: n, cluster: { server: 'https://10.0.0.2:6443', extensions: marker(n) } })),
    users: names.map((n) => ({ name: n, user: { exec: { command: 'fleet' }, extensions: marker(n) } })),
    contexts: names.map((n) => ({ name: n, context: { cluster: n, user: n, extensions: marker(n) } })),
  });
}

async function exportFlags(argv: string[]): Promise<BaseFlags<typeof KubeconfigExport>> {
  const out = await Parser.parse(argv, {
    flags: { ...BaseCommand.baseFlags, ...KubeconfigExport.flags } as never,
    strict: false,
  });
  return out.flags as BaseFlags<typeof KubeconfigExport>;
}
const options = async (argv: string[]) => exportOptions(await exportFlags(argv));

describe('kubeconfig export --out over a file fleet did not write', () => {
  it('an admin kubeconfig (its client key) is refused before any cluster is read: exit 2, one line naming what it holds and both ways on', async () => {
    const file = join(dir, 'admin.kubeconfig');
    writeFileSync(file, ADMIN);
    await assert.rejects(options(['--out', file]), (e: Error & { exitCode?: number }) => {
      assert.equal(e.exitCode, 2);
      assert.equal(
        e.message,
        `--out ${file}: the file holds 1 context (kubernetes-admin@kubernetes), 1 cluster (kubernetes), 1 user (kubernetes-admin: a client key) not exported by fleet; to add fleet's contexts to it use --merge-into ${file}; to replace it pass --force`,
      );
      return true;
    });
    // --dry-run writes nothing, and still says the write would be refused.
    await assert.rejects(options(['--out', file, '--dry-run']), { exitCode: 2 });
  });

  it("~/.kube/config with fleet's entries merged in and the user's own: only the user's are counted", async () => {
    const file = join(dir, 'config');
    const doc = yaml.load(exported(['fleet/a', 'fleet/b'])) as Record<string, unknown[]>;
    const own = yaml.load(ADMIN) as Record<string, unknown[]>;
    for (const k of ['clusters', 'users', 'contexts']) doc[k] = [...doc[k], ...own[k]];
    writeFileSync(file, yaml.dump(doc));
    await assert.rejects(
      options(['--out', file]),
      /the file holds 1 context \(kubernetes-admin@kubernetes\), 1 cluster \(kubernetes\), 1 user \(kubernetes-admin: a client key\) not exported by fleet/,
    );
  });

  it('a file that is no kubeconfig is refused too, with its size; an empty file or one only fleet wrote is replaced as before', async () => {
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'remember the milk\n');
    await assert.rejects(options(['--out', notes]), {
      message: `--out ${notes}: the file holds 18 bytes that are not a kubeconfig, which fleet did not write; to replace it pass --force`,
      exitCode: 2,
    });
    const empty = join(dir, 'empty.kubeconfig');
    writeFileSync(empty, '');
    assert.equal((await options(['--out', empty])).replaces, undefined);
    const ours = join(dir, 'fleet.kubeconfig');
    writeFileSync(ours, exported(['fleet/a', 'fleet/b']));
    assert.equal((await options(['--out', ours])).replaces, undefined);
    assert.equal((await options(['--out', join(dir, 'new.kubeconfig')])).replaces, undefined);
  });

  it('--force: the write goes ahead, carrying what it replaces for the command to say first', async () => {
    const file = join(dir, 'admin-force.kubeconfig');
    writeFileSync(file, ADMIN);
    const o = await options(['--out', file, '--force']);
    assert.deepEqual(o.replaces, {
      kubeconfig: true,
      bytes: Buffer.byteLength(ADMIN),
      contexts: ['kubernetes-admin@kubernetes'],
      clusters: ['kubernetes'],
      users: ['kubernetes-admin: a client key'],
    });
    await assert.rejects(options(['--force']), {
      message: '--force replaces an --out file; it needs --out FILE',
      exitCode: 2,
    });
  });

  it('--out with --merge-into is a usage error (both were written)', async () => {
    await assert.rejects(options(['--out', join(dir, 'a'), '--merge-into', join(dir, 'b')]), {
      message:
        "--out and --merge-into cannot be used together: --out FILE writes a kubeconfig of fleet's contexts only, --merge-into FILE adds them to a kubeconfig you keep; use one of them",
      exitCode: 2,
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------------

const ref = {
  name: 'member-1',
  server: 'https://127.0.0.1:6443',
  source: { kind: 'kubeconfig-file', context: 'member-1' },
} as unknown as ClusterRef;

/** A legacy token's claims as the API server writes them: they name its Secret. */
function legacyToken(ns: string, sa: string, secret: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part({
    iss: 'kubernetes/serviceaccount',
    sub: `system:serviceaccount:${ns}:${sa}`,
    'kubernetes.io/serviceaccount/namespace': ns,
    'kubernetes.io/serviceaccount/secret.name': secret,
    'kubernetes.io/serviceaccount/service-account.name': sa,
  })}.c2ln`;
}

/** A file as `creds generate --out` writes it, for a ServiceAccount's legacy token. */
function generatedFile(path: string, o: { sa: string; cluster?: string; secret: string; method?: string }): void {
  writeFileSync(
    path,
    buildKubeconfig({
      name: 'member-1',
      userName: `system-serviceaccount-team-a-${o.sa}`,
      cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': CA },
      user: { token: legacyToken('team-a', o.sa, o.secret) },
      facts: {
        method: o.method ?? 'legacy-token',
        identity: `system:serviceaccount:team-a:${o.sa}`,
        cluster: o.cluster ?? 'member-1',
        'cluster-server': 'https://127.0.0.1:6443',
      },
    }),
  );
}

function request(path: string, over: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    ref,
    identity: { kind: 'ServiceAccount', namespace: 'team-a', name: 'reader' },
    access: { preset: 'view' },
    namespaces: ['team-a'],
    method: 'legacy-token',
    durationSeconds: 3600,
    destination: { kind: 'file', path },
    ...over,
  };
}

const untouchable = new Proxy(
  {},
  { get: (_, p) => (p === 'then' ? undefined : assert.fail(`plan used the client (${String(p)})`)) },
) as KubeClient;

function facts(): GenerateFacts {
  const view = findPreset('view');
  return {
    target: untouchable,
    access: { kind: 'preset', name: view.name, rules: view.rules },
    missingNamespaces: [],
    serviceAccountExists: true,
    clusterFacts: { server: 'https://127.0.0.1:6443' },
    cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': CA },
  };
}

describe('creds generate --out over a file fleet wrote for another credential', () => {
  it('another identity: refused offline (exit 2), naming the identity, the cluster, its Secret and the revoke command', async () => {
    const file = join(dir, 'ci.kubeconfig');
    generatedFile(file, { sa: 'deployer', secret: 'deployer-fleet-token-0badcafe' });
    await assert.rejects(
      validate(request(file, { ref: { ...ref, resolve: () => assert.fail('resolved') } as unknown as ClusterRef })),
      (e: Error & { exitCode?: number }) => {
        assert.equal(e.exitCode, 2);
        assert.equal(
          e.message,
          `--out ${file}: the file holds the legacy token of system:serviceaccount:team-a:deployer on cluster member-1 (token Secret team-a/deployer-fleet-token-0badcafe); replacing it would leave that credential valid and no longer revocable with creds revoke --file: revoke it first (fleet creds revoke --file ${file}), or pass --force to replace it`,
        );
        return true;
      },
    );
  });

  it('another cluster or another method of the same identity is another credential too; the same one is replaced as before', async () => {
    const file = join(dir, 'reader.kubeconfig');
    // The Secret generate itself names for the reader's legacy token in this file (revoke derives the same).
    const same = plan(await validate(request(file)), facts()).credentialObject!.metadata.name;
    generatedFile(file, { sa: 'reader', secret: same });
    assert.equal((await validate(request(file))).replaces, undefined, 'the same credential again');
    // Recorded as member-2 with member-1's server: the same cluster under another name, not refused.
    generatedFile(file, { sa: 'reader', secret: same, cluster: 'member-2' });
    assert.equal((await validate(request(file))).replaces, undefined);
    await assert.rejects(
      validate(request(file, { ref: { ...ref, name: 'member-3', server: 'https://127.0.0.3:6443' } })),
      /the file holds the legacy token of system:serviceaccount:team-a:reader on cluster member-2 /,
    );
    generatedFile(file, { sa: 'reader', secret: same });
    await assert.rejects(
      validate(request(file, { method: 'token' })),
      new RegExp(
        `the file holds the legacy token of system:serviceaccount:team-a:reader on cluster member-1 \\(token Secret team-a/${same}\\)`,
      ),
    );
  });

  it('--force: replaced, with a warning that says what stays valid and the command that revokes it', async () => {
    const file = join(dir, 'forced.kubeconfig');
    generatedFile(file, { sa: 'deployer', secret: 'deployer-fleet-token-0badcafe' });
    const v = await validate(request(file, { force: true }));
    const p = plan(v, facts());
    assert.deepEqual(
      p.result.warnings.filter((w) => w.startsWith('--out')),
      [
        `--out ${file} held the legacy token of system:serviceaccount:team-a:deployer on cluster member-1 (token Secret team-a/deployer-fleet-token-0badcafe), replaced (--force): it stays valid (a legacy token never expires) until its Secret is deleted; fleet creds revoke --file can no longer find it: to revoke it, on cluster member-1: kubectl -n team-a delete secret deployer-fleet-token-0badcafe`,
      ],
    );
    const dry = plan(await validate(request(file, { force: true, dryRun: true })), facts());
    assert.match(dry.result.warnings.join('\n'), /, which would be replaced \(--force\): it stays valid/);
  });

  it("an adopted file's other contexts are the user's: refused without --force, named", async () => {
    const file = join(dir, 'adopted.kubeconfig');
    generatedFile(file, { sa: 'reader', secret: 'x' });
    const doc = yaml.load(readFileSync(file, 'utf8')) as KubeconfigDoc;
    doc.contexts!.push({ name: 'prod', context: { cluster: 'member-1', user: 'someone' } });
    writeFileSync(file, yaml.dump(doc));
    await assert.rejects(validate(request(file)), /1 other context \(prod\) fleet did not write/);
  });
});

// ---------------------------------------------------------------------------------------------------------------------

describe('creds list: a directory as --kubeconfig', () => {
  it('no hub is guessed from a directory (a warning, nothing refused); the files of a list still give one', async () => {
    const files = join(dir, 'fleet-dir');
    mkdirSync(files, { recursive: true });
    const hubFile = join(dir, 'hub.kubeconfig');
    writeFileSync(hubFile, ADMIN);
    assert.deepEqual(await listHubs([{ spec: { kubeconfig: [files] }, origin: 'loading-rules' }]), {
      hubs: [],
      warnings: [
        `no hub read: ${files} is a directory of kubeconfig files, with no current context to take a hub from; pass --hub-kubeconfig FILE to list a hub's Secrets too`,
      ],
    });
    assert.deepEqual(await listHubs([{ spec: { kubeconfig: [files, hubFile] }, origin: 'loading-rules' }]), {
      hubs: [{ kubeconfig: [hubFile], guessed: true }],
      warnings: [],
    });
  });

  it('a hub the user named in a directory is one line, before anything is listed', async () => {
    const files = join(dir, 'fleet-dir');
    mkdirSync(files, { recursive: true });
    await assert.rejects(listHubs([{ spec: { kubeconfig: [files], context: 'hub' }, origin: 'flags' }]), {
      message: `--hub-context hub: ${files} is a directory, not a kubeconfig file to find the hub in; name the hub's kubeconfig with --hub-kubeconfig FILE`,
      exitCode: 2,
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------------

describe('interrupts: a second signal within a few milliseconds is the same interrupt (real signals)', () => {
  const handler = new URL('../../src/cli/interrupt.ts', import.meta.url).pathname;
  /**
   * A child that makes things as creds generate does: the first signal cancels it, its undo takes 300 ms and ends the
   * process with 130 saying so. The test sends the signals from outside, as GNU timeout and a terminal do.
   */
  const CHILD = `import {watchInterrupts, cancellation} from ${JSON.stringify(handler)}
    watchInterrupts(); const c = cancellation(); setInterval(() => {}, 1000)
    c.making(() => ['ServiceAccount a/sa on member-1', 'Role a/r on member-1'])
    c.signal.addEventListener('abort', () => {
      c.undoing(() => ['ServiceAccount a/sa on member-1'])
      setTimeout(() => { process.stderr.write('rolled back: ' + c.interrupted.signalName + '\\n'); process.exit(c.interrupted.exitCode) }, 300)
    })
    process.stdout.write('ready\\n')`;

  async function signalled(signals: Array<{ signal: NodeJS.Signals; afterMs: number }>) {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // A child that never ends (a signal lost) fails the test instead of hanging the run.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const closed = new Promise<number | null>((resolve) =>
      child.on('close', (code) => (clearTimeout(timer), resolve(code))),
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    for (const { signal, afterMs } of signals) {
      if (afterMs > 0) await new Promise((r) => setTimeout(r, afterMs));
      child.kill(signal);
    }
    return { code: await closed, stderr };
  }

  for (const gap of [0, 1, 3, 10]) {
    it(`two SIGINTs ${gap} ms apart: one interrupt, the undo runs to its end, exit 130`, async () => {
      const r = await signalled([
        { signal: 'SIGINT', afterMs: 0 },
        { signal: 'SIGINT', afterMs: gap },
      ]);
      assert.deepEqual(r, { code: 130, stderr: 'rolled back: SIGINT\n' });
    });
  }

  it('SIGTERM twice 2 ms apart (timeout without -s): one interrupt, exit 143', async () => {
    const r = await signalled([
      { signal: 'SIGTERM', afterMs: 0 },
      { signal: 'SIGTERM', afterMs: 2 },
    ]);
    assert.deepEqual(r, { code: 143, stderr: 'rolled back: SIGTERM\n' });
  });

  it('a second Ctrl-C as a person presses it (200 ms later) still ends the run at once, naming what is left', async () => {
    const r = await signalled([
      { signal: 'SIGINT', afterMs: 0 },
      { signal: 'SIGINT', afterMs: 200 },
    ]);
    assert.deepEqual(r, {
      code: 130,
      stderr:
        'error: interrupted again (SIGINT) while undoing what this run made; left behind: ServiceAccount a/sa on member-1\n',
    });
  });

  it('a command that only reads: two SIGINTs 1 ms apart are one line and exit 130', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import {watchInterrupts} from ${JSON.stringify(handler)}\nwatchInterrupts(); setInterval(() => {}, 1000); process.stdout.write('ready\\n')`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, signal) => resolve([code, signal])),
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGINT');
    assert.deepEqual(await closed, [130, null]);
    assert.equal(stderr, 'error: interrupted (SIGINT)\n');
  });
});
