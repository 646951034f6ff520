import type { KubeClient } from '../kube/client.js';
import { type DiscoveredResource, VIRTUAL_RESOURCES, discoverResources } from './discovery.js';
import type { ResourceRule, RuleScope } from './risk.js';
import { CLUSTER_WIDE_PROBE, type NonResourceRule, type RulesReview, singleRulesReview } from './rules.js';

/**
 * `auth diff`: the rules one identity holds on each cluster, normalised so that equivalent RBAC written differently
 * compares equal, and what each cluster grants that the others do not.
 *
 * The identity is whoever the client authenticates as: SelfSubjectRulesReview answers for the caller, so when the
 * connection carries impersonation headers (`--as`, set in the connect options) the rules are the impersonated user's
 * and nothing here changes.
 */

/**
 * Where a grant holds (risk.ts). A SelfSubjectRulesReview for a namespace mixes the rules of the namespace's
 * RoleBindings with those of ClusterRoleBindings; the review for a namespace that cannot exist (CLUSTER_WIDE_PROBE:
 * the name is not a DNS label, so no RoleBinding can live there) holds only the latter. `cluster` grants hold in every
 * namespace (and for cluster-scoped resources); `namespace` grants hold only in the namespace reviewed.
 */
export type { RuleScope } from './risk.js';
export { CLUSTER_WIDE_PROBE } from './rules.js';

/** One normalised resource rule: one group and resource, sorted verbs, sorted resourceNames (empty: every object). */
export interface NormalRule {
  scope: RuleScope;
  apiGroup: string;
  resource: string;
  resourceNames: string[];
  verbs: string[];
}

/** One normalised non-resource rule: one URL (or prefix ending in "*"), sorted verbs. */
export interface NormalNonResourceRule {
  url: string;
  verbs: string[];
}

export interface NormalRules {
  rules: NormalRule[];
  nonResourceRules: NormalNonResourceRule[];
}

/** What the two rules reviews of one cluster said, normalised. */
export interface ClusterRules extends NormalRules {
  namespace: string;
  /** Either review was incomplete (an authorizer that cannot list its rules): a difference may be missed. */
  incomplete: boolean;
  evaluationError?: string;
}

/** One cluster's place in the comparison. */
export interface ClusterDiff {
  /** Granted here and not by the baseline (without one: not by every other cluster that answered). */
  extra: NormalRules;
  /** Granted by the baseline (without one: by some other cluster) and not here. */
  missing: NormalRules;
}

/** One grant: a single verb on a single group/resource/object, or a single verb on a single non-resource URL. */
interface ResourceAtom {
  scope: RuleScope;
  group: string;
  resource: string;
  /** Absent: every object. */
  name?: string;
  verb: string;
}
interface UrlAtom {
  url: string;
  verb: string;
}

const ALL = '*';

/**
 * Reads the rules of the identity in `namespace` and cluster-wide, and normalises them; the cluster's discovery says
 * which resources are cluster-scoped.
 */
export async function clusterRules(client: KubeClient, namespace: string): Promise<ClusterRules> {
  const [inNamespace, clusterWide, resources] = await Promise.all([
    singleRulesReview(client, namespace),
    singleRulesReview(client, CLUSTER_WIDE_PROBE),
    discoverResources(client),
  ]);
  return normaliseReviews(namespace, inNamespace, clusterWide, clusterScopedIn(resources));
}

/** Whether `resource` (no subresource) of `group` is cluster-scoped. */
export type ClusterScoped = (group: string, resource: string) => boolean;

/**
 * The cluster-scoped resources of a discovery, with the virtual ones the authorizer is asked about with no namespace
 * (users, groups, uids, userextras, signers), which no discovery lists.
 */
export function clusterScopedIn(resources: DiscoveredResource[]): ClusterScoped {
  const scoped = new Set([...resources, ...VIRTUAL_RESOURCES].filter((r) => !r.namespaced).map((r) => scopedKey(r)));
  return (group, resource) => scoped.has(scopedKey({ group, resource }));
}

const scopedKey = (r: { group: string; resource: string }) => `${r.group}\u0000${r.resource}`;

/**
 * Whether a grant of the namespace's review can be used in that namespace. A request for a cluster-scoped resource has
 * no namespace, so the authorizer reads no RoleBinding for it: a RoleBinding's `get nodes` or `impersonate users` is
 * listed by the namespace's review and grants nothing. The exception is the Namespace object itself, which the API
 * server files under its own name (GET /api/v1/namespaces/x is in namespace x): `namespaces` is kept for that one
 * object. A `*` group or resource is kept: it reaches namespaced resources too.
 */
function usableInNamespace(a: ResourceAtom, namespace: string, clusterScoped: ClusterScoped): boolean {
  const resource = a.resource.split('/')[0];
  if (a.group === ALL || resource === ALL) return true;
  if (a.group === '' && resource === 'namespaces') return a.name === undefined || a.name === namespace;
  return !clusterScoped(a.group, resource);
}

/**
 * Normalises the namespace's review against the cluster-wide one (pure, for tests). `clusterScoped` is the cluster's
 * discovery (clusterScopedIn); without it only the virtual resources are known to be cluster-scoped.
 */
export function normaliseReviews(
  namespace: string,
  inNamespace: RulesReview,
  clusterWide: RulesReview,
  clusterScoped: ClusterScoped = clusterScopedIn([]),
): ClusterRules {
  const cluster = reduceResources(resourceAtoms(clusterWide.resourceRules, 'cluster'));
  // A namespace grant that a cluster-wide one already covers adds nothing; one of a cluster-scoped resource is none.
  const wide = resourceSet(cluster);
  const local = reduceResources(
    resourceAtoms(inNamespace.resourceRules, 'namespace').filter((a) => usableInNamespace(a, namespace, clusterScoped)),
  ).filter((a) => !wide.covers(a));
  // Non-resource URLs count only from ClusterRoleBindings: a URL request has no namespace, so the authorizer never
  // reads a RoleBinding for it. The namespace's review also lists the URLs of ClusterRoles bound there by RoleBindings,
  // which grant nothing; only the cluster-wide review's are grants.
  const urls = reduceUrls(urlAtoms(clusterWide.nonResourceRules));
  const evaluationError = [inNamespace.evaluationError, clusterWide.evaluationError].filter(Boolean).join('; ');
  return {
    namespace,
    incomplete: inNamespace.incomplete || clusterWide.incomplete,
    ...(evaluationError ? { evaluationError } : {}),
    ...groupAtoms([...cluster, ...local], urls),
  };
}

/** The rules as atoms: every group × resource × name × verb. Empty lists grant nothing, as in RBAC. */
function resourceAtoms(rules: ResourceRule[], scope: RuleScope): ResourceAtom[] {
  const out: ResourceAtom[] = [];
  for (const r of rules) {
    const names: Array<string | undefined> = r.resourceNames.length > 0 ? r.resourceNames : [undefined];
    for (const group of r.apiGroups)
      for (const resource of r.resources)
        for (const name of names)
          for (const verb of r.verbs)
            out.push({ scope, group, resource, ...(name === undefined ? {} : { name }), verb });
  }
  return out;
}

function urlAtoms(rules: NonResourceRule[]): UrlAtom[] {
  return rules.flatMap((r) => r.nonResourceURLs.flatMap((url) => r.verbs.map((verb) => ({ url, verb }))));
}

/**
 * Every grant that would cover `a` under RBAC's matching (as `auth rules`' risk rules apply it): a cluster-wide grant
 * covers the same one in the namespace, "*" covers any group, resource or verb, "*\/sub" that subresource of any
 * resource, a grant without resourceNames every object. A finite list, so coverage is a set lookup, not a scan.
 */
function coveringKeys(a: ResourceAtom): string[] {
  const slash = a.resource.indexOf('/');
  const scopes: RuleScope[] = a.scope === 'namespace' ? ['namespace', 'cluster'] : ['cluster'];
  const groups = a.group === ALL ? [ALL] : [a.group, ALL];
  const resources = new Set([a.resource, ALL, ...(slash === -1 ? [] : [`${ALL}/${a.resource.slice(slash + 1)}`])]);
  const names = a.name === undefined ? [undefined] : [a.name, undefined];
  const verbs = a.verb === ALL ? [ALL] : [a.verb, ALL];
  const out: string[] = [];
  for (const scope of scopes)
    for (const group of groups)
      for (const resource of resources)
        for (const name of names)
          for (const verb of verbs) {
            out.push(resourceKey({ scope, group, resource, ...(name === undefined ? {} : { name }), verb }));
          }
  return out;
}

/** RBAC's non-resource matching: "*", the URL itself, or a prefix ending in "*". */
function coveringUrlKeys(a: UrlAtom): string[] {
  const urls = new Set([a.url, ALL]);
  for (let i = 0; i < a.url.length; i++) urls.add(`${a.url.slice(0, i)}${ALL}`);
  const verbs = a.verb === ALL ? [ALL] : [a.verb, ALL];
  return [...urls].flatMap((url) => verbs.map((verb) => urlKey({ url, verb })));
}

const resourceKey = (a: ResourceAtom) =>
  `${a.scope}\u0000${a.group}\u0000${a.resource}\u0000${a.name === undefined ? '*all' : `=${a.name}`}\u0000${a.verb}`;
const urlKey = (a: UrlAtom) => `${a.url}\u0000${a.verb}`;

/** A set of atoms that answers "is this one covered?" by looking up the finite list of grants that would cover it. */
class AtomSet<A> {
  readonly keys: Set<string>;
  constructor(
    readonly atoms: A[],
    private readonly key: (a: A) => string,
    private readonly covering: (a: A) => string[],
  ) {
    this.keys = new Set(atoms.map(key));
  }

  /** Whether some atom of the set covers `a` (itself included when `self` is true). */
  covers(a: A, self = true): boolean {
    const own = this.key(a);
    for (const k of this.covering(a)) if ((self || k !== own) && this.keys.has(k)) return true;
    return false;
  }
}

const resourceSet = (atoms: ResourceAtom[]) => new AtomSet(atoms, resourceKey, coveringKeys);
const urlSet = (atoms: UrlAtom[]) => new AtomSet(atoms, urlKey, coveringUrlKeys);

/**
 * Drops duplicates and every atom a wider one covers, so `get,list` next to `*` on the same resource, or a named object
 * next to all objects, count once. (Two different atoms never cover each other, so nothing is dropped twice.)
 */
function reduce<A>(set: AtomSet<A>, key: (a: A) => string): A[] {
  const unique = [...new Map(set.atoms.map((a) => [key(a), a])).values()];
  return unique.filter((a) => !set.covers(a, false));
}

const reduceResources = (atoms: ResourceAtom[]) => reduce(resourceSet(atoms), resourceKey);
const reduceUrls = (atoms: UrlAtom[]) => reduce(urlSet(atoms), urlKey);

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Atoms back into rules, the same way for every cluster: one rule per scope, group, resource and object names with its
 * verbs sorted; named objects with the same verbs share a rule. Sorted by scope, group, resource, names.
 */
function groupAtoms(resources: ResourceAtom[], urls: UrlAtom[]): NormalRules {
  const perObject = new Map<
    string,
    { scope: RuleScope; apiGroup: string; resource: string; name?: string; verbs: Set<string> }
  >();
  for (const a of resources) {
    const k = [a.scope, a.group, a.resource, a.name === undefined ? '*all' : `=${a.name}`].join('\u0000');
    let entry = perObject.get(k);
    if (!entry)
      perObject.set(
        k,
        (entry = {
          scope: a.scope,
          apiGroup: a.group,
          resource: a.resource,
          ...(a.name === undefined ? {} : { name: a.name }),
          verbs: new Set(),
        }),
      );
    entry.verbs.add(a.verb);
  }
  const rules = new Map<string, NormalRule>();
  for (const e of perObject.values()) {
    const verbs = [...e.verbs].sort(byText);
    const k = [e.scope, e.apiGroup, e.resource, e.name === undefined ? 'all' : 'named', verbs.join(',')].join('\u0000');
    const rule = rules.get(k);
    if (rule && e.name !== undefined) rule.resourceNames.push(e.name);
    else
      rules.set(k, {
        scope: e.scope,
        apiGroup: e.apiGroup,
        resource: e.resource,
        resourceNames: e.name === undefined ? [] : [e.name],
        verbs,
      });
  }
  const sorted = [...rules.values()].map((r) => ({ ...r, resourceNames: r.resourceNames.sort(byText) }));
  const ruleKey = (r: NormalRule) =>
    [r.scope, r.apiGroup, r.resource, r.resourceNames.join(','), r.verbs.join(',')].join('\u0000');
  sorted.sort((a, b) => byText(ruleKey(a), ruleKey(b)));

  const perUrl = new Map<string, Set<string>>();
  for (const a of urls) {
    let verbs = perUrl.get(a.url);
    if (!verbs) perUrl.set(a.url, (verbs = new Set()));
    verbs.add(a.verb);
  }
  const nonResourceRules = [...perUrl.entries()]
    .sort(([a], [b]) => byText(a, b))
    .map(([url, verbs]) => ({ url, verbs: [...verbs].sort(byText) }));
  return { rules: sorted, nonResourceRules };
}

interface Atoms {
  resources: ResourceAtom[];
  urls: UrlAtom[];
  resourceSet: AtomSet<ResourceAtom>;
  urlSet: AtomSet<UrlAtom>;
}

/** Differences back into rules; `coverR`/`coverU` are the comparison's cached covering keys. */
function grouped(
  resources: ResourceAtom[],
  urls: UrlAtom[],
  coverR: (a: ResourceAtom) => string[],
  coverU: (a: UrlAtom) => string[],
): NormalRules {
  return groupAtoms(
    reduce(new AtomSet(resources, resourceKey, coverR), resourceKey),
    reduce(new AtomSet(urls, urlKey, coverU), urlKey),
  );
}

function atomsOf(n: NormalRules): Atoms {
  const resources = n.rules.flatMap((r) =>
    resourceAtoms(
      [{ verbs: r.verbs, apiGroups: [r.apiGroup], resources: [r.resource], resourceNames: r.resourceNames }],
      r.scope,
    ),
  );
  const urls = urlAtoms(n.nonResourceRules.map((r) => ({ verbs: r.verbs, nonResourceURLs: [r.url] })));
  return { resources, urls, resourceSet: resourceSet(resources), urlSet: urlSet(urls) };
}

/** The covering keys of each distinct atom, computed once per comparison: clusters share most of their grants. */
function coverCache<A>(key: (a: A) => string, covering: (a: A) => string[]): (a: A) => string[] {
  const cache = new Map<string, string[]>();
  return (a) => {
    const k = key(a);
    let keys = cache.get(k);
    if (!keys) cache.set(k, (keys = covering(a)));
    return keys;
  };
}

function coveredIn(keys: Set<string>, covering: string[]): boolean {
  for (const k of covering) if (keys.has(k)) return true;
  return false;
}

/**
 * Compares the clusters' normalised rules. With a baseline (a key of `clusters`): each cluster against it. Without:
 * against the majority, so that one cluster with an extra RoleBinding is the one cluster that differs (not every
 * cluster, each listing the other's grants). A grant most clusters cover is the norm: `missing` on a cluster that does
 * not cover it. A grant fewer than half cover is an exception: `extra` on the clusters that cover it. A grant exactly
 * half cover (two clusters that disagree) has no norm, so both sides report it, as a comparison of two does.
 * Coverage is RBAC's: `*` on pods on one cluster covers `get` on pods on another.
 *
 * Without a baseline the work is one pass over the union of all grants per cluster (which clusters cover each grant),
 * not a comparison of every pair.
 */
export function diffRules(clusters: Map<string, NormalRules>, baseline?: string): Map<string, ClusterDiff> {
  const atoms = new Map([...clusters].map(([name, rules]) => [name, atomsOf(rules)]));
  const coverR = coverCache(resourceKey, coveringKeys);
  const coverU = coverCache(urlKey, coveringUrlKeys);
  const out = new Map<string, ClusterDiff>();
  if (baseline !== undefined) {
    const base = atoms.get(baseline)!;
    for (const [name, mine] of atoms) {
      const notIn = (a: Atoms) => ({
        resources: (x: ResourceAtom) => !coveredIn(a.resourceSet.keys, coverR(x)),
        urls: (x: UrlAtom) => !coveredIn(a.urlSet.keys, coverU(x)),
      });
      const extra =
        name === baseline
          ? { resources: [], urls: [] }
          : { resources: mine.resources.filter(notIn(base).resources), urls: mine.urls.filter(notIn(base).urls) };
      const missing =
        name === baseline
          ? { resources: [], urls: [] }
          : { resources: base.resources.filter(notIn(mine).resources), urls: base.urls.filter(notIn(mine).urls) };
      out.set(name, {
        extra: grouped(extra.resources, extra.urls, coverR, coverU),
        missing: grouped(missing.resources, missing.urls, coverR, coverU),
      });
    }
    return out;
  }
  const unionR = new Map<string, ResourceAtom>();
  const unionU = new Map<string, UrlAtom>();
  for (const a of atoms.values()) {
    for (const x of a.resources) unionR.set(resourceKey(x), x);
    for (const x of a.urls) unionU.set(urlKey(x), x);
  }
  // For each cluster, the grants of the union it covers; for each grant, how many clusters cover it.
  const grantsR = [...unionR].map(([k, x]) => ({ k: `r${k}`, covering: coverR(x) }));
  const grantsU = [...unionU].map(([k, x]) => ({ k: `u${k}`, covering: coverU(x) }));
  const coveredBy = new Map<string, Set<string>>();
  const count = new Map<string, number>();
  for (const [name, a] of atoms) {
    const covered = new Set<string>();
    for (const g of grantsR) if (coveredIn(a.resourceSet.keys, g.covering)) covered.add(g.k);
    for (const g of grantsU) if (coveredIn(a.urlSet.keys, g.covering)) covered.add(g.k);
    for (const k of covered) count.set(k, (count.get(k) ?? 0) + 1);
    coveredBy.set(name, covered);
  }
  const n = atoms.size;
  // At most half cover it: an exception (or, at exactly half, no norm), reported by those that have it.
  const exception = (k: string) => 2 * count.get(k)! <= n;
  // At least half cover it: the norm (or, at exactly half, no norm), reported by those that lack it.
  const norm = (k: string) => 2 * count.get(k)! >= n;
  for (const [name, a] of atoms) {
    const covered = coveredBy.get(name)!;
    out.set(name, {
      extra: grouped(
        a.resources.filter((x) => exception(`r${resourceKey(x)}`)),
        a.urls.filter((x) => exception(`u${urlKey(x)}`)),
        coverR,
        coverU,
      ),
      missing: grouped(
        [...unionR].filter(([k]) => !covered.has(`r${k}`) && norm(`r${k}`)).map(([, x]) => x),
        [...unionU].filter(([k]) => !covered.has(`u${k}`) && norm(`u${k}`)).map(([, x]) => x),
        coverR,
        coverU,
      ),
    });
  }
  return out;
}

export function isEmpty(n: NormalRules): boolean {
  return n.rules.length === 0 && n.nonResourceRules.length === 0;
}
