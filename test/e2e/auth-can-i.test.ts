// fleet auth can-i against the real control plane: answers that match the authorizer for users of different power,
// resource names resolved through discovery, a matrix over several clusters, and -q answering by exit code.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import { runFleet, type CliResult } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  kubectlResult,
  loadControlPlane,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const member = cp.members[0];

// carol (group ops) may work with pods and deployments in one namespace of the hub, and nowhere else; she may also
// "get nodes" through a RoleBinding, which cannot grant a cluster-scoped resource.
const ns = uniqueName('can-i');
const elsewhere = uniqueName('can-i-other');
let carolHub: string;
let carolMember: string;
let carolInNs: string;

before(async () => {
  await applyYaml(
    cp.hub,
    `apiVersion: v1
kind: Namespace
metadata: {name: ${elsewhere}}
`,
  );
  await grant(cp.hub, {
    name: 'deployer',
    namespace: ns,
    createNamespace: true,
    subject: { kind: 'User', name: 'carol' },
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] },
    ],
  });
  carolHub = tokenUser(cp.hub, 'carol').kubeconfigPath;
  carolMember = tokenUser(member, 'carol').kubeconfigPath;
  carolInNs = kubeconfigFor(
    cp.hub,
    { token: cp.hub.tokenUsers.find((u) => u.name === 'carol')!.token },
    { name: uniqueName('carol-ns'), namespace: ns },
  );
});

const canI = (kubeconfig: string, args: string[]) =>
  runFleet(['auth', 'can-i', ...args, '--kubeconfig', kubeconfig, '-o', 'json']);

function answers(res: CliResult): Array<boolean | string> {
  const out = res.json<AccessReviewList>();
  assert.equal(out.kind, 'AccessReviewList');
  return out.items.map((i) => (i.ok ? i.allowed! : i.error!.kind));
}

describe('fleet auth can-i (live)', () => {
  it('a namespaced Role: yes in its namespace, no elsewhere, exit 0 / 1', async () => {
    const cases: Array<[string[], boolean]> = [
      [['list', 'pods', '-n', ns], true],
      [['list', 'pods', '-n', elsewhere], false],
      [['list', 'pods', '--all-namespaces'], false],
      [['delete', 'pods', '-n', ns], false],
      [['get', 'pods', '--subresource', 'log', '-n', ns], true],
      [['create', 'pods', '--subresource', 'exec', '-n', ns], false],
      [['get', 'configmaps', 'app-config', '-n', ns], true],
      [['get', 'configmaps/other-config', '-n', ns], false],
      [['get', 'secrets', '-n', ns], false],
    ];
    for (const [args, allowed] of cases) {
      const res = await canI(carolHub, args);
      assert.deepEqual(answers(res), [allowed], args.join(' '));
      assert.equal(res.code, allowed ? 0 : 1, args.join(' '));
    }
  });

  it('resolves short names, singulars, kinds and resource.group through discovery', async () => {
    for (const typed of ['deployments', 'deploy', 'deployment', 'Deployment', 'deployments.apps']) {
      const res = await canI(carolHub, ['create', typed, '-n', ns]);
      assert.equal(res.code, 0, `${typed}: ${res.stderr}`);
      assert.deepEqual(res.json().items[0].attributes, {
        resourceAttributes: { namespace: ns, verb: 'create', group: 'apps', resource: 'deployments' },
      });
    }
    // The namespace comes from the context when -n is not given.
    assert.equal((await canI(carolInNs, ['create', 'deploy'])).code, 0);
  });

  it('a cluster-scoped resource is asked about cluster-wide, so a RoleBinding does not count (as the API server decides)', async () => {
    const res = await canI(carolHub, ['list', 'nodes', '-n', ns]);
    assert.deepEqual(answers(res), [false]);
    assert.equal(res.json().items[0].attributes.resourceAttributes.namespace, '');
    const real = await kubectlResult(cp.hub, ['get', 'nodes'], { kubeconfig: carolHub });
    assert.notEqual(real.code, 0);
    assert.match(real.stderr, /forbidden/);
  });

  it('an unknown resource is asked as typed, with a warning', async () => {
    const res = await runFleet(['auth', 'can-i', 'get', 'gizmos', '-n', ns, '--kubeconfig', carolHub]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^warning: .*: the server has no resource type "gizmos"$/m);
  });

  it('non-resource URLs', async () => {
    assert.deepEqual(answers(await canI(carolHub, ['get', '/healthz'])), [true]);
    const res = await canI(carolHub, ['get', '/metrics']);
    assert.deepEqual(answers(res), [false]);
    assert.deepEqual(res.json().items[0].attributes, { nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it("a ClusterRole through a client certificate's group, and a ServiceAccount token", async () => {
    const user = uniqueName('secret-reader');
    const group = uniqueName('readers');
    await grant(cp.hub, {
      name: user,
      subject: { kind: 'Group', name: group },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }],
    });
    const cert = await createCertUser(cp.hub, { user, groups: [group] });
    assert.deepEqual(answers(await canI(cert.kubeconfigPath, ['list', 'secrets', '--all-namespaces'])), [true]);
    assert.deepEqual(answers(await canI(cert.kubeconfigPath, ['delete', 'secrets', '-n', ns])), [false]);

    const saNs = uniqueName('can-i-sa');
    const token = await createServiceAccountToken(cp.hub, saNs, 'ci');
    await grant(cp.hub, {
      name: 'ci-view',
      namespace: saNs,
      clusterRole: 'view',
      subject: { kind: 'ServiceAccount', name: 'ci', namespace: saNs },
    });
    const sa = kubeconfigFor(cp.hub, { token }, { namespace: saNs });
    assert.deepEqual(answers(await canI(sa, ['list', 'deployments.apps'])), [true]);
    assert.deepEqual(answers(await canI(sa, ['get', 'secrets'])), [false], 'view does not read secrets');
    const res = await runFleet(['auth', 'can-i', 'list', 'deploy', '--kubeconfig', sa, '-o', 'yaml']);
    assert.ok(!res.stdout.includes(token) && !res.stderr.includes(token));
  });

  it('across clusters: a matrix with one row per cluster, the failures classified, exit 1 if any is not yes', async () => {
    const admin = cp.hub.kubeconfig;
    const rejected = kubeconfigFor(
      member,
      { token: 'not-a-token-this-server-knows' },
      { name: uniqueName('rejected') },
    );
    const fleet = [carolHub, carolMember, admin, rejected].join(':');
    const res = await runFleet([
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      ns,
      '--all',
      '--kubeconfig',
      fleet,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1);
    assert.deepEqual(answers(res), [true, false, true, 'unauthorized']);
    const out = res.json();
    assert.deepEqual(out.query, { verb: 'list', resource: 'pods' });
    assert.equal(out.namespace, ns);
    assert.equal(
      out.items[0].reason,
      `RBAC: allowed by RoleBinding "deployer/${ns}" of Role "deployer" to User "carol"`,
    );

    const table = await runFleet(['auth', 'can-i', 'list', 'pods', '-n', ns, '--all', '--kubeconfig', fleet]);
    assert.equal(table.code, 1);
    const rows = table.stdout.trim().split('\n');
    assert.match(rows[0], /^CLUSTER\s+ALLOWED\s+REASON\s+ERROR$/);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s+/)[1]),
      ['yes', 'no', 'yes', 'error'],
    );

    const names = await runFleet([
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      ns,
      '--all',
      '--kubeconfig',
      fleet,
      '-o',
      'name',
    ]);
    assert.deepEqual(names.stdout.trim().split('\n'), [
      `${carolHub}+carol@hub`,
      `${cp.hub.kubeconfig}+${cp.hub.context}`,
    ]);
  });

  it('-q answers by exit code only', async () => {
    const yes = await runFleet([
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      ns,
      '-q',
      '--all',
      '--kubeconfig',
      [carolHub, cp.hub.kubeconfig].join(':'),
    ]);
    assert.deepEqual([yes.code, yes.stdout, yes.stderr], [0, '', '']);
    const no = await runFleet([
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      ns,
      '-q',
      '--all',
      '--kubeconfig',
      [carolHub, carolMember].join(':'),
    ]);
    assert.deepEqual([no.code, no.stdout, no.stderr], [1, '', '']);
    const usage = await runFleet(['auth', 'can-i', 'list', 'pods', '-q', '-o', 'json', '--kubeconfig', carolHub]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^error: -q\/--quiet prints nothing, so it cannot be combined with -o or --json$/m);
  });

  it('usage errors exit 2 with one line', async () => {
    for (const args of [['get'], ['get', '/healthz', 'name'], ['get', 'pods', '-n', 'a', '--all-namespaces']]) {
      const res = await runFleet(['auth', 'can-i', ...args, '--kubeconfig', carolHub]);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    }
  });
});
