// kcp workspaces as clusters, against a real kcp (shard + front proxy, test/support/kcp.ts): the kcp provider lists the
// workspace tree with its paths as names, every command works in each workspace, a workspace still initializing is
// listed not ready, an unreachable kcp fails the provider, and `auth whoami` explains the groups the front proxy drops.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import type { RulesDiff } from '../../src/commands/auth/diff.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { loadControlPlane, scratchDir } from '../support/fixture.js';
import { type Kcp, type Workspace, startKcp } from '../support/kcp.js';
import { writeKubeconfig } from '../support/kubeconfig.js';
import { closedPort } from '../support/net.js';
import { makeLeaf } from '../support/pki.js';

let kcp: Kcp;
let dir: string;
const workspaces = new Map<string, Workspace>();
/** A client certificate in system:kcp:admin and system:masters: an admin either way, but only the shard sees masters. */
let adminMastersCert: { certFile: string; keyFile: string };
const TREE = ['root:org', 'root:org:team-a', 'root:org:team-a:deep', 'root:org:team-b', 'root:staging'];
const PENDING = 'root:staging:pending';

function fleetConfig(name: string, provider: Record<string, unknown>): string {
  const file = join(dir, `${name}.fleet.yaml`);
  writeFileSync(file, JSON.stringify({ kind: 'FleetConfig', providers: [{ name: 'kcp', type: 'kcp', ...provider }] }));
  return file;
}

function certKubeconfig(via: 'shard' | 'proxy'): string {
  return writeKubeconfig({
    path: join(dir, `admin-masters-cert-${via}.kubeconfig`),
    server: `${kcp.url(via)}/clusters/root`,
    caFile: kcp.caFile,
    user: adminMastersCert,
    context: `cert-${via}`,
  });
}

/** Every output a test makes is checked for the credentials the harness minted. */
function noSecrets(...results: CliResult[]): void {
  for (const r of results)
    for (const t of kcp.tokens) assert.ok(!r.stdout.includes(t) && !r.stderr.includes(t), 'a kcp token was printed');
}

before(async () => {
  kcp = await startKcp({ frontProxy: true });
  dir = join(scratchDir(), 'kcp-e2e');
  mkdirSync(dir, { recursive: true });
  for (const path of TREE) workspaces.set(path, await kcp.createWorkspace(path));
  workspaces.set(PENDING, await kcp.createNotReadyWorkspace(PENDING));
  adminMastersCert = await makeLeaf({
    ca: kcp.clientCa,
    dir,
    base: 'admin-masters',
    cn: 'cert-admin',
    orgs: ['system:kcp:admin', 'system:masters'],
    usage: 'client',
  });
});

after(async () => {
  await kcp?.stop();
});

describe('kcp provider: the workspace tree', () => {
  it('lists the tree from root through the front proxy: paths as names, spec.URL as server, the not-ready one with its phase', async () => {
    const r = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const list = r.json<ClusterList>();
    assert.deepEqual(
      list.items.map((i) => i.name),
      ['root', 'root:org', 'root:org:team-a', 'root:org:team-a:deep', 'root:org:team-b', 'root:staging', PENDING],
    );
    for (const item of list.items) {
      assert.equal(item.provider, 'kcp');
      assert.equal(item.server, `${kcp.url('proxy')}/clusters/${item.name}`);
      assert.equal(item.source.kind, 'kcp-workspace');
      assert.equal(
        (item.source as { frontProxy?: boolean }).frontProxy,
        true,
        `${item.name}: the Shards say the URL is the proxy`,
      );
      const ws = workspaces.get(item.name);
      if (ws) assert.equal(item.clusterId, ws.cluster, `${item.name}: the logical cluster is the id`);
    }
    const pending = list.items.find((i) => i.name === PENDING)!;
    assert.equal(pending.ready, false);
    assert.match(pending.reason ?? '', /^workspace phase is Initializing \(.*[Ii]nitializers.*fleet-never-ready/);
    assert.ok(
      list.items.filter((i) => i.name !== PENDING).every((i) => i.ready),
      'every other workspace is Ready',
    );

    const strict = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
      '--strict',
    ]);
    assert.equal(strict.code, 1, 'a workspace that is not ready fails --strict');
    assert.match(strict.stdout, new RegExp(`${PENDING}\\s.*False`));
    noSecrets(r, strict);
  });

  it('starts at the context workspace or the configured root, down to the configured depth', async () => {
    const fromContext = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.kubeconfig({ workspace: 'root:org', path: join(dir, 'admin-org.kubeconfig') }),
      '-o',
      'name',
    ]);
    assert.equal(fromContext.code, 0, fromContext.stderr);
    assert.deepEqual(fromContext.stdout.trim().split('\n'), [
      'root:org',
      'root:org:team-a',
      'root:org:team-a:deep',
      'root:org:team-b',
    ]);

    const cfg = fleetConfig('depth', {
      hub: { kubeconfig: kcp.users.admin.kubeconfigs.proxy },
      root: 'root',
      depth: 1,
    });
    const shallow = await runFleet(['clusters', 'list', '--fleet-config', cfg, '-o', 'name']);
    assert.equal(shallow.code, 0, shallow.stderr);
    assert.deepEqual(shallow.stdout.trim().split('\n'), ['root', 'root:org', 'root:staging']);
    noSecrets(fromContext, shallow);
  });

  it('every command answers in each workspace: whoami, can-i, rules, verify', async () => {
    const cfg = fleetConfig('org', { hub: { kubeconfig: kcp.users.admin.kubeconfigs.proxy }, root: 'root:org' });
    const names = ['root:org', 'root:org:team-a', 'root:org:team-a:deep', 'root:org:team-b'];

    const who = await runFleet(['auth', 'whoami', '--all', '--fleet-config', cfg, '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    const list = who.json<WhoAmIList>();
    assert.deepEqual(
      list.items.map((i) => i.cluster),
      names,
    );
    for (const item of list.items) {
      assert.equal(item.ok, true, `${item.cluster}: ${JSON.stringify(item.error)}`);
      assert.equal(item.user?.username, 'admin');
      assert.ok(item.user?.groups.includes('system:kcp:admin'), `${item.cluster}: ${String(item.user?.groups)}`);
    }

    const canI = await runFleet([
      'auth',
      'can-i',
      '--all',
      '--fleet-config',
      cfg,
      'create',
      'configmaps',
      '-o',
      'json',
    ]);
    assert.equal(canI.code, 0, canI.stderr);
    const answers = canI.json<{ items: Array<{ cluster: string; allowed?: boolean }> }>().items;
    assert.deepEqual(
      answers.map((a) => [a.cluster, a.allowed]),
      names.map((n) => [n, true]),
    );

    const rules = await runFleet([
      'auth',
      'rules',
      '--cluster',
      'root:org:team-a',
      '--fleet-config',
      cfg,
      '-o',
      'json',
    ]);
    assert.equal(rules.code, 0, rules.stderr);
    assert.match(rules.stdout, /"root:org:team-a"/);
    assert.match(rules.stdout, /"\*"/, 'the admin holds * in the workspace');

    const verify = await runFleet(['clusters', 'verify', '--all', '--fleet-config', cfg, '-o', 'json']);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const verified = verify.json<{
      items: Array<{ cluster: string; checks: Array<{ name: string; status: string }> }>;
    }>().items;
    assert.deepEqual(
      verified.map((v) => v.cluster),
      names,
    );
    for (const v of verified) {
      for (const name of ['reachable', 'tls-verified', 'authenticated']) {
        assert.equal(v.checks.find((c) => c.name === name)?.status, 'pass', `${v.cluster} ${name}`);
      }
    }
    noSecrets(who, canI, rules, verify);
  });

  it('auth diff: the admin is granted the same in every workspace; a user granted differently in two workspaces differs exactly', async () => {
    const cfg = fleetConfig('diff', { hub: { kubeconfig: kcp.users.admin.kubeconfigs.proxy }, root: 'root:org' });
    const same = await runFleet(['auth', 'diff', '--all', '--fleet-config', cfg, '--fail-on-drift', '-o', 'json']);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    const out = same.json<RulesDiff>();
    assert.deepEqual([out.drift, out.complete], [false, true]);
    assert.deepEqual(
      out.items.map((i) => i.cluster),
      ['root:org', 'root:org:team-a', 'root:org:team-a:deep', 'root:org:team-b'],
    );
    for (const item of out.items)
      assert.ok(
        item.rules?.some((r) => r.scope === 'cluster' && r.resource === '*' && r.verbs.join() === '*'),
        `${item.cluster}: the admin holds * cluster-wide`,
      );

    // viewer: kcp's "access" on "/" in both workspaces (needed before any RBAC inside applies), ConfigMaps cluster-wide
    // in team-a; in team-b the same ConfigMaps written as two rules, and one Secret by name in "default" only.
    const rbac = (items: object[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
    const role = (kind: string, name: string, rules: object[], namespace?: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}) },
      rules,
    });
    const binding = (kind: string, roleKind: string, name: string, namespace?: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
    });
    await kcp.kubectl(['apply', '-f', '-'], {
      workspace: 'root:org:team-a',
      stdin: rbac([
        role('ClusterRole', 'fleet-diff', [
          { nonResourceURLs: ['/'], verbs: ['access'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
        ]),
        binding('ClusterRoleBinding', 'ClusterRole', 'fleet-diff'),
      ]),
    });
    await kcp.kubectl(['apply', '-f', '-'], {
      workspace: 'root:org:team-b',
      stdin: rbac([
        role('ClusterRole', 'fleet-diff', [
          { nonResourceURLs: ['/'], verbs: ['access'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        ]),
        binding('ClusterRoleBinding', 'ClusterRole', 'fleet-diff'),
        role(
          'Role',
          'fleet-diff-secret',
          [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] }],
          'default',
        ),
        binding('RoleBinding', 'Role', 'fleet-diff-secret', 'default'),
      ]),
    });
    const files = ['root:org:team-a', 'root:org:team-b'].map((workspace) =>
      kcp.kubeconfig({
        as: 'viewer',
        workspace,
        path: join(dir, `viewer-${workspace.replaceAll(':', '-')}.kubeconfig`),
        context: `viewer-${workspace.split(':').pop()}`,
      }),
    );
    const args = ['auth', 'diff', '--all', '--kubeconfig', files.join(':'), '-n', 'default', '-o', 'json'];
    let res = await runFleet(args);
    // kcp's authorizers follow RBAC through informers: wait until the grants are seen in both workspaces.
    for (
      let i = 0;
      i < 40 &&
      !(
        res.code === 0 && res.json<RulesDiff>().items.every((it) => it.rules?.some((r) => r.resource === 'configmaps'))
      );
      i++
    ) {
      await new Promise((r) => setTimeout(r, 250));
      res = await runFleet(args);
    }
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const viewer = res.json<RulesDiff>();
    const [a, b] = viewer.items;
    assert.equal(viewer.drift, true);
    const secret = { scope: 'namespace', apiGroup: '', resource: 'secrets', resourceNames: ['s1'], verbs: ['get'] };
    assert.deepEqual(
      [a.extra, a.missing],
      [
        { rules: [], nonResourceRules: [] },
        { rules: [secret], nonResourceRules: [] },
      ],
    );
    assert.deepEqual(
      [b.extra, b.missing],
      [
        { rules: [secret], nonResourceRules: [] },
        { rules: [], nonResourceRules: [] },
      ],
    );
    assert.ok(
      a.rules?.some((r) => r.scope === 'cluster' && r.resource === 'configmaps' && r.verbs.join() === 'get,list'),
      JSON.stringify(a.rules),
    );
    const strict = await runFleet([...args.slice(0, -2), '--fail-on-drift']);
    assert.equal(strict.code, 1, strict.stderr);
    noSecrets(same, res, strict);
  });

  it('a workspace still initializing is listed not ready and still contacted (kcp serves it to an admin), never skipped', async () => {
    const r = await runFleet([
      'auth',
      'whoami',
      '--all',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const items = r.json<WhoAmIList>().items;
    assert.equal(items.length, 7);
    const pending = items.find((i) => i.cluster === PENDING)!;
    assert.equal(pending.ok, true, JSON.stringify(pending.error));
    assert.equal(pending.user?.username, 'admin');
    const strict = await runFleet([
      'auth',
      'whoami',
      '--all',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.admin.kubeconfigs.proxy!,
      '-l',
      'tenancy.kcp.io/phase=Initializing',
      '-o',
      'name',
    ]);
    assert.equal(strict.code, 0, strict.stderr);
    assert.equal(strict.stdout.trim(), 'admin', 'the Workspace labels select: only the initializing one');
    noSecrets(r, strict);
  });

  it('an unreachable kcp fails the provider with one line, exit 1', async () => {
    const port = await closedPort();
    const kubeconfig = writeKubeconfig({
      path: join(dir, 'unreachable.kubeconfig'),
      server: `https://127.0.0.1:${port}/clusters/root`,
      caFile: kcp.caFile,
      user: { token: kcp.users.admin.token! },
      context: 'gone',
    });
    const list = await runFleet(['clusters', 'list', '--provider', 'kcp', '--kubeconfig', kubeconfig]);
    assert.equal(list.code, 1, list.stdout + list.stderr);
    assert.match(list.stderr, /^error: kcp provider "kcp": https:\/\/127\.0\.0\.1:\d+: connection refused$/m);
    const who = await runFleet(['auth', 'whoami', '--all', '--provider', 'kcp', '--kubeconfig', kubeconfig]);
    assert.notEqual(who.code, 0);
    assert.equal(
      who.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('error:')).length,
      1,
      who.stderr,
    );
    noSecrets(list, who);
  });

  it('a server that is not kcp, or a root that does not exist, is one line naming the server and the path', async () => {
    const plain = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      loadControlPlane().hub.kubeconfig,
    ]);
    assert.equal(plain.code, 1);
    assert.match(
      plain.stderr,
      /^error: kcp provider "kcp": https:\/\/127\.0\.0\.1:\d+ serves no workspace "root" \(.*\): is it a kcp server, and is the root path right\?\n$/,
    );
    const cfg = fleetConfig('nope', { hub: { kubeconfig: kcp.users.admin.kubeconfigs.proxy }, root: 'root:nope' });
    const missing = await runFleet(['clusters', 'list', '--fleet-config', cfg]);
    assert.equal(missing.code, 1, missing.stdout);
    assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
    assert.match(missing.stderr, /^error: kcp provider "kcp": .*root:nope/);
    noSecrets(plain, missing);
  });
});

describe('kcp: who you are through the front proxy', () => {
  it('through the proxy: system:masters is gone from the answer, and whoami says why', async () => {
    const r = await runFleet([
      'auth',
      'whoami',
      '--all',
      '--provider',
      'kcp',
      '--kubeconfig',
      certKubeconfig('proxy'),
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const items = r.json<WhoAmIList>().items;
    assert.equal(items.length, 7);
    for (const item of items) {
      assert.equal(item.user?.username, 'cert-admin');
      assert.ok(!item.user?.groups.includes('system:masters'), `${item.cluster}: the proxy dropped system:masters`);
      assert.deepEqual(
        item.notes.map((n) => n.code),
        ['kcp-front-proxy', 'groups-dropped'],
        item.cluster,
      );
      assert.match(
        item.notes[1].message,
        /names the group system:masters, but the server answered without it: the kcp front proxy dropped it/,
      );
      assert.ok(!item.warnings.some((w) => w.code === 'system-masters'));
    }

    const table = await runFleet([
      'auth',
      'whoami',
      '--cluster',
      'root:org',
      '--provider',
      'kcp',
      '--kubeconfig',
      certKubeconfig('proxy'),
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /NOTE/);
    assert.match(table.stdout, /kcp-front-proxy,groups-dropped/);
    assert.match(
      table.stderr,
      /^note: root:org: reached through the kcp front proxy, which drops the groups system:masters, system:kcp:logical-cluster-admin, system:kcp:initializer:\*, system:kcp:terminator:\*/m,
    );
    noSecrets(r, table);
  });

  it('on the shard itself: system:masters is there, no note', async () => {
    const cfg = fleetConfig('shard', {
      hub: { kubeconfig: certKubeconfig('shard') },
      root: 'root:org',
      server: 'context',
    });
    const r = await runFleet(['auth', 'whoami', '--all', '--fleet-config', cfg, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const items = r.json<WhoAmIList>().items;
    assert.equal(items.length, 4);
    for (const item of items) {
      assert.ok(item.user?.groups.includes('system:masters'), `${item.cluster}: ${String(item.user?.groups)}`);
      assert.deepEqual(item.notes, [], item.cluster);
      assert.ok(item.warnings.some((w) => w.code === 'system-masters'));
    }
    const list = await runFleet(['clusters', 'list', '--fleet-config', cfg, '-o', 'json']);
    for (const item of list.json<ClusterList>().items) {
      assert.equal(item.server, `${kcp.url('shard')}/clusters/${item.name}`, 'server: context keeps the shard URL');
      assert.equal((item.source as { frontProxy?: boolean }).frontProxy, false);
    }
    noSecrets(r, list);
  });

  it('a credential whose power is only system:masters sees the whole tree on the shard and one level through the proxy, with a warning', async () => {
    const direct = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.masters.kubeconfigs.shard,
      '-o',
      'name',
    ]);
    assert.equal(direct.code, 0, direct.stderr);
    assert.deepEqual(direct.stdout.trim().split('\n'), [
      'root',
      'root:org',
      'root:org:team-a',
      'root:org:team-a:deep',
      'root:org:team-b',
      'root:staging',
      PENDING,
    ]);
    assert.equal(direct.stderr, '');
    // kcp lets any authenticated user list the Workspaces of root; inside them, the proxied identity may read nothing.
    const proxied = await runFleet([
      'clusters',
      'list',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users.masters.kubeconfigs.proxy!,
      '-o',
      'name',
    ]);
    assert.equal(proxied.code, 0, proxied.stderr);
    assert.deepEqual(proxied.stdout.trim().split('\n'), ['root', 'root:org', 'root:staging']);
    assert.equal(
      proxied.stderr,
      'warning: kcp provider "kcp": the credential may not list the workspaces inside root:org, root:staging (403): the tree below them is not shown\n',
    );
    // Its certificate twin may not read the Shards either; the group missing from the answer shows the proxy anyway.
    const who = await runFleet([
      'auth',
      'whoami',
      '--cluster',
      'root',
      '--provider',
      'kcp',
      '--kubeconfig',
      kcp.users['masters-cert'].kubeconfigs.proxy!,
      '-o',
      'json',
    ]);
    assert.equal(who.code, 0, who.stderr);
    const [me] = who.json<WhoAmIList>().items;
    assert.deepEqual(me.user?.groups, ['system:authenticated']);
    assert.deepEqual(
      me.notes.map((n) => n.code),
      ['kcp-front-proxy', 'groups-dropped'],
    );
    assert.match(me.notes[0].message, /^reached through the kcp front proxy/);
    noSecrets(direct, proxied, who);
  });
});
