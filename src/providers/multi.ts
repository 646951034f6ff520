import {FleetError, UsageError} from '../base/errors.js'
import {ClusterNotFoundError, findCluster} from './not-found.js'
import type {ClusterProvider, ClusterRef} from './types.js'

/**
 * multicluster-runtime's multi provider: several named providers at once, each cluster named
 * `<provider>#<inner name>` (split on the first `#`). The inner name alone works wherever it is unambiguous.
 */
export const MULTI_SEPARATOR = '#'

export function splitMultiName(name: string): {provider: string; inner: string} | undefined {
  const i = name.indexOf(MULTI_SEPARATOR)
  if (i <= 0) return undefined
  return {provider: name.slice(0, i), inner: name.slice(i + 1)}
}

function prefixed(provider: ClusterProvider, ref: ClusterRef): ClusterRef {
  return {...ref, name: `${provider.name}${MULTI_SEPARATOR}${ref.name}`, aliases: [ref.name, ...ref.aliases]}
}

/**
 * A provider that could not list its clusters still appears, as one row named after the provider with the reason:
 * one unreachable hub must not hide the rest of the fleet, nor vanish silently from it.
 */
function failedRow(provider: ClusterProvider, error: unknown): ClusterRef {
  const message = (error as Error).message
  return {
    name: provider.name,
    provider: provider.name,
    aliases: [],
    auth: 'none',
    source: {kind: 'provider', name: provider.name},
    labels: {},
    ready: false,
    reason: `cannot list clusters: ${message}`,
    resolve: async () => {
      throw error instanceof FleetError ? error : new FleetError('internal', message)
    },
  }
}

export class MultiProvider implements ClusterProvider {
  readonly name = 'multi'
  private refs?: Promise<ClusterRef[]>

  constructor(readonly providers: ClusterProvider[]) {}

  private async build(): Promise<ClusterRef[]> {
    const lists = await Promise.all(
      this.providers.map(async (p) => {
        try {
          return (await p.list()).map((r) => prefixed(p, r))
        } catch (error) {
          return [failedRow(p, error)]
        }
      }),
    )
    return lists.flat()
  }

  list(): Promise<ClusterRef[]> {
    this.refs ??= this.build()
    return this.refs
  }

  /** `<provider>#<name>` asks only that provider; anything else is looked up across all of them. */
  async get(name: string): Promise<ClusterRef> {
    const split = splitMultiName(name)
    const provider = split && this.providers.find((p) => p.name === split.provider)
    if (split && provider) {
      try {
        return prefixed(provider, await provider.get(split.inner))
      } catch (error) {
        if (!(error instanceof ClusterNotFoundError)) throw error
        const where = provider.describe?.() ?? `provider "${provider.name}"`
        throw new ClusterNotFoundError(name, where, error.suggestions.map((s) => `${provider.name}${MULTI_SEPARATOR}${s}`))
      }
    }
    return findCluster(await this.list(), name, this.describe())
  }

  /** The current context of the one provider that has one (a kubeconfig file provider). */
  async current(context?: string): Promise<ClusterRef> {
    const withCurrent = this.providers.filter((p) => p.current)
    if (withCurrent.length !== 1) {
      throw new UsageError('several providers are configured: name a cluster with --cluster, or use --all or --selector')
    }
    return prefixed(withCurrent[0], await withCurrent[0].current!(context))
  }

  describe(): string {
    return `providers ${this.providers.map((p) => `"${p.name}"`).join(', ')}`
  }
}
