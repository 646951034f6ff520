// Access answers that must be the API server's own (issue 49): where fleet reads RBAC or rules reviews itself, what it
// says is compared with what the server decides (a SubjectAccessReview, and a real request where one can be made).
// 1. Virtual resources (users, groups, uids, userextras, signers) are cluster-scoped: a RoleBinding granting
//    `impersonate users` grants nothing, and `auth can-i` / `auth who-can` say so, as the impersonation filter does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import yaml from 'js-yaml';

import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import type { WhoCanList } from '../../src/commands/auth/who-can.js';
import { runFleet } from '../support/cli.js';
import {
  type CertUser,
  type ServerState,
  apiRequest,
  applyYaml,
  createCertUser,
  kubectlResult,
  loadControlPlane,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const [m1] = cp.members;
const run = uniqueName('exact');
const RBAC = 'rbac.authorization.k8s.io/v1';
const roleRef = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });

type Attributes = { resourceAttributes: Record<string, string> } | { nonResourceAttributes: Record<string, string> };

/** The API server's own answer for a user (a SubjectAccessReview, made as the admin). */
async function sar(server: ServerState, username: string, attributes: Attributes): Promise<boolean> {
  const res = await apiRequest({
    url: server.url,
    caFile: server.caFile,
    certFile: cp.admin.certFile,
    keyFile: cp.admin.keyFile,
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: username, ...attributes },
    },
  });
  assert.equal(res.status, 201, res.body);
  return (JSON.parse(res.body) as { status: { allowed?: boolean } }).status.allowed === true;
}

const apply = (server: ServerState, docs: object[]) => applyYaml(server, docs.map((d) => yaml.dump(d)).join('---\n'));

// Cluster-wide objects of this file, removed afterwards so later files and runs do not see them.
const cleanup: Array<{ server: ServerState; args: string[] }> = [];
after(async () => {
  for (const c of cleanup.reverse())
    await kubectlResult(c.server, ['delete', ...c.args, '--ignore-not-found', '--wait=false']);
});

describe('virtual resources are cluster-scoped (live)', () => {
  const alice = `${run}-alice`;
  const signer = `example.com/${run}`;
  const names = { local: `${run}-local`, wide: `${run}-wide` };
  const certs: Partial<Record<'local' | 'wide', CertUser>> = {};
  // Each question: fleet's arguments (RESOURCE as typed, NAME, --subresource) and the attributes the server checks.
  const questions: Array<{ args: string[]; attributes: Record<string, string> }> = [
    {
      args: ['impersonate', 'users', alice],
      attributes: { verb: 'impersonate', group: '', resource: 'users', name: alice },
    },
    {
      args: ['impersonate', 'groups', `${run}-devs`],
      attributes: { verb: 'impersonate', group: '', resource: 'groups', name: `${run}-devs` },
    },
    {
      args: ['impersonate', 'uids', 'u-1'],
      attributes: { verb: 'impersonate', group: 'authentication.k8s.io', resource: 'uids', name: 'u-1' },
    },
    {
      args: ['impersonate', 'userextras', 'team', '--subresource', 'scopes'],
      attributes: {
        verb: 'impersonate',
        group: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: 'scopes',
        name: 'team',
      },
    },
    {
      args: ['approve', 'signers', signer],
      attributes: { verb: 'approve', group: 'certificates.k8s.io', resource: 'signers', name: signer },
    },
  ];

  before(async () => {
    const role = `${run}-impersonator`;
    await apply(m1, [
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: role },
        rules: [
          { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: [alice] },
          { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: [`${run}-devs`] },
          { apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras/scopes'], verbs: ['impersonate'] },
          { apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: ['approve'], resourceNames: [signer] },
        ],
      },
      // local: a RoleBinding in default, which the impersonation filter never consults.
      {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: names.local, namespace: 'default' },
        roleRef: roleRef(role),
        subjects: [user(names.local)],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: names.wide },
        roleRef: roleRef(role),
        subjects: [user(names.wide)],
      },
    ]);
    cleanup.push(
      { server: m1, args: ['clusterrolebinding', names.wide] },
      { server: m1, args: ['rolebinding', '-n', 'default', names.local] },
      { server: m1, args: ['clusterrole', role] },
    );
    certs.local = await createCertUser(m1, { user: names.local });
    certs.wide = await createCertUser(m1, { user: names.wide });
  });

  it('the API server: the RoleBinding grants nothing, the ClusterRoleBinding everything asked; a real impersonation agrees', async () => {
    for (const q of questions) {
      assert.equal(await sar(m1, names.local, { resourceAttributes: q.attributes }), false, q.args.join(' '));
      assert.equal(await sar(m1, names.wide, { resourceAttributes: q.attributes }), true, q.args.join(' '));
    }
    // The request itself, as kubectl --as sends it: refused for impersonation at the cluster scope with the
    // RoleBinding's credential; with the ClusterRoleBinding's it is made as alice (who may not list namespaces).
    const asAlice = (who: 'local' | 'wide') =>
      kubectlResult(m1, ['get', 'namespaces', '--as', alice], { kubeconfig: certs[who]!.kubeconfigPath });
    const refused = await asAlice('local');
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      new RegExp(`User "${names.local}" cannot impersonate resource "users" in API group "" at the cluster scope`),
    );
    const impersonated = await asAlice('wide');
    assert.notEqual(impersonated.code, 0);
    assert.match(impersonated.stderr, new RegExp(`User "${alice}" cannot list resource "namespaces"`));
  });

  it('auth can-i (-n default) answers as the SubjectAccessReview with no namespace does, for each resource', async () => {
    for (const q of questions) {
      for (const who of ['local', 'wide'] as const) {
        const res = await runFleet([
          'auth',
          'can-i',
          ...q.args,
          '-n',
          'default',
          '--kubeconfig',
          certs[who]!.kubeconfigPath,
          '-o',
          'json',
        ]);
        const out = res.json<AccessReviewList>();
        const [item] = out.items;
        const expected = await sar(m1, names[who], { resourceAttributes: q.attributes });
        assert.equal(item.allowed, expected, `${who}: fleet auth can-i ${q.args.join(' ')} -n default`);
        assert.equal(res.code, expected ? 0 : 1);
        // Asked as the server asks it: cluster-wide, in the resource's own group, and known (no warning).
        assert.deepEqual(item.attributes, { resourceAttributes: { namespace: '', ...q.attributes } });
        assert.deepEqual(item.warnings, []);
      }
    }
  });

  it('auth who-can (-n default) reports exactly the subjects the SubjectAccessReview allows, confirmed cluster-wide', async () => {
    for (const q of questions) {
      const res = await runFleet([
        'auth',
        'who-can',
        ...q.args,
        '-n',
        'default',
        '--kubeconfig',
        m1.kubeconfig,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const [item] = res.json<WhoCanList>().items;
      const ours = (item.subjects ?? []).filter((s) => s.name === names.local || s.name === names.wide);
      for (const who of ['local', 'wide'] as const) {
        const allowed = await sar(m1, names[who], { resourceAttributes: q.attributes });
        const reported = ours.find((s) => s.name === names[who]);
        assert.equal(reported !== undefined, allowed, `${who}: fleet auth who-can ${q.args.join(' ')} -n default`);
        if (reported) assert.deepEqual([reported.confirmed, reported.confirmedIn], [true, '']);
      }
    }
  });
});
