import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

import { ConfigError } from '../base/errors.js';
import { homeDir, kernelPath } from '../base/paths.js';
import { type KubeconfigFile, readKubeconfig } from './parse.js';
import type { ClusterEntry, ContextEntry, ContextOrigin, UserEntry } from './types.js';

/**
 * client-go's loading rules, which kubectl users expect (and which @kubernetes/client-node gets wrong):
 * KUBECONFIG is a `:`-list, duplicates dropped, missing files skipped, the first file to set a name wins, the first
 * file to set current-context wins, and with no KUBECONFIG the default is ~/.kube/config.
 */
export function splitPathList(value: string | undefined): string[] {
  if (!value) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of value.split(delimiter)) {
    if (part === '' || seen.has(part)) continue;
    seen.add(part);
    out.push(part);
  }
  return out;
}

/** A kubeconfig the user named (--kubeconfig, a fleet configuration) that does not exist; kubectl refuses it too. */
export function kubeconfigNotFound(path: string): ConfigError {
  return new ConfigError(`${path}: kubeconfig file not found`);
}

export function defaultKubeconfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), '.kube', 'config');
}

/** The files kubectl would read, in precedence order (none of them has to exist). */
export function precedence(env: NodeJS.ProcessEnv = process.env): { paths: string[] } {
  const fromEnv = splitPathList(env.KUBECONFIG);
  if (fromEnv.length > 0) return { paths: fromEnv };
  return { paths: [defaultKubeconfigPath(env)] };
}

export interface Sourced<T> {
  entry: T;
  file: KubeconfigFile;
}

/** Several files seen as one, as kubectl sees them. */
export interface MergedKubeconfig {
  /** Files that were found, in precedence order. */
  files: KubeconfigFile[];
  /** Paths that were skipped because they do not exist. */
  missing: string[];
  clusters: Map<string, Sourced<ClusterEntry>>;
  users: Map<string, Sourced<UserEntry>>;
  contexts: Map<string, Sourced<ContextEntry>>;
  currentContext?: string;
  /** The file whose current-context won. */
  currentContextFile?: KubeconfigFile;
}

export function mergeKubeconfigs(files: KubeconfigFile[], missing: string[] = []): MergedKubeconfig {
  const merged: MergedKubeconfig = { files, missing, clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const file of files) {
    for (const [name, entry] of file.clusters)
      if (!merged.clusters.has(name)) merged.clusters.set(name, { entry, file });
    for (const [name, entry] of file.users) if (!merged.users.has(name)) merged.users.set(name, { entry, file });
    for (const [name, entry] of file.contexts)
      if (!merged.contexts.has(name)) merged.contexts.set(name, { entry, file });
    if (merged.currentContext === undefined && file.currentContext) {
      merged.currentContext = file.currentContext;
      merged.currentContextFile = file;
    }
  }
  return merged;
}

/**
 * Loads and merges files. With `explicit`, every path must exist (as with kubectl's --kubeconfig); otherwise missing
 * paths are skipped (as with KUBECONFIG).
 */
export async function loadMerged(paths: string[], options: { explicit?: boolean } = {}): Promise<MergedKubeconfig> {
  // Read in parallel (hundreds of files are common in a fleet), merge in precedence order.
  const read = await Promise.allSettled(paths.map((p) => readKubeconfig(kernelPath(p))));
  const files: KubeconfigFile[] = [];
  const missing: string[] = [];
  read.forEach((outcome, i) => {
    // The first bad file in precedence order is the one reported, whichever failed first.
    if (outcome.status === 'rejected') throw outcome.reason;
    const file = outcome.value;
    if (file) files.push(file);
    else if (options.explicit) throw kubeconfigNotFound(paths[i]);
    else missing.push(kernelPath(paths[i]));
  });
  return mergeKubeconfigs(files, missing);
}

/** One context with its cluster and user, file paths made absolute against the file that holds each entry. */
export interface ResolvedContext {
  contextName: string;
  namespace?: string;
  clusterName: string;
  userName?: string;
  cluster: ClusterEntry;
  user: UserEntry;
  /** The file that defines the context. */
  contextFile: string;
  clusterFile: string;
  userFile?: string;
  /** Set when the kubeconfig was read from a cluster (hub data), absent when the user gave it (docs/security.md). */
  origin?: ContextOrigin;
}

/** Relative to the file that names it, as client-go resolves it: `~` is not expanded (kubectl does not either). */
function absolutize(value: string | undefined, base: string): string | undefined {
  if (!value || isAbsolute(value)) return value;
  return resolve(dirname(base), value);
}

export function resolveClusterPaths(cluster: ClusterEntry, file: string): ClusterEntry {
  const out = { ...cluster };
  if (out['certificate-authority']) out['certificate-authority'] = absolutize(out['certificate-authority'], file);
  return out;
}

export function resolveUserPaths(user: UserEntry, file: string): UserEntry {
  const out = { ...user };
  for (const key of ['client-certificate', 'client-key', 'tokenFile'] as const) {
    if (out[key]) out[key] = absolutize(out[key], file);
  }
  // Like client-go: an exec command with no path separator is looked up on PATH, one with a separator is a file path.
  if (out.exec?.command && out.exec.command.includes(sep)) {
    out.exec = { ...out.exec, command: absolutize(out.exec.command, file) };
  }
  return out;
}

/** Resolves a context of a merged config; a context that points at a missing cluster or user is a ConfigError. */
export function resolveContext(merged: MergedKubeconfig, contextName: string): ResolvedContext {
  const ctx = merged.contexts.get(contextName);
  if (!ctx) {
    const where = merged.files.map((f) => f.path).join(', ') || 'no kubeconfig files';
    throw new ConfigError(`context "${contextName}" not found in ${where}`);
  }
  const { entry, file } = ctx;
  const clusterName = entry.cluster;
  if (!clusterName) throw new ConfigError(`${file.path}: context "${contextName}" names no cluster`);
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) {
    throw new ConfigError(
      `${file.path}: context "${contextName}" refers to cluster "${clusterName}", which is not defined`,
    );
  }
  let user: Sourced<UserEntry> | undefined;
  if (entry.user) {
    user = merged.users.get(entry.user);
    if (!user) {
      throw new ConfigError(
        `${file.path}: context "${contextName}" refers to user "${entry.user}", which is not defined`,
      );
    }
  }
  return {
    contextName,
    namespace: entry.namespace || undefined,
    clusterName,
    userName: entry.user || undefined,
    cluster: resolveClusterPaths(cluster.entry, cluster.file.path),
    user: user ? resolveUserPaths(user.entry, user.file.path) : {},
    contextFile: file.path,
    clusterFile: cluster.file.path,
    userFile: user?.file.path,
  };
}
