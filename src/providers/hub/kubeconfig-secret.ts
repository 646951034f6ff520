import type { KubeconfigSecretProviderConfig } from '../../config/fleet-config.js';
import { makeRef } from '../ref.js';
import { SECRET } from '../../kube/resources.js';
import { type Secret, kubeconfigInSecret } from './objects.js';
import { HubProvider } from './hub-provider.js';
import type { ClusterRef } from '../types.js';

/**
 * multicluster-runtime's kubeconfig provider: every Secret in one namespace of the hub labelled `<label>=true` is a
 * cluster named after the Secret, reached with the kubeconfig in data key `<key>`.
 */
export const KUBECONFIG_SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

/** Upstream skips a Secret without the key; fleet lists it, not ready, so the operator sees why a controller will not. */
export function refFromKubeconfigSecret(
  secret: Secret,
  o: { provider: string; key: string; hub?: string },
): ClusterRef {
  const { name, namespace } = secret.metadata;
  const found = kubeconfigInSecret(secret, o.key, o.provider);
  return makeRef(
    {
      name,
      provider: o.provider,
      labels: secret.metadata.labels ?? {},
      source: {
        kind: 'secret',
        namespace,
        name,
        hub: o.hub,
        secret: `${namespace}/${name}`,
        key: o.key,
        context: found instanceof Error ? undefined : found.contextName,
      },
    },
    found,
    secret.metadata.deletionTimestamp ? 'the Secret is being deleted' : undefined,
  );
}

export class KubeconfigSecretProvider extends HubProvider<KubeconfigSecretProviderConfig> {
  protected async build(): Promise<ClusterRef[]> {
    const ctx = await this.hub.context();
    const namespace = this.config.namespace ?? ctx.namespace ?? 'default';
    const label = this.config.label ?? KUBECONFIG_SECRET_LABEL;
    const key = this.config.key ?? KUBECONFIG_SECRET_KEY;
    // The label must have the value "true" exactly, as upstream's predicate requires.
    const secrets = await this.hub.listObjects<Secret>(SECRET, `list Secrets in ${namespace}`, {
      namespace,
      labelSelector: `${label}=true`,
    });
    return secrets
      .map((s) => refFromKubeconfigSecret(s, { provider: this.name, key, hub: ctx.contextName }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}
