// fleet clusters list/inspect against the real control plane: versions, auth kinds, TLS outcomes and classified failures.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { closedPort } from '../support/net.js';
import { runFleet } from '../support/cli.js';
import {
  createCertUser,
  kubeconfigFor,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';

const cp = loadControlPlane();
const member = cp.members[0];

describe('fleet clusters inspect (live)', () => {
  it('reports the version of hub and member through a client certificate, with TLS verified', async () => {
    for (const s of [cp.hub, member]) {
      const res = await runFleet(['clusters', 'inspect', '--kubeconfig', s.kubeconfig, '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const r = res.json();
      assert.equal(r.auth, 'client-cert');
      assert.equal(r.credentials.certificate.commonName, cp.admin.user);
      assert.ok(r.credentials.certificate.organizations.includes('system:masters'));
      assert.equal(r.live.ok, true);
      assert.equal(r.live.version.gitVersion, cp.version);
      assert.match(r.live.version.gitVersion, /^v1\.34\.\d+$/);
      assert.deepEqual(r.live.tls, { verified: true, mode: 'verified' });
      assert.equal(r.live.readyz.ok, true);
      assert.ok(r.live.latencyMs > 0);
    }
  });

  it('reports the version through a static token, without printing it', async () => {
    const { kubeconfigPath, token } = tokenUser(member, 'alice');
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', kubeconfigPath, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json().auth, 'token');
    assert.equal(res.json().live.version.gitVersion, cp.version);
    assert.ok(!res.stdout.includes(token));
    const table = await runFleet(['clusters', 'inspect', '--kubeconfig', kubeconfigPath]);
    assert.match(table.stdout, new RegExp(`Version\\s+${cp.version.replace(/\./g, '\\.')}`));
    assert.ok(!table.stdout.includes(token));
  });

  it('reaches the server through an exec plugin, which it runs once, and never prints the token', async () => {
    const { token } = tokenUser(member, 'carol');
    const count = join(scratchDir(), `${uniqueName('inspect-plugin')}.count`);
    const plugin = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));
    const path = kubeconfigFor(member, {
      exec: { command: process.execPath, args: [plugin, '--count', count, '--tokens', token] },
    });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const r = res.json();
    assert.equal(r.auth, 'exec');
    assert.equal(r.credentials.exec.command, process.execPath);
    assert.equal(r.live.version.gitVersion, cp.version);
    assert.equal(readFileSync(count, 'utf8').trim().split('\n').length, 1, 'one plugin run for /version and /readyz');
    assert.ok(!res.stdout.includes(token) && !res.stderr.includes(token));
  });

  it('reports an untrusted CA as a TLS failure, exit 1', async () => {
    const user = await createCertUser(cp.hub, { user: uniqueName('tls') });
    // The client CA did not sign the serving certificate: verification must fail.
    const path = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('untrusted')}.kubeconfig`),
      server: cp.hub.url,
      caFile: cp.clientCa.certFile,
      context: 'untrusted',
      user,
    });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    const r = res.json();
    assert.equal(r.live.ok, false);
    assert.equal(r.live.error.kind, 'tls');
    assert.match(r.live.error.message, /certificate signed by unknown authority/);
    assert.equal(r.live.tls.mode, 'failed');
    const human = await runFleet(['clusters', 'inspect', '--kubeconfig', path]);
    assert.equal(human.code, 1);
    assert.match(
      human.stderr,
      /^error: .*untrusted: .*TLS verification failed: certificate signed by unknown authority/m,
    );
  });

  it('with insecure-skip-tls-verify, connects and says the chain would not verify', async () => {
    const user = await createCertUser(cp.hub, { user: uniqueName('insecure') });
    const path = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('insecure')}.kubeconfig`),
      server: cp.hub.url,
      insecureSkipTlsVerify: true,
      context: 'insecure',
      user,
    });
    const r = (await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json'])).json();
    assert.equal(r.ca, 'insecure');
    assert.equal(r.live.ok, true);
    assert.equal(r.live.tls.mode, 'skipped');
    assert.equal(r.live.tls.verified, false);
  });

  it('classifies a rejected token as unauthorized', async () => {
    const path = kubeconfigFor(member, { token: 'not-a-valid-token-0123456789' });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.equal(res.json().live.error.kind, 'unauthorized');
    assert.ok(!res.stdout.includes('not-a-valid-token-0123456789'));
  });

  it('classifies a closed port as unreachable', async () => {
    const port = await closedPort();
    const path = kubeconfigFor({ ...member, url: `https://127.0.0.1:${port}` }, { token: 'x'.repeat(20) });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.deepEqual(res.json().live.error, {
      kind: 'unreachable',
      message: `https://127.0.0.1:${port}: connection refused`,
    });
  });

  describe('a server that accepts and never answers', () => {
    // A hang cannot be produced by a real apiserver on demand; this is the one HTTP double the design allows.
    let hang: Server;
    before(async () => {
      hang = createServer(() => {});
      await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    });
    after(() => hang.close());

    it('is a timeout after --request-timeout', async () => {
      const port = (hang.address() as { port: number }).port;
      const path = kubeconfigFor({ ...member, url: `https://127.0.0.1:${port}` }, { token: 'x'.repeat(20) });
      const started = Date.now();
      const res = await runFleet([
        'clusters',
        'inspect',
        '--kubeconfig',
        path,
        '--request-timeout',
        '1s',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      assert.equal(res.json().live.error.kind, 'timeout');
      assert.ok(Date.now() - started < 15_000);
    });
  });
});

describe('fleet clusters list agrees with kubectl config get-contexts', () => {
  it('over KUBECONFIG=a:b:c, on which contexts exist and which is current', async () => {
    const dir = scratchDir();
    const a = kubeconfigFor(cp.hub, { token: 'a'.repeat(20) }, { name: 'shared', path: join(dir, 'a.yaml') });
    const b = join(dir, 'b.yaml');
    writeFileSync(
      b,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'only-b',
        clusters: [{ name: 'cb', cluster: { server: member.url } }],
        users: [{ name: 'ub', user: { token: 'b'.repeat(20) } }],
        contexts: [
          { name: 'only-b', context: { cluster: 'cb', user: 'ub' } },
          { name: 'shared@hub', context: { cluster: 'cb', user: 'ub' } },
        ],
      }),
    );
    const c = member.kubeconfig;
    const KUBECONFIG = [a, join(dir, 'missing.yaml'), b, c].join(':');
    const kubectl = promisify(execFile);
    const names = (
      await kubectl(cp.binaries.kubectl, ['config', 'get-contexts', '-o', 'name'], { env: { KUBECONFIG } })
    ).stdout
      .trim()
      .split('\n')
      .sort();
    const current = (
      await kubectl(cp.binaries.kubectl, ['config', 'current-context'], { env: { KUBECONFIG } })
    ).stdout.trim();
    const res = await runFleet(['clusters', 'list', '-o', 'json'], { env: { KUBECONFIG } });
    assert.equal(res.code, 0, res.stderr);
    const items = res.json().items as Array<{ context: string; current: boolean; server: string }>;
    assert.deepEqual(items.map((i) => i.context).sort(), names);
    assert.deepEqual(
      items.filter((i) => i.current).map((i) => i.context),
      [current],
    );
    assert.equal(current, 'shared@hub');
    // The first file to define a context wins: shared@hub points at the hub (from a), not at the member (from b).
    assert.equal(items.find((i) => i.context === 'shared@hub')?.server, cp.hub.url);
  });
});
