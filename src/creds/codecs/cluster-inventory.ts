import { UsageError } from '../../base/errors.js';
import { CONSUMER_LABEL, PROFILE_LABEL, SECRET_STRATEGY_KEY } from '../../providers/hub/cluster-inventory.js';
import { destinationByName, kubeconfigCodec } from './codec.js';

/**
 * cluster-inventory-api's Secret access strategy: a Secret labelled with the consumer and the ClusterProfile, key
 * `Config`. The consumer label is required (--consumer): it is how the consumer finds its Secrets.
 */
export const clusterInventory = kubeconfigCodec({
  format: 'cluster-inventory',
  key: SECRET_STRATEGY_KEY,
  find: { labelSelector: CONSUMER_LABEL },
  detect: (s) => Boolean(s.metadata.labels?.[CONSUMER_LABEL]),
  labels: (d) => ({ [CONSUMER_LABEL]: d.consumer!, [PROFILE_LABEL]: d.profile ?? d.name }),
  destination: (s) =>
    destinationByName('cluster-inventory', s, {
      consumer: s.metadata.labels?.[CONSUMER_LABEL],
      profile: s.metadata.labels?.[PROFILE_LABEL],
    }),
  check: (d) => {
    if (!d.consumer)
      throw new UsageError('--format cluster-inventory needs --consumer NAME (the consumer label value)');
  },
});
