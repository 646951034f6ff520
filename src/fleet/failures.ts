import { toErrorInfo } from '../base/errors.js';
import type { ClusterProvider, ClusterRef, ProviderFailure } from '../providers/types.js';
import type { ClusterResult } from './runner.js';
import type { Selection } from './select.js';
import { inShard } from './shard.js';

/**
 * Providers that could not list their clusters, in a fleet-wide result: a selection that walks the whole list
 * (--all, -l) cannot vouch for a provider whose clusters it never saw, so each such provider is one failed entry, at
 * its place in the configuration's order. Named clusters (--cluster) and the current context do not walk the list.
 */
export async function selectionFailures(provider: ClusterProvider, selection: Selection): Promise<ProviderFailure[]> {
  if ((selection.clusters ?? []).length > 0 || !(selection.all || selection.selector)) return [];
  // In a sharded run, a provider's failure is reported by the one shard its name falls in, not by every Pod.
  return ((await provider.failures?.()) ?? []).filter((f) => inShard(f.provider, selection.shard));
}

/**
 * `items` (one per ref of `selected`, a subsequence of the provider's full list `all`) with one entry per failure put
 * where that provider's clusters would have been.
 */
export function placeFailures<T>(
  all: ClusterRef[],
  selected: ClusterRef[],
  items: T[],
  failures: ProviderFailure[],
  entry: (f: ProviderFailure) => T,
): T[] {
  if (failures.length === 0) return items;
  const indexOf = new Map(all.map((r, i) => [r.name, i]));
  const out: T[] = [];
  let next = 0;
  for (const f of failures) {
    while (next < selected.length && (indexOf.get(selected[next].name) ?? Infinity) < f.position)
      out.push(items[next++]);
    out.push(entry(f));
  }
  while (next < items.length) out.push(items[next++]);
  return out;
}

/** A provider failure as a per-cluster result: named after the provider, failed with its listing error. */
export function failureResult<T>(f: ProviderFailure): ClusterResult<T> {
  return { cluster: f.provider, ok: false, error: toErrorInfo(f.error), durationMs: 0 };
}
