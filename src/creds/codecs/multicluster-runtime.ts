import { KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_LABEL } from '../../providers/hub/kubeconfig-secret.js';
import { kubeconfigCodec } from './codec.js';

/** multicluster-runtime's kubeconfig provider: a Secret labelled `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, key `kubeconfig`. */
export const multiclusterRuntime = kubeconfigCodec({
  format: 'multicluster-runtime',
  key: KUBECONFIG_SECRET_KEY,
  find: { labelSelector: `${KUBECONFIG_SECRET_LABEL}=true` },
  detect: (s) => s.metadata.labels?.[KUBECONFIG_SECRET_LABEL] === 'true',
  labels: () => ({ [KUBECONFIG_SECRET_LABEL]: 'true' }),
});
