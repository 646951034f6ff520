// The argocd provider (issue 39, item 1) on the real control plane, against Secrets Argo CD's own code wrote
// (test/argocd-consumer -mode add: `argocd cluster add`'s RBAC on the member through clusterauth's
// InstallClusterManagerRBAC, the Cluster its CLI builds, the Secret its database layer's CreateCluster writes):
// - `clusters list` names, servers, project, namespaces, clusterResources and shard equal Argo CD's own reading
//   (util/db SecretToCluster), plus the in-cluster entry Argo CD adds;
// - `-l` selects what an ApplicationSet cluster generator with the same selector selects;
// - `clusters inspect` shows project, namespaces, clusterResources, shard; `auth whoami` is the identity Argo CD's own
//   rest.Config has (argocd-manager's legacy token; the client certificate `argocd cluster add` kept instead);
// - an execProviderConfig is refused (never run) until fleet.yaml allows its command, then runs; an awsAuthConfig's
//   argocd-k8s-auth is refused; a Secret Argo CD cannot decode is listed not ready with why;
// - the token never appears in fleet's output;
// - (issue 46) the in-cluster entry is reached with the hub's own credential only with fleet.yaml's `inCluster: true`,
//   and a Secret for https://kubernetes.default.svc without a credential of its own is listed as `in-cluster`, never
//   under the name and labels its author gave it (which Argo CD's own reading shows it would carry there).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import {
  applyYaml,
  createServiceAccountToken,
  kubectl,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';
import {
  type ArgocdAdded,
  argocdClusterAdd,
  argocdConnect,
  argocdConsumer,
  argocdNamespace,
  argocdView,
  breakArgocdCluster,
  createArgocdCluster,
  createManyArgocdClusters,
  removeArgocdCluster,
} from '../support/argocd.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const ns = uniqueName('argo');
const mgr1 = uniqueName('argo-mgr');
const mgr2 = uniqueName('argo-mgr');
const dir = scratchDir();
const marker = join(dir, `${ns}.plugin-ran`);
const plugin = join(dir, `${ns}-plugin.sh`);
const secrets: string[] = [];
let prod: ArgocdAdded;
let staging: ArgocdAdded;
let hubExec: ArgocdAdded;
let hubSaUser: string;

/**
 * The fleet configuration: `allow` true lists the plugin with the variable its execProviderConfig sets (issue 46: a
 * variable reaches a plugin from hub data only by an entry's env), 'command' the plugin alone.
 */
function config(allow: boolean | 'command' = false): string {
  const file = join(dir, `${ns}${allow === true ? '-allow' : allow ? `-${allow}` : ''}.fleet.yaml`);
  const entry = [
    `  - name: argo`,
    `    type: argocd`,
    `    namespace: ${ns}`,
    `    hub: {kubeconfig: ${hub.kubeconfig}}`,
    // The operator's opt-in to reach the in-cluster entry with the hub's own credential (issue 46; its absence is
    // tested in the describe below).
    `    inCluster: true`,
    ...(allow === true ? [`    credentialPluginAllowlist: [{command: ${plugin}, env: [GREETING]}]`] : []),
    ...(allow === 'command' ? [`    credentialPluginAllowlist: [{command: ${plugin}}]`] : []),
  ];
  writeFileSync(file, ['kind: FleetConfig', 'providers:', ...entry, ''].join('\n'));
  return file;
}

async function fleet(args: string[], allow: boolean | 'command' = false): Promise<CliResult> {
  const r = await runFleet([...args, '--fleet-config', config(allow)], { timeoutMs: 120_000 });
  for (const s of secrets) {
    assert.ok(!r.stdout.includes(s), `a token appears in the stdout of fleet ${args.join(' ')}`);
    assert.ok(!r.stderr.includes(s), `a token appears in the stderr of fleet ${args.join(' ')}`);
  }
  return r;
}

interface Row {
  name: string;
  server?: string;
  auth: string;
  ready: boolean;
  reason?: string;
  labels: Record<string, string>;
  source: {
    kind: string;
    name?: string;
    secret?: string;
    argocd?: {
      server: string;
      project?: string;
      namespaces: string[];
      clusterResources: boolean;
      shard?: number;
      inCluster?: boolean;
      argocdName?: string;
    };
  };
}

describe('argocd provider: clusters Argo CD wrote', { timeout: 600_000 }, () => {
  before(async () => {
    argocdConsumer();
    await argocdNamespace(hub, ns);
    await kubectl(m1, ['create', 'namespace', mgr1]);
    await kubectl(m2, ['create', 'namespace', mgr2]);
    // argocd-manager with a Role in its own namespace (--namespace): the cluster-wide role and binding have fixed
    // names, which parallel tests on the shared members must not rebind.
    prod = await argocdClusterAdd(hub, {
      namespace: ns,
      member: m1,
      systemNamespace: mgr1,
      clusterName: 'prod-eu',
      namespaces: [mgr1],
      clusterResources: true,
      project: 'team-a',
      shard: 2,
      labels: { env: 'prod', region: 'eu' },
      tokenOnly: true,
    });
    // A kubeconfig with a client certificate: `argocd cluster add` stores the certificate, not the token it made.
    staging = await argocdClusterAdd(hub, {
      namespace: ns,
      member: m2,
      systemNamespace: mgr2,
      clusterName: 'staging',
      namespaces: [mgr2],
      labels: { env: 'staging' },
    });
    const legacy = await kubectl(m1, [
      'get',
      'secret',
      'argocd-manager-long-lived-token',
      '-n',
      mgr1,
      '-o',
      'jsonpath={.data.token}',
    ]);
    secrets.push(Buffer.from(legacy, 'base64').toString('utf8'));

    // An exec plugin as data: it leaves a marker when it runs and answers with a hub ServiceAccount's token.
    const saNs = uniqueName('argo-exec');
    const token = await createServiceAccountToken(hub, saNs, 'plugin', { duration: '1h' });
    secrets.push(token);
    hubSaUser = `system:serviceaccount:${saNs}:plugin`;
    writeFileSync(
      plugin,
      `#!/bin/sh\nprintf '%s' "$GREETING" > '${marker}'\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
      { mode: 0o700 },
    );
    hubExec = await argocdClusterAdd(hub, {
      namespace: ns,
      member: hub,
      systemNamespace: 'unused',
      clusterName: 'hub-exec',
      labels: { env: 'prod' },
      tokenOnly: true,
      exec: { command: plugin, env: { GREETING: 'hello' } },
    });
    // What Argo CD's CLI does not write: an EKS cluster (awsAuthConfig), and a Secret Argo CD cannot decode.
    await createArgocdCluster(hub, ns, {
      id: 'eks-like',
      name: 'eks',
      server: 'https://127.0.0.1:9/',
      config: { awsAuthConfig: { clusterName: 'eks-prod', roleARN: 'arn:aws:iam::1:role/x' } },
      labels: { env: 'prod', cloud: 'aws' },
    });
    await createArgocdCluster(hub, ns, { id: 'broken', name: 'broken', server: 'https://127.0.0.1:9', config: {} });
  });

  after(async () => {
    await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
    await kubectl(m1, ['delete', 'namespace', mgr1, '--wait=false']).catch(() => undefined);
    await kubectl(m2, ['delete', 'namespace', mgr2, '--wait=false']).catch(() => undefined);
  });

  it('lists every cluster as Argo CD reads it, with the in-cluster entry, and labels -l selects like a cluster generator', async () => {
    const broken = await breakArgocdCluster(hub, ns, 'broken');
    const r = await fleet(['clusters', 'list', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr); // not-ready clusters are listed, not failed (--strict would fail)
    const rows = r.json<{ items: Row[] }>().items;
    const argo = await argocdView(hub, ns);
    const byName = new Map(rows.map((x) => [x.name, x]));
    assert.deepEqual([...byName.keys()].sort(), ['broken', 'eks', 'hub-exec', 'in-cluster', 'prod-eu', 'staging']);
    for (const c of argo.clusters) {
      if (c.error) {
        // Argo CD skips it; fleet lists it, not ready, saying why.
        const row = rows.find((x) => x.source.name === c.secret)!;
        assert.equal(row.ready, false);
        assert.match(row.reason!, broken);
        continue;
      }
      const row = byName.get(c.name)!;
      assert.ok(row, `fleet lists Argo CD's cluster ${c.name}`);
      assert.equal(row.source.kind, 'argocd-cluster');
      assert.equal(row.source.name, c.secret);
      assert.equal(row.source.argocd!.server, c.server);
      assert.equal(row.source.argocd!.project ?? '', c.project);
      assert.deepEqual(row.source.argocd!.namespaces, c.namespaces ?? []);
      assert.equal(row.source.argocd!.clusterResources, c.clusterResources);
      assert.equal(row.source.argocd!.shard, c.shard);
      for (const [k, v] of Object.entries(c.labels)) assert.equal(row.labels[k], v);
    }
    const p = byName.get('prod-eu')!;
    assert.equal(p.ready, true, p.reason);
    assert.equal(p.server, m1.url);
    assert.equal(p.auth, 'token');
    assert.equal(byName.get('staging')!.auth, 'client-cert');
    assert.equal(p.source.secret, `${ns}/${prod.secret}`);
    const inCluster = byName.get('in-cluster')!;
    assert.equal(inCluster.ready, true, inCluster.reason);
    assert.equal(inCluster.server, hub.url);
    assert.equal(inCluster.source.argocd!.inCluster, true);
    // Refused data plugins: named, not run.
    const exec = byName.get('hub-exec')!;
    assert.equal(exec.ready, false);
    assert.match(exec.reason!, new RegExp(`exec plugin "${plugin}" is named by hub data`));
    const eks = byName.get('eks')!;
    assert.equal(eks.ready, false);
    assert.match(eks.reason!, /exec plugin "argocd-k8s-auth" is named by hub data/);
    assert.equal(eks.source.argocd!.server, 'https://127.0.0.1:9'); // trailing slash dropped, as Argo CD does
    assert.ok(!existsSync(marker), 'the refused plugin ran');

    const selectors: Array<Record<string, string>> = [
      { env: 'prod' },
      { env: 'prod', region: 'eu' },
      { cloud: 'aws' },
      { env: 'staging' },
    ];
    for (const selector of selectors) {
      const sel = Object.entries(selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const l = await fleet(['clusters', 'list', '-l', sel, '-o', 'json']);
      const names = l
        .json<{ items: Row[] }>()
        .items.map((x) => x.name)
        .sort();
      assert.deepEqual(names, (await argocdView(hub, ns, selector)).generator, `-l ${sel}`);
    }
    // The generator's own label: every Secret's cluster, not the in-cluster entry (it has no Secret).
    const typed = await fleet(['clusters', 'list', '-l', 'argocd.argoproj.io/secret-type=cluster', '-o', 'name']);
    assert.ok(!typed.stdout.includes('in-cluster'));
    assert.ok(typed.stdout.includes('prod-eu'));
  });

  it('inspect shows project, namespaces, clusterResources and shard; the Secret name works as a short name', async () => {
    const j = await fleet(['clusters', 'inspect', 'prod-eu', '-o', 'json']);
    assert.equal(j.code, 0, j.stderr);
    const out = j.json<Row & { live?: { ok: boolean } }>();
    assert.deepEqual(out.source.argocd, {
      server: m1.url,
      project: 'team-a',
      namespaces: [mgr1],
      clusterResources: true,
      shard: 2,
    });
    assert.equal(out.live?.ok, true);
    const human = await fleet(['clusters', 'inspect', prod.secret, '--offline']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /Argo CD project\s+team-a/);
    assert.match(human.stdout, new RegExp(`Argo CD namespaces\\s+${mgr1}`));
    assert.match(human.stdout, /Argo CD cluster resources\s+true/);
    assert.match(human.stdout, /Argo CD shard\s+2/);
    assert.match(human.stdout, /Name\s+prod-eu/);
  });

  it('whoami is the identity Argo CD connects as, through its own rest.Config', async () => {
    const r = await fleet(['auth', 'whoami', '-c', 'prod-eu', '-c', 'staging', '-c', 'in-cluster', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const users = Object.fromEntries(
      r
        .json<{ items: Array<{ cluster: string; user: { username: string } }> }>()
        .items.map((i) => [i.cluster, i.user.username]),
    );
    assert.equal(users['prod-eu'], `system:serviceaccount:${mgr1}:argocd-manager`);
    assert.equal(users['prod-eu'], (await argocdConnect(hub, ns, prod.secret)).username);
    assert.equal(users.staging, (await argocdConnect(hub, ns, staging.secret)).username);
    assert.equal(users.staging, cp.admin.user);
    assert.equal(users['in-cluster'], cp.admin.user); // the hub's own context: fleet is not in Argo CD's pod
  });

  it('an execProviderConfig runs only where fleet.yaml allows its command', async () => {
    const refused = await fleet(['auth', 'whoami', '-c', 'hub-exec', '-o', 'json']);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout + refused.stderr, /credentialPluginAllowlist/);
    assert.ok(!existsSync(marker), 'the refused plugin ran');
    const noEnv = await fleet(['auth', 'whoami', '-c', 'hub-exec', '-o', 'json'], 'command');
    assert.equal(noEnv.code, 1);
    assert.match(
      noEnv.stderr,
      /hub data sets GREETING for exec plugin ".*", and no credentialPluginAllowlist entry for that command allows it .*add env: \[GREETING\] to the entry for /,
    );
    assert.ok(!existsSync(marker), 'the plugin ran with a variable no entry allows');
    const allowed = await fleet(['auth', 'whoami', '-c', 'hub-exec', '-o', 'json'], true);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.json<{ items: Array<{ user: { username: string } }> }>().items[0].user.username, hubSaUser);
    assert.equal(readFileSync(marker, 'utf8'), 'hello', 'the allowed plugin ran with the variable its entry allows');
    assert.equal(hubExec.name, 'hub-exec');
  });

  it('a removed Secret is gone; argocd-cm can turn the in-cluster entry off; --provider argocd reads namespace argocd', async () => {
    await removeArgocdCluster(hub, ns, 'broken');
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'argocd-cm', namespace: ns },
        data: { 'cluster.inClusterEnabled': 'false' },
      }),
    );
    const r = await fleet(['clusters', 'list', '-o', 'name']);
    const names = r.stdout.trim().split('\n').sort();
    assert.deepEqual(names, ['eks', 'hub-exec', 'prod-eu', 'staging']);
    assert.equal((await argocdView(hub, ns)).clusters.length, 4);

    const d = await runFleet([
      'clusters',
      'list',
      '--provider',
      'argocd',
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(d.code, 0, d.stderr);
    const rows = d.json<{ items: Row[] }>().items;
    assert.ok(rows.every((x) => x.source.kind === 'argocd-cluster'));
    assert.ok(rows.some((x) => x.name === 'in-cluster'));
  });

  it('more clusters than one page (500) are all listed, as Argo CD lists them', async () => {
    const many = uniqueName('argo-many');
    await argocdNamespace(hub, many, { inClusterEnabled: false });
    try {
      const names = await createManyArgocdClusters(hub, many, 510, {
        server: m1.url,
        config: { bearerToken: 'not-a-real-token', tlsClientConfig: { caData: 'AAAA' } },
      });
      const file = join(dir, `${many}.fleet.yaml`);
      writeFileSync(
        file,
        `kind: FleetConfig\nproviders:\n  - {name: many, type: argocd, namespace: ${many}, hub: {kubeconfig: ${hub.kubeconfig}}}\n`,
      );
      const r = await runFleet(['clusters', 'list', '-o', 'name', '--fleet-config', file], { timeoutMs: 180_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n').sort(), names);
      assert.equal((await argocdView(hub, many)).clusters.length, 510);
    } finally {
      await kubectl(hub, ['delete', 'namespace', many, '--wait=false']).catch(() => undefined);
    }
  });

  it('a config whose execProviderConfig.config nests 400,000 deep is one not-ready cluster naming the limit (issue 46; was internal: Maximum call stack size exceeded)', async () => {
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    await createArgocdCluster(hub, ns, {
      id: 'deep',
      name: 'deep',
      server: 'https://127.0.0.1:9',
      config: `{"execProviderConfig":{"command":"${plugin}","apiVersion":"client.authentication.k8s.io/v1","config":${deep}}}`,
    });
    try {
      for (const format of ['json', 'yaml', 'wide']) {
        const r = await fleet(['clusters', 'list', '-o', format], true);
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /internal|call stack/);
        if (format === 'json') {
          const row = r.json<{ items: Row[] }>().items.find((x) => x.source.name === 'deep')!;
          assert.equal(row.ready, false);
          assert.equal(
            row.reason,
            `Secret ${ns}/deep key config: JSON nested deeper than 1000 levels (Argo CD skips this cluster)`,
          );
        }
      }
    } finally {
      await removeArgocdCluster(hub, ns, 'deep');
    }
  });

  it('a fleet.yaml entry with an unknown field is refused before any cluster is touched', async () => {
    const file = join(dir, `${ns}-bad.fleet.yaml`);
    writeFileSync(file, `kind: FleetConfig\nproviders:\n  - {name: argo, type: argocd, namespaces: [x]}\n`);
    const r = await runFleet(['clusters', 'list', '--fleet-config', file]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /namespaces/);
  });
});

describe('argocd provider: the in-cluster entry and the hub credential (issue 46)', { timeout: 300_000 }, () => {
  const ns2 = uniqueName('argo-in');
  const outputs: CliResult[] = [];
  let ownToken: string;
  let ownUser: string;

  /** A fleet.yaml for ns2, with or without the operator's opt-in. */
  function file(optIn: boolean): string {
    const f = join(dir, `${ns2}${optIn ? '-in' : ''}.fleet.yaml`);
    writeFileSync(
      f,
      [
        'kind: FleetConfig',
        'providers:',
        `  - name: argo`,
        `    type: argocd`,
        `    namespace: ${ns2}`,
        `    hub: {kubeconfig: ${hub.kubeconfig}}`,
        ...(optIn ? ['    inCluster: true'] : []),
        '',
      ].join('\n'),
    );
    return f;
  }
  async function run(args: string[], optIn: boolean): Promise<CliResult> {
    const r = await runFleet([...args, '--fleet-config', file(optIn)], { timeoutMs: 120_000 });
    outputs.push(r);
    return r;
  }
  const rows = (r: CliResult) => r.json<{ items: Row[] }>().items;
  const hubContext = () =>
    (yaml.load(readFileSync(hub.kubeconfig, 'utf8')) as { 'current-context': string })['current-context'];
  const optInLine = (optIn: boolean) => `add inCluster: true to provider "argo" in ${file(optIn)}`;

  before(async () => {
    argocdConsumer();
    await argocdNamespace(hub, ns2);
    const saNs = uniqueName('argo-in-sa');
    ownToken = await createServiceAccountToken(hub, saNs, 'local', { duration: '1h' });
    ownUser = `system:serviceaccount:${saNs}:local`;
  });
  after(async () => {
    await kubectl(hub, ['delete', 'namespace', ns2, '--wait=false']).catch(() => undefined);
  });

  it("Argo CD's own in-cluster entry: not ready without inCluster: true (the refusal says how), the hub's context with it", async () => {
    // Argo CD's reading: no Secret for the address, so it adds its local cluster, named in-cluster.
    assert.deepEqual((await argocdView(hub, ns2)).generator, ['in-cluster']);
    const off = await run(['clusters', 'list', '-o', 'json'], false);
    assert.equal(off.code, 0, off.stderr);
    const row = rows(off).find((x) => x.name === 'in-cluster')!;
    assert.equal(row.ready, false);
    assert.equal(
      row.reason,
      `Argo CD's in-cluster entry (https://kubernetes.default.svc) is reached with the hub's own credential (context ${hubContext()}), which fleet uses only when its configuration says so; to allow it, ${optInLine(false)}`,
    );
    const who = await run(['auth', 'whoami', '-c', 'in-cluster', '-o', 'json'], false);
    assert.notEqual(who.code, 0);
    assert.ok(who.stderr.includes(optInLine(false)), who.stderr);

    const on = await run(['auth', 'whoami', '-c', 'in-cluster', '-o', 'json'], true);
    assert.equal(on.code, 0, on.stderr);
    assert.equal(on.json<{ items: Array<{ user: { username: string } }> }>().items[0].user.username, cp.admin.user);
  });

  it('a Secret for https://kubernetes.default.svc without a credential is in-cluster, never its own name and labels', async () => {
    await createArgocdCluster(hub, ns2, {
      id: 'borrowed',
      name: 'prod-eu',
      server: 'https://kubernetes.default.svc',
      config: {},
      labels: { env: 'prod', tier: 'payments' },
    });
    // Argo CD itself would call it prod-eu with those labels (and reach it with its own pod's ServiceAccount).
    const argo = await argocdView(hub, ns2, { env: 'prod' });
    assert.deepEqual(argo.generator, ['prod-eu']);
    assert.equal(argo.clusters.find((c) => c.secret === 'borrowed')?.name, 'prod-eu');

    for (const optIn of [false, true]) {
      const l = await run(['clusters', 'list', '-o', 'json'], optIn);
      assert.equal(l.code, 0, l.stderr);
      const all = rows(l);
      assert.deepEqual(
        all.map((x) => x.name),
        ['in-cluster'],
        'one entry, under the name Argo CD gives its in-cluster entry',
      );
      const row = all[0];
      assert.equal(row.source.secret, `${ns2}/borrowed`);
      assert.equal(row.source.argocd?.argocdName, 'prod-eu');
      assert.equal(row.labels.env, undefined);
      assert.equal(row.labels.tier, undefined);
      assert.equal(row.ready, optIn, row.reason);
      if (!optIn)
        assert.ok(
          row.reason?.startsWith(
            `Secret ${ns2}/borrowed (server https://kubernetes.default.svc, no credential of its own)`,
          ),
        );
      // The author's name and labels select nothing.
      const byLabel = await run(['clusters', 'list', '-l', 'env=prod', '-o', 'json'], optIn);
      // No cluster matches (the listing may then be empty or an error line): neither the entry nor the Secret's name.
      assert.ok(!/in-cluster|prod-eu|borrowed/.test(byLabel.stdout), byLabel.stdout);
      const byName = await run(['auth', 'whoami', '-c', 'prod-eu', '-o', 'json'], optIn);
      assert.notEqual(byName.code, 0, 'prod-eu is not a cluster of this provider');
      const byAlias = await run(['auth', 'whoami', '-c', 'borrowed', '-o', 'json'], optIn);
      assert.notEqual(byAlias.code, 0, "the Secret's name is no alias of the hub's credential");
    }
    const who = await run(['auth', 'whoami', '-c', 'in-cluster', '-o', 'json'], true);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json<{ items: Array<{ user: { username: string } }> }>().items[0].user.username, cp.admin.user);
    await removeArgocdCluster(hub, ns2, 'borrowed');
  });

  it('a Secret for the address with its own token borrows nothing: named and labelled as Argo CD reads it, no opt-in', async () => {
    await createArgocdCluster(hub, ns2, {
      id: 'own',
      name: 'local-sa',
      server: 'https://kubernetes.default.svc',
      config: { bearerToken: ownToken },
      labels: { env: 'dev' },
    });
    assert.deepEqual((await argocdView(hub, ns2, { env: 'dev' })).generator, ['local-sa']);
    const l = await run(['clusters', 'list', '-l', 'env=dev', '-o', 'json'], false);
    assert.deepEqual(
      rows(l).map((x) => [x.name, x.ready]),
      [['local-sa', true]],
    );
    const who = await run(['auth', 'whoami', '-c', 'local-sa', '-o', 'json'], false);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json<{ items: Array<{ user: { username: string } }> }>().items[0].user.username, ownUser);
    await removeArgocdCluster(hub, ns2, 'own');
  });

  it('no token appears in any output', () => {
    assert.ok(outputs.length > 5);
    for (const r of outputs) {
      assert.ok(!r.stdout.includes(ownToken) && !r.stderr.includes(ownToken));
    }
  });
});
