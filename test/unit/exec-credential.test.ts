import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

import { FleetError } from '../../src/base/errors.js';
import { ExecCredentialRunner, parseExecOutput } from '../../src/kube/exec-credential.js';
import { registerSecret, scrub } from '../../src/kubeconfig/redact.js';
import type { ClusterEntry, ExecConfig } from '../../src/kubeconfig/types.js';
import { approvedExec } from '../support/approved.js';

const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));
const V1 = 'client.authentication.k8s.io/v1';
const CLUSTER: ClusterEntry = { server: 'https://127.0.0.1:6443', 'tls-server-name': 'api.example' };

let dir: string;
let n = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-exec-test-'));
});

/** A fresh count file and an exec config that runs the test plugin with it. */
function plugin(
  args: string[] = [],
  extra: Partial<ExecConfig> = {},
): { exec: ExecConfig; count: string; runs(): number } {
  const count = join(dir, `count-${++n}`);
  return {
    exec: {
      apiVersion: V1,
      command: process.execPath,
      args: [PLUGIN, '--count', count, ...args],
      interactiveMode: 'Never',
      ...extra,
    },
    count,
    runs: () => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

class Sink extends Writable {
  text = '';
  _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

const runner = (o: ConstructorParameters<typeof ExecCredentialRunner>[0] = {}) =>
  new ExecCredentialRunner({ stderr: new Sink(), ...o });

async function rejectsWith(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<FleetError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof FleetError, `not a FleetError: ${String(error)}`);
    assert.equal(error.kind, kind);
    assert.match(error.message, pattern);
    return error;
  }
  assert.fail('expected a rejection');
}

describe('exec credential runner', () => {
  it('runs the plugin once for many concurrent callers and hands all of them the same token', async () => {
    const p = plugin(['--tokens', 'tok-concurrent-aaaaaaaa', '--sleep', '200']);
    const r = runner();
    const creds = await Promise.all(Array.from({ length: 12 }, async () => r.get(await approvedExec(p.exec), CLUSTER)));
    assert.equal(p.runs(), 1);
    assert.equal(r.runs, 1);
    assert.deepEqual(new Set(creds.map((c) => c.token)), new Set(['tok-concurrent-aaaaaaaa']));
  });

  it('shares one credential between equal exec configs written with keys in another order', async () => {
    const p = plugin(['--tokens', 'tok-order-aaaaaaaaa']);
    const r = runner();
    const reordered: ExecConfig = {
      interactiveMode: 'Never',
      args: p.exec.args,
      command: p.exec.command,
      apiVersion: V1,
    };
    await r.get(await approvedExec(p.exec), CLUSTER);
    await r.get(await approvedExec(reordered), { 'tls-server-name': 'api.example', server: 'https://127.0.0.1:6443' });
    assert.equal(p.runs(), 1);
  });

  it('runs separately for another cluster', async () => {
    const p = plugin();
    const r = runner();
    await Promise.all([
      r.get(await approvedExec(p.exec), CLUSTER),
      r.get(await approvedExec(p.exec), { ...CLUSTER, server: 'https://127.0.0.2:6443' }),
    ]);
    assert.equal(p.runs(), 2);
  });

  it('keeps a credential until shortly before expirationTimestamp, then runs again', async () => {
    const fresh = plugin(['--expires-in', '3600']);
    const r = runner();
    await r.get(await approvedExec(fresh.exec), CLUSTER);
    await r.get(await approvedExec(fresh.exec), CLUSTER);
    assert.equal(fresh.runs(), 1);
    // Expires within the refresh margin: every use needs a new one.
    const expiring = plugin(['--expires-in', '5']);
    await r.get(await approvedExec(expiring.exec), CLUSTER);
    await r.get(await approvedExec(expiring.exec), CLUSTER);
    assert.equal(expiring.runs(), 2);
    // With a clock moved past expiry, the cached credential is not used.
    let now = Date.now();
    const clocked = runner({ now: () => now });
    const later = plugin(['--expires-in', '60']);
    await clocked.get(await approvedExec(later.exec), CLUSTER);
    await clocked.get(await approvedExec(later.exec), CLUSTER);
    assert.equal(later.runs(), 1);
    now += 60_000;
    await clocked.get(await approvedExec(later.exec), CLUSTER);
    assert.equal(later.runs(), 2);
  });

  it('refreshes a rejected credential once, however many requests saw the 401', async () => {
    const p = plugin(['--tokens', 'tok-first-aaaaaaaa,tok-second-aaaaaaa,tok-third-aaaaaaaa', '--sleep', '100']);
    const r = runner();
    const first = await r.get(await approvedExec(p.exec), CLUSTER);
    assert.equal(first.token, 'tok-first-aaaaaaaa');
    const refreshed = await Promise.all(
      Array.from({ length: 8 }, async () => r.get(await approvedExec(p.exec), CLUSTER, { rejected: first })),
    );
    assert.deepEqual(new Set(refreshed.map((c) => c.token)), new Set(['tok-second-aaaaaaa']));
    assert.equal(p.runs(), 2);
    // A request that was still using the old credential when the refresh finished gets the new one without a run.
    const late = await r.get(await approvedExec(p.exec), CLUSTER, { rejected: { ...first } });
    assert.equal(late.token, 'tok-second-aaaaaaa');
    assert.equal(p.runs(), 2);
    // The new credential rejected in turn: one more run.
    assert.equal(
      (await r.get(await approvedExec(p.exec), CLUSTER, { rejected: refreshed[0] })).token,
      'tok-third-aaaaaaaa',
    );
    assert.equal(p.runs(), 3);
  });

  it('sets KUBERNETES_EXEC_INFO without the cluster unless provideClusterInfo, and passes exec env', async () => {
    const info = join(dir, 'info-plain.json');
    const p = plugin(['--info', info], { env: [{ name: 'FLEET_PLUGIN_ECHO', value: 'from-kubeconfig' }] });
    await runner().get(await approvedExec(p.exec), CLUSTER);
    const seen = JSON.parse(await readFile(info, 'utf8'));
    assert.deepEqual(JSON.parse(seen.execInfo), {
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    assert.equal(seen.echo, 'from-kubeconfig');
  });

  it('with provideClusterInfo, sends the cluster, the CA as base64 from a file, and the exec extension as config', async () => {
    const info = join(dir, 'info-cluster.json');
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, '-----BEGIN CERTIFICATE-----\nnot-really\n-----END CERTIFICATE-----\n');
    const cluster: ClusterEntry = {
      server: 'https://hub.example:6443',
      'certificate-authority': caFile,
      'tls-server-name': 'hub.internal',
      extensions: [
        { name: 'other', extension: { ignored: true } },
        { name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'prod-eu', audience: 'fleet' } },
      ],
    };
    const p = plugin(['--info', info], { provideClusterInfo: true });
    await runner().get(await approvedExec(p.exec), cluster);
    const spec = JSON.parse(JSON.parse(await readFile(info, 'utf8')).execInfo).spec;
    assert.deepEqual(spec, {
      interactive: false,
      cluster: {
        server: 'https://hub.example:6443',
        'tls-server-name': 'hub.internal',
        'certificate-authority-data': (await readFile(caFile)).toString('base64'),
        config: { clusterName: 'prod-eu', audience: 'fleet' },
      },
    });
  });

  it('a missing CA file with provideClusterInfo is a config error naming the file', async () => {
    const p = plugin([], { provideClusterInfo: true });
    await rejectsWith(
      runner().get(await approvedExec(p.exec), { server: 'https://x', 'certificate-authority': join(dir, 'nope.pem') }),
      'config',
      /nope\.pem: file not found/,
    );
    assert.equal(p.runs(), 0);
  });

  it('is never interactive without a terminal; interactiveMode Always then fails before running', async () => {
    const info = join(dir, 'info-interactive.json');
    const ifAvailable = plugin(['--info', info], { interactiveMode: 'IfAvailable' });
    await runner({ interactiveAvailable: false }).get(await approvedExec(ifAvailable.exec), CLUSTER);
    assert.equal(JSON.parse(JSON.parse(await readFile(info, 'utf8')).execInfo).spec.interactive, false);
    const always = plugin([], { interactiveMode: 'Always' });
    await rejectsWith(
      runner().get(await approvedExec(always.exec), CLUSTER),
      'plugin',
      /interactiveMode is Always but no terminal is available/,
    );
    assert.equal(always.runs(), 0);
  });

  it('a failing plugin is a plugin error; its stderr goes to stderr, never into the error; the failure is not cached', async () => {
    const p = plugin(['--fail', 'login required: run corp-login']);
    const sink = new Sink();
    const r = runner({ stderr: sink });
    const error = await rejectsWith(
      r.get(await approvedExec(p.exec), CLUSTER),
      'plugin',
      /exec plugin .*node exited with 3 \(its messages are on stderr\)$/,
    );
    assert.doesNotMatch(error.message, /login required/, 'plugin stderr stays out of the error (and so out of JSON)');
    assert.equal(sink.text, 'login required: run corp-login\n', 'stderr is passed through');
    await assert.rejects(r.get(await approvedExec(p.exec), CLUSTER));
    assert.equal(p.runs(), 2);
  });

  it('scrubs the plugin stderr it passes through and registers the tokens it returns', async () => {
    const token = 'tok-secret-' + 'x'.repeat(20);
    const p = plugin([
      '--tokens',
      token,
      '--stderr',
      `debug: got eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eHh4eHh4eCJ9.c2lnbmF0dXJlLXh4eA`,
    ]);
    const sink = new Sink();
    await runner({ stderr: sink }).get(await approvedExec(p.exec), CLUSTER);
    assert.equal(sink.text, 'debug: got REDACTED\n');
    assert.equal(scrub(`Bearer ${token}`), 'Bearer REDACTED');
  });

  it('scrubs plugin stderr a line at a time: a secret split across two writes is still redacted', async () => {
    const secret = 'split-secret-' + 'q'.repeat(16);
    registerSecret(secret);
    // Half the secret, a pause long enough for the two halves to arrive as separate reads, then the rest.
    const script = [
      `process.stderr.write('token is ${secret.slice(0, 10)}')`,
      `setTimeout(() => { process.stderr.write('${secret.slice(10)} ok\\nlast line without newline ${secret}');`,
      `process.stdout.write(JSON.stringify({apiVersion: '${V1}', kind: 'ExecCredential', status: {token: 'tok-split-aaaaaaaa'}})) }, 150)`,
    ].join('\n');
    const sink = new Sink();
    await runner({ stderr: sink }).get(
      await approvedExec({ apiVersion: V1, command: process.execPath, args: ['-e', script], interactiveMode: 'Never' }),
      CLUSTER,
    );
    assert.equal(sink.text, 'token is REDACTED ok\nlast line without newline REDACTED\n');
  });

  it("an interactive plugin's prompt (no newline) is shown while the plugin waits", async () => {
    const script = [
      `process.stderr.write('Password for corp-login: ')`,
      `setTimeout(() => process.stdout.write(JSON.stringify({apiVersion: '${V1}', kind: 'ExecCredential', status: {token: 'tok-prompt-aaaaaaaa'}})), 4000)`,
    ].join('\n');
    const sink = new Sink();
    const got = runner({ stderr: sink, interactiveAvailable: true }).get(
      await approvedExec({
        apiVersion: V1,
        command: process.execPath,
        args: ['-e', script],
        interactiveMode: 'IfAvailable',
      }),
      CLUSTER,
    );
    let answered = false;
    void got.then(() => (answered = true));
    for (let i = 0; i < 50 && sink.text === '' && !answered; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(answered, false, 'the plugin waits for its answer (the prompt must show before it)');
    assert.equal(sink.text, 'Password for corp-login: ', 'the prompt is on the terminal before the plugin answers');
    await got;
    assert.equal(sink.text, 'Password for corp-login: ');
  });

  it('a plugin that logs its own raw (non-JWT) token on stderr: registered before the stderr is passed on', async () => {
    const token = 'tok-raw-' + 'q'.repeat(24);
    const p = plugin(['--tokens', token, '--stderr', `obtained token ${token} from the vault`]);
    const sink = new Sink();
    await runner({ stderr: sink }).get(await approvedExec(p.exec), CLUSTER);
    assert.equal(sink.text, 'obtained token REDACTED from the vault\n');
  });

  it("a hang is bounded by the caller's time limit too, reported as a timeout, and the plugin is ended", async () => {
    const pidFile = join(dir, 'grandchild-signal.pid');
    const p = plugin(['--hang', pidFile]);
    const started = Date.now();
    const error = await rejectsWith(
      runner().get(await approvedExec(p.exec), CLUSTER, { signal: AbortSignal.timeout(2000) }),
      'timeout',
      /exec plugin .*: stopped waiting/,
    );
    assert.ok(Date.now() - started < 6000, `took ${Date.now() - started} ms (the plugin's own limit is 60 s)`);
    assert.doesNotMatch(error.message, /JSON/);
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    for (let i = 0; i < 20 && running(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(running(grandchild), false, "the plugin's child is still running");
  });

  it('exec v1 without interactiveMode is refused as client-go refuses it', async () => {
    const p = plugin([], { interactiveMode: undefined });
    await rejectsWith(runner().get(await approvedExec(p.exec), CLUSTER), 'config', /interactiveMode must be specified/);
    assert.equal(p.runs(), 0);
  });

  it('a missing executable is a plugin error with the install hint', async () => {
    const exec: ExecConfig = {
      apiVersion: V1,
      command: join(dir, 'no-such-plugin'),
      interactiveMode: 'Never',
      installHint: 'Install it with: brew install corp-login\nMore text.',
    };
    await rejectsWith(
      runner().get(await approvedExec(exec), CLUSTER),
      'plugin',
      /no-such-plugin: executable not found; Install it with: brew install corp-login$/,
    );
  });

  it('an unsupported apiVersion is refused without running', async () => {
    const p = plugin([], { apiVersion: 'client.authentication.k8s.io/v1alpha1' });
    await rejectsWith(
      runner().get(await approvedExec(p.exec), CLUSTER),
      'plugin',
      /unsupported apiVersion "client.authentication.k8s.io\/v1alpha1"/,
    );
    assert.equal(p.runs(), 0);
  });

  it('malformed answers are plugin errors that say what is wrong', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--raw', 'not json'], /output is not valid JSON/],
      [['--raw', '{"kind":"Secret"}'], /output is not an ExecCredential/],
      [
        ['--api-version', 'client.authentication.k8s.io/v1beta1'],
        /returned apiVersion "client.authentication.k8s.io\/v1beta1", expected "client.authentication.k8s.io\/v1"/,
      ],
      [['--raw', `{"apiVersion":"${V1}","kind":"ExecCredential"}`], /output has no status/],
      [
        ['--raw', `{"apiVersion":"${V1}","kind":"ExecCredential","status":{}}`],
        /neither a token nor a client certificate/,
      ],
    ];
    for (const [args, pattern] of cases)
      await rejectsWith(runner().get(await approvedExec(plugin(args).exec), CLUSTER), 'plugin', pattern);
  });

  it('a plugin that does not answer in time is killed with whatever it started', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const p = plugin(['--hang', pidFile]);
    const started = Date.now();
    // A hang is a timeout, whatever the plugin printed so far.
    await rejectsWith(
      runner({ timeoutMs: 700 }).get(await approvedExec(p.exec), CLUSTER),
      'timeout',
      /no answer within 700ms/,
    );
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    for (let i = 0; i < 20 && running(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(running(grandchild), false, "the plugin's child is still running");
  });
});

/** Alive and not a zombie waiting to be reaped (which a killed process may be for a moment). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

describe('parseExecOutput', () => {
  it('reads a certificate answer and rejects a certificate without its key', () => {
    const cert = parseExecOutput(
      JSON.stringify({
        apiVersion: V1,
        kind: 'ExecCredential',
        status: {
          clientCertificateData: 'CERT',
          clientKeyData: 'KEY-KEY-KEY-KEY',
          expirationTimestamp: '2030-01-01T00:00:00Z',
        },
      }),
      V1,
      'p',
    );
    assert.deepEqual(cert, {
      token: undefined,
      clientCertificateData: 'CERT',
      clientKeyData: 'KEY-KEY-KEY-KEY',
      expirationTimestamp: '2030-01-01T00:00:00Z',
    });
    assert.throws(
      () =>
        parseExecOutput(
          JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { clientCertificateData: 'CERT' } }),
          V1,
          'p',
        ),
      /must be given together/,
    );
    assert.throws(
      () =>
        parseExecOutput(
          JSON.stringify({
            apiVersion: V1,
            kind: 'ExecCredential',
            status: { token: 'abcdefghij', expirationTimestamp: 'soon' },
          }),
          V1,
          'p',
        ),
      /"soon" is not a time/,
    );
  });
});
