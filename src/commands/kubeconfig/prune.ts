import { existsSync } from 'node:fs';

import { Args, Flags } from '@oclif/core';

import { BaseCommand } from '../../cli/base-command.js';
import { formatLifetime, parseLifetime } from '../../base/duration.js';
import { UsageError } from '../../base/errors.js';
import { DEFAULT_UNREACHABLE_FOR_MS, type PruneItem, applyPrune, planPrune } from '../../export/prune.js';
import { FailureRecords, pruneStatePath } from '../../export/prune-state.js';
import { precedence } from '../../kubeconfig/loading-rules.js';
import { kernelPath } from '../../base/paths.js';

/**
 * The shortest --request-timeout prune judges with: under it a healthy server far away (or a busy one) does not answer
 * in time, and a failure it records would be the time limit's, not the server's.
 */
const MIN_PRUNE_REQUEST_TIMEOUT_MS = 1000;

/** The stable JSON shape of `kubeconfig prune` (docs/kubeconfig.md). */
export interface KubeconfigPruneResult {
  kind: 'KubeconfigPrune';
  file: string;
  dryRun: boolean;
  /** Whether the file was changed. */
  pruned: boolean;
  /** The copy of the file before it changed (absent when nothing changed). */
  backup?: string;
  items: PruneItem[];
  /** What goes (or went): the contexts, and the clusters and users only they named. */
  remove: { contexts: string[]; clusters: string[]; users: string[] };
}

export default class KubeconfigPrune extends BaseCommand<typeof KubeconfigPrune> {
  static summary =
    'Remove the contexts of a kubeconfig file that are certainly dead: cluster gone, credential expired, server unreachable for a day.';
  static description = `Judges every context of FILE (default: the first file of KUBECONFIG, else ~/.kube/config), fleet's own and the others, over the view kubectl has (FILE with every KUBECONFIG file): gone (its cluster is defined in none of them; for fleet's entries, the kubeconfig file or fleet configuration it was exported from no longer exists, or the provider that exported it answers and no longer lists it), expired (a client certificate's notAfter, a JWT's exp, an allowed exec plugin's expirationTimestamp), unreachable (its server failed to answer in this run and in earlier ones for at least --unreachable-for; failures are recorded in $XDG_STATE_HOME/fleet/prune-failures.json, a DNS failure is not counted, and one run never removes anything as unreachable). The plan is shown first; then the contexts go, with the clusters and users only they named, after a backup of the file (FILE.bak-<UTC time>, 0600).

An exec plugin the file names runs only when the kuberc's Allowlist or fleet.yaml's credentialPluginAllowlist allows it; otherwise that context is judged by /version alone. A confirmation is asked only at a terminal; elsewhere (CI, -o json, a pipe) --yes is required to change the file. Exit 0 when nothing needs removing or the file was pruned, 2 without --yes off a terminal.`;

  static examples = [
    '<%= config.bin %> kubeconfig prune --dry-run',
    '<%= config.bin %> kubeconfig prune ~/.kube/config',
    '<%= config.bin %> kubeconfig prune --yes -o json',
  ];

  static args = {
    file: Args.string({
      description: 'The kubeconfig file to prune (default: the first file of KUBECONFIG, else ~/.kube/config).',
    }),
  };

  static flags = {
    'dry-run': Flags.boolean({ description: 'Show what would be removed; change nothing.' }),
    yes: Flags.boolean({
      char: 'y',
      description: 'Remove without asking (required off a terminal, in CI and with machine output).',
    }),
    'unreachable-for': Flags.string({
      description:
        'Remove a context as unreachable only when its server has failed, across runs, for at least this long (e.g. 24h, 7d).',
      default: formatLifetime(DEFAULT_UNREACHABLE_FOR_MS / 1000),
    }),
  };

  async run(): Promise<KubeconfigPruneResult> {
    const f = this.flags;
    const file = this.args.file ?? precedence().paths[0];
    const unreachableForMs = parseLifetime(f['unreachable-for'], '--unreachable-for');
    // Refused, not judged as "unknown": with a limit this short every server fails, and a run that can only say
    // "unknown" about every context is not what the person asked for.
    const limit = this.fleet.requestTimeoutMs;
    if (limit > 0 && limit < MIN_PRUNE_REQUEST_TIMEOUT_MS) {
      throw new UsageError(
        `--request-timeout ${this.flags['request-timeout']}: prune needs at least 1s to tell a server that is gone from a slow one; nothing was judged`,
      );
    }
    const failures = await FailureRecords.load(pruneStatePath());
    if (failures.ignored)
      this.logStderr(
        `warning: ${failures.ignored}: ignored; earlier failures are not known, so nothing is removed as unreachable in this run`,
      );
    const plan = await planPrune({
      file,
      connector: this.fleet.connector,
      exec: this.fleet.execRunner,
      provider: this.fleet.provider,
      source: async () => {
        // As the export records it (export/credential-args.ts): --kubeconfig without --provider is kubectl's view,
        // whatever fleet.yaml says; otherwise the fleet configuration the run read, else the loading rules' files.
        await this.fleet.provider.provider();
        const flagged = this.fleet.kubeconfigPaths;
        const fleetConfig = flagged && !this.flags.provider ? undefined : this.fleet.trust.configPath;
        const kubeconfig = flagged ?? precedence().paths.filter((p) => existsSync(p));
        return {
          fleetConfig: fleetConfig && kernelPath(fleetConfig),
          kubeconfig: kubeconfig.map((p) => kernelPath(p)),
        };
      },
      concurrency: f.concurrency,
      kubeconfigPaths: this.fleet.kubeconfigPaths ?? precedence().paths,
      failures,
      unreachableForMs,
    });
    // Recorded with --dry-run too: watching a server fail is not a change to the kubeconfig, and a daily dry run should
    // count toward the duration as a daily prune does. A state that cannot be written is a warning, not a failure.
    await failures
      .save()
      .catch((error: unknown) =>
        this.logStderr(
          `warning: ${failures.path}: failures not recorded: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    const result: KubeconfigPruneResult = {
      kind: 'KubeconfigPrune',
      file,
      dryRun: Boolean(f['dry-run']),
      pruned: false,
      items: plan.items,
      remove: plan.remove,
    };
    const removing = plan.remove.contexts.length > 0;
    // Like kubectl config delete-context: current-context is left as it is, and the person is told.
    const current =
      plan.currentContext && plan.remove.contexts.includes(plan.currentContext)
        ? [`current-context "${plan.currentContext}" is among them; choose another with kubectl config use-context`]
        : [];
    const show = (notes: string[]) =>
      this.render(result, {
        rows: result.items,
        columns: [
          { header: 'context', get: (i: PruneItem) => i.context },
          { header: 'action', get: (i) => i.action, color: (i, k) => (i.action === 'remove' ? k.red : undefined) },
          { header: 'reason', shrink: 'first', get: (i) => i.reason ?? '' },
          { header: 'why', get: (i) => i.message },
          { header: 'fleet', get: (i) => (i.fleet ? 'yes' : ''), wide: true },
          { header: 'cluster', get: (i) => i.cluster ?? '', wide: true },
          { header: 'user', get: (i) => i.user ?? '', wide: true },
        ],
        // -o name: the contexts that go (or went).
        names: plan.remove.contexts,
        notes,
      });

    if (!removing || f['dry-run']) {
      await show(
        removing
          ? [`dry run: ${summary(plan.remove)} would be removed from ${file}; nothing changed`, ...current]
          : [`nothing to remove from ${file}`],
      );
      return result;
    }
    if (!f.yes) {
      if (!this.interactive) {
        await show([]);
        throw new UsageError(
          `${file}: ${summary(plan.remove)} to remove; pass --yes to remove them off a terminal (or --dry-run to only show them)`,
        );
      }
      // The table first, then the question: the person sees what goes before saying yes.
      await show([]);
      const { confirm } = await import('@inquirer/prompts');
      const yes = await confirm({
        message: `Remove ${summary(plan.remove)} from ${file}? A backup is written first.`,
        default: false,
      });
      if (!yes) {
        this.logStderr(`nothing changed in ${file}`);
        return result;
      }
    }
    // From here an interrupt (Ctrl-C, SIGTERM) is honoured between the backup and the write: nothing half-done.
    const applied = await applyPrune(plan, { cancel: this.cancellation() });
    result.pruned = true;
    result.backup = applied.backup;
    const done = [`removed ${summary(plan.remove)} from ${file}; backup ${applied.backup}`, ...current];
    if (f.yes) await show(done);
    else for (const line of done) this.logStderr(line);
    return result;
  }
}

function summary(r: KubeconfigPruneResult['remove']): string {
  const n = (count: number, what: string) => `${count} ${what}${count === 1 ? '' : 's'}`;
  return [
    n(r.contexts.length, 'context'),
    r.clusters.length > 0 && n(r.clusters.length, 'cluster'),
    r.users.length > 0 && n(r.users.length, 'user'),
  ]
    .filter(Boolean)
    .join(', ');
}
