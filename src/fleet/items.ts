import type {ErrorInfo} from '../base/errors.js'
import type {ClusterResult} from './runner.js'

/**
 * The one shape of a per-cluster item in every fleet-wide result: the cluster, whether the work on it succeeded, the
 * command's value fields, and the classified error when it did not.
 */
export type ClusterItem<V extends object = object> = {cluster: string; ok: boolean; error?: ErrorInfo} & Partial<V>

/** A runner result as an item: the value's fields spread in, `error` only when there is one. */
export function toItem<T, V extends object>(result: ClusterResult<T>, value: (v: T) => V): ClusterItem<V> {
  return {
    cluster: result.cluster,
    ok: result.ok,
    ...(result.ok && result.value !== undefined ? value(result.value) : {}),
    ...(result.error ? {error: result.error} : {}),
  } as ClusterItem<V>
}
