// Self-tests of the kcp harness (test/support/kcp.ts): one real kcp shard and front proxy for the whole file. If these
// fail, every kcp provider test is suspect.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadControlPlane } from '../support/fixture.js';
import { startKcp, type Kcp, type KcpUserName, type KcpVia } from '../support/kcp.js';
import { readProcesses } from '../support/state.js';

const run = promisify(execFile);
const cp = loadControlPlane();

interface UserInfo {
  username: string;
  groups?: string[];
}

describe('kcp harness', () => {
  let kcp: Kcp;
  /** Everything kubectl printed in this file, checked for the users' tokens at the end. */
  const outputs: string[] = [];
  let notReadyCreatedAt = 0;

  const whoami = async (as: KcpUserName, via: KcpVia, workspace = 'root'): Promise<UserInfo> => {
    const r = await kcp.kubectlResult(['auth', 'whoami', '-o', 'json'], { as, via, workspace });
    outputs.push(r.stdout, r.stderr);
    assert.equal(r.code, 0, `whoami as ${as} via ${via}: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { status: { userInfo: UserInfo } }).status.userInfo;
  };

  before(async () => {
    kcp = await startKcp();
    // Made first so that by the time its test runs it has had the rest of the file to (wrongly) become Ready.
    await kcp.createNotReadyWorkspace('root:pending');
    notReadyCreatedAt = Date.now();
  });
  after(async () => {
    await kcp?.stop();
  });

  it('runs a shard and a front proxy recorded in the control plane processes.json, serving certificates of our CA', async () => {
    assert.ok(kcp.proxy, 'no front proxy');
    const book = readProcesses(cp.dir);
    const names = new Map(book?.processes.map((p) => [p.pid, p.name]));
    assert.equal(names.get(kcp.shard.pid), `${kcp.name}-kcp`);
    assert.equal(names.get(kcp.proxy.pid), `${kcp.name}-kcp-front-proxy`);
    // kubectl verifies TLS against the CA embedded in each kubeconfig: both servers present a certificate we signed.
    for (const via of ['shard', 'proxy'] as const) {
      const out = await kcp.kubectl(['version', '-o', 'json'], { via });
      outputs.push(out);
      assert.match(
        (JSON.parse(out) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion,
        /\+kcp-v0\.32\.3$/,
        via,
      );
    }
    const shards = JSON.parse(await kcp.kubectl(['get', 'shards.core.kcp.io', '-o', 'json'], { via: 'shard' })) as {
      items: { metadata: { name: string }; spec: { baseURL: string; externalURL: string } }[];
    };
    assert.deepEqual(
      shards.items.map((s) => [s.metadata.name, s.spec.baseURL, s.spec.externalURL]),
      [['root', kcp.shard.url, kcp.proxy.url]],
    );
  });

  it('creates a tree root:org, root:org:team-a, root:org:team-b that kubectl lists Ready, with URLs at the front proxy', async () => {
    const a = await kcp.createWorkspace('root:org:team-a');
    const b = await kcp.createWorkspace('root:org:team-b', { type: { name: 'team', path: 'root' } });
    assert.equal(a.phase, 'Ready');
    assert.equal(a.url, `${kcp.proxy!.url}/clusters/root:org:team-a`);
    assert.equal(b.url, `${kcp.proxy!.url}/clusters/root:org:team-b`);
    assert.notEqual(a.cluster, b.cluster);
    // Idempotent: a second call returns the same workspace.
    assert.deepEqual(await kcp.createWorkspace('root:org:team-a'), a);

    type WsList = {
      items: {
        metadata: { name: string };
        spec: { URL: string; type?: { name: string } };
        status: { phase: string };
      }[];
    };
    for (const via of ['shard', 'proxy'] as const) {
      const root = JSON.parse(await kcp.kubectl(['get', 'workspaces', '-o', 'json'], { via })) as WsList;
      const org = root.items.find((w) => w.metadata.name === 'org');
      assert.equal(org?.status.phase, 'Ready', via);
      assert.equal(org?.spec.type?.name, 'organization', via);
      const teams = JSON.parse(
        await kcp.kubectl(['get', 'workspaces', '-o', 'json'], { via, workspace: 'root:org' }),
      ) as WsList;
      assert.deepEqual(
        teams.items.map((w) => [w.metadata.name, w.spec.type?.name, w.status.phase, w.spec.URL]).sort(),
        [
          ['team-a', 'universal', 'Ready', a.url],
          ['team-b', 'team', 'Ready', b.url],
        ],
        via,
      );
    }
    // The workspace answers at its own path, through the proxy, as itself.
    const ns = await kcp.kubectl(['get', 'namespace', 'default', '-o', 'name'], { workspace: 'root:org:team-a' });
    assert.equal(ns.trim(), 'namespace/default');
  });

  it('admin (system:kcp:admin) keeps its group through the proxy', async () => {
    for (const via of ['shard', 'proxy'] as const) {
      const me = await whoami('admin', via, 'root:org:team-a');
      assert.equal(me.username, 'admin');
      assert.ok(me.groups?.includes('system:kcp:admin'), `${via}: ${String(me.groups)}`);
    }
  });

  for (const user of ['masters', 'masters-cert'] as const) {
    it(`${user} is in system:masters on the shard, and the front proxy drops that group`, async () => {
      const direct = await whoami(user, 'shard');
      assert.equal(direct.username, user);
      assert.deepEqual(direct.groups?.slice().sort(), ['system:authenticated', 'system:masters']);
      const proxied = await whoami(user, 'proxy');
      assert.equal(proxied.username, user);
      assert.deepEqual(proxied.groups, ['system:authenticated']);
      // And it shows: system:masters may read anything on the shard, and is refused in team-a through the proxy.
      const args = ['get', 'namespaces', '-o', 'name'];
      const onShard = await kcp.kubectlResult(args, { as: user, via: 'shard', workspace: 'root:org:team-a' });
      const viaProxy = await kcp.kubectlResult(args, { as: user, via: 'proxy', workspace: 'root:org:team-a' });
      outputs.push(onShard.stdout, onShard.stderr, viaProxy.stdout, viaProxy.stderr);
      assert.equal(onShard.code, 0, onShard.stderr);
      assert.match(onShard.stdout, /namespace\/default/);
      assert.notEqual(viaProxy.code, 0, viaProxy.stdout);
      assert.match(viaProxy.stderr, /forbidden/i);
    });
  }

  it('viewer has no access until a workspace grants it, and then only there', async () => {
    const list = (workspace: string) =>
      kcp.kubectlResult(['get', 'configmaps', '-n', 'default', '-o', 'name'], { as: 'viewer', workspace });
    const before = await list('root:org:team-a');
    outputs.push(before.stdout, before.stderr);
    assert.notEqual(before.code, 0);
    assert.match(before.stderr, /forbidden/i);
    // kcp's workspace authorizer wants verb "access" on "/" before any RBAC inside the workspace applies.
    const grant = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'fleet-viewer' },
        rules: [
          { nonResourceURLs: ['/'], verbs: ['access'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'fleet-viewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'fleet-viewer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
      },
    ];
    await kcp.kubectl(['apply', '-f', '-'], {
      workspace: 'root:org:team-a',
      stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: grant }),
    });
    let granted = await list('root:org:team-a');
    for (let i = 0; i < 40 && granted.code !== 0; i++) {
      await new Promise((r) => setTimeout(r, 250)); // the authorizer's informers catch up
      granted = await list('root:org:team-a');
    }
    outputs.push(granted.stdout, granted.stderr);
    assert.equal(granted.code, 0, granted.stderr);
    assert.match(granted.stdout, /configmap\/kube-root-ca\.crt/);
    const elsewhere = await list('root:org:team-b');
    outputs.push(elsewhere.stdout, elsewhere.stderr);
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, /forbidden/i);
  });

  it('a workspace whose type has an initializer nobody removes stays Initializing', async () => {
    // Give it at least 10 s since it was created (most of it already spent by the tests above).
    const waited = Date.now() - notReadyCreatedAt;
    if (waited < 10_000) await new Promise((r) => setTimeout(r, 10_000 - waited));
    const ws = await kcp.getWorkspace('root:pending');
    assert.equal(ws.phase, 'Initializing');
    assert.equal(ws.url, `${kcp.proxy!.url}/clusters/root:pending`);
    const listed = JSON.parse(await kcp.kubectl(['get', 'workspaces', '-o', 'json'])) as {
      items: { metadata: { name: string }; status: { phase: string } }[];
    };
    assert.equal(listed.items.find((w) => w.metadata.name === 'pending')?.status.phase, 'Initializing');
    // kcp still serves its content to the admin (system:kcp:admin) while it initializes.
    const inside = await kcp.kubectl(['get', 'namespaces', '-o', 'name'], { workspace: 'root:pending' });
    outputs.push(inside);
  });

  it('no output carries a token of the kcp users', () => {
    // Ours (admin, masters, viewer) start with a letter; the admin battery's two are kcp's own.
    for (const u of ['admin', 'masters', 'viewer'] as const) {
      assert.match(kcp.users[u].token ?? '', /^[a-z][0-9a-f]{48}$/);
      assert.ok(kcp.tokens.includes(kcp.users[u].token!));
    }
    assert.equal(kcp.tokens.length, 5);
    for (const token of kcp.tokens) {
      for (const out of outputs) assert.ok(!out.includes(token), 'a token appeared in kubectl output');
    }
  });

  it('stop() ends the shard and the proxy and removes them from processes.json', async () => {
    const pids = [kcp.shard.pid, kcp.proxy!.pid];
    await kcp.stop();
    // Every argv of ours names the kcp directory (--root-directory, --mapping-file...).
    const left = await run('pgrep', ['-f', '--', kcp.dir]).then(
      (r) => r.stdout.trim(),
      (e: { code?: number; stdout?: string }) => {
        if (e.code === 1) return '';
        throw e;
      },
    );
    assert.equal(left, '', `kcp processes left: ${left}`);
    const listed =
      readProcesses(cp.dir)?.processes.filter((p) => pids.includes(p.pid) || p.name.startsWith(`${kcp.name}-`)) ?? [];
    assert.deepEqual(listed, []);
    await kcp.stop(); // idempotent
  });
});
