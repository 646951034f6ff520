// fleet auth rules against the real control plane: the rules each identity holds and the risks named in them.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';

import type { RulesReview } from '../../src/access/rules.js';
import type { RulesItem, RulesReviewList } from '../../src/commands/auth/rules.js';
import { runFleet, type CliResult } from '../support/cli.js';
import {
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  loadControlPlane,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const member = cp.members[0];

function items(res: CliResult): RulesItem[] {
  const out = res.json<RulesReviewList>();
  assert.equal(out.kind, 'RulesReviewList');
  return out.items;
}
/** The items of a run where every cluster answered: each has the whole review. */
function answered(res: CliResult): Array<RulesItem & RulesReview> {
  const all = items(res);
  assert.ok(
    all.every((i) => i.ok),
    JSON.stringify(all.filter((i) => !i.ok)),
  );
  return all as Array<RulesItem & RulesReview>;
}
const codes = (item: RulesReview): string[] => [...new Set<string>(item.risks.map((r) => r.code))].sort();

describe('fleet auth rules (live)', () => {
  it('flags the admin as cluster-admin; --fail-on-risk turns that into exit 1', async () => {
    const res = await runFleet(['auth', 'rules', '--kubeconfig', cp.hub.kubeconfig, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = answered(res);
    assert.equal(item.ok, true);
    assert.equal(item.namespace, 'default');
    assert.equal(item.incomplete, false);
    const admin = item.resourceRules.findIndex((r) => r.verbs.includes('*') && r.resources.includes('*'));
    assert.deepEqual(item.resourceRules[admin], {
      verbs: ['*'],
      apiGroups: ['*'],
      resources: ['*'],
      resourceNames: [],
    });
    assert.deepEqual(
      item.risks.find((r) => r.code === 'cluster-admin'),
      {
        code: 'cluster-admin',
        severity: 'critical',
        message: 'every verb on every resource in every API group',
        rule: admin,
        scope: 'cluster',
      },
    );
    assert.deepEqual(
      item.nonResourceRules.find((r) => r.nonResourceURLs.includes('*')),
      { verbs: ['*'], nonResourceURLs: ['*'] },
    );

    const table = await runFleet(['auth', 'rules', '--kubeconfig', cp.hub.kubeconfig]);
    assert.match(table.stdout, /^CLUSTER\s+RESOURCES\s+NON-RESOURCE URLS\s+RESOURCE NAMES\s+VERBS\s+RISK$/m);
    assert.match(table.stdout, /\s\*\.\*\s+\[\]\s+\[\]\s+\[\*\]\s+cluster-admin$/m);
    assert.match(
      table.stderr,
      new RegExp(
        `^risk: ${cp.hub.kubeconfig.replace(/[.+]/g, '\\$&')}\\+hub \\(namespace default\\): cluster-admin$`,
        'm',
      ),
    );
    const strict = await runFleet(['auth', 'rules', '--kubeconfig', cp.hub.kubeconfig, '--fail-on-risk', '-o', 'json']);
    assert.equal(strict.code, 1);
  });

  it("a namespaced user: its Role's rules in that namespace, basic rules elsewhere, no risk", async () => {
    const ns = uniqueName('rules-bob');
    await grant(cp.hub, {
      name: 'app-dev',
      namespace: ns,
      createNamespace: true,
      subject: { kind: 'User', name: 'bob' },
      rules: [
        { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'create', 'update'] },
      ],
    });
    const bob = tokenUser(cp.hub, 'bob');
    const res = await runFleet([
      'auth',
      'rules',
      '-n',
      ns,
      '--kubeconfig',
      bob.kubeconfigPath,
      '--fail-on-risk',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const [item] = answered(res);
    assert.equal(item.namespace, ns);
    assert.deepEqual(item.risks, []);
    assert.deepEqual(
      item.resourceRules.filter((r) => r.resources.includes('pods') || r.resources.includes('deployments')),
      [
        { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'], resourceNames: [] },
        { verbs: ['get', 'create', 'update'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: [] },
      ],
    );
    const elsewhere = answered(await runFleet(['auth', 'rules', '--kubeconfig', bob.kubeconfigPath, '-o', 'json']))[0];
    assert.equal(elsewhere.namespace, 'default');
    assert.ok(!elsewhere.resourceRules.some((r) => r.resources.includes('pods')));
    const name = await runFleet(['auth', 'rules', '-n', ns, '--kubeconfig', bob.kubeconfigPath, '-o', 'name']);
    assert.equal(name.stdout, '', 'no cluster with risky grants');
    assert.ok(!res.stdout.includes(bob.token));
  });

  it('a client-certificate user with a risky ClusterRole: each dangerous grant named', async () => {
    const user = uniqueName('risky');
    const group = uniqueName('risky-grp');
    await grant(cp.hub, {
      name: user,
      subject: { kind: 'Group', name: group },
      rules: [
        { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
        { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
        { apiGroups: [''], resources: ['users'], verbs: ['impersonate'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['signers'],
          resourceNames: ['kubernetes.io/kube-apiserver-client'],
          verbs: ['approve'],
        },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind', 'escalate'] },
        { apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      ],
    });
    const cert = await createCertUser(cp.hub, { user, groups: [group] });
    const res = await runFleet(['auth', 'rules', '--kubeconfig', cert.kubeconfigPath, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = answered(res);
    assert.deepEqual(codes(item), [
      'bind',
      'csr-approval',
      'escalate',
      'impersonate',
      'nodes-proxy',
      'pods-exec',
      'read-secrets',
    ]);
    const signer = item.risks.find((r) => r.code === 'csr-approval' && r.resourceNames);
    assert.deepEqual(signer?.resourceNames, ['kubernetes.io/kube-apiserver-client']);
    const secrets = item.risks.find((r) => r.code === 'read-secrets');
    assert.deepEqual(item.resourceRules[secrets!.rule], {
      verbs: ['list'],
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: [],
    });
    const name = await runFleet(['auth', 'rules', '--kubeconfig', cert.kubeconfigPath, '-o', 'name']);
    assert.equal(name.stdout, `${cert.kubeconfigPath}+${user}@hub\n`);
  });

  it('a ServiceAccount with "edit" in its namespace (from the context) holds risky grants', async () => {
    const ns = uniqueName('rules-sa');
    const token = await createServiceAccountToken(cp.hub, ns, 'app');
    await grant(cp.hub, {
      name: 'app-edit',
      namespace: ns,
      clusterRole: 'edit',
      subject: { kind: 'ServiceAccount', name: 'app', namespace: ns },
    });
    const path = kubeconfigFor(cp.hub, { token }, { namespace: ns });
    const res = await runFleet(['auth', 'rules', '--kubeconfig', path, '-o', 'yaml']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(!res.stdout.includes(token));
    const [item] = answered(await runFleet(['auth', 'rules', '--kubeconfig', path, '-o', 'json']));
    assert.equal(item.namespace, ns);
    assert.deepEqual(codes(item), ['create-token', 'impersonate', 'pods-exec', 'read-secrets']);
  });

  it('over a fleet with a member down: the others answer, the down one has its row, exit 1', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    const down = kubeconfigFor(
      { ...member, url: `https://127.0.0.1:${port}` },
      { token: 'x'.repeat(24) },
      { name: uniqueName('down') },
    );
    const res = await runFleet([
      'auth',
      'rules',
      '--all',
      '--kubeconfig',
      [cp.hub.kubeconfig, down, member.kubeconfig].join(':'),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1);
    const all = items(res);
    assert.deepEqual(
      all.map((i) => [i.ok, i.error?.kind ?? i.risks!.some((r) => r.code === 'cluster-admin')]),
      [
        [true, true],
        [false, 'unreachable'],
        [true, true],
      ],
    );
    assert.deepEqual(Object.keys(all[1]).sort(), ['cluster', 'error', 'ok']);
    const table = await runFleet(['auth', 'rules', '--all', '--kubeconfig', [cp.hub.kubeconfig, down].join(':')]);
    assert.equal(table.code, 1);
    // The CLUSTER column names a file cluster by its context (issue 41's short names).
    assert.match(table.stdout, /^down-\w+@member-1\s+unreachable$/m);
  });
});
