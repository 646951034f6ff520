// auth who-can and --as over kcp workspaces (a real kcp shard and front proxy, test/support/kcp.ts): the workspaces are
// clusters of the kcp provider; who-can reads each workspace's own RBAC and confirms with that workspace's
// authorizer, and says that kcp authorizes beyond RBAC; --as asks as the viewer through the admin's credential.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import type { WhoCanList } from '../../src/commands/auth/who-can.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { type Kcp, startKcp } from '../support/kcp.js';

let kcp: Kcp;
const A = 'root:org:team-a';
const B = 'root:org:team-b';

function noSecrets(...results: CliResult[]): void {
  for (const r of results)
    for (const t of kcp.tokens) assert.ok(!r.stdout.includes(t) && !r.stderr.includes(t), 'a kcp token was printed');
}

before(async () => {
  kcp = await startKcp({ frontProxy: true });
  await kcp.createWorkspace(A);
  await kcp.createWorkspace(B);
  // kcp's workspace authorizer wants verb "access" on "/" before RBAC inside the workspace applies.
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
    workspace: A,
    stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: grant }),
  });
  // The authorizer's informers catch up.
  for (let i = 0; i < 40; i++) {
    if ((await kcp.kubectlResult(['get', 'configmaps', '-n', 'default'], { as: 'viewer', workspace: A })).code === 0)
      break;
    await new Promise((r) => setTimeout(r, 250));
  }
});

after(async () => {
  await kcp?.stop();
});

const admin = () => ['--provider', 'kcp', '--kubeconfig', kcp.users.admin.kubeconfigs.proxy!, '-c', A, '-c', B];

describe('kcp: who-can and --as per workspace', () => {
  it('who-can lists the viewer in the workspace that grants it, confirmed there, and not in the other', async () => {
    const res = await runFleet(['auth', 'who-can', 'list', 'configmaps', '-n', 'default', ...admin(), '-o', 'json']);
    const out = res.json<WhoCanList>();
    assert.equal(res.code, 0, res.stderr);
    const [a, b] = out.items;
    assert.equal(a.cluster, A, res.stderr);
    assert.ok(a.ok && b.ok, res.stderr);
    const viewer = a.subjects!.find((s) => s.kind === 'User' && s.name === 'viewer');
    assert.ok(viewer, `viewer is listed in ${A}: ${JSON.stringify(a.subjects)}`);
    assert.equal(viewer.confirmed, true, 'the workspace authorizer agrees');
    assert.deepEqual(
      viewer.grants.map((g) => [g.binding.name, g.role.name]),
      [['fleet-viewer', 'fleet-viewer']],
    );
    assert.ok(!b.subjects!.some((s) => s.name === 'viewer'), `${B} does not grant the viewer`);
    assert.ok(
      a.notes.some((n) => n.code === 'kcp-authorizers'),
      'says kcp authorizes beyond RBAC',
    );
    // kcp binds the workspace's creator to cluster-admin, a ClusterRole of its bootstrap policy that the workspace
    // does not hold: said, and the answer marked incomplete, never "grants nothing".
    assert.ok(
      a.warnings.some((w) =>
        /^ClusterRoleBinding workspace-admin refers to ClusterRole "cluster-admin", which is not here: kcp may resolve it from its bootstrap policy/.test(
          w,
        ),
      ),
      a.warnings.join('\n'),
    );
    assert.equal(a.incomplete, true);
    // Every subject reported was confirmed (kcp's other authorizers can refuse an RBAC grant: it would be a warning).
    for (const item of out.items) for (const s of item.subjects!) assert.equal(typeof s.confirmed, 'boolean');
    noSecrets(res);
  });

  it('--as viewer through the admin (via the front proxy): yes in the granting workspace, refused in the other', async () => {
    const res = await runFleet([
      'auth',
      'can-i',
      'list',
      'configmaps',
      '-n',
      'default',
      '--as',
      'viewer',
      ...admin(),
      '-o',
      'json',
    ]);
    const out = res.json<AccessReviewList>();
    assert.deepEqual(out.as, { user: 'viewer', groups: [] });
    const [a, b] = out.items;
    assert.equal(a.cluster, A);
    assert.equal(a.allowed, true, res.stderr);
    // Without workspace access kcp refuses the viewer every request there, discovery included: a forbidden cluster
    // (exit 1), never the admin's own "yes".
    assert.equal(b.cluster, B);
    assert.equal(b.ok, false);
    assert.equal(b.error!.kind, 'forbidden');
    assert.match(b.error!.message, /User "viewer" cannot get path/);
    assert.equal(res.code, 1);
    const self = await runFleet(['auth', 'can-i', 'list', 'configmaps', '-n', 'default', ...admin(), '-o', 'json']);
    assert.deepEqual(
      self.json<AccessReviewList>().items.map((i) => i.allowed),
      [true, true],
      'the admin itself may, in both',
    );
    noSecrets(res);
  });
});
