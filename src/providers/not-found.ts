import { FleetError, EXIT_USAGE, UsageError } from '../base/errors.js';
import { closeMatches } from '../base/text.js';
import type { ClusterRef } from './types.js';

/** A distinct error for a cluster name nobody knows, with the names the user may have meant. */
export class ClusterNotFoundError extends FleetError {
  readonly clusterName: string;
  readonly suggestions: string[];

  constructor(name: string, where: string, suggestions: string[]) {
    const hint = suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
    super('not-found', `cluster "${name}" not found in ${where}${hint}`, { exitCode: EXIT_USAGE });
    this.name = 'ClusterNotFoundError';
    this.clusterName = name;
    this.suggestions = suggestions;
  }
}

export class AmbiguousClusterError extends FleetError {
  constructor(name: string, candidates: string[]) {
    super('usage', `cluster name "${name}" is ambiguous; use one of: ${candidates.map((c) => `"${c}"`).join(', ')}`, {
      exitCode: EXIT_USAGE,
    });
    this.name = 'AmbiguousClusterError';
  }
}

/**
 * Finds a cluster by exact name, then by unambiguous alias, then by the unambiguous end of a file cluster's name that
 * starts at a `/` of its path (`config+prod`, `b/config+prod` for `/a/b/config+prod`): what a table shows for a file
 * cluster whose context name another cluster shares (shortestNames, below).
 */
export function findCluster(refs: ClusterRef[], name: string, where: string): ClusterRef {
  const exact = refs.find((r) => r.name === name);
  if (exact) return exact;
  for (const matches of [(r: ClusterRef) => r.aliases.includes(name), (r: ClusterRef) => endsFileName(r, name)]) {
    const found = refs.filter(matches);
    if (found.length === 1) return found[0];
    if (found.length > 1)
      throw new AmbiguousClusterError(
        name,
        found.map((r) => r.name),
      );
  }
  const names = [...new Set(refs.flatMap((r) => [r.name, ...r.aliases]))];
  throw new ClusterNotFoundError(name, where, closeMatches(name, names));
}

/** Whether `name` is the end of a file cluster's `<path>+<context>` from a `/` of the path on (the context whole). */
function endsFileName(r: ClusterRef, name: string): boolean {
  const context = r.source.kind === 'kubeconfig-file' ? r.source.context : undefined;
  return (
    context !== undefined &&
    name.length > context.length + 1 &&
    name.endsWith(`+${context}`) &&
    r.name.endsWith(`/${name}`)
  );
}

/** The ends endsFileName accepts for a file cluster, shortest first. */
function fileNameEnds(r: ClusterRef): string[] {
  const context = r.source.kind === 'kubeconfig-file' ? r.source.context : undefined;
  if (context === undefined || !r.name.endsWith(`+${context}`)) return [];
  const path = r.name.slice(0, -context.length - 1);
  const ends: string[] = [];
  for (let i = path.lastIndexOf('/'); i >= 0; i = path.lastIndexOf('/', i - 1)) {
    if (i < path.length - 1) ends.push(`${path.slice(i + 1)}+${context}`);
    if (i === 0) break;
  }
  return ends;
}

/**
 * For each file cluster of `refs`, the shortest name findCluster over the same list finds it by, keyed by its full
 * name: its context name when no other cluster has it as a name or alias, else the shortest end of its path that only
 * it has (`config+prod`); clusters whose full name is the shortest are left out. Only file clusters: their names are
 * `<path>+<context>`, paths a person does not need in a table row, while every other provider's name is already what
 * its object is called (issue 41). Computed by findCluster's own rule, so a name shown is a name the same list accepts;
 * counted once rather than one findCluster per candidate (2,000 contexts).
 */
export function shortestNames(refs: ClusterRef[]): Map<string, string> {
  const exact = new Map<string, ClusterRef>();
  const aliasCount = new Map<string, number>();
  for (const r of refs) {
    if (!exact.has(r.name)) exact.set(r.name, r);
    for (const a of new Set(r.aliases)) aliasCount.set(a, (aliasCount.get(a) ?? 0) + 1);
  }
  let endCount: Map<string, number> | undefined;
  const ends = () => {
    if (!endCount) {
      endCount = new Map();
      for (const r of refs) for (const e of fileNameEnds(r)) endCount.set(e, (endCount.get(e) ?? 0) + 1);
    }
    return endCount;
  };
  // findCluster's order: an exact name first, then an alias (ambiguous stops there), then the end of a file name.
  const finds = (r: ClusterRef, name: string, tier: 'alias' | 'end') => {
    if (exact.has(name)) return exact.get(name) === r;
    const aliases = aliasCount.get(name) ?? 0;
    if (tier === 'alias') return aliases === 1 && r.aliases.includes(name);
    return aliases === 0 && ends().get(name) === 1;
  };
  const out = new Map<string, string>();
  for (const r of refs) {
    if (r.source.kind !== 'kubeconfig-file') continue;
    let best = r.name;
    for (const a of r.aliases) if (a.length < best.length && finds(r, a, 'alias')) best = a;
    if (best === r.name)
      for (const e of fileNameEnds(r))
        if (e.length < best.length && finds(r, e, 'end')) {
          best = e;
          break;
        }
    if (best !== r.name) out.set(r.name, best);
  }
  return out;
}

/**
 * `--context NAME` that names no context of the kubeconfig: the flag, the name, where it looked and what is there (a
 * `cluster "NAME" not found` would name the wrong thing: the user asked for a context). `clusters list` and every
 * command over the current context say it the same way.
 */
export function contextNotFound(context: string, contexts: string[] | undefined, where: string): UsageError {
  // No list at all: there is no kubeconfig, which `where` says.
  if (contexts === undefined) return new UsageError(`--context "${context}": no such context in ${where}`);
  const names = [...new Set(contexts)].sort();
  const shown = names.slice(0, 12).join(', ') + (names.length > 12 ? ` and ${names.length - 12} more` : '');
  return new UsageError(
    `--context "${context}": no such context in ${where}; ${names.length > 0 ? `contexts: ${shown}` : 'it has no contexts'}`,
  );
}
