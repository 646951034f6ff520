// Nothing deleted that something else still uses (issue 46, item 4), against the real control plane. Before
// `creds adopt --revoke-old` deletes a legacy token Secret, and before `creds revoke` deletes a credential's anchor,
// fleet looks for other users of what the deletion ends: the operator's own kubeconfig holding the same token (the
// credential fleet was started with for that member), a Deployment (stored even though no pods run here) mounting the
// Secret, another hub Secret holding the same token. Each is refused by name, the token still works afterwards
// (kubectl auth whoami with it), and --force deletes it (then 401). A member credential without list permission on
// Deployments gets a note naming what was not checked. On the code before this change every refusal below was a
// deletion: the operator's own token refused afterwards, the Deployment's Secret gone. No token appears in any output.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigInSecret } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('used');
const src = `${run}-src`;
const apps = `${run}-apps`;
const hubNs = `${run}-hub`;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const caPem = readFileSync(m1.caFile, 'utf8');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

const outputs: Array<{ what: string; text: string }> = [];
const secrets = new Set<string>();
let dir: string;

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 180_000 });
  outputs.push({ what: args.join(' '), text: res.stdout + res.stderr });
  return res;
}

/** A one-context kubeconfig for member-1 with this token (context `ctx`). */
function tokenKubeconfig(path: string, token: string, ctx = 'ops'): string {
  writeFileSync(
    path,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'm1', cluster: { server: m1.url, 'certificate-authority-data': b64(caPem) } }],
      users: [{ name: `${ctx}-user`, user: { token } }],
      contexts: [{ name: ctx, context: { cluster: 'm1', user: `${ctx}-user` } }],
      'current-context': ctx,
    }),
    { mode: 0o600 },
  );
  return path;
}

let probe = 0;
/** Who a bare token is on member-1, or undefined when the server refuses it (kubectl auth whoami: a SelfSubjectReview). */
function tokenIs(token: string): Promise<string | undefined> {
  const path = tokenKubeconfig(join(dir, `probe-${probe++}.kubeconfig`), token);
  return new Promise((resolve) =>
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    ),
  );
}

/** Polls until the token is refused (the API server's token cache holds it up to ~10 s after its Secret goes). */
async function refusedWithin(token: string, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await tokenIs(token)) === undefined) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

async function exists(kind: string, name: string, ns: string, on = m1): Promise<boolean> {
  const r = await kubectlResult(on, ['get', kind, name, '-n', ns, '-o', 'name']);
  if (r.code === 0) return true;
  if (/NotFound|not found/.test(r.stderr)) return false;
  throw new Error(`kubectl get ${kind} ${name}: ${r.stderr}`);
}

/** A cluster-admin ServiceAccount on member-1 with a legacy token Secret `<sa>-token`, as older installers leave them. */
async function legacySa(sa: string): Promise<string> {
  await applyYaml(
    m1,
    [
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${sa}, namespace: ${src}}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${run}-${sa}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: ServiceAccount, name: ${sa}, namespace: ${src}}`,
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${sa}-token\n  namespace: ${src}\n  annotations: {kubernetes.io/service-account.name: ${sa}}\ntype: kubernetes.io/service-account-token`,
    ].join('\n---\n'),
  );
  let token = '';
  for (let i = 0; i < 100 && !token; i++) {
    token = decode(await kubectl(m1, ['get', 'secret', `${sa}-token`, '-n', src, '-o', 'jsonpath={.data.token}']));
    if (!token) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(token, 'kube-controller-manager did not fill the legacy token Secret');
  secrets.add(token);
  return token;
}

/** An Argo CD cluster Secret on the hub holding the token, as `argocd cluster add` leaves one. */
async function argoSecret(name: string, token: string): Promise<void> {
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: hubNs, labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
      type: 'Opaque',
      data: {
        name: b64(name),
        server: b64(m1.url),
        config: b64(JSON.stringify({ bearerToken: token, tlsClientConfig: { insecure: false, caData: b64(caPem) } })),
      },
    }),
  );
}

/** A copy of the token in another hub Secret (a team's own, no format fleet knows). */
async function copySecret(name: string, token: string): Promise<void> {
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: hubNs },
      type: 'Opaque',
      data: { token: b64(token) },
    }),
  );
}

/** A Deployment in the token Secret's namespace that mounts it (stored: no pods run on the test control plane). */
async function mountingDeployment(name: string, secret: string): Promise<void> {
  await applyYaml(
    m1,
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: src },
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [{ name: 'app', image: 'example.invalid/app:1' }],
            volumes: [{ name: 'token', secret: { secretName: secret } }],
          },
        },
      },
    }),
  );
}

const adoptInto = (n: string) => ['--service-account', `${apps}/${n}`, '--role', 'view', '-n', apps];

before(async () => {
  dir = join(scratchDir(), run);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await kubectl(m1, ['create', 'namespace', src]);
  await kubectl(m1, ['create', 'namespace', apps]);
  await kubectl(hub, ['create', 'namespace', hubNs]);
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', src, apps, '--wait=false']);
  const crbs = await kubectl(m1, ['get', 'clusterrolebindings', '-o', 'name']);
  const ours = crbs.split('\n').filter((n) => n.includes(run));
  if (ours.length > 0) await kubectlResult(m1, ['delete', ...ours, '--ignore-not-found']);
});

describe('nothing deleted that something else still uses', { concurrency: false }, () => {
  it("adopt --revoke-old keeps the legacy token the operator's own kubeconfig uses for that member: adopted, the old token still works, exit 1 naming the file and context; --dry-run said so first", async () => {
    const token = await legacySa('own');
    await argoSecret('own', token);
    // The operator's only credential for member-1 is that legacy token (a cluster-admin: it may mint).
    const own = tokenKubeconfig(join(dir, 'own.kubeconfig'), token);
    const args = [
      'creds',
      'adopt',
      `${hubNs}/own`,
      '--kubeconfig',
      own,
      ...HUB,
      ...adoptInto('own-view'),
      '--revoke-old',
    ];
    const dry = await fleet([...args, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = dry.json<any>().items[0];
    assert.equal(planned.status, 'planned', JSON.stringify(planned));
    assert.deepEqual(planned.old.stillUsed, [`kubeconfig ${own} (context ops)`]);
    assert.match(
      planned.reason,
      /keeping the old token Secret .*own-token on .*own\.kubeconfig\+ops: still used by kubeconfig .* \(--force deletes it anyway\)/,
    );

    const res = await fleet([...args, '--yes', '-o', 'json']);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.old.revoked, false);
    assert.equal(item.old.valid, true);
    assert.deepEqual(item.old.stillUsed, [`kubeconfig ${own} (context ops)`]);
    assert.match(
      item.old.reason,
      new RegExp(
        `kept: the old token Secret ${src}/own-token on .*\\+ops is still used by kubeconfig .*own\\.kubeconfig \\(context ops\\): not deleted; --force deletes it anyway`,
      ),
    );
    assert.ok(!item.steps.some((s: any) => s.step === 'revoke'), JSON.stringify(item.steps));
    // Under -o json the refusal and the note are in the JSON (checked above); stderr carries them in the table formats.
    // The Secret holds the new credential; the operator's own token still works and its Secret is there.
    const now = JSON.parse(await kubectl(hub, ['get', 'secret', 'own', '-n', hubNs, '-o', 'json']));
    assert.notEqual(JSON.parse(decode(now.data.config)).bearerToken, token);
    secrets.add(JSON.parse(decode(now.data.config)).bearerToken);
    assert.equal(await tokenIs(token), `system:serviceaccount:${src}:own`);
    assert.ok(await exists('secret', 'own-token', src));
  });

  it('adopt --revoke-old keeps a token Secret a Deployment mounts, naming the Deployment', async () => {
    const token = await legacySa('mounted');
    await argoSecret('mounted', token);
    await mountingDeployment('web', 'mounted-token');
    const res = await fleet([
      'creds',
      'adopt',
      `${hubNs}/mounted`,
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      ...adoptInto('mounted-view'),
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.old.revoked, false);
    assert.deepEqual(item.old.stillUsed, [`Deployment ${src}/web on ${m1.kubeconfig}+${m1.context} (volume token)`]);
    // -o json prints no notes on stderr: the refusal is the item's old.reason.
    assert.match(
      item.old.reason,
      new RegExp(`still used by Deployment ${src}/web on .*\\(volume token\\): not deleted; --force deletes it anyway`),
    );
    assert.ok(await exists('secret', 'mounted-token', src));
    assert.equal(await tokenIs(token), `system:serviceaccount:${src}:mounted`);
    secrets.add(
      JSON.parse(
        decode(JSON.parse(await kubectl(hub, ['get', 'secret', 'mounted', '-n', hubNs, '-o', 'json'])).data.config),
      ).bearerToken,
    );
  });

  it('adopt --revoke-old keeps a token another hub Secret holds, naming that Secret and key', async () => {
    const token = await legacySa('copied');
    await argoSecret('copied', token);
    await copySecret('copied-elsewhere', token);
    const res = await fleet([
      'creds',
      'adopt',
      `${hubNs}/copied`,
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      ...adoptInto('copied-view'),
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.deepEqual(item.old.stillUsed, [`hub Secret ${hubNs}/copied-elsewhere (key token)`]);
    assert.ok(await exists('secret', 'copied-token', src));
    assert.equal(await tokenIs(token), `system:serviceaccount:${src}:copied`);
  });

  it('adopt --revoke-old --force deletes it anyway, still naming every user, and the old token is refused (401)', async () => {
    const token = await legacySa('forced');
    await argoSecret('forced', token);
    await copySecret('forced-elsewhere', token);
    await mountingDeployment('worker', 'forced-token');
    const res = await fleet([
      'creds',
      'adopt',
      `${hubNs}/forced`,
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      ...adoptInto('forced-view'),
      '--revoke-old',
      '--force',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.old.revoked, true);
    assert.deepEqual(item.old.stillUsed.sort(), [
      `Deployment ${src}/worker on ${m1.kubeconfig}+${m1.context} (volume token)`,
      `hub Secret ${hubNs}/forced-elsewhere (key token)`,
    ]);
    assert.match(item.old.reason, /was deleted although still used by .* \(--force\)/);
    assert.equal(await exists('secret', 'forced-token', src), false);
    assert.ok(await refusedWithin(token), 'the old token still authenticates');
  });

  it('a member credential that may not list Deployments: adopted and revoked, and the note says the Deployments were not checked', async () => {
    const token = await legacySa('blind');
    await argoSecret('blind', token);
    // An operator whose member credential may do everything fleet needs but list Deployments.
    await applyYaml(
      m1,
      [
        `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: no-deploy, namespace: ${src}}`,
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${run}-no-deploy}\nrules:\n- {apiGroups: [''], resources: ['*'], verbs: ['*']}\n- {apiGroups: [rbac.authorization.k8s.io], resources: ['*'], verbs: ['*']}\n- {apiGroups: [authorization.k8s.io, authentication.k8s.io], resources: ['*'], verbs: [create]}\n- {apiGroups: [apps], resources: [statefulsets, daemonsets, replicasets], verbs: [get, list]}\n- {apiGroups: [batch], resources: [jobs, cronjobs], verbs: [get, list]}`,
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${run}-no-deploy}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${run}-no-deploy}\nsubjects:\n- {kind: ServiceAccount, name: no-deploy, namespace: ${src}}`,
      ].join('\n---\n'),
    );
    const limited = (await kubectl(m1, ['create', 'token', 'no-deploy', '-n', src, '--duration', '1h'])).trim();
    secrets.add(limited);
    const kc = tokenKubeconfig(join(dir, 'no-deploy.kubeconfig'), limited, 'limited');
    // Into the same ServiceAccount: no RBAC to create (which this credential could not grant).
    const res = await fleet([
      'creds',
      'adopt',
      `${hubNs}/blind`,
      '--kubeconfig',
      kc,
      ...HUB,
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.old.revoked, true);
    assert.equal(item.old.stillUsed, undefined);
    assert.equal(item.old.unchecked.length, 1, JSON.stringify(item.old.unchecked));
    assert.match(item.old.unchecked[0], new RegExp(`^deployments in ${src} on .*limited \\(.*forbidden`, 'i'));
    // Under -o json the refusal and the note are in the JSON (checked above); stderr carries them in the table formats.
    assert.ok(await refusedWithin(token), 'the old token still authenticates');
    secrets.add(
      JSON.parse(
        decode(JSON.parse(await kubectl(hub, ['get', 'secret', 'blind', '-n', hubNs, '-o', 'json'])).data.config),
      ).bearerToken,
    );
  });

  it('creds revoke refuses while another hub Secret holds the same token (nothing deleted, the token works); --dry-run says it; --force revokes it (401)', async () => {
    const gen = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      m1.kubeconfig,
      '--cluster',
      m1.context,
      ...HUB,
      '--service-account',
      `${apps}/rev`,
      '--role',
      'pod-lister',
      '--duration',
      '2h',
      '--secret',
      `${hubNs}/rev`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr + gen.stdout);
    const held = kubeconfigInSecret(
      JSON.parse(await kubectl(hub, ['get', 'secret', 'rev', '-n', hubNs, '-o', 'json'])),
    );
    const token = (yaml.load(held) as any).users[0].user.token as string;
    secrets.add(token);
    await copySecret('rev-copy', token);
    const REVOKE = ['creds', 'revoke', `${hubNs}/rev`, '--kubeconfig', m1.kubeconfig, ...HUB];

    const dry = await fleet([...REVOKE, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const plan = dry.json<any>().items[0];
    assert.equal(plan.status, 'planned');
    assert.deepEqual(plan.stillUsed, [`hub Secret ${hubNs}/rev-copy (key token)`]);
    assert.match(
      plan.reason,
      /^would be refused: .* is still used by hub Secret .*rev-copy \(key token\): not deleted; --force deletes it anyway$/,
    );

    const res = await fleet([...REVOKE, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'failed');
    assert.deepEqual(item.stillUsed, [`hub Secret ${hubNs}/rev-copy (key token)`]);
    assert.deepEqual(item.deleted, []);
    assert.match(
      res.stderr,
      /still used by hub Secret .*rev-copy \(key token\): not deleted; --force deletes it anyway; nothing was deleted/,
    );
    assert.equal(await tokenIs(token), `system:serviceaccount:${apps}:rev`);
    assert.ok(await exists('secret', 'rev', hubNs, hub));

    const forced = await fleet([...REVOKE, '--force', '-o', 'json']);
    assert.equal(forced.code, 0, forced.stderr + forced.stdout);
    const done = forced.json<any>().items[0];
    assert.equal(done.status, 'revoked', JSON.stringify(done));
    assert.deepEqual(done.stillUsed, [`hub Secret ${hubNs}/rev-copy (key token)`]);
    assert.ok(await refusedWithin(token), 'the revoked token still authenticates');
  });

  it("creds revoke refuses while the operator's own kubeconfig (a second file in --kubeconfig) holds the token", async () => {
    const gen = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      m1.kubeconfig,
      '--cluster',
      m1.context,
      ...HUB,
      '--service-account',
      `${apps}/rev2`,
      '--role',
      'pod-lister',
      '--duration',
      '2h',
      '--secret',
      `${hubNs}/rev2`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr + gen.stdout);
    const held = kubeconfigInSecret(
      JSON.parse(await kubectl(hub, ['get', 'secret', 'rev2', '-n', hubNs, '-o', 'json'])),
    );
    const token = (yaml.load(held) as any).users[0].user.token as string;
    secrets.add(token);
    const mine = tokenKubeconfig(join(dir, 'mine.kubeconfig'), token, 'mine');
    const res = await fleet([
      'creds',
      'revoke',
      `${hubNs}/rev2`,
      '--kubeconfig',
      `${m1.kubeconfig}:${mine}`,
      '--cluster',
      m1.context,
      ...HUB,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'failed', JSON.stringify(item));
    assert.deepEqual(item.stillUsed, [`kubeconfig ${mine} (context mine)`]);
    assert.equal(await tokenIs(token), `system:serviceaccount:${apps}:rev2`);
  });

  it('no output holds a token', () => {
    assert.ok(secrets.size >= 8, `${secrets.size} secrets`);
    for (const { what, text } of outputs)
      for (const s of secrets) assert.ok(!text.includes(s), `a token in the output of fleet ${what}`);
  });
});
