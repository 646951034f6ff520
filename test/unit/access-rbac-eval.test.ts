// The RBAC evaluation behind `auth who-can` (src/access/rbac-eval.ts): the authorizer's matching rules, turned
// around. The live agreement with SubjectAccessReview is test/e2e/auth-who-can.test.ts; these pin the edge cases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  type PolicyRule,
  type RbacSnapshot,
  evaluate,
  nonResourceURLMatches,
  resourceMatches,
  resourceNameMatches,
  ruleAllows,
  selectorMatches,
} from '../../src/access/rbac-eval.js';
import { parseWhoCanQuery, reviewSubject } from '../../src/access/who-can.js';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ verbs: ['get'], apiGroups: [''], resources: ['pods'], ...r });
const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
const ask = (
  o: Partial<{ verb: string; group: string; resource: string; subresource: string; name: string; namespace: string }>,
) => ({
  resource: { verb: 'get', group: '', resource: 'pods', namespace: 'team-a', ...o },
});

describe('rule matching', () => {
  it('resources: * covers subresources, pods does not cover pods/exec, */exec covers any exec', () => {
    assert.equal(resourceMatches(rule({ resources: ['*'] }), 'pods', 'exec'), true);
    assert.equal(resourceMatches(rule({ resources: ['pods'] }), 'pods', 'exec'), false);
    assert.equal(resourceMatches(rule({ resources: ['pods/exec'] }), 'pods', 'exec'), true);
    assert.equal(resourceMatches(rule({ resources: ['*/exec'] }), 'pods', 'exec'), true);
    assert.equal(resourceMatches(rule({ resources: ['*/exec'] }), 'pods'), false);
    assert.equal(resourceMatches(rule({ resources: ['*/scale'] }), 'deployments', 'status'), false);
  });

  it('resourceNames: any name without them; with them, only a request naming one', () => {
    assert.equal(resourceNameMatches(rule({}), undefined), true);
    assert.equal(resourceNameMatches(rule({ resourceNames: ['a'] }), undefined), false);
    assert.equal(resourceNameMatches(rule({ resourceNames: ['a'] }), 'a'), true);
    assert.equal(resourceNameMatches(rule({ resourceNames: ['a'] }), 'b'), false);
  });

  it('non-resource URLs: exact, *, and a trailing * as a prefix', () => {
    const r = rule({ nonResourceURLs: ['/healthz', '/logs/*'] });
    assert.equal(nonResourceURLMatches(r, '/healthz'), true);
    assert.equal(nonResourceURLMatches(r, '/healthz/etcd'), false);
    assert.equal(nonResourceURLMatches(r, '/logs/a/b'), true);
    assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['*'] }), '/anything'), true);
  });

  it('verbs and groups: * or exact; a query for "*" matches only a rule saying "*"', () => {
    assert.equal(
      ruleAllows(rule({ verbs: ['*'], apiGroups: ['*'] }), ask({ verb: 'delete', group: 'apps', resource: 'pods' })),
      true,
    );
    assert.equal(ruleAllows(rule({ verbs: ['get', 'list'] }), ask({ verb: '*' })), false);
    assert.equal(ruleAllows(rule({ apiGroups: ['apps'] }), ask({})), false);
  });

  it('label selectors of aggregation rules', () => {
    assert.equal(selectorMatches({ matchLabels: { a: '1' } }, { a: '1', b: '2' }), true);
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }] }, { a: '2' }),
      true,
    );
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '2' }), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, {}), true);
  });
});

describe('evaluate', () => {
  const snapshot: RbacSnapshot = {
    clusterRoles: [
      { metadata: { name: 'reader' }, rules: [rule({ verbs: ['get', 'list'] })] },
      {
        metadata: { name: 'agg' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'yes' } }] },
        rules: [rule({ resources: ['pods/exec'], verbs: ['create'] })],
      },
      {
        metadata: { name: 'agg-src', labels: { agg: 'yes' } },
        rules: [rule({ resources: ['pods/exec'], verbs: ['create'] })],
      },
      { metadata: { name: 'urls' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }] },
    ],
    clusterRoleBindings: [
      {
        metadata: { name: 'crb' },
        roleRef: ref('ClusterRole', 'urls'),
        subjects: [
          { kind: 'Group', name: 'monitoring' },
          { kind: 'ServiceAccount', name: 'no-ns' },
        ],
      },
      { metadata: { name: 'crb-agg' }, roleRef: ref('ClusterRole', 'agg'), subjects: [{ kind: 'User', name: 'ops' }] },
    ],
    roles: [{ metadata: { name: 'own', namespace: 'team-a' }, rules: [rule({ verbs: ['delete'] })] }],
    roleBindings: [
      {
        metadata: { name: 'rb', namespace: 'team-a' },
        roleRef: ref('ClusterRole', 'reader'),
        subjects: [
          { kind: 'ServiceAccount', name: 'ci' },
          { kind: 'User', name: 'alice' },
        ],
      },
      {
        metadata: { name: 'rb-own', namespace: 'team-a' },
        roleRef: ref('Role', 'own'),
        subjects: [{ kind: 'User', name: 'bob' }],
      },
      {
        metadata: { name: 'rb-b', namespace: 'team-b' },
        roleRef: ref('ClusterRole', 'reader'),
        subjects: [{ kind: 'User', name: 'carol' }],
      },
      {
        metadata: { name: 'rb-missing', namespace: 'team-a' },
        roleRef: ref('Role', 'gone'),
        subjects: [{ kind: 'User', name: 'dave' }],
      },
    ],
  };

  it("RoleBindings of the namespace asked about; a ServiceAccount without namespace takes the binding's", () => {
    const e = evaluate(snapshot, ask({ verb: 'list' }));
    assert.deepEqual(
      e.subjects.map((s) => [s.kind, s.namespace ?? '', s.name]),
      [
        ['User', '', 'alice'],
        ['ServiceAccount', 'team-a', 'ci'],
      ],
    );
    assert.deepEqual(e.subjects[0].grants[0].binding, { kind: 'RoleBinding', name: 'rb', namespace: 'team-a' });
    assert.ok(
      e.warnings.some((w) => /RoleBinding team-a\/rb-missing refers to Role "gone", which does not exist/.test(w)),
    );
  });

  it('all namespaces: each grant says where; cluster-wide questions count ClusterRoleBindings only', () => {
    const all = evaluate(snapshot, ask({ verb: 'list', namespace: '' }), { allNamespaces: true });
    assert.deepEqual(
      all.subjects.map((s) => `${s.name}@${s.grants[0].namespace}`),
      ['alice@team-a', 'carol@team-b', 'ci@team-a'],
    );
    assert.deepEqual(evaluate(snapshot, ask({ verb: 'list', namespace: '' })).subjects, []);
    const urls = evaluate(snapshot, { nonResource: { verb: 'get', path: '/metrics' } });
    assert.deepEqual(
      urls.subjects.map((s) => s.name),
      ['monitoring'],
    );
    assert.ok(urls.warnings.some((w) => /ServiceAccount "no-ns" has no namespace/.test(w)));
  });

  it('a ClusterRole that may live elsewhere (kcp\'s bootstrap policy) makes the answer incomplete, not "grants nothing"', () => {
    const s: RbacSnapshot = {
      ...snapshot,
      clusterRoleBindings: [
        {
          metadata: { name: 'workspace-admin' },
          roleRef: ref('ClusterRole', 'cluster-admin'),
          subjects: [{ kind: 'User', name: 'admin' }],
        },
      ],
    };
    const here = evaluate(s, ask({}));
    assert.equal(here.incomplete, undefined);
    assert.ok(
      here.warnings.some((w) =>
        /refers to ClusterRole "cluster-admin", which does not exist: it grants nothing/.test(w),
      ),
    );
    const kcp = evaluate(s, ask({}), { clusterRolesElsewhere: 'kcp may resolve it' });
    assert.equal(kcp.incomplete, true);
    assert.ok(kcp.warnings.some((w) => /which is not here: kcp may resolve it, so its subjects are not shown/.test(w)));
  });

  it('aggregated ClusterRoles name their source; a source rule not yet aggregated is a warning', () => {
    const e = evaluate(snapshot, ask({ verb: 'create', subresource: 'exec' }));
    assert.deepEqual(
      e.subjects.map((s) => s.name),
      ['ops'],
    );
    assert.deepEqual(e.subjects[0].grants[0].role, {
      kind: 'ClusterRole',
      name: 'agg',
      aggregated: true,
      aggregatedFrom: ['agg-src'],
    });
    const lagging = structuredClone(snapshot);
    lagging.clusterRoles![1].rules = [];
    const l = evaluate(lagging, ask({ verb: 'create', subresource: 'exec' }));
    assert.deepEqual(l.subjects, []);
    assert.ok(
      l.warnings.some((w) => /aggregated ClusterRole "agg" does not yet hold matching rules of "agg-src"/.test(w)),
    );
  });
});

describe('who-can query and review subjects', () => {
  it('RESOURCE/SUB is a subresource; NAME is its own argument', () => {
    assert.deepEqual(parseWhoCanQuery({ verb: 'create', resource: 'pods/exec' }), {
      verb: 'create',
      resource: 'pods',
      subresource: 'exec',
    });
    assert.deepEqual(parseWhoCanQuery({ verb: 'get', resource: 'configmaps', name: 'x' }), {
      verb: 'get',
      resource: 'configmaps',
      name: 'x',
    });
    assert.deepEqual(parseWhoCanQuery({ verb: 'get', resource: '/healthz' }), {
      verb: 'get',
      nonResourceURL: '/healthz',
    });
    assert.throws(() => parseWhoCanQuery({ verb: 'get', resource: 'pods/exec/x' }), /RESOURCE\/SUBRESOURCE/);
    assert.throws(() => parseWhoCanQuery({ verb: 'get', resource: 'pods/exec', subresource: 'log' }), /not both/);
  });

  it('a ServiceAccount is reviewed by its username, a group as a group', () => {
    assert.deepEqual(reviewSubject({ kind: 'ServiceAccount', name: 'ci', namespace: 'a' }), {
      user: 'system:serviceaccount:a:ci',
    });
    assert.deepEqual(reviewSubject({ kind: 'Group', name: 'g' }), { groups: ['g'] });
    assert.deepEqual(reviewSubject({ kind: 'User', name: 'u' }), { user: 'u' });
  });
});
