import type { V1Namespace } from '@kubernetes/client-node';
import type { NamespaceProviderConfig } from '../../config/fleet-config.js';
import { makeRef } from '../ref.js';
import type { ObjectMeta } from './objects.js';
import type { Wire } from '../../kube/objects.js';
import { NAMESPACE } from '../../kube/resources.js';
import { HubProvider } from './hub-provider.js';
import type { ClusterRef } from '../types.js';

/**
 * multicluster-runtime's namespace provider: each namespace of one cluster is a virtual cluster named after the
 * namespace, reached with that cluster's own credential scoped to the namespace.
 */

type Namespace = Wire<V1Namespace> & { metadata: ObjectMeta };

export class NamespaceProvider extends HubProvider<NamespaceProviderConfig> {
  protected async build(): Promise<ClusterRef[]> {
    const base = await this.hub.context();
    const namespaces = await this.hub.listObjects<Namespace>(NAMESPACE, 'list Namespaces', {
      labelSelector: this.config.selector,
    });
    return namespaces
      .map((ns) =>
        makeRef(
          {
            name: ns.metadata.name,
            provider: this.name,
            labels: ns.metadata.labels ?? {},
            source: { kind: 'namespace', name: ns.metadata.name, hub: base.contextName, context: base.contextName },
          },
          // Upstream engages a namespace until it is gone, terminating or not.
          { ...base, namespace: ns.metadata.name },
        ),
      )
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}
