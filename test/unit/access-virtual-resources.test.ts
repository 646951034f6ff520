// Resources no API serves (users, groups, uids, userextras, signers): discovery does not list them, and the API server
// asks about them with no namespace (the impersonation filter; the CSR approval and signing checks). fleet must ask the
// same question: `auth can-i impersonate users alice -n default` and `auth who-can` are about the cluster scope, where
// a RoleBinding grants nothing. The pure resolution first, then can-i and who-can against an API double that answers
// reviews the way the authorizer does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { canI, parseAccessQuery, resolveResource } from '../../src/access/can-i.js';
import type { DiscoveredResource } from '../../src/access/discovery.js';
import { parseWhoCanQuery, whoCan } from '../../src/access/who-can.js';
import { type ApiDouble, startApiDouble } from '../support/api-double.js';

const served = (group: string, resource: string, namespaced: boolean): DiscoveredResource => ({
  group,
  resource,
  singular: resource.replace(/s$/, ''),
  kind: '',
  shortNames: [],
  namespaced,
  versions: ['v1'],
});
/** What a real 1.34 server's discovery says about the names involved: none of the virtual resources. */
const DISCOVERY = [
  served('', 'pods', true),
  served('', 'serviceaccounts', true),
  served('', 'namespaces', false),
  served('', 'nodes', false),
  served('certificates.k8s.io', 'certificatesigningrequests', false),
  served('authentication.k8s.io', 'selfsubjectreviews', false),
];

describe('virtual resources: cluster-scoped, as the API server asks about them', () => {
  const cases: Array<[string, string | undefined, { group: string; resource: string; subresource?: string }]> = [
    ['users', undefined, { group: '', resource: 'users' }],
    ['groups', undefined, { group: '', resource: 'groups' }],
    ['uids', undefined, { group: 'authentication.k8s.io', resource: 'uids' }],
    ['uids.authentication.k8s.io', undefined, { group: 'authentication.k8s.io', resource: 'uids' }],
    ['userextras', 'scopes', { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes' }],
    ['signers', undefined, { group: 'certificates.k8s.io', resource: 'signers' }],
  ];
  for (const [typed, subresource, expected] of cases) {
    it(`${typed}${subresource ? `/${subresource}` : ''} is asked with no namespace and no warning`, () => {
      const verb = typed === 'signers' ? 'approve' : 'impersonate';
      const q = parseAccessQuery({ verb, resource: typed, name: 'x', ...(subresource ? { subresource } : {}) });
      const r = resolveResource(DISCOVERY, q, 'default');
      assert.deepEqual(r, {
        attributes: { namespace: '', verb, ...expected, name: 'x' },
        scope: 'cluster',
        warnings: [],
      });
    });
  }

  it('serviceaccounts are real and namespaced: impersonating one is asked in its namespace', () => {
    const r = resolveResource(DISCOVERY, parseAccessQuery({ verb: 'impersonate', resource: 'serviceaccounts' }), 'ci');
    assert.equal(r.attributes.namespace, 'ci');
    assert.equal(r.scope, 'namespace');
  });

  it('what discovery serves wins (a CRD named users, typed with its group); a name nobody serves stays a warning', () => {
    const crd = { ...served('example.com', 'users', true) };
    const typed = resolveResource(
      [...DISCOVERY, crd],
      parseAccessQuery({ verb: 'get', resource: 'users.example.com' }),
      'a',
    );
    assert.deepEqual(
      [typed.attributes.group, typed.attributes.namespace, typed.scope],
      ['example.com', 'a', 'namespace'],
    );
    const unknown = resolveResource(DISCOVERY, parseAccessQuery({ verb: 'get', resource: 'gizmos' }), 'a');
    assert.deepEqual([unknown.attributes.namespace, unknown.scope], ['a', 'namespace']);
    assert.deepEqual(unknown.warnings, ['the server has no resource type "gizmos"']);
    // Only the plural: kubectl has no singular or kind to map for them either.
    assert.equal(
      resolveResource(DISCOVERY, parseAccessQuery({ verb: 'impersonate', resource: 'user' }), 'a').scope,
      'namespace',
    );
  });
});

describe('can-i and who-can ask the cluster scope for impersonation', () => {
  let api: ApiDouble;
  const RBAC = '/apis/rbac.authorization.k8s.io/v1';
  const role = {
    metadata: { name: 'impersonator' },
    rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['alice'] }],
  };
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonator' };
  const list = (items: unknown[]) => ({ status: 200, body: { kind: 'List', metadata: {}, items } });
  /** The authorizer: `wide` holds the ClusterRoleBinding, `local` only the RoleBinding in default. */
  const allows = (user: string | undefined, namespace: string | undefined) =>
    user === 'wide' || (user === 'local' && namespace === 'default');
  const reviews: Array<Record<string, any>> = [];

  before(async () => {
    api = await startApiDouble('virtual-resources');
    api.handler = (r) => {
      const path = r.url.split('?')[0];
      if (r.method === 'GET' && path === '/api')
        return {
          status: 200,
          body: {
            kind: 'APIGroupDiscoveryList',
            items: [
              {
                metadata: { name: '' },
                versions: [
                  {
                    version: 'v1',
                    resources: [
                      { resource: 'pods', scope: 'Namespaced' },
                      { resource: 'serviceaccounts', scope: 'Namespaced' },
                      { resource: 'namespaces', scope: 'Cluster' },
                    ],
                  },
                ],
              },
            ],
          },
        };
      if (r.method === 'GET' && path === '/apis')
        return { status: 200, body: { kind: 'APIGroupDiscoveryList', items: [] } };
      if (path === `${RBAC}/clusterroles`) return list([role]);
      if (path === `${RBAC}/clusterrolebindings`)
        return list([{ metadata: { name: 'wide' }, roleRef, subjects: [{ kind: 'User', name: 'wide' }] }]);
      if (path === `${RBAC}/namespaces/default/roles`) return list([]);
      if (path === `${RBAC}/namespaces/default/rolebindings`)
        return list([
          { metadata: { name: 'local', namespace: 'default' }, roleRef, subjects: [{ kind: 'User', name: 'local' }] },
        ]);
      if (path === '/api/v1/namespaces/default')
        return { status: 200, body: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'default' } } };
      if (r.method === 'POST' && path.endsWith('accessreviews')) {
        reviews.push(r.body.spec);
        const self = path.endsWith('/selfsubjectaccessreviews');
        // The caller is "local": the RoleBinding's subject.
        const allowed = allows(self ? 'local' : r.body.spec.user, r.body.spec.resourceAttributes?.namespace);
        return { status: 201, body: { ...r.body, status: { allowed } } };
      }
      return { status: 404, body: { kind: 'Status', code: 404 } };
    };
  });
  after(() => api.close());

  it('auth can-i impersonate users alice -n default: asked cluster-wide, so the RoleBinding does not answer yes', async () => {
    reviews.length = 0;
    const answer = await canI(
      api.client,
      parseAccessQuery({ verb: 'impersonate', resource: 'users', name: 'alice' }),
      'default',
    );
    assert.deepEqual(reviews, [
      { resourceAttributes: { namespace: '', verb: 'impersonate', group: '', resource: 'users', name: 'alice' } },
    ]);
    assert.equal(answer.allowed, false);
    assert.deepEqual(answer.warnings, []);
  });

  it('auth who-can impersonate users alice -n default: only the ClusterRoleBinding subject, confirmed cluster-wide', async () => {
    reviews.length = 0;
    const found = await whoCan(
      api.client,
      parseWhoCanQuery({ verb: 'impersonate', resource: 'users', name: 'alice' }),
      { namespace: 'default', confirm: true },
    );
    assert.deepEqual(found.attributes, {
      resourceAttributes: { namespace: '', verb: 'impersonate', group: '', resource: 'users', name: 'alice' },
    });
    assert.deepEqual(
      found.subjects.map((s) => [s.kind, s.name, s.confirmed, s.confirmedIn]),
      [['User', 'wide', true, '']],
    );
    assert.deepEqual(found.warnings, []);
    assert.equal(
      api.seen.some((r) => r.url.includes('/namespaces/default/rolebindings')),
      false,
      'a cluster-scoped question reads no RoleBinding',
    );
  });
});
