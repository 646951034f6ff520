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

/** What Kubernetes accepts as a namespace's name: an RFC 1123 label (lower-case alphanumerics and '-', at most 63). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A flag's namespace, or one line naming the flag and the value (checked before any cluster is asked). */
export function parseNamespace(value: string, flag: string): string {
  if (!NAMESPACE.test(value))
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: not a namespace name (lower-case letters, digits and '-', at most 63)`,
    );
  return value;
}
