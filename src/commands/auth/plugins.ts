import { Flags } from '@oclif/core';

import { BaseCommand, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlags } from '../../cli/flags.js';
import type { Column } from '../../cli/table.js';
import { type PluginEntry, kubercChoice, listPlugins } from '../../access/plugins.js';
import { ConfigError, UsageError } from '../../base/errors.js';
import { checkWritableFile } from '../../base/files.js';
import { selectForListing } from '../../fleet/select.js';
import {
  type EntryKey,
  allowlistEntryText,
  goClean,
  interpreterRefusal,
  mergeKubercAllowlist,
  writeKubercAllowlist,
} from '../../kubeconfig/kuberc.js';

/** The stable JSON shape of `auth plugins` (docs/security.md). */
export interface PluginList {
  kind: 'PluginList';
  /** The kuberc whose policy was applied, if any. */
  kuberc?: string;
  items: PluginEntry[];
  /** --write-kuberc: the file and the commands added to its allowlist (or that would be, with --dry-run). */
  written?: {
    path: string;
    added: string[];
    dryRun: boolean;
    /** The field the file's entries are written with (`name`, kubectl 1.35's, or `command` when the list uses it). */
    entryKey: EntryKey;
    /**
     * Commands fleet does not add: without --command those only data names that the file does not allow (`why:
     * data`; `line` is the kuberc entry to add by hand if you trust it, or for an interpreter the fleet.yaml entry whose
     * `args` to fill in), and every interpreter (`why: interpreter`, with or
     * without --command: `line` allows the wrapper script its arguments run, or a placeholder path when they name none).
     */
    notAdded: Array<{ command: string; sources: string[]; line: string; why: 'data' | 'interpreter'; message: string }>;
  };
}

export default class AuthPlugins extends BaseCommand<typeof AuthPlugins> {
  static summary =
    'List the exec credential plugins the fleet would run, where each is written, and whether policy allows it.';
  static description = `Every exec command named by the kubeconfigs of the selected clusters, grouped by command and by whose word it is: the user's own files (kubeconfig files, a ClusterProfile access-provider file) or hub data (a kubeconfig read from a cluster: hub Secrets of every format, Cluster API, ClusterProfiles). For each: the clusters that use it, and whether it may run under the user's kuberc (credentialPluginPolicy, as kubectl 1.35 reads it) and, for hub data, the fleet configuration's credentialPluginAllowlist. Nothing is run.

--write-kuberc FILE adds the commands of your own files (or those named with --command) to FILE's credentialPluginAllowlist, merging with what is there, so that kubectl with credentialPluginPolicy: Allowlist runs them too; a command only hub data names is never added: it is listed with the line to add by hand. The write takes FILE.lock (as export --merge-into does), goes through a symlink to its target, and is read back. --dry-run shows what it would add.

Exit 1 when a selected cluster's plugin is refused, or --write-kuberc left a command named by data for you to add.`;

  static examples = [
    '<%= config.bin %> auth plugins',
    '<%= config.bin %> auth plugins --fleet-config fleet.yaml -o json',
    '<%= config.bin %> auth plugins --write-kuberc ~/.kube/kuberc --command kubelogin --dry-run',
  ];

  static flags = {
    // The selection flags the other auth commands take (the same definitions): -c, --all and -l. Without -c every
    // cluster is listed (what --all says), as a listing of where plugins are written should be.
    cluster: fleetFlags.cluster,
    all: fleetFlags.all,
    selector: fleetFlags.selector,
    'write-kuberc': Flags.string({
      description: "Add the plugins' commands to this kuberc's credentialPluginAllowlist (written atomically, 0600).",
    }),
    command: Flags.string({
      description: 'With --write-kuberc: only this command (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'dry-run': Flags.boolean({ description: 'With --write-kuberc: show what would be added, write nothing.' }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags };
  }

  async run(): Promise<PluginList> {
    const out = this.flags['write-kuberc'];
    if (!out && (this.flags.command || this.flags['dry-run']))
      throw new UsageError(`${this.flags.command ? '--command' : '--dry-run'} needs --write-kuberc`);
    // The file is checked before anything else is looked at: a run never does its work and then cannot keep it.
    if (out) await checkWritableFile(out, `--write-kuberc ${out}`, 'a kuberc file');
    const refs = this.flags.cluster
      ? await this.fleet.selected()
      : await selectForListing(this.fleet.provider, { selector: this.flags.selector, context: this.flags.context });
    const items = listPlugins(refs);
    const kuberc = await this.fleet.trust.kuberc();
    const result: PluginList = { kind: 'PluginList', ...(kuberc ? { kuberc: kuberc.path } : {}), items };

    // --write-kuberc without --command over a fleet whose plugins all come from data: nothing is the user's to add.
    let nothingChosen = false;
    if (out) {
      const known = new Set(items.map((i) => i.command));
      const unknown = (this.flags.command ?? []).filter((c) => !known.has(c));
      if (unknown.length > 0)
        throw new ConfigError(
          `--command: no selected cluster runs ${unknown.map((c) => `"${c}"`).join(', ')}; the fleet runs ${[...known].map((c) => `"${c}"`).join(', ') || 'no plugin'}`,
        );
      if (known.size === 0)
        throw new UsageError('--write-kuberc: the selected clusters run no exec plugin; nothing to allow');
      const { wanted: chosen, dataOnly } = kubercChoice(items, this.flags.command);
      // An interpreter is never written (issue 46): allowing bash allows every program any kubeconfig passes it.
      const interpreters = chosen.filter((c) => interpreterRefusal(c, out) !== undefined);
      const wanted = chosen.filter((c) => !interpreters.includes(c));
      nothingChosen = chosen.length === 0;
      // The merge is computed (and refused, say for a DenyAll file) the same way with --dry-run; only the write is skipped.
      const merged = this.flags['dry-run']
        ? await mergeKubercAllowlist(out, wanted)
        : await writeKubercAllowlist(out, wanted);
      const notAdded: NonNullable<PluginList['written']>['notAdded'] = dataOnly
        .filter((d) => !merged.allowlist.includes(goClean(d.command)))
        .map((d) => {
          const named = `${out}: not added "${d.command}": named by hub data (${summarize(d.sources)}), not by your files`;
          // An interpreter from data: a kuberc entry would not let data give it arguments (TrustPolicy.refusedUse), and
          // would let every kubeconfig run anything; only fleet.yaml can name the exact arguments.
          if (interpreterRefusal(d.command, out) !== undefined) {
            const line = `credentialPluginAllowlist: [{command: ${d.command}, args: [...]}]`;
            const message = `${named}, and it is an interpreter: no kuberc entry lets hub data run it with arguments; if you trust what the data runs, add \`${line}\` with its exact arguments to your fleet configuration`;
            return { ...d, line, why: 'data' as const, message };
          }
          const line = `- ${allowlistEntryText(goClean(d.command), merged.entryKey)}`;
          const message = `${named}; if you trust it, add \`${line}\` under credentialPluginAllowlist yourself`;
          return { ...d, line, why: 'data' as const, message };
        });
      for (const command of interpreters) {
        const rows = items.filter((i) => i.command === command);
        const wrapper = rows.find((i) => i.wrapper)?.wrapper;
        const message = interpreterRefusal(command, out, { wrapper, key: merged.entryKey })!;
        const line = `- ${allowlistEntryText(wrapper ?? '/path/to/script', merged.entryKey)}`;
        notAdded.push({
          command,
          sources: [...new Set(rows.flatMap((r) => r.sources))],
          line,
          why: 'interpreter',
          message,
        });
      }
      result.written = {
        path: out,
        added: merged.added,
        dryRun: Boolean(this.flags['dry-run']),
        entryKey: merged.entryKey,
        notAdded,
      };
      if (notAdded.length > 0) this.markFailed();
    }

    if (items.some((i) => !i.allowed)) this.markFailed();
    const columns: Column<PluginEntry>[] = [
      { header: 'command', get: (p) => p.command },
      { header: 'from', get: (p) => (p.trust === 'data' ? 'hub data' : 'user file') },
      {
        header: 'clusters',
        get: (p) => summarize(p.clusters),
        clusterList: { names: (p) => p.clusters, join: summarize },
      },
      { header: 'allowed', get: (p) => (p.allowed ? 'yes' : 'no'), color: (p, k) => (p.allowed ? undefined : k.red) },
      { header: 'sources', get: (p) => summarize(p.sources), wide: true },
      { header: 'reason', shrink: 'first', get: (p) => p.reason ?? '', wide: !items.some((i) => !i.allowed) },
    ];
    const notes: string[] = [];
    if (items.length === 0) notes.push(`No exec credential plugins in ${this.fleet.provider.describe()}.`);
    if (result.written) {
      const w = result.written;
      if (w.added.length > 0)
        notes.push(
          `${w.path}: ${w.dryRun ? 'would add' : 'added'} ${w.added.map((c) => allowlistEntryText(c, w.entryKey)).join(', ')} to credentialPluginAllowlist`,
        );
      else if (nothingChosen)
        notes.push(`${w.path}: your files name no exec plugin; nothing ${w.dryRun ? 'would be' : 'was'} written`);
      else if (w.notAdded.some((d) => d.why === 'interpreter'))
        notes.push(`${w.path}: nothing ${w.dryRun ? 'would be' : 'was'} written`);
      else notes.push(`${w.path}: already allows every command${w.notAdded.length > 0 ? ' from your files' : ''}`);
      for (const d of w.notAdded) notes.push(d.message);
    }
    await this.render(result, { rows: items, columns, name: (p) => p.command, notes });
    return result;
  }
}

/** A list in a table cell: the first two, then how many more. */
function summarize(list: string[]): string {
  return list.length <= 2 ? list.join(', ') : `${list.slice(0, 2).join(', ')} +${list.length - 2} more`;
}
