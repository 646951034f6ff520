// Issue 41's papercuts of the first minute that need a cluster, against the real control plane: each as a newcomer met it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';

import { FLEET_BIN, inTerminal, runFleet } from '../support/cli.js';
import { startCountingProxy } from '../support/counting-proxy.js';
import {
  createServiceAccountToken,
  kubectl,
  kubectlResult,
  loadControlPlane,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];

describe('creds rotate of a Secret that does not exist says so, and promises no next run', () => {
  it('a missing Secret in an existing namespace, and one in a namespace that does not exist: exit 1, "nothing to rotate"', async () => {
    const ns = uniqueName('nosuch');
    await kubectl(hub, ['create', 'namespace', ns]);
    const missingNs = uniqueName('gone');
    const args = ['creds', 'rotate', `${ns}/nosuch`, `${missingNs}/nosuch`, ...HUB];
    const res = await runFleet(args, { timeoutMs: 60_000 });
    assert.equal(res.code, 1, res.stderr);
    const lines = res.stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, 1), ['2 rotations failed: they do not exist']);
    assert.equal(lines.length, 3, res.stderr);
    assert.match(lines[1], new RegExp(`^error: hub ${hub.context}: Secret ${ns}/nosuch not found: nothing to rotate$`));
    // A namespace that does not exist is the Secret not found, not the Lease beside it that could not be made.
    assert.match(
      lines[2],
      new RegExp(`^error: hub ${hub.context}: Secret ${missingNs}/nosuch not found: nothing to rotate$`),
    );
    for (const line of lines) assert.doesNotMatch(line, /old credential|next run/, line);
    const json = await runFleet([...args, '-o', 'json'], { timeoutMs: 60_000 });
    assert.equal(json.code, 1, json.stderr);
    assert.deepEqual(json.stderr.trim().split('\n'), lines.slice(1), 'the same error lines in JSON mode');
    const doc = JSON.parse(json.stdout);
    for (const item of doc.items) {
      assert.equal(item.status, 'failed');
      assert.equal(item.error.kind, 'not-found');
      assert.equal(item.unfinished, undefined, 'nothing is left for a next run');
    }
  });
});

describe('creds adopt of a Secret in a namespace that does not exist names the Secret, not a Lease', () => {
  it('exit 1, "Secret NS/NAME not found" in the table and on stderr, no word of a Lease', async () => {
    const missingNs = uniqueName('gone');
    const res = await runFleet(['creds', 'adopt', `${missingNs}/nosuch`, '--cluster', 'member-1', '--yes', ...HUB], {
      timeoutMs: 60_000,
    });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, new RegExp(`^error: hub ${hub.context}: Secret ${missingNs}/nosuch not found$`, 'm'));
    assert.doesNotMatch(res.stdout + res.stderr, /Lease/);
  });
});

describe('creds revoke says what it waits for while the old token is still accepted', () => {
  it('at a terminal: one line naming the credential and the wait, drawn in place and erased before the table; never when piped', async () => {
    const m1 = cp.members[0];
    const ns = uniqueName('revwait');
    const dir = mkdtempSync(join(tmpdir(), 'fleet-revoke-wait-'));
    const out = (n: number) => join(dir, `c${n}.kubeconfig`);
    const generate = (n: number) =>
      runFleet(
        [
          'creds',
          'generate',
          '--kubeconfig',
          m1.kubeconfig,
          '--cluster',
          m1.context,
          '--service-account',
          `${ns}/ci-${n}`,
          '--role',
          'view',
          '-n',
          ns,
          '--create-namespace',
          '--duration',
          '1h',
          '--out',
          out(n),
        ],
        { timeoutMs: 120_000 },
      );
    for (const n of [1, 2]) {
      const gen = await generate(n);
      assert.equal(gen.code, 0, gen.stderr);
    }
    const tokens = [1, 2].map((n) => (yaml.load(readFileSync(out(n), 'utf8')) as any).users[0].user.token as string);
    const tty = await inTerminal(
      ['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', out(1)],
      { TERM: 'xterm', HOME: dir },
      { cwd: dir },
    );
    const ESC = '\u001B';
    const drawn = tty.indexOf(
      `\r${ESC}[2K${out(1)}: waiting for the API server to refuse the old credential (up to 30s)...`,
    );
    assert.ok(drawn >= 0, JSON.stringify(tty));
    const erased = tty.indexOf(`\r${ESC}[2K`, drawn + 1);
    assert.ok(erased > drawn && erased < tty.indexOf('CREDENTIAL'), JSON.stringify(tty));
    assert.match(tty, /revoked/);
    const piped = await runFleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', out(2)], {
      timeoutMs: 120_000,
    });
    assert.equal(piped.code, 0, piped.stderr);
    assert.doesNotMatch(piped.stderr + piped.stdout, /waiting for|\u001B/);
    for (const token of tokens)
      assert.ok(!tty.includes(token) && !piped.stdout.includes(token) && !piped.stderr.includes(token));
  });
});

describe('creds generate: a second Ctrl-C before the undo has begun names what is on the cluster', () => {
  it('two quick SIGINTs while an apply is in flight: exit 130, one line naming every object made so far and the one whose apply was sent, each of which kubectl finds', async () => {
    const m1 = cp.members[0];
    const ns = uniqueName('twice');
    // An identity that may make ServiceAccounts and RBAC, authenticating with a bearer token (the proxy ends TLS).
    const admin = uniqueName('gen-admin');
    const token = await createServiceAccountToken(m1, ns, admin);
    await kubectl(m1, [
      'create',
      'clusterrolebinding',
      admin,
      '--clusterrole',
      'cluster-admin',
      `--serviceaccount=${ns}:${admin}`,
    ]);
    // The RoleBinding's apply is held at the proxy: the first signal waits for it (signals are honoured between steps).
    const proxy = await startCountingProxy(
      { url: m1.url, caFile: m1.caFile },
      { hold: (r) => r.startsWith('PATCH ') && r.includes('/rolebindings/') },
    );
    try {
      const kubeconfig = writeKubeconfig({
        path: join(mkdtempSync(join(tmpdir(), 'fleet-twice-')), 'config'),
        server: proxy.url,
        caFile: proxy.caFile,
        user: { token },
        context: 'm1',
      });
      const child = spawn(
        process.execPath,
        [
          FLEET_BIN,
          'creds',
          'generate',
          '--kubeconfig',
          kubeconfig,
          '--cluster',
          'm1',
          '--service-account',
          `${ns}/ci`,
          '--role',
          'view',
          '-n',
          ns,
          '--out',
          join(kubeconfig, '..', 'ci.kubeconfig'),
        ],
        {
          env: { ...process.env, KUBECONFIG: '', HOME: join(kubeconfig, '..') },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      await proxy.held;
      child.kill('SIGINT');
      // A person's second Ctrl-C: later than SAME_INTERRUPT_MS (50 ms), within which a second signal is the same
      // interrupt (GNU timeout signals fleet, then its process group).
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGINT');
      assert.equal(await closed, 130, stderr);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      const [, left] =
        /^error: interrupted again \(SIGINT\) before the undo of what this run made had begun; left behind: (.*)$/.exec(
          lines[0],
        ) ?? [];
      assert.ok(left, lines[0]);
      const named = left.split('; ');
      const rbac = `fleet-creds-${ns}-ci`;
      assert.deepEqual(
        named,
        [
          `RoleBinding ${ns}/${rbac} on m1 (its apply had been sent: it may exist)`,
          `Role ${ns}/${rbac} on m1`,
          `ServiceAccount ${ns}/ci on m1`,
        ],
        lines[0],
      );
      // What it names as made is there; the held apply never reached the server, and it said "may".
      assert.equal((await kubectlResult(m1, ['get', 'serviceaccount', '-n', ns, 'ci'])).code, 0);
      assert.equal((await kubectlResult(m1, ['get', 'role', '-n', ns, rbac])).code, 0);
      assert.notEqual((await kubectlResult(m1, ['get', 'rolebinding', '-n', ns, rbac])).code, 0);
      assert.ok(!stderr.includes(token));
    } finally {
      await proxy.close();
    }
  });
});

describe('after creds revoke, an exported context says so, once, and clusters list shows it not ready', () => {
  it('kubectl through the context: one fleet line naming the revoked file and what to do; the same kubectl asking twice gets it once; READY False with the reason', async () => {
    const { execFile } = await import('node:child_process');
    const { dirname } = await import('node:path');
    const m1 = cp.members[0];
    const ns = uniqueName('revexp');
    const dir = mkdtempSync(join(tmpdir(), 'fleet-revoked-export-'));
    const cred = join(dir, 'agent.kubeconfig');
    const merged = join(dir, 'config');
    // bin/run.js is #!/usr/bin/env node: this Node first on PATH for kubectl's child too.
    const env = {
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: dir,
      XDG_CACHE_HOME: join(dir, 'cache'),
    };
    const gen = await runFleet(
      [
        'creds',
        'generate',
        '--kubeconfig',
        m1.kubeconfig,
        '--cluster',
        m1.context,
        '--service-account',
        `${ns}/agent`,
        '--role',
        'view',
        '-n',
        ns,
        '--create-namespace',
        '--duration',
        '1h',
        '--out',
        cred,
      ],
      { env, timeoutMs: 120_000 },
    );
    assert.equal(gen.code, 0, gen.stderr);
    const token = (yaml.load(readFileSync(cred, 'utf8')) as any).users[0].user.token as string;
    const exp = await runFleet(
      [
        'kubeconfig',
        'export',
        '--all',
        '--kubeconfig',
        cred,
        '--merge-into',
        merged,
        '--command',
        FLEET_BIN,
        '--credential-reader',
        'none',
      ],
      { env },
    );
    assert.equal(exp.code, 0, exp.stderr);
    const kube = (args: string[]) =>
      new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          cp.binaries.kubectl,
          ['--kubeconfig', merged, ...args],
          { env: { ...process.env, ...env, KUBECONFIG: '' } },
          (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
        );
      });
    const before = await kube(['auth', 'whoami']);
    assert.equal(before.code, 0, before.stderr);
    const listed = async () =>
      (await runFleet(['clusters', 'list', '--kubeconfig', merged, '-o', 'json'], { env })).json().items[0] as {
        ready: boolean;
        reason?: string;
      };
    assert.equal((await listed()).ready, true);

    const revoked = await runFleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', cred], {
      env,
      timeoutMs: 120_000,
    });
    assert.equal(revoked.code, 0, revoked.stderr);
    const said = `its kubeconfig file ${cred} no longer exists (revoked by fleet creds revoke, or removed); fleet kubeconfig prune removes this context, fleet kubeconfig export makes it again`;
    // The cached token is refused (401), client-go runs the plugin again, and fleet finds the file gone.
    for (const attempt of [1, 2]) {
      const after = await kube(['auth', 'whoami']);
      assert.notEqual(after.code, 0);
      const fleetLines = after.stderr
        .split('\n')
        .filter((l) => l.startsWith('error: ') && !l.startsWith('error: You must'));
      assert.deepEqual(fleetLines, [`error: ${cred}+${m1.context}: ${said}`], `attempt ${attempt}: ${after.stderr}`);
      assert.doesNotMatch(after.stderr, /no such kubeconfig file/);
    }
    // One parent process (kubectl 1.32 runs the plugin for discovery and again for the request): the line once.
    const user = (yaml.load(readFileSync(merged, 'utf8')) as any).users[0].user;
    const c = (yaml.load(readFileSync(merged, 'utf8')) as any).clusters[0].cluster;
    const info = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: c.server, 'certificate-authority-data': c['certificate-authority-data'] } },
    });
    const q = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
    const once = [user.exec.command, ...user.exec.args].map(q).join(' ');
    const twice = await new Promise<{ stderr: string; stdout: string }>((resolve) => {
      execFile(
        'sh',
        ['-c', `${once}; echo "first $?"; ${once}; echo "second $?"`],
        { env: { ...process.env, ...env, KUBECONFIG: '', KUBERNETES_EXEC_INFO: info } },
        (_e, stdout, stderr) => resolve({ stdout, stderr }),
      );
    });
    assert.equal(twice.stdout, 'first 1\nsecond 1\n');
    assert.equal(twice.stderr, `error: ${cred}+${m1.context}: ${said}\n`);

    const item = await listed();
    assert.deepEqual([item.ready, item.reason], [false, `exported by fleet: ${said}`]);
    for (const text of [before.stderr, twice.stderr, JSON.stringify(item)]) assert.ok(!text.includes(token));
  });
});
