// Access answers that must be the API server's own (issue 49): where fleet reads RBAC or rules reviews itself, what it
// says is compared with what the server decides (a SubjectAccessReview, and a real request where one can be made).
// 1. Virtual resources (users, groups, uids, userextras, signers) are cluster-scoped: a RoleBinding granting
//    `impersonate users` grants nothing, and `auth can-i` / `auth who-can` say so, as the impersonation filter does.
// 2. A non-resource URL only a RoleBinding "grants" is no grant (a URL request has no namespace): `auth diff` shows no
//    drift for it (and `auth rules` does not list it), while the same URL through a ClusterRoleBinding is a difference.
// 3. `*` on `*.*` through a RoleBinding is a namespace admin, not cluster-admin, in `auth rules` as in `auth whoami`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import yaml from 'js-yaml';

import type { RulesReview } from '../../src/access/rules.js';
import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import type { RulesDiff } from '../../src/commands/auth/diff.js';
import type { RulesReviewList } from '../../src/commands/auth/rules.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
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
const [m1, m2] = cp.members;
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

describe('non-resource URLs count only from ClusterRoleBindings (live)', () => {
  const differ = `${run}-differ`;
  const urls = { local: `/${run}-local`, wide: `/${run}-wide` };
  const files: Record<'m1' | 'm2', string> = { m1: '', m2: '' };
  let cert: CertUser;

  before(async () => {
    // member-1 only: one URL through a RoleBinding (a ClusterRole may be bound in a namespace), one through a
    // ClusterRoleBinding. member-2 grants the certificate user nothing of its own.
    await apply(m1, [
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: `${differ}-local` },
        rules: [{ nonResourceURLs: [urls.local], verbs: ['get'] }],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: `${differ}-wide` },
        rules: [{ nonResourceURLs: [urls.wide], verbs: ['get'] }],
      },
      {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: differ, namespace: 'default' },
        roleRef: roleRef(`${differ}-local`),
        subjects: [user(differ)],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: differ },
        roleRef: roleRef(`${differ}-wide`),
        subjects: [user(differ)],
      },
    ]);
    cleanup.push(
      { server: m1, args: ['clusterrolebinding', differ] },
      { server: m1, args: ['rolebinding', '-n', 'default', differ] },
      { server: m1, args: ['clusterrole', `${differ}-local`, `${differ}-wide`] },
    );
    cert = await createCertUser(m1, { user: differ });
    files.m1 = cert.kubeconfigPath;
    files.m2 = (await createCertUser(m2, { user: differ })).kubeconfigPath;
  });

  it('the API server: the URL of the RoleBinding is denied on member-1, the ClusterRoleBinding one allowed; real requests agree', async () => {
    const attrs = (path: string) => ({ nonResourceAttributes: { path, verb: 'get' } });
    assert.equal(await sar(m1, differ, attrs(urls.local)), false);
    assert.equal(await sar(m1, differ, attrs(urls.wide)), true);
    for (const path of Object.values(urls)) assert.equal(await sar(m2, differ, attrs(path)), false);
    // Authorization comes before routing: a denied path is 403, an allowed one that serves nothing 404.
    const get = (path: string) =>
      apiRequest({ url: m1.url, caFile: m1.caFile, certFile: cert.certFile, keyFile: cert.keyFile, path });
    assert.equal((await get(urls.local)).status, 403);
    assert.equal((await get(urls.wide)).status, 404);
    for (const [file, server] of [
      [files.m1, m1],
      [files.m2, m2],
    ] as const) {
      for (const path of Object.values(urls)) {
        const res = await runFleet(['auth', 'can-i', 'get', path, '--kubeconfig', file, '-o', 'json']);
        assert.equal(
          res.json<AccessReviewList>().items[0].allowed,
          await sar(server, differ, attrs(path)),
          `${server.name} ${path}`,
        );
      }
    }
  });

  it('auth diff: the ClusterRoleBinding URL is the one difference; the RoleBinding URL, which no cluster allows, is none', async () => {
    const res = await runFleet([
      'auth',
      'diff',
      '--all',
      '-n',
      'default',
      '--kubeconfig',
      `${files.m1}:${files.m2}`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<RulesDiff>();
    assert.equal(out.drift, true);
    const [one, two] = out.items;
    assert.deepEqual(
      one.nonResourceRules?.filter((r) => r.url.startsWith(`/${run}`)),
      [{ url: urls.wide, verbs: ['get'] }],
    );
    assert.deepEqual(one.extra, { rules: [], nonResourceRules: [{ url: urls.wide, verbs: ['get'] }] });
    assert.deepEqual(one.missing, { rules: [], nonResourceRules: [] });
    assert.deepEqual(two.extra, { rules: [], nonResourceRules: [] });
    assert.deepEqual(two.missing, { rules: [], nonResourceRules: [{ url: urls.wide, verbs: ['get'] }] });
  });

  it('auth rules lists the URL the authorizer applies, not the one of the RoleBinding', async () => {
    const res = await runFleet(['auth', 'rules', '-n', 'default', '--kubeconfig', files.m1, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const item = res.json<RulesReviewList>().items[0] as RulesReview;
    const listed = new Set(item.nonResourceRules.flatMap((r) => r.nonResourceURLs));
    for (const path of Object.values(urls))
      assert.equal(listed.has(path), await sar(m1, differ, { nonResourceAttributes: { path, verb: 'get' } }), path);
  });
});

describe('risk labels of cluster-scoped power come from cluster-wide grants only (live)', () => {
  const ns = `${run}-team`;
  const names = { nsAdmin: `${run}-nsadmin`, admin: `${run}-admin` };
  const certs: Partial<Record<'nsAdmin' | 'admin', CertUser>> = {};

  before(async () => {
    await apply(m1, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      // cluster-admin bound in one namespace: everything there, nothing cluster-wide (docs/access.md: a namespace admin).
      {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: names.nsAdmin, namespace: ns },
        roleRef: roleRef('cluster-admin'),
        subjects: [user(names.nsAdmin)],
      },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: names.admin },
        roleRef: roleRef('cluster-admin'),
        subjects: [user(names.admin)],
      },
    ]);
    cleanup.push({ server: m1, args: ['clusterrolebinding', names.admin] }, { server: m1, args: ['namespace', ns] });
    certs.nsAdmin = await createCertUser(m1, { user: names.nsAdmin });
    certs.admin = await createCertUser(m1, { user: names.admin });
  });

  const all = (namespace: string) => ({ resourceAttributes: { namespace, verb: '*', group: '*', resource: '*' } });
  const nodesProxy = { resourceAttributes: { verb: 'get', group: '', resource: 'nodes', subresource: 'proxy' } };
  const csrApproval = {
    resourceAttributes: {
      verb: 'update',
      group: 'certificates.k8s.io',
      resource: 'certificatesigningrequests',
      subresource: 'approval',
    },
  };
  const approveSigner = {
    resourceAttributes: {
      verb: 'approve',
      group: 'certificates.k8s.io',
      resource: 'signers',
      name: 'kubernetes.io/kube-apiserver-client',
    },
  };

  for (const who of ['nsAdmin', 'admin'] as const) {
    it(`${who}: auth rules -n NS labels what the SubjectAccessReviews allow, and auth whoami agrees`, async () => {
      const res = await runFleet(['auth', 'rules', '-n', ns, '--kubeconfig', certs[who]!.kubeconfigPath, '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const item = res.json<RulesReviewList>().items[0] as RulesReview;
      const codes = new Set(item.risks.map((r) => r.code));
      const username = names[who];
      const clusterWide = await sar(m1, username, all(''));
      const inNamespace = await sar(m1, username, all(ns));
      assert.equal(inNamespace, true, 'both may do everything in the namespace');
      assert.equal(clusterWide, who === 'admin');
      assert.equal(codes.has('cluster-admin'), clusterWide, 'cluster-admin');
      assert.equal(codes.has('namespace-admin'), inNamespace && !clusterWide, 'namespace-admin');
      assert.equal(codes.has('nodes-proxy'), await sar(m1, username, nodesProxy), 'nodes-proxy');
      assert.equal(
        codes.has('csr-approval'),
        (await sar(m1, username, csrApproval)) || (await sar(m1, username, approveSigner)),
        'csr-approval',
      );
      // What is namespaced is still named: reading Secrets in the namespace is real power.
      assert.equal(codes.has('read-secrets'), true);
      assert.ok(
        item.risks.every((r) => r.scope === (clusterWide ? 'cluster' : 'namespace')),
        JSON.stringify(item.risks),
      );

      const whoami = await runFleet(['auth', 'whoami', '--kubeconfig', certs[who]!.kubeconfigPath, '-o', 'json']);
      assert.equal(whoami.code, 0, whoami.stderr);
      const warned = whoami.json<WhoAmIList>().items[0].warnings.some((w) => w.code === 'cluster-admin');
      assert.equal(warned, codes.has('cluster-admin'), 'auth rules and auth whoami agree on cluster-admin');

      const table = await runFleet(['auth', 'rules', '-n', ns, '--kubeconfig', certs[who]!.kubeconfigPath]);
      const label = clusterWide ? 'cluster-admin' : 'namespace-admin';
      assert.match(table.stdout, new RegExp(`\\s\\*\\.\\*\\s+\\[\\]\\s+\\[\\]\\s+\\[\\*\\]\\s+${label}$`, 'm'));
      assert.match(table.stderr, new RegExp(`^risk: .* \\(namespace ${ns}\\): ${label}`, 'm'));
    });
  }
});
