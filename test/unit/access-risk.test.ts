import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  type ResourceRule,
  type RiskCode,
  assessRules,
  coversResource,
  grants,
  summarizeRisks,
} from '../../src/access/risk.js';
import { qualifiedResources, toRulesReview } from '../../src/access/rules.js';

const rule = (
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  resourceNames: string[] = [],
): ResourceRule => ({ verbs, apiGroups, resources, resourceNames });
const codes = (rules: ResourceRule[]): RiskCode[] => assessRules(rules).map((f) => f.code);

describe('RBAC matching', () => {
  it('"*" covers resources and subresources, "*/sub" covers one subresource, a resource does not cover its subresources', () => {
    assert.equal(coversResource(rule([], [], ['*']), 'pods/exec'), true);
    assert.equal(coversResource(rule([], [], ['*/exec']), 'pods/exec'), true);
    assert.equal(coversResource(rule([], [], ['*/exec']), 'pods'), false);
    assert.equal(coversResource(rule([], [], ['pods']), 'pods/exec'), false);
    assert.equal(coversResource(rule([], [], ['pods/exec']), 'pods/exec'), true);
  });

  it('grants names the verbs a rule gives on a group and resource', () => {
    assert.deepEqual(
      grants(rule(['get', 'watch', 'delete'], [''], ['secrets']), ['get', 'list', 'watch'], '', 'secrets'),
      ['get', 'watch'],
    );
    assert.deepEqual(grants(rule(['*'], ['*'], ['secrets']), ['get', 'list'], '', 'secrets'), ['get', 'list']);
    assert.deepEqual(grants(rule(['get'], ['apps'], ['secrets']), ['get'], '', 'secrets'), [], 'another group');
  });
});

describe('risk rules', () => {
  it('the cluster-admin rule is named as such and implies every specific risk', () => {
    assert.deepEqual(codes([rule(['*'], ['*'], ['*'])]), [
      'cluster-admin',
      'wildcard-verbs',
      'wildcard-resources',
      'wildcard-groups',
      'read-secrets',
      'escalate',
      'bind',
      'impersonate',
      'create-token',
      'pods-exec',
      'nodes-proxy',
      'csr-approval',
    ]);
    assert.deepEqual(summarizeRisks(assessRules([rule(['get'], [''], ['pods']), rule(['*'], ['*'], ['*'])])), [
      'cluster-admin',
    ]);
  });

  it('a namespaced developer role carries no risk', () => {
    const dev = [
      rule(['get', 'list', 'watch'], [''], ['pods', 'pods/log', 'configmaps', 'services']),
      rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps'], ['deployments', 'replicasets']),
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    ];
    assert.deepEqual(assessRules(dev), []);
  });

  it('each wildcard is named on its own', () => {
    assert.deepEqual(codes([rule(['*'], [''], ['configmaps'])]), ['wildcard-verbs']);
    assert.deepEqual(codes([rule(['get'], ['apps'], ['*'])]), ['wildcard-resources']);
    assert.deepEqual(codes([rule(['list'], ['*'], ['deployments'])]), ['wildcard-groups']);
  });

  it('read on secrets: get, list or watch, directly or through a wildcard, with names kept', () => {
    const [f] = assessRules([rule(['list', 'create'], [''], ['secrets'])]);
    assert.deepEqual(f, { code: 'read-secrets', severity: 'high', message: 'may read Secrets (list)', rule: 0 });
    // get on every core resource includes get on pods/exec and nodes/proxy, which RBAC treats the same way.
    assert.deepEqual(codes([rule(['get'], [''], ['*'])]), [
      'wildcard-resources',
      'read-secrets',
      'pods-exec',
      'nodes-proxy',
    ]);
    assert.deepEqual(codes([rule(['create', 'delete'], [''], ['secrets'])]), [], 'writing is not reading');
    assert.deepEqual(codes([rule(['get'], ['apps'], ['secrets'])]), [], 'secrets live in the core group');
    const named = assessRules([rule(['get'], [''], ['secrets'], ['registry-pull'])]);
    assert.deepEqual(named[0].resourceNames, ['registry-pull']);
  });

  it('escalate and bind on roles or clusterroles', () => {
    const [e] = assessRules([rule(['escalate'], ['rbac.authorization.k8s.io'], ['clusterroles'])]);
    assert.equal(e.code, 'escalate');
    assert.equal(e.message, 'may grant permissions it does not hold (escalate on clusterroles)');
    assert.deepEqual(codes([rule(['bind'], ['rbac.authorization.k8s.io'], ['roles', 'clusterroles'])]), ['bind']);
    assert.deepEqual(codes([rule(['bind'], ['rbac.authorization.k8s.io'], ['rolebindings'])]), []);
    assert.deepEqual(codes([rule(['create', 'update'], ['rbac.authorization.k8s.io'], ['roles'])]), []);
  });

  it('impersonate on users, groups, serviceaccounts, uids or userextras', () => {
    const [f] = assessRules([rule(['impersonate'], [''], ['users', 'groups'])]);
    assert.equal(f.message, 'may act as other identities (impersonate users, groups)');
    assert.deepEqual(codes([rule(['impersonate'], [''], ['serviceaccounts'])]), ['impersonate']);
    assert.deepEqual(codes([rule(['impersonate'], ['authentication.k8s.io'], ['userextras/scopes'])]), ['impersonate']);
    assert.deepEqual(codes([rule(['impersonate'], ['authentication.k8s.io'], ['uids'])]), ['impersonate']);
    assert.deepEqual(codes([rule(['get'], [''], ['users'])]), []);
  });

  it('create on serviceaccounts/token, not on serviceaccounts', () => {
    assert.deepEqual(codes([rule(['create'], [''], ['serviceaccounts/token'])]), ['create-token']);
    assert.deepEqual(codes([rule(['create'], [''], ['serviceaccounts'])]), []);
    assert.deepEqual(codes([rule(['create'], [''], ['*/token'])]), ['create-token']);
  });

  it('pods/exec with create or get; nodes/proxy with any verb', () => {
    assert.equal(
      assessRules([rule(['get'], [''], ['pods/exec'])])[0].message,
      'may run commands in containers (get pods/exec)',
    );
    assert.deepEqual(codes([rule(['create'], [''], ['pods/exec'])]), ['pods-exec']);
    assert.deepEqual(codes([rule(['create', 'get', 'list'], [''], ['pods'])]), [], 'pods does not cover pods/exec');
    assert.deepEqual(codes([rule(['get'], [''], ['nodes/proxy'])]), ['nodes-proxy']);
    assert.deepEqual(codes([rule(['get'], [''], ['nodes'])]), []);
  });

  it('CSR approval: update on the approval subresource, or approve on signers', () => {
    const [f] = assessRules([rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/approval'])]);
    assert.equal(f.code, 'csr-approval');
    assert.match(f.message, /\(update certificatesigningrequests\/approval\)$/);
    assert.match(
      assessRules([rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client'])])[0]
        .message,
      /approve on signers/,
    );
    assert.deepEqual(codes([rule(['create', 'get'], ['certificates.k8s.io'], ['certificatesigningrequests'])]), []);
  });

  it('findings point at their rule by index, in rule order', () => {
    const findings = assessRules([
      rule(['get'], [''], ['pods']),
      rule(['get'], [''], ['secrets']),
      rule(['bind'], ['rbac.authorization.k8s.io'], ['roles']),
    ]);
    assert.deepEqual(
      findings.map((f) => [f.rule, f.code]),
      [
        [1, 'read-secrets'],
        [2, 'bind'],
      ],
    );
  });

  it('summaries list the most severe first', () => {
    assert.deepEqual(
      summarizeRisks(assessRules([rule(['*'], [''], ['configmaps']), rule(['get'], [''], ['secrets'])])),
      ['read-secrets', 'wildcard-verbs'],
    );
  });
});

describe('risk rules by scope: a RoleBinding reaches nothing the API server checks cluster-wide', () => {
  const ALL = rule(['*'], ['*'], ['*']);

  it('"*" on "*.*" in a namespace only is namespace-admin, without cluster-admin, nodes-proxy or csr-approval', () => {
    assert.deepEqual(
      assessRules([ALL], ['namespace']).map((f) => [f.code, f.scope]),
      [
        ['namespace-admin', 'namespace'],
        ['wildcard-verbs', 'namespace'],
        ['wildcard-resources', 'namespace'],
        ['wildcard-groups', 'namespace'],
        ['read-secrets', 'namespace'],
        ['escalate', 'namespace'],
        ['bind', 'namespace'],
        ['impersonate', 'namespace'],
        ['create-token', 'namespace'],
        ['pods-exec', 'namespace'],
      ],
    );
    assert.deepEqual(summarizeRisks(assessRules([ALL], ['namespace'])), ['namespace-admin']);
    // The same rule held cluster-wide is cluster-admin, as before.
    assert.equal(assessRules([ALL], ['cluster'])[0].code, 'cluster-admin');
    assert.deepEqual(summarizeRisks(assessRules([ALL], ['cluster'])), ['cluster-admin']);
  });

  it('in a namespace: impersonating ServiceAccounts counts, users, groups, uids and extras do not; escalate on roles only', () => {
    const impersonateAll = rule(
      ['impersonate'],
      ['', 'authentication.k8s.io'],
      ['users', 'groups', 'serviceaccounts', 'uids', 'userextras/scopes'],
    );
    assert.equal(
      assessRules([impersonateAll], ['namespace'])[0].message,
      'may act as other identities (impersonate serviceaccounts)',
    );
    assert.equal(
      assessRules([impersonateAll], ['cluster'])[0].message,
      'may act as other identities (impersonate users, groups, serviceaccounts, uids, userextras)',
    );
    assert.deepEqual(codes([rule(['impersonate'], [''], ['users'])]), ['impersonate'], 'no scope: cluster-wide');
    assert.deepEqual(assessRules([rule(['impersonate'], [''], ['users', 'groups'])], ['namespace']), []);
    const esc = rule(['escalate', 'bind'], ['rbac.authorization.k8s.io'], ['roles', 'clusterroles']);
    assert.deepEqual(
      assessRules([esc], ['namespace']).map((f) => f.message),
      [
        'may grant permissions it does not hold (escalate on roles)',
        // A RoleBinding to a ClusterRole is checked with bind on clusterroles in its namespace: that counts.
        'may bind roles it does not hold (bind on roles, clusterroles)',
      ],
    );
    assert.deepEqual(
      assessRules([rule(['escalate'], ['rbac.authorization.k8s.io'], ['clusterroles'])], ['namespace']),
      [],
    );
  });

  it('nodes/proxy and CSR approval are cluster-scoped: never from a namespace-only grant', () => {
    const risky = [
      rule(['get'], [''], ['nodes/proxy']),
      rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/approval']),
      rule(['approve'], ['certificates.k8s.io'], ['signers']),
    ];
    assert.deepEqual(assessRules(risky, ['namespace', 'namespace', 'namespace']), []);
    assert.deepEqual(
      assessRules(risky, ['cluster', 'cluster', 'cluster']).map((f) => f.code),
      ['nodes-proxy', 'csr-approval', 'csr-approval'],
    );
  });

  it('namespace-admin stands for the namespace-only findings; cluster-wide ones are still listed beside it', () => {
    const findings = assessRules(
      [ALL, rule(['get'], [''], ['nodes/proxy']), rule(['get'], [''], ['secrets']), rule(['get'], [''], ['pods/exec'])],
      ['namespace', 'cluster', 'cluster', 'namespace'],
    );
    // pods/exec in the namespace is part of being its admin; Secrets and nodes/proxy cluster-wide are more.
    assert.deepEqual(summarizeRisks(findings), ['namespace-admin', 'read-secrets', 'nodes-proxy']);
  });
});

describe('rules review answers', () => {
  it('omitted lists become empty, flags and errors are kept, risks assessed', () => {
    const review = toRulesReview('team-a', {
      resourceRules: [
        { verbs: ['get'], apiGroups: [''], resources: ['secrets'] },
        { verbs: ['list'], resources: ['pods'] },
      ],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      incomplete: true,
      evaluationError: 'webhook authorizer does not support rule listing',
    });
    assert.deepEqual(review, {
      namespace: 'team-a',
      incomplete: true,
      evaluationError: 'webhook authorizer does not support rule listing',
      resourceRules: [
        { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: [] },
        { verbs: ['list'], apiGroups: [], resources: ['pods'], resourceNames: [] },
      ],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      risks: [{ code: 'read-secrets', severity: 'high', message: 'may read Secrets (get)', rule: 0 }],
    });
    assert.deepEqual(toRulesReview('x', {}), {
      namespace: 'x',
      incomplete: false,
      resourceRules: [],
      nonResourceRules: [],
      risks: [],
    });
  });

  it('with the cluster-wide review: rules it also lists hold cluster-wide, the others in the namespace; URLs only cluster-wide', () => {
    const wide = { verbs: ['get'], apiGroups: [''], resources: ['nodes'] };
    const local = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
    const review = toRulesReview(
      'team-a',
      {
        resourceRules: [wide, local],
        nonResourceRules: [
          { verbs: ['get'], nonResourceURLs: ['/healthz'] },
          { verbs: ['get'], nonResourceURLs: ['/only-a-rolebinding'] },
        ],
      },
      {
        resourceRules: [wide],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
        incomplete: true,
        evaluationError: 'webhook: no rules',
      },
    );
    assert.deepEqual(review.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
    assert.equal(review.incomplete, true);
    assert.equal(review.evaluationError, 'webhook: no rules');
    assert.deepEqual(
      review.risks.map((r) => [r.rule, r.code, r.scope]),
      [
        [1, 'namespace-admin', 'namespace'],
        [1, 'wildcard-verbs', 'namespace'],
        [1, 'wildcard-resources', 'namespace'],
        [1, 'wildcard-groups', 'namespace'],
        [1, 'read-secrets', 'namespace'],
        [1, 'escalate', 'namespace'],
        [1, 'bind', 'namespace'],
        [1, 'impersonate', 'namespace'],
        [1, 'create-token', 'namespace'],
        [1, 'pods-exec', 'namespace'],
      ],
    );
    // The same "*" rule also bound cluster-wide: cluster-admin.
    const both = toRulesReview('team-a', { resourceRules: [local, local] }, { resourceRules: [local] });
    assert.deepEqual(summarizeRisks(both.risks), ['cluster-admin']);
  });

  it('resources are written the kubectl way', () => {
    assert.deepEqual(qualifiedResources(rule([], ['', 'apps'], ['deployments'])), ['deployments', 'deployments.apps']);
    assert.deepEqual(qualifiedResources(rule([], ['*'], ['*'])), ['*.*']);
  });
});
