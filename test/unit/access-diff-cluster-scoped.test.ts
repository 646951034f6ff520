// auth diff: a RoleBinding's grant of a cluster-scoped resource is no grant (issue 49, found by the access differential,
// test/e2e/auth-differential.test.ts). The namespace's SelfSubjectRulesReview lists the rules of a ClusterRole bound
// there, `get nodes` and `impersonate users` included, but a request for a node or a user has no namespace, so the
// authorizer reads no RoleBinding for it: `auth can-i get nodes` says no on both clusters while auth diff reported drift.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clusterScopedIn, diffRules, normaliseReviews } from '../../src/access/diff.js';
import type { DiscoveredResource } from '../../src/access/discovery.js';
import { toRulesReview } from '../../src/access/rules.js';

type Rule = { verbs: string[]; apiGroups?: string[]; resources: string[]; resourceNames?: string[] };
const review = (rules: Rule[]) =>
  toRulesReview('team', {
    resourceRules: rules.map((r) => ({ ...r, apiGroups: r.apiGroups ?? [''], resourceNames: r.resourceNames ?? [] })),
  });
const served = (group: string, resource: string, namespaced: boolean): DiscoveredResource => ({
  group,
  resource,
  namespaced,
  singular: '',
  kind: '',
  shortNames: [],
  versions: ['v1'],
});
const discovery = [
  served('', 'pods', true),
  served('', 'nodes', false),
  served('', 'namespaces', false),
  served('rbac.authorization.k8s.io', 'clusterroles', false),
  served('example.com', 'nodes', true),
];

/** What a RoleBinding in `team` grants, as the namespace's review lists it; nothing is cluster-wide. */
const ROLE_BINDING: Rule[] = [
  { verbs: ['get'], resources: ['pods', 'nodes', 'nodes/proxy', 'users', 'groups'] },
  { verbs: ['impersonate'], resources: ['users', 'groups', 'serviceaccounts'] },
  { verbs: ['impersonate'], apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras/scopes'] },
  { verbs: ['approve'], apiGroups: ['certificates.k8s.io'], resources: ['signers'] },
  { verbs: ['bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'] },
  { verbs: ['get', 'update'], resources: ['namespaces'] },
  { verbs: ['delete'], resources: ['namespaces'], resourceNames: ['team', 'other'] },
  // Served namespaced in another group, and `*` groups or resources: these reach namespaced resources.
  { verbs: ['list'], apiGroups: ['example.com'], resources: ['nodes'] },
  { verbs: ['watch'], apiGroups: ['*'], resources: ['nodes'] },
  { verbs: ['create'], resources: ['*'] },
];

const granted = (
  rules: { scope: string; apiGroup: string; resource: string; resourceNames: string[]; verbs: string[] }[],
) =>
  rules.map(
    (r) =>
      `${r.scope} ${r.verbs.join(',')} ${r.apiGroup}/${r.resource}${r.resourceNames.length ? ` [${r.resourceNames.join(',')}]` : ''}`,
  );

describe('auth diff: grants of cluster-scoped resources from a RoleBinding', () => {
  it('are dropped: nodes, users, groups, uids, userextras, signers, clusterroles; other Namespace objects too', () => {
    const normal = normaliseReviews('team', review(ROLE_BINDING), review([]), clusterScopedIn(discovery));
    assert.deepEqual(
      granted(normal.rules).sort(),
      [
        'namespace create /*',
        'namespace get /pods',
        'namespace impersonate /serviceaccounts',
        // The Namespace object named like the namespace is filed under it: a RoleBinding there reaches it.
        'namespace delete /namespaces [team]',
        'namespace get,update /namespaces',
        'namespace watch */nodes',
        'namespace list example.com/nodes',
      ].sort(),
    );
  });

  it('the same grants cluster-wide (a ClusterRoleBinding) are kept', () => {
    const normal = normaliseReviews('team', review(ROLE_BINDING), review(ROLE_BINDING), clusterScopedIn(discovery));
    assert.ok(granted(normal.rules).includes('cluster get /nodes'));
    assert.ok(granted(normal.rules).includes('cluster get,impersonate /users'));
    assert.ok(granted(normal.rules).includes('cluster approve certificates.k8s.io/signers'));
    assert.ok(normal.rules.every((r) => r.scope === 'cluster'));
  });

  it('without discovery the virtual resources are still known to be cluster-scoped', () => {
    const normal = normaliseReviews('team', review(ROLE_BINDING), review([]));
    const rules = granted(normal.rules);
    assert.ok(!rules.some((r) => /\/(users|groups|uids|userextras\/scopes|signers)$/.test(r)), rules.join('\n'));
    assert.ok(rules.includes('namespace get /nodes'), 'nodes are known only from discovery');
  });

  it('so a RoleBinding of get nodes and impersonate users on one cluster is no drift; get pods is', () => {
    const scoped = clusterScopedIn(discovery);
    const one = normaliseReviews(
      'team',
      review([{ verbs: ['get', 'impersonate'], resources: ['nodes', 'users', 'pods'] }]),
      review([]),
      scoped,
    );
    const two = normaliseReviews('team', review([]), review([]), scoped);
    const diff = diffRules(
      new Map([
        ['one', one],
        ['two', two],
      ]),
    );
    assert.deepEqual(diff.get('one')!.extra, {
      rules: [{ scope: 'namespace', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get', 'impersonate'] }],
      nonResourceRules: [],
    });
    assert.deepEqual(diff.get('two')!.missing, diff.get('one')!.extra);
  });
});
