import { existsSync } from 'node:fs';

import type { FleetConfig, HubSpec } from '../config/fleet-config.js';
import { precedence } from '../kubeconfig/loading-rules.js';
import { mergeHub } from '../providers/registry.js';
import type { ClusterRef } from '../providers/types.js';
import { innerName } from './names.js';
import { kernelPath } from '../base/paths.js';

/** The first arguments of every exported exec entry: the command kubectl runs is `<fleet> kubeconfig credential ...`. */
export const CREDENTIAL_COMMAND = ['kubeconfig', 'credential'] as const;

/** How the export chose its clusters: its provider flags and the fleet configuration it read. */
export interface ExportSource {
  /** --kubeconfig (split like KUBECONFIG). */
  kubeconfig?: string[];
  /** --context (with --provider: the hub's context). */
  context?: string;
  /** --provider. */
  provider?: string;
  /** The fleet configuration the run read, if any. */
  config?: FleetConfig;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * The arguments after the command that find this cluster again, through the same provider, when kubectl runs the exec
 * entry: from any working directory and with any KUBECONFIG (kubectl may be reading the exported file itself, and a
 * context that pointed back at fleet's own entry would call fleet forever). So everything the export resolved from its
 * surroundings is written down: the provider by name, the fleet configuration as an absolute path (the credential
 * command looks for none by itself), a file provider's kubeconfig files, and a hub's kubeconfig files and context
 * (the hub the export listed, not whatever the current context is when kubectl runs).
 */
export function credentialArgs(ref: ClusterRef, source: ExportSource): string[] {
  const cwd = source.cwd ?? process.cwd();
  const abs = (paths: string[]) => paths.map((p) => kernelPath(p, cwd)).join(':');
  const kubectlView = source.kubeconfig !== undefined && !source.provider;
  const config = kubectlView ? undefined : source.config;
  const entry = config?.providers.find((p) => p.name === ref.provider);
  const args: string[] = [...CREDENTIAL_COMMAND];
  const file = ref.source.kind === 'kubeconfig-file';
  // A file provider names a context by `<file>+<context>`; with the files pinned as absolute paths, that is the one
  // name that stays the same whatever the working directory.
  args.push(
    '--cluster',
    file && ref.source.path && ref.source.context ? `${ref.source.path}+${ref.source.context}` : innerName(ref),
  );
  args.push('--provider', ref.provider);
  if (config) args.push('--fleet-config', kernelPath(config.path, cwd));
  if (file) {
    const flagged =
      source.kubeconfig && (kubectlView || source.provider === ref.provider) ? source.kubeconfig : undefined;
    const configured = entry?.type === 'file' ? entry.kubeconfig : undefined;
    const files = flagged ?? configured ?? loadingRuleFiles(source.env ?? process.env, cwd);
    args.push('--kubeconfig', abs(files.length > 0 ? files : [ref.source.path!]));
  } else if (ref.source.hub) {
    const own = entry && 'hub' in entry ? entry.hub : undefined;
    const flagHub: HubSpec | undefined = source.provider
      ? { kubeconfig: source.kubeconfig, context: source.context }
      : undefined;
    const hub = mergeHub(mergeHub(config?.hub, own), flagHub);
    const files = hub?.kubeconfig ?? loadingRuleFiles(source.env ?? process.env, cwd);
    // No file at all: the hub was a Pod's in-cluster configuration, which is found the same way when kubectl runs.
    if (files.length > 0) args.push('--kubeconfig', abs(files), '--context', ref.source.hub);
  }
  return args;
}

/** The kubeconfig files the loading rules read now (KUBECONFIG's, or ~/.kube/config), those that exist. */
function loadingRuleFiles(env: NodeJS.ProcessEnv, cwd: string): string[] {
  return precedence(env).paths.filter((p) => existsSync(kernelPath(p, cwd)));
}
