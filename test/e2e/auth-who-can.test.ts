// fleet auth who-can against the real control plane. A generated RBAC corpus (Roles and ClusterRoles with wildcards,
// resourceNames, subresources, `*/scale`, non-resource URLs and an aggregated ClusterRole; RoleBindings and
// ClusterRoleBindings to users, groups and ServiceAccounts in several namespaces) is queried, and every answer is checked
// against the authorizer itself: each reported subject must be allowed by a SubjectAccessReview in the namespace of
// each of its grants, and every corpus subject not reported must be denied. The number of agreeing reviews is printed.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import yaml from 'js-yaml';

import type { WhoCanList } from '../../src/commands/auth/who-can.js';
import { runFleet } from '../support/cli.js';
import {
  apiRequest,
  applyYaml,
  createCertUser,
  kubectl,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';
import { grant } from '../support/rbac.js';
import { seededRandom } from '../support/random.js';

const cp = loadControlPlane();
const hub = cp.hub;
const RBAC = 'rbac.authorization.k8s.io/v1';
const run = uniqueName('whocan');
const namespaces = [`${run}-a`, `${run}-b`, `${run}-c`];

type Subject = { kind: 'User' | 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };
interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

// A fixed seed (seededRandom): the corpus is the same on every run (the names differ), so a disagreement can be reproduced.
const random = seededRandom(24);
const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
const some = <T>(xs: T[], max: number): T[] => {
  const n = 1 + Math.floor(random() * max);
  return [...new Set(Array.from({ length: n }, () => pick(xs)))];
};

const RESOURCE_RULES: Rule[] = [
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
  { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] },
  { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update'], resourceNames: ['cfg-1', 'cfg-2'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['*'] },
  { apiGroups: ['*'], resources: ['*'], verbs: ['get'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'delete'] },
  { apiGroups: ['apps', 'extensions'], resources: ['*/scale'], verbs: ['update', 'patch'] },
  { apiGroups: [''], resources: ['services'], verbs: ['*'], resourceNames: ['web'] },
  { apiGroups: [''], resources: ['*'], verbs: ['delete'] },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/status'], verbs: ['update'] },
];
const CLUSTER_RULES: Rule[] = [
  ...RESOURCE_RULES,
  { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'get'] },
  { nonResourceURLs: [`/${run}-healthz`], verbs: ['get'] },
  { nonResourceURLs: [`/${run}/*`], verbs: ['get', 'post'] },
];

const users = Array.from({ length: 6 }, (_, i) => `${run}-user-${i}`);
const groups = Array.from({ length: 3 }, (_, i) => `${run}-group-${i}`);
const sas = namespaces.flatMap((ns) => [0, 1].map((i) => ({ ns, name: `sa-${i}` })));
const candidates: Subject[] = [
  ...users.map((name) => ({ kind: 'User' as const, name })),
  ...groups.map((name) => ({ kind: 'Group' as const, name })),
  ...sas.map((s) => ({ kind: 'ServiceAccount' as const, name: s.name, namespace: s.ns })),
  { kind: 'User', name: `${run}-nobody` },
];

function randomSubjects(bindingNs?: string): object[] {
  return some([0, 1, 2, 3, 4, 5, 6, 7], 3).map((i) => {
    if (i < 3) return { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: pick(users) };
    if (i < 5) return { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: pick(groups) };
    const sa = pick(sas);
    // A RoleBinding's ServiceAccount without a namespace means the binding's own: the authorizer's rule, tested too.
    if (bindingNs && sa.ns === bindingNs && i === 7) return { kind: 'ServiceAccount', name: sa.name };
    return { kind: 'ServiceAccount', name: sa.name, namespace: sa.ns };
  });
}

function corpus(): object[] {
  const docs: object[] = [];
  for (const ns of namespaces) docs.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const clusterRoles = Array.from({ length: 5 }, (_, i) => `${run}-cr-${i}`);
  clusterRoles.forEach((name) =>
    docs.push({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules: some(CLUSTER_RULES, 3) }),
  );
  // An aggregated ClusterRole: kube-controller-manager fills its rules from the two labelled sources.
  const agg = `${run}-aggregated`;
  docs.push({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: agg },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'fleet.test/aggregate-to': run } }] },
    rules: [],
  });
  for (const i of [0, 1]) {
    docs.push({
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: { name: `${agg}-src-${i}`, labels: { 'fleet.test/aggregate-to': run } },
      rules: [RESOURCE_RULES[i * 5 + 1]],
    });
  }
  for (const name of [...clusterRoles.slice(0, 3), agg]) {
    docs.push({
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: { name: `${name}-crb` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: randomSubjects(),
    });
  }
  for (const ns of namespaces) {
    const roles = [0, 1, 2].map((i) => `role-${i}`);
    roles.forEach((name) =>
      docs.push({ apiVersion: RBAC, kind: 'Role', metadata: { name, namespace: ns }, rules: some(RESOURCE_RULES, 3) }),
    );
    for (let i = 0; i < 4; i++) {
      const toCluster = i === 3 || random() < 0.25;
      const roleRef = toCluster
        ? { kind: 'ClusterRole', name: pick([...clusterRoles, agg]) }
        : { kind: 'Role', name: roles[i % 3] };
      docs.push({
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: `rb-${i}`, namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
        subjects: randomSubjects(ns),
      });
    }
  }
  return docs;
}

const admin = { url: hub.url, caFile: hub.caFile, certFile: cp.admin.certFile, keyFile: cp.admin.keyFile };

type Attributes = { resourceAttributes: object } | { nonResourceAttributes: object };

async function sar(subject: Subject, attributes: Attributes): Promise<boolean> {
  const who =
    subject.kind === 'Group'
      ? { groups: [subject.name] }
      : subject.kind === 'ServiceAccount'
        ? { user: `system:serviceaccount:${subject.namespace}:${subject.name}` }
        : { user: subject.name };
  const res = await apiRequest({
    ...admin,
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { ...who, ...attributes } },
  });
  assert.equal(res.status, 201, res.body);
  return JSON.parse(res.body).status.allowed === true;
}

const key = (s: { kind: string; name: string; namespace?: string }) => `${s.kind}/${s.namespace ?? ''}/${s.name}`;

async function mapLimit<T, R>(xs: T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await fn(xs[i]);
      }
    }),
  );
  return out;
}

before(async () => {
  await applyYaml(
    hub,
    corpus()
      .map((d) => yaml.dump(d))
      .join('---\n'),
  );
  // The aggregation controller fills the aggregated ClusterRole; wait until it holds both sources' rules.
  for (let i = 0; ; i++) {
    const res = await apiRequest({ ...admin, path: `/apis/${RBAC}/clusterroles/${run}-aggregated` });
    if ((JSON.parse(res.body).rules ?? []).length >= 2) break;
    if (i > 100) throw new Error('the aggregated ClusterRole was never filled');
    await new Promise((r) => setTimeout(r, 200));
  }
});

// The corpus is cluster-wide in part: removed afterwards so that later files (and later runs of this one) do not see it.
after(async () => {
  const crs = [
    ...Array.from({ length: 5 }, (_, i) => `${run}-cr-${i}`),
    `${run}-aggregated`,
    `${run}-aggregated-src-0`,
    `${run}-aggregated-src-1`,
  ];
  const crbs = [...Array.from({ length: 3 }, (_, i) => `${run}-cr-${i}-crb`), `${run}-aggregated-crb`];
  await kubectl(hub, ['delete', 'clusterrolebinding', ...crbs, '--ignore-not-found']);
  await kubectl(hub, ['delete', 'clusterrole', ...crs, '--ignore-not-found']);
  await kubectl(hub, ['delete', 'namespace', ...namespaces, '--ignore-not-found', '--wait=false']);
});

describe('fleet auth who-can (live)', () => {
  it('agrees with SubjectAccessReview over a generated RBAC corpus', async () => {
    const queries: string[][] = [];
    const targets = [
      'pods',
      'pods/exec',
      'pods/log',
      'configmaps',
      'secrets',
      'deployments.apps',
      'deployments.apps/scale',
      'deployments/status',
      'services',
      'replicasets.apps/scale',
    ];
    for (const target of targets) {
      for (const verb of ['get', 'list', 'create', 'update', 'delete', 'patch']) {
        if (random() < 0.45) continue;
        queries.push([verb, target, '-n', pick(namespaces)]);
      }
      queries.push([pick(['get', 'delete', 'update']), target, '--all-namespaces']);
    }
    queries.push(
      ['get', 'configmaps', 'cfg-1', '-n', namespaces[0]],
      ['update', 'configmaps', 'cfg-2', '-n', namespaces[1]],
      ['get', 'configmaps', 'other', '-n', namespaces[2]],
    );
    queries.push(['update', 'services', 'web', '-n', namespaces[0]], ['delete', 'services', 'web', '--all-namespaces']);
    queries.push(['list', 'nodes'], ['get', 'nodes', '-n', namespaces[0]]);
    // A Namespace object by name is filed under that namespace: its RoleBindings count, even with --all-namespaces.
    queries.push(
      ['get', 'namespaces', namespaces[0], '--all-namespaces'],
      ['delete', 'namespaces', namespaces[1]],
      ['list', 'namespaces'],
    );
    queries.push(
      ['get', `/${run}-healthz`],
      ['get', `/${run}/deep/path`],
      ['post', `/${run}/x`],
      ['put', `/${run}/x`],
      ['get', '/healthz'],
    );

    let agreed = 0;
    let reported = 0;
    let deniedChecked = 0;
    const disagreements: string[] = [];
    for (const q of queries) {
      const res = await runFleet([
        'auth',
        'who-can',
        ...q,
        '--no-confirm',
        '--kubeconfig',
        hub.kubeconfig,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, `${q.join(' ')}: ${res.stderr}`);
      const item = res.json<WhoCanList>().items[0];
      assert.ok(item.ok, q.join(' '));
      assert.equal(item.confirmation, 'skipped');
      const found = new Set(item.subjects!.map(key));
      // Each reported subject: allowed in the namespace of each of its grants (or the one asked about).
      const checks: Array<{ subject: Subject; attributes: Attributes; expect: boolean }> = [];
      for (const s of item.subjects!) {
        const subject = s as Subject;
        for (const where of new Set(s.grants.map((g) => g.namespace))) {
          const attributes: Attributes =
            'resourceAttributes' in item.attributes!
              ? {
                  resourceAttributes: {
                    ...item.attributes.resourceAttributes,
                    namespace: item.allNamespaces ? where : item.attributes.resourceAttributes.namespace,
                  },
                }
              : item.attributes!;
          checks.push({ subject, attributes, expect: true });
        }
      }
      // Every corpus subject not reported: denied in every namespace of the corpus and cluster-wide.
      for (const c of candidates.filter((c) => !found.has(key(c)))) {
        if ('nonResourceAttributes' in item.attributes!)
          checks.push({ subject: c, attributes: item.attributes, expect: false });
        else {
          const a = item.attributes!.resourceAttributes;
          const places = item.allNamespaces ? [...namespaces, ''] : [a.namespace];
          for (const ns of places)
            checks.push({ subject: c, attributes: { resourceAttributes: { ...a, namespace: ns } }, expect: false });
        }
      }
      const answers = await mapLimit(checks, 8, (c) => sar(c.subject, c.attributes));
      checks.forEach((c, i) => {
        if (answers[i] === c.expect) agreed++;
        else
          disagreements.push(
            `${q.join(' ')}: ${key(c.subject)} in ${JSON.stringify(c.attributes)}: who-can ${c.expect ? 'reported' : 'did not report'} it, SubjectAccessReview says ${answers[i] ? 'allowed' : 'denied'}`,
          );
        if (c.expect) reported++;
        else deniedChecked++;
      });
    }
    console.log(
      `who-can agreement: ${agreed} of ${agreed + disagreements.length} SubjectAccessReviews agree (${queries.length} queries, ${reported} reported-subject checks, ${deniedChecked} not-reported checks)`,
    );
    assert.deepEqual(disagreements, []);
    assert.ok(
      reported > 50 && deniedChecked > 200,
      `the corpus must exercise both sides (${reported} allowed, ${deniedChecked} denied)`,
    );
  });

  it('confirms every subject itself, names provenance for aggregated roles, wildcards and names, and says what it cannot see', async () => {
    // The aggregated ClusterRole is bound cluster-wide; its first source holds pods/exec create,get.
    const res = await runFleet([
      'auth',
      'who-can',
      'create',
      'pods/exec',
      '-n',
      namespaces[0],
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<WhoCanList>();
    assert.equal(out.kind, 'WhoCanList');
    assert.deepEqual(out.query, { verb: 'create', resource: 'pods', subresource: 'exec' });
    const item = out.items[0];
    assert.equal(item.confirmation, 'done');
    assert.ok(
      item.subjects!.every((s) => s.confirmed === true),
      'every subject confirmed by a SubjectAccessReview',
    );
    const viaAgg = item.subjects!.flatMap((s) => s.grants).find((g) => g.role.name === `${run}-aggregated`);
    assert.ok(viaAgg, 'the aggregated ClusterRole grants pods/exec');
    assert.equal(viaAgg.role.aggregated, true);
    assert.deepEqual(viaAgg.role.aggregatedFrom, [`${run}-aggregated-src-0`]);
    assert.deepEqual(viaAgg.rule, RESOURCE_RULES[1]);
    assert.deepEqual(
      item.notes.map((n) => n.code),
      ['system-masters', 'node-authorizer', 'other-authorizers'],
    );
    assert.ok(item.subjects!.some((s) => s.kind === 'Group' && s.name === 'system:masters'));

    // The table: provenance per grant, and the notes on stderr.
    const table = await runFleet([
      'auth',
      'who-can',
      'create',
      'pods/exec',
      '-n',
      namespaces[0],
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'wide',
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^CLUSTER\s+KIND\s+SUBJECT\s+NAMESPACE\s+BINDING\s+ROLE\s+RULE\s+CONFIRMED$/m);
    assert.match(
      table.stdout,
      new RegExp(
        `ClusterRoleBinding/${run}-aggregated-crb\\s+ClusterRole/${run}-aggregated \\(aggregated from ${run}-aggregated-src-0\\)\\s+create,get pods/exec\\s+yes`,
      ),
    );
    assert.match(table.stderr, /^note: .*: beyond these bindings: members of group system:masters/m);
    assert.match(table.stderr, /Node authorizer/);
    assert.match(table.stderr, /webhook/);

    // A name limited by resourceNames: cfg-1 is covered, another name is not.
    const named = (
      await runFleet([
        'auth',
        'who-can',
        'get',
        'configmaps',
        'cfg-1',
        '-n',
        namespaces[0],
        '--kubeconfig',
        hub.kubeconfig,
        '-o',
        'json',
      ])
    ).json<WhoCanList>();
    const other = (
      await runFleet([
        'auth',
        'who-can',
        'get',
        'configmaps',
        'other',
        '-n',
        namespaces[0],
        '--kubeconfig',
        hub.kubeconfig,
        '-o',
        'json',
      ])
    ).json<WhoCanList>();
    const rulesNamed = named.items[0].subjects!.flatMap((s) => s.grants.map((g) => g.rule));
    assert.ok(rulesNamed.every((r) => !r.resourceNames?.length || r.resourceNames.includes('cfg-1')));
    assert.ok(
      other.items[0].subjects!.flatMap((s) => s.grants.map((g) => g.rule)).every((r) => !r.resourceNames?.length),
    );

    // Non-resource URLs count ClusterRoleBindings only.
    const url = (
      await runFleet(['auth', 'who-can', 'get', '/healthz', '--kubeconfig', hub.kubeconfig, '-o', 'json'])
    ).json<WhoCanList>();
    assert.deepEqual(url.items[0].attributes, { nonResourceAttributes: { path: '/healthz', verb: 'get' } });
    assert.ok(url.items[0].subjects!.some((s) => s.kind === 'Group' && s.name === 'system:authenticated'));
    assert.ok(url.items[0].subjects!.every((s) => s.grants.every((g) => g.binding.kind === 'ClusterRoleBinding')));
  });

  it('-n of a namespace that does not exist: said on that cluster, exit 1; the cluster-wide grants are still listed', async () => {
    const missing = `${run}-nosuch`;
    const res = await runFleet([
      'auth',
      'who-can',
      'get',
      'pods',
      '-n',
      missing,
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const item = res.json<WhoCanList>().items[0];
    assert.equal(item.ok, true);
    assert.equal(item.namespaceExists, false);
    assert.ok(
      item.warnings.includes(`namespace "${missing}" does not exist: only ClusterRoleBindings grant anything in it`),
      item.warnings.join('\n'),
    );
    assert.ok(
      item.subjects!.length > 0 &&
        item.subjects!.every((s) => s.grants.every((g) => g.binding.kind === 'ClusterRoleBinding')),
    );
    const table = await runFleet(['auth', 'who-can', 'get', 'pods', '-n', missing, '--kubeconfig', hub.kubeconfig]);
    assert.equal(table.code, 1);
    assert.match(
      table.stderr,
      new RegExp(
        `^warning: .*: namespace "${missing}" does not exist: only ClusterRoleBindings grant anything in it$`,
        'm',
      ),
    );
    // A namespace that exists: no such field, no such warning.
    const there = await runFleet([
      'auth',
      'who-can',
      'get',
      'pods',
      '-n',
      namespaces[0],
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(there.code, 0, there.stderr);
    assert.equal(there.json<WhoCanList>().items[0].namespaceExists, undefined);
  });

  it('a caller who may not list RoleBindings nor create reviews: warnings, incomplete, exit 1; never a silent "nobody"', async () => {
    const name = uniqueName('rbac-reader');
    await grant(hub, {
      name,
      subject: { kind: 'User', name },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles', 'clusterrolebindings'],
          verbs: ['list'],
        },
      ],
    });
    const cert = await createCertUser(hub, { user: name });
    const res = await runFleet([
      'auth',
      'who-can',
      'list',
      'secrets',
      '-n',
      namespaces[0],
      '--kubeconfig',
      cert.kubeconfigPath,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const item = res.json<WhoCanList>().items[0];
    assert.equal(item.ok, true);
    assert.equal(item.incomplete, true);
    assert.ok(
      item.warnings.some((w) =>
        /^list rolebindings in namespace .*forbidden.*: subjects granted through them are not shown$/.test(w),
      ),
      item.warnings.join('\n'),
    );
    assert.equal(item.confirmation, 'failed');
    assert.match(item.confirmationError!, /subjectaccessreviews.*forbidden/);
    const table = await runFleet([
      'auth',
      'who-can',
      'list',
      'secrets',
      '-n',
      namespaces[0],
      '--kubeconfig',
      cert.kubeconfigPath,
    ]);
    assert.equal(table.code, 1);
    assert.match(table.stderr, /^warning: .*: list rolebindings in namespace/m);
    assert.match(table.stderr, /^warning: .*: the subjects are not confirmed: .*--no-confirm/m);

    // Nothing readable at all: the cluster fails, it does not answer "nobody".
    const nobody = await createCertUser(hub, { user: uniqueName('nobody') });
    const nothing = await runFleet([
      'auth',
      'who-can',
      'list',
      'secrets',
      '-n',
      namespaces[0],
      '--kubeconfig',
      nobody.kubeconfigPath,
      '-o',
      'json',
    ]);
    assert.equal(nothing.code, 1, nothing.stderr);
    const failed = nothing.json<WhoCanList>().items[0];
    assert.equal(failed.ok, false);
    assert.equal(failed.error!.kind, 'forbidden');
    assert.match(failed.error!.message, /^cannot read any RBAC binding: list clusterrolebindings: .*forbidden/);
  });

  it('the ways users name clusters: --kubeconfig, KUBECONFIG, a relative path, a symlink, fleet.yaml; no key printed', async () => {
    const dir = join(scratchDir(), `${run}-ways`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(hub.kubeconfig, join(dir, 'hub.kubeconfig'));
    symlinkSync(join(dir, 'hub.kubeconfig'), join(dir, 'link.kubeconfig'));
    writeFileSync(
      join(dir, 'fleet.yaml'),
      yaml.dump({
        kind: 'FleetConfig',
        providers: [{ name: 'files', type: 'file', kubeconfig: [join(dir, 'hub.kubeconfig')] }],
      }),
    );
    const q = ['auth', 'who-can', 'update', 'deployments.apps/scale', '-n', namespaces[1], '-o', 'json'];
    const runs = [
      await runFleet([...q, '--kubeconfig', join(dir, 'hub.kubeconfig')]),
      await runFleet(q, { env: { KUBECONFIG: join(dir, 'hub.kubeconfig') } }),
      await runFleet([...q, '--kubeconfig', 'hub.kubeconfig'], { cwd: dir }),
      await runFleet([...q, '--kubeconfig', join(dir, 'link.kubeconfig')]),
      // Named: found by itself in the working directory, a fleet.yaml may not name files (issue 38).
      await runFleet([...q, '--all'], { cwd: dir, env: { FLEET_CONFIG: 'fleet.yaml' } }),
    ];
    const key = readFileSync(cp.admin.keyFile, 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'));
    const expected = runs[0]
      .json<WhoCanList>()
      .items[0].subjects!.map((s) => `${s.kind}/${s.namespace ?? ''}/${s.name}`);
    assert.ok(expected.length > 0);
    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        r.json<WhoCanList>().items[0].subjects!.map((s) => `${s.kind}/${s.namespace ?? ''}/${s.name}`),
        expected,
      );
      for (const line of key)
        assert.ok(!r.stdout.includes(line) && !r.stderr.includes(line), 'the admin key was printed');
    }
  });

  it('usage errors: exit 2 before any cluster is touched', async () => {
    const bad = await runFleet(['auth', 'who-can', 'get', 'pods/exec/x', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^error: cannot read "pods\/exec\/x" as RESOURCE\/SUBRESOURCE$/m);
    const both = await runFleet([
      'auth',
      'who-can',
      'get',
      'pods',
      '-n',
      'x',
      '--all-namespaces',
      '--kubeconfig',
      '/nonexistent/kubeconfig',
    ]);
    assert.equal(both.code, 2);
  });
});
