import type {HubSpec} from '../../config/fleet-config.js'
import {makeRef} from '../ref.js'
import type {HubOptions} from './client.js'
import type {ObjectMeta} from './objects.js'
import {HubProvider} from './hub-provider.js'
import type {ClusterRef} from '../types.js'

/**
 * multicluster-runtime's namespace provider: each namespace of one cluster is a virtual cluster named after the
 * namespace, reached with that cluster's own credential scoped to the namespace.
 */
export interface NamespaceProviderOptions extends HubOptions {
  /** The cluster whose namespaces are listed. */
  hub?: HubSpec
  /** Only namespaces whose labels match (all namespaces when absent, as upstream). */
  selector?: string
}

interface Namespace {
  metadata: ObjectMeta
}

export class NamespaceProvider extends HubProvider {
  constructor(
    name: string,
    private readonly options: NamespaceProviderOptions,
  ) {
    super(name, 'namespace', options.hub, options)
  }

  protected async build(): Promise<ClusterRef[]> {
    const base = await this.hub.context()
    const namespaces = await this.hub.list<Namespace>('/api/v1/namespaces', 'list Namespaces', {labelSelector: this.options.selector})
    return namespaces
      .map((ns) =>
        makeRef(
          {
            name: ns.metadata.name,
            provider: this.name,
            labels: ns.metadata.labels ?? {},
            source: {kind: 'namespace', name: ns.metadata.name, hub: base.contextName, context: base.contextName},
          },
          // Upstream engages a namespace until it is gone, terminating or not.
          {...base, namespace: ns.metadata.name},
        ),
      )
      .sort((a, b) => a.name.localeCompare(b.name))
  }
}
