import { UsageError } from '../base/errors.js';
import { MULTI_SEPARATOR } from '../providers/multi.js';
import type { ClusterRef } from '../providers/types.js';

/**
 * The names `fleet kubeconfig export` gives each cluster's context (and its cluster and user entries, which share the
 * context's name). The default keeps the provider in the name: a merged ~/.kube/config already holds the file
 * provider's own contexts under their names, and two providers may each have a `prod`.
 */
export const DEFAULT_NAME_TEMPLATE = '{provider}/{name}';

/** What a template may say: the fleet id (as --cluster takes it), the short name, and the provider. */
const PLACEHOLDERS = ['id', 'name', 'provider'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/** The name of a cluster within its provider: the context name for a kubeconfig file, else the provider's own name. */
export function shortName(ref: ClusterRef): string {
  if (ref.source.kind === 'kubeconfig-file' && ref.source.context) return ref.source.context;
  return innerName(ref);
}

/** The name without the `<provider>#` a fleet of several providers puts before it. */
export function innerName(ref: ClusterRef): string {
  const prefix = `${ref.provider}${MULTI_SEPARATOR}`;
  return ref.name.startsWith(prefix) ? ref.name.slice(prefix.length) : ref.name;
}

/** Checks a --name-template before any cluster is read, and returns the function that names one. */
export function nameTemplate(template: string): (ref: ClusterRef) => string {
  if (template.trim() === '') throw new UsageError('--name-template: empty; use placeholders like {provider}/{name}');
  const parts = template.split(/(\{[^{}]*\})/);
  for (const part of parts) {
    if (!part.startsWith('{')) {
      if (/[{}]/.test(part)) throw new UsageError(`--name-template: unbalanced brace in "${template}"`);
      continue;
    }
    const key = part.slice(1, -1);
    if (!(PLACEHOLDERS as readonly string[]).includes(key)) {
      throw new UsageError(
        `--name-template: unknown placeholder ${part} in "${template}"; use ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      );
    }
  }
  if (!parts.some((p) => p === '{id}' || p === '{name}'))
    throw new UsageError(`--name-template: "${template}" names no cluster; include {id} or {name}`);
  return (ref) => {
    const values: Record<Placeholder, string> = { id: ref.name, name: shortName(ref), provider: ref.provider };
    return parts.map((p) => (p.startsWith('{') ? values[p.slice(1, -1) as Placeholder] : p)).join('');
  };
}
