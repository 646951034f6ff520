import { UsageError } from './errors.js';

export interface NamespacedName {
  namespace: string;
  name: string;
}

/**
 * `NAMESPACE/NAME` split in two, or undefined unless it is exactly two non-empty parts (a Kubernetes name holds no
 * `/`). For values fleet reads back (its own annotations) and for callers that word their own error.
 */
export function namespacedName(value: string | undefined): NamespacedName | undefined {
  const parts = (value ?? '').split('/');
  return parts.length === 2 && parts[0] && parts[1] ? { namespace: parts[0], name: parts[1] } : undefined;
}

/** A flag's `NAMESPACE/NAME`, or the one wording for a malformed one: `<flag>: expected NAMESPACE/NAME, got "<value>"`. */
export function parseNamespacedName(value: string, flag: string): NamespacedName {
  const ref = namespacedName(value);
  if (!ref) throw new UsageError(`${flag}: expected NAMESPACE/NAME, got "${value}"`);
  return ref;
}
