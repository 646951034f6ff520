// The access differential (issue 49, item 4): fleet's answers against kubectl's own and the API server's, over a
// generated RBAC set on member-1. fast-check, with a fixed seed, writes Roles and ClusterRoles (wildcard verbs,
// resources and groups, resourceNames, subresources such as pods/log and deployments/scale, `*/scale`, non-resource
// URLs and prefixes, the virtual resources impersonation and signers use), two aggregated ClusterRoles with their
// labelled sources, and RoleBindings and ClusterRoleBindings to users, groups, ServiceAccounts (with and without a
// namespace) and a ServiceAccount group; then several hundred questions (identity, verb, resource as typed,
// subresource, name, namespace, or a URL), half at random, half aimed at a generated grant or just beside it.
//
// Each question is asked three ways: fleet (the in-process canI the CLI calls, impersonating with --as, --as-group and
// --as-uid, and a sample through bin/run.js), kubectl auth can-i of the control plane, and a SubjectAccessReview made
// as the admin with the request's own attributes (a cluster-scoped resource has no namespace; a Namespace object is
// filed under its name). The SubjectAccessReview is the oracle: fleet must equal it on every question; kubectl is a
// peer, and where it differs that is counted by kind of question and by what kubectl asked instead, not failed.
//
// Rule sets: fleet auth rules (in process, and a sample through the CLI) against kubectl auth can-i --list per
// identity and namespace: the same resource rules, fleet's URLs those kubectl lists less the ones only a RoleBinding
// "grants"; whether each rule set allows a question, checked against the SubjectAccessReview; and auth rules' risk
// findings against the requests they name. auth diff of member-1 against member-2 (which has none of the corpus):
// every difference is a request one authorizer allows and the other refuses, and every question member-1 alone allows
// is among them. Counts are printed at the end (after()); every object made carries a label and is deleted there.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import fc from 'fast-check';
import yaml from 'js-yaml';

import { parseAccessQuery, canI } from '../../src/access/can-i.js';
import { type NormalRules, clusterRules, diffRules } from '../../src/access/diff.js';
import { type RulesReview, rulesReview } from '../../src/access/rules.js';
import { selfSubjectReview } from '../../src/access/whoami.js';
import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import type { RulesDiff } from '../../src/commands/auth/diff.js';
import type { RulesReviewList } from '../../src/commands/auth/rules.js';
import { KubeClient } from '../../src/kube/client.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { loadMerged, resolveContext } from '../../src/kubeconfig/loading-rules.js';
import { runFleet } from '../support/cli.js';
import {
  type ServerState,
  apiRequest,
  applyYaml,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';
import { seededRandom } from '../support/random.js';
import {
  type Attributes,
  type PolicyRule,
  SubjectAccessReviews,
  mapLimit,
  parseKubectlList,
  resourceGrants,
  rulesAllow,
  urlGrants,
} from '../support/rbac-differential.js';

const SEED = 4904;
const QUERIES = 840;
const cp = loadControlPlane();
const m1 = cp.members[0];
const run = uniqueName('diff');
const RBAC = 'rbac.authorization.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** Every generated object carries it, so after() removes exactly this run's objects. */
const LABEL = 'fleet.test/differential';
const namespaces = ['a', 'b', 'c'].map((s) => `${run}-${s}`);
const users = [0, 1, 2, 3, 4, 5].map((i) => `${run}-u${i}`);
const groups = [0, 1, 2].map((i) => `${run}-g${i}`);
const serviceAccounts = namespaces.flatMap((ns) => ['sa-0', 'sa-1'].map((name) => ({ ns, name })));
const started = Date.now();

// ---------------------------------------------------------------------------------------------------------------------
// The RBAC set.

// Resources rules may name, per API group (subresources, `*` and `*/scale` among them; virtual resources too).
const GROUP_RESOURCES: Record<string, string[]> = {
  '': [
    'pods',
    'pods/log',
    'pods/exec',
    'configmaps',
    'secrets',
    'services',
    'serviceaccounts',
    'serviceaccounts/token',
    'namespaces',
    'nodes',
    'nodes/proxy',
    'users',
    'groups',
    '*',
    '*/scale',
  ],
  apps: [
    'deployments',
    'deployments/scale',
    'deployments/status',
    'statefulsets',
    'statefulsets/scale',
    '*',
    '*/scale',
  ],
  batch: ['jobs', 'cronjobs', '*'],
  [RBAC_GROUP]: ['roles', 'clusterroles', 'rolebindings', '*'],
  'authentication.k8s.io': ['uids', 'userextras/scopes', '*'],
  'certificates.k8s.io': ['certificatesigningrequests', 'certificatesigningrequests/approval', 'signers'],
  'example.com': ['widgets', '*'],
  '*': ['*', 'pods', 'deployments', '*/scale', 'pods/log', 'users'],
};
const RULE_VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'impersonate',
  'bind',
  'escalate',
  'approve',
  '*',
];
const RESOURCE_NAMES = ['n-1', 'n-2', 'web', 'alice', 'devs', 'sa-0', 'u-1', 'example.com/signer'];
const URLS = ['/fleet-diff-a', '/fleet-diff-b/*', '/fleet-diff-c', '/fleet-diff-c/sub', '/metrics', '/fleet-diff-*'];
const URL_VERBS = ['get', 'post', 'head', 'put', '*'];

const resourceRule: fc.Arbitrary<PolicyRule> = fc
  .subarray(Object.keys(GROUP_RESOURCES), { minLength: 1, maxLength: 2 })
  .chain((apiGroups) => {
    const pool = [...new Set(apiGroups.flatMap((g) => GROUP_RESOURCES[g]))];
    return fc.record({
      apiGroups: fc.constant(apiGroups),
      resources: fc.subarray(pool, { minLength: 1, maxLength: Math.min(3, pool.length) }),
      verbs: fc.subarray(RULE_VERBS, { minLength: 1, maxLength: 3 }),
      resourceNames: fc.oneof(
        { weight: 7, arbitrary: fc.constant([] as string[]) },
        { weight: 3, arbitrary: fc.subarray(RESOURCE_NAMES, { minLength: 1, maxLength: 2 }) },
      ),
    });
  });
const urlRule: fc.Arbitrary<PolicyRule> = fc.record({
  nonResourceURLs: fc.subarray(URLS, { minLength: 1, maxLength: 2 }),
  verbs: fc.subarray(URL_VERBS, { minLength: 1, maxLength: 2 }),
});
const roleRules = fc.array(resourceRule, { minLength: 1, maxLength: 3 });
const clusterRoleRules = fc.array(fc.oneof({ weight: 3, arbitrary: resourceRule }, { weight: 1, arbitrary: urlRule }), {
  minLength: 1,
  maxLength: 3,
});
const binding = fc.record({ role: fc.nat(), subjects: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) });
const plan = fc.sample(
  fc.record({
    roles: fc.array(fc.record({ ns: fc.nat(2), rules: roleRules }), { minLength: 12, maxLength: 12 }),
    clusterRoles: fc.array(clusterRoleRules, { minLength: 12, maxLength: 12 }),
    sources: fc.array(fc.record({ rules: clusterRoleRules, to: fc.constantFrom<number[]>([0], [1], [0, 1]) }), {
      minLength: 5,
      maxLength: 5,
    }),
    roleBindings: fc.array(fc.record({ ns: fc.nat(2), b: binding }), { minLength: 18, maxLength: 18 }),
    clusterRoleBindings: fc.array(binding, { minLength: 8, maxLength: 8 }),
  }),
  { seed: SEED, numRuns: 1 },
)[0];

type BindingSubject =
  | { kind: 'User' | 'Group'; apiGroup: string; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace?: string };
const userSubject = (name: string): BindingSubject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
const groupSubject = (name: string): BindingSubject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
/** Who a binding may name; in a RoleBinding, a ServiceAccount without a namespace is the binding's namespace's. */
const subjectPool = (bindingNs?: string): BindingSubject[] => [
  ...users.map(userSubject),
  ...groups.map(groupSubject),
  ...serviceAccounts.map((s) => ({ kind: 'ServiceAccount' as const, name: s.name, namespace: s.ns })),
  groupSubject(`system:serviceaccounts:${namespaces[0]}`),
  ...(bindingNs ? [{ kind: 'ServiceAccount' as const, name: 'sa-1' }] : []),
];
const subjectsOf = (picks: number[], bindingNs?: string) => {
  const pool = subjectPool(bindingNs);
  return [...new Set(picks.map((i) => i % pool.length))].map((i) => pool[i]);
};

const aggregators = [0, 1].map((i) => `${run}-agg-${i}`);
const aggLabel = (i: number) => `fleet.test/diff-agg-${i}`;
const clusterRoleNames = plan.clusterRoles.map((_, i) => `${run}-cr-${i}`);
const roleRef = (kind: 'Role' | 'ClusterRole', name: string) => ({ apiGroup: RBAC_GROUP, kind, name });
const meta = (name: string, namespace?: string, labels: Record<string, string> = {}) => ({
  name,
  ...(namespace ? { namespace } : {}),
  labels: { [LABEL]: run, ...labels },
});

function corpus(): { setup: object[]; rbac: object[] } {
  const setup: object[] = [
    ...namespaces.map((ns) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: meta(ns) })),
    ...serviceAccounts.map((s) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(s.name, s.ns) })),
  ];
  const rbac: object[] = [];
  const roles = plan.roles.map((r, i) => ({ ns: namespaces[r.ns], name: `${run}-role-${i}`, rules: r.rules }));
  for (const r of roles) rbac.push({ apiVersion: RBAC, kind: 'Role', metadata: meta(r.name, r.ns), rules: r.rules });
  plan.clusterRoles.forEach((rules, i) =>
    rbac.push({ apiVersion: RBAC, kind: 'ClusterRole', metadata: meta(clusterRoleNames[i]), rules }),
  );
  // Two aggregated ClusterRoles, one selecting by matchLabels, one by matchExpressions; kube-controller-manager fills
  // their rules from the labelled sources (one source feeds both).
  rbac.push(
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: meta(aggregators[0]),
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggLabel(0)]: run } }] },
    },
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: meta(aggregators[1]),
      aggregationRule: {
        clusterRoleSelectors: [{ matchExpressions: [{ key: aggLabel(1), operator: 'In', values: [run] }] }],
      },
    },
  );
  plan.sources.forEach((s, i) =>
    rbac.push({
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: meta(`${run}-src-${i}`, undefined, Object.fromEntries(s.to.map((t) => [aggLabel(t), run]))),
      rules: s.rules,
    }),
  );
  plan.roleBindings.forEach(({ ns: n, b }, i) => {
    const ns = namespaces[n];
    // A Role of the namespace, a generated or aggregated ClusterRole, or a built-in one (edit can impersonate
    // ServiceAccounts; cluster-admin bound in a namespace is a namespace admin).
    const refs = [
      ...roles.filter((r) => r.ns === ns).map((r) => roleRef('Role', r.name)),
      ...[...clusterRoleNames, ...aggregators, 'view', 'edit', 'cluster-admin'].map((c) => roleRef('ClusterRole', c)),
    ];
    rbac.push({
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(`${run}-rb-${i}`, ns),
      roleRef: refs[b.role % refs.length],
      subjects: subjectsOf(b.subjects, ns),
    });
  });
  plan.clusterRoleBindings.forEach((b, i) => {
    const refs = [...clusterRoleNames, ...aggregators, 'view'];
    rbac.push({
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: meta(`${run}-crb-${i}`),
      roleRef: roleRef('ClusterRole', refs[b.role % refs.length]),
      subjects: subjectsOf(b.subjects),
    });
  });
  // Fixed, beside the generated ones: the case this differential found in auth diff, minimised (a RoleBinding of
  // cluster-scoped grants, which no request can use, and one namespaced grant, which is real).
  rbac.push(
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: meta(`${run}-cluster-scoped`),
      rules: [
        {
          apiGroups: [''],
          resources: ['nodes', 'nodes/proxy', 'users', 'groups', 'pods'],
          verbs: ['get', 'impersonate'],
        },
        { apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: ['approve'] },
      ],
    },
    {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: meta(`${run}-rb-cluster-scoped`, namespaces[0]),
      roleRef: roleRef('ClusterRole', `${run}-cluster-scoped`),
      subjects: [userSubject(users[5])],
    },
  );
  return { setup, rbac };
}

// ---------------------------------------------------------------------------------------------------------------------
// Who is asked about.

interface Identity {
  label: string;
  /** --as, --as-group and --as-uid. */
  user: string;
  groups: string[];
  uid?: string;
  /** Who the impersonated request is (what the SubjectAccessReview names): the impersonation filter adds the groups
   * of a ServiceAccount when no group is given, and system:authenticated. */
  asServer: { user: string; groups: string[]; uid?: string };
}

function identity(label: string, user: string, asGroups: string[] = [], uid?: string): Identity {
  const sa = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  const extra = sa && asGroups.length === 0 ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`] : [];
  return {
    label,
    user,
    groups: asGroups,
    ...(uid ? { uid } : {}),
    asServer: { user, groups: [...asGroups, ...extra, 'system:authenticated'], ...(uid ? { uid } : {}) },
  };
}

const identities: Identity[] = [
  ...users.map((u, i) => identity(`user ${i}`, u)),
  ...groups.map((g, i) => identity(`group ${i}`, `${run}-member-${i}`, [g])),
  identity('user 0 with groups 1, 2', users[0], [groups[1], groups[2]]),
  ...serviceAccounts.map((s) => identity(`sa ${s.ns.slice(-1)}/${s.name}`, `system:serviceaccount:${s.ns}:${s.name}`)),
  // With a group given, the ServiceAccount groups are not added: the system:serviceaccounts:NS binding does not apply.
  identity('sa a/sa-0 with group 0', `system:serviceaccount:${serviceAccounts[0].ns}:${serviceAccounts[0].name}`, [
    groups[0],
  ]),
  identity('user 1 with a uid', users[1], [], 'uid-1'),
  identity('nobody', `${run}-nobody`),
];

// ---------------------------------------------------------------------------------------------------------------------
// The questions.

type QueryClass =
  | 'namespaced'
  | 'cluster-scoped'
  | 'wildcard'
  | 'all-namespaces'
  | 'url'
  | 'virtual (cluster-scoped)'
  | 'virtual (serviceaccounts)'
  | 'namespace object';

/** A resource as typed, and what it is on the server (written here, not taken from fleet's discovery). */
interface TypedResource {
  typed: string[];
  group: string;
  resource: string;
  clusterScoped: boolean;
  subresources: string[];
  verbs: string[];
  names: string[];
  virtual?: boolean;
}

const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'bind', 'escalate'];
const NAMES = ['n-1', 'n-2', 'web', 'alice', 'sa-0'];
const R = (t: Partial<TypedResource> & Pick<TypedResource, 'typed' | 'group' | 'resource'>): TypedResource => ({
  clusterScoped: false,
  subresources: [],
  verbs: VERBS,
  names: NAMES,
  ...t,
});
const RESOURCES: TypedResource[] = [
  R({
    typed: ['pods', 'po', 'pod', 'Pod', 'pods.v1.'],
    group: '',
    resource: 'pods',
    subresources: ['log', 'exec', 'status'],
  }),
  R({ typed: ['configmaps', 'cm'], group: '', resource: 'configmaps' }),
  R({ typed: ['secrets', 'secret'], group: '', resource: 'secrets' }),
  R({ typed: ['services', 'svc'], group: '', resource: 'services' }),
  R({ typed: ['serviceaccounts', 'sa'], group: '', resource: 'serviceaccounts', subresources: ['token'] }),
  R({
    typed: ['deployments', 'deployments.apps', 'deploy', 'Deployment', 'deployments.v1.apps'],
    group: 'apps',
    resource: 'deployments',
    subresources: ['scale', 'status'],
  }),
  R({ typed: ['statefulsets.apps', 'sts'], group: 'apps', resource: 'statefulsets', subresources: ['scale'] }),
  R({ typed: ['jobs.batch', 'jobs'], group: 'batch', resource: 'jobs' }),
  R({ typed: ['cronjobs', 'cj'], group: 'batch', resource: 'cronjobs' }),
  R({ typed: ['roles.rbac.authorization.k8s.io', 'roles'], group: RBAC_GROUP, resource: 'roles' }),
  R({ typed: ['nodes', 'no'], group: '', resource: 'nodes', clusterScoped: true, subresources: ['proxy'] }),
  R({
    typed: ['clusterroles', 'clusterroles.rbac.authorization.k8s.io'],
    group: RBAC_GROUP,
    resource: 'clusterroles',
    clusterScoped: true,
  }),
  R({ typed: ['persistentvolumes', 'pv'], group: '', resource: 'persistentvolumes', clusterScoped: true }),
  R({
    typed: ['certificatesigningrequests', 'csr'],
    group: 'certificates.k8s.io',
    resource: 'certificatesigningrequests',
    clusterScoped: true,
    subresources: ['approval'],
    verbs: ['get', 'create', 'update', 'patch'],
  }),
  R({ typed: ['namespaces', 'ns'], group: '', resource: 'namespaces', clusterScoped: true, names: [] }),
  // `*` alone is every resource of every group (fleet's reading; kubectl asks about the core group only).
  R({ typed: ['*'], group: '*', resource: '*', subresources: ['scale', 'log'], verbs: [...VERBS, '*'] }),
  R({ typed: ['*.apps'], group: 'apps', resource: '*', subresources: ['scale'], verbs: [...VERBS, '*'] }),
  // Served by no API here: fleet asks as typed (with a warning), as the authorizer would for a CRD's requests.
  R({ typed: ['widgets.example.com'], group: 'example.com', resource: 'widgets' }),
  // Core first where two groups serve the name, as kubectl's REST mapper does.
  R({ typed: ['events', 'ev'], group: '', resource: 'events' }),
  R({ typed: ['events.events.k8s.io'], group: 'events.k8s.io', resource: 'events' }),
];
const VIRTUAL: TypedResource[] = [
  R({
    typed: ['users'],
    group: '',
    resource: 'users',
    clusterScoped: true,
    verbs: ['impersonate'],
    names: ['alice', users[0], 'bob'],
    virtual: true,
  }),
  R({
    typed: ['groups'],
    group: '',
    resource: 'groups',
    clusterScoped: true,
    verbs: ['impersonate'],
    names: ['devs', groups[0]],
    virtual: true,
  }),
  R({
    typed: ['serviceaccounts', 'sa'],
    group: '',
    resource: 'serviceaccounts',
    verbs: ['impersonate'],
    names: ['sa-0', 'sa-1'],
    virtual: true,
  }),
  R({
    typed: ['uids', 'uids.authentication.k8s.io'],
    group: 'authentication.k8s.io',
    resource: 'uids',
    clusterScoped: true,
    verbs: ['impersonate'],
    names: ['u-1', 'u-2'],
    virtual: true,
  }),
  R({
    typed: ['userextras', 'userextras.authentication.k8s.io'],
    group: 'authentication.k8s.io',
    resource: 'userextras',
    clusterScoped: true,
    subresources: ['scopes', 'team'],
    verbs: ['impersonate'],
    names: ['alice', 'x'],
    virtual: true,
  }),
  R({
    typed: ['signers', 'signers.certificates.k8s.io'],
    group: 'certificates.k8s.io',
    resource: 'signers',
    clusterScoped: true,
    verbs: ['approve', 'sign'],
    names: ['example.com/signer', 'kubernetes.io/kube-apiserver-client'],
    virtual: true,
  }),
];
const QUERY_URLS = [
  '/fleet-diff-a',
  '/fleet-diff-a/x',
  '/fleet-diff-b',
  '/fleet-diff-b/',
  '/fleet-diff-b/x/y',
  '/fleet-diff-c',
  '/fleet-diff-c/sub',
  '/fleet-diff-zz',
  '/metrics',
  '/healthz',
  '/version',
  '/api',
];
const QUERY_NAMESPACES = [...namespaces, namespaces[0], 'default', ''];

interface Query {
  who: number;
  verb: string;
  url?: string;
  res?: TypedResource;
  typed?: string;
  subresource?: string;
  name?: string;
  /** As typed: -n NS, or "" for --all-namespaces. */
  ns: string;
}

const optional = <T>(xs: T[], weight: number): fc.Arbitrary<T | undefined> =>
  xs.length === 0
    ? fc.constant(undefined)
    : fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...xs) });
const resourceQuery = (pool: TypedResource[], nameWeight: number) =>
  fc.constantFrom(...pool).chain((res) =>
    fc.record({
      res: fc.constant(res),
      typed: fc.constantFrom(...res.typed),
      verb: fc.constantFrom(...res.verbs),
      subresource: optional(res.subresources, 2),
      name: optional(res.names, nameWeight),
      ns: fc.constantFrom(...QUERY_NAMESPACES),
    }),
  );
const namespaceObject = fc.record({
  res: fc.constant(RESOURCES.find((r) => r.resource === 'namespaces')!),
  typed: fc.constantFrom('namespaces', 'ns', 'namespace'),
  verb: fc.constantFrom('get', 'update', 'delete', 'patch'),
  name: fc.constantFrom(...namespaces, 'default'),
  ns: fc.constantFrom(...namespaces, ''),
});
const urlQuery = fc.record({
  url: fc.constantFrom(...QUERY_URLS),
  verb: fc.constantFrom('get', 'post', 'head', 'put', 'delete'),
  ns: fc.constant(namespaces[0]),
});
const queryArb: fc.Arbitrary<Query> = fc
  .tuple(
    fc.nat(identities.length - 1),
    fc.oneof(
      { weight: 12, arbitrary: resourceQuery(RESOURCES, 3) },
      { weight: 4, arbitrary: resourceQuery(VIRTUAL, 0) },
      { weight: 1, arbitrary: namespaceObject },
      { weight: 3, arbitrary: urlQuery },
    ),
  )
  .map(([who, q]) => ({ who, ...q }));

const queryKey = (q: Query) => JSON.stringify([q.who, q.verb, q.url, q.typed, q.subresource, q.name, q.ns]);

const { setup: setupDocs, rbac: rbacDocs } = corpus();

/** One rule as bound to identities: where a random question would rarely land, a question derived from it does. */
interface PlannedGrant {
  who: number[];
  /** The RoleBinding's namespace; undefined for a ClusterRoleBinding. */
  ns?: string;
  rule: PolicyRule;
}

/** What built-in roles hold, in part (enough to aim questions at them; the SubjectAccessReview still decides). */
const BUILT_IN: Record<string, PolicyRule[]> = {
  edit: [
    { verbs: ['impersonate'], apiGroups: [''], resources: ['serviceaccounts'] },
    { verbs: ['create', 'update', 'patch'], apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'] },
  ],
  view: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps'], resources: ['pods', 'pods/log', 'deployments'] }],
  'cluster-admin': [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
};

function plannedGrants(): PlannedGrant[] {
  type Doc = {
    kind: string;
    metadata: { name: string; namespace?: string; labels: Record<string, string> };
    rules?: PolicyRule[];
    roleRef?: { kind: string; name: string };
    subjects?: BindingSubject[];
  };
  const docs = rbacDocs as Doc[];
  const rulesOf = (kind: string, name: string, ns?: string): PolicyRule[] => {
    const agg = aggregators.indexOf(name);
    if (kind === 'ClusterRole' && agg !== -1)
      return docs.filter((d) => d.metadata.labels[aggLabel(agg)] === run).flatMap((d) => d.rules ?? []);
    const doc = docs.find((d) => d.kind === kind && d.metadata.name === name && d.metadata.namespace === ns);
    return doc?.rules ?? BUILT_IN[name] ?? [];
  };
  const matches = (s: BindingSubject, who: Identity, bindingNs?: string) =>
    s.kind === 'ServiceAccount'
      ? who.asServer.user === `system:serviceaccount:${s.namespace ?? bindingNs}:${s.name}`
      : s.kind === 'User'
        ? who.asServer.user === s.name
        : who.asServer.groups.includes(s.name);
  const out: PlannedGrant[] = [];
  for (const d of docs) {
    if (!d.roleRef || !d.subjects) continue;
    const ns = d.kind === 'RoleBinding' ? d.metadata.namespace : undefined;
    const who = identities.flatMap((w, i) => (d.subjects!.some((s) => matches(s, w, ns)) ? [i] : []));
    if (who.length === 0) continue;
    for (const rule of rulesOf(d.roleRef.kind, d.roleRef.name, d.roleRef.kind === 'Role' ? ns : undefined))
      out.push({ who, ns, rule });
  }
  return out;
}

/**
 * A question at a planned grant, or just beside it: `c` picks the identity, verb, resource, group, name and namespace
 * from the rule (a wildcard becomes a concrete value), and `c[5]` sometimes changes one of them (another verb, name or
 * namespace) so that the question is a near miss.
 */
function derive(g: PlannedGrant, c: number[]): Query | undefined {
  const at = <T>(xs: readonly T[], k: number): T => xs[c[k] % xs.length];
  const who = at(g.who, 0);
  const mutate = c[5] % 8;
  const rule = g.rule;
  if (rule.nonResourceURLs) {
    const url = at(rule.nonResourceURLs, 2);
    const path = url === '*' ? '/fleet-diff-any' : url.endsWith('*') ? url.slice(0, -1) + at(['x', 'x/y', ''], 3) : url;
    const verb = mutate === 0 ? 'delete' : at(rule.verbs, 1) === '*' ? 'get' : at(rule.verbs, 1);
    return { who, verb, url: path, ns: namespaces[0] };
  }
  const [base, sub] = at(rule.resources ?? [], 2).split('/');
  const group = at(rule.apiGroups ?? [''], 3);
  const candidates = [...RESOURCES, ...VIRTUAL].filter(
    (e) => (base === '*' || e.resource === base) && (group === '*' || e.group === group),
  );
  if (candidates.length === 0) return undefined;
  const res = at(candidates, 4);
  const verbs = rule.verbs.includes('*') ? res.verbs : rule.verbs;
  const verb = mutate === 1 ? at(res.verbs, 1) : at(verbs, 1);
  const names = rule.resourceNames ?? [];
  let name: string | undefined = names.length > 0 ? at(names, 3) : c[3] % 3 === 0 ? at(res.names, 4) : undefined;
  if (mutate === 2) name = 'n-9';
  if (res.resource === 'namespaces') name = c[3] % 2 === 0 ? at([...namespaces, 'default'], 4) : undefined;
  let ns = g.ns ?? at(QUERY_NAMESPACES, 4);
  if (mutate === 3) ns = at(QUERY_NAMESPACES, 4);
  return {
    who,
    verb,
    res,
    typed: at(res.typed, 1),
    ...(sub && sub !== '*' ? { subresource: sub } : {}),
    ...(name ? { name } : {}),
    ns,
  };
}

const planned = plannedGrants();
const derivedArb = fc.tuple(fc.nat(planned.length - 1), fc.array(fc.nat(), { minLength: 6, maxLength: 6 }));
const queries: Query[] = [
  ...new Map(
    [
      ...fc.sample(queryArb, { seed: SEED + 1, numRuns: QUERIES / 2 }),
      ...fc
        .sample(derivedArb, { seed: SEED + 3, numRuns: QUERIES / 2 })
        .flatMap(([g, c]) => derive(planned[g], c) ?? []),
    ].map((q) => [queryKey(q), q]),
  ).values(),
];

function classOf(q: Query): QueryClass {
  if (q.url) return 'url';
  const r = q.res!;
  if (r.virtual) return r.clusterScoped ? 'virtual (cluster-scoped)' : 'virtual (serviceaccounts)';
  if (r.resource === 'namespaces' && q.name) return 'namespace object';
  if (r.clusterScoped) return 'cluster-scoped';
  if (r.resource === '*') return 'wildcard';
  if (q.ns === '') return 'all-namespaces';
  return 'namespaced';
}

/**
 * What the authorizer checks for the request the question is about: the URL, or the resource in the namespace typed
 * (all namespaces for ""), with no namespace for a cluster-scoped resource, and a Namespace object filed under its own
 * name (GET /api/v1/namespaces/x is in namespace x).
 */
function authorizerAttributes(q: Query): Attributes {
  if (q.url) return { nonResourceAttributes: { path: q.url, verb: q.verb } };
  const r = q.res!;
  const namespace = r.group === '' && r.resource === 'namespaces' && q.name ? q.name : r.clusterScoped ? '' : q.ns;
  return {
    resourceAttributes: {
      namespace,
      verb: q.verb,
      group: r.group,
      resource: r.resource,
      ...(q.subresource ? { subresource: q.subresource } : {}),
      ...(q.name ? { name: q.name } : {}),
    },
  };
}

/**
 * What kubectl 1.34's auth can-i asks instead (k8s.io/kubectl pkg/cmd/auth/cani.go), to explain where it differs:
 * always the namespace typed (-n, "" for --all-namespaces), whatever the resource's scope; `*` in the core group; and a
 * resource its REST mapper does not find (users, groups, uids, userextras, signers; `*.apps`; a group no API serves)
 * as the whole argument, in the core group.
 */
function kubectlAttributes(q: Query): Attributes {
  if (q.url) return authorizerAttributes(q);
  const r = q.res!;
  const unmapped =
    (r.virtual && r.resource !== 'serviceaccounts') ||
    r.group === 'example.com' ||
    (r.resource === '*' && q.typed !== '*');
  const [group, resource] = q.typed === '*' ? ['', '*'] : unmapped ? ['', q.typed!] : [r.group, r.resource];
  return {
    resourceAttributes: {
      namespace: q.ns,
      verb: q.verb,
      group,
      resource,
      ...(q.subresource ? { subresource: q.subresource } : {}),
      ...(q.name ? { name: q.name } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// The three ways of asking.

const admin = { url: m1.url, caFile: m1.caFile, certFile: cp.admin.certFile, keyFile: cp.admin.keyFile };

/** The oracle: a SubjectAccessReview for the identity as the server sees it, made as the admin (on member-1). */
const reviews = new Map<string, SubjectAccessReviews>();
function sar(who: Identity, attributes: Attributes, server: ServerState = m1): Promise<boolean> {
  let r = reviews.get(server.name);
  if (!r)
    reviews.set(server.name, (r = new SubjectAccessReviews({ ...admin, url: server.url, caFile: server.caFile })));
  return r.allowed({ ...who.asServer, ...attributes });
}

const clients = new Map<string, KubeClient>();
/** The admin's context on `server` (member-1 by default) impersonating the identity, as --as does. */
async function clientFor(who: Identity, server: ServerState = m1): Promise<KubeClient> {
  const key = `${server.name} ${who.label}`;
  let c = clients.get(key);
  if (!c) {
    const ctx = resolveContext(await loadMerged([server.kubeconfig], { explicit: true }), server.context);
    c = await KubeClient.connect(ctx, {
      timeoutMs: 20_000,
      clusterName: server.name,
      exec: new ExecCredentialRunner(),
      impersonate: { user: who.user, groups: who.groups, ...(who.uid ? { uid: who.uid } : {}) },
    });
    clients.set(key, c);
  }
  return c;
}

const impersonationArgs = (who: Identity) => [
  '--as',
  who.user,
  ...who.groups.flatMap((g) => ['--as-group', g]),
  ...(who.uid ? ['--as-uid', who.uid] : []),
];
const kubectlCache = () => {
  const dir = join(scratchDir(), `${run}-kubectl-cache`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

type KubectlAnswer = boolean | 'error';
async function kubectlCanI(q: Query, cacheDir: string): Promise<{ answer: KubectlAnswer; detail: string }> {
  const who = identities[q.who];
  const args = ['auth', 'can-i', '--cache-dir', cacheDir, q.verb];
  if (q.url) args.push(q.url);
  else {
    args.push(q.name ? `${q.typed}/${q.name}` : q.typed!);
    args.push(...(q.ns === '' ? ['--all-namespaces'] : ['-n', q.ns]));
    if (q.subresource) args.push('--subresource', q.subresource);
  }
  const r = await kubectlResult(m1, [...args, ...impersonationArgs(who)]);
  const out = r.stdout.trim();
  const answer: KubectlAnswer =
    r.code === 0 && out === 'yes' ? true : r.code === 1 && out.startsWith('no') ? false : 'error';
  return { answer, detail: `exit ${r.code}: ${out} ${r.stderr.trim()}`.trim() };
}

/** fleet auth can-i's arguments for the question (NAME as an argument or as RESOURCE/NAME, alternately). */
function fleetArgs(q: Query, i: number): string[] {
  const args = ['auth', 'can-i', q.verb];
  if (q.url) return [...args, q.url];
  const slashName = q.name !== undefined && !q.name.includes('/') && i % 2 === 0;
  args.push(slashName ? `${q.typed}/${q.name}` : q.typed!, ...(q.name && !slashName ? [q.name] : []));
  args.push(...(q.ns === '' ? ['--all-namespaces'] : ['-n', q.ns]));
  if (q.subresource) args.push('--subresource', q.subresource);
  return args;
}

const describeQuery = (q: Query) =>
  `${identities[q.who].label}: ${fleetArgs(q, 1).slice(2).join(' ')} (${JSON.stringify(authorizerAttributes(q))})`;

// ---------------------------------------------------------------------------------------------------------------------
// Risk findings of auth rules, as requests the authorizer can be asked about.

const resourceAttributes = (
  namespace: string,
  verb: string,
  group: string,
  resource: string,
  subresource?: string,
  name?: string,
): Attributes => ({
  resourceAttributes: {
    namespace,
    verb,
    group,
    resource,
    ...(subresource ? { subresource } : {}),
    ...(name ? { name } : {}),
  },
});
const everything = (ns: string) => resourceAttributes(ns, '*', '*', '*');
const CERTS = 'certificates.k8s.io';
const AUTHN = 'authentication.k8s.io';
/**
 * Resources (group/resource) with no namespace, written here from the API and not from fleet: the authorizer asks about
 * them with no namespace, so a RoleBinding never grants them (a Namespace object, filed under its own name, aside).
 */
const CLUSTER_SCOPED = new Set([
  '/nodes',
  '/persistentvolumes',
  '/namespaces',
  '/users',
  '/groups',
  `${RBAC_GROUP}/clusterroles`,
  `${RBAC_GROUP}/clusterrolebindings`,
  `${CERTS}/certificatesigningrequests`,
  `${CERTS}/signers`,
  `${AUTHN}/uids`,
  `${AUTHN}/userextras`,
]);

/**
 * The requests a finding on `rule` says are allowed, one of which must be: each verb the risk is about that the rule
 * grants, on each object it names (cluster-scoped resources and the impersonation of users, groups, uids and extras
 * with no namespace; the rest in the namespace reviewed). Undefined for the codes about how a rule is written
 * (wildcards), which are no request.
 */
function findingProbes(code: string, rule: PolicyRule, ns: string): Attributes[] | undefined {
  const names = (rule.resourceNames ?? []).length > 0 ? rule.resourceNames! : [undefined];
  const out: Attributes[] = [];
  const add = (namespace: string, verbs: string[], group: string, resource: string, sub?: string) => {
    for (const verb of rule.verbs.includes('*') ? verbs : verbs.filter((v) => rule.verbs.includes(v)))
      for (const name of names) out.push(resourceAttributes(namespace, verb, group, resource, sub, name));
  };
  switch (code) {
    case 'cluster-admin':
      return [everything('')];
    case 'namespace-admin':
      return [everything(ns)];
    case 'read-secrets':
      add(ns, ['get', 'list', 'watch'], '', 'secrets');
      break;
    case 'escalate':
      add(ns, ['escalate'], RBAC_GROUP, 'roles');
      add('', ['escalate'], RBAC_GROUP, 'clusterroles');
      break;
    case 'bind':
      add(ns, ['bind'], RBAC_GROUP, 'roles');
      add(ns, ['bind'], RBAC_GROUP, 'clusterroles');
      break;
    case 'impersonate':
      add('', ['impersonate'], '', 'users');
      add('', ['impersonate'], '', 'groups');
      add(ns, ['impersonate'], '', 'serviceaccounts');
      add('', ['impersonate'], AUTHN, 'uids');
      for (const r of rule.resources ?? [])
        if (r === '*' || r.startsWith('userextras'))
          add('', ['impersonate'], AUTHN, 'userextras', r.split('/')[1] ?? 'scopes');
      break;
    case 'create-token':
      add(ns, ['create'], '', 'serviceaccounts', 'token');
      break;
    case 'pods-exec':
      add(ns, ['create', 'get'], '', 'pods', 'exec');
      break;
    case 'nodes-proxy':
      add('', ['get', 'create', 'update', 'patch', 'delete'], '', 'nodes', 'proxy');
      break;
    case 'csr-approval':
      add('', ['update', 'patch'], CERTS, 'certificatesigningrequests', 'approval');
      add('', ['approve'], CERTS, 'signers');
      break;
    default:
      return undefined;
  }
  return out;
}

/** Powers the authorizer may allow on any object (no name): when one request of a code is allowed, auth rules names it. */
const powerProbes = (ns: string): Record<string, Attributes[]> => ({
  'cluster-admin': [everything('')],
  'namespace-admin': [everything(ns)],
  'read-secrets': ['get', 'list', 'watch'].map((v) => resourceAttributes(ns, v, '', 'secrets')),
  escalate: [
    resourceAttributes(ns, 'escalate', RBAC_GROUP, 'roles'),
    resourceAttributes('', 'escalate', RBAC_GROUP, 'clusterroles'),
  ],
  bind: [
    resourceAttributes(ns, 'bind', RBAC_GROUP, 'roles'),
    resourceAttributes(ns, 'bind', RBAC_GROUP, 'clusterroles'),
  ],
  impersonate: [
    resourceAttributes('', 'impersonate', '', 'users'),
    resourceAttributes('', 'impersonate', '', 'groups'),
    resourceAttributes(ns, 'impersonate', '', 'serviceaccounts'),
    resourceAttributes('', 'impersonate', AUTHN, 'uids'),
  ],
  'create-token': [resourceAttributes(ns, 'create', '', 'serviceaccounts', 'token')],
  'pods-exec': ['create', 'get'].map((v) => resourceAttributes(ns, v, '', 'pods', 'exec')),
  'nodes-proxy': ['get', 'create'].map((v) => resourceAttributes('', v, '', 'nodes', 'proxy')),
  'csr-approval': [
    resourceAttributes('', 'update', CERTS, 'certificatesigningrequests', 'approval'),
    resourceAttributes('', 'approve', CERTS, 'signers'),
  ],
});

// ---------------------------------------------------------------------------------------------------------------------

interface Answer {
  q: Query;
  attributes: Attributes;
  sar: boolean;
  fleet: boolean;
  fleetAttributes: unknown;
  kubectl: KubectlAnswer;
  kubectlDetail: string;
}

const counts: string[] = [];
let answers: Answer[] = [];
const rulesByIdentity = new Map<string, { fleet: RulesReview; kubectl: PolicyRule[] }>();
const RULES_NAMESPACES = [...namespaces, 'default'];
const rulesKey = (who: Identity, ns: string) => `${who.label} @ ${ns}`;

before(async () => {
  const [setup, rbac] = [setupDocs, rbacDocs];
  const dump = (docs: object[]) => docs.map((d) => yaml.dump(d)).join('---\n');
  await applyYaml(m1, dump(setup));
  await applyYaml(m1, dump(rbac));
  const ofKind = (kind: string) => (rbac as Array<{ kind: string }>).filter((d) => d.kind === kind).length;
  counts.push(
    `objects: ${rbac.length} RBAC (${['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].map((k) => `${ofKind(k)} ${k}s`).join(', ')}; 2 ClusterRoles aggregated from ${plan.sources.length} sources), ${namespaces.length} Namespaces, ${serviceAccounts.length} ServiceAccounts; seed ${SEED}`,
  );
  assert.ok(rbac.length >= 50, `${rbac.length} RBAC objects`);
  // kube-controller-manager fills each aggregated ClusterRole with the rules of its sources (as the server holds them);
  // wait until both hold every one.
  const rulesOf = async (name: string) => {
    const res = await apiRequest({ ...admin, path: `/apis/${RBAC}/clusterroles/${name}` });
    return ((JSON.parse(res.body) as { rules?: unknown[] }).rules ?? []).map((r) => JSON.stringify(r));
  };
  const sources = await Promise.all(plan.sources.map((_, i) => rulesOf(`${run}-src-${i}`)));
  const want = aggregators.map((_, a) => new Set(plan.sources.flatMap((s, i) => (s.to.includes(a) ? sources[i] : []))));
  for (let tries = 0; ; tries++) {
    const have = await Promise.all(aggregators.map(async (name) => new Set(await rulesOf(name))));
    if (want.every((w, a) => [...w].every((r) => have[a].has(r)))) break;
    if (tries > 150) throw new Error('the aggregated ClusterRoles were never filled');
    await new Promise((r) => setTimeout(r, 200));
  }
  // Each identity is who the SubjectAccessReviews say: the server's SelfSubjectReview of the impersonated client.
  for (const who of identities) {
    const info = await selfSubjectReview(await clientFor(who));
    assert.deepEqual(
      { user: info.username, groups: [...info.groups].sort(), uid: info.uid },
      { user: who.asServer.user, groups: [...who.asServer.groups].sort(), uid: who.asServer.uid ?? '' },
      who.label,
    );
  }
});

after(async () => {
  for (const r of reviews.values()) r.close();
  rmSync(join(scratchDir(), `${run}-kubectl-cache`), { recursive: true, force: true });
  const ns = namespaces.map((n) => `namespace/${n}`);
  await kubectlResult(m1, ['delete', 'clusterrolebindings,clusterroles', '-l', `${LABEL}=${run}`, '--wait=false']);
  await kubectlResult(m1, ['delete', ...ns, '--ignore-not-found', '--wait=false']);
  console.log(
    [
      `access differential on ${m1.name}: ${((Date.now() - started) / 1000).toFixed(1)} s, ${[...reviews.values()].reduce((n, r) => n + r.asked, 0)} SubjectAccessReviews`,
      ...counts,
    ].join('\n  '),
  );
});

describe('fleet, kubectl and the SubjectAccessReview on generated RBAC (live)', () => {
  it(`fleet auth can-i answers as the SubjectAccessReview on every question; kubectl's differences are counted`, async () => {
    const cacheDir = kubectlCache();
    // The oracle and fleet first (cheap), then kubectl (a process per question).
    const t0 = Date.now();
    const fast = await mapLimit(queries, 8, async (q) => {
      const who = identities[q.who];
      const attributes = authorizerAttributes(q);
      const query = parseAccessQuery({
        verb: q.verb,
        resource: q.url ?? q.typed!,
        name: q.name,
        subresource: q.subresource,
      });
      const [oracle, fleet] = await Promise.all([sar(who, attributes), canI(await clientFor(who), query, q.ns)]);
      return { q, attributes, sar: oracle, fleet: fleet.allowed, fleetAttributes: fleet.attributes };
    });
    const t1 = Date.now();
    const slow = await mapLimit(queries, 4, (q) => kubectlCanI(q, cacheDir));
    const t2 = Date.now();
    answers = fast.map((a, i) => ({ ...a, kubectl: slow[i].answer, kubectlDetail: slow[i].detail }));

    const yes = answers.filter((a) => a.sar).length;
    const byClass = new Map<string, { n: number; fleet: number; kubectl: number; yes: number }>();
    for (const a of answers) {
      const c = byClass.get(classOf(a.q)) ?? { n: 0, fleet: 0, kubectl: 0, yes: 0 };
      c.n++;
      if (a.fleet === a.sar) c.fleet++;
      if (a.kubectl === a.sar) c.kubectl++;
      if (a.sar) c.yes++;
      byClass.set(classOf(a.q), c);
    }
    const agree = (f: (a: Answer) => boolean) => `${answers.filter(f).length}/${answers.length}`;
    counts.push(
      `questions: ${answers.length} over ${identities.length} identities (${yes} allowed by the SubjectAccessReview, ${answers.length - yes} denied); SAR + fleet ${((t1 - t0) / 1000).toFixed(1)} s, kubectl ${((t2 - t1) / 1000).toFixed(1)} s`,
      `fleet/SAR agree ${agree((a) => a.fleet === a.sar)}; fleet asked the authorizer's own attributes ${agree((a) => isDeepStrictEqual(a.fleetAttributes, a.attributes))}`,
      `kubectl/SAR agree ${agree((a) => a.kubectl === a.sar)} (kubectl errors ${answers.filter((a) => a.kubectl === 'error').length}); kubectl/fleet agree ${agree((a) => a.kubectl === a.fleet)}`,
      ...[...byClass].map(
        ([c, n]) =>
          `  ${c}: ${n.n} questions, ${n.yes} allowed; fleet/SAR ${n.fleet}/${n.n}, kubectl/SAR ${n.kubectl}/${n.n}`,
      ),
    );
    // Where kubectl differs, which part of its question differs from the authorizer's, and whether a SubjectAccessReview
    // of kubectl's own question gives kubectl's answer (it asked another question right, or answered wrongly).
    const kubectlDiffers = answers.filter((a) => a.kubectl !== a.sar);
    const causes = new Map<string, number>();
    let explained = 0;
    for (const a of kubectlDiffers) {
      const asked = kubectlAttributes(a.q);
      const fieldsOf = (x: Attributes): Record<string, unknown> =>
        'resourceAttributes' in x ? { ...x.resourceAttributes } : { ...x.nonResourceAttributes };
      const [kubectls, oracles] = [fieldsOf(asked), fieldsOf(a.attributes)];
      const fields = Object.keys(oracles).filter((k) => kubectls[k] !== oracles[k]);
      const cause = `${classOf(a.q)}: kubectl's ${fields.join('+') || 'same question'}`;
      causes.set(cause, (causes.get(cause) ?? 0) + 1);
      if ((await sar(identities[a.q.who], asked)) === a.kubectl) explained++;
    }
    counts.push(
      `  kubectl/SAR differences by what kubectl asked differently: ${[...causes].map(([c, n]) => `${c} ${n}`).join('; ') || 'none'}; kubectl's own question, asked by SAR, gives kubectl's answer ${explained}/${kubectlDiffers.length}`,
    );
    for (const a of kubectlDiffers.slice(0, 4))
      counts.push(`  e.g. kubectl ${a.kubectl} where SAR ${a.sar}: ${describeQuery(a.q)}; kubectl ${a.kubectlDetail}`);

    assert.ok(answers.length >= 500, `${answers.length} questions`);
    assert.ok(
      yes >= answers.length / 8 && answers.length - yes >= answers.length / 8,
      `${yes} of ${answers.length} yes`,
    );
    const wrong = answers.filter((a) => a.fleet !== a.sar);
    assert.deepEqual(
      wrong.map((a) => `fleet ${a.fleet}, SAR ${a.sar}: ${describeQuery(a.q)}`),
      [],
      'fleet differs from the SubjectAccessReview',
    );
    const asked = answers.filter((a) => !isDeepStrictEqual(a.fleetAttributes, a.attributes));
    assert.deepEqual(
      asked.map((a) => `${describeQuery(a.q)}: fleet asked ${JSON.stringify(a.fleetAttributes)}`),
      [],
      'fleet asked other attributes than the authorizer checks',
    );
  });

  it('a sample through bin/run.js (--as, --as-group, -o json, exit codes) answers the same', async () => {
    assert.ok(answers.length > 0, 'the first test ran');
    // Every class of question, then an even spread of the rest: about 36 processes.
    const picked = new Map<string, Answer>();
    for (const a of answers)
      if (![...picked.values()].some((p) => classOf(p.q) === classOf(a.q))) picked.set(queryKey(a.q), a);
    for (let i = 0; i < answers.length && picked.size < 36; i += 23) picked.set(queryKey(answers[i].q), answers[i]);
    const sample = [...picked.values()];
    const results = await mapLimit(sample, 3, async (a, i) => {
      const res = await runFleet([
        ...fleetArgs(a.q, i),
        ...impersonationArgs(identities[a.q.who]),
        '--kubeconfig',
        m1.kubeconfig,
        '-o',
        'json',
      ]);
      const item = res.json<AccessReviewList>().items[0];
      return { a, allowed: item.allowed, code: res.code, attributes: item.attributes };
    });
    const bad = results.filter((r) => r.allowed !== r.a.sar || r.code !== (r.a.sar ? 0 : 1));
    counts.push(`fleet CLI/SAR agree ${results.length - bad.length}/${results.length} (sample through bin/run.js)`);
    assert.deepEqual(
      bad.map((r) => `CLI ${r.allowed} exit ${r.code}, SAR ${r.a.sar}: ${describeQuery(r.a.q)}`),
      [],
    );
    for (const r of results) assert.deepEqual(r.attributes, r.a.fleetAttributes, describeQuery(r.a.q));
  });

  it('auth rules against kubectl auth can-i --list, each rule set checked against the SubjectAccessReview', async () => {
    const cacheDir = kubectlCache();
    const pairs = identities.flatMap((who) => RULES_NAMESPACES.map((ns) => ({ who, ns })));
    await mapLimit(pairs, 4, async ({ who, ns }) => {
      const [fleet, listed] = await Promise.all([
        rulesReview(await clientFor(who), ns),
        kubectlResult(m1, [
          'auth',
          'can-i',
          '--list',
          '--no-headers',
          '--cache-dir',
          cacheDir,
          '-n',
          ns,
          ...impersonationArgs(who),
        ]),
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      const parsed = parseKubectlList(listed.stdout);
      assert.deepEqual(parsed.unread, [], 'every line of kubectl --list is read');
      rulesByIdentity.set(rulesKey(who, ns), { fleet, kubectl: parsed.rules });
    });

    const random = seededRandom(SEED + 2);
    let sameResources = 0;
    let urlSubset = 0;
    let kubectlOnlyUrls = 0;
    let kubectlOnlyDenied = 0;
    const urlChecks = { n: 0, fleet: 0, kubectl: 0 };
    const grantChecks = { n: 0, fleet: 0 };
    const problems: string[] = [];
    for (const { who, ns } of pairs) {
      const { fleet, kubectl } = rulesByIdentity.get(rulesKey(who, ns))!;
      const fleetResource = resourceGrants(fleet.resourceRules);
      const kubectlResource = resourceGrants(kubectl);
      if (isDeepStrictEqual([...fleetResource].sort(), [...kubectlResource].sort())) sameResources++;
      else problems.push(`${rulesKey(who, ns)}: resource rules differ from kubectl's`);
      const fleetUrls = urlGrants(fleet.nonResourceRules);
      const kubectlUrls = urlGrants(kubectl);
      if ([...fleetUrls].every((u) => kubectlUrls.has(u))) urlSubset++;
      else problems.push(`${rulesKey(who, ns)}: fleet lists URLs kubectl does not`);
      // Each URL either lists, probed with one of its verbs (a prefix with a path under it): the SubjectAccessReview
      // allows it exactly when the rule set allows it.
      for (const grant of new Set([...fleetUrls, ...kubectlUrls])) {
        const [verb, url] = grant.split(' ');
        const path = url === '*' ? '/fleet-diff-any' : url.endsWith('*') ? `${url.slice(0, -1)}probe` : url;
        const attributes: Attributes = { nonResourceAttributes: { path, verb: verb === '*' ? 'get' : verb } };
        const oracle = await sar(who, attributes);
        urlChecks.n++;
        if (rulesAllow(fleet.nonResourceRules, attributes) === oracle) urlChecks.fleet++;
        else problems.push(`${rulesKey(who, ns)}: fleet's URL rules say ${!oracle} for ${verb} ${path}, SAR ${oracle}`);
        if (rulesAllow(kubectl, attributes) === oracle) urlChecks.kubectl++;
        if (!fleetUrls.has(grant)) {
          kubectlOnlyUrls++;
          if (!oracle) kubectlOnlyDenied++;
        }
      }
      // A sample of the listed resource grants, each asked in the namespace: every one is allowed.
      const grants = [...fleetResource]
        .sort()
        .filter(() => random() < 0.15)
        .slice(0, 12);
      for (const g of grants) {
        const [verb, group, combined, name] = g.split(' ');
        const [resource, subresource] = combined.split('/');
        const attributes: Attributes = {
          resourceAttributes: {
            namespace: ns,
            verb,
            group,
            resource,
            ...(subresource ? { subresource } : {}),
            ...(name ? { name } : {}),
          },
        };
        grantChecks.n++;
        if (await sar(who, attributes)) grantChecks.fleet++;
        else problems.push(`${rulesKey(who, ns)}: listed grant ${g} is denied`);
      }
    }

    // The questions of the first test whose answer a rules review of the namespace gives (a namespaced resource or `*`
    // in one namespace; a URL, from the cluster-wide rules): fleet's rule set allows them exactly when the server does.
    const covered = { n: 0, fleet: 0, kubectl: 0 };
    for (const a of answers) {
      const c = classOf(a.q);
      const who = identities[a.q.who];
      const ns = c === 'url' ? 'default' : a.q.ns;
      if (!['namespaced', 'wildcard', 'virtual (serviceaccounts)', 'url'].includes(c) || !RULES_NAMESPACES.includes(ns))
        continue;
      const { fleet, kubectl } = rulesByIdentity.get(rulesKey(who, ns))!;
      const rules: PolicyRule[] = c === 'url' ? fleet.nonResourceRules : fleet.resourceRules;
      covered.n++;
      if (rulesAllow(rules, a.attributes) === a.sar) covered.fleet++;
      else problems.push(`fleet auth rules -n ${ns} says ${!a.sar}, SAR ${a.sar}: ${describeQuery(a.q)}`);
      if (rulesAllow(kubectl, a.attributes) === a.sar) covered.kubectl++;
    }

    // The risk report of each review against the authorizer: every finding checked here names a power some
    // SubjectAccessReview allows (at the scope the rule holds), and every such power the authorizer allows is named.
    const risks = { findings: 0, confirmed: 0, powers: 0, reported: 0 };
    for (const { who, ns } of pairs) {
      const { fleet } = rulesByIdentity.get(rulesKey(who, ns))!;
      const codes = new Set<string>(fleet.risks.map((r) => r.code));
      for (const f of fleet.risks) {
        const probes = findingProbes(f.code, fleet.resourceRules[f.rule], ns);
        if (!probes) continue;
        risks.findings++;
        const allowed = await mapLimit(probes, 8, (p) => sar(who, p));
        if (allowed.some(Boolean)) risks.confirmed++;
        else
          problems.push(
            `${rulesKey(who, ns)}: risk ${f.code} of rule ${JSON.stringify(fleet.resourceRules[f.rule])} (${f.scope}), and no SubjectAccessReview allows it`,
          );
      }
      const wideAdmin = await sar(who, everything(''));
      const nsAdmin = !wideAdmin && (await sar(who, everything(ns)));
      for (const [code, probes] of Object.entries(powerProbes(ns))) {
        const allowed =
          code === 'namespace-admin' ? nsAdmin : (await mapLimit(probes, 8, (p) => sar(who, p))).some(Boolean);
        if (!allowed) continue;
        risks.powers++;
        if (codes.has(code)) risks.reported++;
        else
          problems.push(
            `${rulesKey(who, ns)}: the authorizer allows ${code} (${JSON.stringify(probes)}), auth rules does not say so`,
          );
      }
    }

    counts.push(
      `rule sets: ${pairs.length} (identity, namespace) pairs; resource rules fleet == kubectl --list ${sameResources}/${pairs.length}; fleet URLs within kubectl's ${urlSubset}/${pairs.length}; ${kubectlOnlyUrls} URL grants only kubectl lists (RoleBinding-only), SAR denies ${kubectlOnlyDenied}/${kubectlOnlyUrls}`,
      `  URL rule set vs SAR: fleet ${urlChecks.fleet}/${urlChecks.n}, kubectl --list ${urlChecks.kubectl}/${urlChecks.n}; listed resource grants allowed by SAR (sample) ${grantChecks.fleet}/${grantChecks.n}`,
      `  risk findings of auth rules confirmed by a SAR ${risks.confirmed}/${risks.findings}; powers the SAR allows that auth rules reports ${risks.reported}/${risks.powers}`,
      `  questions answered by the rule set vs SAR: fleet auth rules ${covered.fleet}/${covered.n}, kubectl --list ${covered.kubectl}/${covered.n}`,
    );
    assert.deepEqual(problems, []);
    assert.ok(covered.n >= 200, `${covered.n} questions answered by rule sets`);
    assert.ok(kubectlOnlyUrls > 0, 'the corpus has a URL only a RoleBinding grants');
  });

  it('auth rules through bin/run.js (--as, -o json) lists the rules of the in-process review', async () => {
    assert.ok(rulesByIdentity.size > 0, 'the rules test ran');
    // A few identities and namespaces.
    const pairs = identities.flatMap((who) => RULES_NAMESPACES.map((ns) => ({ who, ns })));
    const cliPairs = pairs.filter((_, i) => i % 17 === 3);
    await mapLimit(cliPairs, 2, async ({ who, ns }) => {
      const res = await runFleet([
        'auth',
        'rules',
        '-n',
        ns,
        ...impersonationArgs(who),
        '--kubeconfig',
        m1.kubeconfig,
        '-o',
        'json',
      ]);
      const item = res.json<RulesReviewList>().items[0] as RulesReview;
      const mine = rulesByIdentity.get(rulesKey(who, ns))!.fleet;
      // The same rules; their order follows the server's iteration over bindings, which is not stable.
      const sorted = (r: RulesReview) =>
        [r.resourceRules, r.nonResourceRules].map((l) => l.map((x) => JSON.stringify(x)).sort());
      assert.deepEqual(sorted(item), sorted(mine), rulesKey(who, ns));
    });

    counts.push(`  fleet CLI auth rules == in-process ${cliPairs.length}/${cliPairs.length}`);
  });

  it('auth diff of member-1 (the corpus) against member-2 (none of it): each difference is one the authorizers make', async () => {
    const m2 = cp.members[1];
    const random = seededRandom(SEED + 4);
    const problems: string[] = [];
    const stats = { pairs: 0, resource: 0, url: 0, confirmed: 0, questions: 0, covered: 0 };
    const extras = new Map<string, NormalRules>();
    const pairs = identities.flatMap((who) => namespaces.map((ns) => ({ who, ns })));
    await mapLimit(pairs, 3, async ({ who, ns }) => {
      const [one, two] = await Promise.all([
        clusterRules(await clientFor(who), ns),
        clusterRules(await clientFor(who, m2), ns),
      ]);
      const diff = diffRules(
        new Map([
          [m1.name, one],
          [m2.name, two],
        ]),
      );
      const { extra, missing } = diff.get(m1.name)!;
      extras.set(rulesKey(who, ns), extra);
      stats.pairs++;
      // Every difference is a request one authorizer allows and the other refuses (member-1's extra grants, and what
      // member-2 grants that member-1 does not, which is nothing unless an earlier run left RBAC there): a URL (no
      // namespace), a cluster-wide grant asked cluster-wide, a namespace grant asked as the request it is about would
      // be (in the namespace; with none for a cluster-scoped resource; a Namespace object under its own name).
      const checks: Array<{ grant: string; attributes: Attributes; here: ServerState; there: ServerState }> = [];
      for (const [rules, here, there] of [
        [extra, m1, m2],
        [missing, m2, m1],
      ] as const) {
        for (const r of rules.nonResourceRules)
          for (const verb of r.verbs) {
            const path = r.url === '*' ? '/fleet-diff-any' : r.url.endsWith('*') ? `${r.url.slice(0, -1)}probe` : r.url;
            checks.push({
              grant: `${verb} ${r.url}`,
              attributes: { nonResourceAttributes: { path, verb } },
              here,
              there,
            });
            stats.url++;
          }
        for (const r of rules.rules)
          for (const verb of r.verbs)
            for (const name of r.resourceNames.length > 0 ? r.resourceNames : [undefined]) {
              stats.resource++;
              const [resource, subresource] = r.resource.split('/');
              const clusterScoped = CLUSTER_SCOPED.has(`${r.apiGroup}/${resource}`);
              // Every namespace grant of a cluster-scoped resource, and a fifth of the rest.
              if (!(r.scope === 'namespace' && clusterScoped) && random() > 0.2) continue;
              const ownNamespace =
                r.scope === 'namespace' && resource === 'namespaces' && (r.apiGroup === '' || r.apiGroup === '*');
              const namespace = r.scope === 'cluster' ? '' : ownNamespace ? (name ?? ns) : clusterScoped ? '' : ns;
              const objectName = ownNamespace ? (name ?? ns) : name;
              checks.push({
                grant: `${r.scope} ${verb} ${r.apiGroup} ${r.resource} ${name ?? ''}`,
                attributes: resourceAttributes(namespace, verb, r.apiGroup, resource, subresource, objectName),
                here,
                there,
              });
            }
      }
      for (const c of checks) {
        const [yes, no] = await Promise.all([sar(who, c.attributes, c.here), sar(who, c.attributes, c.there)]);
        if (yes && !no) stats.confirmed++;
        else
          problems.push(
            `${who.label}: auth diff says ${c.here.name} alone grants ${c.grant}; SAR ${JSON.stringify(c.attributes)} ${c.here.name} ${yes}, ${c.there.name} ${no}`,
          );
      }
      // And the other way: a question of the first test member-1 allows and member-2 does not is among the differences.
      for (const a of answers.filter((x) => x.q.who === identities.indexOf(who) && x.sar)) {
        const attrs = a.attributes;
        // In this namespace; with none (a URL, a cluster-scoped resource, all namespaces) once, with the first.
        const asked = 'resourceAttributes' in attrs ? attrs.resourceAttributes.namespace : '';
        if (asked !== ns && !(asked === '' && ns === namespaces[0])) continue;
        if (await sar(who, attrs, m2)) continue;
        stats.questions++;
        const extraRules: PolicyRule[] =
          'nonResourceAttributes' in attrs
            ? extra.nonResourceRules.map((r) => ({ verbs: r.verbs, nonResourceURLs: [r.url] }))
            : extra.rules
                .filter((r) => attrs.resourceAttributes.namespace === ns || r.scope === 'cluster')
                .map((r) => ({
                  verbs: r.verbs,
                  apiGroups: [r.apiGroup],
                  resources: [r.resource],
                  resourceNames: r.resourceNames,
                }));
        if (rulesAllow(extraRules, attrs)) stats.covered++;
        else
          problems.push(
            `${who.label}: member-1 allows ${describeQuery(a.q)}, member-2 does not, and auth diff shows no such difference`,
          );
      }
    });
    counts.push(
      `auth diff member-1 vs member-2, ${stats.pairs} (identity, namespace) pairs: ${stats.resource} resource and ${stats.url} URL grants differ; checked by SAR on both (a sample of resource grants and every URL) ${stats.confirmed}/${stats.confirmed + problems.filter((p) => p.includes(' alone grants ')).length}; questions member-1 alone allows found among the differences ${stats.covered}/${stats.questions}`,
    );
    assert.deepEqual(problems, []);
    // The minimised case through bin/run.js: get and impersonate on pods in the namespace is a difference, the
    // RoleBinding's cluster-scoped grants (nodes, nodes/proxy, users, groups, signers) are none.
    const fixed = identities.find((w) => w.user === users[5] && w.groups.length === 0)!;
    const res = await runFleet([
      'auth',
      'diff',
      '--all',
      '-n',
      namespaces[0],
      ...impersonationArgs(fixed),
      '--kubeconfig',
      `${m1.kubeconfig}:${m2.kubeconfig}`,
      '-o',
      'json',
    ]);
    const cli = res.json<RulesDiff>().items[0];
    assert.deepEqual(cli.extra, extras.get(rulesKey(fixed, namespaces[0])));
    assert.ok(
      cli.extra!.rules.some((r) => r.resource === 'pods' && r.scope === 'namespace' && r.verbs.includes('impersonate')),
    );
    assert.deepEqual(
      cli.extra!.rules.filter(
        (r) => r.scope === 'namespace' && ['nodes', 'nodes/proxy', 'users', 'groups', 'signers'].includes(r.resource),
      ),
      [],
      'a RoleBinding grants no cluster-scoped resource',
    );
  });
});
