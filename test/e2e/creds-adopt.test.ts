// fleet creds adopt against the real control plane (issue 39 item 2): consumer Secrets fleet did not write are taken
// over. An Argo CD cluster Secret as `argocd cluster add` leaves it (ServiceAccount kube-system/argocd-manager-*, bound
// to a `*` on `*` ClusterRole, its legacy `<sa>-long-lived-token` Secret, the token in the cluster Secret's config with
// Argo CD's own keys beside it) becomes a 30-day bound token of a view-only identity: Argo CD's own code
// (test/argocd-consumer, argo-cd/v3's Cluster.RawRestConfig) connects with it, --revoke-old deletes the legacy token
// Secret and the old token is refused (401), and creds rotate then rotates it. The same for a Cluster API Secret with an
// admin client certificate (which cannot be revoked: reported with its NotAfter) and a hand-made multicluster-runtime
// Secret with a static token (then creds revoke treats it as fleet's), each read back by the fleet provider that mirrors
// its consumer and by the consumer's own code (test/secret-consumers: Cluster API's remote client, multicluster-runtime's
// kubeconfig provider). A Flux, a cluster-inventory and a kubeconfig-secretreader Secret with legacy tokens are adopted
// into their ServiceAccounts and read by Flux's runtime client and cluster-inventory-api's access library. Also: --dry-run changes nothing, off a terminal without --yes is exit 2, Ctrl-C mid-adopt leaves the
// Secret as it was, a run killed after the replace is finished by the next one, at a terminal it asks, --all-unmanaged
// adopts a selection, creds list marks what is adoptable, and
// no credential appears in any output.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { buildScriptOutput } from '../support/binaries.js';
import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import { writeConsumerFleet } from '../support/consumer-fleet.js';
import { consumerReads } from '../support/secret-consumers.js';
import { argocdManagerByHand } from '../support/argocd.js';
import {
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('adopt');
const hubNs = `${run}-hub`;
const apps = `${run}-apps`;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const ADOPT = ['creds', 'adopt', '--kubeconfig', m1.kubeconfig, ...HUB];
const consumer = `${run}-consumer`;
const ARGOCD_BUILD = fileURLToPath(new URL('../argocd-consumer/build.sh', import.meta.url));
const WI_CONSUMER_BUILD = fileURLToPath(new URL('../wi-consumer/build.sh', import.meta.url));

const outputs: Array<{ what: string; text: string }> = [];
const secrets = new Set<string>();
let dir: string;
let fleetYaml: string;
const caPem = readFileSync(m1.caFile, 'utf8');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

async function fleet(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 180_000, env });
  outputs.push({ what: args.join(' '), text: res.stdout + res.stderr });
  return res;
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

/** The Secret without what the server changes on every write: what "as it was" compares. */
const content = (s: any) => ({
  labels: s.metadata.labels ?? {},
  annotations: s.metadata.annotations ?? {},
  type: s.type,
  data: s.data,
});

let probe = 0;
/** Who a kubeconfig's credential is, or undefined when the server refuses it (kubectl auth whoami). */
async function whoIs(text: string): Promise<string | undefined> {
  const path = join(dir, `probe-${probe++}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return new Promise((resolve) =>
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000 },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    ),
  );
}

/** A one-context kubeconfig for member-1 with this user entry. */
function memberKubeconfig(name: string, user: Record<string, string>): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: m1.url, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: `${name}-admin`, user }],
    contexts: [{ name: `${name}-admin@${name}`, context: { cluster: name, user: `${name}-admin` } }],
    'current-context': `${name}-admin@${name}`,
  });
}

/** The token the Argo CD Secret's config holds. */
const argoToken = (s: any) => (JSON.parse(decode(s.data.config)) as { bearerToken: string }).bearerToken;
const mcrToken = (s: any, key = 'kubeconfig') => (yaml.load(decode(s.data[key])) as any).users[0].user.token as string;

/**
 * What `argocd cluster add` installs on the member (argo-cd's clusterauth: the ServiceAccount, a ClusterRole with `*` on
 * `*` and every non-resource URL, its binding, and the legacy `<sa>-long-lived-token` Secret), and the cluster Secret
 * Argo CD's database layer writes on the hub: `name`, `server`, `config` (bearerToken, tlsClientConfig), with the
 * project, namespaces, clusterResources and shard keys a team sets. Returns the legacy token.
 */
async function argocdClusterAdd(sa: string, secretName: string): Promise<string> {
  const token = await argocdManagerByHand(m1, sa);
  secrets.add(token);
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: hubNs,
        labels: { 'argocd.argoproj.io/secret-type': 'cluster', env: 'prod' },
        annotations: { 'managed-by': 'argocd.argoproj.io' },
      },
      type: 'Opaque',
      data: {
        name: b64('member-1-prod'),
        server: b64(m1.url),
        config: b64(
          JSON.stringify({
            bearerToken: token,
            tlsClientConfig: { insecure: false, caData: b64(caPem) },
            disableCompression: true,
          }),
        ),
        project: b64('team-a'),
        namespaces: b64('apps,web'),
        clusterResources: b64('true'),
        shard: b64('1'),
      },
    }),
  );
  return token;
}

/** Argo CD's own code reading the cluster Secret and asking the cluster who it is. */
function argocdConnects(secretName: string): Promise<string> {
  const bin = buildScriptOutput(ARGOCD_BUILD);
  return new Promise((resolve, reject) =>
    execFile(
      bin,
      ['--hub-kubeconfig', hub.kubeconfig, '--namespace', hubNs, '--name', secretName],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        outputs.push({ what: 'argocd-consumer', text: stdout + stderr });
        if (error) reject(new Error(`argocd-consumer: ${stderr}`));
        else resolve((JSON.parse(stdout) as { username: string }).username);
      },
    ),
  );
}

/**
 * cluster-inventory-api's own access library (test/wi-consumer: pkg/access BuildConfigFromCP) connecting through a
 * ClusterProfile whose access provider is its kubeconfig-secretreader plugin (the provider file writeConsumerFleet wrote).
 */
function secretreaderConnects(profile: string): Promise<string> {
  const bin = buildScriptOutput(WI_CONSUMER_BUILD);
  const args = ['-hub-kubeconfig', hub.kubeconfig, '-namespace', hubNs, '-name', profile];
  args.push('-clusterprofile-provider-file', join(dir, `${run}-access.json`));
  return new Promise((resolve, reject) =>
    execFile(bin, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      outputs.push({ what: 'wi-consumer', text: stdout + stderr });
      if (error) reject(new Error(`wi-consumer: ${stderr}`));
      else resolve((JSON.parse(stdout) as { username: string }).username);
    }),
  );
}

async function anchorsOf(ns: string, sa: string): Promise<string[]> {
  const out = await kubectl(m1, ['get', 'secrets', '-n', ns, '-o', 'json']);
  return (JSON.parse(out).items as any[])
    .map((s) => s.metadata.name as string)
    .filter((n) => n.startsWith(`${sa}-fleet-anchor-`))
    .sort();
}

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  await applyYaml(m1, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: apps } }));
  fleetYaml = writeConsumerFleet({ dir, run, hubNs, consumer });
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', apps, '--wait=false']);
  const sa = `argocd-manager-${run}`;
  await kubectlResult(m1, ['delete', 'serviceaccount', sa, '-n', 'kube-system', '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'secret', `${sa}-long-lived-token`, '-n', 'kube-system', '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'clusterrole', `${sa}-role`, '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'clusterrolebinding', `${sa}-role-binding`, '--ignore-not-found']);
  // The cluster-wide grants fleet made for this run's identities (named after their namespace).
  const names = (await kubectl(m1, ['get', 'clusterrole,clusterrolebinding', '-o', 'name'])).split('\n');
  const ours = names.filter((n) => n.includes(`fleet-creds-${apps}-`));
  if (ours.length > 0) await kubectlResult(m1, ['delete', '--ignore-not-found', ...ours]);
});

describe('fleet creds adopt', { concurrency: false }, () => {
  const argoSa = `argocd-manager-${run}`;
  const argoSecret = 'cluster-127.0.0.1-member-1';
  let legacy = '';

  it('an Argo CD cluster Secret as argocd cluster add makes it: --dry-run says who it is (cluster-admin, never expires) and changes nothing; without --yes off a terminal, exit 2', async () => {
    legacy = await argocdClusterAdd(argoSa, argoSecret);
    assert.equal(await argocdConnects(argoSecret), `system:serviceaccount:kube-system:${argoSa}`);
    const s0 = await hubSecret(argoSecret);

    const list = await fleet(['creds', 'list', '--kubeconfig', m1.kubeconfig, ...HUB, '-o', 'json']);
    assert.equal(list.code, 0, list.stderr);
    const listed = list.json<any>().items.find((i: any) => i.location.endsWith(`${hubNs}/${argoSecret}`));
    assert.equal(listed.managedByFleet, false);
    assert.deepEqual(listed.adoptable, ['legacy', 'no expiry']);

    const dry = await fleet([...ADOPT, `${hubNs}/${argoSecret}`, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const item = dry.json<any>().items[0];
    assert.equal(item.status, 'planned');
    assert.equal(item.before.identity, `system:serviceaccount:kube-system:${argoSa}`);
    assert.equal(item.before.method, 'legacy-token');
    assert.equal(item.before.expires, 'never');
    assert.deepEqual(item.before.risks, ['cluster-admin']);
    assert.equal(item.before.tokenSecret, `kube-system/${argoSa}-long-lived-token`);
    assert.equal(item.old.valid, true);
    assert.match(item.old.reason, /never expires/);
    assert.equal((await hubSecret(argoSecret)).metadata.resourceVersion, s0.metadata.resourceVersion);

    const refused = await fleet([...ADOPT, `${hubNs}/${argoSecret}`]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--yes/);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.equal((await hubSecret(argoSecret)).metadata.resourceVersion, s0.metadata.resourceVersion);
  });

  it('adopts it into a view-only 30-day bound token: Argo CD connects with it, its keys are kept, --revoke-old makes the old token refused; creds rotate then rotates it', async () => {
    const s0 = await hubSecret(argoSecret);
    const res = await fleet([
      ...ADOPT,
      `${hubNs}/${argoSecret}`,
      '--service-account',
      `${apps}/argocd-view`,
      '--role',
      'view',
      '--duration',
      '30d',
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.after.identity, `system:serviceaccount:${apps}:argocd-view`);
    assert.equal(item.after.access, 'preset view');
    assert.ok(Math.abs(Date.parse(item.after.expires) - Date.now() - 30 * 86400_000) < 600_000, item.after.expires);
    assert.deepEqual(
      item.verification.map((c: any) => [c.name, c.status]),
      [
        ['identity', 'pass'],
        ['granted', 'pass'],
        ['denied', 'pass'],
      ],
    );
    assert.equal(item.old.revoked, true);
    assert.match(item.old.reason, /refused \(401\)/);
    assert.deepEqual(
      item.steps.map((x: any) => x.step),
      ['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke', 'confirm-revoked', 'finish'],
    );

    const s1 = await hubSecret(argoSecret);
    const token = argoToken(s1);
    secrets.add(token);
    assert.notEqual(token, legacy);
    // Everything fleet does not own is kept: Argo CD's keys, labels and annotations.
    for (const k of ['name', 'server', 'project', 'namespaces', 'clusterResources', 'shard'])
      assert.equal(s1.data[k], s0.data[k], k);
    assert.equal(s1.metadata.labels['argocd.argoproj.io/secret-type'], 'cluster');
    assert.equal(s1.metadata.labels.env, 'prod');
    assert.equal(s1.metadata.annotations['managed-by'], 'argocd.argoproj.io');
    assert.equal(s1.metadata.labels['app.kubernetes.io/managed-by'], 'fleet');
    const a = s1.metadata.annotations;
    assert.equal(a['fleet.dev/credential-format'], 'argocd');
    assert.equal(a['fleet.dev/credential-lifetime'], String(30 * 86400));
    assert.match(
      a['fleet.dev/adopted-from'],
      new RegExp(`^system:serviceaccount:kube-system:${argoSa} \\(legacy-token, expires never\\)$`),
    );
    assert.ok(!Object.keys(a).some((k) => k.startsWith('fleet.dev/rotation-')), 'rotation annotations left behind');
    assert.equal(JSON.parse(decode(s1.data.config)).tlsClientConfig.caData, b64(caPem));
    // A field of Argo CD's config that is no credential is kept.
    assert.equal(JSON.parse(decode(s1.data.config)).disableCompression, true);

    assert.equal(await argocdConnects(argoSecret), `system:serviceaccount:${apps}:argocd-view`);
    assert.equal(await whoIs(memberKubeconfig('old', { token: legacy })), undefined, 'the old token still works');
    const gone = await kubectlResult(m1, ['get', 'secret', `${argoSa}-long-lived-token`, '-n', 'kube-system']);
    assert.notEqual(gone.code, 0, 'the legacy token Secret is still there');

    // Adopting again: fleet's already.
    const again = await fleet([...ADOPT, `${hubNs}/${argoSecret}`, '--yes', '-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json<any>().items[0].status, 'unchanged');

    const rot = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/${argoSecret}`,
      '-o',
      'json',
    ]);
    assert.equal(rot.code, 0, rot.stderr + rot.stdout);
    const r = rot.json<any>().items[0];
    assert.equal(r.status, 'rotated', JSON.stringify(r));
    assert.equal(r.revoked.done, true);
    const s2 = await hubSecret(argoSecret);
    secrets.add(argoToken(s2));
    assert.notEqual(argoToken(s2), token);
    for (const k of ['name', 'project', 'namespaces', 'clusterResources', 'shard'])
      assert.equal(s2.data[k], s0.data[k], k);
    assert.equal(JSON.parse(decode(s2.data.config)).disableCompression, true);
    assert.ok(Math.abs(Date.parse(r.new.expires) - Date.now() - 30 * 86400_000) < 600_000, r.new.expires);
    assert.equal(await argocdConnects(argoSecret), `system:serviceaccount:${apps}:argocd-view`);
    assert.equal(
      await whoIs(memberKubeconfig('adopted', { token })),
      undefined,
      'the adopted token survived its rotation',
    );
  });

  it('a Cluster API Secret with an admin client certificate: replaced by a bound token (Cluster API reads a token kubeconfig), the certificate reported with its NotAfter', async () => {
    const name = `${run}-capi`;
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name, namespace: hubNs },
        spec: {},
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusters.cluster.x-k8s.io',
      name,
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { initialization: { controlPlaneInitialized: true } } }),
    ]);
    const key = readFileSync(cp.admin.keyFile, 'utf8');
    secrets.add(key.trim());
    secrets.add(b64(key));
    const text = memberKubeconfig(name, {
      'client-certificate-data': b64(readFileSync(cp.admin.certFile, 'utf8')),
      'client-key-data': b64(key),
    });
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${name}-kubeconfig`, namespace: hubNs, labels: { 'cluster.x-k8s.io/cluster-name': name } },
        type: 'cluster.x-k8s.io/secret',
        data: { value: b64(text) },
      }),
    );
    // Cluster API's own reader (controllers/remote over util/kubeconfig.FromSecret) connects with it as the admin.
    assert.equal(await consumerReads('capi', hub, hubNs, name), cp.admin.user);
    const res = await fleet([
      ...ADOPT,
      `${hubNs}/${name}-kubeconfig`,
      '--service-account',
      `${apps}/capi-view`,
      '--role',
      'view',
      '--duration',
      '30d',
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.before.identity, cp.admin.user);
    assert.deepEqual(
      item.before.groups.filter((g: string) => g === 'system:masters'),
      ['system:masters'],
    );
    assert.equal(item.before.method, 'client-cert');
    assert.deepEqual(item.before.risks, ['cluster-admin']);
    assert.equal(item.old.valid, true);
    assert.equal(item.old.revoked, false);
    assert.equal(item.old.notAfter, item.before.expires);
    assert.match(item.old.reason, /cannot be revoked: it stays valid until/);
    const s1 = await hubSecret(`${name}-kubeconfig`);
    assert.equal(s1.type, 'cluster.x-k8s.io/secret');
    assert.equal(s1.metadata.labels['cluster.x-k8s.io/cluster-name'], name);
    const user = (yaml.load(decode(s1.data.value)) as any).users[0].user;
    secrets.add(user.token);
    assert.equal(user['client-key-data'], undefined);
    const who = await fleet([
      'auth',
      'whoami',
      '--fleet-config',
      fleetYaml,
      '--cluster',
      `capi#${hubNs}/${name}`,
      '-o',
      'json',
    ]);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json<any>().items[0].user.username, `system:serviceaccount:${apps}:capi-view`);
    // ... and Cluster API's own code, not only fleet's provider that mirrors it, connects as the new identity.
    assert.equal(await consumerReads('capi', hub, hubNs, name), `system:serviceaccount:${apps}:capi-view`);
  });

  it('a hand-made multicluster-runtime Secret with a static token: adopted (the static token said to be fleet-unrevokable), read back by the kubeconfig provider; creds revoke then treats it as fleet', async () => {
    const name = `${run}-mcr`;
    const alice = tokenUser(m1, 'alice').token;
    secrets.add(alice);
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
        data: { kubeconfig: b64(memberKubeconfig('m1', { token: alice })) },
      }),
    );
    // multicluster-runtime's kubeconfig provider (a manager on the hub namespace) engages it as alice.
    assert.equal(await consumerReads('mcr', hub, hubNs, name), 'alice');
    const res = await fleet([
      ...ADOPT,
      `${hubNs}/${name}`,
      '--service-account',
      `${apps}/mcr-lister`,
      '--role',
      'pod-lister',
      '--duration',
      '2h',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.before.identity, 'alice');
    assert.equal(item.before.method, 'static-token');
    assert.equal(item.before.expires, 'never');
    assert.match(item.old.reason, /static token .*fleet cannot revoke it/);
    const s1 = await hubSecret(name);
    const token = mcrToken(s1);
    secrets.add(token);
    const who = await fleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--cluster', `mcr#${name}`, '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json<any>().items[0].user.username, `system:serviceaccount:${apps}:mcr-lister`);
    assert.equal(await consumerReads('mcr', hub, hubNs, name), `system:serviceaccount:${apps}:mcr-lister`);

    const rev = await fleet([
      'creds',
      'revoke',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/${name}`,
      '-o',
      'json',
    ]);
    assert.equal(rev.code, 0, rev.stderr + rev.stdout);
    assert.equal(
      await whoIs(memberKubeconfig('m1', { token })),
      undefined,
      'the adopted token still works after revoke',
    );
    assert.equal((await kubectlResult(hub, ['get', 'secret', name, '-n', hubNs])).code === 0, false);
    assert.equal(await whoIs(memberKubeconfig('m1', { token: alice })), 'alice');
  });

  it('Ctrl-C mid-adopt puts the Secret back as it was and removes what the run made; a run killed after the replace is finished by the next', async () => {
    const name = `${run}-intr`;
    const bob = tokenUser(m1, 'bob').token;
    secrets.add(bob);
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          namespace: hubNs,
          labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true', team: 'b' },
        },
        data: { kubeconfig: b64(memberKubeconfig('m1', { token: bob })), extra: b64('kept') },
      }),
    );
    const s0 = await hubSecret(name);
    const args = [
      ...ADOPT,
      `${hubNs}/${name}`,
      '--service-account',
      `${apps}/intr`,
      '--role',
      'pod-lister',
      '--yes',
      '-o',
      'json',
    ];
    const child: ChildProcess = spawn(process.execPath, [FLEET_BIN, ...args], {
      env: fleetTestEnv({ FLEET_ROTATE_PAUSE: 'after-mint:60000' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    const deadline = Date.now() + 60_000;
    while ((await anchorsOf(apps, 'intr')).length === 0) {
      assert.ok(Date.now() < deadline, `the run never minted: ${out}${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await hubSecret(name)).metadata.annotations['fleet.dev/rotation-phase'], 'claimed');
    child.kill('SIGINT');
    assert.equal(await code, 130, out + err);
    outputs.push({ what: 'adopt interrupted', text: out + err });
    assert.match(err, /^error: interrupted \(SIGINT\)/m);
    const item = JSON.parse(out).items[0];
    assert.equal(item.error.kind, 'interrupted');
    assert.match(item.error.message, /before the new credential was written: .*is as it was/);
    assert.deepEqual(content(await hubSecret(name)), content(s0));
    assert.deepEqual(await anchorsOf(apps, 'intr'), []);
    assert.notEqual(
      (await kubectlResult(m1, ['get', 'serviceaccount', 'intr', '-n', apps])).code,
      0,
      'the ServiceAccount the run made is left',
    );

    // Killed (SIGKILL) right after the replace: the Secret holds the new credential; the next adopt finishes it.
    const killed = await runFleet(args, { env: { FLEET_ROTATE_FAILPOINT: 'after-replace' }, timeoutMs: 120_000 });
    outputs.push({ what: 'adopt killed', text: killed.stdout + killed.stderr });
    const mid = await hubSecret(name);
    assert.equal(mid.metadata.annotations['fleet.dev/rotation-phase'], 'replaced');
    secrets.add(mcrToken(mid));
    const next = await fleet(args);
    assert.equal(next.code, 0, next.stderr + next.stdout);
    const n = next.json<any>().items[0];
    assert.equal(n.status, 'adopted', JSON.stringify(n));
    assert.equal(n.resumed, 'replaced');
    const done = await hubSecret(name);
    assert.ok(!Object.keys(done.metadata.annotations).some((k) => k.startsWith('fleet.dev/rotation-')));
    assert.equal(done.data.extra, s0.data.extra);
    assert.equal(done.metadata.labels.team, 'b');
    assert.equal(await whoIs(decode(done.data.kubeconfig)), `system:serviceaccount:${apps}:intr`);
  });

  it('--all-unmanaged with --hub-namespace and -l adopts a hub worth in one run (-o json for a Job): a legacy token into the same ServiceAccount and its grant; a static token, which has no ServiceAccount, is refused naming --service-account', async () => {
    const bulk = `${run}-bulk`;
    await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: bulk } }));
    const sa = 'bulk-reader';
    await applyYaml(
      m1,
      [
        `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${sa}, namespace: ${apps}}`,
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ${sa}-view, namespace: ${apps}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects:\n- {kind: ServiceAccount, name: ${sa}, namespace: ${apps}}`,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${sa}-token\n  namespace: ${apps}\n  annotations: {kubernetes.io/service-account.name: ${sa}}\ntype: kubernetes.io/service-account-token`,
      ].join('\n---\n'),
    );
    let token = '';
    for (let i = 0; i < 100 && !token; i++) {
      token = decode(await kubectl(m1, ['get', 'secret', `${sa}-token`, '-n', apps, '-o', 'jsonpath={.data.token}']));
      if (!token) await new Promise((r) => setTimeout(r, 200));
    }
    secrets.add(token);
    const carol = tokenUser(m1, 'carol').token;
    const dave = tokenUser(m1, 'dave').token;
    secrets.add(carol);
    secrets.add(dave);
    const mcr = (name: string, tok: string, pick: string) =>
      applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name,
            namespace: bulk,
            labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true', pick },
          },
          data: { kubeconfig: b64(memberKubeconfig('m1', { token: tok })) },
        }),
      );
    await mcr('a-legacy', token, 'yes');
    await mcr('b-static', carol, 'yes');
    await mcr('c-other', dave, 'no');
    const sel = ['--all-unmanaged', '--hub-namespace', bulk, '-l', 'pick=yes'];
    const res = await fleet([...ADOPT, ...sel, '--revoke-old', '--yes', '-o', 'json']);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const items = res.json<any>().items;
    assert.deepEqual(
      items.map((i: any) => [i.secret.name, i.status]),
      [
        ['a-legacy', 'adopted'],
        ['b-static', 'failed'],
      ],
    );
    const [a, b] = items;
    assert.equal(a.after.identity, `system:serviceaccount:${apps}:${sa}`);
    assert.equal(a.after.access, 'ClusterRole view');
    assert.equal(a.after.scope, `namespaces ${apps}`);
    assert.deepEqual(
      a.verification.map((c: any) => c.status),
      ['pass', 'pass', 'pass'],
    );
    assert.equal(a.old.revoked, true);
    assert.equal(b.error.kind, 'config');
    assert.match(b.error.message, /carol .*not a ServiceAccount.*--service-account/);
    assert.match(res.stderr, /b-static/);
    const sa1 = JSON.parse(await kubectl(hub, ['get', 'secret', 'a-legacy', '-n', bulk, '-o', 'json']));
    const adopted = mcrToken(sa1);
    secrets.add(adopted);
    assert.equal(await whoIs(decode(sa1.data.kubeconfig)), `system:serviceaccount:${apps}:${sa}`);
    assert.equal(await whoIs(memberKubeconfig('m1', { token })), undefined, 'the legacy token still works');
    const untouched = JSON.parse(await kubectl(hub, ['get', 'secret', 'c-other', '-n', bulk, '-o', 'json']));
    assert.equal(untouched.metadata.labels['app.kubernetes.io/managed-by'], undefined);
    await kubectlResult(hub, ['delete', 'namespace', bulk, '--wait=false']);
  });

  it('a Flux kubeConfig Secret, a cluster-inventory Secret and a kubeconfig-secretreader Secret, each with a legacy token: adopted into the same ServiceAccount with a bound token; Flux and cluster-inventory-api read them with their own code; creds list shows them managed', async () => {
    // One ServiceAccount per Secret, each with a never-expiring legacy token Secret fleet did not make.
    const legacyToken = async (sa: string): Promise<string> => {
      await applyYaml(
        m1,
        [
          `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${sa}, namespace: ${apps}}`,
          `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ${sa}-view, namespace: ${apps}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects:\n- {kind: ServiceAccount, name: ${sa}, namespace: ${apps}}`,
          `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${sa}-token\n  namespace: ${apps}\n  annotations: {kubernetes.io/service-account.name: ${sa}}\ntype: kubernetes.io/service-account-token`,
        ].join('\n---\n'),
      );
      let token = '';
      for (let i = 0; i < 100 && !token; i++) {
        token = decode(await kubectl(m1, ['get', 'secret', `${sa}-token`, '-n', apps, '-o', 'jsonpath={.data.token}']));
        if (!token) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(token, `kube-controller-manager did not fill ${apps}/${sa}-token`);
      secrets.add(token);
      return token;
    };
    const sas = { flux: 'flux-legacy', inv: 'inv-legacy', kcsr: 'kcsr-legacy' };
    const tokens = {
      flux: await legacyToken(sas.flux),
      inv: await legacyToken(sas.inv),
      kcsr: await legacyToken(sas.kcsr),
    };
    const names = { flux: `${run}-flux`, inv: `${run}-inv-cfg`, kcsr: `${run}-kcsr-cfg` };
    const profiles = { inv: `${run}-inv`, kcsr: `${run}-kcsr` };
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
    // Flux: an unlabelled Secret (key value) that a Kustomization's spec.kubeConfig.secretRef names.
    await secret(names.flux, { value: b64(memberKubeconfig('flux', { token: tokens.flux })) });
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: `${run}-apps`, namespace: hubNs },
        spec: { interval: '10m', prune: false, kubeConfig: { secretRef: { name: names.flux } } },
      }),
    );
    // cluster-inventory's Secret strategy: labelled with the consumer and the ClusterProfile, key Config.
    for (const profile of [profiles.inv, profiles.kcsr])
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'multicluster.x-k8s.io/v1alpha1',
          kind: 'ClusterProfile',
          metadata: { name: profile, namespace: hubNs },
          spec: { clusterManager: { name: 'fleet-e2e' } },
        }),
      );
    await secret(
      names.inv,
      { Config: b64(memberKubeconfig('inv', { token: tokens.inv })) },
      { 'x-k8s.io/cluster-inventory-consumer': consumer, 'x-k8s.io/cluster-profile': profiles.inv },
    );
    // kubeconfig-secretreader: an unlabelled Secret (key kubeconfig) that a ClusterProfile's access provider names.
    await secret(names.kcsr, { kubeconfig: b64(memberKubeconfig('kcsr', { token: tokens.kcsr })) });
    const accessProviders = [
      {
        name: 'kubeconfig-secretreader',
        cluster: {
          server: m1.url,
          'certificate-authority-data': b64(caPem),
          extensions: [
            {
              name: 'client.authentication.k8s.io/exec',
              extension: { name: names.kcsr, namespace: hubNs, key: 'kubeconfig' },
            },
          ],
        },
      },
    ];
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      profiles.kcsr,
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { accessProviders } }),
    ]);
    const user = (k: keyof typeof sas) => `system:serviceaccount:${apps}:${sas[k]}`;
    // Before: each consumer's own code connects with the legacy token.
    assert.equal(await consumerReads('flux', hub, hubNs, names.flux), user('flux'));
    assert.equal(await secretreaderConnects(profiles.kcsr), user('kcsr'));

    const listed = async () => {
      const list = await fleet(['creds', 'list', '--kubeconfig', m1.kubeconfig, ...HUB, '-o', 'json']);
      assert.equal(list.code, 0, list.stderr);
      const items = list.json<any>().items as any[];
      return (name: string) => {
        const item = items.find((i) => i.location === `secret ${hub.context}:${hubNs}/${name}`);
        assert.ok(item, `creds list does not list ${hubNs}/${name}`);
        return item;
      };
    };
    const before = await listed();
    assert.deepEqual(
      [names.flux, names.inv, names.kcsr].map((n) => [before(n).format, before(n).method, before(n).managedByFleet]),
      [
        ['flux', 'legacy-token', false],
        ['cluster-inventory', 'legacy-token', false],
        ['kubeconfig-secretreader', 'legacy-token', false],
      ],
    );

    const adopt = async (name: string, format?: string) => {
      const res = await fleet([
        ...ADOPT,
        `${hubNs}/${name}`,
        ...(format ? ['--format', format] : []),
        '--yes',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const item = res.json<any>().items[0];
      assert.equal(item.status, 'adopted', JSON.stringify(item));
      assert.equal(item.before.method, 'legacy-token');
      assert.equal(item.before.expires, 'never');
      return item;
    };
    const items = {
      flux: await adopt(names.flux, 'flux'),
      inv: await adopt(names.inv),
      kcsr: await adopt(names.kcsr, 'kubeconfig-secretreader'),
    };
    const keyOf = { flux: 'value', inv: 'Config', kcsr: 'kubeconfig' } as const;
    for (const k of ['flux', 'inv', 'kcsr'] as const) {
      assert.equal(items[k].before.identity, user(k));
      assert.equal(items[k].after.identity, user(k), `${k}: not the same ServiceAccount`);
      const s = await hubSecret(names[k]);
      const token = mcrToken(s, keyOf[k]);
      secrets.add(token);
      assert.notEqual(token, tokens[k]);
      // A bound token: a TokenRequest JWT that expires, not the legacy `kubernetes/serviceaccount` issuer's.
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
      assert.equal(typeof claims.exp, 'number', `${k}: the new token does not expire`);
      assert.notEqual(claims.iss, 'kubernetes/serviceaccount', `${k}: still a legacy token`);
      assert.ok(claims['kubernetes.io']?.serviceaccount, `${k}: not a ServiceAccount token`);
    }
    assert.deepEqual((await hubSecret(names.inv)).metadata.labels['x-k8s.io/cluster-profile'], profiles.inv);

    // After: Flux's own runtime client and cluster-inventory-api's own access library (BuildConfigFromCP running the
    // upstream kubeconfig-secretreader plugin) connect with the adopted Secrets as the same ServiceAccount.
    assert.equal(await consumerReads('flux', hub, hubNs, names.flux), user('flux'));
    assert.equal(await secretreaderConnects(profiles.kcsr), user('kcsr'));
    // The Secret strategy has no reader of its own in cluster-inventory-api v0.1.2 (multicluster-runtime's provider
    // that read it is not on the module proxy): fleet's cluster-inventory provider, which mirrors it, reads it.
    const who = await fleet([
      'auth',
      'whoami',
      '--fleet-config',
      fleetYaml,
      '--cluster',
      `inv#${hubNs}/${profiles.inv}`,
      '-o',
      'json',
    ]);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json<any>().items[0].user.username, user('inv'));

    const after = await listed();
    assert.deepEqual(
      [names.flux, names.inv, names.kcsr].map((n) => [after(n).format, after(n).method, after(n).managedByFleet]),
      [
        ['flux', 'bound-token', true],
        ['cluster-inventory', 'bound-token', true],
        ['kubeconfig-secretreader', 'bound-token', true],
      ],
    );
  });

  it('at a terminal it shows the plan and asks: no leaves the Secret as it was, yes adopts it', async () => {
    const name = `${run}-tty`;
    const dave = tokenUser(m1, 'dave').token;
    secrets.add(dave);
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
        data: { kubeconfig: b64(memberKubeconfig('m1', { token: dave })) },
      }),
    );
    const s0 = await hubSecret(name);
    const args = [...ADOPT, `${hubNs}/${name}`, '--service-account', `${apps}/tty`, '--role', 'pod-lister'];
    /** fleet on a pty (script(1)), answering the prompt once it is shown. */
    const answer = (key: string) =>
      new Promise<string>((resolve) => {
        const command = [process.execPath, FLEET_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
        const env: NodeJS.ProcessEnv = { ...fleetTestEnv(), HOME: '/nonexistent-fleet-test-home' };
        for (const k of ['CI', 'NO_COLOR']) delete env[k];
        const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let asked = false;
        child.stdout.on('data', (d) => {
          out += d;
          if (!asked && out.includes('as planned above?')) {
            asked = true;
            child.stdin.write(`${key}\r`);
          }
        });
        const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
        child.on('close', () => (clearTimeout(timer), child.stdin.end(), resolve(out)));
      });
    const no = await answer('n');
    outputs.push({ what: 'adopt at a terminal (n)', text: no });
    assert.match(no, /planned/);
    assert.match(no, /dave static-token/);
    assert.match(no, /nothing was adopted/);
    assert.deepEqual(content(await hubSecret(name)), content(s0));
    const yes = await answer('y');
    outputs.push({ what: 'adopt at a terminal (y)', text: yes });
    assert.match(yes, /adopted/);
    const s1 = await hubSecret(name);
    secrets.add(mcrToken(s1));
    assert.equal(s1.metadata.labels['app.kubernetes.io/managed-by'], 'fleet');
    assert.equal(await whoIs(decode(s1.data.kubeconfig)), `system:serviceaccount:${apps}:tty`);
  });

  it('bad input is one line, exit 2, before anything is asked', async () => {
    for (const [args, re] of [
      [['not-a-name', '--yes'], /NAMESPACE\/NAME/],
      [[`${hubNs}/x`, '--role', 'view', '--yes'], /--service-account/],
      [[`${hubNs}/x`, '--service-account', 'a/b', '--role', 'nope', '--yes'], /nope/],
      [[`${hubNs}/x`, '--service-account', 'a/b', '--role', 'view', '--duration', '1m', '--yes'], /--duration/],
    ] as Array<[string[], RegExp]>) {
      const r = await fleet(['creds', 'adopt', '--hub-kubeconfig', '/nonexistent/hub.kubeconfig', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('no credential appears in any output', () => {
    assert.ok(secrets.size >= 8, `only ${secrets.size} secrets collected`);
    for (const o of outputs)
      for (const s of secrets) assert.ok(!o.text.includes(s), `${o.what}: a credential appears in the output`);
  });
});
