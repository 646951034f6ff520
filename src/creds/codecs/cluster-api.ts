import { CAPI_KUBECONFIG_KEY, CAPI_SECRET_TYPE, kubeconfigSecretName } from '../../providers/hub/cluster-api.js';
import { kubeconfigCodec } from './codec.js';

/** The label Cluster API puts on a Cluster's kubeconfig Secret: the Cluster's name. */
export const CAPI_CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/**
 * Cluster API's kubeconfig Secret: `<cluster>-kubeconfig` of type `cluster.x-k8s.io/secret`, key `value`, labelled with
 * the Cluster's name. The destination's name is the Cluster's.
 */
export const clusterApi = kubeconfigCodec({
  format: 'cluster-api',
  key: CAPI_KUBECONFIG_KEY,
  type: CAPI_SECRET_TYPE,
  find: { fieldSelector: `type=${CAPI_SECRET_TYPE}` },
  detect: (s) => s.type === CAPI_SECRET_TYPE,
  labels: (d) => ({ [CAPI_CLUSTER_NAME_LABEL]: d.name }),
  secretName: (d) => kubeconfigSecretName(d.name),
  destination: (s) => ({
    namespace: s.metadata.namespace ?? 'default',
    name: s.metadata.labels?.[CAPI_CLUSTER_NAME_LABEL] ?? s.metadata.name.replace(/-kubeconfig$/, ''),
    format: 'cluster-api',
  }),
});
