import type { ClusterProvider, ClusterRef, ProviderFailure } from '../providers/types.js';
import { placeFailures } from '../fleet/failures.js';
import { type RunOptions, runOverClusters } from '../fleet/runner.js';
import { selectForListing } from '../fleet/select.js';
import { type ClusterSummary, describeRef } from './summary.js';

/** `clusters list`: every cluster the providers know, described without the network unless asked to go live. */
export interface ListOptions {
  /** --context: only that context among kubeconfig-file clusters (for hub-backed providers it named the hub instead). */
  context?: string;
  /** -l: only clusters whose labels match (a selector that matches nothing is a usage error naming the keys in use). */
  selector?: string;
  /** --live: read each reachable cluster's id through the fleet runner (the command's options, its exec runner included). */
  live?: RunOptions;
}

export interface ClusterListing {
  /** The rows of the list (its JSON items): the clusters and, at its place, one not-ready row per provider that could not list. */
  items: ClusterSummary[];
  /** Only the clusters: what `-o name` prints. */
  clusters: ClusterSummary[];
  /** The providers that could not list their clusters. */
  failures: ProviderFailure[];
}

export async function listClusters(provider: ClusterProvider, options: ListOptions = {}): Promise<ClusterListing> {
  const all = await provider.list();
  const failures = (await provider.failures?.()) ?? [];
  // -l or --context that match nothing are usage errors; no clusters at all, unasked, is an empty list (as kubectl).
  // Kubeconfig contexts come sorted by name, as kubectl get-contexts lists them.
  const refs = await selectForListing(provider, { selector: options.selector, context: options.context });
  const clusters = await Promise.all(
    refs.map(async (r) => {
      const { credentials: _c, ...summary } = await describeRef(r, { credentials: false });
      return summary;
    }),
  );
  if (options.live) await goLive(refs, clusters, options.live);
  return { items: placeFailures(all, refs, clusters, failures, failedProviderRow), clusters, failures };
}

/** A provider that could not list, as a row of the list: named after the provider, not ready, with the reason. */
function failedProviderRow(f: ProviderFailure): ClusterSummary {
  return {
    name: f.provider,
    provider: f.provider,
    current: false,
    auth: 'none',
    ready: false,
    reason: f.error.message,
    labels: {},
    source: { kind: 'provider', name: f.provider },
  };
}

/** Reads each reachable cluster's id; a cluster that does not answer becomes not ready with the reason. */
async function goLive(refs: ClusterRef[], items: ClusterSummary[], run: RunOptions): Promise<void> {
  const reachable = refs.map((r, i) => ({ r, i })).filter(({ i }) => items[i].server !== undefined);
  // Loaded with --live only: it brings the hub providers' constants, which a plain list does not need.
  const { readClusterId } = await import('./ids.js');
  const results = await runOverClusters(
    reachable.map(({ r }) => r),
    ({ client }) => readClusterId(client),
    run,
  );
  results.forEach((res, k) => {
    const item = items[reachable[k].i];
    if (res.ok && res.value?.clusterId) Object.assign(item, res.value);
    if (!res.ok) {
      item.ready = false;
      item.reason = res.error!.message;
    }
  });
}
