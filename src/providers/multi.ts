import { FleetError, UsageError, asError } from '../base/errors.js';
import { ClusterNotFoundError, findCluster, shortestNames } from './not-found.js';
import type { ClusterProvider, ClusterRef, ProviderFailure } from './types.js';

/**
 * multicluster-runtime's multi provider: several named providers at once, each cluster named
 * `<provider>#<inner name>` (split on the first `#`). The inner name alone works wherever it is unambiguous.
 */
export const MULTI_SEPARATOR = '#';

export function splitMultiName(name: string): { provider: string; inner: string } | undefined {
  const i = name.indexOf(MULTI_SEPARATOR);
  if (i <= 0) return undefined;
  return { provider: name.slice(0, i), inner: name.slice(i + 1) };
}

function prefixed(provider: ClusterProvider, ref: ClusterRef): ClusterRef {
  return { ...ref, name: `${provider.name}${MULTI_SEPARATOR}${ref.name}`, aliases: [ref.name, ...ref.aliases] };
}

/** A provider's listing error, kept with its kind: `cannot list clusters: <provider's message>`. */
function listingFailure(provider: ClusterProvider, error: unknown, position: number): ProviderFailure {
  const cause = error instanceof FleetError ? error : new FleetError('internal', asError(error).message);
  return {
    provider: provider.name,
    position,
    error: new FleetError(cause.kind, `cannot list clusters: ${cause.message}`, { cause, exitCode: cause.exitCode }),
  };
}

interface Listing {
  refs: ClusterRef[];
  failures: ProviderFailure[];
}

export class MultiProvider implements ClusterProvider {
  readonly name = 'multi';
  private listing?: Promise<Listing>;

  constructor(readonly providers: ClusterProvider[]) {}

  private async build(): Promise<Listing> {
    const lists = await Promise.all(
      this.providers.map(async (p) => {
        try {
          return (await p.list()).map((r) => prefixed(p, r));
        } catch (error) {
          return error;
        }
      }),
    );
    const out: Listing = { refs: [], failures: [] };
    lists.forEach((list, i) => {
      if (Array.isArray(list)) out.refs.push(...(list as ClusterRef[]));
      else out.failures.push(listingFailure(this.providers[i], list, out.refs.length));
    });
    return out;
  }

  async list(): Promise<ClusterRef[]> {
    this.listing ??= this.build();
    return (await this.listing).refs;
  }

  async failures(): Promise<ProviderFailure[]> {
    this.listing ??= this.build();
    return (await this.listing).failures;
  }

  async providerNames(): Promise<string[]> {
    return this.providers.map((p) => p.name);
  }

  /** `<provider>#<name>` asks only that provider; anything else is looked up across all of them. */
  async get(name: string): Promise<ClusterRef> {
    const split = splitMultiName(name);
    const provider = split && this.providers.find((p) => p.name === split.provider);
    if (split && provider) {
      try {
        return prefixed(provider, await provider.get(split.inner));
      } catch (error) {
        if (!(error instanceof ClusterNotFoundError)) throw error;
        const where = provider.describe?.() ?? `provider "${provider.name}"`;
        throw new ClusterNotFoundError(
          name,
          where,
          error.suggestions.map((s) => `${provider.name}${MULTI_SEPARATOR}${s}`),
        );
      }
    }
    // A name that is a provider which could not list: its listing error says more than "not found".
    const failed = (await this.failures()).find((f) => f.provider === name);
    if (failed) throw failed.error;
    return findCluster(await this.list(), name, this.describe());
  }

  /**
   * The short names get() accepts, by full name: the shortest of a name the whole list finds (shortestNames) and
   * `<provider>#<that provider's short name>`. A name of the whole list is not used when get() would send it elsewhere
   * first (it has a configured provider before its `#`, or is the name of a provider that could not list).
   */
  async shortNames(): Promise<Map<string, string>> {
    if (!this.listing) return new Map();
    const { refs, failures } = await this.listing;
    const routedElsewhere = (name: string) => {
      const split = splitMultiName(name);
      return (
        (split !== undefined && this.providers.some((p) => p.name === split.provider)) ||
        failures.some((f) => f.provider === name)
      );
    };
    const out = new Map<string, string>();
    for (const [full, short] of shortestNames(refs)) if (!routedElsewhere(short)) out.set(full, short);
    for (const p of this.providers) {
      for (const [inner, short] of (await p.shortNames?.()) ?? []) {
        const full = `${p.name}${MULTI_SEPARATOR}${inner}`;
        const prefixedShort = `${p.name}${MULTI_SEPARATOR}${short}`;
        const known = out.get(full);
        if (!known || prefixedShort.length < known.length) out.set(full, prefixedShort);
      }
    }
    return out;
  }

  /** The current context of the one provider that has one (a kubeconfig file provider). */
  async current(context?: string): Promise<ClusterRef> {
    const withCurrent = this.providers.filter((p) => p.current !== undefined);
    if (withCurrent.length !== 1) {
      throw new UsageError(
        'several providers are configured: name a cluster with --cluster, or use --all or --selector',
      );
    }
    return prefixed(withCurrent[0], await withCurrent[0].current!(context));
  }

  describe(): string {
    return `providers ${this.providers.map((p) => `"${p.name}"`).join(', ')}`;
  }
}
