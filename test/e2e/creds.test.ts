// fleet creds generate / list against the real control plane: every method and the main consumer formats are generated,
// read back through the fleet provider a controller would use, and used (`auth whoami`); access reviews show exactly
// what was granted; the anchor revokes a bound token; a second run duplicates nothing; risky grants and bad input are
// refused with nothing made; creds list finds every credential with the expiry the server granted; and no secret made
// here appears in any captured output.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { writeConsumerFleet } from '../support/consumer-fleet.js';
import { consumerWhoami } from '../support/secret-consumers.js';

import { grant } from '../support/rbac.js';
import {
  applyYaml,
  createCertUser,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
  deleteFleetObjectsOf,
} from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('creds');
const nsA = `${run}-a`; // target namespace on member-1 (created by the first generate)
const nsSys = `${run}-sys`; // ServiceAccounts on member-1
const hubNs = `${run}-hub`; // consumer Secrets on the hub
const consumer = `${run}-consumer`;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];

/** Every output captured (except `--out -` stdout, the one place a secret is printed on request) and every secret made. */
const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets: string[] = [];

let dir: string;
let fleetYaml: string;
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

async function fleet(args: string[], o: { keepStdoutOut?: boolean } = {}): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 90_000 });
  outputs.push({ what: args.join(' '), res: o.keepStdoutOut ? { ...res, stdout: '' } : res });
  return res;
}

function userOf(kubeconfigText: string): Record<string, string> {
  const doc = yaml.load(kubeconfigText) as { users: Array<{ user: Record<string, string> }> };
  return doc.users[0].user;
}

function remember(kubeconfigText: string) {
  const u = userOf(kubeconfigText);
  for (const k of ['token', 'client-key-data'])
    if (u[k])
      secrets.push(
        u[k],
        Buffer.from(u[k], k === 'token' ? 'utf8' : 'base64')
          .toString('utf8')
          .trim(),
      );
}

async function hubSecret(name: string, namespace = hubNs): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', namespace, '-o', 'json']));
}
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

/** kubectl auth can-i with a kubeconfig: true / false. */
async function can(kubeconfig: string, args: string[]): Promise<boolean> {
  const r = await kubectlResult(m1, ['auth', 'can-i', ...args], { kubeconfig });
  return r.code === 0;
}

async function assertAccess(kubeconfig: string, yes: string[][], no: string[][]) {
  for (const a of yes) assert.equal(await can(kubeconfig, a), true, `expected allowed: ${a.join(' ')}`);
  for (const a of no) assert.equal(await can(kubeconfig, a), false, `expected denied: ${a.join(' ')}`);
}

function assertOneLineError(res: CliResult, code: number, pattern: RegExp) {
  assert.equal(res.code, code, `exit ${res.code}: ${res.stderr}`);
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected: ${res.stderr}`);
  assert.match(lines[0], pattern);
}

async function exists(ref: typeof hub, args: string[]): Promise<boolean> {
  return (await kubectlResult(ref, ['get', ...args])).code === 0;
}

async function whoamiVia(args: string[]): Promise<any> {
  const res = await fleet(['auth', 'whoami', ...args, '-o', 'json']);
  assert.equal(res.code, 0, res.stderr + res.stdout);
  return res.json().items[0].user;
}

const within = (iso: string, seconds: number, slack = 120) => {
  const delta = (Date.parse(iso) - Date.now()) / 1000;
  assert.ok(delta > seconds - slack && delta <= seconds + 5, `expiry ${iso} is not about ${seconds}s away`);
};

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  fleetYaml = writeConsumerFleet({ dir, run, hubNs, consumer });
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsA, nsSys, '--wait=false']);
  await deleteFleetObjectsOf(m1, 'clusterrole,clusterrolebinding', run);
});

describe('fleet creds generate (live)', () => {
  const readerFile = () => join(dir, `${run}-reader.kubeconfig`);
  let first: any;

  it('token, view preset in one namespace, to a kubeconfig file: 0600, verified, exactly what was granted', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsA}/reader`,
      '--role',
      'view',
      '-n',
      nsA,
      '--create-namespace',
      '--duration',
      '1h',
      '--out',
      readerFile(),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    first = res.json();
    const text = readFileSync(readerFile(), 'utf8');
    remember(text);
    assert.equal(statSync(readerFile()).mode & 0o777, 0o600);
    assert.equal(first.kind, 'GeneratedCredential');
    assert.deepEqual(first.identity, {
      kind: 'ServiceAccount',
      username: `system:serviceaccount:${nsA}:reader`,
      namespace: nsA,
      name: 'reader',
    });
    assert.equal(first.method, 'token');
    assert.deepEqual(first.scope, { clusterWide: false, namespaces: [nsA] });
    within(first.expires, 3600);
    assert.equal(first.fingerprint, `sha256:${createHash('sha256').update(text).digest('hex')}`);
    assert.deepEqual(
      first.verification.map((c: any) => [c.name, c.status]),
      [
        ['identity', 'pass'],
        ['granted', 'pass'],
        ['denied', 'pass'],
      ],
    );
    assert.deepEqual(
      first.objects.map((o: any) => `${o.action} ${o.kind}`),
      ['created Namespace', 'created ServiceAccount', 'created Role', 'created RoleBinding', 'created Secret'],
    );
    const user = await whoamiVia(['--kubeconfig', readerFile()]);
    assert.equal(user.username, `system:serviceaccount:${nsA}:reader`);
    await assertAccess(
      readerFile(),
      [
        ['get', 'pods', '-n', nsA],
        ['list', 'deployments.apps', '-n', nsA],
        ['watch', 'configmaps', '-n', nsA],
      ],
      [
        ['get', 'pods', '-n', 'kube-system'],
        ['get', 'secrets', '-n', nsA],
        ['create', 'deployments.apps', '-n', nsA],
        ['delete', 'pods', '-n', nsA],
        ['create', 'pods/exec', '-n', nsA],
        ['list', 'namespaces'],
      ],
    );
  });

  it('generating twice duplicates nothing: the same objects, unchanged, and a fresh token', async () => {
    const count = async () =>
      (
        await kubectl(m1, [
          'get',
          'roles,rolebindings,secrets,serviceaccounts',
          '-n',
          nsA,
          '-l',
          'app.kubernetes.io/managed-by=fleet',
          '-o',
          'name',
        ])
      )
        .trim()
        .split('\n')
        .sort();
    const before = await count();
    const oldToken = userOf(readFileSync(readerFile(), 'utf8')).token;
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsA}/reader`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--out',
      readerFile(),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    remember(readFileSync(readerFile(), 'utf8'));
    assert.deepEqual(await count(), before);
    assert.deepEqual(
      res.json().objects.map((o: any) => o.action),
      ['unchanged', 'unchanged', 'unchanged'],
    );
    assert.equal(res.json().anchor.uid, first.anchor.uid);
    assert.notEqual(userOf(readFileSync(readerFile(), 'utf8')).token, oldToken);
  });

  it('deleting the anchor Secret revokes the bound token', async () => {
    await kubectl(m1, ['delete', 'secret', first.anchor.name, '-n', nsA]);
    const deadline = Date.now() + 30_000;
    let last: CliResult;
    for (;;) {
      last = await fleet(['auth', 'whoami', '--kubeconfig', readerFile(), '-o', 'json']);
      if (last.code !== 0) break;
      assert.ok(Date.now() < deadline, 'the token still works 30s after its anchor was deleted');
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(last.json().items[0].error.kind, 'unauthorized');
  });

  it('multicluster-runtime Secret on the hub, cluster-wide pod-lister: read back by the kubeconfig provider and used', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/mcr`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '2h',
      '--secret',
      `${hubNs}/member-1`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json();
    within(out.expires, 7200);
    const s = await hubSecret('member-1');
    assert.equal(s.metadata.labels['sigs.k8s.io/multicluster-runtime-kubeconfig'], 'true');
    assert.equal(s.metadata.labels['app.kubernetes.io/managed-by'], 'fleet');
    const text = decode(s.data.kubeconfig);
    remember(text);
    assert.equal(
      s.metadata.annotations['fleet.dev/kubeconfig-sha256'],
      createHash('sha256').update(text).digest('hex'),
    );
    assert.equal(s.metadata.annotations['fleet.dev/credential-expires'], out.expires);
    assert.equal(s.metadata.annotations['fleet.dev/credential-method'], 'token');
    assert.equal(s.metadata.annotations['fleet.dev/credential-scope'], 'cluster-wide');
    for (const v of Object.values<string>(s.metadata.annotations))
      assert.ok(!secrets.some((x) => v.includes(x)), 'a secret in an annotation');
    const user = await whoamiVia(['--fleet-config', fleetYaml, '--cluster', 'mcr#member-1']);
    assert.equal(user.username, `system:serviceaccount:${nsSys}:mcr`);
    // multicluster-runtime's own kubeconfig provider (a manager on the hub namespace) engages it as the same identity.
    assert.equal((await consumerWhoami('mcr', hub, hubNs, 'member-1')).username, `system:serviceaccount:${nsSys}:mcr`);
    const kc = join(dir, `${run}-mcr.kubeconfig`);
    writeFileSync(kc, text, { mode: 0o600 });
    await assertAccess(
      kc,
      [
        ['list', 'pods', '-A'],
        ['watch', 'pods', '-n', 'kube-system'],
      ],
      [
        ['get', 'secrets', '-A'],
        ['create', 'pods', '-n', 'default'],
        ['list', 'deployments.apps', '-A'],
      ],
    );
  });

  it('client certificate for a user, deployer preset, as a Cluster API Secret: read back by the cluster-api provider', async () => {
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
    const user = `${run}-ci`;
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--method',
      'client-cert',
      '--user',
      user,
      '--group',
      'ci',
      '--role',
      'deployer',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/work`,
      '--format',
      'cluster-api',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json();
    within(out.expires, 3600, 400);
    const s = await hubSecret('work-kubeconfig');
    assert.equal(s.type, 'cluster.x-k8s.io/secret');
    assert.equal(s.metadata.labels['cluster.x-k8s.io/cluster-name'], 'work');
    const text = decode(s.data.value);
    remember(text);
    // No CSR is left behind, and the private key was never sent: the CSR held only the public key.
    assert.equal(
      (await kubectl(m1, ['get', 'csr', '-l', 'app.kubernetes.io/managed-by=fleet', '-o', 'name'])).trim(),
      '',
    );
    const who = await whoamiVia(['--fleet-config', fleetYaml, '--cluster', `capi#${hubNs}/work`]);
    assert.equal(who.username, user);
    assert.ok(who.groups.includes('ci'));
    // Cluster API's own reader (controllers/remote over util/kubeconfig.FromSecret) connects with the certificate.
    const capi = await consumerWhoami('capi', hub, hubNs, 'work');
    assert.equal(capi.username, user);
    assert.ok(capi.groups.includes('ci'));
    const kc = join(dir, `${run}-ci.kubeconfig`);
    writeFileSync(kc, text, { mode: 0o600 });
    await assertAccess(
      kc,
      [
        ['create', 'deployments.apps', '-n', nsA],
        ['get', 'pods', '-n', nsA],
      ],
      [
        ['create', 'deployments.apps', '-n', 'default'],
        ['delete', 'pods', '-n', nsA],
        ['get', 'secrets', '-n', nsA],
      ],
    );
  });

  it('legacy token for consumers that cannot refresh: works, warns that it never expires', async () => {
    const file = join(dir, `${run}-legacy.kubeconfig`);
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/legacy`,
      '--role',
      'view',
      '-n',
      nsA,
      '--method',
      'legacy-token',
      '--out',
      file,
    ]);
    assert.equal(res.code, 0, res.stderr);
    remember(readFileSync(file, 'utf8'));
    assert.match(res.stderr, /never expires/);
    assert.match(res.stdout, /expires\s+never/);
    assert.equal((await whoamiVia(['--kubeconfig', file])).username, `system:serviceaccount:${nsSys}:legacy`);
  });

  it('cluster-inventory Secret strategy: read back by the cluster-inventory provider', async () => {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'm1', namespace: hubNs },
        spec: { clusterManager: { name: 'fleet-e2e' } },
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      'm1',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          conditions: [
            {
              type: 'ControlPlaneHealthy',
              status: 'True',
              reason: 'Healthy',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        },
      }),
    ]);
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/inv`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/m1-${consumer}`,
      '--format',
      'cluster-inventory',
      '--consumer',
      consumer,
      '--profile',
      'm1',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const s = await hubSecret(`m1-${consumer}`);
    remember(decode(s.data.Config));
    assert.equal(s.metadata.labels['x-k8s.io/cluster-inventory-consumer'], consumer);
    assert.equal(s.metadata.labels['x-k8s.io/cluster-profile'], 'm1');
    assert.equal(
      (await whoamiVia(['--fleet-config', fleetYaml, '--cluster', `inv#${hubNs}/m1`])).username,
      `system:serviceaccount:${nsSys}:inv`,
    );
  });

  it('kubeconfig-secretreader: the Secret and the ClusterProfile access provider, read by the upstream plugin', async () => {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'kcsr', namespace: hubNs },
        spec: { clusterManager: { name: 'fleet-e2e' } },
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      'kcsr',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: healthy }),
    ]);
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/kcsr`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--create-namespace',
      '--secret',
      `${hubNs}/kcsr-cred`,
      '--format',
      'kubeconfig-secretreader',
      '--update-profile',
      `${hubNs}/kcsr`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    remember(decode((await hubSecret('kcsr-cred')).data.kubeconfig));
    const entry = res.json().accessProvider;
    assert.equal(entry.name, 'kubeconfig-secretreader');
    assert.deepEqual(entry.cluster.extensions, [
      {
        name: 'client.authentication.k8s.io/exec',
        extension: { name: 'kcsr-cred', namespace: hubNs, key: 'kubeconfig' },
      },
    ]);
    const profile = JSON.parse(await kubectl(hub, ['get', 'clusterprofiles', 'kcsr', '-n', hubNs, '-o', 'json']));
    assert.deepEqual(profile.status.accessProviders, [entry]);
    assert.equal(profile.status.conditions[0].type, 'ControlPlaneHealthy');
    assert.equal(
      (await whoamiVia(['--fleet-config', fleetYaml, '--cluster', `access#${hubNs}/kcsr`])).username,
      `system:serviceaccount:${nsSys}:kcsr`,
    );
  });

  it('argocd and flux Secrets: the keys their consumers read, used by creds list --live', async () => {
    for (const format of ['argocd', 'flux']) {
      const res = await fleet([
        'creds',
        'generate',
        ...MEMBER,
        ...HUB,
        '--service-account',
        `${nsSys}/${format}`,
        '--role',
        'deployer',
        '-n',
        nsA,
        '--duration',
        '1h',
        '--create-namespace',
        '--secret',
        `${hubNs}/${format}-m1`,
        '--format',
        format,
      ]);
      assert.equal(res.code, 0, res.stderr);
    }
    const argo = await hubSecret('argocd-m1');
    assert.equal(argo.metadata.labels['argocd.argoproj.io/secret-type'], 'cluster');
    assert.equal(decode(argo.data.server), m1.url);
    // What the Argo CD UI shows: the context's name, not fleet's `<kubeconfig path>+<context>`.
    assert.equal(decode(argo.data.name), m1.context);
    const config = JSON.parse(decode(argo.data.config));
    secrets.push(config.bearerToken);
    assert.equal(config.tlsClientConfig.caData, readFileSync(m1.caFile).toString('base64'));
    const flux = await hubSecret('flux-m1');
    remember(decode(flux.data.value));
    // Flux's runtime client (the Impersonator kustomize-controller builds for spec.kubeConfig.secretRef) connects with it.
    assert.equal((await consumerWhoami('flux', hub, hubNs, 'flux-m1')).username, `system:serviceaccount:${nsSys}:flux`);
    const list = await fleet(['creds', 'list', ...HUB, '--live', '-o', 'json']);
    const items = list.json().items as any[];
    for (const [name, format] of [
      ['argocd-m1', 'argocd'],
      ['flux-m1', 'flux'],
    ]) {
      const item = items.find((i) => i.location === `secret ${hub.context}:${hubNs}/${name}`);
      assert.ok(item, `${name} not listed`);
      assert.equal(item.format, format);
      // The server records the same credential-id fleet read from the token (JTI=<jti>).
      assert.match(item.credentialId ?? '', /^JTI=/);
      assert.deepEqual(item.live, {
        ok: true,
        username: `system:serviceaccount:${nsSys}:${format}`,
        credentialId: item.credentialId,
      });
    }
    // creds list names a Secret fleet wrote by fleet's cluster name, whatever its display name.
    assert.equal(
      items.find((i) => i.location === `secret ${hub.context}:${hubNs}/argocd-m1`).cluster,
      `${m1.kubeconfig}+${m1.context}`,
    );
  });

  it('argocd --display-name sets the name Argo CD shows (JSON and --dry-run say it); an empty one is a usage error', async () => {
    const args = [
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/argocd-named`,
      '--role',
      'deployer',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--create-namespace',
      '--secret',
      `${hubNs}/argocd-named`,
      '--format',
      'argocd',
    ];
    const dry = await fleet([
      'creds',
      'generate',
      ...args,
      '--display-name',
      'Member One (EU)',
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = (dry.json().plan as any[]).find((o) => o.kind === 'Secret' && o.metadata.name === 'argocd-named');
    assert.ok(planned, 'the destination Secret is in the plan');
    const res = await fleet(['creds', 'generate', ...args, '--display-name', 'Member One (EU)', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const argo = await hubSecret('argocd-named');
    secrets.push(JSON.parse(decode(argo.data.config)).bearerToken);
    assert.equal(decode(argo.data.name), 'Member One (EU)');
    const empty = await fleet(['creds', 'generate', ...args, '--display-name', ' ']);
    assert.deepEqual([empty.code, empty.stderr], [2, 'error: --display-name: must not be empty\n']);
  });

  it('--out - prints the kubeconfig on stdout and nothing secret on stderr', async () => {
    const res = await fleet(
      [
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${nsSys}/stdout`,
        '--role',
        'view',
        '-n',
        nsA,
        '--duration',
        '15m',
        '--out',
        '-',
      ],
      { keepStdoutOut: true },
    );
    assert.equal(res.code, 0, res.stderr);
    remember(res.stdout);
    assert.ok(userOf(res.stdout).token);
    assert.match(res.stderr, /identity: system:serviceaccount/);
  });

  it('--dry-run prints the objects and creates nothing', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/dry`,
      '--role',
      'edit',
      '-n',
      nsA,
      '--secret',
      `${hubNs}/dry`,
      '--format',
      'flux',
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const kinds = res.json().plan.map((o: any) => o.kind);
    assert.deepEqual(kinds, ['ServiceAccount', 'Role', 'RoleBinding', 'Secret', 'Secret']);
    assert.equal(await exists(m1, ['serviceaccount', 'dry', '-n', nsSys]), false);
    assert.equal(await exists(hub, ['secret', 'dry', '-n', hubNs]), false);
    const human = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/dry`,
      '--role',
      'edit',
      '-n',
      nsA,
      '--out',
      join(dir, 'dry.kubeconfig'),
      '--dry-run',
    ]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /kind: RoleBinding/);
  });

  it('risky grants are refused, naming the rule, with nothing created; --allow-risky and per-namespace Secrets pass', async () => {
    const star = join(dir, `${run}-star.yaml`);
    writeFileSync(star, '- apiGroups: ["*"]\n  resources: ["*"]\n  verbs: ["*"]\n');
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${nsSys}/risky`,
        '--rules',
        star,
        '--out',
        join(dir, 'r.kubeconfig'),
      ]),
      2,
      /risk rule "cluster-admin".*--allow-risky/,
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${nsSys}/risky`,
        '--role',
        'secrets-reader',
        '--out',
        join(dir, 'r.kubeconfig'),
      ]),
      2,
      /risk rule "read-secrets"/,
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${nsSys}/risky`,
        '--cluster-role',
        'cluster-admin',
        '--out',
        join(dir, 'r.kubeconfig'),
      ]),
      2,
      /risk rule "cluster-admin"/,
    );
    const esc = join(dir, `${run}-esc.yaml`);
    writeFileSync(
      esc,
      'rules:\n- apiGroups: ["rbac.authorization.k8s.io"]\n  resources: ["clusterroles"]\n  verbs: ["bind"]\n',
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${nsSys}/risky`,
        '--rules',
        esc,
        '-n',
        nsA,
        '--out',
        join(dir, 'r.kubeconfig'),
      ]),
      2,
      /risk rule "bind"/,
    );
    assert.equal(await exists(m1, ['serviceaccount', 'risky', '-n', nsSys]), false);
    const file = join(dir, `${run}-secrets.kubeconfig`);
    const ok = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/risky`,
      '--role',
      'secrets-reader',
      '-n',
      nsA,
      '--duration',
      '15m',
      '--out',
      file,
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    remember(readFileSync(file, 'utf8'));
    await assertAccess(file, [['get', 'secrets', '-n', nsA]], [['get', 'secrets', '-n', 'kube-system']]);
  });

  it('bad input: one line, exit 2, nothing created', async () => {
    const out = ['--out', join(dir, 'bad.kubeconfig')];
    const sa = ['--service-account', `default/${run}-bad`];
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        '--kubeconfig',
        m1.kubeconfig,
        '--cluster',
        'nope',
        ...sa,
        '--role',
        'view',
        ...out,
      ]),
      2,
      /cluster "nope" not found/,
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${run}-missing/bad`,
        '--role',
        'view',
        ...out,
      ]),
      2,
      new RegExp(`namespace ${run}-missing does not exist; pass --create-namespace`),
    );
    assertOneLineError(
      await fleet(['creds', 'generate', ...MEMBER, ...sa, '--role', 'god', ...out]),
      2,
      /no preset "god"; presets: view, edit, namespace-admin, secrets-reader, deployer, pod-lister/,
    );
    const broken = join(dir, `${run}-broken.yaml`);
    writeFileSync(
      broken,
      '- apiGroups: [""]\n  resources: ["pods"]\n  verbs: ["get"]\n- apiGroups: [""]\n  resources: pods\n  verbs: ["get"]\n',
    );
    assertOneLineError(
      await fleet(['creds', 'generate', ...MEMBER, ...sa, '--rules', broken, ...out]),
      2,
      new RegExp(`${broken}:4: rules\\[1\\]: resources must be a list of strings`),
    );
    writeFileSync(broken, '- apiGroups: [""]\n  resources: ["pods"\n  verbs: ["get"]\n');
    assertOneLineError(
      await fleet(['creds', 'generate', ...MEMBER, ...sa, '--rules', broken, ...out]),
      2,
      new RegExp(`${broken}:3: not valid YAML`),
    );
    assertOneLineError(
      await fleet(['creds', 'generate', ...MEMBER, ...sa, '--role', 'view', '--duration', '5m', ...out]),
      2,
      /--duration: at least 10m/,
    );
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'theirs',
          namespace: hubNs,
          labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' },
        },
        data: { kubeconfig: 'eA==' },
      }),
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        ...HUB,
        ...sa,
        '--role',
        'view',
        '--secret',
        `${hubNs}/theirs`,
        '--format',
        'multicluster-runtime',
      ]),
      2,
      /Secret .*theirs exists and is not managed by fleet; pass --force/,
    );
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        '--kubeconfig',
        tokenUser(m1, 'alice').kubeconfigPath,
        '--cluster',
        `alice@${m1.name}`,
        '--service-account',
        'default/bad',
        '--role',
        'view',
        '-n',
        'default',
        ...out,
      ]),
      2,
      /may not create roles\.rbac\.authorization\.k8s\.io in namespace default/,
    );
    // May create RBAC and CSRs but not approve them: named before anything is made.
    const rbacOnly = await createCertUser(m1, { user: `${run}-rbac-only` });
    await grant(m1, {
      name: `${run}-rbac-only`,
      subject: { kind: 'User', name: `${run}-rbac-only` },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: ['create', 'get', 'patch'],
        },
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get'] },
      ],
    });
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        '--kubeconfig',
        rbacOnly.kubeconfigPath,
        '--cluster',
        `${run}-rbac-only@${m1.name}`,
        '--method',
        'client-cert',
        '--user',
        `${run}-x`,
        '--role',
        'view',
        '-n',
        'default',
        ...out,
      ]),
      2,
      /may not update certificatesigningrequests\.certificates\.k8s\.io\/approval/,
    );
    assertOneLineError(
      await fleet(['creds', 'generate', ...MEMBER, '--role', 'view', ...out]),
      2,
      /missing --service-account/,
    );
    const someonesKubeconfig = join(dir, `${run}-someones.kubeconfig`);
    writeFileSync(someonesKubeconfig, readFileSync(m1.kubeconfig));
    assertOneLineError(
      await fleet([
        'creds',
        'generate',
        ...MEMBER,
        ...sa,
        '--role',
        'view',
        '-n',
        'default',
        '--out',
        someonesKubeconfig,
      ]),
      2,
      /the file exists and was not written by fleet; pass --force/,
    );
    assert.equal(readFileSync(someonesKubeconfig, 'utf8'), readFileSync(m1.kubeconfig, 'utf8'));
    assert.equal(await exists(m1, ['serviceaccount', `${run}-bad`, '-n', 'default']), false);
    assert.equal(decode((await hubSecret('theirs')).data.kubeconfig), 'x');
  });

  it('a grant that does not work fails verification (exit 1) and everything this run created is removed', async () => {
    // RBAC accepts "pods/" but it matches no request: the granted-permission check catches it.
    const typo = join(dir, `${run}-typo.yaml`);
    writeFileSync(typo, '- apiGroups: [""]\n  resources: ["pods/"]\n  verbs: ["get"]\n');
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${run}-verify/bot`,
      '--create-namespace',
      '--rules',
      typo,
      '-n',
      `${run}-verify`,
      '--duration',
      '15m',
      '--out',
      join(dir, 'verify.kubeconfig'),
    ]);
    assertOneLineError(
      res,
      1,
      /failed verification \(granted: may not get pods in .*\); what this run created was removed/,
    );
    // Namespace deletion is asynchronous: gone or terminating.
    const ns = await kubectlResult(m1, ['get', 'namespace', `${run}-verify`, '-o', 'jsonpath={.status.phase}']);
    assert.ok(ns.code !== 0 || ns.stdout === 'Terminating', `namespace still ${ns.stdout}`);
    assert.equal(
      (
        await kubectl(m1, [
          'get',
          'clusterroles,clusterrolebindings',
          '-l',
          'app.kubernetes.io/managed-by=fleet',
          '-o',
          'name',
        ])
      ).includes(`${run}-verify`),
      false,
    );
    assert.equal(existsSync(join(dir, 'verify.kubeconfig')), false);
  });

  it('a failure after objects were made rolls back what this run created', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/rollback`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '15m',
      '--secret',
      `${hubNs}/rb`,
      '--format',
      'kubeconfig-secretreader',
      '--update-profile',
      `${hubNs}/no-such-profile`,
    ]);
    assertOneLineError(res, 2, /ClusterProfile .*no-such-profile not found/);
    assert.equal(await exists(m1, ['serviceaccount', 'rollback', '-n', nsSys]), false);
    assert.equal(await exists(m1, ['role', 'fleet-creds-' + nsSys + '-rollback', '-n', nsA]), false);
    assert.equal(await exists(hub, ['secret', 'rb', '-n', hubNs]), false);
  });

  it("a failed run puts back what it changed: the Role's rules, and the consumer Secret with the credential that worked", async () => {
    const sa = 'restore';
    const role = `fleet-creds-${nsSys}-${sa}`;
    const first = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/${sa}`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/restore`,
      '--format',
      'multicluster-runtime',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const roleBefore = JSON.parse(await kubectl(m1, ['get', 'role', role, '-n', nsA, '-o', 'json']));
    const secretBefore = await hubSecret('restore');
    const working = decode(secretBefore.data.kubeconfig);
    remember(working);
    // A second run changes both (another preset; another format into the same Secret), then fails at its last step.
    const second = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/${sa}`,
      '--role',
      'pod-lister',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/restore`,
      '--format',
      'kubeconfig-secretreader',
      '--update-profile',
      `${hubNs}/no-such-profile`,
    ]);
    assertOneLineError(second, 2, /ClusterProfile .*no-such-profile not found/);
    const roleAfter = JSON.parse(await kubectl(m1, ['get', 'role', role, '-n', nsA, '-o', 'json']));
    assert.notEqual(
      roleAfter.metadata.resourceVersion,
      roleBefore.metadata.resourceVersion,
      'the second run did change the Role',
    );
    assert.deepEqual(roleAfter.rules, roleBefore.rules);
    assert.deepEqual(
      [roleAfter.metadata.labels, roleAfter.metadata.annotations],
      [roleBefore.metadata.labels, roleBefore.metadata.annotations],
    );
    const secretAfter = await hubSecret('restore');
    assert.notEqual(
      secretAfter.metadata.resourceVersion,
      secretBefore.metadata.resourceVersion,
      'the second run did change the Secret',
    );
    assert.deepEqual(secretAfter.data, secretBefore.data);
    assert.deepEqual(
      [secretAfter.metadata.labels, secretAfter.metadata.annotations],
      [secretBefore.metadata.labels, secretBefore.metadata.annotations],
    );
    // The credential the Secret held before still works: its anchor and grant are as they were.
    const file = join(dir, `${run}-restored.kubeconfig`);
    writeFileSync(file, working, { mode: 0o600 });
    assert.equal(
      await kubectl(m1, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { kubeconfig: file }),
      `system:serviceaccount:${nsSys}:${sa}`,
    );
    await assertAccess(file, [['list', 'configmaps', '-n', nsA]], []);
    // Field ownership is back too: running the first arguments again leaves the grant unchanged.
    const again = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/${sa}`,
      '--role',
      'view',
      '-n',
      nsA,
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/restore`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    remember(decode((await hubSecret('restore')).data.kubeconfig));
    const actions = Object.fromEntries(again.json().objects.map((o: any) => [o.kind, o.action]));
    assert.deepEqual([actions.Role, actions.RoleBinding], ['unchanged', 'unchanged']);
  });
});

describe('fleet creds list (live)', () => {
  it("finds the credentials made above with the expiry the server granted, and which are fleet's", async () => {
    const res = await fleet([
      'creds',
      'list',
      '--kubeconfig',
      join(dir, `${run}-legacy.kubeconfig`),
      '--hub-kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json().items as any[];
    const at = (loc: string) => items.find((i) => i.location === loc);
    const mcr = at(`secret ${hub.context}:${hubNs}/member-1`);
    assert.equal(mcr.format, 'multicluster-runtime');
    assert.equal(mcr.method, 'bound-token');
    assert.equal(mcr.identity, `system:serviceaccount:${nsSys}:mcr`);
    assert.equal(mcr.managedByFleet, true);
    assert.equal(mcr.expires, (await hubSecret('member-1')).metadata.annotations['fleet.dev/credential-expires']);
    assert.ok(mcr.ageSeconds >= 0 && mcr.ageSeconds < 600, `age ${mcr.ageSeconds}`);
    assert.equal(Date.parse(mcr.expires) - Date.parse(mcr.issued), 7200_000);
    const capi = at(`secret ${hub.context}:${hubNs}/work-kubeconfig`);
    assert.deepEqual(
      [capi.format, capi.method, capi.identity],
      ['cluster-api', 'client-cert', `${run}-ci (groups ci)`],
    );
    const inv = at(`secret ${hub.context}:${hubNs}/m1-${consumer}`);
    assert.deepEqual([inv.format, inv.method], ['cluster-inventory', 'bound-token']);
    const legacy = items.find((i) => i.source.kind === 'kubeconfig');
    assert.deepEqual([legacy.method, legacy.expires, legacy.managedByFleet], ['legacy-token', undefined, true]);
    const foreign = at(`secret ${hub.context}:${hubNs}/theirs`);
    assert.equal(foreign.managedByFleet, false);
    // A kubeconfig-secretreader Secret fleet did not write has no label: it is found through the profile naming it.
    const text = decode((await hubSecret('member-1')).data.kubeconfig);
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'foreign-kcsr', namespace: hubNs },
        data: { cfg: Buffer.from(text).toString('base64') },
      }),
    );
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'foreign', namespace: hubNs },
        spec: { clusterManager: { name: 'other' } },
      }),
    );
    const accessProviders = [
      {
        name: 'kubeconfig-secretreader',
        cluster: {
          server: m1.url,
          extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { name: 'foreign-kcsr', key: 'cfg' } }],
        },
      },
    ];
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      'foreign',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { accessProviders } }),
    ]);
    const again = (await fleet(['creds', 'list', ...HUB, '-o', 'json'])).json().items as any[];
    const kcsr = again.find((i) => i.location === `secret ${hub.context}:${hubNs}/foreign-kcsr`);
    assert.deepEqual(
      [kcsr?.format, kcsr?.source.key, kcsr?.method, kcsr?.managedByFleet],
      ['kubeconfig-secretreader', 'cfg', 'bound-token', false],
    );
    // The hubs of the fleet configuration are read without --hub-kubeconfig.
    const viaConfig = await fleet(['creds', 'list', '--fleet-config', fleetYaml, '-o', 'json']);
    assert.equal(viaConfig.code, 0, viaConfig.stderr);
    assert.ok(viaConfig.json().items.some((i: any) => i.location === `secret ${hub.context}:${hubNs}/member-1`));
  });

  it('finds consumer Secrets fleet did not write: Flux ones through the Kustomizations and HelmReleases that use them, Argo CD ones by label', async () => {
    // The credential inside: the bound token of the multicluster-runtime Secret generated above, put into foreign Secrets.
    const text = decode((await hubSecret('member-1')).data.kubeconfig);
    const token = userOf(text).token;
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const secret = (name: string, data: Record<string, string>, labels?: Record<string, string>) =>
      applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: hubNs, ...(labels ? { labels } : {}) },
          data,
        }),
      );
    await secret('flux-ks', { 'kubeconfig-custom': b64(text) }); // referenced with an explicit key
    await secret('flux-hr', { 'value.yaml': b64(text) }); // no key in the references: Flux falls back to value.yaml
    await secret('flux-orphan', { value: b64(text) }); // referenced by nothing and unlabelled: not a consumer Secret anyone knows of
    await secret(
      'argo-foreign',
      {
        name: b64('member-1-by-hand'),
        server: b64(m1.url),
        config: b64(
          JSON.stringify({
            bearerToken: token,
            tlsClientConfig: { insecure: false, caData: Buffer.from(readFileSync(m1.caFile)).toString('base64') },
          }),
        ),
      },
      { 'argocd.argoproj.io/secret-type': 'cluster' },
    );
    const flux = (apiVersion: string, kind: string, name: string, secretRef: Record<string, string>) =>
      applyYaml(
        hub,
        JSON.stringify({
          apiVersion,
          kind,
          metadata: { name, namespace: hubNs },
          spec: { interval: '10m', kubeConfig: { secretRef } },
        }),
      );
    await flux('kustomize.toolkit.fluxcd.io/v1', 'Kustomization', 'apps', {
      name: 'flux-ks',
      key: 'kubeconfig-custom',
    });
    await flux('kustomize.toolkit.fluxcd.io/v1', 'Kustomization', 'infra', { name: 'flux-hr' });
    await flux('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'podinfo', { name: 'flux-hr' });
    await flux('kustomize.toolkit.fluxcd.io/v1', 'Kustomization', 'fleet-made', { name: 'flux-m1' }); // the Secret generated above

    // --live: each one authenticates. (The exit code is 1 here: tokens revoked by the tests above are on the same hub.)
    const res = await fleet(['creds', 'list', ...HUB, '--live', '-o', 'json']);
    const items = res.json().items as any[];
    const at = (name: string) => items.find((i) => i.location === `secret ${hub.context}:${hubNs}/${name}`);
    assert.deepEqual(
      items
        .filter(
          (i) =>
            !i.live.ok &&
            i.location.startsWith(`secret ${hub.context}:${hubNs}/`) &&
            /^(flux-|argo-)/.test(i.source.name),
        )
        .map((i) => `${i.location}: ${JSON.stringify(i.live)}`),
      [],
    );
    const expires = at('member-1').expires;
    const identity = `system:serviceaccount:${nsSys}:mcr`;
    const ks = at('flux-ks');
    assert.deepEqual(
      [
        ks?.format,
        ks?.source.key,
        ks?.method,
        ks?.identity,
        ks?.expires,
        ks?.managedByFleet,
        ks?.referencedBy,
        ks?.live?.ok,
      ],
      ['flux', 'kubeconfig-custom', 'bound-token', identity, expires, false, [`Kustomization ${hubNs}/apps`], true],
    );
    const hr = at('flux-hr');
    assert.deepEqual(
      [hr?.format, hr?.source.key, hr?.method, hr?.server, hr?.managedByFleet, hr?.referencedBy, hr?.live?.ok],
      [
        'flux',
        'value.yaml',
        'bound-token',
        m1.url,
        false,
        [`Kustomization ${hubNs}/infra`, `HelmRelease ${hubNs}/podinfo`],
        true,
      ],
    );
    assert.equal(at('flux-orphan'), undefined, "an unlabelled Secret nothing references is nobody's consumer Secret");
    const argo = at('argo-foreign');
    assert.deepEqual(
      [
        argo?.format,
        argo?.cluster,
        argo?.server,
        argo?.method,
        argo?.identity,
        argo?.expires,
        argo?.managedByFleet,
        argo?.live?.username,
      ],
      ['argocd', 'member-1-by-hand', m1.url, 'bound-token', identity, expires, false, identity],
    );
    // A fleet-made flux Secret that a Kustomization uses is listed once, fleet's, with the object that uses it.
    const made = items.filter((i) => i.location === `secret ${hub.context}:${hubNs}/flux-m1`);
    assert.deepEqual(
      made.map((i) => [i.format, i.managedByFleet, i.referencedBy]),
      [['flux', true, [`Kustomization ${hubNs}/fleet-made`]]],
    );
    assert.ok(!res.stdout.includes(token) && !res.stderr.includes(token));
  });

  it('--expiring-within: exit 1 when a credential expires within the window, 0 otherwise; --live sees a revoked token', async () => {
    const file = join(dir, `${run}-reader.kubeconfig`); // 1h token, revoked above
    const soon = await fleet(['creds', 'list', '--kubeconfig', file, '--expiring-within', '2h', '-o', 'json']);
    assert.equal(soon.code, 1, soon.stderr);
    assert.equal(soon.json().items[0].expiring, true);
    const later = await fleet(['creds', 'list', '--kubeconfig', file, '--expiring-within', '10m', '-o', 'json']);
    assert.equal(later.code, 0, later.stderr);
    assert.equal(later.json().items[0].expiring, false);
    const live = await fleet(['creds', 'list', '--kubeconfig', file, '--live', '-o', 'json']);
    assert.equal(live.code, 1);
    assert.equal(live.json().items[0].live.error.kind, 'unauthorized');
  });

  it('nothing found is not a success', async () => {
    const res = await fleet(['creds', 'list', '--kubeconfig', join(dir, 'no-such.kubeconfig')]);
    assert.notEqual(res.code, 0);
  });
});

describe('secrets', () => {
  it('no token or key made by these tests appears in any captured output', () => {
    assert.ok(secrets.length >= 8, `only ${secrets.length} secrets collected`);
    assert.ok(outputs.length > 20);
    for (const { what, res } of outputs) {
      for (const s of secrets)
        assert.ok(
          !res.stdout.includes(s) && !res.stderr.includes(s),
          `a secret appears in the output of fleet ${what}`,
        );
    }
  });
});
