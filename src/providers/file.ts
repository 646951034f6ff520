import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { fileError } from '../base/files.js';
import { ConfigError } from '../base/errors.js';
import { authKind } from '../kubeconfig/credentials.js';
import {
  type MergedKubeconfig,
  kubeconfigNotFound,
  loadMerged,
  mergeKubeconfigs,
  precedence,
  resolveContext,
} from '../kubeconfig/loading-rules.js';
import { readKubeconfig } from '../kubeconfig/parse.js';
import { CachedProvider } from './cached-provider.js';
import { type LabelRule, fileClusterLabels } from './file-labels.js';
import { contextNotFound } from './not-found.js';
import { withAuthLabel } from './ref.js';
import type { ClusterRef } from './types.js';
import { kernelPath } from '../base/paths.js';

/** Names that count as kubeconfig files inside a directory (upstream file provider's globs). */
export function isKubeconfigFileName(name: string): boolean {
  return (
    name === 'kubeconfig.yaml' ||
    name === 'kubeconfig.yml' ||
    name.endsWith('.kubeconfig') ||
    name.endsWith('.kubeconfig.yaml') ||
    name.endsWith('.kubeconfig.yml')
  );
}

export interface FileProviderOptions {
  /**
   * Explicit files and directories (from --kubeconfig or fleet config). Files are merged like a KUBECONFIG list and must
   * exist; each kubeconfig file found in a directory stands alone, so contexts with the same name in different files stay
   * distinct clusters.
   */
  paths?: string[];
  /** The provider's name (a fleet config may name several); `file` by default. */
  name?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Labels from the fleet configuration, per file or context pattern (docs/providers.md). */
  labels?: LabelRule[];
  /** The flag `paths` came from (`--kubeconfig`), named in the error when one does not exist. */
  flag?: string;
}

/** A set of files seen as one kubeconfig; `display` maps an absolute path to the path as the user wrote it. */
interface Group {
  merged: MergedKubeconfig;
  display: Map<string, string>;
  /** The group that follows kubectl's loading rules (its current-context is fleet's default cluster). */
  primary: boolean;
}

async function listDir(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && isKubeconfigFileName(e.name))
    .map((e) => join(dir, e.name))
    .sort();
}

/** What a directory holds instead, for the error that says it holds no kubeconfig file. */
async function dirSummary(dir: string): Promise<string> {
  const names = (await readdir(dir)).sort();
  if (names.length === 0) return 'it is empty';
  const shown = names.slice(0, 8).join(', ');
  return `looked for kubeconfig.yaml, kubeconfig.yml, *.kubeconfig, *.kubeconfig.yaml, *.kubeconfig.yml; found ${shown}${names.length > 8 ? ` and ${names.length - 8} more` : ''}`;
}

async function kind(path: string): Promise<'file' | 'dir' | 'missing'> {
  try {
    return (await stat(path)).isDirectory() ? 'dir' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw fileError(path, error);
  }
}

async function standalone(path: string, displayPath: string): Promise<Group> {
  const file = await readKubeconfig(kernelPath(path));
  if (!file) throw kubeconfigNotFound(displayPath);
  return { merged: mergeKubeconfigs([file]), display: new Map([[file.path, displayPath]]), primary: false };
}

export class FileProvider extends CachedProvider {
  private groups?: Promise<Group[]>;
  /**
   * Set once the loading rules found no file at all: what is missing, so that "no clusters" and "no current-context"
   * are not said of a file that does not exist (a newcomer's first run, with HOME empty).
   */
  private absent?: { what: string; short: string };

  constructor(private readonly options: FileProviderOptions = {}) {
    super(options.name ?? 'file', 'file');
  }

  private async loadGroups(): Promise<Group[]> {
    const env = this.options.env ?? process.env;
    const groups: Group[] = [];
    if (this.options.paths && this.options.paths.length > 0) {
      const files: string[] = [];
      for (const p of this.options.paths) {
        const k = await kind(p);
        if (k === 'missing')
          throw new ConfigError(
            `${this.options.flag ? `${this.options.flag} ` : ''}${p}: no such kubeconfig file or directory`,
          );
        if (k === 'file') files.push(p);
        else {
          const found = await listDir(p);
          // A directory that holds no kubeconfig file selects nothing: say so rather than list an empty fleet.
          if (found.length === 0)
            throw new ConfigError(`${p}: no kubeconfig files in this directory (${await dirSummary(p)})`);
          groups.push(...(await Promise.all(found.map((f) => standalone(f, f)))));
        }
      }
      if (files.length > 0) {
        const merged = await loadMerged(files, { explicit: true });
        groups.unshift({ merged, display: new Map(files.map((f) => [kernelPath(f), f])), primary: true });
      }
      return groups;
    }
    const { paths } = precedence(env);
    const merged = await loadMerged(paths);
    if (merged.files.length > 0 || env.KUBECONFIG) {
      if (merged.files.length === 0)
        this.absent = {
          what: `none of the files in KUBECONFIG=${env.KUBECONFIG} exist`,
          short: 'none of its files exist',
        };
      groups.push({ merged, display: new Map(paths.map((p) => [kernelPath(p), p])), primary: true });
      return groups;
    }
    // Nothing in KUBECONFIG and no ~/.kube/config: like upstream's file provider, look in the working directory.
    groups.push(
      ...(await Promise.all((await listDir(this.options.cwd ?? process.cwd())).map((f) => standalone(f, f)))),
    );
    if (groups.length === 0)
      this.absent = { what: `${paths[0]} does not exist and KUBECONFIG is not set`, short: 'no such file' };
    return groups;
  }

  protected async build(): Promise<ClusterRef[]> {
    this.groups ??= this.loadGroups();
    const refs: ClusterRef[] = [];
    for (const group of await this.groups) {
      for (const [contextName, { file }] of group.merged.contexts) {
        const displayPath = group.display.get(file.path) ?? file.path;
        const entry = group.merged.contexts.get(contextName)!.entry;
        const ref: ClusterRef = {
          name: `${displayPath}+${contextName}`,
          provider: this.name,
          aliases: [contextName],
          auth: 'none',
          source: { kind: 'kubeconfig-file', path: file.path, context: contextName },
          labels: fileClusterLabels({ path: file.path, displayPath, context: contextName, entry }, this.options.labels),
          ready: true,
          current: group.primary ? group.merged.currentContext === contextName : undefined,
          resolve: async () => resolveContext(group.merged, contextName),
        };
        try {
          const resolved = resolveContext(group.merged, contextName);
          // The context resolved here is the one handed out: every command resolves each ref at least twice (the trust
          // policy judges it, then the command describes or connects it), and 2,000 contexts resolved again cost 10 ms.
          ref.resolve = async () => resolved;
          ref.server = resolved.cluster.server;
          ref.auth = authKind(resolved.user);
          ref.labels = withAuthLabel(ref.labels, ref.auth);
          if (!ref.server) {
            ref.ready = false;
            ref.reason = `${resolved.clusterFile}: cluster "${resolved.clusterName}" has no server`;
          }
        } catch (error) {
          // A broken context is still a context (kubectl lists it too); it is listed as not ready, with the reason.
          ref.ready = false;
          ref.reason = (error as Error).message;
          ref.labels = withAuthLabel(ref.labels, 'unknown');
          // A context whose user is missing still names a cluster that has a server: shown, as kubectl config view does.
          const server = entry.cluster ? group.merged.clusters.get(entry.cluster)?.entry.server : undefined;
          if (typeof server === 'string' && server !== '') ref.server = server;
        }
        refs.push(ref);
      }
    }
    return refs;
  }

  /** The cluster of the current context of the loading rules, or of `--context`. */
  async current(context?: string): Promise<ClusterRef> {
    const refs = await this.list();
    const primary = refs.filter((r) => r.current !== undefined);
    if (context) {
      const match =
        refs.find((r) => r.source.context === context && r.current !== undefined) ??
        refs.find((r) => r.source.context === context) ??
        refs.find((r) => r.name === context);
      if (!match)
        throw contextNotFound(
          context,
          this.absent ? undefined : refs.map((r) => r.source.context ?? ''),
          this.describe(),
        );
      return match;
    }
    const current = primary.find((r) => r.current);
    if (!current) {
      if (this.absent) throw new ConfigError(`no kubeconfig: ${this.absent.what}; pass --kubeconfig or set KUBECONFIG`);
      const groups = await this.groups!;
      const named = groups.find((g) => g.primary)?.merged;
      if (named?.currentContext) {
        // kubectl's own words for a current-context that names a missing context.
        const file = named.currentContextFile?.path ?? this.describe();
        throw new ConfigError(`${file}: context was not found for specified context: ${named.currentContext}`);
      }
      throw new ConfigError(`no current-context is set in ${this.describe()}; name a cluster or pass --context`);
    }
    return current;
  }

  override describe(): string {
    if (this.options.paths?.length) return this.options.paths.join(':');
    const env = this.options.env ?? process.env;
    const where = env.KUBECONFIG ? `KUBECONFIG=${env.KUBECONFIG}` : precedence(env).paths[0];
    return this.absent ? `${where} (${this.absent.short})` : where;
  }
}
