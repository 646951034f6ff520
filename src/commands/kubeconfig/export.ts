import { isAbsolute } from 'node:path';
import { Flags } from '@oclif/core';
import yaml from 'js-yaml';

import { ConfigError, UsageError, toErrorInfo } from '../../base/errors.js';
import { checkWritableFile, writeError } from '../../base/files.js';
import { mapLimit } from '../../base/concurrency.js';
import { testPauseHook } from '../../base/test-pause.js';
import { BaseCommand, type BaseFlags, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlags } from '../../cli/flags.js';
import type { Column } from '../../cli/table.js';
import { errorColumn } from '../../cli/access-format.js';
import { loadFleetConfig } from '../../config/fleet-config.js';
import { credentialArgs } from '../../export/credential-args.js';
import { type ExportedCluster, duplicateName, exportCluster, exportedKubeconfig } from '../../export/export.js';
import { DEFAULT_NAME_TEMPLATE, nameTemplate } from '../../export/names.js';
import { type ForeignContent, checkOutReplace, describeForeign } from '../../export/out-file.js';
import { ExportWrites } from '../../export/write-gate.js';
import { type CredentialRunner, READER_NAME, credentialRunner, defaultFleetCommand } from '../../export/reader.js';
import { failureResult, placeFailures, selectionFailures } from '../../fleet/failures.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import type { ClusterResult } from '../../fleet/runner.js';
import { writeFileAtomic } from '../../kubeconfig/atomic-write.js';
import { mergeKubercAllowlist, writeKubercAllowlist } from '../../kubeconfig/kuberc.js';
import { type MergePlan, checkMergeTarget, mergeIntoKubeconfigFile } from '../../kubeconfig/merge.js';
import type { KubeconfigDoc } from '../../kubeconfig/types.js';
import type { ClusterRef } from '../../providers/types.js';

/** One cluster of `kubeconfig export -o json` (docs/kubeconfig.md). */
export type ExportItem = ClusterItem<{ context: string; provider: string; server: string }>;

/** The stable JSON shape of `kubeconfig export --out FILE` or `--merge-into FILE` (without either, stdout is the kubeconfig itself). */
export interface KubeconfigExport {
  kind: 'KubeconfigExport';
  /** The file written (or that would be, with --dry-run). */
  out?: string;
  dryRun: boolean;
  items: ExportItem[];
  /** --merge-into: what the merge did to that file (or would do, with --dry-run). */
  merge?: MergePlan;
  /** --write-kuberc: the kuberc and the commands added to its allowlist (or that would be). */
  kuberc?: { path: string; added: string[]; dryRun: boolean };
  /** --out with --force over a file that held what fleet did not export: what was replaced (or would be). */
  replaced?: ForeignContent;
  /** A signal that arrived after the first file was written (the run then completed): one line, as on stderr. */
  warnings?: string[];
}

export default class KubeconfigExportCommand extends BaseCommand<typeof KubeconfigExportCommand> {
  static summary =
    'Write a kubeconfig with one context per cluster, for kubectl, k9s, Headlamp and client libraries, with no secret in it.';
  static description = `Over the selected clusters (--all, -l, -c, --provider): one context, cluster and user per cluster. The server and CA are the provider's (the CA inline); the user is an exec entry that runs "fleet kubeconfig credential" (through fleet-credential, which answers from the cache without starting Node, when it is installed beside fleet), which fetches the cluster's credential through the same provider each time kubectl needs one (cached for a minute, or until the credential's own expiry), so the file holds no token, key or password and a credential rotated or revoked on the hub takes effect on every laptop within a minute. Every entry is marked with the fleet.dev/export extension.

Context names come from --name-template (default ${DEFAULT_NAME_TEMPLATE}; placeholders {id}: the fleet id as --cluster takes it, {name}: the context name of a kubeconfig file or the name within its provider, {provider}: the provider's name).

Without --out or --merge-into the kubeconfig is printed (YAML; JSON with -o json). With --out FILE it is written atomically with mode 0600, replacing the file only when everything in it is fleet's (an earlier --out): a file with contexts, clusters or users fleet did not export (~/.kube/config, an admin kubeconfig) is refused unless --force; with --merge-into FILE (e.g. ~/.kube/config) fleet's entries are added or updated there, and only those: every entry fleet did not write, every other byte and current-context stay as they are, and a second run changes nothing. With either, the output is a summary of the clusters. --write-kuberc FILE adds the exec command to that kuberc's credentialPluginAllowlist (kubectl 1.35's credentialPluginPolicy: Allowlist). --dry-run writes nothing. Exit 1 when a selected cluster could not be exported (the others are).`;

  static examples = [
    '<%= config.bin %> kubeconfig export --all --merge-into ~/.kube/config',
    '<%= config.bin %> kubeconfig export --all --out ~/.kube/fleet.yaml',
    '<%= config.bin %> kubeconfig export -l env=prod --name-template "prod-{name}"',
    '<%= config.bin %> kubeconfig export --all --out fleet.kubeconfig --command /usr/local/bin/fleet --write-kuberc ~/.kube/kuberc',
  ];

  static flags = {
    ...fleetFlags,
    'name-template': Flags.string({
      description: 'Context name of each cluster: {id}, {name} and {provider} are replaced.',
      default: DEFAULT_NAME_TEMPLATE,
    }),
    command: Flags.string({
      description:
        'The fleet the exec entries run: a name looked up on PATH or an absolute path. Default: fleet; for the single executable, the name PATH finds it by (kubectl-fleet_cli as a krew plugin), else its absolute path.',
    }),
    out: Flags.string({ description: 'Write the kubeconfig to this file (atomically, mode 0600) instead of stdout.' }),
    force: Flags.boolean({
      description:
        '--out: replace the file even when it holds contexts, clusters or users fleet did not export (they are named first).',
    }),
    'merge-into': Flags.string({
      description:
        "Add or update fleet's contexts in this kubeconfig (e.g. ~/.kube/config), leaving every other entry and current-context as they are.",
    }),
    'write-kuberc': Flags.string({
      description: "Add the exec command to this kuberc's credentialPluginAllowlist (written atomically, 0600).",
    }),
    'dry-run': Flags.boolean({ description: 'Write no file: show what --out and --write-kuberc would write.' }),
    'credential-reader': Flags.string({
      description: `The program the entries run: ${READER_NAME} (which answers from fleet's credential cache without starting Node, and runs fleet for the rest) is used when it is installed beside fleet; an absolute path names one, "none" runs fleet itself.`,
    }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags };
  }

  async run(): Promise<KubeconfigExport | KubeconfigDoc> {
    const {
      name,
      runner,
      out,
      mergeInto: into,
      writeKuberc: kuberc,
      dryRun,
      replaces,
    } = await exportOptions(this.flags);
    const command = runner.command;
    // Ctrl-C ends the run at once, with nothing written (exit 130): a hub that does not answer is not waited for.
    const cancel = this.cancellation();
    const interrupted = new Promise<never>((_, reject) =>
      cancel.signal.addEventListener('abort', () => reject(cancel.signal.reason as Error), { once: true }),
    );
    interrupted.catch(() => undefined);
    const untilInterrupted = <T>(work: Promise<T>): Promise<T> => Promise.race([work, interrupted]);

    const provider = this.fleet.provider;
    const refs = await untilInterrupted(this.fleet.selected());
    const clash = duplicateName(
      refs.map((ref) => ({ cluster: ref.name, name: name(ref) })),
      this.flags['name-template'],
    );
    if (clash) throw new UsageError(clash);
    const configPath = this.fleet.trust.configPath;
    // Every exported entry names the configuration by absolute path, so that kubectl runs read it from any directory,
    // as a file the user named: a ./fleet.yaml fleet only found (a checkout's, which a later pull may change) is not.
    if (configPath !== undefined && this.fleet.trust.configFound) {
      throw new ConfigError(
        `${configPath} was found in the working directory, not named: exported entries would read it on every kubectl call as your own configuration; to export from it, name it: --fleet-config ${configPath} (or FLEET_CONFIG)`,
      );
    }
    const config = configPath === undefined ? undefined : await loadFleetConfig({ path: configPath });
    const source = {
      kubeconfig: this.fleet.kubeconfigPaths,
      context: this.flags.context,
      provider: this.flags.provider,
      config,
    };
    const connector = this.fleet.connector;
    const settings = {
      command,
      name,
      args: (ref: Parameters<typeof credentialArgs>[0]) => [...runner.prefix, ...credentialArgs(ref, source)],
    };
    const ran: ClusterResult<ExportedCluster | undefined>[] = await untilInterrupted(
      mapLimit(refs, this.flags.concurrency, async (ref) => {
        cancel.check();
        try {
          return { cluster: ref.name, ok: true, value: await exportCluster(ref, connector, settings), durationMs: 0 };
        } catch (error) {
          return { cluster: ref.name, ok: false, error: toErrorInfo(error), durationMs: 0 };
        }
      }),
    );
    const failures = await untilInterrupted(selectionFailures(provider, this.fleet.selection));
    const results =
      failures.length > 0
        ? placeFailures(await provider.list(), refs, ran, failures, (f) =>
            failureResult<ExportedCluster | undefined>(f),
          )
        : ran;
    if (results.some((r) => !r.ok)) this.markFailed();
    // Contexts fleet exported before (a merged file read back by the file provider) are not exported again.
    const kept = results.filter((r) => !(r.ok && r.value === undefined));
    const exported = kept.flatMap((r) => (r.ok && r.value ? [r.value] : []));
    const doc = exportedKubeconfig(exported);
    cancel.check();

    if (!out && !into) {
      for (const r of kept) if (r.error) this.logStderr(`error: ${r.cluster}: ${r.error.message}`);
      if (this.format !== 'json') this.log(yaml.dump(doc, { noRefs: true, lineWidth: -1 }).trimEnd());
      return doc;
    }
    // From here the interrupt is decided at the first file's rename (export/write-gate.ts): nothing written and exit
    // 130, or written, with the summary and a warning.
    const writes = new ExportWrites(cancel, testPauseHook(process.env));
    // --force over a file with entries of the user's own: said before it is replaced, in every format.
    const replacing =
      out && replaces
        ? `--out ${out}: ${dryRun ? 'would replace' : 'replacing'} ${describeForeign(replaces)} (--force)`
        : undefined;
    if (replacing) this.logStderr(`warning: ${replacing}`);
    if (out && !dryRun) {
      await writeFileAtomic(out, yaml.dump(doc, { noRefs: true, lineWidth: -1 }), {
        mode: 0o600,
        gate: writes.gate(out),
      }).catch((error: unknown) => {
        throw writeError(`--out ${out}`, out, error);
      });
    }
    const result: KubeconfigExport = {
      kind: 'KubeconfigExport',
      out,
      dryRun,
      items: kept.map((r) => toItem(r, (v) => ({ context: v!.name, provider: v!.provider, server: v!.server }))),
      ...(replaces ? { replaced: replaces } : {}),
    };
    if (into)
      result.merge = await mergeIntoKubeconfigFile(into, doc, {
        dryRun,
        label: `--merge-into ${into}`,
        gate: writes.gate(into),
      });
    if (kuberc) {
      const merged = dryRun
        ? await mergeKubercAllowlist(kuberc, [command])
        : await writeKubercAllowlist(kuberc, [command], writes.gate(kuberc));
      result.kuberc = { path: kuberc, added: merged.added, dryRun };
    }
    const late = writes.settle();
    if (late) result.warnings = [late];
    const columns: Column<ExportItem>[] = [
      { header: 'cluster', get: (i) => i.cluster, cluster: true },
      { header: 'context', get: (i) => i.context ?? '' },
      { header: 'server', get: (i) => i.server ?? '', wide: true },
      ...errorColumn(result.items, (i) => i),
    ];
    const ok = result.items.filter((i) => i.ok).length;
    const contexts = `${ok} context${ok === 1 ? '' : 's'}`;
    const notes: string[] = [];
    if (out) notes.push(`${dryRun ? 'would write' : 'wrote'} ${contexts} to ${out}`);
    if (result.merge) notes.push(mergeNote(result.merge), ...result.merge.warnings);
    if (late) notes.push(`warning: ${late}`);
    if (result.kuberc)
      notes.push(
        `${kuberc}: ${result.kuberc.added.length === 0 ? 'already allows' : dryRun ? 'would add' : 'added'} {name: ${command}}${result.kuberc.added.length === 0 ? '' : ' to credentialPluginAllowlist'}`,
      );
    await this.render(result, {
      rows: result.items,
      columns,
      names: result.items.flatMap((i) => (i.context ? [i.context] : [])),
      failures: result.items,
      notes,
    });
    return result;
  }
}

/** What `kubeconfig export` writes and how it names and runs the entries, from its flags. */
export interface ExportOptions {
  /** The context name of a cluster (--name-template). */
  name: (ref: ClusterRef) => string;
  /** What the exec entries run: fleet (--command: a name looked up on PATH or an absolute path), or the reader in front of it. */
  runner: CredentialRunner;
  out?: string;
  mergeInto?: string;
  writeKuberc?: string;
  dryRun: boolean;
  /** --out --force over a file with what fleet did not export: what the write replaces. */
  replaces?: ForeignContent;
}

/** Everything the user typed is checked here, before any provider or cluster is read (one usage line, exit 2). */
export async function exportOptions(flags: BaseFlags<typeof KubeconfigExportCommand>): Promise<ExportOptions> {
  const name = nameTemplate(flags['name-template']);
  const command = flags.command ?? defaultFleetCommand();
  if (command.trim() === '') throw new UsageError('--command: empty');
  // A relative path would be resolved against the kubeconfig's own directory by client-go: ask for the absolute one.
  if (command.includes('/') && !isAbsolute(command))
    throw new UsageError(
      `--command: ${command} is a relative path; give an absolute path, or a name looked up on PATH`,
    );
  const runner = credentialRunner(command, flags['credential-reader']);
  // Both would be written, the second a copy of the first's entries: one of them was meant.
  if (flags.out && flags['merge-into'])
    throw new UsageError(
      "--out and --merge-into cannot be used together: --out FILE writes a kubeconfig of fleet's contexts only, --merge-into FILE adds them to a kubeconfig you keep; use one of them",
    );
  if (flags.force && !flags.out) throw new UsageError('--force replaces an --out file; it needs --out FILE');
  let replaces: ForeignContent | undefined;
  if (flags.out) {
    await checkWritableFile(flags.out, `--out ${flags.out}`);
    replaces = await checkOutReplace(flags.out, Boolean(flags.force));
  }
  if (flags['merge-into']) await checkMergeTarget(flags['merge-into'], `--merge-into ${flags['merge-into']}`);
  if (flags['write-kuberc'])
    await checkWritableFile(flags['write-kuberc'], `--write-kuberc ${flags['write-kuberc']}`, 'a kuberc file');
  return {
    name,
    runner,
    out: flags.out,
    mergeInto: flags['merge-into'],
    writeKuberc: flags['write-kuberc'],
    dryRun: Boolean(flags['dry-run']),
    ...(replaces ? { replaces } : {}),
  };
}

/**
 * One line for what --merge-into did: counts of fleet's entries (this export's, and those of other exports it left as
 * they are) apart from the user's own, and that nothing else changed.
 */
export function mergeNote(m: MergePlan): string {
  const would = m.dryRun ? 'would be ' : '';
  const others = m.keptFleet.length > 0 ? `, ${m.keptFleet.length} of other exports left as they are` : '';
  const own = `${m.keptOwn.length} entr${m.keptOwn.length === 1 ? 'y' : 'ies'} of your own left as they are`;
  if (m.created) {
    // Said apart: a path that did not exist may be a typo (~/.kub/config) of the kubeconfig the user meant.
    const made = `${m.createdDirectory ? `the directory ${m.createdDirectory} and ` : ''}a new file`;
    const entries = `${m.added.length} entr${m.added.length === 1 ? 'y' : 'ies'}`;
    return `${m.file}: ${m.dryRun ? 'would create' : 'created'} ${made} with fleet's ${entries}${m.currentContextSet ? `; current-context ${would}set to ${m.currentContext}` : ''}`;
  }
  if (!m.changed) return `${m.file}: already up to date (${m.unchanged.length} of fleet's entries${others}; ${own})`;
  const counts = [
    `${m.added.length} ${would}added`,
    `${m.updated.length} ${would}updated`,
    `${m.unchanged.length} unchanged`,
  ].join(', ');
  return `${m.file}: fleet's entries ${counts}${others}; ${own}${m.currentContextSet ? `; current-context ${would}set to ${m.currentContext}` : ''}`;
}
