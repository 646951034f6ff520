// fleet kubeconfig export and the exec credential behind it, used by kubectl on the real control plane (issue 30): one
// exported context per provider kind (a kubeconfig file, a hub kubeconfig Secret, a Cluster API Secret holding a client
// certificate, a ClusterProfile whose access provider is cluster-inventory-api's kubeconfig-secretreader plugin, kcp
// workspaces) and per kind of a file's own credential (a token, an exec plugin minting 15-minute tokens, workload
// identity through fleet wi token), all merged into one file; kubectl 1.34 (the harness's) and 1.35 (k8s.io/kubectl v0.35, with a kuberc whose
// credentialPluginPolicy is Allowlist, written by --write-kuberc) run `get ns` and `auth whoami` through every context;
// a hub Secret's credential rotated then revoked reaches kubectl (the new one after the cache's 60 s bound, then a
// refusal); client-go and the Python kubernetes client list namespaces through every context; and through fleet-credential (the Go reader in front of fleet) a warm call never starts fleet; an
// interrupted export leaves no file. Every output, the cache and the exported file are grepped for the
// credentials the test made.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import { writeConsumerFleet } from '../support/consumer-fleet.js';
import { startCapture } from '../support/capture.js';
import { makeLeaf } from '../support/pki.js';
import { type Kcp, startKcp } from '../support/kcp.js';
import { kubeconfigInSecret, tokenRequestExecUser } from '../support/kubeconfig.js';
import { blackhole } from '../support/stall-servers.js';
import {
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
  writeKubeconfig,
  deleteFleetObjectsOf,
} from '../support/fixture.js';
import { STATIC_CREDENTIAL_SECONDS } from '../../src/export/credential-cache.js';
import { FLEET_EXPORT_EXTENSION } from '../../src/kubeconfig/export-marker.js';
import { buildScriptOutput } from '../support/binaries.js';
import { assertLibrariesList, runDefaultLoaders } from '../support/kubeconfig-consumers.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('kexp');
const nsSys = `${run}-sys`;
const hubNs = `${run}-hub`;
const consumer = `${run}-consumer`;
const execNs = `${run}-exec`;
const KUBECTL_135_BUILD = fileURLToPath(new URL('../kubectl-135/build.sh', import.meta.url));
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
// bin/run.js is #!/usr/bin/env node: Node 22+ first on PATH for kubectl's child too.
const PATH = `${dirname(process.execPath)}:${process.env.PATH}`;
const healthy = {
  conditions: [
    {
      type: 'ControlPlaneHealthy',
      status: 'True',
      reason: 'Healthy',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ],
};

const secrets = new Set<string>();
const outputs: Array<{ what: string; out: string }> = [];
let dir: string;
let home: string;
let cache: string;
let fleetYaml: string;
let merged: string;
let kuberc: string;
let kubectl135: string;
/** fleet-credential (cmd/fleet-credential), built for this machine. */
let reader: string;
let kcp: Kcp | undefined;
let kcpStarted: Promise<Kcp>;
/** The exported contexts: name -> who kubectl must be there. */
const expected = new Map<string, string>();

const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

function remember(text: string): void {
  const u = (yaml.load(text) as any).users[0].user;
  if (u.token) secrets.add(u.token);
  if (u['client-key-data']) {
    secrets.add(u['client-key-data']);
    secrets.add(decode(u['client-key-data']).trim());
  }
}

async function fleet(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000, env: { PATH, XDG_CACHE_HOME: cache, ...env } });
  outputs.push({ what: `fleet ${args.join(' ')}`, out: res.stdout + res.stderr });
  return res;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl as a person runs it: KUBECONFIG the merged file, an empty HOME, fleet's cache in the scratch dir. */
function kube(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { env: { PATH, HOME: home, XDG_CACHE_HOME: cache, KUBECONFIG: merged, ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        outputs.push({ what: `kubectl ${args.join(' ')}`, out: stdout + stderr });
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

async function generate(sa: string, name: string, format: string, extra: string[] = []): Promise<void> {
  const who = extra.includes('client-cert') ? [] : ['--service-account', `${nsSys}/${sa}`];
  const res = await fleet([
    'creds',
    'generate',
    ...MEMBER,
    ...HUB,
    ...who,
    '--cluster-role',
    'view',
    '--create-namespace',
    '--duration',
    '2h',
    '--secret',
    `${hubNs}/${name}`,
    '--format',
    format,
    ...extra,
    '-o',
    'json',
  ]);
  assert.equal(res.code, 0, res.stderr);
  remember(kubeconfigInSecret(await hubSecret(format === 'cluster-api' ? `${name}-kubeconfig` : name)));
}

async function profile(name: string): Promise<void> {
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: { name, namespace: hubNs },
      spec: { clusterManager: { name: 'fleet-e2e' } },
    }),
  );
  await kubectl(hub, [
    'patch',
    'clusterprofiles',
    name,
    '-n',
    hubNs,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: healthy }),
  ]);
}

/**
 * KUBERNETES_EXEC_INFO as kubectl fills it for an exported context (provideClusterInfo: true): the cluster entry's
 * server, CA bytes (base64), TLS server name and skipped verification, which the credential command compares with the
 * provider's.
 */
function execInfoFor(context: string): string {
  const c = (yaml.load(readFileSync(merged, 'utf8')) as any).clusters.find((e: any) => e.name === context).cluster;
  const cluster = {
    server: c.server,
    'certificate-authority-data': c['certificate-authority-data'],
    'tls-server-name': c['tls-server-name'],
    'insecure-skip-tls-verify': c['insecure-skip-tls-verify'],
  };
  return JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { cluster } });
}

/** A JWT, a PEM key, or a credential this test made, in any output or file. */
function assertClean(what: string, text: string): void {
  assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, `a JWT appears in ${what}`);
  assert.doesNotMatch(text, /PRIVATE KEY/, `a private key appears in ${what}`);
  for (const s of secrets) assert.ok(!text.includes(s), `a credential appears in ${what}`);
}

before(async () => {
  dir = scratchDir();
  home = join(dir, `${run}-home`);
  cache = join(dir, `${run}-cache`);
  mkdirSync(home, { recursive: true });
  merged = join(dir, `${run}-merged.kubeconfig`);
  kuberc = join(dir, `${run}.kuberc`);
  // The user's own kubeconfig already holds a context of theirs (its credential in a file): the merge leaves it as it is.
  const mine = yaml.load(readFileSync(m1.kubeconfig, 'utf8')) as any;
  writeFileSync(
    merged,
    `# my own kubeconfig\n${yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'mine', cluster: mine.clusters[0].cluster }],
      users: [{ name: 'me', user: { tokenFile: join(dir, 'my-token') } }],
      contexts: [{ name: 'mine', context: { cluster: 'mine', user: 'me', namespace: 'default' } }],
      'current-context': 'mine',
    })}`,
    { mode: 0o600 },
  );
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  fleetYaml = writeConsumerFleet({ dir, run, hubNs, consumer });
  // kcp takes about a minute to start: in the background, while the other providers' tests run.
  kcpStarted = startKcp({ frontProxy: true });
  kcpStarted.catch(() => undefined);
  const start = Date.now();
  kubectl135 = buildScriptOutput(KUBECTL_135_BUILD);
  console.log(`kubectl 1.35 ready after ${Date.now() - start} ms`);
  reader = buildScriptOutput(fileURLToPath(new URL('../../cmd/fleet-credential/build.sh', import.meta.url)));
});

after(async () => {
  await (kcp ?? (await kcpStarted.catch(() => undefined)))?.stop();
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', execNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'clusterrolebinding', `${run}-cloud-view`, '--wait=false']);
  await kubectlResult(m1, ['delete', 'clusterrolebinding', `${run}-wi-view`, '--wait=false']);
  await kubectlResult(hub, ['delete', 'namespace', execNs, '--wait=false']);
  await deleteFleetObjectsOf(m1, 'clusterrole,clusterrolebinding', run);
});

describe('fleet kubeconfig export, used by kubectl', { concurrency: false }, () => {
  it("exports one context per provider kind, merged into a kubeconfig that keeps the user's own entries", async () => {
    // A kubeconfig file holding a token (the user's own credential).
    const filePath = join(dir, `${run}-file.kubeconfig`);
    const gen = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/filer`,
      '--cluster-role',
      'view',
      '--create-namespace',
      '--duration',
      '1h',
      '--out',
      filePath,
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
    remember(readFileSync(filePath, 'utf8'));
    // A hub kubeconfig Secret (multicluster-runtime), a Cluster API Secret with a client certificate, and a ClusterProfile
    // whose access provider (the upstream kubeconfig-secretreader plugin) reads a Secret on the hub.
    await generate('mcr', 'member-1', 'multicluster-runtime');
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'work', namespace: hubNs },
        spec: {},
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusters.cluster.x-k8s.io',
      'work',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { initialization: { controlPlaneInitialized: true } } }),
    ]);
    await generate('', 'work', 'cluster-api', ['--method', 'client-cert', '--user', `${run}-ci`, '--group', 'ci']);
    await profile('kcsr');
    await generate('kcsr', 'kcsr-cred', 'kubeconfig-secretreader', ['--update-profile', `${hubNs}/kcsr`]);
    // A kubeconfig file whose user runs an exec plugin like a cloud CLI's: a real 15-minute token with its expiry.
    await kubectl(m1, ['create', 'namespace', execNs]);
    await kubectl(m1, ['create', 'serviceaccount', 'cloud', '-n', execNs]);
    await kubectl(m1, [
      'create',
      'clusterrolebinding',
      `${run}-cloud-view`,
      '--clusterrole',
      'view',
      `--serviceaccount=${execNs}:cloud`,
    ]);
    const execPath = writeKubeconfig({
      path: join(dir, `${run}-exec.kubeconfig`),
      server: m1.url,
      caFile: m1.caFile,
      context: 'cloud',
      user: tokenRequestExecUser(cp, m1, { namespace: execNs, serviceAccount: 'cloud' }),
    });
    // A kubeconfig file whose user is workload identity (fleet wi token): a hub ServiceAccount token the member trusts.
    await kubectl(hub, ['create', 'namespace', execNs]);
    await kubectl(hub, ['create', 'serviceaccount', 'wi', '-n', execNs]);
    await kubectl(m1, [
      'create',
      'clusterrolebinding',
      `${run}-wi-view`,
      '--clusterrole',
      'view',
      `--user=hub:system:serviceaccount:${execNs}:wi`,
    ]);
    const wiPath = join(dir, `${run}-wi.kubeconfig`);
    const wiExec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: FLEET_BIN,
      args: ['wi', 'token', '--service-account', `${execNs}/wi`, '--hub-kubeconfig', hub.kubeconfig],
      provideClusterInfo: true,
      interactiveMode: 'Never',
    };
    writeFileSync(
      wiPath,
      yaml.dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'm1',
            cluster: { server: m1.url, 'certificate-authority-data': readFileSync(m1.caFile).toString('base64') },
          },
        ],
        users: [{ name: 'wi', user: { exec: wiExec } }],
        contexts: [{ name: 'wi', context: { cluster: 'm1', user: 'wi' } }],
      }),
      { mode: 0o600 },
    );
    const before = readFileSync(merged, 'utf8');

    const exports: Array<{ args: string[]; who: string[] }> = [
      { args: ['--kubeconfig', filePath, '--all'], who: [`system:serviceaccount:${nsSys}:filer`] },
      {
        args: ['--kubeconfig', execPath, '--all', '--name-template', 'cloud-{name}'],
        who: [`system:serviceaccount:${execNs}:cloud`],
      },
      {
        args: ['--kubeconfig', wiPath, '--all', '--name-template', 'wi-{name}'],
        who: [`hub:system:serviceaccount:${execNs}:wi`],
      },
      {
        args: [
          '--fleet-config',
          fleetYaml,
          '-c',
          'mcr#member-1',
          '-c',
          `capi#${hubNs}/work`,
          '-c',
          `access#${hubNs}/kcsr`,
        ],
        who: [`system:serviceaccount:${nsSys}:mcr`, `${run}-ci`, `system:serviceaccount:${nsSys}:kcsr`],
      },
    ];
    for (const e of exports) {
      const res = await fleet([
        'kubeconfig',
        'export',
        ...e.args,
        '--command',
        FLEET_BIN,
        '--merge-into',
        merged,
        '--write-kuberc',
        kuberc,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const out = res.json();
      assert.equal(out.kind, 'KubeconfigExport');
      assert.equal(out.items.length, e.who.length);
      out.items.forEach((item: any, i: number) => {
        assert.equal(item.ok, true, JSON.stringify(item));
        expected.set(item.context, e.who[i]);
      });
      assert.ok(out.merge.changed);
    }
    // The user's own context, cluster and user are still in the file, byte for byte, and current-context is theirs.
    const after = readFileSync(merged, 'utf8');
    const userDoc = yaml.load(before) as any;
    const doc = yaml.load(after) as any;
    assert.equal(doc['current-context'], userDoc['current-context']);
    for (const kind of ['clusters', 'users', 'contexts']) {
      for (const entry of userDoc[kind])
        assert.deepEqual(
          doc[kind].find((x: any) => x.name === entry.name),
          entry,
          `the user's ${kind} ${entry.name} changed`,
        );
      for (const entry of doc[kind].filter((x: any) => !userDoc[kind].some((u: any) => u.name === x.name))) {
        assert.ok(
          entry[kind.slice(0, -1)].extensions.some((x: any) => x.name === FLEET_EXPORT_EXTENSION),
          `${kind} ${entry.name} is not marked`,
        );
      }
    }
    assert.ok(after.startsWith('# my own kubeconfig\n'), 'the comment at the top is kept');
    assertClean('the merged kubeconfig', after);
    assert.doesNotMatch(after, /\btoken:|client-key|password/);
    // A second run with the same selection changes no byte.
    const again = await fleet([
      'kubeconfig',
      'export',
      ...exports[1].args,
      '--command',
      FLEET_BIN,
      '--merge-into',
      merged,
      '-o',
      'json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json().merge.changed, false);
    assert.equal(readFileSync(merged, 'utf8'), after);
    // The kuberc allows exactly fleet's command (kubectl 1.35's Allowlist format).
    const k = yaml.load(readFileSync(kuberc, 'utf8')) as any;
    assert.equal(k.credentialPluginPolicy, 'Allowlist');
    assert.deepEqual(k.credentialPluginAllowlist, [{ name: FLEET_BIN }]);
    assert.equal(statSync(kuberc).mode & 0o777, 0o600);
  });

  /** Every exported context through one kubectl: `get ns` and `auth whoami` as the expected identity. */
  async function throughEvery(which: '1.34' | '1.35', contexts: Array<[string, string]>): Promise<void> {
    const bin = which === '1.34' ? cp.binaries.kubectl : kubectl135;
    const extra = which === '1.35' ? ['--kuberc', kuberc] : [];
    for (const [context, who] of contexts) {
      const ns = await kube(bin, [...extra, '--context', context, 'get', 'ns', '-o', 'name']);
      assert.equal(ns.code, 0, `${context}: ${ns.stderr}`);
      assert.match(ns.stdout, /^namespace\//m);
      const me = await kube(bin, [
        ...extra,
        '--context',
        context,
        'auth',
        'whoami',
        '-o',
        'jsonpath={.status.userInfo.username}',
      ]);
      assert.equal(me.code, 0, `${context}: ${me.stderr}`);
      assert.equal(me.stdout.trim(), who, context);
    }
    // The cache holds one 0600 file per cluster, in a 0700 directory.
    const cacheDir = join(cache, 'fleet', 'credentials');
    assert.equal(statSync(cacheDir).mode & 0o777, 0o700);
    for (const f of readdirSync(cacheDir)) assert.equal(statSync(join(cacheDir, f)).mode & 0o777, 0o600);
  }

  /** The given contexts of the merged file, with the clusters and users they use, as a file of their own. */
  function librariesFile(contexts: string[], label: string, edit: (doc: any) => void = () => {}): string {
    const doc = yaml.load(readFileSync(merged, 'utf8')) as any;
    const pick = (kind: string) => doc[kind].filter((e: any) => contexts.includes(e.name));
    const file = join(dir, `${run}-${label}-libraries.kubeconfig`);
    const out = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: pick('clusters'),
      users: pick('users'),
      contexts: pick('contexts'),
      // The Python client refuses a file without current-context, even when every call names a context.
      'current-context': contexts[0],
    };
    edit(out);
    writeFileSync(file, yaml.dump(out), { mode: 0o600 });
    return file;
  }

  /**
   * The client libraries over the given contexts of the merged file (only those, so the user's own context, whose token
   * file this test never wrote, is not in the way): client-go and the Python kubernetes client load it, run the exec
   * entries themselves and list namespaces through each context (test/kubeconfig-consumers, as in kubeconfig-merge).
   */
  function throughLibraries(contexts: string[], label: string): void {
    const file = librariesFile(contexts, label);
    assertLibrariesList(
      file,
      { PATH, HOME: home, XDG_CACHE_HOME: cache, KUBECONFIG: '' },
      contexts,
      ['default'],
      (program, out) => outputs.push({ what: `${program} ${label}`, out }),
    );
  }

  it('client-go and the Python kubernetes client list namespaces through every exported context', () => {
    assert.equal(expected.size, 6);
    throughLibraries([...expected.keys()], 'providers');
  });

  it('client-node 2.0.1 and fabric8 7.9.0, which set no KUBERNETES_EXEC_INFO, list namespaces through every exported context of KUBECONFIG; an edited context sends nothing to the server it names', async () => {
    assert.equal(expected.size, 6);
    const contexts = [...expected.keys()];
    const record = (program: string, out: string) => outputs.push({ what: `${program} (no exec info)`, out });
    const env = (file: string) => ({ PATH, HOME: home, XDG_CACHE_HOME: cache, KUBECONFIG: file });
    for (const r of await runDefaultLoaders(env(librariesFile(contexts, 'default-loaders')), record)) {
      assert.equal(r.status, 0, `${r.program}: ${JSON.stringify(r.lines)} ${r.stderr}`);
      assert.deepEqual(
        r.lines.map((l) => l.context),
        [...contexts].sort(),
        r.program,
      );
      for (const l of r.lines) assert.ok(l.namespaces?.includes('default'), `${r.program}: ${JSON.stringify(l)}`);
    }

    // The edited contexts point at a capture that the clients trust: a certificate the members' CA signed for
    // 127.0.0.1 (the sandbox keeps that CA's key), so the exported CA still verifies it and only fleet's check stands
    // between the credential and it. A control context with a static token shows that the clients do send there.
    const pki = join(dir, 'capture-pki');
    mkdirSync(pki, { recursive: true });
    const leaf = await makeLeaf({
      ca: { certFile: cp.serverCa.certFile, keyFile: join(cp.dir, 'pki', 'server-ca.key') },
      dir: pki,
      base: 'capture',
      cn: 'capture',
      usage: 'server',
      ips: ['127.0.0.1'],
    });
    const capture = await startCapture({ name: 'capture', pose: { username: 'system:admin' }, tls: leaf });
    const CONTROL = `control-token-${run}`;
    try {
      const target = contexts.find((c) => expected.get(c)?.startsWith('system:serviceaccount:'))!;
      const url = `https://127.0.0.1:${capture.port}`;
      const copyFile = librariesFile([target], 'copy-elsewhere', (doc) => {
        // A faithful copy of the entry under other names, whose cluster is the capture: with the original context
        // beside it (another file of KUBECONFIG), neither gets a credential.
        doc.users[0].name = 'copied';
        doc.clusters[0].name = 'copied';
        doc.clusters[0].cluster.server = url;
        doc.contexts[0] = { name: 'copied', context: { cluster: 'copied', user: 'copied' } };
        doc['current-context'] = 'copied';
      });
      const cases: Array<[string, string]> = [
        [
          'edited server',
          librariesFile([target], 'edited-server', (doc) => {
            doc.clusters[0].cluster.server = url;
            doc.users.push({ name: 'control', user: { token: CONTROL } });
            doc.contexts.push({ name: 'control', context: { cluster: doc.clusters[0].name, user: 'control' } });
          }),
        ],
        ['a copy elsewhere', `${librariesFile([target], 'original')}:${copyFile}`],
      ];
      const seen: string[] = [];
      for (const [label, kubeconfig] of cases) {
        for (const r of await runDefaultLoaders(env(kubeconfig), record)) {
          seen.push(`${label}: ${r.program}: ${JSON.stringify(r.lines)}`);
          const mine = r.lines.filter((l) => l.context !== 'control');
          assert.ok(mine.length >= 1, `${label}: ${r.program}: ${JSON.stringify(r.lines)}`);
          // client-node fails the context; fabric8 goes on without a credential (as system:anonymous): either way
          // nothing the entry gives reaches the capture, which the assertion below checks for both.
          for (const l of mine)
            if (r.program.includes('client-node'))
              assert.ok(l.error && !l.namespaces, `${label}: ${r.program}: ${JSON.stringify(l)}`);
          assert.match(
            r.stderr + JSON.stringify(r.lines),
            /connecting to https:\/\/127\.0\.0\.1:\d+, but its provider names|name different clusters/,
            `${label}: ${r.program}: fleet's refusal is shown: ${JSON.stringify(r.lines)} ${r.stderr}`,
          );
        }
      }
      const sent = capture.records.map((c) => c.authorization).filter((a) => a !== undefined);
      assert.ok(
        sent.includes(`Bearer ${CONTROL}`),
        `the clients do send to the capture: ${capture.records.length} requests; ${seen.join('\n')}`,
      );
      assert.deepEqual(
        sent.filter((a) => a !== `Bearer ${CONTROL}`),
        [],
        'no credential from an exported entry reached the capture',
      );
      for (const c of capture.records) for (const secret of secrets) assert.ok(!c.body.includes(secret));
    } finally {
      await capture.close();
    }
  });

  for (const which of ['1.34', '1.35'] as const) {
    it(`kubectl ${which} runs get ns and auth whoami through every exported context${which === '1.35' ? ' (kuberc Allowlist)' : ''}`, async () => {
      assert.equal(expected.size, 6, [...expected.keys()].join(', '));
      await throughEvery(which, [...expected]);
    });
  }

  it("an exec plugin's expiring credential is kept until its own end less 30 s, a Secret's token for 60 s", async () => {
    const doc = yaml.load(readFileSync(merged, 'utf8')) as any;
    const endOf = async (context: string) => {
      const user = doc.users.find((u: any) => u.name === context).user;
      const res = await fleet(user.exec.args, { KUBERNETES_EXEC_INFO: execInfoFor(context) });
      outputs.pop();
      assert.equal(res.code, 0, res.stderr);
      return Date.parse(JSON.parse(res.stdout).status.expirationTimestamp) - Date.now();
    };
    // The plugin's token lives 15 minutes: far beyond the 60 s of a credential held as data.
    const plugin = await endOf('cloud-cloud');
    assert.ok(plugin > 10 * 60_000 && plugin <= 15 * 60_000 - 30_000, `${plugin} ms`);
    const data = await endOf([...expected].find(([, who]) => who === `system:serviceaccount:${nsSys}:mcr`)![0]);
    assert.ok(data > 0 && data <= STATIC_CREDENTIAL_SECONDS * 1000, `${data} ms`);
  });

  it('a 1.35 kubectl whose kuberc does not allow fleet refuses the context, as kubectl does', async () => {
    const deny = join(dir, `${run}-deny.kuberc`);
    writeFileSync(
      deny,
      'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{command: /nonexistent/other}]\n',
    );
    const [context] = expected.keys();
    const r = await kube(kubectl135, ['--kuberc', deny, '--context', context, 'get', 'ns']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /allowlist|not permitted|policy/i);
  });

  it('a hub Secret rotated reaches kubectl after the 60 s bound, then revoked is refused', async () => {
    const context = [...expected].find(([, who]) => who === `system:serviceaccount:${nsSys}:mcr`)![0];
    const whoami = () =>
      kube(cp.binaries.kubectl, ['--context', context, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal((await whoami()).code, 0);
    const s0 = await hubSecret('member-1');
    const rotated = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/member-1`,
      '-o',
      'json',
    ]);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(rotated.json().items[0].revoked.done, true);
    const s1 = await hubSecret('member-1');
    remember(kubeconfigInSecret(s1));
    assert.notEqual(s1.data.kubeconfig ?? s1.data.value, s0.data.kubeconfig ?? s0.data.value);
    const newToken = (yaml.load(kubeconfigInSecret(s1)) as any).users[0].user.token;
    // The real bound, not a test setting: the cache's entry ends at most STATIC_CREDENTIAL_SECONDS after it was filled.
    await new Promise((r) => setTimeout(r, (STATIC_CREDENTIAL_SECONDS + 2) * 1000));
    const after = await whoami();
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stdout.trim(), `system:serviceaccount:${nsSys}:mcr`);
    // What kubectl was given is the rotated token (the old one is revoked, so the success above is it too).
    const user = (yaml.load(readFileSync(merged, 'utf8')) as any).users.find((u: any) => u.name === context).user;
    const cred = await fleet(user.exec.args, { KUBERNETES_EXEC_INFO: execInfoFor(context) });
    assert.equal(cred.code, 0, cred.stderr);
    assert.equal(JSON.parse(cred.stdout).status.token, newToken);
    outputs.pop();

    // Revoked on the hub: the token is refused and the Secret is gone. The cached one is refused by the server, client-go
    // asks again, and fleet, which handed it to this kubectl already, fetches fresh from the hub, which has none now.
    const revoked = await fleet([
      'creds',
      'revoke',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/member-1`,
      '-o',
      'json',
    ]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const first = await whoami();
    assert.notEqual(first.code, 0, first.stdout);
    const second = await whoami();
    assert.notEqual(second.code, 0, second.stdout);
    assert.match(second.stderr, /member-1|not found|exec plugin|getting credentials/i);
    // Said as what it is (issue 41): the hub no longer has the Secret, and what to do; once for this kubectl.
    const said = second.stderr.split('\n').filter((l) => l.includes('no longer lists it'));
    assert.equal(said.length, 1, second.stderr);
    assert.match(
      said[0],
      /^error: .*member-1: provider "[^"]+" no longer lists it \(its hub Secret deleted, as fleet creds revoke does, or the cluster removed\); fleet kubeconfig prune removes this context, fleet kubeconfig export makes it again$/,
    );
  });

  it('through fleet-credential installed beside fleet: a warm call never starts fleet, a revoked credential still ends in a refusal', async () => {
    // fleet as installed: a `fleet` that logs each run (then runs the real one), with fleet-credential beside it.
    const bin = join(dir, `${run}-installed`);
    mkdirSync(bin);
    const runs = join(dir, `${run}-fleet-runs.log`);
    const installed = join(bin, 'fleet');
    writeFileSync(installed, `#!/bin/sh\necho "$*" >> '${runs}'\nexec '${FLEET_BIN}' "$@"\n`, { mode: 0o755 });
    copyFileSync(reader, join(bin, 'fleet-credential'));
    chmodSync(join(bin, 'fleet-credential'), 0o755);
    const fleetRuns = () => (existsSync(runs) ? readFileSync(runs, 'utf8').trim().split('\n').length : 0);
    await generate('rdr', 'reader-1', 'multicluster-runtime');
    const out = join(dir, `${run}-reader.kubeconfig`);
    const readerKuberc = join(dir, `${run}-reader.kuberc`);
    const res = await fleet([
      'kubeconfig',
      'export',
      '--fleet-config',
      fleetYaml,
      '-c',
      'mcr#reader-1',
      '--command',
      installed,
      '--out',
      out,
      '--write-kuberc',
      readerKuberc,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const context = res.json().items[0].context;
    const exec = (yaml.load(readFileSync(out, 'utf8')) as any).users[0].user.exec;
    assert.equal(exec.command, join(bin, 'fleet-credential'));
    assert.deepEqual(exec.args.slice(0, 4), ['--fleet', installed, 'kubeconfig', 'credential']);
    assert.deepEqual((yaml.load(readFileSync(readerKuberc, 'utf8')) as any).credentialPluginAllowlist, [
      { name: join(bin, 'fleet-credential') },
    ]);
    assertClean('the exported kubeconfig', readFileSync(out, 'utf8'));
    const whoami = (bin2 = cp.binaries.kubectl, extra: string[] = []) =>
      kube(bin2, [...extra, '--context', context, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
        KUBECONFIG: out,
      });
    const who = `system:serviceaccount:${nsSys}:rdr`;

    // Cold: fleet-credential finds nothing and runs fleet, which fetches from the hub and fills the cache.
    const cold = await whoami();
    assert.equal(cold.code, 0, cold.stderr);
    assert.equal(cold.stdout.trim(), who);
    assert.equal(fleetRuns(), 1);
    // Warm, from kubectl 1.34 and from 1.35 with the Allowlist kuberc: answered without fleet.
    for (const [k, extra] of [
      [cp.binaries.kubectl, []],
      [kubectl135, ['--kuberc', readerKuberc]],
    ] as const) {
      const warm = await whoami(k, [...extra]);
      assert.equal(warm.code, 0, warm.stderr);
      assert.equal(warm.stdout.trim(), who);
    }
    assert.equal(fleetRuns(), 1, 'fleet ran on a warm call');

    // Revoked on the hub: the cached token is refused, client-go asks again, fleet-credential sees the same kubectl
    // ask twice and hands over to fleet, which finds no Secret: an error, not the revoked token again.
    const revoked = await fleet([
      'creds',
      'revoke',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/reader-1`,
      '-o',
      'json',
    ]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await whoami();
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /reader-1|not found|exec plugin|getting credentials/i);
    assert.equal(fleetRuns(), 2, 'fleet fetched afresh after the refusal');
    const cacheFiles = readdirSync(join(cache, 'fleet', 'credentials')).map((f) =>
      readFileSync(join(cache, 'fleet', 'credentials', f), 'utf8'),
    );
    assertClean('the credential cache after the refusal', cacheFiles.filter((f) => f.includes('"suspect"')).join('\n'));
  });

  it('exports the kcp workspaces through the front proxy (the hub pinned in the exec arguments); kubectl 1.34 and 1.35, client-go and the Python client use them', async () => {
    // Started in before(), while the tests above ran (most of it is kcp's own start-up).
    kcp = await kcpStarted;
    await kcp.createWorkspace('root:org');
    const res = await fleet([
      'kubeconfig',
      'export',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
      '--all',
      '--command',
      FLEET_BIN,
      '--merge-into',
      merged,
      '-o',
      'json',
    ]);
    for (const t of kcp.tokens) secrets.add(t);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json().items as any[];
    assert.ok(
      items.some((i) => i.cluster === 'root:org'),
      JSON.stringify(items),
    );
    const contexts: Array<[string, string]> = items.map((item) => [item.context, kcp!.users.admin.name]);
    const user = (yaml.load(readFileSync(merged, 'utf8')) as any).users.find(
      (u: any) => u.name === items[0].context,
    ).user;
    const args = user.exec.args as string[];
    assert.deepEqual(args.slice(args.indexOf('--kubeconfig'), args.indexOf('--kubeconfig') + 2), [
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
    ]);
    assert.ok(args.includes('--context'));
    await throughEvery('1.34', contexts);
    await throughEvery('1.35', contexts);
    throughLibraries(
      contexts.map(([context]) => context),
      'kcp',
    );
  });

  it('an interrupted export (SIGINT) leaves no file, and an existing --out file as it was', async () => {
    const stall = await blackhole();
    try {
      const hubFile = join(dir, `${run}-stall-hub.kubeconfig`);
      writeFileSync(
        hubFile,
        yaml.dump({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 's', cluster: { server: stall.url, 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'u', user: {} }],
          contexts: [{ name: 's', context: { cluster: 's', user: 'u' } }],
          'current-context': 's',
        }),
      );
      const config = join(dir, `${run}-stall-fleet.yaml`);
      writeFileSync(
        config,
        `kind: FleetConfig\nproviders:\n  - {name: real, type: kubeconfig, namespace: ${hubNs}, hub: {kubeconfig: [${hub.kubeconfig}]}}\n  - {name: stalled, type: kubeconfig, hub: {kubeconfig: [${hubFile}]}}\n`,
      );
      const outDir = join(dir, `${run}-interrupt`);
      mkdirSync(outDir);
      // The existing file is one an earlier export wrote (every entry marked), which --out replaces: a file with
      // anything fleet did not export is refused before any cluster is read (test/e2e/lost-or-orphaned.test.ts).
      const marker = [{ name: FLEET_EXPORT_EXTENSION, extension: { cluster: 'earlier', provider: 'real' } }];
      const earlier = `# an earlier export, kept as it was\n${yaml.dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'earlier', cluster: { server: 'https://127.0.0.1:1', extensions: marker } }],
        users: [{ name: 'earlier', user: { exec: { command: 'fleet' }, extensions: marker } }],
        contexts: [{ name: 'earlier', context: { cluster: 'earlier', user: 'earlier', extensions: marker } }],
      })}`;
      for (const existing of [undefined, earlier]) {
        const out = join(outDir, 'fleet.kubeconfig');
        if (existing) writeFileSync(out, existing);
        const child = spawn(
          process.execPath,
          [FLEET_BIN, 'kubeconfig', 'export', '--fleet-config', config, '--all', '--out', out, '--command', FLEET_BIN],
          { env: fleetTestEnv({ PATH, XDG_CACHE_HOME: cache }), stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        const code = await new Promise<number | null>((resolve) => {
          setTimeout(() => child.kill('SIGINT'), 2500);
          child.on('close', (c) => resolve(c));
        });
        assert.equal(code, 130, stderr);
        assert.deepEqual(
          readdirSync(outDir),
          existing ? ['fleet.kubeconfig'] : [],
          'a file or a temporary file was left',
        );
        if (existing) assert.equal(readFileSync(out, 'utf8'), existing);
      }
    } finally {
      await stall.close();
    }
  });

  it('no output and no exported file holds a credential', () => {
    for (const o of outputs) assertClean(o.what, o.out);
    assertClean('the merged kubeconfig', readFileSync(merged, 'utf8'));
    assert.ok(existsSync(join(cache, 'fleet', 'credentials')));
  });
});
