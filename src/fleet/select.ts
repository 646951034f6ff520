import { UsageError } from '../base/errors.js';
import { contextNotFound } from '../providers/not-found.js';
import type { ClusterProvider, ClusterRef } from '../providers/types.js';
import { matchesSelector, parseSelector } from './selector.js';
import { type Shard, inShard } from './shard.js';

export interface Selection {
  clusters?: string[];
  all?: boolean;
  selector?: string;
  /** The kubeconfig context to use when nothing else selects (the current context otherwise). */
  context?: string;
  /** Only this part of what the rest selects (--shard, or an Indexed Job's index with --shard-count). */
  shard?: Shard;
}

/**
 * Which clusters a fleet-wide command works on: named ones (--cluster, repeatable), all (--all), those whose labels
 * match (-l), or, with none of these, the current context like kubectl. A selection that matches no cluster is a usage
 * error naming what matched nothing and what exists: a command that checked nothing must never report success.
 */
export async function selectClusters(provider: ClusterProvider, selection: Selection): Promise<ClusterRef[]> {
  const named = selection.clusters ?? [];
  if (selection.all && named.length > 0) throw new UsageError('--all and --cluster cannot be used together');
  let refs: ClusterRef[];
  if (named.length > 0) {
    refs = [];
    for (const name of named) {
      const ref = await provider.get(name);
      if (!refs.includes(ref)) refs.push(ref);
    }
  } else if (selection.all || selection.selector) {
    refs = await provider.list();
    if (refs.length === 0)
      throw new UsageError(
        `${selection.all ? '--all' : `--selector ${selection.selector}`}: no clusters found in ${where(provider)}`,
      );
  } else {
    if (!provider.current) throw new UsageError('name a cluster with --cluster, or use --all or --selector');
    refs = [await provider.current(selection.context)];
  }
  if (selection.selector)
    refs = bySelector(refs, selection.selector, named.length > 0 ? 'the named clusters' : undefined);
  return refs;
}

/**
 * The part of a selection a shard takes, by each cluster's name alone (shardOf), so the shards of one selection are
 * disjoint and together the whole of it. An empty part is not an error: with more shards than clusters some Pods have
 * nothing to do, and say so (base command).
 */
export function takeShard(refs: ClusterRef[], shard: Shard | undefined): ClusterRef[] {
  return shard === undefined ? refs : refs.filter((r) => inShard(r.name, shard));
}

/** What `clusters list` shows: every cluster, or those matching -l and --context; an empty listing is fine only unasked. */
export async function selectForListing(
  provider: ClusterProvider,
  selection: { selector?: string; context?: string },
): Promise<ClusterRef[]> {
  let refs = sortedByName(await provider.list());
  if (selection.context) {
    // --context picks kubeconfig contexts; for hub-backed providers it named the hub and selects nothing here.
    const files = refs.filter((r) => r.source.kind === 'kubeconfig-file');
    const matched = files.filter((r) => r.source.context === selection.context);
    if (files.length > 0 && matched.length === 0) {
      throw contextNotFound(
        selection.context,
        files.map((r) => r.source.context ?? ''),
        where(provider),
      );
    }
    if (files.length === 0 && refs.length === 0) {
      throw new UsageError(`--context "${selection.context}": no clusters found in ${where(provider)}`);
    }
    refs = refs.filter((r) => r.source.kind !== 'kubeconfig-file' || r.source.context === selection.context);
  }
  if (selection.selector) {
    if (refs.length === 0)
      throw new UsageError(`--selector ${selection.selector}: no clusters found in ${where(provider)}`);
    refs = bySelector(refs, selection.selector);
  }
  return refs;
}

/**
 * The listing order: kubeconfig contexts by name, as kubectl sorts them; other providers keep their own order (their
 * hub's or tool's), providers in their configured order. Commands over clusters keep the provider's order.
 */
function sortedByName(refs: ClusterRef[]): ClusterRef[] {
  const groups = new Map<string, ClusterRef[]>();
  for (const r of refs) {
    // Appended in place: copying the group for every ref made 2,000 file clusters cost 2,000 x 2,000 copies.
    const group = groups.get(r.provider);
    if (group) group.push(r);
    else groups.set(r.provider, [r]);
  }
  const byName = (a: ClusterRef, b: ClusterRef) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...groups.values()].flatMap((g) =>
    g.every((r) => r.source.kind === 'kubeconfig-file') ? [...g].sort(byName) : g,
  );
}

function bySelector(refs: ClusterRef[], selector: string, among?: string): ClusterRef[] {
  const requirements = parseSelector(selector);
  const matched = refs.filter((r) => matchesSelector(requirements, r.labels));
  if (matched.length === 0) {
    const keys = [...new Set(refs.flatMap((r) => Object.keys(r.labels)))].sort();
    const what = among ?? `the ${refs.length} cluster${refs.length === 1 ? '' : 's'}`;
    throw new UsageError(
      `--selector ${selector} matched none of ${what}; ${keys.length > 0 ? `label keys in use: ${someOf(keys)}` : 'they have no labels'}`,
    );
  }
  return matched;
}

function where(provider: ClusterProvider): string {
  return provider.describe?.() ?? `provider ${provider.name}`;
}

/** A list short enough for a one-line message. */
function someOf(items: string[], max = 12): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}
