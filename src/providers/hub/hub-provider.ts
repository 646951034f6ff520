import type {HubSpec} from '../../config/fleet-config.js'
import {Hub, type HubOptions} from './client.js'
import {CachedProvider} from '../cached-provider.js'

/** A provider whose clusters are objects on a hub: listed once per run, found by name like every other provider. */
export abstract class HubProvider extends CachedProvider {
  protected readonly hub: Hub

  constructor(name: string, type: string, hub: HubSpec | undefined, options: HubOptions) {
    super(name, type)
    this.hub = new Hub(hub, options, `${type} provider "${name}"`)
  }
}
