import type { KubeClient } from '../kube/client.js';
import { API_GROUPS_PATH, CORE_API_PATH, groupVersionPath } from '../kube/paths.js';

/**
 * What a cluster calls its resources, enough to turn what a person types (`deploy`, `deployment`, `Deployment`,
 * `deployments.apps`) into the group and plural resource an access review needs, and whether it is namespaced.
 * Aggregated discovery (one request for core, one for all groups) is used when served; older servers are read the
 * legacy way (one request per group).
 */
export interface DiscoveredResource {
  group: string;
  resource: string;
  singular: string;
  kind: string;
  shortNames: string[];
  namespaced: boolean;
  /** The versions that serve it (legacy discovery knows only the preferred one). */
  versions: string[];
}

const AGGREGATED = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

interface AggregatedResource {
  resource: string;
  singularResource?: string;
  responseKind?: { kind?: string };
  scope?: string;
  shortNames?: string[];
}

interface AggregatedList {
  kind?: string;
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{ version?: string; resources?: AggregatedResource[] }>;
  }>;
}

interface LegacyResourceList {
  resources?: Array<{
    name: string;
    singularName?: string;
    kind?: string;
    shortNames?: string[];
    namespaced?: boolean;
  }>;
}

async function getJson<T>(client: KubeClient, path: string, accept?: string): Promise<T> {
  return client.json<T>('GET', path, undefined, `GET ${path}`, accept ? { accept } : {});
}

function fromAggregated(list: AggregatedList): DiscoveredResource[] {
  const out: DiscoveredResource[] = [];
  for (const item of list.items ?? []) {
    const group = item.metadata?.name ?? '';
    // Versions come in preference order; a resource served by several versions is the same resource.
    const seen = new Map<string, DiscoveredResource>();
    for (const version of item.versions ?? []) {
      for (const r of version.resources ?? []) {
        const known = seen.get(r.resource);
        if (known) {
          if (version.version) known.versions.push(version.version);
          continue;
        }
        const entry: DiscoveredResource = {
          group,
          resource: r.resource,
          singular: r.singularResource ?? '',
          kind: r.responseKind?.kind ?? '',
          shortNames: r.shortNames ?? [],
          namespaced: r.scope !== 'Cluster',
          versions: version.version ? [version.version] : [],
        };
        seen.set(r.resource, entry);
        out.push(entry);
      }
    }
  }
  return out;
}

function fromLegacy(group: string, version: string, list: LegacyResourceList): DiscoveredResource[] {
  return (list.resources ?? [])
    .filter((r) => !r.name.includes('/'))
    .map((r) => ({
      group,
      resource: r.name,
      singular: r.singularName ?? '',
      kind: r.kind ?? '',
      shortNames: r.shortNames ?? [],
      namespaced: r.namespaced !== false,
      versions: [version],
    }));
}

/**
 * Discovery once per client: a command asking many questions of one cluster (clusters verify's required permissions,
 * auth can-i over several namespaces, wi's --can-i) would otherwise fetch the same documents for every question. A
 * client lives for one command, so the answer cannot go stale in a way that matters; a failed discovery is forgotten
 * so that the next question tries again.
 */
const discovered = new WeakMap<KubeClient, Promise<DiscoveredResource[]>>();

/** Every resource the cluster serves, core group first, then groups in the server's priority order. */
export function discoverResources(client: KubeClient): Promise<DiscoveredResource[]> {
  let found = discovered.get(client);
  if (!found) {
    found = fetchResources(client);
    discovered.set(client, found);
    found.catch(() => discovered.delete(client));
  }
  return found;
}

async function fetchResources(client: KubeClient): Promise<DiscoveredResource[]> {
  const [core, groups] = await Promise.all([
    getJson<AggregatedList & LegacyResourceList & { versions?: string[] }>(client, CORE_API_PATH, AGGREGATED),
    getJson<AggregatedList & { groups?: Array<{ name: string; preferredVersion?: { groupVersion?: string } }> }>(
      client,
      API_GROUPS_PATH,
      AGGREGATED,
    ),
  ]);
  if (core.kind === 'APIGroupDiscoveryList' && groups.kind === 'APIGroupDiscoveryList') {
    return [...fromAggregated(core), ...fromAggregated(groups)];
  }
  const legacy = await Promise.all([
    getJson<LegacyResourceList>(client, groupVersionPath('v1')).then((l) => fromLegacy('', 'v1', l)),
    ...(groups.groups ?? []).map((g) =>
      g.preferredVersion?.groupVersion
        ? getJson<LegacyResourceList>(client, groupVersionPath(g.preferredVersion.groupVersion))
            .then((l) => fromLegacy(g.name, g.preferredVersion!.groupVersion!.split('/').pop()!, l))
            // One broken aggregated API (a 503 from a dead extension server) must not hide all the others.
            .catch(() => [] as DiscoveredResource[])
        : Promise.resolve([] as DiscoveredResource[]),
    ),
  ]);
  return legacy.flat();
}

/**
 * Resources the authorizer is asked about that no API serves, so discovery never lists them: the ones impersonation
 * checks (`users`, `groups`, `uids`, `userextras/<key>`; `serviceaccounts` are real and namespaced) and certificate
 * signers (`approve`, `sign`, `attest` on `signers`). Every one is cluster-scoped: the impersonation filter and the
 * certificate admission plugins ask with no namespace, so a RoleBinding never grants them, whatever a rules review of
 * its namespace lists. Only the plural matches (kubectl has nothing to map a singular or kind with either).
 */
export const VIRTUAL_RESOURCES: readonly DiscoveredResource[] = [
  { group: '', resource: 'users' },
  { group: '', resource: 'groups' },
  { group: 'authentication.k8s.io', resource: 'uids' },
  { group: 'authentication.k8s.io', resource: 'userextras' },
  { group: 'certificates.k8s.io', resource: 'signers' },
].map((r) => ({ ...r, singular: '', kind: '', shortNames: [], namespaced: false, versions: [] }));

/**
 * What a typed resource means on a cluster: what its discovery serves (`matchTyped`), else one of the virtual
 * resources above, so that `impersonate users` is asked about cluster-wide, as the API server asks it.
 */
export function resolveTyped(
  resources: DiscoveredResource[],
  typed: string,
  rest: string | undefined,
): DiscoveredResource | undefined {
  return matchTyped(resources, typed, rest) ?? matchTyped([...VIRTUAL_RESOURCES], typed, rest);
}

/**
 * What `RESOURCE.REST` means, as kubectl reads it: with two dots or more, first `resource.version.group`
 * (deployments.v1.apps), then `resource.group` with the whole rest as the group (a group may contain dots).
 */
export function matchTyped(
  resources: DiscoveredResource[],
  typed: string,
  rest: string | undefined,
): DiscoveredResource | undefined {
  if (rest !== undefined && rest.includes('.')) {
    const dot = rest.indexOf('.');
    const exact = matchResource(resources, typed, rest.slice(dot + 1), rest.slice(0, dot));
    if (exact) return exact;
  }
  return matchResource(resources, typed, rest);
}

/**
 * Finds what a typed name means, like kubectl's REST mapper: plural, singular, short name or kind, case-insensitive;
 * restricted to `group` when one was typed; the first match in priority order (core first) wins.
 */
export function matchResource(
  resources: DiscoveredResource[],
  typed: string,
  group?: string,
  version?: string,
): DiscoveredResource | undefined {
  const name = typed.toLowerCase();
  const candidates = (group === undefined ? resources : resources.filter((r) => r.group === group)).filter(
    (r) => version === undefined || r.versions.includes(version),
  );
  const tests: Array<(r: DiscoveredResource) => boolean> = [
    (r) => r.resource === name,
    (r) => r.singular === name,
    (r) => r.shortNames.includes(name),
    (r) => r.kind.toLowerCase() === name,
  ];
  for (const test of tests) {
    const hit = candidates.find(test);
    if (hit) return hit;
  }
  return undefined;
}
