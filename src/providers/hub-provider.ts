import type {HubSpec} from '../config/fleet-config.js'
import {Hub, type HubOptions} from './hub.js'
import {findCluster} from './not-found.js'
import type {ClusterProvider, ClusterRef} from './types.js'

/** A provider whose clusters are objects on a hub: listed once per run, found by name like every other provider. */
export abstract class HubProvider implements ClusterProvider {
  protected readonly hub: Hub
  private refs?: Promise<ClusterRef[]>

  constructor(
    readonly name: string,
    /** The provider type, for messages. */
    protected readonly type: string,
    hub: HubSpec | undefined,
    options: HubOptions,
  ) {
    this.hub = new Hub(hub, options, `${type} provider "${name}"`)
  }

  protected abstract build(): Promise<ClusterRef[]>

  list(): Promise<ClusterRef[]> {
    this.refs ??= this.build()
    return this.refs
  }

  async get(name: string): Promise<ClusterRef> {
    return findCluster(await this.list(), name, this.describe())
  }

  describe(): string {
    return `${this.type} provider "${this.name}"`
  }
}
