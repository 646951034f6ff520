import type { ErrorInfo } from '../base/errors.js';
import type { ClusterResult } from './runner.js';

/**
 * The one shape of a per-cluster item in every fleet-wide result: the cluster, whether the work on it succeeded, the
 * command's value fields, and the classified error when it did not.
 */
export type ClusterItem<V extends object = object> = { cluster: string; ok: boolean; error?: ErrorInfo } & Partial<V>;

/**
 * A runner result as an item: the value's fields spread in, `error` only when there is one. `always` are fields every
 * item has, failed or not (e.g. an empty `warnings` list), overridden by the value's own.
 */
export function toItem<T, V extends object, A extends object = object>(
  result: ClusterResult<T>,
  value: (v: T) => V,
  always?: A,
): ClusterItem<V> & A {
  const item: Record<string, unknown> = {
    cluster: result.cluster,
    ok: result.ok,
    ...(result.ok && result.value !== undefined ? value(result.value) : {}),
  };
  for (const [key, v] of Object.entries(always ?? {})) if (!(key in item)) item[key] = v;
  if (result.error) item.error = result.error;
  return item as ClusterItem<V> & A;
}
