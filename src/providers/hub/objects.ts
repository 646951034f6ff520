import type { V1Secret } from '@kubernetes/client-node';

import { contextFromKubeconfigText } from '../../kubeconfig/from-text.js';
import type { ResolvedContext } from '../../kubeconfig/loading-rules.js';
import { asError } from '../../base/errors.js';
import type { ObjectMeta, Wire } from '../../kube/objects.js';

/** The label that makes a Secret one of Argo CD's clusters (value `cluster`): what the provider lists, what creds writes. */
export const ARGOCD_SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';

/** The Kubernetes object shapes hub-backed providers read (client-node's models, as JSON), and how a kubeconfig is taken out of a Secret. */
export type { ObjectMeta } from '../../kube/objects.js';

export type Secret = Wire<V1Secret> & { metadata: ObjectMeta };

/** The text of one data key of a Secret, or undefined when the key is absent or empty (as upstream treats both). */
export function secretText(secret: Secret, key: string): string | undefined {
  const value = secret.data?.[key];
  if (!value) return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}

/**
 * The kubeconfig in one data key of a Secret, resolved at its current-context; or why there is none usable. It is hub
 * data: `provider` (whose allowlists apply) is recorded in its origin, and TrustPolicy judges its plugins and files.
 */
export function kubeconfigInSecret(secret: Secret, key: string, provider?: string): ResolvedContext | Error {
  const { name, namespace } = secret.metadata;
  const text = secretText(secret, key);
  if (text === undefined) return new Error(`Secret ${namespace}/${name} has no data key "${key}"`);
  try {
    return contextFromKubeconfigText(text, `secret ${namespace}/${name} key ${key}`, {
      object: `Secret ${namespace}/${name} key ${key}`,
      provider,
    });
  } catch (error) {
    return asError(error);
  }
}
