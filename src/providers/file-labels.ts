import { basename } from 'node:path';

import type { ContextEntry } from '../kubeconfig/types.js';

/**
 * Labels of file clusters. A kubeconfig has no labels, so `-l` over file clusters would match nothing; each context gets
 * selectable fields from the kubeconfig itself (under fleet.dev/, like kubernetes.io/metadata.name on namespaces), and
 * the fleet configuration may add labels per file or context pattern (docs/providers.md).
 */
export const FILE_LABELS = {
  context: 'fleet.dev/context',
  cluster: 'fleet.dev/cluster',
  user: 'fleet.dev/user',
  namespace: 'fleet.dev/namespace',
  file: 'fleet.dev/file',
} as const;

export interface LabelRule {
  /** Glob on the file: its name, or its path as written when the pattern has a "/". */
  file?: string;
  /** Glob on the context name. */
  context?: string;
  labels: Record<string, string>;
}

/** `*` is any run of characters except "/", `?` one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

function fileMatches(pattern: string, path: string, displayPath: string): boolean {
  const re = globToRegExp(pattern);
  if (pattern.includes('/')) return re.test(displayPath) || re.test(path);
  return re.test(basename(path));
}

export function fileClusterLabels(
  c: { path: string; displayPath: string; context: string; entry: ContextEntry },
  rules: LabelRule[] = [],
): Record<string, string> {
  const labels: Record<string, string> = {
    [FILE_LABELS.context]: c.context,
    [FILE_LABELS.file]: basename(c.path),
  };
  if (c.entry.cluster) labels[FILE_LABELS.cluster] = c.entry.cluster;
  if (c.entry.user) labels[FILE_LABELS.user] = c.entry.user;
  if (c.entry.namespace) labels[FILE_LABELS.namespace] = c.entry.namespace;
  // Rules apply in order, a later rule overriding an earlier one's value.
  for (const rule of rules) {
    if (rule.file !== undefined && !fileMatches(rule.file, c.path, c.displayPath)) continue;
    if (rule.context !== undefined && !globToRegExp(rule.context).test(c.context)) continue;
    Object.assign(labels, rule.labels);
  }
  return labels;
}
