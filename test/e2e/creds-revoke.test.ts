// fleet creds revoke against the real control plane (journey (d) of issue 19): credentials made by creds generate (bound
// tokens in hub Secrets of several formats, a legacy token, a token and a client certificate in --out files) are
// revoked; every object generate made is gone (kubectl get), the objects it found (a ServiceAccount that existed) and
// those another credential of the same identity still uses remain, the old credential is refused (401) after revoke,
// --dry-run deletes nothing, a Secret or file fleet did not write is refused (exit 2, nothing deleted), a second revoke
// reports the credential as not found, an interrupted revoke is finished by running it again. No secret made here
// appears in any captured output.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FORMATS } from '../../src/creds/codecs/index.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigInSecret } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('rev');
const nsSys = `${run}-sys`; // ServiceAccounts and anchors on the member (created by the first generate)
const nsApp = `${run}-app`; // namespaced grants
const nsApp2 = `${run}-app2`;
const hubNs = `${run}-hub`;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const REVOKE = ['creds', 'revoke', '--kubeconfig', m1.kubeconfig, ...HUB];

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
let dir: string;

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}

const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

function remember(text: string): string {
  const u = (yaml.load(text) as any).users[0].user;
  if (u.token) secrets.add(u.token);
  if (u['client-key-data']) {
    secrets.add(u['client-key-data']);
    secrets.add(decode(u['client-key-data']).trim());
  }
  return text;
}

/** The kubeconfig a hub Secret holds (argocd's config turned into one), remembered as a secret to grep for. */
function kubeconfigOf(s: any): string {
  return remember(kubeconfigInSecret(s));
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

let probe = 0;
/** Who the credential in a kubeconfig is, or undefined when the server refuses it (kubectl auth whoami). */
async function whoIs(text: string): Promise<string | undefined> {
  const path = join(dir, `${run}-probe-${probe++}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return new Promise((resolve) => {
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    );
  });
}

/** Whether an object exists on a server (kubectl get; NotFound is false, any other failure throws). */
async function exists(ref: typeof hub, kind: string, name: string, namespace?: string): Promise<boolean> {
  const r = await kubectlResult(ref, ['get', kind, name, ...(namespace ? ['-n', namespace] : []), '-o', 'name']);
  if (r.code === 0) return true;
  if (/NotFound|not found/.test(r.stderr)) return false;
  throw new Error(`kubectl get ${kind} ${name}: ${r.stderr}`);
}

const objKey = (o: { kind: string; namespace?: string; name: string }) =>
  `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/** What fleet made for a ServiceAccount identity, as generate reports it (created objects on the cluster). */
async function generate(args: string[]): Promise<any> {
  const res = await fleet(['creds', 'generate', ...MEMBER, ...args, '-o', 'json']);
  assert.equal(res.code, 0, res.stderr + res.stdout);
  return res.json();
}

function assertOneLineError(res: CliResult, code: number, pattern: RegExp) {
  assert.equal(res.code, code, `exit ${res.code}: ${res.stderr}`);
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected: ${res.stderr}`);
  assert.match(lines[0], pattern);
}

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  await applyYaml(m1, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsApp2 } }));
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, nsApp, nsApp2, '--wait=false']);
});

describe('fleet creds revoke', { concurrency: false }, () => {
  it('a bound token in a multicluster-runtime Secret: dry-run touches nothing; revoke deletes the anchor, ClusterRole, binding, the ServiceAccount it created and the Secret, and the old token is refused', async () => {
    const gen = await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/mcr`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '2h',
      '--secret',
      `${hubNs}/mcr-m1`,
      '--format',
      'multicluster-runtime',
    ]);
    const made = (gen.objects as any[])
      .filter((o) => o.action === 'created' && o.on === 'cluster')
      .map(objKey)
      .sort();
    assert.deepEqual(made.map((k: string) => k.split(' ')[0]).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'Namespace',
      'Secret',
      'ServiceAccount',
    ]);
    const s0 = await hubSecret('mcr-m1');
    const oldText = kubeconfigOf(s0);
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:mcr`);

    const dry = await fleet([...REVOKE, `${hubNs}/mcr-m1`, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const plan = dry.json();
    assert.equal(plan.kind, 'CredentialRevocation');
    assert.equal(plan.dryRun, true);
    assert.equal(plan.items[0].status, 'planned');
    assert.ok(
      plan.items[0].deleted.every((d: any) => d.action === 'would-delete'),
      JSON.stringify(plan.items[0].deleted),
    );
    // What would be deleted is exactly what generate created (the Namespace excepted) plus the hub Secret.
    const wouldDelete = plan.items[0].deleted
      .filter((d: any) => d.on === 'cluster')
      .map(objKey)
      .sort();
    assert.deepEqual(
      wouldDelete,
      made.filter((k: string) => !k.startsWith('Namespace')),
    );
    assert.equal(
      (await hubSecret('mcr-m1')).metadata.resourceVersion,
      s0.metadata.resourceVersion,
      'a dry run changed the Secret',
    );
    assert.equal(await exists(m1, 'serviceaccount', 'mcr', nsSys), true);
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:mcr`, 'a dry run revoked the token');
    const dryHuman = await fleet([...REVOKE, `${hubNs}/mcr-m1`, '--dry-run']);
    assert.equal(dryHuman.code, 0, dryHuman.stderr);
    assert.match(dryHuman.stdout, /planned/);

    const res = await fleet([...REVOKE, `${hubNs}/mcr-m1`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const report = res.json();
    assert.deepEqual(Object.keys(report), ['kind', 'dryRun', 'hub', 'items']);
    assert.equal(report.dryRun, false);
    assert.equal(report.hub, hub.context);
    const item = report.items[0];
    assert.deepEqual(item.secret, {
      hub: hub.context,
      namespace: hubNs,
      name: 'mcr-m1',
      format: 'multicluster-runtime',
    });
    assert.equal(item.cluster, gen.cluster);
    assert.equal(item.method, 'token');
    assert.equal(item.identity, `system:serviceaccount:${nsSys}:mcr`);
    assert.equal(item.status, 'revoked', JSON.stringify(item));
    assert.deepEqual(item.refused, { done: true, reason: 'the old credential is refused (401)' });
    assert.ok(
      item.deleted.every((d: any) => d.action === 'deleted'),
      JSON.stringify(item.deleted),
    );
    assert.deepEqual(
      item.deleted
        .filter((d: any) => d.on === 'cluster')
        .map(objKey)
        .sort(),
      wouldDelete,
    );
    // The credential first, the record last.
    assert.equal(item.deleted[0].name, gen.anchor.name);
    assert.deepEqual(item.deleted.at(-1), {
      kind: 'Secret',
      namespace: hubNs,
      name: 'mcr-m1',
      on: 'hub',
      action: 'deleted',
    });
    // The namespace generate created is named, not deleted.
    assert.deepEqual(item.kept.map(objKey), [`Namespace ${nsSys}`]);
    assert.equal(await exists(m1, 'namespace', nsSys), true);
    for (const d of item.deleted) {
      assert.equal(
        await exists(d.on === 'hub' ? hub : m1, d.kind.toLowerCase(), d.name, d.namespace),
        false,
        `${objKey(d)} still exists`,
      );
    }
    assert.equal(await whoIs(oldText), undefined, 'the old token still authenticates');

    // A second revoke: the Secret is gone, said clearly; exit 1 as kubectl delete, 0 with --ignore-not-found.
    const again = await fleet([...REVOKE, `${hubNs}/mcr-m1`, '-o', 'json']);
    assert.equal(again.code, 1);
    assert.equal(again.json().items[0].status, 'not-found');
    assert.match(
      again.stderr,
      /Secret .*mcr-m1 does not exist: nothing to revoke \(already revoked, or never written\)/,
    );
    assertOneLineError(
      await fleet([...REVOKE, `${hubNs}/mcr-m1`]),
      1,
      /does not exist: nothing to revoke \(already revoked/,
    );
    const ignored = await fleet([...REVOKE, `${hubNs}/mcr-m1`, '--ignore-not-found']);
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.match(ignored.stderr, /already revoked/);
  });

  it('the hub namespace generate created for the Secret (--create-namespace) is named under kept, on the hub, and never deleted', async () => {
    const newHubNs = `${run}-hubnew`;
    try {
      await generate([
        ...HUB,
        '--service-account',
        `${nsSys}/hubns`,
        '--role',
        'pod-lister',
        '--create-namespace',
        '--duration',
        '2h',
        '--secret',
        `${newHubNs}/hubns-m1`,
        '--format',
        'multicluster-runtime',
      ]);
      kubeconfigOf(JSON.parse(await kubectl(hub, ['get', 'secret', 'hubns-m1', '-n', newHubNs, '-o', 'json'])));
      const kept = {
        kind: 'Namespace',
        name: newHubNs,
        on: 'hub',
        reason:
          'created on the hub by fleet (--create-namespace) for the Secret, but a namespace may hold other things: delete it yourself',
      };
      const plan = await fleet([...REVOKE, `${newHubNs}/hubns-m1`, '--dry-run', '-o', 'json']);
      assert.equal(plan.code, 0, plan.stderr);
      assert.deepEqual(
        plan.json().items[0].kept.filter((k: any) => k.on === 'hub'),
        [kept],
      );
      const revoked = await fleet([...REVOKE, `${newHubNs}/hubns-m1`]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stdout, new RegExp(`Namespace ${newHubNs} \\(hub\\)`), revoked.stdout);
      assert.equal(await exists(hub, 'namespace', newHubNs), true);
      assert.equal(await exists(hub, 'secret', 'hubns-m1', newHubNs), false);
    } finally {
      await kubectlResult(hub, ['delete', 'namespace', newHubNs, '--wait=false']);
    }
  });

  it('an Argo CD Secret for a ServiceAccount that existed before: the ServiceAccount stays, everything fleet made goes', async () => {
    await kubectl(m1, ['create', 'serviceaccount', 'found', '-n', nsSys]);
    const gen = await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/found`,
      '--role',
      'view',
      '-n',
      nsApp,
      '--create-namespace',
      '--secret',
      `${hubNs}/argo-m1`,
      '--format',
      'argocd',
    ]);
    assert.ok(
      !(gen.objects as any[]).some((o) => o.kind === 'ServiceAccount'),
      'generate made the ServiceAccount it found',
    );
    const oldText = kubeconfigOf(await hubSecret('argo-m1'));
    const res = await fleet([...REVOKE, `${hubNs}/argo-m1`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'revoked', JSON.stringify(item));
    assert.deepEqual(
      item.deleted.map(objKey).sort(),
      [
        `Role ${nsApp}/fleet-creds-${nsSys}-found`,
        `RoleBinding ${nsApp}/fleet-creds-${nsSys}-found`,
        `Secret ${gen.anchor.namespace}/${gen.anchor.name}`,
        `Secret ${hubNs}/argo-m1`,
      ].sort(),
    );
    const sa = item.kept.find((k: any) => k.kind === 'ServiceAccount');
    assert.equal(sa.name, 'found');
    assert.match(sa.reason, /fleet found it, did not create it/);
    assert.equal(
      await exists(m1, 'serviceaccount', 'found', nsSys),
      true,
      'the ServiceAccount fleet found was deleted',
    );
    assert.equal(await exists(m1, 'role', `fleet-creds-${nsSys}-found`, nsApp), false);
    assert.equal(await exists(m1, 'rolebinding', `fleet-creds-${nsSys}-found`, nsApp), false);
    assert.equal(await exists(hub, 'secret', 'argo-m1', hubNs), false);
    assert.equal(await whoIs(oldText), undefined, 'the old token still authenticates');
  });

  it('a legacy token in a flux Secret, revoked after an interrupted run had deleted its token Secret: the re-run finishes', async () => {
    await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/legacy`,
      '--role',
      'view',
      '-n',
      nsApp,
      '--method',
      'legacy-token',
      '--secret',
      `${hubNs}/legacy-flux`,
      '--format',
      'flux',
    ]);
    const oldText = kubeconfigOf(await hubSecret('legacy-flux'));
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:legacy`);
    const tokenSecrets = (await kubectl(m1, ['get', 'secrets', '-n', nsSys, '-o', 'name']))
      .split('\n')
      .filter((n) => n.startsWith('secret/legacy-fleet-token-'));
    assert.equal(tokenSecrets.length, 1);
    // What a revoke killed after its first deletion leaves: the credential gone, everything else (the record) still there.
    await kubectl(m1, ['delete', tokenSecrets[0], '-n', nsSys]);
    const res = await fleet([...REVOKE, `${hubNs}/legacy-flux`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'revoked', JSON.stringify(item));
    assert.equal(item.method, 'legacy-token');
    assert.deepEqual(item.deleted[0], {
      kind: 'Secret',
      namespace: nsSys,
      name: tokenSecrets[0].slice('secret/'.length),
      on: 'cluster',
      action: 'already-gone',
    });
    assert.ok(item.deleted.slice(1).every((d: any) => d.action === 'deleted'));
    assert.ok(item.deleted.some((d: any) => d.kind === 'ServiceAccount' && d.name === 'legacy'));
    assert.equal(await exists(m1, 'serviceaccount', 'legacy', nsSys), false);
    assert.equal(await exists(hub, 'secret', 'legacy-flux', hubNs), false);
    assert.equal(await whoIs(oldText), undefined, 'the old legacy token still authenticates');
  });

  it('two credentials of one identity (a Secret and an --out file): revoking one keeps what the other uses, revoking the other removes the rest', async () => {
    const file = join(dir, `${run}-shared.kubeconfig`);
    const genA = await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/shared`,
      '--role',
      'pod-lister',
      '-n',
      nsApp,
      '--create-namespace',
      '--secret',
      `${hubNs}/shared-a`,
      '--format',
      'cluster-inventory',
      '--consumer',
      'c1',
      '--profile',
      'p1',
    ]);
    const genB = await generate([
      '--service-account',
      `${nsSys}/shared`,
      '--role',
      'pod-lister',
      '-n',
      nsApp2,
      '--out',
      file,
    ]);
    const textA = kubeconfigOf(await hubSecret('shared-a'));
    const textB = remember(readFileSync(file, 'utf8'));
    const role = `fleet-creds-${nsSys}-shared`;

    const resA = await fleet([...REVOKE, `${hubNs}/shared-a`, '-o', 'json']);
    assert.equal(resA.code, 0, resA.stderr + resA.stdout);
    const a = resA.json().items[0];
    assert.equal(a.status, 'revoked', JSON.stringify(a));
    assert.deepEqual(
      a.deleted.map(objKey).sort(),
      [
        `Role ${nsApp}/${role}`,
        `RoleBinding ${nsApp}/${role}`,
        `Secret ${genA.anchor.namespace}/${genA.anchor.name}`,
        `Secret ${hubNs}/shared-a`,
      ].sort(),
    );
    const keptA = Object.fromEntries(a.kept.map((k: any) => [objKey(k), k.reason]));
    for (const k of [`Role ${nsApp2}/${role}`, `RoleBinding ${nsApp2}/${role}`, `ServiceAccount ${nsSys}/shared`]) {
      assert.match(
        keptA[k] ?? '',
        new RegExp(`still used by Secret ${genB.anchor.namespace}/${genB.anchor.name}`),
        `${k}: ${JSON.stringify(a.kept)}`,
      );
    }
    assert.equal(await whoIs(textA), undefined, 'the revoked token still authenticates');
    assert.equal(await whoIs(textB), `system:serviceaccount:${nsSys}:shared`, 'the other credential stopped working');
    assert.equal(await exists(m1, 'rolebinding', role, nsApp2), true);

    // The file was moved since generate wrote it: its token still names its anchor.
    const moved = join(dir, `${run}-moved.kubeconfig`);
    renameSync(file, moved);
    const resB = await fleet([...REVOKE, '--file', moved, '-o', 'json']);
    assert.equal(resB.code, 0, resB.stderr + resB.stdout);
    const b = resB.json().items[0];
    assert.equal(b.status, 'revoked', JSON.stringify(b));
    assert.deepEqual(b.file, { path: moved });
    assert.deepEqual(b.deleted[0], {
      kind: 'Secret',
      namespace: genB.anchor.namespace,
      name: genB.anchor.name,
      on: 'cluster',
      action: 'deleted',
    });
    assert.deepEqual(b.deleted.at(-1), { kind: 'File', name: moved, on: 'file', action: 'deleted' });
    assert.equal(existsSync(moved), false, 'the kubeconfig file is still there');
    for (const [kind, name, ns] of [
      ['role', role, nsApp2],
      ['rolebinding', role, nsApp2],
      ['serviceaccount', 'shared', nsSys],
      ['secret', genB.anchor.name, nsSys],
    ]) {
      assert.equal(await exists(m1, kind, name, ns), false, `${kind} ${ns}/${name} still exists`);
    }
    assert.equal(await whoIs(textB), undefined, 'the file token still authenticates');
  });

  it('two credentials of one identity revoked in one run (plan and run) leave nothing of the identity behind', async () => {
    const file = join(dir, `${run}-both.kubeconfig`);
    await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/both`,
      '--role',
      'pod-lister',
      '-n',
      nsApp,
      '--secret',
      `${hubNs}/both-a`,
      '--format',
      'flux',
    ]);
    await generate(['--service-account', `${nsSys}/both`, '--role', 'pod-lister', '-n', nsApp2, '--out', file]);
    const texts = [kubeconfigOf(await hubSecret('both-a')), remember(readFileSync(file, 'utf8'))];
    const role = `fleet-creds-${nsSys}-both`;
    const everything = [
      `Role ${nsApp}/${role}`,
      `RoleBinding ${nsApp}/${role}`,
      `Role ${nsApp2}/${role}`,
      `RoleBinding ${nsApp2}/${role}`,
      `ServiceAccount ${nsSys}/both`,
    ];
    const onCluster = (items: any[]) =>
      items.flatMap((i) => i.deleted.filter((d: any) => d.on === 'cluster' && d.kind !== 'Secret').map(objKey)).sort();

    const dry = await fleet([...REVOKE, `${hubNs}/both-a`, '--file', file, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(onCluster(dry.json().items), [...everything].sort());
    const res = await fleet([...REVOKE, `${hubNs}/both-a`, '--file', file, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.deepEqual(
      res.json().items.map((i: any) => i.status),
      ['revoked', 'revoked'],
    );
    assert.deepEqual(onCluster(res.json().items), [...everything].sort());
    const left = await kubectl(m1, [
      'get',
      'roles,rolebindings,serviceaccounts,secrets',
      '-A',
      '-l',
      `fleet.dev/credential`,
      '-o',
      'name',
    ]);
    assert.ok(!left.includes(`/${role}`) && !left.includes('/both'), left);
    for (const t of texts) assert.equal(await whoIs(t), undefined);
  });

  it('a client certificate in an --out file: RBAC and file deleted, the certificate said valid until its NotAfter', async () => {
    const file = join(dir, `${run}-cert.kubeconfig`);
    const user = `${run}-ci`;
    const gen = await generate([
      '--method',
      'client-cert',
      '--user',
      user,
      '--group',
      'ci',
      '--role',
      'deployer',
      '-n',
      nsApp,
      '--duration',
      '1h',
      '--out',
      file,
    ]);
    const text = remember(readFileSync(file, 'utf8'));
    const canList = async () =>
      (await kubectlResult(m1, ['auth', 'can-i', 'list', 'deployments', '-n', nsApp], { kubeconfig: file })).code === 0;
    assert.equal(await canList(), true);
    const res = await fleet([...REVOKE, '--file', file, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'revoked', JSON.stringify(item));
    assert.equal(item.method, 'client-cert');
    assert.equal(item.refused.done, false);
    assert.match(
      item.refused.reason,
      new RegExp(
        `a client certificate cannot be revoked: it stays valid until ${gen.expires}.*the RBAC fleet granted it was deleted`,
      ),
    );
    const safe = `fleet-creds-user-${user}`;
    assert.deepEqual(
      item.deleted.map(objKey).sort(),
      [`File ${file}`, `Role ${nsApp}/${safe}`, `RoleBinding ${nsApp}/${safe}`].sort(),
    );
    assert.equal(existsSync(file), false);
    // The certificate still authenticates (nothing can stop that), but its grant is gone.
    writeFileSync(file, text, { mode: 0o600 });
    assert.equal(await whoIs(text), user);
    assert.equal(await canList(), false, 'the certificate still has the grant fleet made');
  });

  it('refuses a Secret or file fleet did not write (exit 2), deleting nothing, even beside one it did', async () => {
    await kubectl(hub, [
      'create',
      'secret',
      'generic',
      'plain',
      '-n',
      hubNs,
      '--from-literal=kubeconfig=apiVersion: v1',
    ]);
    const gen = await generate([
      ...HUB,
      '--service-account',
      `${nsSys}/keep`,
      '--role',
      'pod-lister',
      '-n',
      nsApp,
      '--secret',
      `${hubNs}/keep-m1`,
      '--format',
      'multicluster-runtime',
    ]);
    const text = kubeconfigOf(await hubSecret('keep-m1'));
    assertOneLineError(
      await fleet([...REVOKE, `${hubNs}/keep-m1`, `${hubNs}/plain`]),
      2,
      new RegExp(
        `hub ${hub.context}: Secret ${hubNs}/plain was not written by fleet creds generate .*: fleet revokes only what it made; nothing was deleted`,
      ),
    );
    const json = await fleet([...REVOKE, `${hubNs}/plain`, '-o', 'json']);
    assert.equal(json.code, 2);
    assert.equal(json.json().error.kind, 'config');
    const foreign = join(dir, `${run}-foreign.kubeconfig`);
    writeFileSync(foreign, readFileSync(m1.kubeconfig, 'utf8'), { mode: 0o600 });
    assertOneLineError(
      await fleet([...REVOKE, '--file', foreign]),
      2,
      /foreign\.kubeconfig was not written by fleet creds generate \(no fleet\.dev\/credential extension\)/,
    );
    assert.equal(existsSync(foreign), true);
    assert.equal(await exists(hub, 'secret', 'plain', hubNs), true);
    assert.equal(await exists(hub, 'secret', 'keep-m1', hubNs), true);
    assert.equal(await exists(m1, 'secret', gen.anchor.name, nsSys), true);
    assert.equal(await whoIs(text), `system:serviceaccount:${nsSys}:keep`);
    // -o name names what was revoked.
    const named = await fleet([...REVOKE, `${hubNs}/keep-m1`, '-o', 'name']);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(named.stdout, `secret/${hubNs}/keep-m1\n`);
    assert.equal(await whoIs(text), undefined);
  });

  it('a Secret in a format fleet does not know: creds list shows it as unknown with the value; rotate and revoke refuse it (exit 2, one line naming it and the known formats), touching nothing', async () => {
    // What another fleet (a newer format) or a hand edit could leave: fleet's mark and annotations, a format it does not know.
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'newer-format',
          namespace: hubNs,
          labels: { 'app.kubernetes.io/managed-by': 'fleet' },
          annotations: {
            'fleet.dev/credential-method': 'token',
            'fleet.dev/credential-identity': `system:serviceaccount:${nsSys}:newer`,
            'fleet.dev/credential-cluster': m1.context,
            'fleet.dev/credential-format': 'helm-v9',
          },
        },
        data: { kubeconfig: Buffer.from('apiVersion: v1\nkind: Config\n').toString('base64') },
      }),
    );
    // The codec table's formats, in its order: the message names every one, whatever formats are added later.
    const known = FORMATS.join(', ');
    assert.ok(FORMATS.includes('flux'), known);
    const list = await fleet(['creds', 'list', '--kubeconfig', m1.kubeconfig, ...HUB, '-o', 'json']);
    assert.equal(list.code, 0, list.stderr);
    const item = list
      .json()
      .items.find(
        (i: any) => i.source.kind === 'secret' && i.source.namespace === hubNs && i.source.name === 'newer-format',
      );
    assert.ok(item, `creds list shows the Secret: ${list.stdout}`);
    assert.equal(item.format, 'unknown');
    assert.equal(item.managedByFleet, true);
    assert.deepEqual(item.problems, [`fleet.dev/credential-format: "helm-v9" is not a format fleet knows (${known})`]);
    const refusal = new RegExp(
      `^error: hub ${hub.context}: Secret ${hubNs}/newer-format: unknown consumer Secret format "helm-v9" \\(fleet knows ${known}\\)$`,
    );
    assertOneLineError(
      await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/newer-format`]),
      2,
      refusal,
    );
    assertOneLineError(await fleet([...REVOKE, `${hubNs}/newer-format`]), 2, refusal);
    const json = await fleet([...REVOKE, `${hubNs}/newer-format`, '-o', 'json']);
    assert.equal(json.code, 2);
    assert.equal(json.json().error.kind, 'config');
    assert.equal((await hubSecret('newer-format')).metadata.annotations['fleet.dev/credential-format'], 'helm-v9');
  });

  it('a credential that still authenticates after its deletion is a failure (exit 1) and its Secret is kept for a re-run', async () => {
    // A fleet-labelled record whose token hangs on nothing fleet deletes (a static token of the member): what a token
    // that survives its anchor looks like from outside.
    const alice = m1.tokenUsers.find((u) => u.name === 'alice')!;
    secrets.add(alice.token);
    const text = yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: m1.url, 'certificate-authority-data': readFileSync(m1.caFile).toString('base64') },
        },
      ],
      users: [{ name: 'u', user: { token: alice.token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    });
    const cluster = (
      await generate([
        '--service-account',
        `${nsSys}/probe`,
        '--role',
        'pod-lister',
        '-n',
        nsApp,
        '--out',
        join(dir, `${run}-probe.kubeconfig`),
      ])
    ).cluster;
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'survivor',
          namespace: hubNs,
          labels: { 'app.kubernetes.io/managed-by': 'fleet' },
          annotations: {
            'fleet.dev/credential-method': 'token',
            'fleet.dev/credential-identity': `system:serviceaccount:${nsSys}:ghost`,
            'fleet.dev/credential-cluster': cluster,
            'fleet.dev/credential-format': 'multicluster-runtime',
          },
        },
        data: { kubeconfig: Buffer.from(text).toString('base64') },
      }),
    );
    const res = await fleet([...REVOKE, `${hubNs}/survivor`, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'failed');
    assert.equal(item.refused.done, false);
    assert.match(
      item.refused.reason,
      /the old credential still authenticated 30s after its deletion; the hub Secret is kept so that a re-run can finish/,
    );
    assert.ok(!item.deleted.some((d: any) => d.on === 'hub'));
    assert.match(res.stderr, /^error: .*survivor.*still authenticated/);
    assert.equal(await exists(hub, 'secret', 'survivor', hubNs), true);
  });

  it('as a user with KUBECONFIG only (hub and member merged, HOME empty): generate then revoke with no hub flags', async () => {
    const env = { KUBECONFIG: `${hub.kubeconfig}:${m1.kubeconfig}` };
    const gen = await runFleet(
      [
        'creds',
        'generate',
        '-c',
        m1.context,
        '--service-account',
        `${nsSys}/env`,
        '--role',
        'view',
        '-n',
        nsApp,
        '--secret',
        `${hubNs}/env-m1`,
        '--format',
        'multicluster-runtime',
        '-o',
        'json',
      ],
      { env, timeoutMs: 120_000 },
    );
    outputs.push({ what: 'generate (KUBECONFIG)', res: gen });
    assert.equal(gen.code, 0, gen.stderr);
    assert.equal(gen.json().destination.hub, hub.context);
    const text = kubeconfigOf(await hubSecret('env-m1'));
    const res = await runFleet(['creds', 'revoke', `${hubNs}/env-m1`], { env, timeoutMs: 120_000 });
    outputs.push({ what: 'revoke (KUBECONFIG)', res });
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.match(res.stdout, new RegExp(`${hubNs}/env-m1\\s+revoked\\s+token\\s+5 deleted`));
    assert.match(res.stdout, /yes: the old credential is refused \(401\)/);
    assert.equal(res.stderr, '');
    assert.equal(await exists(hub, 'secret', 'env-m1', hubNs), false);
    assert.equal(await exists(m1, 'serviceaccount', 'env', nsSys), false);
    assert.equal(await whoIs(text), undefined);
  });

  it('no secret made here appears in any output', () => {
    assert.ok(secrets.size >= 8, `only ${secrets.size} secrets remembered`);
    for (const { what, res } of outputs) {
      for (const x of secrets)
        assert.ok(!res.stdout.includes(x) && !res.stderr.includes(x), `a secret in the output of fleet ${what}`);
    }
  });
});
