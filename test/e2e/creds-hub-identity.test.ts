// Issue 19 items 1-2 against the real control plane, the way a platform engineer works: one merged kubeconfig (hub +
// member contexts) passed with --kubeconfig, KUBECONFIG unset and HOME an empty directory.
// - One hub rule: generate --secret, creds list and wi setup (without --hub) find the hub as the current context of --kubeconfig (or KUBECONFIG);
//   a hub namespace that does not exist is refused before anything is made, or created with --create-namespace; with no
//   kubeconfig anywhere the message says what was looked for.
// - A cluster identity that travels: the Secret records server, CA fingerprint, cluster ID and context; rotation finds
//   the cluster from another spelling of the path (absolute, relative from another directory, a symlink), KUBECONFIG,
//   a fleet configuration naming the file, and a CronJob-like run (in-cluster configuration for the hub, least hub RBAC,
//   the member's admin kubeconfig in another file layout under another context name); an unresolvable cluster leaves
//   no claim; --cluster overrides (and a wrong one is refused by the cluster ID); an old-style Secret (only the name
//   annotation) still rotates; a --out file rotates from another spelling too.
// Every output is grepped for the secrets made here.
import assert from 'node:assert/strict';
import { X509Certificate, createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { cronJobRotator } from '../support/rbac.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('hubid');
const nsSys = `${run}-sys`;
const hubNs = `${run}-hub`;
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
let dir: string;
let home: string;
let merged: string;

async function fleet(args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000, env: { HOME: home, ...o.env }, cwd: o.cwd ?? dir });
  outputs.push({ what: args.join(' '), res });
  return res;
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

function remember(text: string): string {
  const u = (yaml.load(text) as any).users[0].user;
  if (u.token) secrets.add(u.token);
  return text;
}

const held = async (name: string) => remember(decode((await hubSecret(name)).data.kubeconfig));
const annotations = async (name: string) => (await hubSecret(name)).metadata.annotations as Record<string, string>;
const noRotationState = (a: Record<string, string>) => !Object.keys(a).some((k) => k.startsWith('fleet.dev/rotation-'));

/** Who a kubeconfig is, or undefined when refused. */
async function whoIs(text: string): Promise<string | undefined> {
  const path = join(dir, 'probe.kubeconfig');
  writeFileSync(path, text, { mode: 0o600 });
  const r = await kubectlResult(m1, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
    kubeconfig: path,
  });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

function kubeconfigDoc(path: string): any {
  return yaml.load(readFileSync(path, 'utf8'));
}

/** hub + member-1 in one file, current-context the hub: what a person gets from `kubectl config view --flatten`. */
function writeMerged(path: string): void {
  const h = kubeconfigDoc(hub.kubeconfig);
  const m = kubeconfigDoc(m1.kubeconfig);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [...h.clusters, ...m.clusters],
    users: [...h.users, ...m.users],
    contexts: [...h.contexts, ...m.contexts],
    'current-context': hub.context,
  };
  writeFileSync(path, yaml.dump(doc), { mode: 0o600 });
}

async function generate(
  sa: string,
  name: string,
  extra: string[] = [],
  o: { cwd?: string; kubeconfig?: string } = {},
): Promise<any> {
  const res = await fleet(
    [
      'creds',
      'generate',
      '--kubeconfig',
      o.kubeconfig ?? 'merged.yaml',
      '--cluster',
      m1.context,
      '--service-account',
      `${nsSys}/${sa}`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '2h',
      '--secret',
      `${hubNs}/${name}`,
      '--format',
      'multicluster-runtime',
      ...extra,
      '-o',
      'json',
    ],
    { cwd: o.cwd },
  );
  assert.equal(res.code, 0, res.stderr + res.stdout);
  await held(name);
  return res.json();
}

async function rotate(
  name: string,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ res: CliResult; item: any }> {
  const before = await held(name);
  const res = await fleet(['creds', 'rotate', ...args, `${hubNs}/${name}`, '-o', 'json'], o);
  const item = res.code === 0 || res.code === 1 ? res.json().items[0] : undefined;
  if (res.code === 0) {
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    const after = await held(name);
    assert.notEqual(after, before);
    assert.equal(await whoIs(before), undefined, 'the old token still authenticates');
    assert.equal(await whoIs(after), `system:serviceaccount:${nsSys}:${name === 'old-style' ? 'oldstyle' : 'laptop'}`);
    assert.ok(noRotationState(await annotations(name)));
  }
  return { res, item };
}

before(async () => {
  dir = join(scratchDir(), run);
  home = join(dir, 'empty-home');
  mkdirSync(home, { recursive: true });
  merged = join(dir, 'merged.yaml');
  writeMerged(merged);
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, '--wait=false']);
});

describe('one hub rule and a cluster identity that travels', { concurrency: false }, () => {
  it('generate --kubeconfig merged.yaml --secret: the hub is its current context; a missing hub namespace is refused before anything is made, then created with --create-namespace', async () => {
    const sa = `${run}-nohubns`;
    const refused = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      'merged.yaml',
      '--cluster',
      m1.context,
      '--service-account',
      `default/${sa}`,
      '--role',
      'pod-lister',
      '--secret',
      `${hubNs}/refused`,
      '--format',
      'multicluster-runtime',
    ]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr.trim(),
      new RegExp(
        `^error: hub ${hub.context}: namespace ${hubNs} does not exist; pass --create-namespace to create it$`,
      ),
    );
    assert.equal(
      (await kubectlResult(m1, ['get', 'serviceaccount', sa, '-n', 'default'])).code,
      1,
      'the ServiceAccount was made although the run was refused',
    );

    const out = await generate('laptop', 'laptop');
    assert.equal(out.destination.hub, hub.context);
    assert.ok(
      out.objects.some((o: any) => o.kind === 'Namespace' && o.name === hubNs && o.on === 'hub'),
      JSON.stringify(out.objects),
    );
    const a = await annotations('laptop');
    const m = kubeconfigDoc(m1.kubeconfig).clusters[0].cluster;
    const der = new X509Certificate(decode(m['certificate-authority-data'])).raw;
    const uid = (await kubectl(m1, ['get', 'namespace', 'kube-system', '-o', 'jsonpath={.metadata.uid}'])).trim();
    assert.equal(a['fleet.dev/credential-cluster'], `merged.yaml+${m1.context}`);
    assert.equal(a['fleet.dev/cluster-server'], m1.url);
    assert.equal(a['fleet.dev/cluster-ca-sha256'], createHash('sha256').update(der).digest('hex'));
    assert.equal(a['fleet.dev/cluster-id'], uid);
    assert.equal(a['fleet.dev/cluster-id-source'], 'kube-system');
    assert.equal(a['fleet.dev/cluster-context'], m1.context);
  });

  it('creds list --expiring-within with no fleet configuration lists the Secrets on the hub of --kubeconfig (and of KUBECONFIG) and exits 1', async () => {
    for (const how of [{ args: ['--kubeconfig', merged] }, { args: [], env: { KUBECONFIG: merged } }]) {
      const res = await fleet(['creds', 'list', ...how.args, '--expiring-within', '3h', '-o', 'json'], {
        env: how.env,
      });
      assert.equal(res.code, 1, res.stderr);
      const item = res.json().items.find((i: any) => i.location === `secret ${hub.context}:${hubNs}/laptop`);
      assert.ok(item, `the Secret was not listed: ${res.stdout}`);
      assert.equal(item.expiring, true);
      assert.equal(item.managedByFleet, true);
    }
  });

  it('rotates from other spellings of the same file: absolute path, relative from another directory, a symlink, KUBECONFIG, a fleet configuration naming it', async () => {
    const sub = join(dir, 'elsewhere', 'deeper');
    mkdirSync(sub, { recursive: true });
    symlinkSync(merged, join(dir, 'link.yaml'));
    const fleetYaml = join(dir, 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nhub: {kubeconfig: merged.yaml}\nproviders:\n  - {name: files, type: file, kubeconfig: [merged.yaml]}\n`,
    );
    const ways: Array<{ what: string; args: string[]; env?: NodeJS.ProcessEnv; cwd?: string }> = [
      { what: 'absolute', args: ['--kubeconfig', merged] },
      { what: 'relative from another directory', args: ['--kubeconfig', '../../merged.yaml'], cwd: sub },
      { what: 'symlink', args: ['--kubeconfig', 'link.yaml'] },
      { what: 'KUBECONFIG', args: [], env: { KUBECONFIG: merged }, cwd: sub },
      { what: 'fleet.yaml', args: ['--fleet-config', fleetYaml], cwd: sub },
    ];
    for (const w of ways) {
      const { res, item } = await rotate('laptop', w.args, { env: w.env, cwd: w.cwd });
      assert.equal(res.code, 0, `${w.what}: ${res.stderr}${res.stdout}`);
      assert.equal(item.target.by, 'server+CA', w.what);
      assert.equal(item.cluster, `merged.yaml+${m1.context}`, 'the recorded name is reported as it was');
    }
  });

  it('a cluster that cannot be found: the item names what was looked for and the candidates; the Secret is untouched (no claim)', async () => {
    const s0 = await hubSecret('laptop');
    // Only the hub is known: it is the hub, but not the credential's cluster.
    const res = await fleet(['creds', 'rotate', '--kubeconfig', hub.kubeconfig, `${hubNs}/laptop`, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'failed');
    assert.match(
      item.reason,
      new RegExp(
        `no cluster to rotate on matches server ${m1.url.replace(/[.]/g, '\\.')}, CA sha256:[0-9a-f]{12}…, cluster ID [0-9a-f-]+, generated as "merged\\.yaml\\+${m1.context}"; .*name it with --cluster`,
      ),
    );
    // --dry-run finds the cluster as a run would: the same failure, and where it would mint when found.
    const dry = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      hub.kubeconfig,
      `${hubNs}/laptop`,
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(dry.code, 1, dry.stderr + dry.stdout);
    assert.equal(dry.json().items[0].reason, item.reason);
    const planned = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      merged,
      `${hubNs}/laptop`,
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(planned.code, 0, planned.stderr + planned.stdout);
    assert.equal(planned.json().items[0].status, 'planned');
    assert.deepEqual(planned.json().items[0].target, { cluster: `${merged}+${m1.context}`, by: 'server+CA' });
    const s1 = await hubSecret('laptop');
    assert.equal(s1.metadata.resourceVersion, s0.metadata.resourceVersion, 'the Secret was written');
    assert.ok(noRotationState(s1.metadata.annotations), 'a claim was left behind');
  });

  it('--cluster overrides; a --cluster that is another cluster is refused by its cluster ID, leaving no claim', async () => {
    const wrong = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      merged,
      '--cluster',
      hub.context,
      `${hubNs}/laptop`,
      '-o',
      'json',
    ]);
    assert.equal(wrong.code, 1, wrong.stderr + wrong.stdout);
    assert.match(
      wrong.json().items[0].reason,
      new RegExp(
        `--cluster ${hub.context} is not the credential's cluster: its cluster ID is [0-9a-f-]+, the credential's is [0-9a-f-]+`,
      ),
    );
    assert.ok(noRotationState(await annotations('laptop')));
    const { res, item } = await rotate('laptop', ['--kubeconfig', merged, '--cluster', m1.context]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.deepEqual(item.target, { cluster: `${merged}+${m1.context}`, by: '--cluster' });
  });

  it('an old-style Secret (only the name annotation) still rotates: by its name, else by the server of the credential it holds', async () => {
    await generate('oldstyle', 'old-style');
    await kubectl(hub, [
      'annotate',
      'secret',
      'old-style',
      '-n',
      hubNs,
      'fleet.dev/cluster-server-',
      'fleet.dev/cluster-ca-sha256-',
      'fleet.dev/cluster-id-',
      'fleet.dev/cluster-id-source-',
      'fleet.dev/cluster-context-',
    ]);
    assert.ok(!Object.keys(await annotations('old-style')).some((k) => k.startsWith('fleet.dev/cluster-')));
    const byName = await rotate('old-style', ['--kubeconfig', 'merged.yaml']);
    assert.equal(byName.res.code, 0, byName.res.stderr + byName.res.stdout);
    assert.equal(byName.item.target.by, 'name');
    // The rotation recorded the cluster's identity, so the Secret travels from now on.
    const a = await annotations('old-style');
    assert.equal(a['fleet.dev/cluster-server'], m1.url);
    assert.match(a['fleet.dev/cluster-id'], /^[0-9a-f-]{36}$/);
    await kubectl(hub, [
      'annotate',
      'secret',
      'old-style',
      '-n',
      hubNs,
      'fleet.dev/cluster-server-',
      'fleet.dev/cluster-ca-sha256-',
      'fleet.dev/cluster-id-',
      'fleet.dev/cluster-id-source-',
      'fleet.dev/cluster-context-',
    ]);
    // The same clusters in a file of another name: the recorded name (its file's path and context) names none of
    // them, not even by the end of a path that tables show (issue 41), so the server of the credential decides.
    const elsewhere = join(dir, 'elsewhere.yaml');
    copyFileSync(merged, elsewhere);
    const byServer = await rotate('old-style', ['--kubeconfig', elsewhere]);
    assert.equal(byServer.res.code, 0, byServer.res.stderr + byServer.res.stdout);
    assert.equal(byServer.item.target.by, 'server+CA');
  });

  it("a CronJob on the hub: in-cluster configuration for the hub (least RBAC), the member's admin kubeconfig in another layout under another context name", async () => {
    const sa = `${run}-rotator`;
    // The CronJob's ServiceAccount with exactly the hub Role docs/rotation.md gives it.
    const token = await cronJobRotator(hub, hubNs, sa);
    secrets.add(token);
    const hubDoc = kubeconfigDoc(hub.kubeconfig);
    const url = new URL(hubDoc.clusters[0].cluster.server);
    const pod = join(dir, 'pod');
    mkdirSync(join(pod, 'serviceaccount'), { recursive: true });
    mkdirSync(join(pod, 'etc', 'fleet', 'members'), { recursive: true });
    writeFileSync(join(pod, 'serviceaccount', 'token'), token, { mode: 0o600 });
    writeFileSync(
      join(pod, 'serviceaccount', 'ca.crt'),
      decode(hubDoc.clusters[0].cluster['certificate-authority-data']),
    );
    // The member's admin kubeconfig as a mounted Secret would hold it: another file, another context and cluster name.
    const m = kubeconfigDoc(m1.kubeconfig);
    const member = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'prod', cluster: m.clusters[0].cluster }],
      users: [{ name: 'rotator', user: m.users[0].user }],
      contexts: [{ name: 'prod-member', context: { cluster: 'prod', user: 'rotator' } }],
      'current-context': 'prod-member',
    };
    writeFileSync(join(pod, 'etc', 'fleet', 'members', 'prod.kubeconfig'), yaml.dump(member), { mode: 0o600 });
    const fleetYaml = join(pod, 'etc', 'fleet', 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [members/]}\n`,
    );
    const env = {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      FLEET_IN_CLUSTER_TOKEN_FILE: join(pod, 'serviceaccount', 'token'),
      FLEET_IN_CLUSTER_CA_FILE: join(pod, 'serviceaccount', 'ca.crt'),
      FLEET_CONFIG: fleetYaml,
    };
    const { res, item } = await rotate('laptop', [], { env, cwd: pod });
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.equal(res.json().hub, 'in-cluster');
    assert.deepEqual(item.target, {
      cluster: `${join(pod, 'etc', 'fleet', 'members', 'prod.kubeconfig')}+prod-member`,
      by: 'server+CA',
    });
  });

  it('a --out file generated through one spelling rotates through another; its extension records the cluster facts', async () => {
    const path = join(dir, 'reader.kubeconfig');
    const gen = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      'merged.yaml',
      '--cluster',
      m1.context,
      '--service-account',
      `${nsSys}/filer`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '1h',
      '--out',
      path,
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
    const oldText = remember(readFileSync(path, 'utf8'));
    const facts = (yaml.load(oldText) as any).extensions.find((e: any) => e.name === 'fleet.dev/credential').extension;
    assert.equal(facts.cluster, `merged.yaml+${m1.context}`);
    assert.equal(facts['cluster-server'], m1.url);
    assert.match(facts['cluster-ca-sha256'], /^[0-9a-f]{64}$/);
    assert.equal(facts['cluster-context'], m1.context);
    const res = await fleet(['creds', 'rotate', '--kubeconfig', '../merged.yaml', '--file', path, '-o', 'json'], {
      cwd: join(dir, 'elsewhere'),
    });
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(item.target.by, 'server+CA');
    const newText = remember(readFileSync(path, 'utf8'));
    assert.equal(await whoIs(oldText), undefined);
    assert.equal(await whoIs(newText), `system:serviceaccount:${nsSys}:filer`);
  });

  it('no kubeconfig anywhere: the message says what was looked for (not a file that is not there)', async () => {
    const empty = join(dir, 'nothing-here');
    mkdirSync(empty, { recursive: true });
    const expected = new RegExp(
      `^error: no kubeconfig found: KUBECONFIG is unset and ${join(home, '.kube', 'config').replace(/[.]/g, '\\.')} does not exist, and this is not a Pod \\(KUBERNETES_SERVICE_HOST is unset\\); pass --kubeconfig or --hub-kubeconfig$`,
    );
    const rot = await fleet(['creds', 'rotate', `${hubNs}/laptop`], { cwd: empty });
    assert.equal(rot.code, 2, rot.stderr);
    assert.match(rot.stderr.trim(), expected);
    const list = await fleet(['creds', 'list', '--expiring-within', '1h'], { cwd: empty });
    // A hub that cannot be configured is a configuration error: exit 2, as for rotate (README "Exit codes and errors").
    assert.equal(list.code, 2, list.stderr);
    assert.match(
      list.stderr,
      /error: hub current context: .*no kubeconfig found: KUBECONFIG is unset and .* does not exist/,
    );
  });

  it('wi setup without --hub: the hub by the same rule (the current context of --kubeconfig, or --hub-context)', async () => {
    const res = await fleet([
      'wi',
      'setup',
      '--kubeconfig',
      'merged.yaml',
      '--target',
      m1.context,
      '--service-account',
      `${nsSys}/wi`,
      '--role',
      'view',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json().hub, hub.context);
    assert.equal(res.json().issuer, hub.issuer);
    const same = await fleet([
      'wi',
      'setup',
      '--kubeconfig',
      'merged.yaml',
      '--hub-context',
      m1.context,
      '--target',
      m1.context,
      '--service-account',
      `${nsSys}/wi`,
      '--role',
      'view',
      '-o',
      'json',
    ]);
    assert.equal(same.code, 2, same.stderr);
    assert.match(same.stderr, new RegExp(`--target ${m1.context} is the hub itself`));
  });

  it('no secret made here appears in any output', () => {
    assert.ok(secrets.size >= 8, `only ${secrets.size} secrets`);
    for (const { what, res } of outputs) {
      for (const s of secrets)
        assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a secret in the output of fleet ${what}`);
    }
  });
});
