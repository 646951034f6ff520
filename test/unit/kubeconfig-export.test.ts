// fleet kubeconfig export and kubeconfig credential without a cluster: names, the pinned exec arguments, the cache's
// policy (ends, refusals, 0600), and the two commands over a user's kubeconfig file (the file holds no secret; the
// credential comes back through the file provider from any working directory and with any KUBECONFIG).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import { runFleet } from '../support/cli.js';
import { CREDENTIAL_COMMAND, credentialArgs } from '../../src/export/credential-args.js';
import {
  CredentialCache,
  EXPIRY_MARGIN_SECONDS,
  STATIC_CREDENTIAL_SECONDS,
  cacheEnd,
  credentialCacheDir,
} from '../../src/export/credential-cache.js';
import { type ExecCluster, execCredentialJson, readExecRequest } from '../../src/export/exec-info.js';
import { type CredentialFlags, credentialIdentity, exportedFlags } from '../../src/export/credential-fast.js';
import { checkDestination, serverKey } from '../../src/export/credential.js';
import { ConfigError } from '../../src/base/errors.js';
import { duplicateName } from '../../src/export/export.js';
import { DEFAULT_NAME_TEMPLATE, nameTemplate } from '../../src/export/names.js';
import { FLEET_EXPORT_EXTENSION, exportMarkerOf } from '../../src/kubeconfig/export-marker.js';
import type { ClusterRef } from '../../src/providers/types.js';
import type { ClusterEntry } from '../../src/kubeconfig/types.js';

const dir = () => mkdtempSync(join(tmpdir(), 'fleet-export-'));

function ref(over: Partial<ClusterRef> & Pick<ClusterRef, 'name' | 'provider' | 'source'>): ClusterRef {
  return {
    aliases: [],
    auth: 'token',
    labels: {},
    ready: true,
    resolve: async () => assert.fail('not resolved here'),
    ...over,
  };
}

describe('names', () => {
  it('defaults to {provider}/{name}, a file context by its context name', () => {
    const name = nameTemplate(DEFAULT_NAME_TEMPLATE);
    assert.equal(
      name(
        ref({
          name: 'kc.yaml+prod',
          provider: 'file',
          source: { kind: 'kubeconfig-file', path: '/x/kc.yaml', context: 'prod' },
        }),
      ),
      'file/prod',
    );
    assert.equal(name(ref({ name: 'secrets#eu-1', provider: 'secrets', source: { kind: 'secret' } })), 'secrets/eu-1');
    assert.equal(
      nameTemplate('x-{id}')(ref({ name: 'secrets#eu-1', provider: 'secrets', source: { kind: 'secret' } })),
      'x-secrets#eu-1',
    );
  });

  it('names the two clusters a template gives one name', () => {
    assert.match(
      duplicateName(
        [
          { cluster: 'a#x', name: 'x' },
          { cluster: 'b#x', name: 'x' },
        ],
        '{name}',
      ) ?? '',
      /^--name-template "\{name\}": clusters "a#x" and "b#x" both get the context name "x"; use a template with \{id\}/,
    );
    assert.equal(
      duplicateName(
        [
          { cluster: 'a#x', name: 'a/x' },
          { cluster: 'b#x', name: 'b/x' },
        ],
        '{provider}/{name}',
      ),
      undefined,
    );
  });

  it('refuses an unknown placeholder, a stray brace and a template that names no cluster', () => {
    assert.throws(() => nameTemplate('{cluster}'), /--name-template: unknown placeholder \{cluster\}/);
    assert.throws(() => nameTemplate('a{name'), /--name-template: unbalanced brace/);
    assert.throws(() => nameTemplate('{provider}'), /names no cluster; include \{id\} or \{name\}/);
    assert.throws(() => nameTemplate(' '), /--name-template: empty/);
  });
});

describe('credentialArgs', () => {
  const env = { KUBECONFIG: '', HOME: '/nonexistent' };
  it('pins a file provider by absolute paths and its <file>+<context> name', () => {
    const r = ref({
      name: 'kc.yaml+prod',
      provider: 'file',
      source: { kind: 'kubeconfig-file', path: '/work/kc.yaml', context: 'prod' },
    });
    assert.deepEqual(credentialArgs(r, { kubeconfig: ['kc.yaml'], cwd: '/work', env }), [
      ...CREDENTIAL_COMMAND,
      '--cluster',
      '/work/kc.yaml+prod',
      '--provider',
      'file',
      '--kubeconfig',
      '/work/kc.yaml',
    ]);
  });

  it('pins the fleet configuration and the hub (its files and context) for a hub provider', () => {
    const config = {
      path: 'fleet.yaml',
      hub: { kubeconfig: ['/h/hub.kubeconfig'] },
      providers: [{ type: 'kubeconfig' as const, name: 'secrets', origin: 'x' }],
    };
    const r = ref({ name: 'secrets#eu-1', provider: 'secrets', source: { kind: 'secret', hub: 'kind-hub' } });
    assert.deepEqual(credentialArgs(r, { config: config, cwd: '/work', env }), [
      ...CREDENTIAL_COMMAND,
      '--cluster',
      'eu-1',
      '--provider',
      'secrets',
      '--fleet-config',
      '/work/fleet.yaml',
      '--kubeconfig',
      '/h/hub.kubeconfig',
      '--context',
      'kind-hub',
    ]);
  });

  it('pins the loading rules of the export when the hub came from them', () => {
    const d = dir();
    writeFileSync(join(d, 'a'), 'apiVersion: v1\n');
    const r = ref({ name: 'eu-1', provider: 'capi', source: { kind: 'cluster-api', hub: 'h' } });
    const args = credentialArgs(r, { provider: 'capi', cwd: d, env: { KUBECONFIG: `a:missing` } });
    assert.deepEqual(args.slice(-4), ['--kubeconfig', join(d, 'a'), '--context', 'h']);
  });
});

describe('exec request', () => {
  const INFO = (cluster: unknown) =>
    JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false, cluster },
    });

  it('reads the version, server, CA and TLS settings client-go passes, and refuses what is not an ExecCredential', () => {
    const r = readExecRequest(
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        kind: 'ExecCredential',
        spec: { cluster: { server: 'https://a', 'certificate-authority-data': 'Zm9v', 'tls-server-name': 'k' } },
      }),
    );
    assert.equal(r.apiVersion, 'client.authentication.k8s.io/v1beta1');
    assert.equal(r.cluster.server, 'https://a');
    assert.equal(r.cluster.caData, 'Zm9v');
    assert.match(r.cluster.caHash ?? '', /^[0-9a-f]{64}$/);
    assert.equal(r.cluster.tlsServerName, 'k');
    assert.equal(r.cluster.insecure, false);
    assert.equal(
      readExecRequest(INFO({ server: 'https://a', 'insecure-skip-tls-verify': true })).cluster.insecure,
      true,
    );
    assert.throws(() => readExecRequest('{'), /KUBERNETES_EXEC_INFO: not valid JSON/);
    assert.throws(() => readExecRequest('{"kind":"Pod"}'), /not an ExecCredential/);
    assert.throws(() => readExecRequest('{"kind":"ExecCredential","apiVersion":"v9"}'), /apiVersion "v9"/);
  });

  // Issue 38: run without the cluster (provideClusterInfo: false, or by hand), or with a server that is not a string,
  // the credential went out for whatever server kubectl used.
  it('refuses, exit 2, without cluster info or with a server that is not a non-empty string', () => {
    const refused = (raw: string | undefined, message: RegExp) =>
      assert.throws(
        () => readExecRequest(raw),
        (e: Error) =>
          e instanceof ConfigError && e.exitCode === 2 && message.test(e.message) && !e.message.includes('\n'),
      );
    refused(undefined, /^KUBERNETES_EXEC_INFO is not set: .*provideClusterInfo: true/);
    refused('  ', /^KUBERNETES_EXEC_INFO is not set/);
    refused(
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: { interactive: false },
      }),
      /no spec\.cluster \(the exec entry has provideClusterInfo: false\?\)/,
    );
    refused(
      JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential' }),
      /no spec\.cluster/,
    );
    for (const server of [42, { host: 'https://a' }, ['https://a'], null, true, ''])
      refused(INFO({ server }), /spec\.cluster\.server is not a non-empty string/);
    refused(INFO({ Server: 'https://a' }), /spec\.cluster\.server is not a non-empty string/);
    refused(
      INFO({ server: 'https://a', 'certificate-authority-data': 7 }),
      /certificate-authority-data is not a string/,
    );
    refused(
      INFO({ server: 'https://a', 'insecure-skip-tls-verify': 'true' }),
      /insecure-skip-tls-verify is not a boolean/,
    );
    refused(INFO({ server: 'https://a', 'tls-server-name': 1 }), /tls-server-name is not a string/);
  });
  it('always carries expirationTimestamp, and a certificate only with its key', () => {
    const out = JSON.parse(
      execCredentialJson(
        'client.authentication.k8s.io/v1',
        { token: 't', clientCertificateData: 'c' },
        '2030-01-01T00:00:00Z',
      ),
    );
    assert.deepEqual(out.status, { token: 't', expirationTimestamp: '2030-01-01T00:00:00Z' });
  });
});

describe('a credential only for the server and CA the provider names (issue 38, item 3)', () => {
  const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBcA==\n-----END CERTIFICATE-----\n').toString('base64');
  const to = (server: string, more: Partial<ExecCluster> = {}): ExecCluster => ({
    server,
    insecure: false,
    caData: CA,
    ...more,
  });

  it('compares servers as kubectl treats them: trailing slash, default port and host case are one server', () => {
    for (const [a, b] of [
      ['https://Api.Example.COM:443/', 'https://api.example.com'],
      ['https://10.0.0.1:6443//', 'https://10.0.0.1:6443'],
      ['HTTPS://h:443/base/', 'https://h/base'],
      ['http://h:80', 'http://h/'],
      ['https://[::1]:443', 'https://[::1]'],
    ])
      assert.equal(serverKey(a), serverKey(b), `${a} ~ ${b}`);
    for (const [a, b] of [
      ['https://h:6443', 'https://h:6444'],
      ['https://h', 'http://h'],
      ['https://h/a', 'https://h/b'],
      ['https://h', 'https://h.evil.example'],
      ['https://u@h', 'https://h'],
      ['https://h?x=1', 'https://h'],
    ])
      assert.notEqual(serverKey(a), serverKey(b), `${a} vs ${b}`);
  });

  it('refuses another server, another CA bundle, a CA where the provider has none, skipped verification, another TLS name', async () => {
    const own = { server: 'https://api.example.com:6443', 'certificate-authority-data': CA };
    await checkDestination('c', own, to('https://API.example.com:6443/'));
    const refused = async (o: ClusterEntry, t: ExecCluster, message: RegExp) =>
      assert.rejects(
        checkDestination('c', o, t),
        (e: Error) => e instanceof ConfigError && e.exitCode === 2 && message.test(e.message),
      );
    await refused(
      own,
      to('https://evil.example:6443'),
      /^c: kubectl is connecting to https:\/\/evil\.example:6443, but its provider names https:\/\/api\.example\.com:6443; run fleet kubeconfig export again$/,
    );
    await refused(
      own,
      to('https://api.example.com:6443', { caData: Buffer.from('another bundle').toString('base64') }),
      /another CA than its provider names/,
    );
    await refused(own, to('https://api.example.com:6443', { caData: undefined }), /another CA/);
    await refused({ server: own.server }, to('https://api.example.com:6443'), /another CA/);
    await refused(
      own,
      to('https://api.example.com:6443', { insecure: true, caData: undefined }),
      /kubectl skips TLS verification \(insecure-skip-tls-verify\), which its provider does not/,
    );
    await refused(
      own,
      to('https://api.example.com:6443', { tlsServerName: 'other' }),
      /kubectl verifies the server as "other", but its provider names tls-server-name ""/,
    );
    // The system roots on both sides: nothing to compare but the server.
    await checkDestination('c', { server: own.server }, to(own.server, { caData: undefined }));
    // A provider that skips verification itself: the server binds the credential (kubectl may verify more, not less).
    await checkDestination(
      'c',
      { server: own.server, 'insecure-skip-tls-verify': true },
      to(own.server, { caData: undefined, insecure: true }),
    );
    await checkDestination(
      'c',
      { server: own.server, 'insecure-skip-tls-verify': true },
      to(own.server, { caData: undefined }),
    );
    // A CA file: its bytes are what is compared.
    const f = join(dir(), 'ca.crt');
    writeFileSync(f, Buffer.from(CA, 'base64'));
    await checkDestination('c', { server: own.server, 'certificate-authority': f }, to(own.server));
  });
});

describe("the launcher's fast path", () => {
  it('reads only the exported form of the arguments; anything else goes to the full command', () => {
    const args = [
      '--cluster',
      'eu-1',
      '--provider',
      'secrets',
      '--fleet-config',
      '/f.yaml',
      '--kubeconfig',
      '/a:/b',
      '--context',
      'hub',
    ];
    assert.deepEqual(exportedFlags(args), {
      cluster: 'eu-1',
      provider: 'secrets',
      'fleet-config': '/f.yaml',
      kubeconfig: '/a:/b',
      context: 'hub',
    });
    for (const other of [
      ['--cluster=eu-1'],
      ['--provider', 'p'],
      ['--cluster', 'a', '--cluster', 'b'],
      ['--cluster', 'a', '-v'],
      ['--cluster', 'a', '-o', 'json'],
      ['--cluster', 'a', '--provider'],
    ]) {
      assert.equal(exportedFlags(other), undefined, other.join(' '));
    }
  });

  it('keys the cache as the command does: two servers or two fleet configurations never share an entry', () => {
    const at = (server: string, more: Partial<ExecCluster> = {}): ExecCluster => ({ server, insecure: false, ...more });
    const key = (flags: CredentialFlags, cluster: ExecCluster) =>
      new CredentialCache(credentialIdentity(flags, cluster), '/c').path;
    const a = key({ cluster: 'x', 'fleet-config': '/a.yaml' }, at('https://s'));
    assert.notEqual(a, key({ cluster: 'x', 'fleet-config': '/b.yaml' }, at('https://s')));
    assert.notEqual(a, key({ cluster: 'x', 'fleet-config': '/a.yaml' }, at('https://t')));
    // Bound to what kubectl verifies the server with too: another CA, TLS name, or no verification is another entry.
    assert.notEqual(a, key({ cluster: 'x', 'fleet-config': '/a.yaml' }, at('https://s', { caHash: 'ab' })));
    assert.notEqual(a, key({ cluster: 'x', 'fleet-config': '/a.yaml' }, at('https://s', { insecure: true })));
    assert.notEqual(a, key({ cluster: 'x', 'fleet-config': '/a.yaml' }, at('https://s', { tlsServerName: 'n' })));
    assert.equal(a, key({ 'fleet-config': '/a.yaml', cluster: 'x' }, at('https://s')));
  });
});

describe('credential cache', () => {
  it('lives under XDG_CACHE_HOME (absolute only), else ~/.cache', () => {
    assert.equal(credentialCacheDir({ XDG_CACHE_HOME: '/c', HOME: '/h' }), '/c/fleet/credentials');
    assert.equal(credentialCacheDir({ XDG_CACHE_HOME: 'rel', HOME: '/h' }), '/h/.cache/fleet/credentials');
  });

  it('ends a static credential after the bound, an expiring one a margin before its own end', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    assert.equal(cacheEnd(undefined, now), now + STATIC_CREDENTIAL_SECONDS * 1000);
    assert.equal(cacheEnd('2030-01-01T01:00:00Z', now), now + 3600_000 - EXPIRY_MARGIN_SECONDS * 1000);
    // Within the margin: handed out until its own end (and not kept).
    assert.equal(cacheEnd('2030-01-01T00:00:10Z', now), now + 10_000);
  });

  it('a failure is said once per kubectl process within a minute; records past that are swept, not left one per process', async () => {
    const d = dir();
    const cache = new CredentialCache({ cluster: 'revoked' }, d);
    const now = Date.now();
    assert.equal(await cache.firstFailure(100, now), true);
    assert.equal(await cache.firstFailure(100, now + 1000), false, 'the same kubectl: silent');
    assert.equal(await cache.firstFailure(200, now + 1000), true, 'another kubectl: said');
    // Five kubectl processes an hour ago, as k9s leaves them over a day: swept at the next failure.
    const base = basename(cache.path, '.json');
    for (const pid of [1, 2, 3, 4, 5]) {
      const f = join(d, `${base}.failed-${pid}`);
      writeFileSync(f, '', { mode: 0o600 });
      utimesSync(f, new Date(now - 3600_000), new Date(now - 3600_000));
    }
    assert.equal(await cache.firstFailure(300, now + 2000), true);
    assert.deepEqual(
      readdirSync(d)
        .filter((n) => n.includes('.failed-'))
        .sort(),
      [`${base}.failed-100`, `${base}.failed-200`, `${base}.failed-300`],
    );
  });

  it('hands a credential to each parent once, drops it on the second ask, and remembers it as refused', async () => {
    const d = dir();
    const cache = new CredentialCache({ cluster: 'a' }, d);
    const now = Date.now();
    await cache.store('a', { token: 'tok-1-abcdefgh' }, now + 60_000, 100, now);
    assert.equal(statSync(cache.path).mode & 0o777, 0o600);
    assert.equal(statSync(d).mode & 0o777, 0o700);
    assert.equal(await cache.take('b', 200, now), undefined, 'an entry of another cluster is not given');
    assert.equal((await cache.take('a', 200, now))?.credential.token, 'tok-1-abcdefgh');
    // 100 was handed it at store: asking again before the end means the server refused it.
    assert.equal(await cache.take('a', 100, now), undefined);
    assert.equal(await cache.take('a', 300, now), undefined, 'dropped for everyone');
    assert.equal(await cache.suspected({ token: 'tok-1-abcdefgh' }), true);
    assert.equal(await cache.suspected({ token: 'tok-2-abcdefgh' }), false);
    assert.ok(
      !readFileSync(cache.path, 'utf8').includes('tok-1'),
      'a refused credential is not kept, only its fingerprint',
    );
    // A fresh one stored: no suspect any more.
    await cache.store('a', { token: 'tok-2-abcdefgh' }, now + 60_000, 100, now);
    assert.equal(await cache.suspected({ token: 'tok-1-abcdefgh' }), false);
    // Two identities never share a file.
    assert.notEqual(new CredentialCache({ cluster: 'a', server: 'https://x' }, d).path, cache.path);
  });

  it('is not used in a directory others may write to', async () => {
    const d = dir();
    chmodSync(d, 0o777);
    const cache = new CredentialCache({ cluster: 'c' }, d);
    const now = Date.now();
    await cache.store('c', { token: 'tok-c-abcdefgh' }, now + 60_000, 1, now);
    assert.equal(await cache.take('c', 2, now), undefined);
    assert.deepEqual(readdirSync(d), []);
  });

  it('gives nothing after the end', async () => {
    const cache = new CredentialCache({ cluster: 'b' }, dir());
    const now = Date.now();
    await cache.store('b', { token: 'tok-b-abcdefgh' }, now + 1000, 1, now);
    assert.equal(await cache.take('b', 2, now + 1000), undefined);
  });
});

describe('kubeconfig export and credential over a kubeconfig file', () => {
  const TOKEN = 'file-token-0123456789abcdef';
  const setup = () => {
    const d = dir();
    const kc = join(d, 'kc.yaml');
    writeFileSync(
      kc,
      `apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://127.0.0.1:9", certificate-authority-data: Zm9v}}
- {name: b, cluster: {server: "https://127.0.0.1:10"}}
users:
- {name: u, user: {token: ${TOKEN}}}
- {name: basic, user: {username: me, password: pa55word-secret}}
contexts:
- {name: one, context: {cluster: a, user: u, namespace: ns1}}
- {name: two, context: {cluster: b, user: basic}}
current-context: one
`,
    );
    return { d, kc };
  };

  it('writes one marked exec context per cluster, 0600, with no secret, and the credential finds the token from anywhere', async () => {
    const { d, kc } = setup();
    const out = join(d, 'out.yaml');
    const env = { XDG_CACHE_HOME: join(d, 'cache') };
    const r = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--out', out, '-o', 'json'], {
      cwd: d,
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const text = readFileSync(out, 'utf8');
    for (const s of [TOKEN, 'pa55word-secret'])
      assert.ok(!text.includes(s) && !r.stdout.includes(s) && !r.stderr.includes(s));
    const doc = yaml.load(text) as any;
    assert.deepEqual(
      doc.contexts.map((c: any) => c.name),
      ['file/one', 'file/two'],
    );
    for (const kind of ['clusters', 'users', 'contexts'])
      for (const e of doc[kind])
        assert.equal(
          exportMarkerOf(e[kind.slice(0, -1)])?.cluster !== undefined,
          true,
          `${kind} ${e.name} carries ${FLEET_EXPORT_EXTENSION}`,
        );
    const exec = doc.users[0].user.exec;
    assert.deepEqual(
      { ...exec, args: undefined, installHint: undefined },
      {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'fleet',
        args: undefined,
        provideClusterInfo: true,
        interactiveMode: 'Never',
        installHint: undefined,
      },
    );
    assert.equal(doc.contexts[0].context.namespace, 'ns1');
    assert.equal(doc.clusters[0].cluster['certificate-authority-data'], 'Zm9v');
    assert.deepEqual(
      r.json().items.map((i: any) => i.context),
      ['file/one', 'file/two'],
    );

    // kubectl runs it with its own KUBECONFIG (the exported file) from another directory.
    const info = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://127.0.0.1:9', 'certificate-authority-data': 'Zm9v' } },
    });
    const other = dir();
    const c = await runFleet(exec.args, { cwd: other, env: { ...env, KUBECONFIG: out, KUBERNETES_EXEC_INFO: info } });
    assert.equal(c.code, 0, c.stderr);
    const cred = JSON.parse(c.stdout);
    assert.equal(cred.status.token, TOKEN);
    const end = Date.parse(cred.status.expirationTimestamp);
    assert.ok(
      end > Date.now() && end <= Date.now() + STATIC_CREDENTIAL_SECONDS * 1000,
      cred.status.expirationTimestamp,
    );
    // The entry, and the record of its handover to this parent (a file of its own: issue 38, item 4).
    const files = readdirSync(join(d, 'cache/fleet/credentials')).sort();
    assert.equal(files.length, 2, files.join(' '));
    assert.match(files[0], /^[0-9a-f]{64}\.handed-[0-9a-f]{32}-\d+$/);
    assert.match(files[1], /^[0-9a-f]{64}\.json$/);
    for (const f of files) assert.equal(statSync(join(d, 'cache/fleet/credentials', f)).mode & 0o777, 0o600);

    // Rotated in the file: the next ask from this parent (as client-go after a 401) gets the new one at once.
    writeFileSync(kc, readFileSync(kc, 'utf8').replace(TOKEN, 'rotated-token-0123456789'));
    const rotated = await runFleet(exec.args, { cwd: other, env: { ...env, KUBERNETES_EXEC_INFO: info } });
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(JSON.parse(rotated.stdout).status.token, 'rotated-token-0123456789');

    // Another server than the provider's: refused, nothing printed.
    const elsewhere = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://evil.example', 'certificate-authority-data': 'Zm9v' } },
    });
    const e = await runFleet(exec.args, { cwd: other, env: { ...env, KUBERNETES_EXEC_INFO: elsewhere } });
    assert.equal(e.code, 2);
    assert.match(
      e.stderr,
      /kubectl is connecting to https:\/\/evil\.example, but its provider names https:\/\/127\.0\.0\.1:9/,
    );
    assert.equal(e.stdout, '');

    // Issue 38: no KUBERNETES_EXEC_INFO and no kubeconfig file naming this entry (issue 46 item 6: exec-view.test.ts),
    // an entry with provideClusterInfo: false, a server that is not a string, or another CA: refused with one line,
    // exit 2, no token anywhere, and no cache entry written for it.
    const fresh = join(d, 'cache-2');
    for (const [execInfo, message] of [
      [undefined, /^error: KUBERNETES_EXEC_INFO is not set \(kubectl sets it; this client does not\), and no context /],
      [
        JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { interactive: false },
        }),
        /^error: KUBERNETES_EXEC_INFO: no spec\.cluster/,
      ],
      [
        JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { cluster: { server: ['https://127.0.0.1:9'], 'certificate-authority-data': 'Zm9v' } },
        }),
        /^error: KUBERNETES_EXEC_INFO: spec\.cluster\.server is not a non-empty string/,
      ],
      [
        JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { cluster: { server: 'https://127.0.0.1:9', 'certificate-authority-data': 'YmFy' } },
        }),
        /another CA than its provider names/,
      ],
    ] as const) {
      const refused = await runFleet(exec.args, {
        cwd: other,
        env: { XDG_CACHE_HOME: fresh, KUBERNETES_EXEC_INFO: execInfo },
      });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, message);
      assert.equal(refused.stderr.trimEnd().split('\n').length, 1, refused.stderr);
      assert.equal(refused.stdout, '');
      assert.ok(!refused.stderr.includes(TOKEN) && !refused.stderr.includes('rotated-token'));
      const cacheFiles = existsSync(join(fresh, 'fleet/credentials'))
        ? readdirSync(join(fresh, 'fleet/credentials'))
        : [];
      assert.deepEqual(cacheFiles, [], 'no cache entry');
    }

    // Basic authentication cannot be passed on: one line, no password.
    const infoB = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://127.0.0.1:10' } },
    });
    const basic = await runFleet(doc.users[1].user.exec.args, {
      cwd: other,
      env: { ...env, KUBERNETES_EXEC_INFO: infoB },
    });
    assert.equal(basic.code, 1);
    assert.match(basic.stderr, /uses basic authentication/);
    assert.ok(!basic.stderr.includes('pa55word-secret'));
  });

  it('asks the server about a credential its parent asked for twice: refused there, an error; accepted, handed out again', async () => {
    let status = 401;
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/api' ? status : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          status === 401
            ? { kind: 'Status', code: 401, message: 'Unauthorized' }
            : { kind: 'APIVersions', versions: ['v1'] },
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const d = dir();
      const kc = join(d, 'kc.yaml');
      writeFileSync(
        kc,
        `apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {token: ${TOKEN}}}]\ncontexts: [{name: one, context: {cluster: a, user: u}}]\n`,
      );
      const env = {
        XDG_CACHE_HOME: join(d, 'cache'),
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { cluster: { server: url } },
        }),
      };
      const args = ['kubeconfig', 'credential', '--cluster', `${kc}+one`, '--provider', 'file', '--kubeconfig', kc];
      assert.equal((await runFleet(args, { env })).code, 0);
      // The same parent (this test) asks again before the end, the file holds the same token, and the server says 401.
      const refused = await runFleet(args, { env });
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /^error: .*the server refuses this credential and the provider still holds the same one/m,
      );
      assert.equal(refused.stdout, '');
      assert.ok(!refused.stderr.includes(TOKEN));
      // The server takes it (another client of the same process asked, not a 401): handed out, not an error.
      status = 200;
      const accepted = await runFleet(args, { env });
      assert.equal(accepted.code, 0, accepted.stderr);
      assert.equal(JSON.parse(accepted.stdout).status.token, TOKEN);
    } finally {
      server.close();
    }
  });

  it('prints the kubeconfig without --out, refuses bad flags before reading anything, and --dry-run writes nothing', async () => {
    const { d } = setup();
    const r = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '-c', 'one'], { cwd: d });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((yaml.load(r.stdout) as any).contexts[0].name, 'file/one');
    const bad = await runFleet(
      ['kubeconfig', 'export', '--kubeconfig', 'missing.yaml', '--all', '--name-template', '{nope}'],
      { cwd: d },
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error: --name-template: unknown placeholder \{nope\}/);
    const rel = await runFleet(['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--command', 'bin/fleet'], {
      cwd: d,
    });
    assert.equal(rel.code, 2);
    assert.match(rel.stderr, /--command: bin\/fleet is a relative path/);
    const dry = await runFleet(
      ['kubeconfig', 'export', '--kubeconfig', 'kc.yaml', '--all', '--out', 'o.yaml', '--dry-run', '-o', 'json'],
      { cwd: d },
    );
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json().dryRun, true);
    assert.throws(() => statSync(join(d, 'o.yaml')));
  });
});
