import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { parseTimeLimit } from '../../src/base/duration.js';
import { checkContext } from '../../src/kubeconfig/readiness.js';
import { type ResolvedContext, loadMerged, resolveContext } from '../../src/kubeconfig/loading-rules.js';
import { parseKubeconfig } from '../../src/kubeconfig/parse.js';
import type { ClusterEntry, UserEntry } from '../../src/kubeconfig/types.js';
import { runFleet } from '../support/cli.js';

let dir: string;
/** Two key pairs with self-signed certificates: a (valid a day), b (valid a day), and expired (ended yesterday). */
const pki: Record<string, { cert: string; key: string }> = {};

function selfSigned(name: string, days: number): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ],
    { stdio: 'ignore' },
  );
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-signkey', key, '-days', String(days), '-out', cert], {
    stdio: 'ignore',
  });
  return { cert, key };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-readiness-'));
  pki.a = selfSigned('a', 1);
  pki.b = selfSigned('b', 1);
  pki.expired = selfSigned('expired', -1);
});

function ctx(user: UserEntry, cluster: ClusterEntry = { server: 'https://k.example:6443' }): ResolvedContext {
  return { contextName: 'c', clusterName: 'k', userName: 'u', cluster, user, contextFile: '/x', clusterFile: '/x' };
}

const jwt = (claims: Record<string, unknown>) =>
  [{ alg: 'none' }, claims].map((p) => Buffer.from(JSON.stringify(p)).toString('base64url')).join('.') + '.';

describe('READY means usable: what kubectl refuses offline', () => {
  it('a usable client certificate is ready', async () => {
    assert.deepEqual(await checkContext(ctx({ 'client-certificate': pki.a.cert, 'client-key': pki.a.key })), {
      problems: [],
      warnings: [],
    });
  });

  it('missing or unreadable certificate, key and token files', async () => {
    const missing = join(dir, 'nope.key');
    assert.deepEqual((await checkContext(ctx({ 'client-certificate': pki.a.cert, 'client-key': missing }))).problems, [
      `client-key ${missing}: file not found`,
    ]);
    assert.deepEqual(
      (await checkContext(ctx({ 'client-certificate': join(dir, 'nope.crt'), 'client-key': pki.a.key }))).problems,
      [`client-certificate ${join(dir, 'nope.crt')}: file not found`],
    );
    assert.deepEqual((await checkContext(ctx({ tokenFile: join(dir, 'nope.token') }))).problems, [
      `tokenFile ${join(dir, 'nope.token')}: file not found`,
    ]);
    assert.deepEqual((await checkContext(ctx({ tokenFile: dir }))).problems, [`tokenFile ${dir}: is a directory`]);
  });

  it('bad base64 in *-data, and data that is not PEM', async () => {
    assert.deepEqual(
      (await checkContext(ctx({ 'client-certificate-data': 'not base64!', 'client-key-data': 'AAAA' }))).problems,
      ['client-certificate-data: not valid base64'],
    );
    assert.deepEqual(
      (await checkContext(ctx({}, { server: 'https://k', 'certificate-authority-data': '%%%' }))).problems,
      ['certificate-authority-data: not valid base64'],
    );
    const garbage = Buffer.from('hello').toString('base64');
    assert.deepEqual(
      (await checkContext(ctx({}, { server: 'https://k', 'certificate-authority-data': garbage }))).problems,
      ['certificate-authority: not a valid PEM certificate'],
    );
  });

  it('a key that does not match its certificate', async () => {
    assert.deepEqual(
      (await checkContext(ctx({ 'client-certificate': pki.a.cert, 'client-key': pki.b.key }))).problems,
      ['client-key does not match client-certificate'],
    );
  });

  it('an expired client certificate or token is not ready, with the date', async () => {
    const notAfter = execFileSync('openssl', ['x509', '-in', pki.expired.cert, '-noout', '-enddate'])
      .toString()
      .trim()
      .slice('notAfter='.length);
    const when = new Date(notAfter).toISOString().replace(/\.\d{3}Z$/, 'Z');
    assert.deepEqual(
      (await checkContext(ctx({ 'client-certificate': pki.expired.cert, 'client-key': pki.expired.key }))).problems,
      [`client certificate expired ${when}`],
    );
    assert.deepEqual((await checkContext(ctx({ token: jwt({ sub: 'x', exp: 1560000000 }) }))).problems, [
      'token expired 2019-06-08T13:20:00Z',
    ]);
    assert.deepEqual((await checkContext(ctx({ token: jwt({ sub: 'x', exp: 4100000000 }) }))).problems, []);
  });

  it('an exec v1 config without interactiveMode (v1beta1 defaults it)', async () => {
    const v1 = { apiVersion: 'client.authentication.k8s.io/v1', command: 'kubelogin' };
    assert.deepEqual((await checkContext(ctx({ exec: v1 }))).problems, [
      'exec plugin kubelogin: interactiveMode must be specified (Never, IfAvailable or Always) for client.authentication.k8s.io/v1',
    ]);
    assert.deepEqual((await checkContext(ctx({ exec: { ...v1, interactiveMode: 'Never' } }))).problems, []);
    assert.deepEqual(
      (await checkContext(ctx({ exec: { ...v1, apiVersion: 'client.authentication.k8s.io/v1beta1' } }))).problems,
      [],
    );
  });

  it('a server that is not a URL; http allowed with a warning; a host without scheme is https', async () => {
    assert.deepEqual((await checkContext(ctx({}, { server: 'https://exa mple.com' }))).problems, [
      'server "https://exa mple.com" is not a URL',
    ]);
    assert.deepEqual((await checkContext(ctx({}, { server: 'ftp://k.example' }))).problems, [
      'server "ftp://k.example": unsupported scheme "ftp" (use https)',
    ]);
    assert.deepEqual(await checkContext(ctx({}, { server: 'k.example:6443' })), { problems: [], warnings: [] });
    assert.deepEqual(await checkContext(ctx({}, { server: 'http://k.example:8080' })), {
      problems: [],
      warnings: ['server http://k.example:8080 is plain http: the credential is sent in clear'],
    });
    assert.deepEqual((await checkContext(ctx({}, { server: 'https://k', 'proxy-url': 'ftp://p:1' }))).problems, [
      'proxy-url: unsupported scheme "ftp" (http, https or socks5)',
    ]);
  });

  it('--strict fails on an expired certificate; the row says why', async () => {
    const kc = join(dir, 'expired.kubeconfig');
    await writeFile(
      kc,
      `apiVersion: v1
kind: Config
current-context: old
clusters: [{name: k, cluster: {server: "https://k.example:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {client-certificate: expired.crt, client-key: expired.key}}]
contexts: [{name: old, context: {cluster: k, user: u}}]
`,
    );
    const plain = await runFleet(['clusters', 'list', '--kubeconfig', kc, '-o', 'json']);
    assert.equal(plain.code, 0, plain.stderr);
    const [item] = plain.json().items;
    assert.equal(item.ready, false);
    assert.match(item.reason, /^client certificate expired \d{4}-\d\d-\d\dT/);
    const strict = await runFleet(['clusters', 'list', '--kubeconfig', kc, '--strict']);
    assert.equal(strict.code, 1, strict.stderr);
    assert.match(strict.stdout, /False\s+client certificate expired/);
  });
});

describe('kubeconfig as client-go reads it', () => {
  it('a multi-document file: the first document counts', () => {
    const file = parseKubeconfig(
      'current-context: one\ncontexts: [{name: one, context: {cluster: c}}]\n---\ncurrent-context: two\n',
      '/k',
    );
    assert.equal(file.currentContext, 'one');
    assert.deepEqual([...file.contexts.keys()], ['one']);
  });

  it('~ in a path is not expanded: relative to the file, and the reason says so', async () => {
    const d = join(dir, 'tilde');
    await mkdir(d, { recursive: true });
    const kc = join(d, 'k.kubeconfig');
    await writeFile(
      kc,
      'clusters: [{name: k, cluster: {server: "https://k"}}]\nusers: [{name: u, user: {tokenFile: ~/token}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n',
    );
    const resolved = resolveContext(await loadMerged([kc]), 'c');
    assert.equal(resolved.user.tokenFile, join(d, '~', 'token'));
    assert.deepEqual((await checkContext(resolved)).problems, [
      `tokenFile ${join(d, '~', 'token')}: file not found (kubeconfig paths do not expand ~)`,
    ]);
  });

  it("current-context naming a missing context: kubectl's message, exit 2", async () => {
    const kc = join(dir, 'dangling.kubeconfig');
    await writeFile(
      kc,
      'current-context: gone\nclusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: here, context: {cluster: k}}]\n',
    );
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', kc]);
    assert.equal(res.code, 2);
    assert.equal(res.stderr, `error: ${kc}: context was not found for specified context: gone\n`);
  });

  it('clusters list -o wide has a NAMESPACE column; rows sorted by name', async () => {
    const kc = join(dir, 'ns.kubeconfig');
    await writeFile(
      kc,
      `clusters: [{name: k, cluster: {server: "https://k.example"}}]
contexts:
- {name: zeta, context: {cluster: k, namespace: team-z}}
- {name: alpha, context: {cluster: k, namespace: team-a}}
`,
    );
    const res = await runFleet(['clusters', 'list', '--kubeconfig', kc, '-o', 'wide']);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^NAME\s+PROVIDER\s+SERVER\s+AUTH\s+NAMESPACE\s+READY\b/);
    // Sorted by the full name (the order -o json has); the table shows each by its context name (issue 41).
    assert.match(lines[1], /^alpha\s+file\s+https:\/\/k.example\s+none\s+team-a\s+True/);
    assert.match(lines[2], /^zeta\s+file\s+https:\/\/k.example\s+none\s+team-z\s+True/);
  });
});

describe('time limits that hold', () => {
  it('a duration longer than a timer can hold is a usage error, not an instant timeout', async () => {
    assert.equal(parseTimeLimit('596h'), 596 * 3_600_000);
    assert.throws(
      () => parseTimeLimit('597h'),
      /--request-timeout: "597h" is longer than the longest time limit fleet can keep/,
    );
    assert.throws(() => parseTimeLimit('9999999999', '--cluster-timeout'), /--cluster-timeout: "9999999999" is longer/);
    const res = await runFleet(['auth', 'whoami', '--request-timeout', '1000h', '--kubeconfig', join(dir, 'b.crt')]);
    assert.equal(res.code, 2);
    assert.match(
      res.stderr,
      /^error: --request-timeout: "1000h" is longer than the longest time limit fleet can keep \(2147483647ms, about 24 days\); use 0 for none\n$/,
    );
  });
});
