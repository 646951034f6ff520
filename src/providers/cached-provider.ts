import { findCluster, shortestNames } from './not-found.js';
import type { ClusterProvider, ClusterRef } from './types.js';

/**
 * The part every provider shares: discovery runs once per command (a fleet-wide run asks for the list many times), and
 * a name is found in that list by exact name, then unambiguous alias, else a not-found error with close matches.
 */
export abstract class CachedProvider implements ClusterProvider {
  private refs?: Promise<ClusterRef[]>;

  constructor(
    readonly name: string,
    /** The provider type, for messages. */
    protected readonly type: string,
  ) {}

  protected abstract build(): Promise<ClusterRef[]>;

  list(): Promise<ClusterRef[]> {
    this.refs ??= this.build();
    return this.refs;
  }

  async get(name: string): Promise<ClusterRef> {
    return findCluster(await this.list(), name, this.describe());
  }

  async shortNames(): Promise<Map<string, string>> {
    if (!this.refs) return new Map();
    try {
      return shortestNames(await this.refs);
    } catch {
      return new Map();
    }
  }

  describe(): string {
    return `${this.type} provider "${this.name}"`;
  }
}
