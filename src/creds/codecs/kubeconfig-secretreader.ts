import { EXEC_CLUSTER_CONFIG_EXTENSION } from '../../kubeconfig/types.js';
import type { ClusterEntry } from '../../kubeconfig/types.js';
import { type SecretDestination, kubeconfigCodec } from './codec.js';

export const SECRETREADER_KEY = 'kubeconfig';
export const SECRETREADER_PROVIDER = 'kubeconfig-secretreader';

/**
 * cluster-inventory-api's kubeconfig-secretreader access provider: an unlabelled Secret, key `kubeconfig`, that a
 * ClusterProfile's `status.accessProviders` entry names (secretreaderAccessProvider). Found through the profiles.
 */
export const kubeconfigSecretreader = kubeconfigCodec({
  format: 'kubeconfig-secretreader',
  key: SECRETREADER_KEY,
  find: 'references',
  detect: () => false,
  labels: () => ({}),
});

/**
 * The ClusterProfile `status.accessProviders` entry that makes the kubeconfig-secretreader plugin read this Secret: the
 * cluster as the target presents it, and the plugin's config in the exec extension.
 */
export function secretreaderAccessProvider(
  d: SecretDestination,
  cluster: ClusterEntry,
): { name: string; cluster: ClusterEntry } {
  return {
    name: SECRETREADER_PROVIDER,
    cluster: {
      ...cluster,
      extensions: [
        {
          name: EXEC_CLUSTER_CONFIG_EXTENSION,
          extension: { name: d.name, namespace: d.namespace, key: SECRETREADER_KEY },
        },
      ],
    },
  };
}
