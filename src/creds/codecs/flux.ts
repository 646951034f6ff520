import { kubeconfigCodec } from './codec.js';

/**
 * Flux's `spec.kubeConfig.secretRef`: an unlabelled Secret, key `value` (or the key the reference names, flux-refs.ts),
 * found through the Kustomizations and HelmReleases that name it.
 */
export const flux = kubeconfigCodec({
  format: 'flux',
  key: 'value',
  find: 'references',
  detect: () => false,
  labels: () => ({}),
});
