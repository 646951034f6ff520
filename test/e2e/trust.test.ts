// Issue 14 against the real control plane: no silent success on an empty selection, file-cluster labels that -l can
// select, proxy-url through real local proxies (http CONNECT, https CONNECT, socks5), a plain-http server (kubectl
// proxy), can-i read as kubectl reads it, and an exec plugin that hangs bounded by --cluster-timeout.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { runFleet, type CliResult } from '../support/cli.js';
import { kubectl, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { makeCa, makeLeaf } from '../support/pki.js';
import { type RunningProxy, startConnectProxy, startSocks5Proxy } from '../support/proxies.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const hub = cp.hub;
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

/** No secret made for a test may appear in what fleet printed. */
function noSecrets(res: CliResult, secrets: string[]): void {
  for (const s of secrets) assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), 'a secret was printed');
}

/** A kubeconfig for alice on the hub, with extra cluster fields (proxy-url, another CA bundle, another server). */
function aliceKubeconfig(name: string, cluster: Record<string, unknown>, namespace?: string): string {
  const alice = tokenUser(hub, 'alice');
  const path = join(scratchDir(), `${uniqueName(name)}.kubeconfig`);
  writeFileSync(
    path,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': name,
      clusters: [
        {
          name,
          cluster: {
            server: hub.url,
            'certificate-authority-data': readFileSync(hub.caFile).toString('base64'),
            ...cluster,
          },
        },
      ],
      users: [{ name: 'alice', user: { token: alice.token } }],
      contexts: [{ name, context: { cluster: name, user: 'alice', ...(namespace ? { namespace } : {}) } }],
    }),
    { mode: 0o600 },
  );
  return path;
}

describe('no silent success (live)', () => {
  it('an empty selection is a one-line usage error (exit 2) for every command, naming what exists', async () => {
    const kc = tokenUser(hub, 'alice').kubeconfigPath;
    const secrets = [tokenUser(hub, 'alice').token];
    const cases: string[][] = [
      ['auth', 'can-i', 'get', 'pods', '-q', '-l', 'env=prod'],
      ['auth', 'rules', '--fail-on-risk', '-l', 'env=prod'],
      ['auth', 'whoami', '-l', 'env=prod'],
      ['clusters', 'list', '-l', 'env=prod'],
    ];
    for (const args of cases) {
      const res = await runFleet([...args, '--kubeconfig', kc]);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '');
      assert.match(
        res.stderr,
        /^error: --selector env=prod matched none of the 1 cluster; label keys in use: fleet\.dev\/auth, fleet\.dev\/cluster, fleet\.dev\/context, fleet\.dev\/file, fleet\.dev\/user\n$/,
      );
      noSecrets(res, secrets);
    }
    const ctx = await runFleet(['clusters', 'list', '--context', 'nope', '--kubeconfig', kc]);
    assert.equal(ctx.code, 2);
    assert.equal(ctx.stderr, `error: --context "nope": no such context in ${kc}; contexts: alice@hub\n`);
  });

  it('fleet.dev/ fields and labels from the fleet configuration select file clusters', async () => {
    const alice = tokenUser(hub, 'alice').kubeconfigPath;
    const bob = tokenUser(cp.members[0], 'bob').kubeconfigPath;
    const byContext = await runFleet([
      'auth',
      'whoami',
      '-l',
      'fleet.dev/context=bob@member-1',
      '--kubeconfig',
      `${alice}:${bob}`,
      '-o',
      'json',
    ]);
    assert.equal(byContext.code, 0, byContext.stderr);
    assert.deepEqual(
      byContext.json().items.map((i: any) => [i.cluster, i.user.username]),
      [[`${bob}+bob@member-1`, 'bob']],
    );

    const dir = scratchDir();
    const fleetYaml = join(dir, `${uniqueName('labels')}-fleet.yaml`);
    writeFileSync(
      fleetYaml,
      yaml.dump({
        apiVersion: 'fleet/v1alpha1',
        kind: 'FleetConfig',
        providers: [
          {
            name: 'files',
            type: 'file',
            kubeconfig: [alice, bob],
            labels: [{ labels: { team: 'platform' } }, { context: '*@member-*', labels: { env: 'prod' } }],
          },
        ],
      }),
    );
    const prod = await runFleet([
      'auth',
      'whoami',
      '-l',
      'env=prod,team=platform',
      '--fleet-config',
      fleetYaml,
      '-o',
      'json',
    ]);
    assert.equal(prod.code, 0, prod.stderr);
    assert.deepEqual(
      prod.json().items.map((i: any) => i.user.username),
      ['bob'],
    );
    const listed = await runFleet(['clusters', 'list', '-l', '!env', '--fleet-config', fleetYaml, '-o', 'name']);
    assert.deepEqual([listed.code, listed.stdout], [0, `${alice}+alice@hub\n`]);
  });
});

describe('proxy-url through real proxies to the real control plane (live)', () => {
  const proxies: RunningProxy[] = [];
  after(async () => {
    for (const p of proxies) await p.close();
  });

  async function whoamiThrough(proxy: RunningProxy, caBundle?: string): Promise<void> {
    const kc = aliceKubeconfig('via-proxy', {
      'proxy-url': proxy.url,
      ...(caBundle ? { 'certificate-authority-data': caBundle } : {}),
    });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json().items[0].user.username, 'alice');
    assert.ok(
      proxy.tunnels.includes(`127.0.0.1:${hub.port}`),
      `the proxy saw ${proxy.tunnels.join(', ') || 'nothing'}`,
    );
    noSecrets(res, [tokenUser(hub, 'alice').token]);
  }

  it('an http proxy (CONNECT)', async () => {
    const proxy = await startConnectProxy();
    proxies.push(proxy);
    await whoamiThrough(proxy);
  });

  it("an https proxy, trusted through the cluster's CA bundle as client-go trusts it", async () => {
    const dir = scratchDir();
    const ca = await makeCa(dir, uniqueName('proxy-ca'), 'fleet test proxy CA');
    const leaf = await makeLeaf({
      ca,
      dir,
      base: uniqueName('proxy'),
      cn: 'proxy',
      usage: 'server',
      ips: ['127.0.0.1'],
    });
    const proxy = await startConnectProxy({ tls: leaf });
    proxies.push(proxy);
    const bundle = Buffer.from(readFileSync(hub.caFile, 'utf8') + readFileSync(ca.certFile, 'utf8')).toString('base64');
    await whoamiThrough(proxy, bundle);
  });

  it('a socks5 proxy', async () => {
    const proxy = await startSocks5Proxy();
    proxies.push(proxy);
    await whoamiThrough(proxy);
  });

  it('a proxy that is down is an unreachable cluster, one line', async () => {
    const proxy = await startSocks5Proxy();
    await proxy.close();
    const kc = aliceKubeconfig('proxy-down', { 'proxy-url': proxy.url });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.equal(res.json().items[0].error.kind, 'unreachable');
    // The proxy is named as what failed, not the API server (which was never contacted).
    assert.match(
      res.json().items[0].error.message,
      new RegExp(
        `^proxy ${proxy.url.replace(/[.]/g, '\\.')}: connection refused: the proxy \\(proxy-url\\) failed, the API server ${hub.url.replace(/[.]/g, '\\.')} was not contacted$`,
      ),
    );
  });
});

describe('a plain-http server: kubectl proxy in front of the hub (live)', () => {
  let proxy: ReturnType<typeof spawn> | undefined;
  after(() => {
    if (proxy?.pid) process.kill(proxy.pid, 'SIGTERM');
  });

  it('is used, with one warning that the credential goes in clear', async () => {
    proxy = spawn(cp.binaries.kubectl, ['proxy', '--port=0', '--address=127.0.0.1', '--kubeconfig', hub.kubeconfig], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proxy!.stdout!.on('data', (d) => {
        out += d;
        const m = /Starting to serve on (127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(`http://${m[1]}`);
      });
      proxy!.on('exit', (code) => reject(new Error(`kubectl proxy exited with ${code}`)));
    });
    const kc = join(scratchDir(), `${uniqueName('plain-http')}.kubeconfig`);
    writeFileSync(
      kc,
      yaml.dump({
        clusters: [{ name: 'p', cluster: { server: url } }],
        users: [{ name: 'anyone', user: { token: 'tok-sent-in-clear-abcdefgh' } }],
        contexts: [{ name: 'p', context: { cluster: 'p', user: 'anyone' } }],
        'current-context': 'p',
      }),
    );
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    // kubectl proxy replaces the credential with its own (the hub admin).
    assert.equal(res.json().items[0].user.username, cp.admin.user);
    assert.equal(
      res.stderr,
      `warning: cluster "${kc}+p": server ${url} is plain http: the credential is sent in clear\n`,
    );
    noSecrets(res, ['tok-sent-in-clear-abcdefgh']);
  });
});

describe('can-i as kubectl reads it (live)', () => {
  const ns = uniqueName('trust-can-i');
  before(async () => {
    await grant(hub, {
      name: 'dave-reader',
      namespace: ns,
      createNamespace: true,
      subject: { kind: 'User', name: 'dave' },
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      ],
    });
  });

  it('deployments.v1.apps is resource.version.group', async () => {
    const kc = tokenUser(hub, 'dave').kubeconfigPath;
    const res = await runFleet([
      'auth',
      'can-i',
      'get',
      'deployments.v1.apps',
      '-n',
      ns,
      '--kubeconfig',
      kc,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json().items[0].attributes.resourceAttributes, {
      namespace: ns,
      verb: 'get',
      group: 'apps',
      resource: 'deployments',
    });
    assert.equal(res.json().items[0].allowed, true);
  });

  it('namespaces NAME is asked in that namespace, and agrees with what the server then allows', async () => {
    const kc = tokenUser(hub, 'dave').kubeconfigPath;
    const res = await runFleet(['auth', 'can-i', 'get', 'namespaces', ns, '--kubeconfig', kc, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json().items[0].attributes.resourceAttributes, {
      namespace: ns,
      verb: 'get',
      group: '',
      resource: 'namespaces',
      name: ns,
    });
    // The real request is allowed too.
    assert.match(
      await kubectl(hub, ['get', 'namespace', ns, '-o', 'name'], { kubeconfig: kc }),
      new RegExp(`namespace/${ns}`),
    );
    const other = await runFleet(['auth', 'can-i', 'get', 'namespaces', 'kube-system', '--kubeconfig', kc, '-q']);
    assert.equal(other.code, 1);
  });
});

describe('an exec plugin that hangs (live)', () => {
  it('is ended at --cluster-timeout and reported as a timeout, not as bad JSON', async () => {
    const pidFile = join(scratchDir(), `${uniqueName('hang')}.pid`);
    const kc = join(scratchDir(), `${uniqueName('hang')}.kubeconfig`);
    writeFileSync(
      kc,
      yaml.dump({
        clusters: [
          {
            name: 'h',
            cluster: { server: hub.url, 'certificate-authority-data': readFileSync(hub.caFile).toString('base64') },
          },
        ],
        users: [
          {
            name: 'h',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: process.execPath,
                args: [PLUGIN, '--hang', pidFile],
                interactiveMode: 'Never',
              },
            },
          },
        ],
        contexts: [{ name: 'h', context: { cluster: 'h', user: 'h' } }],
        'current-context': 'h',
      }),
    );
    const started = Date.now();
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '--cluster-timeout', '4s', '-o', 'json']);
    const took = Date.now() - started;
    assert.equal(res.code, 1, res.stderr);
    assert.deepEqual(res.json().items[0].error, {
      kind: 'timeout',
      message: 'no result within 4s (--cluster-timeout)',
    });
    assert.ok(took < 30_000, `took ${took} ms; the plugin's own limit is 60 s`);
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    let alive = true;
    for (let i = 0; i < 30 && alive; i++) {
      try {
        process.kill(grandchild, 0);
        const stat = readFileSync(`/proc/${grandchild}/stat`, 'utf8');
        alive = stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        alive = false;
      }
      if (alive) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(alive, false, "the plugin's child outlived the command");
  });
});
