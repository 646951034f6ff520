import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1LabelSelector,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  RbacV1Subject,
} from '@kubernetes/client-node';
import type { Wire } from '../kube/objects.js';
import type { NonResourceAttributes, ResourceAttributes } from './access-review.js';

/**
 * RBAC evaluated the way the API server's RBAC authorizer evaluates it, turned around: instead of "is this user
 * allowed?", "which subjects do the bindings allow?", with the binding, role and rule that allow each. Pure functions
 * over the objects read from a cluster, so the rules of matching (wildcards, subresources, resourceNames,
 * non-resource URL prefixes, which bindings count in which namespace) are testable without a server.
 */
export type PolicyRule = Wire<V1PolicyRule>;
export type ClusterRole = Wire<V1ClusterRole>;
export type Role = Wire<V1Role>;
export type ClusterRoleBinding = Wire<V1ClusterRoleBinding>;
export type RoleBinding = Wire<V1RoleBinding>;

/** What was read from one cluster. A list the caller may not read is `undefined` (and said so in a warning). */
export interface RbacSnapshot {
  clusterRoles?: ClusterRole[];
  clusterRoleBindings?: ClusterRoleBinding[];
  /** Roles of the namespaces asked about (one, or all). */
  roles?: Role[];
  roleBindings?: RoleBinding[];
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface Subject {
  kind: SubjectKind;
  name: string;
  /** ServiceAccounts only. */
  namespace?: string;
}

/** One way a subject is allowed: binding → role → rule. */
export interface Grant {
  /** The namespace the grant applies in; "" for a ClusterRoleBinding (every namespace and cluster-wide). */
  namespace: string;
  binding: { kind: 'ClusterRoleBinding' | 'RoleBinding'; name: string; namespace?: string };
  role: {
    kind: 'ClusterRole' | 'Role';
    name: string;
    namespace?: string;
    /**
     * An aggregated ClusterRole (aggregationRule): kube-controller-manager fills its rules from the ClusterRoles its
     * selectors match, and the authorizer reads those filled rules. `aggregatedFrom` names the source ClusterRoles that
     * hold the matching rule.
     */
    aggregated?: boolean;
    aggregatedFrom?: string[];
  };
  /** The matching rule, as written in the role. */
  rule: PolicyRule;
}

/** What is asked: resource attributes with the namespace ("" = cluster-wide), or a non-resource URL. */
export type Question =
  | { resource: ResourceAttributes; nonResource?: undefined }
  | { nonResource: NonResourceAttributes; resource?: undefined };

export interface Evaluation {
  subjects: Array<Subject & { grants: Grant[] }>;
  /** Bindings whose role could not be found, or subjects RBAC can never match: said, never dropped in silence. */
  warnings: string[];
  /** A binding's role may exist where it cannot be read (clusterRolesElsewhere): its subjects are missing. */
  incomplete?: boolean;
}

// ---- matching, as k8s.io/kubernetes/pkg/apis/rbac/v1 (VerbMatches, APIGroupMatches, ResourceMatches, ...) ----------

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === '*' || v === verb);
}

export function groupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

/**
 * `*` matches everything, subresources included; `pods` matches only pods, `pods/exec` only that subresource, and
 * `*\/exec` the exec subresource of any resource.
 */
export function resourceMatches(rule: PolicyRule, resource: string, subresource?: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => {
    if (r === '*' || r === combined) return true;
    return subresource !== undefined && subresource !== '' && r === `*/${subresource}`;
  });
}

/** No resourceNames: any name (and requests without one). With resourceNames: only requests naming one of them. */
export function resourceNameMatches(rule: PolicyRule, name?: string): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return name !== undefined && name !== '' && names.includes(name);
}

/** `*`, the exact path, or a prefix written with a trailing `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

export function ruleAllows(rule: PolicyRule, q: Question): boolean {
  if (q.nonResource) return verbMatches(rule, q.nonResource.verb) && nonResourceURLMatches(rule, q.nonResource.path);
  const a = q.resource;
  return (
    verbMatches(rule, a.verb) &&
    groupMatches(rule, a.group) &&
    resourceMatches(rule, a.resource, a.subresource) &&
    resourceNameMatches(rule, a.name)
  );
}

// ---- label selectors (aggregationRule.clusterRoleSelectors) ----------------------------------------------------------

export function selectorMatches(selector: Wire<V1LabelSelector>, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

function sameRule(a: PolicyRule, b: PolicyRule): boolean {
  const key = (r: PolicyRule) =>
    JSON.stringify([
      r.verbs ?? [],
      r.apiGroups ?? [],
      r.resources ?? [],
      r.resourceNames ?? [],
      r.nonResourceURLs ?? [],
    ]);
  return key(a) === key(b);
}

/** The ClusterRoles an aggregated ClusterRole's selectors pick (an empty selector list picks none, as the controller does). */
export function aggregationSources(role: ClusterRole, all: ClusterRole[]): ClusterRole[] {
  const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
  if (selectors.length === 0) return [];
  return all.filter(
    (c) =>
      c.metadata?.name !== role.metadata?.name && selectors.some((s) => selectorMatches(s, c.metadata?.labels ?? {})),
  );
}

// ---- subjects -------------------------------------------------------------------------------------------------------

/**
 * A binding's subject as the authorizer matches it: a ServiceAccount without a namespace takes the RoleBinding's (and
 * matches nobody in a ClusterRoleBinding). Other kinds are ignored by RBAC.
 */
function normalizeSubject(s: Wire<RbacV1Subject>, bindingNamespace: string | undefined): Subject | string {
  if (s.kind === 'User' || s.kind === 'Group') return { kind: s.kind, name: s.name };
  if (s.kind === 'ServiceAccount') {
    const namespace = s.namespace || bindingNamespace;
    if (!namespace) return `ServiceAccount "${s.name}" has no namespace, so RBAC matches nobody`;
    return { kind: 'ServiceAccount', name: s.name, namespace };
  }
  return `subject kind "${s.kind}" is not one RBAC knows (User, Group, ServiceAccount)`;
}

export function subjectKey(s: Subject): string {
  return s.kind === 'ServiceAccount' ? `${s.kind}/${s.namespace}/${s.name}` : `${s.kind}/${s.name}`;
}

/** How the API server names a ServiceAccount when it authenticates one of its tokens. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

// ---- the evaluation -------------------------------------------------------------------------------------------------

/**
 * Who RBAC allows to do `q`. `namespaces`: which RoleBindings count: for a question about one namespace, those in it
 * (`q.resource.namespace`); with `allNamespaces`, those of every namespace (each grant says where it applies). A
 * cluster-wide question (cluster-scoped resource, non-resource URL, namespace "" without allNamespaces) counts only
 * ClusterRoleBindings, as the authorizer does.
 */
export function evaluate(
  snapshot: RbacSnapshot,
  q: Question,
  options: {
    allNamespaces?: boolean;
    /**
     * Where a ClusterRole the cluster does not hold may still come from: kcp resolves one missing in a workspace from
     * its bootstrap policy (the system:admin logical cluster), which the caller cannot read there.
     */
    clusterRolesElsewhere?: string;
  } = {},
): Evaluation {
  const warnings: string[] = [];
  const clusterRoles = new Map((snapshot.clusterRoles ?? []).map((r) => [r.metadata?.name ?? '', r]));
  const roles = new Map((snapshot.roles ?? []).map((r) => [`${r.metadata?.namespace}/${r.metadata?.name}`, r]));
  const found = new Map<string, Subject & { grants: Grant[] }>();
  const referenced = new Set<string>();
  let unresolved = false;

  const rulesOf = (
    kind: string,
    name: string,
    namespace: string | undefined,
    where: string,
  ): { rules: PolicyRule[]; role: Grant['role']; sources?: ClusterRole[] } | undefined => {
    if (kind === 'ClusterRole') {
      referenced.add(name);
      const role = clusterRoles.get(name);
      if (!role) {
        if (options.clusterRolesElsewhere) {
          unresolved = true;
          warnings.push(
            `${where} refers to ClusterRole "${name}", which is not here: ${options.clusterRolesElsewhere}, so its subjects are not shown`,
          );
        } else if (snapshot.clusterRoles)
          warnings.push(`${where} refers to ClusterRole "${name}", which does not exist: it grants nothing`);
        return undefined;
      }
      const aggregated = role.aggregationRule !== undefined && role.aggregationRule !== null;
      return {
        rules: role.rules ?? [],
        role: { kind: 'ClusterRole', name, ...(aggregated ? { aggregated: true } : {}) },
        sources: aggregated ? aggregationSources(role, snapshot.clusterRoles ?? []) : undefined,
      };
    }
    if (kind === 'Role' && namespace !== undefined) {
      const role = roles.get(`${namespace}/${name}`);
      if (!role) {
        if (snapshot.roles)
          warnings.push(
            `${where} refers to Role "${name}", which does not exist in namespace ${namespace}: it grants nothing`,
          );
        return undefined;
      }
      return { rules: role.rules ?? [], role: { kind: 'Role', name, namespace } };
    }
    warnings.push(`${where} refers to a ${kind} "${name}", which RBAC does not resolve: it grants nothing`);
    return undefined;
  };

  const consider = (
    binding: ClusterRoleBinding | RoleBinding,
    bindingKind: Grant['binding']['kind'],
    grantNamespace: string,
  ) => {
    const bns = bindingKind === 'RoleBinding' ? binding.metadata?.namespace : undefined;
    const bname = binding.metadata?.name ?? '';
    const where = `${bindingKind} ${bns ? `${bns}/` : ''}${bname}`;
    const resolved = rulesOf(binding.roleRef.kind, binding.roleRef.name, bns, where);
    if (!resolved) return;
    for (const rule of resolved.rules) {
      if (!ruleAllows(rule, q)) continue;
      const role = { ...resolved.role };
      if (resolved.sources) {
        const from = resolved.sources
          .filter((c) => (c.rules ?? []).some((r) => sameRule(r, rule)))
          .map((c) => c.metadata?.name ?? '');
        if (from.length > 0) role.aggregatedFrom = from;
      }
      for (const raw of binding.subjects ?? []) {
        const subject = normalizeSubject(raw, bns);
        if (typeof subject === 'string') {
          warnings.push(`${where}: ${subject}`);
          continue;
        }
        const key = subjectKey(subject);
        let entry = found.get(key);
        if (!entry) found.set(key, (entry = { ...subject, grants: [] }));
        entry.grants.push({
          namespace: grantNamespace,
          binding: { kind: bindingKind, name: bname, ...(bns ? { namespace: bns } : {}) },
          role,
          rule,
        });
      }
    }
  };

  for (const b of snapshot.clusterRoleBindings ?? []) consider(b, 'ClusterRoleBinding', '');
  const ns = q.resource?.namespace ?? '';
  if (q.resource && (options.allNamespaces || ns !== '')) {
    for (const b of snapshot.roleBindings ?? []) {
      const bns = b.metadata?.namespace ?? '';
      if (!options.allNamespaces && bns !== ns) continue;
      consider(b, 'RoleBinding', bns);
    }
  }
  // An aggregated ClusterRole whose filled rules lack a source's rule: the controller has not caught up (or does not run).
  for (const role of snapshot.clusterRoles ?? []) {
    if (!role.aggregationRule || !referenced.has(role.metadata?.name ?? '')) continue;
    const own = role.rules ?? [];
    const sources = aggregationSources(role, snapshot.clusterRoles ?? []);
    const missing = sources.filter((c) =>
      (c.rules ?? []).some((r) => ruleAllows(r, q) && !own.some((o) => sameRule(o, r))),
    );
    if (missing.length > 0) {
      warnings.push(
        `aggregated ClusterRole "${role.metadata?.name}" does not yet hold matching rules of ${missing.map((c) => `"${c.metadata?.name}"`).join(', ')}: kube-controller-manager fills it, and the API server authorizes with what it holds now`,
      );
    }
  }
  const subjects = [...found.values()].sort(compareSubjects);
  return { subjects, warnings: [...new Set(warnings)], ...(unresolved ? { incomplete: true } : {}) };
}

const KIND_ORDER: Record<SubjectKind, number> = { User: 0, Group: 1, ServiceAccount: 2 };

function compareSubjects(a: Subject, b: Subject): number {
  return (
    KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
    (a.namespace ?? '').localeCompare(b.namespace ?? '') ||
    a.name.localeCompare(b.name)
  );
}
