import { EXIT_FAILED, EXIT_USAGE, FleetError, toErrorInfo } from '../base/errors.js';
import { escapeTerminal } from '../base/terminal.js';
import { scrub } from '../kubeconfig/redact.js';
import type { ClusterResult } from '../fleet/runner.js';
import type { ClusterRef } from '../providers/types.js';
import { oneLine } from './parse.js';
import { closestName } from './suggest.js';

/**
 * The error and exit policy of every command, one place: 0 success, 1 a failed check or cluster, 2 usage or
 * configuration, 130/143 interrupted (README "Exit codes and errors"). Commands never write process.exitCode
 * themselves; they call the base command's markFailed, which comes here.
 */

/**
 * Marks the run as failed with `code` while the result is still printed. A code already set that is higher stays: a
 * configuration error (2) is not hidden by a failed check found after it, and an interrupt (130/143) by neither.
 */
export function raiseExitCode(code = EXIT_FAILED): void {
  const current = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
  if (!(current > code)) process.exitCode = code;
}

/**
 * The exit code of a run over clusters: 1 when any cluster failed. A kubeconfig context that names a missing cluster or
 * user, an unreadable certificate file: the user's configuration is wrong, exit 2 in every command, also when it is one
 * cluster's result among others (README "Exit codes and errors"), unless the command reports such an entry as a failed
 * check of its own (clusters verify's provider-ready check, exit 1 like any failed check). A broken entry of a hub's
 * inventory (a Secret without its key) is that cluster's failure, and a provider that could not list is reported
 * beside the clusters: both stay exit 1.
 */
export function clusterRunExitCode<R>(
  refs: ClusterRef[],
  ran: ClusterResult<R>[],
  results: ClusterResult<R>[],
  brokenEntryIsCheck: boolean,
): number {
  if (!brokenEntryIsCheck) {
    const kubeconfigContexts = new Set(refs.filter((r) => r.source.kind === 'kubeconfig-file').map((r) => r.name));
    if (ran.some((r) => (r.error?.kind === 'config' || r.error?.kind === 'usage') && kubeconfigContexts.has(r.cluster)))
      return EXIT_USAGE;
  }
  return results.some((r) => !r.ok) ? EXIT_FAILED : 0;
}

/** How a command's error ends the run: its exit code, its one line and the kind its JSON/YAML document names. */
export interface ErrorOutcome {
  code: number;
  kind: string;
  /** One line, scrubbed; escaped for the terminal where it is printed. */
  message: string;
  /** Whether "(run with --verbose for details)" helps: an unexpected error (not fleet's, not oclif's parse). */
  hint: boolean;
}

/**
 * The outcome of an error thrown by a command: a FleetError keeps its code and its first line; oclif's parse errors
 * are exit 2, folded into one line; anything else is an internal error, exit 1.
 */
export function errorOutcome(
  err: Error & { exitCode?: number; oclif?: { exit?: number }; flags?: unknown },
  knownFlags: string[] = [],
): ErrorOutcome {
  const isFleet = err instanceof FleetError;
  const code = isFleet ? err.exitCode : (err.oclif?.exit ?? 1);
  const info = isFleet ? toErrorInfo(err) : { kind: code === 2 ? 'usage' : 'internal', message: err.message };
  const message = isFleet ? info.message.split('\n')[0] : oneLine(err) + flagSuggestion(err, knownFlags);
  return { code, kind: info.kind, message: scrub(message), hint: !isFleet && !err.oclif };
}

/**
 * `; did you mean --output?` after oclif's "Nonexistent flag: --ouput", as an unknown command gets its closest command
 * (hooks/command-not-found.ts): the closest long flag of the command, by the same distance and the same bound.
 */
export function flagSuggestion(err: { flags?: unknown; oclif?: unknown }, knownFlags: string[]): string {
  if (!err.oclif || !Array.isArray(err.flags) || knownFlags.length === 0) return '';
  const hints: string[] = [];
  for (const typed of err.flags) {
    if (typeof typed !== 'string' || !typed.startsWith('--')) continue;
    const best = closestName(typed.slice(2).split('=')[0], knownFlags);
    if (best) hints.push(`--${best}`);
  }
  return hints.length === 0 ? '' : `; did you mean ${hints.join(', ')}?`;
}

/**
 * The stderr side of an error, for a person in every format: `error: <line>`, escaped like every stderr line; with
 * --verbose the stack (lines by nature, its frames; the message at its top is data and may hold anything else).
 */
export function writeErrorLines(err: Error, outcome: ErrorOutcome, verbose: boolean): void {
  process.stderr.write(`error: ${escapeTerminal(outcome.message)}\n`);
  if (verbose && err.stack) process.stderr.write(escapeTerminal(scrub(err.stack), { keepNewlines: true }) + '\n');
  if (outcome.hint && !verbose) process.stderr.write('(run with --verbose for details)\n');
}
