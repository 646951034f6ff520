import type { ClusterRef } from '../providers/types.js';

/**
 * `fleet auth plugins`: every exec credential plugin the fleet's kubeconfigs would run, grouped by command and by whose
 * word it is (the user's files, or hub data), with the clusters that use it and whether the trust policy lets it run.
 * Nothing is run: the verdicts are the ones the providers' refs carry (guardRef), made without the network.
 */
export interface PluginEntry {
  /** The command as the kubeconfig writes it (a bare name is looked up on PATH when it runs). */
  command: string;
  /** `file`: the user's own kubeconfig or access-provider file; `data`: a kubeconfig read from a cluster. */
  trust: 'file' | 'data';
  /** Where the command is written: kubeconfig files, Secrets, ClusterProfiles' access-provider files. */
  sources: string[];
  /** The clusters whose credential runs it. */
  clusters: string[];
  allowed: boolean;
  /** Why it is refused, or which allowlist allowed it. */
  reason?: string;
  /** What to add to the fleet configuration to allow it (hub data only). */
  allowWith?: string;
  /** The script an interpreter's arguments run (`bash /opt/x/token.sh`), what to allow instead (not in JSON). */
  wrapper?: string;
}

export function listPlugins(refs: ClusterRef[]): PluginEntry[] {
  const byKey = new Map<string, PluginEntry>();
  for (const ref of refs) {
    const p = ref.plugin;
    if (!p) continue;
    // One row per command, trust and verdict: a command allowed from the user's files but refused from hub data is two rows.
    const key = `${p.command}\u0000${p.trust}\u0000${p.allowed}`;
    let entry = byKey.get(key);
    if (!entry) {
      entry = {
        command: p.command,
        trust: p.trust,
        sources: [],
        clusters: [],
        allowed: p.allowed,
        reason: p.allowed ? p.reason : undefined,
        allowWith: p.allowWith,
      };
      if (p.wrapper) Object.defineProperty(entry, 'wrapper', { value: p.wrapper, enumerable: false });
      byKey.set(key, entry);
    }
    if (!entry.sources.includes(p.from)) entry.sources.push(p.from);
    entry.clusters.push(ref.name);
    // A refusal names the cluster's own object: kept as the row's reason only when all its clusters share it.
    if (!p.allowed) entry.reason = entry.clusters.length === 1 ? p.reason : sharedReason(entry.reason, p.reason);
  }
  return [...byKey.values()].sort((a, b) => a.command.localeCompare(b.command) || a.trust.localeCompare(b.trust));
}

/** The reason rows of several clusters share: the part after the object's name (`<object>: <why>`). */
function sharedReason(a: string | undefined, b: string | undefined): string | undefined {
  const why = (s: string | undefined) => s?.slice(s.indexOf(': ') + 2);
  return why(a) === why(b) ? why(a) : 'refused (see each cluster in clusters list -o wide)';
}

/** What `auth plugins --write-kuberc` may add to a kuberc's allowlist, and what it leaves to the user. */
export interface KubercChoice {
  /** The commands to add: those named with --command, else every command the user's own files name. */
  wanted: string[];
  /**
   * Without --command, the commands only data names (hub Secrets, ClusterProfiles, Argo CD Secrets...): one entry per
   * command, its sources merged. Never added: an allowlist entry makes a program run, and data does not choose that.
   */
  dataOnly: Array<{ command: string; sources: string[] }>;
}

/**
 * The one rule of what `--write-kuberc` writes: what the user chose. `--command` is the user choosing by name (any
 * command the selected fleet runs); without it, the commands of rows whose trust is `file` (the user's kubeconfigs, the
 * files a named fleet configuration lists, the access-provider file). A command that is both in the user's files and
 * in data is the user's: the entry allows the program the user's own file runs.
 */
export function kubercChoice(items: PluginEntry[], commands?: string[]): KubercChoice {
  if (commands) return { wanted: [...new Set(commands)], dataOnly: [] };
  const fromFiles = new Set(items.filter((i) => i.trust === 'file').map((i) => i.command));
  const dataOnly = new Map<string, { command: string; sources: string[] }>();
  for (const item of items) {
    if (fromFiles.has(item.command)) continue;
    const entry = dataOnly.get(item.command) ?? { command: item.command, sources: [] };
    for (const s of item.sources) if (!entry.sources.includes(s)) entry.sources.push(s);
    dataOnly.set(item.command, entry);
  }
  return { wanted: [...fromFiles], dataOnly: [...dataOnly.values()] };
}
