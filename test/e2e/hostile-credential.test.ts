// Issue 38, item 3, against the real control plane: `fleet kubeconfig credential` hands out a credential only for the
// server and CA its provider names. An exported context is edited by someone who may write the kubeconfig (or hands
// it around): provideClusterInfo: false and the server (and CA) moved to another HTTPS server that records what it is
// sent; a KUBERNETES_EXEC_INFO whose server is not a string; the provider's server with another CA. kubectl (the
// harness's) runs the edited contexts, through fleet and through fleet-credential in front of it; the recording server
// never sees the token, and no output or cache file holds it. Export warns for a cluster that skips TLS verification.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN, runFleet } from '../support/cli.js';
import { CredentialCache, ENTRY_VERSION, canonicalEntry } from '../../src/export/credential-cache.js';
import { credentialIdentity, exportedFlags } from '../../src/export/credential-fast.js';
import { readExecRequest } from '../../src/export/exec-info.js';
import { buildScriptOutput } from '../support/binaries.js';
import { type HostileServer, answer, hostileServer, serverPki } from '../support/hostile-servers.js';
import { loadControlPlane, scratchDir, tokenUser, uniqueName, writeKubeconfig } from '../support/fixture.js';

const cp = loadControlPlane();
const m1 = cp.members[0];
const run = uniqueName('hcred');
// bin/run.js is #!/usr/bin/env node: Node 22+ first on PATH for kubectl's child too.
const PATH = `${dirname(process.execPath)}:${process.env.PATH}`;
const V1 = 'client.authentication.k8s.io/v1';

let dir = '';
let cache = '';
let token = '';
let member = '';
let recorder: HostileServer;
let recorderCa = '';
const outputs: string[] = [];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kube(kubeconfig: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', kubeconfig, ...args],
      { env: { PATH, HOME: dir, XDG_CACHE_HOME: cache }, timeout: 60_000 },
      (error, stdout, stderr) => {
        outputs.push(stdout + stderr);
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

async function fleet(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await runFleet(args, { timeoutMs: 60_000, env: { PATH, XDG_CACHE_HOME: cache, ...env } });
  outputs.push(r.stdout + r.stderr);
  return r;
}

/** Every file of the credential cache: never the token. */
function cacheText(): string {
  const d = join(cache, 'fleet/credentials');
  return existsSync(d)
    ? readdirSync(d)
        .map((n) => readFileSync(join(d, n), 'utf8'))
        .join('\n')
    : '';
}

/** The requests that carried the token to the recording server since `from` (an index into its requests). */
const sentToken = (from: number) =>
  recorder.requests.slice(from).filter((r) => String(r.headers.authorization ?? '').includes(token));

/** The exported file of member-1 for the token user, with `edit` applied to its one cluster and exec entry. */
async function exported(name: string, edit: (cluster: any, exec: any) => void, from = member): Promise<string> {
  const out = join(dir, `${name}.kubeconfig`);
  const r = await fleet(['kubeconfig', 'export', '--kubeconfig', from, '--all', '--command', FLEET_BIN, '--out', out]);
  outputs.push(r.stderr);
  assert.equal(r.code, 0, r.stderr);
  const doc = yaml.load(readFileSync(out, 'utf8')) as any;
  assert.equal(doc.users[0].user.exec.provideClusterInfo, true, 'export always asks kubectl for the cluster');
  edit(doc.clusters[0].cluster, doc.users[0].user.exec);
  doc['current-context'] = doc.contexts[0].name;
  writeFileSync(out, yaml.dump(doc), { mode: 0o600 });
  return out;
}

before(async () => {
  dir = scratchDir();
  cache = join(dir, `${run}-cache`);
  const alice = tokenUser(m1, 'alice');
  token = alice.token;
  member = alice.kubeconfigPath;
  const pki = await serverPki();
  recorderCa = pki.caData;
  recorder = await hostileServer(pki, answer({ kind: 'NamespaceList', apiVersion: 'v1', items: [] }), 'http/1.1');
});

after(async () => {
  await recorder?.close();
  for (const o of outputs) assert.ok(!o.includes(token), 'the token appears in an output');
});

describe('a credential only for the server and CA the provider names', () => {
  it('an exported entry with provideClusterInfo: false, its server and CA moved to another HTTPS server: refused, the token never sent', async () => {
    const out = await exported('moved', (cluster, exec) => {
      cluster.server = recorder.url;
      cluster['certificate-authority-data'] = recorderCa;
      exec.provideClusterInfo = false;
    });
    const from = recorder.requests.length;
    const r = await kube(out, ['get', 'ns']);
    assert.deepEqual(sentToken(from), [], 'the token reached the other server');
    assert.notEqual(r.code, 0, 'kubectl got a credential for the other server');
    assert.match(
      r.stderr,
      /^error: KUBERNETES_EXEC_INFO: no spec\.cluster \(the exec entry has provideClusterInfo: false\?\)/m,
    );
    assert.ok(!`${r.stdout}${r.stderr}`.includes(token));
    assert.ok(!cacheText().includes(token), 'nothing cached for it');
  });

  it('the same through fleet-credential in front of fleet: it hands over, fleet refuses', async () => {
    const bin = join(dir, `${run}-bin`);
    mkdirSync(bin);
    copyFileSync(
      buildScriptOutput(join(dirname(dirname(FLEET_BIN)), 'cmd/fleet-credential/build.sh')),
      join(bin, 'fleet-credential'),
    );
    chmodSync(join(bin, 'fleet-credential'), 0o755);
    const out = await exported('moved-reader', (cluster, exec) => {
      cluster.server = recorder.url;
      cluster['certificate-authority-data'] = recorderCa;
      exec.provideClusterInfo = false;
      exec.command = join(bin, 'fleet-credential');
      exec.args = ['--fleet', FLEET_BIN, ...exec.args];
    });
    const from = recorder.requests.length;
    const r = await kube(out, ['get', 'ns']);
    assert.deepEqual(sentToken(from), [], 'the token reached the other server');
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /^error: KUBERNETES_EXEC_INFO: no spec\.cluster \(the exec entry has provideClusterInfo: false\?\)/m,
    );
  });

  it('with provideClusterInfo: true, the server moved to the other server (and its CA): refused, the token never sent', async () => {
    const out = await exported('moved-info', (cluster) => {
      cluster.server = recorder.url;
      cluster['certificate-authority-data'] = recorderCa;
    });
    const from = recorder.requests.length;
    const r = await kube(out, ['get', 'ns']);
    assert.deepEqual(sentToken(from), [], 'the token reached the other server');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /kubectl is connecting to https:\/\/127\.0\.0\.1:\d+, but its provider names /);
  });

  it("run as kubectl would with a server that is not a string, or the provider's server with another CA: exit 2, the token not printed", async () => {
    const out = await exported('args', () => undefined);
    const exec = (yaml.load(readFileSync(out, 'utf8')) as any).users[0].user.exec;
    const ca = (yaml.load(readFileSync(out, 'utf8')) as any).clusters[0].cluster['certificate-authority-data'];
    const info = (cluster: unknown) =>
      JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false, cluster } });
    for (const [execInfo, message] of [
      [
        info({ server: 42, 'certificate-authority-data': ca }),
        /^error: KUBERNETES_EXEC_INFO: spec\.cluster\.server is not a non-empty string$/,
      ],
      [
        info({ server: { url: m1.url }, 'certificate-authority-data': ca }),
        /spec\.cluster\.server is not a non-empty string/,
      ],
      [
        info({ server: m1.url, 'certificate-authority-data': recorderCa }),
        /kubectl verifies .* with another CA than its provider names/,
      ],
      [info({ server: m1.url }), /another CA than its provider names/],
      [info({ server: m1.url, 'insecure-skip-tls-verify': true }), /kubectl skips TLS verification/],
    ] as const) {
      const r = await fleet(exec.args, { KUBERNETES_EXEC_INFO: execInfo });
      assert.ok(!r.stdout.includes(token), `the token printed for ${execInfo}`);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr.trim(), message);
      assert.equal(r.stderr.trim().split('\n').length, 1);
      assert.equal(r.stdout, '');
      assert.ok(!r.stderr.includes(token));
    }
    // Unedited, kubectl gets the credential and the member answers (a server spelled with a trailing slash is the same).
    const ok = await fleet(exec.args, {
      KUBERNETES_EXEC_INFO: info({ server: `${m1.url}/`, 'certificate-authority-data': ca }),
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).status.token, token);
    // The one output that is the credential, asked for: not kept for the check of every output.
    outputs.pop();
    const who = await kube(out, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'alice');
  });

  it('export warns, one line per cluster, when the exported cluster skips TLS verification', async () => {
    const insecure = writeKubeconfig({
      path: join(dir, `${run}-insecure.kubeconfig`),
      server: m1.url,
      insecureSkipTlsVerify: true,
      context: 'insecure',
      user: { token },
    });
    const out = await exported('insecure-out', () => undefined, insecure);
    const warnings = outputs
      .at(-1)!
      .split('\n')
      .filter((l) => l.startsWith('warning: '));
    assert.equal(warnings.length, 1, outputs.at(-1));
    assert.match(
      warnings[0],
      /^warning: .*insecure: the exported context skips TLS verification \(insecure-skip-tls-verify\): kubectl will send its credential to whatever answers at https:\/\//,
    );
    // And the insecure context still works through kubectl: the provider itself skips verification.
    const who = await kube(out, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'alice');
  });
});

// Issue 38, item 4, through kubectl: what is planted at an exported context's cache entry (found by the same key both
// readers use) neither hangs kubectl nor chooses the credential it gets.
describe("the cache entry kubectl's credential comes from", () => {
  async function readerContext(name: string) {
    const bin = join(dir, `${run}-${name}-bin`);
    mkdirSync(bin);
    copyFileSync(
      buildScriptOutput(join(dirname(dirname(FLEET_BIN)), 'cmd/fleet-credential/build.sh')),
      join(bin, 'fleet-credential'),
    );
    chmodSync(join(bin, 'fleet-credential'), 0o755);
    let execArgs: string[] = [];
    const out = await exported(name, (_, exec) => {
      exec.command = join(bin, 'fleet-credential');
      exec.args = ['--fleet', FLEET_BIN, ...exec.args];
      execArgs = exec.args;
    });
    const c = (yaml.load(readFileSync(out, 'utf8')) as any).clusters[0].cluster;
    const info = JSON.stringify({
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { cluster: { server: c.server, 'certificate-authority-data': c['certificate-authority-data'] } },
    });
    const flags = exportedFlags(execArgs.slice(4))!;
    const path = new CredentialCache(
      credentialIdentity(flags, readExecRequest(info).cluster),
      join(cache, 'fleet/credentials'),
    ).path;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return { out, path, cluster: flags.cluster! };
  }
  const whoami = (out: string) => kube(out, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);

  it('a FIFO at the entry: kubectl gets its answer (it hung fleet-credential, fleet and kubectl)', async () => {
    const { out, path } = await readerContext('fifo');
    rmSync(path, { force: true });
    execFileSync('mkfifo', ['-m', '600', path]);
    const started = Date.now();
    const who = await whoami(out);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'alice');
    assert.ok(Date.now() - started < 30_000);
    // The entry kubectl's call used: fleet replaced the FIFO with the fresh entry it fetched.
    assert.ok(lstatSync(path).isFile(), 'not the entry the readers looked at');
  });

  it("a link at the entry to a planted entry with another user's token: not followed, kubectl is still alice", async () => {
    const { out, path, cluster } = await readerContext('link');
    const bob = tokenUser(m1, 'bob').token;
    const planted = join(dir, `${run}-planted.json`);
    const expires = new Date(Math.floor(Date.now() / 1000 + 600) * 1000).toISOString().replace('.000Z', 'Z');
    writeFileSync(
      planted,
      canonicalEntry({ v: ENTRY_VERSION, cluster, expires, id: 'a'.repeat(32), credential: { token: bob } }),
      { mode: 0o600 },
    );
    rmSync(path, { force: true });
    symlinkSync(planted, path);
    const who = await whoami(out);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'alice', 'the planted entry was followed');
    assert.ok(!`${who.stdout}${who.stderr}`.includes(bob));
    assert.ok(lstatSync(path).isFile(), 'the link is replaced by the fresh entry');
    assert.ok(readFileSync(planted, 'utf8').includes(bob), 'the planted file is left as it was');
  });
});
