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

/** Finds a cluster by exact name, then by unambiguous alias. */
export function findCluster(refs: ClusterRef[], name: string, where: string): ClusterRef {
  const exact = refs.find((r) => r.name === name);
  if (exact) return exact;
  const byAlias = refs.filter((r) => r.aliases.includes(name));
  if (byAlias.length === 1) return byAlias[0];
  if (byAlias.length > 1)
    throw new AmbiguousClusterError(
      name,
      byAlias.map((r) => r.name),
    );
  const names = [...new Set(refs.flatMap((r) => [r.name, ...r.aliases]))];
  throw new ClusterNotFoundError(name, where, closeMatches(name, names));
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
