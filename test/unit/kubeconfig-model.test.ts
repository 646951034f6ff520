import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import { writeFileAtomic } from '../../src/kubeconfig/atomic-write.js';
import { authKind, caKind, describeCredentials, describeToken } from '../../src/kubeconfig/credentials.js';
import { dumpKubeconfig, parseKubeconfig } from '../../src/kubeconfig/parse.js';
import { OMITTED, REDACTED, redactKubeconfig, registerSecret, scrub, scrubValue } from '../../src/kubeconfig/redact.js';

const RICH = `apiVersion: v1
kind: Config
preferences:
  colors: true
current-context: a
clusters:
- name: c
  cluster:
    server: https://c.example:6443
    certificate-authority-data: Zm9v
    tls-server-name: api.internal
    disable-compression: true
    x-vendor-field: kept
    extensions:
    - name: client.authentication.k8s.io/exec
      extension:
        audience: c
        nested: {a: [1, 2]}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: plugin
      args: [one, two]
      env:
      - name: PLUGIN_TOKEN
        value: env-secret-value
      provideClusterInfo: true
      interactiveMode: Never
      futureField: {x: 1}
- name: t
  user:
    token: super-secret-token-value
    client-key-data: a2V5LWRhdGEtc2VjcmV0
    client-certificate-data: Y2VydA==
    password: hunter22-password
contexts:
- name: a
  context:
    cluster: c
    user: u
    namespace: ns
    extensions:
    - name: fleet/x
      extension: 1
extensions:
- name: top
  extension: {y: 2}
x-unknown-top: value
`;

describe('kubeconfig model', () => {
  it('keeps unknown fields, extensions and exec settings through a load/save round trip', () => {
    const file = parseKubeconfig(RICH, 'rich');
    const again = yaml.load(dumpKubeconfig(file.doc));
    assert.deepEqual(again, yaml.load(RICH));
    assert.equal(file.clusters.get('c')?.['x-vendor-field'], 'kept');
    assert.equal(file.users.get('u')?.exec?.interactiveMode, 'Never');
  });

  it('classifies auth and CA trust', () => {
    assert.equal(authKind({ exec: { command: 'x' } }), 'exec');
    assert.equal(authKind({ 'auth-provider': { name: 'oidc' } }), 'auth-provider');
    assert.equal(authKind({ 'client-certificate-data': 'x', 'client-key-data': 'y' }), 'client-cert');
    assert.equal(authKind({ tokenFile: '/t' }), 'token');
    assert.equal(authKind({ username: 'a', password: 'b' }), 'basic');
    assert.equal(authKind({}), 'none');
    assert.equal(caKind({ 'insecure-skip-tls-verify': true, 'certificate-authority-data': 'x' }), 'insecure');
    assert.equal(caKind({ 'certificate-authority-data': 'x' }), 'embedded');
    assert.equal(caKind({ 'certificate-authority': '/ca' }), 'file');
    assert.equal(caKind({}), 'system');
  });

  it('decodes a JWT bearer token without printing it', () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const token = `${b64({ alg: 'RS256' })}.${b64({ iss: 'https://issuer', sub: 'system:serviceaccount:a:b', aud: 'x', exp: 1893456000 })}.c2lnbmF0dXJl`;
    const info = describeToken(token);
    assert.equal(info.jwt, true);
    assert.equal(info.issuer, 'https://issuer');
    assert.equal(info.subject, 'system:serviceaccount:a:b');
    assert.deepEqual(info.audiences, ['x']);
    assert.equal(info.expires, '2030-01-01T00:00:00Z');
    assert.ok(!JSON.stringify(info).includes(token));
    assert.match(info.fingerprint, /^sha256:[0-9a-f]{16}$/);
    assert.equal(describeToken('opaque-token').jwt, false);
  });

  it('reads client certificate subject, groups and NotAfter', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-cert-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(d, 'k'),
        '-out',
        join(d, 'c'),
        '-days',
        '2',
        '-subj',
        '/O=g1/O=g2/CN=jane',
      ],
      { stdio: 'ignore' },
    );
    const pem = await readFile(join(d, 'c'), 'utf8');
    const desc = await describeCredentials(
      {},
      { 'client-certificate-data': Buffer.from(pem).toString('base64'), 'client-key': join(d, 'k') },
    );
    assert.equal(desc.auth, 'client-cert');
    assert.equal(desc.certificate?.commonName, 'jane');
    assert.deepEqual(desc.certificate?.organizations, ['g1', 'g2']);
    const days = (Date.parse(desc.expires!) - Date.now()) / 86_400_000;
    assert.ok(days > 1.9 && days <= 2.01, `expiry ${desc.expires}`);
    const broken = await describeCredentials(
      { 'certificate-authority': join(d, 'nope') },
      { 'client-certificate': join(d, 'missing.crt') },
    );
    assert.deepEqual(broken.problems, [
      `client-certificate ${join(d, 'missing.crt')}: file not found`,
      `certificate-authority ${join(d, 'nope')}: file not found`,
    ]);
  });
});

describe('redaction', () => {
  it('replaces tokens, keys, passwords and secret-looking env values, and keeps the rest', () => {
    const doc = parseKubeconfig(RICH, 'rich').doc;
    const red = redactKubeconfig(doc);
    const text = JSON.stringify(red);
    for (const secret of [
      'super-secret-token-value',
      'a2V5LWRhdGEtc2VjcmV0',
      'hunter22-password',
      'env-secret-value',
    ]) {
      assert.ok(!text.includes(secret), `${secret} leaked`);
    }
    const t = red.users!.find((u) => u.name === 't')!.user;
    assert.equal(t.token, REDACTED);
    assert.equal(t['client-certificate-data'], OMITTED);
    assert.equal(red.clusters![0].cluster['certificate-authority-data'], OMITTED);
    assert.equal(red.users![0].user.exec?.command, 'plugin');
    // The original is untouched.
    assert.equal(doc.users![1].user.token, 'super-secret-token-value');
  });

  it('scrubs registered secrets, JWT-shaped strings and private keys from any text', () => {
    registerSecret('registered-secret-123');
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eHh4eHh4In0.c2lnbmF0dXJlc2lnbmF0dXJl';
    // Not a key: the PEM armour alone, assembled at run time so the repository holds nothing key-shaped.
    const armour = (edge: string) => `-----${edge} EC ${'PRIVATE'} KEY-----`;
    const text = `a registered-secret-123 b ${jwt} c ${armour('BEGIN')}\nMHcCAQEE\n${armour('END')} d`;
    assert.equal(scrub(text), `a ${REDACTED} b ${REDACTED} c ${REDACTED} d`);
    assert.deepEqual(scrubValue({ x: ['registered-secret-123'], n: 1 }), { x: [REDACTED], n: 1 });
  });
});

describe('atomic writer', () => {
  it('writes with mode 0600 and leaves no temp file', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-write-'));
    const f = join(d, 'config');
    await writeFileAtomic(f, 'one');
    await writeFileAtomic(f, 'two');
    assert.equal(await readFile(f, 'utf8'), 'two');
    assert.equal((await stat(f)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(d), ['config']);
  });

  it('keeps the old content and removes the temp file when the write fails', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-write-'));
    const f = join(d, 'config');
    await writeFile(f, 'old');
    // Renaming a file over a directory fails after the data is written: the old file must survive, whole.
    const target = join(d, 'adir');
    await (await import('node:fs/promises')).mkdir(target);
    await writeFile(join(target, 'x'), '');
    await assert.rejects(writeFileAtomic(target, 'new'));
    assert.deepEqual((await readdir(d)).sort(), ['adir', 'config']);
    // A failure while writing the data (after the temp file exists) leaves the target as it was.
    await assert.rejects(writeFileAtomic(f, 42 as unknown as string));
    assert.deepEqual((await readdir(d)).sort(), ['adir', 'config']);
    assert.equal(await readFile(f, 'utf8'), 'old');
  });
});
