import type { HubSpec } from '../../config/fleet-config.js';
import { Hub, type HubOptions } from './client.js';
import { CachedProvider } from '../cached-provider.js';

/** What every hub-backed provider's configuration has: its name, its type and the hub it reads. */
export interface HubBackedConfig {
  name: string;
  type: string;
  hub?: HubSpec;
}

/**
 * A provider whose clusters are objects on a hub: listed once per run, found by name like every other provider. Each
 * one is built from its entry of the fleet configuration (the hub already merged) and the run's hub options, so the
 * settings are declared once, in src/config/fleet-config.ts.
 */
export abstract class HubProvider<C extends HubBackedConfig> extends CachedProvider {
  protected readonly hub: Hub;

  constructor(
    protected readonly config: C,
    protected readonly options: HubOptions,
  ) {
    super(config.name, config.type);
    this.hub = new Hub(config.hub, options, `${config.type} provider "${config.name}"`);
  }
}
