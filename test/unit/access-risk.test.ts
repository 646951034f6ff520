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

  it('resources are written the kubectl way', () => {
    assert.deepEqual(qualifiedResources(rule([], ['', 'apps'], ['deployments'])), ['deployments', 'deployments.apps']);
    assert.deepEqual(qualifiedResources(rule([], ['*'], ['*'])), ['*.*']);
  });
});
