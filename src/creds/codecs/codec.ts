import type { V1Secret } from '@kubernetes/client-node';
import yaml from 'js-yaml';

import type { Wire } from '../../kube/objects.js';
import type { ClusterEntry, KubeconfigDoc, UserEntry } from '../../kubeconfig/types.js';
import { type Secret, secretText } from '../../providers/hub/objects.js';

/**
 * What one consumer Secret format is to fleet: how a hub Secret of it is found and recognised, where it is written, what
 * it holds and how that is read back. Every part is required, so a format added to the table (index.ts) without one of
 * them does not compile. `F` is the format's name, the table's key.
 */
export interface Codec<F extends string = string> {
  readonly format: F;
  /** The data key that holds the credential: a one-context kubeconfig, or (Argo CD's `config`) a shape of the format's own. */
  readonly key: string;
  /** Whether `key` holds a kubeconfig (creds list then resolves it with the kubeconfig loader, as the consumer does). */
  readonly kubeconfigInKey: boolean;
  /**
   * How creds list finds this format's Secrets on a hub: one list query by its mark, or `references` when the Secret
   * carries no mark of its own and only the objects that use it name it (ClusterProfiles, Flux Kustomizations).
   */
  readonly find: { labelSelector: string } | { fieldSelector: string } | 'references';
  /** Whether a Secret carries this format's mark (its label or type); always false for a format found by references. */
  detect(s: Secret): boolean;
  /** The Secret's name for a destination (Cluster API: `<cluster>-kubeconfig`). */
  secretName(d: SecretDestination<F>): string;
  /** The destination a Secret of this format was written for, from its name and labels (rotation writes it again). */
  destination(s: Secret): SecretDestination<F>;
  /** Refuses a destination the format cannot be written to (a missing flag), before anything is contacted. */
  check(d: SecretDestination<F>): void;
  /** The labels, type and data of the Secret for a credential (fleet's managed-by label and annotations are added by the caller). */
  encode(
    d: SecretDestination<F>,
    w: Contents,
  ): { labels: Record<string, string>; type: string; data: Record<string, string> };
  /** The credential a Secret holds, as kubeconfig parts; undefined when `key` (default: the codec's) is empty. Throws on unreadable data. */
  decode(s: Secret, key?: string): Held | undefined;
}

export interface SecretDestination<F extends string = string> {
  namespace: string;
  /** As given with --secret; for cluster-api the Cluster's name (the Secret is `<name>-kubeconfig`). */
  name: string;
  format: F;
  /** cluster-inventory: the consumer label value. */
  consumer?: string;
  /** cluster-inventory: the ClusterProfile name (default: name). */
  profile?: string;
}

/** What is written into a consumer Secret. */
export interface Contents {
  /** The one-context kubeconfig (built from cluster and user). */
  kubeconfig: string;
  cluster: ClusterEntry;
  user: UserEntry;
  clusterName: string;
  /** What the consumer shows people (Argo CD's `name`); default clusterName. */
  displayName?: string;
}

/** The credential kept, as a kubeconfig (argocd's JSON turned into one), with the parts to rebuild it. */
export interface Held {
  kubeconfig: string;
  cluster: ClusterEntry;
  user: UserEntry;
  names: { cluster: string; user: string; namespace?: string };
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A Secret's name is its destination's as given, for every format but Cluster API's. */
export const sameName = (d: SecretDestination) => d.name;

/** A format's destination from a Secret written under its own name. */
export function destinationByName<F extends string>(
  format: F,
  s: Secret,
  labels: Pick<SecretDestination, 'consumer' | 'profile'> = {},
): SecretDestination<F> {
  return { namespace: s.metadata.namespace ?? 'default', name: s.metadata.name, format, ...labels };
}

/** The current context's cluster, user and names in kubeconfig text fleet wrote (undefined when one is missing). */
export function heldKubeconfig(text: string): Held | undefined {
  const doc = yaml.load(text) as KubeconfigDoc;
  const ctxName = doc['current-context'] ?? doc.contexts?.[0]?.name;
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user;
  if (!ctx || !cluster || !user) return undefined;
  return { kubeconfig: text, cluster, user, names: { cluster: ctxName!, user: ctx.user!, namespace: ctx.namespace } };
}

/**
 * The codec of a format whose Secret holds a kubeconfig in one key (every format but Argo CD's): only its name, key,
 * mark and labels differ.
 */
export function kubeconfigCodec<F extends string>(o: {
  format: F;
  key: string;
  find: Codec<F>['find'];
  detect: (s: Secret) => boolean;
  labels: (d: SecretDestination<F>) => Record<string, string>;
  type?: string;
  secretName?: (d: SecretDestination<F>) => string;
  destination?: (s: Secret) => SecretDestination<F>;
  check?: (d: SecretDestination<F>) => void;
}): Codec<F> {
  return {
    format: o.format,
    key: o.key,
    kubeconfigInKey: true,
    find: o.find,
    detect: o.detect,
    secretName: o.secretName ?? sameName,
    destination: o.destination ?? ((s) => destinationByName(o.format, s)),
    check: o.check ?? (() => undefined),
    encode: (d, w) => ({ labels: o.labels(d), type: o.type ?? 'Opaque', data: { [o.key]: b64(w.kubeconfig) } }),
    decode: (s, key = o.key) => {
      const text = secretText(s, key);
      return text ? heldKubeconfig(text) : undefined;
    },
  };
}

/** The Secret object as the API server takes it. */
export type SecretObject = Wire<V1Secret> & {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string };
};
