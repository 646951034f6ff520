// The Kubernetes objects fleet builds and reads, typed with @kubernetes/client-node's models. Type-only imports: the
// package is never loaded at run time (tsc and esbuild drop them), so neither the bundle nor the start-up changes.
import type { V1ObjectMeta } from '@kubernetes/client-node';

/**
 * A client-node model as it is on the wire. fleet sends and reads plain JSON (docs/decisions.md, "Our own HTTPS
 * client"), where the fields client-node declares as Date (creationTimestamp, managedFields[].time, ...) are RFC 3339
 * strings; client-node's own deserializer is what would make them Dates.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends Array<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** ObjectMeta of an object that has a name (every object fleet names in a request). */
export type ObjectMeta = Wire<V1ObjectMeta> & { name: string };

/** Any Kubernetes object as fleet sends it: the type fields and named metadata; the rest by kind. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}
