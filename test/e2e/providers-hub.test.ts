// Hub-backed providers against the real control plane: the hub holds kubeconfig Secrets, Cluster API Clusters (v1beta2
// and v1beta1), ClusterProfiles (access providers with a test plugin and the upstream reference plugins, and the Secret
// strategy), and member-1's namespaces are virtual clusters. `fleet clusters list` must show every cluster once per
// source with upstream's names and the reason for each one that is not ready; `fleet auth whoami` must reach each good
// one with exactly the credential a controller would use.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { runFleet } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  kubectl,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const EXEC_INFO_PLUGIN = fileURLToPath(new URL('../fixtures/providers/exec-info-plugin.mjs', import.meta.url));
const PLUGINS_BUILD = fileURLToPath(new URL('../providers-plugins/build.sh', import.meta.url));

const run = uniqueName('prov');
const ns = run; // kubeconfig Secrets, ClusterProfiles (access providers), plugin Secrets
const nsCapi2 = `${run}-capi2`;
const nsCapi1 = `${run}-capi1`;
const nsInv2 = `${run}-inv2`; // ClusterProfiles read with the Secret strategy
const consumer = `${run}-consumer`;
const GOOD = 'fleet.test/good';
const good = { [GOOD]: 'true' };

const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (path: string) => readFileSync(path, 'utf8');
const caData = (s: typeof hub) => b64(text(s.caFile));
const docs = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n---\n');
const namespace = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});
const secret = (
  name: string,
  namespace: string,
  data: Record<string, string>,
  o: { labels?: Record<string, string>; type?: string } = {},
) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace, labels: o.labels ?? {} },
  type: o.type ?? 'Opaque',
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const mcrLabel = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
const execExtension = (config: object) => ({ name: 'client.authentication.k8s.io/exec', extension: config });

async function patchStatus(resource: string, name: string, namespace: string, status: object) {
  await kubectl(hub, [
    'patch',
    resource,
    name,
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

function profile(name: string, namespace: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name, namespace, labels },
    spec: { clusterManager: { name: 'fleet-e2e' } },
  };
}
const healthy = (status: 'True' | 'False' = 'True') => [
  {
    type: 'ControlPlaneHealthy',
    status,
    reason: status === 'True' ? 'Healthy' : 'Unreachable',
    message: status === 'True' ? '' : 'lease expired',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  },
];

let fleetYaml: string;
let pluginsDir: string;
const expectedUser: Record<string, string> = {};
/** Tokens the hub holds, none of which may ever be printed. */
const tokens: string[] = [];

before(async () => {
  pluginsDir = buildScriptOutput(PLUGINS_BUILD);
  const dir = scratchDir();
  await applyYaml(hub, docs(namespace(ns), namespace(nsCapi2), namespace(nsCapi1), namespace(nsInv2)));

  // kubeconfig provider: two good Secrets, two broken ones, and one whose label is not exactly "true".
  const secretUser = await createCertUser(m1, { user: `${run}-secret-user` });
  expectedUser['secrets#member1-cert'] = `${run}-secret-user`;
  expectedUser['secrets#hub-self'] = cp.admin.user;
  await applyYaml(
    hub,
    docs(
      secret('member1-cert', ns, { kubeconfig: text(secretUser.kubeconfigPath) }, { labels: { ...mcrLabel, ...good } }),
      secret('hub-self', ns, { kubeconfig: text(hub.kubeconfig) }, { labels: { ...mcrLabel, ...good } }),
      secret('no-key', ns, { other: 'x' }, { labels: mcrLabel }),
      secret('garbled', ns, { kubeconfig: 'clusters: [\n' }, { labels: mcrLabel }),
      secret(
        'labelled-yes',
        ns,
        { kubeconfig: text(hub.kubeconfig) },
        { labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'yes' } },
      ),
    ),
  );

  // cluster-api, v1beta2: a ready Cluster, one whose Secret is not of the Cluster API type (read by name), one pending.
  const capiCluster = (version: string, name: string, namespace: string, labels: Record<string, string> = {}) => ({
    apiVersion: `cluster.x-k8s.io/${version}`,
    kind: 'Cluster',
    metadata: { name, namespace, labels },
    spec: {},
  });
  expectedUser[`capi#${nsCapi2}/work`] = 'bob';
  expectedUser[`capi#${nsCapi2}/other-type`] = 'carol';
  expectedUser[`capi-v1beta1#${nsCapi1}/legacy`] = 'dave';
  await applyYaml(
    hub,
    docs(
      capiCluster('v1beta2', 'work', nsCapi2, good),
      capiCluster('v1beta2', 'other-type', nsCapi2, good),
      capiCluster('v1beta2', 'pending', nsCapi2),
      secret(
        'work-kubeconfig',
        nsCapi2,
        { value: text(tokenUser(m2, 'bob').kubeconfigPath) },
        { type: 'cluster.x-k8s.io/secret', labels: { 'cluster.x-k8s.io/cluster-name': 'work' } },
      ),
      secret('other-type-kubeconfig', nsCapi2, { value: text(tokenUser(m1, 'carol').kubeconfigPath) }),
      capiCluster('v1beta1', 'legacy', nsCapi1, good),
      capiCluster('v1beta1', 'legacy-pending', nsCapi1),
      secret(
        'legacy-kubeconfig',
        nsCapi1,
        { value: text(tokenUser(m2, 'dave').kubeconfigPath) },
        { type: 'cluster.x-k8s.io/secret' },
      ),
    ),
  );
  await patchStatus('clusters.cluster.x-k8s.io', 'work', nsCapi2, {
    initialization: { controlPlaneInitialized: true },
    phase: 'Provisioned',
  });
  await patchStatus('clusters.cluster.x-k8s.io', 'other-type', nsCapi2, {
    initialization: { controlPlaneInitialized: true },
  });
  await patchStatus('clusters.cluster.x-k8s.io', 'legacy', nsCapi1, { phase: 'Provisioned' });
  await patchStatus('clusters.cluster.x-k8s.io', 'legacy-pending', nsCapi1, { phase: 'Provisioning' });

  // cluster-inventory with access providers: the test plugin (token from a file named in the exec extension), and the
  // upstream secretreader / kubeconfig-secretreader plugins, which read Secrets on the hub through their own KUBECONFIG.
  const inventoryToken = join(dir, `${run}-inventory.token`);
  writeFileSync(inventoryToken, await createServiceAccountToken(hub, ns, 'inventory', { audience: m1.url }), {
    mode: 0o600,
  });
  const srToken = await createServiceAccountToken(hub, ns, 'secretreader', { audience: m2.url });
  tokens.push(
    srToken,
    readFileSync(inventoryToken, 'utf8'),
    ...['alice', 'bob', 'carol', 'dave'].flatMap((u) => [tokenUser(m1, u).token, tokenUser(m2, u).token]),
  );
  const kcsrUser = await createCertUser(m1, { user: `${run}-kcsr-user` });
  expectedUser[`inventory#${ns}/exec`] = `hub:system:serviceaccount:${ns}:inventory`;
  expectedUser[`inventory#${ns}/secretreader`] = `hub:system:serviceaccount:${ns}:secretreader`;
  expectedUser[`inventory#${ns}/kcsr`] = `${run}-kcsr-user`;
  await applyYaml(
    hub,
    docs(
      secret(`${run}-sr-token`, ns, { token: srToken }),
      secret(`${run}-kcsr`, ns, { kubeconfig: text(kcsrUser.kubeconfigPath) }),
      profile('exec', ns, good),
      profile('secretreader', ns, good),
      profile('kcsr', ns, good),
      profile('unhealthy', ns),
      profile('nomatch', ns),
    ),
  );
  const access = (name: string, s: typeof hub, config: object) => ({
    name,
    cluster: { server: s.url, 'certificate-authority-data': caData(s), extensions: [execExtension(config)] },
  });
  await patchStatus('clusterprofiles', 'exec', ns, {
    conditions: healthy(),
    properties: [{ name: 'cluster.clusterset.k8s.io', value: `${run}-exec-id` }],
    accessProviders: [access('fleet-test', m1, { tokenFile: inventoryToken })],
  });
  await patchStatus('clusterprofiles', 'secretreader', ns, {
    conditions: healthy(),
    accessProviders: [access('secretreader', m2, { clusterName: `${run}-sr-token` })],
  });
  await patchStatus('clusterprofiles', 'kcsr', ns, {
    conditions: healthy(),
    accessProviders: [access('kubeconfig-secretreader', m1, { name: `${run}-kcsr`, key: 'kubeconfig', namespace: ns })],
  });
  await patchStatus('clusterprofiles', 'unhealthy', ns, {
    conditions: healthy('False'),
    accessProviders: [access('fleet-test', m1, { tokenFile: inventoryToken })],
  });
  await patchStatus('clusterprofiles', 'nomatch', ns, {
    conditions: healthy(),
    accessProviders: [{ name: 'azure', cluster: { server: m1.url } }],
  });

  // The upstream plugins find the hub through KUBECONFIG, and the namespace through its context.
  const pluginHub = kubeconfigFor(
    hub,
    { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
    { name: `${run}-plugin-hub`, namespace: ns },
  );
  const execConfig = (command: string, env: { name: string; value: string }[] = []) => ({
    apiVersion: 'client.authentication.k8s.io/v1',
    command,
    args: [],
    env,
    provideClusterInfo: true,
  });
  const accessFile = join(dir, `${run}-access.json`);
  writeFileSync(
    accessFile,
    JSON.stringify({
      providers: [
        { name: 'fleet-test', execConfig: execConfig(EXEC_INFO_PLUGIN) },
        {
          name: 'secretreader',
          execConfig: execConfig(join(pluginsDir, 'secretreader'), [{ name: 'KUBECONFIG', value: pluginHub }]),
        },
        {
          name: 'kubeconfig-secretreader',
          execConfig: execConfig(join(pluginsDir, 'kubeconfig-secretreader'), [
            { name: 'KUBECONFIG', value: pluginHub },
          ]),
        },
      ],
    }),
  );

  // cluster-inventory with the Secret strategy, in its own namespace.
  expectedUser[`inventory-secrets#${nsInv2}/sec`] = 'alice';
  await applyYaml(
    hub,
    docs(
      profile('sec', nsInv2, good),
      profile('sec-missing', nsInv2),
      secret(
        `${run}-sec-config`,
        nsInv2,
        { Config: text(tokenUser(m2, 'alice').kubeconfigPath) },
        { labels: { 'x-k8s.io/cluster-inventory-consumer': consumer, 'x-k8s.io/cluster-profile': 'sec' } },
      ),
    ),
  );
  await patchStatus('clusterprofiles', 'sec', nsInv2, { conditions: healthy() });
  await patchStatus('clusterprofiles', 'sec-missing', nsInv2, { conditions: healthy() });

  // namespace provider over member-1: only this run's namespaces.
  expectedUser[`tenants#${run}-t1`] = cp.admin.user;
  await applyYaml(
    m1,
    docs(namespace(`${run}-t1`, { 'fleet.test/run': run, ...good }), namespace(`${run}-t2`, { 'fleet.test/run': run })),
  );

  fleetYaml = join(dir, `${run}-fleet.yaml`);
  writeFileSync(
    fleetYaml,
    [
      `hub: {kubeconfig: ${hub.kubeconfig}}`,
      'providers:',
      `  - {name: secrets, type: kubeconfig, namespace: ${ns}}`,
      `  - {name: capi, type: cluster-api, namespace: ${nsCapi2}}`,
      `  - {name: capi-v1beta1, type: cluster-api, namespace: ${nsCapi1}, apiVersion: v1beta1}`,
      `  - {name: inventory, type: cluster-inventory, namespace: ${ns}, providerFile: ${accessFile}}`,
      `  - {name: inventory-secrets, type: cluster-inventory, namespace: ${nsInv2}, consumer: ${consumer}}`,
      `  - {name: tenants, type: namespace, hub: {kubeconfig: ${m1.kubeconfig}}, selector: fleet.test/run=${run}}`,
      '',
    ].join('\n'),
  );
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', ns, nsCapi2, nsCapi1, nsInv2, '--wait=false']);
  await kubectl(m1, ['delete', 'namespace', `${run}-t1`, `${run}-t2`, '--wait=false']);
});

describe('hub-backed providers (live)', () => {
  it('clusters list shows every cluster once per source, with upstream names and the reason for each one not ready', async () => {
    const res = await runFleet(['clusters', 'list', '--fleet-config', fleetYaml, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<ClusterList>().items;
    const rows = Object.fromEntries(items.map((i) => [i.name, i]));
    assert.deepEqual(
      items.map((i) => i.name),
      [
        'secrets#garbled',
        'secrets#hub-self',
        'secrets#member1-cert',
        'secrets#no-key',
        `capi#${nsCapi2}/other-type`,
        `capi#${nsCapi2}/pending`,
        `capi#${nsCapi2}/work`,
        `capi-v1beta1#${nsCapi1}/legacy`,
        `capi-v1beta1#${nsCapi1}/legacy-pending`,
        `inventory#${ns}/exec`,
        `inventory#${ns}/kcsr`,
        `inventory#${ns}/nomatch`,
        `inventory#${ns}/secretreader`,
        `inventory#${ns}/unhealthy`,
        `inventory-secrets#${nsInv2}/sec`,
        `inventory-secrets#${nsInv2}/sec-missing`,
        `tenants#${run}-t1`,
        `tenants#${run}-t2`,
      ],
    );
    const notReady = Object.fromEntries(items.filter((i) => !i.ready).map((i) => [i.name, i.reason]));
    assert.deepEqual(Object.keys(notReady).sort(), [
      `capi#${nsCapi2}/pending`,
      `capi-v1beta1#${nsCapi1}/legacy-pending`,
      `inventory#${ns}/nomatch`,
      `inventory#${ns}/unhealthy`,
      `inventory-secrets#${nsInv2}/sec-missing`,
      'secrets#garbled',
      'secrets#no-key',
    ]);
    assert.match(
      notReady['secrets#garbled'] ?? '',
      new RegExp(`^secret ${ns}/garbled key kubeconfig: not valid YAML \\(line \\d+\\)`),
    );
    assert.equal(notReady['secrets#no-key'], `Secret ${ns}/no-key has no data key "kubeconfig"`);
    assert.equal(
      notReady[`capi#${nsCapi2}/pending`],
      `control plane not initialized (status.initialization.controlPlaneInitialized is not true); kubeconfig Secret ${nsCapi2}/pending-kubeconfig not found`,
    );
    assert.equal(
      notReady[`capi-v1beta1#${nsCapi1}/legacy-pending`],
      `phase is Provisioning, not Provisioned; kubeconfig Secret ${nsCapi1}/legacy-pending-kubeconfig not found`,
    );
    assert.match(
      notReady[`inventory#${ns}/nomatch`] ?? '',
      /^no access provider matches: the profile offers "azure", .*access.json configures "fleet-test", "secretreader", "kubeconfig-secretreader"$/,
    );
    assert.equal(notReady[`inventory#${ns}/unhealthy`], 'ControlPlaneHealthy is False (Unreachable): lease expired');
    assert.equal(
      notReady[`inventory-secrets#${nsInv2}/sec-missing`],
      `no Secret labelled x-k8s.io/cluster-inventory-consumer=${consumer},x-k8s.io/cluster-profile=sec-missing in namespace ${nsInv2}`,
    );

    assert.deepEqual(rows['secrets#member1-cert'].source, {
      kind: 'secret',
      namespace: ns,
      name: 'member1-cert',
      hub: 'hub',
      secret: `${ns}/member1-cert`,
      key: 'kubeconfig',
      context: `${run}-secret-user@member-1`,
    });
    assert.equal(rows['secrets#member1-cert'].server, m1.url);
    assert.equal(rows['secrets#member1-cert'].auth, 'client-cert');
    assert.equal(rows[`capi#${nsCapi2}/work`].source.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.equal(rows[`capi-v1beta1#${nsCapi1}/legacy`].source.apiVersion, 'cluster.x-k8s.io/v1beta1');
    assert.deepEqual(
      [rows[`inventory#${ns}/exec`].auth, rows[`inventory#${ns}/exec`].source.accessProvider],
      ['exec', 'fleet-test'],
    );
    assert.deepEqual(
      [rows[`inventory#${ns}/exec`].clusterId, rows[`inventory#${ns}/exec`].clusterIdSource],
      [`${run}-exec-id`, 'ClusterProfile'],
    );
    assert.equal(rows[`inventory-secrets#${nsInv2}/sec`].source.secret, `${nsInv2}/${run}-sec-config`);
    assert.equal(rows[`tenants#${run}-t1`].server, m1.url);
    assert.ok(!res.stdout.includes('BEGIN'), 'no key or certificate in the listing');
    for (const t of tokens) assert.ok(!res.stdout.includes(t) && !res.stderr.includes(t), 'no token in the listing');

    const strict = await runFleet(['clusters', 'list', '--fleet-config', fleetYaml, '--strict', '-o', 'name']);
    assert.equal(strict.code, 1);
    assert.equal(strict.stdout.split('\n').filter(Boolean).length, items.length);
  });

  it('auth whoami reaches every good cluster through every provider with the credential a controller would use', async () => {
    const res = await runFleet(['auth', 'whoami', '--fleet-config', fleetYaml, '-l', `${GOOD}=true`, '-o', 'json'], {
      timeoutMs: 120_000,
    });
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const seen = Object.fromEntries(
      res.json<WhoAmIList>().items.map((i) => [i.cluster, i.ok ? i.user?.username : `failed: ${i.error?.message}`]),
    );
    assert.deepEqual(seen, expectedUser);
    for (const t of tokens) assert.ok(!res.stdout.includes(t) && !res.stderr.includes(t), 'no token in the output');
  });

  it('auth whoami --all also runs the broken ones, each failing on its own row', async () => {
    const res = await runFleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--all', '-o', 'json'], {
      timeoutMs: 120_000,
    });
    assert.equal(res.code, 1);
    const items = res.json<WhoAmIList>().items;
    assert.equal(items.length, 18);
    const failed = items
      .filter((i) => !i.ok)
      .map((i) => i.cluster)
      .sort();
    // Clusters not ready but with a server (an unhealthy profile) are still tried, and answer.
    assert.deepEqual(failed, [
      `capi#${nsCapi2}/pending`,
      `capi-v1beta1#${nsCapi1}/legacy-pending`,
      `inventory#${ns}/nomatch`,
      `inventory-secrets#${nsInv2}/sec-missing`,
      'secrets#garbled',
      'secrets#no-key',
    ]);
    assert.equal(
      items.find((i) => i.cluster === `inventory#${ns}/unhealthy`)?.user?.username,
      `hub:system:serviceaccount:${ns}:inventory`,
    );
  });

  it('--provider picks one provider, names unprefixed; a cluster is found by its short name', async () => {
    const res = await runFleet(['clusters', 'list', '--fleet-config', fleetYaml, '--provider', 'capi', '-o', 'name']);
    assert.deepEqual([res.code, res.stdout], [0, `${nsCapi2}/other-type\n${nsCapi2}/pending\n${nsCapi2}/work\n`]);
    const who = await runFleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--cluster', 'work', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(
      who.json<WhoAmIList>().items.map((i) => [i.cluster, i.user?.username]),
      [[`capi#${nsCapi2}/work`, 'bob']],
    );
  });

  it('a provider type on the command line reads the hub named by --kubeconfig/--context with upstream defaults', async () => {
    // The default namespace of the kubeconfig provider is the hub context's namespace.
    const hubInNs = kubeconfigFor(
      hub,
      { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
      { name: `${run}-hub-ns`, namespace: ns },
    );
    const res = await runFleet(['clusters', 'list', '--provider', 'kubeconfig', '--kubeconfig', hubInNs, '-o', 'name']);
    assert.deepEqual([res.code, res.stdout], [0, 'garbled\nhub-self\nmember1-cert\nno-key\n']);
  });
});

describe('hub-backed providers: cluster ids and failures', () => {
  it('--live reads the ClusterProperty cluster id, else the kube-system namespace UID', async () => {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'about.k8s.io/v1beta1',
        kind: 'ClusterProperty',
        metadata: { name: 'cluster.clusterset.k8s.io' },
        spec: { value: `${run}-hub-id` },
      }),
    );
    try {
      const res = await runFleet([
        'clusters',
        'list',
        '--fleet-config',
        fleetYaml,
        '--provider',
        'secrets',
        '--live',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const rows = Object.fromEntries(res.json<ClusterList>().items.map((i) => [i.name, i]));
      assert.deepEqual(
        [rows['hub-self'].clusterId, rows['hub-self'].clusterIdSource],
        [`${run}-hub-id`, 'ClusterProperty'],
      );
      // The Secret's credential may not read kube-system: the id is then unknown, and the cluster still ready.
      assert.deepEqual([rows['member1-cert'].ready, rows['member1-cert'].clusterId], [true, undefined]);
      assert.equal(rows['no-key'].clusterId, undefined);

      await applyYaml(
        m1,
        docs(
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            metadata: { name: `${run}-cluster-id` },
            rules: [{ apiGroups: [''], resources: ['namespaces'], resourceNames: ['kube-system'], verbs: ['get'] }],
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name: `${run}-cluster-id` },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${run}-cluster-id` },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${run}-secret-user` }],
          },
        ),
      );
      const uid = (await kubectl(m1, ['get', 'namespace', 'kube-system', '-o', 'jsonpath={.metadata.uid}'])).trim();
      const again = await runFleet([
        'clusters',
        'list',
        '--fleet-config',
        fleetYaml,
        '--provider',
        'secrets',
        '--live',
        '-o',
        'json',
      ]);
      const member = again.json<ClusterList>().items.find((i) => i.name === 'member1-cert');
      assert.deepEqual([member?.clusterId, member?.clusterIdSource], [uid, 'kube-system']);

      const table = await runFleet([
        'clusters',
        'list',
        '--fleet-config',
        fleetYaml,
        '--provider',
        'secrets',
        '--live',
      ]);
      assert.match(table.stdout.split('\n')[0], /^NAME\s+PROVIDER\s+SERVER\s+AUTH\s+READY\s+ID\s+REASON$/);
    } finally {
      await kubectl(hub, [
        'delete',
        'clusterproperties.about.k8s.io',
        'cluster.clusterset.k8s.io',
        '--ignore-not-found',
      ]);
      await kubectl(m1, ['delete', 'clusterrolebinding,clusterrole', `${run}-cluster-id`, '--ignore-not-found']);
    }
  });

  it('an unreachable hub is one failed row; the other providers are still listed', async () => {
    const dir = scratchDir();
    const deadHub = join(dir, `${run}-dead-hub.kubeconfig`);
    writeFileSync(deadHub, text(hub.kubeconfig).replace(hub.url, 'https://127.0.0.1:1'));
    const yaml = join(dir, `${run}-dead.yaml`);
    writeFileSync(
      yaml,
      `providers:\n  - {name: dead, type: kubeconfig, hub: {kubeconfig: ${deadHub}}}\n  - {name: tenants, type: namespace, hub: {kubeconfig: ${m1.kubeconfig}}, selector: fleet.test/run=${run}}\n`,
    );
    const res = await runFleet(['clusters', 'list', '--fleet-config', yaml, '-o', 'json']);
    assert.equal(res.code, 1);
    const [dead, ...rest] = res.json<ClusterList>().items;
    assert.deepEqual(
      [dead.name, dead.ready, dead.reason],
      ['dead', false, 'cannot list clusters: kubeconfig provider "dead": https://127.0.0.1:1: connection refused'],
    );
    assert.deepEqual(
      rest.map((r) => r.name),
      [`tenants#${run}-t1`, `tenants#${run}-t2`],
    );
  });

  it('cluster-api: a hub serving only v1beta1 is read as v1beta1 (older Cluster API)', async () => {
    // member-2 stands in for an older management cluster: it gets a Cluster CRD that serves v1beta1 only.
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'clusters.cluster.x-k8s.io' },
      spec: {
        group: 'cluster.x-k8s.io',
        scope: 'Namespaced',
        names: { kind: 'Cluster', listKind: 'ClusterList', plural: 'clusters', singular: 'cluster' },
        versions: [
          {
            name: 'v1beta1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    const existing = await kubectl(m2, ['get', 'crd', '-o', 'name']);
    assert.ok(!existing.includes('clusters.cluster.x-k8s.io'), 'member-2 must not have Cluster API already');
    await applyYaml(m2, JSON.stringify(crd));
    try {
      await kubectl(m2, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/clusters.cluster.x-k8s.io']);
      const nsOld = `${run}-old`;
      await applyYaml(
        m2,
        docs(
          namespace(nsOld),
          {
            apiVersion: 'cluster.x-k8s.io/v1beta1',
            kind: 'Cluster',
            metadata: { name: 'old', namespace: nsOld },
            spec: {},
          },
          secret(
            'old-kubeconfig',
            nsOld,
            { value: text(tokenUser(m1, 'bob').kubeconfigPath) },
            { type: 'cluster.x-k8s.io/secret' },
          ),
        ),
      );
      await kubectl(m2, [
        'patch',
        'clusters.cluster.x-k8s.io',
        'old',
        '-n',
        nsOld,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Provisioned"}}',
      ]);
      const res = await runFleet([
        'clusters',
        'list',
        '--provider',
        'cluster-api',
        '--kubeconfig',
        m2.kubeconfig,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const [old] = res.json().items;
      assert.deepEqual(
        [old.name, old.ready, old.source.apiVersion, old.server],
        [`${nsOld}/old`, true, 'cluster.x-k8s.io/v1beta1', m1.url],
      );
      // And where Cluster API is missing altogether, the provider says so.
      const none = await runFleet(['clusters', 'list', '--provider', 'cluster-api', '--kubeconfig', m1.kubeconfig]);
      assert.deepEqual(
        [none.code, none.stderr],
        [
          1,
          'error: cluster-api provider "cluster-api": hub member-1: the hub serves no cluster.x-k8s.io API (is Cluster API installed?)\n',
        ],
      );
    } finally {
      await kubectl(m2, ['delete', 'namespace', `${run}-old`, '--ignore-not-found', '--wait=false']);
      await kubectl(m2, ['delete', 'crd', 'clusters.cluster.x-k8s.io', '--wait=false']);
    }
  });
});
