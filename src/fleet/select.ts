import {UsageError} from '../base/errors.js'
import type {ClusterProvider, ClusterRef} from '../providers/types.js'
import {matchesSelector, parseSelector} from './selector.js'

export interface Selection {
  clusters?: string[]
  all?: boolean
  selector?: string
  /** The kubeconfig context to use when nothing else selects (the current context otherwise). */
  context?: string
}

/**
 * Which clusters a fleet-wide command works on: named ones (--cluster, repeatable), all (--all), those whose labels
 * match (-l), or, with none of these, the current context like kubectl.
 */
export async function selectClusters(provider: ClusterProvider, selection: Selection): Promise<ClusterRef[]> {
  const named = selection.clusters ?? []
  if (selection.all && named.length > 0) throw new UsageError('--all and --cluster cannot be used together')
  let refs: ClusterRef[]
  if (named.length > 0) {
    refs = []
    for (const name of named) {
      const ref = await provider.get(name)
      if (!refs.includes(ref)) refs.push(ref)
    }
  } else if (selection.all || selection.selector) {
    refs = await provider.list()
  } else {
    if (!provider.current) throw new UsageError('name a cluster with --cluster, or use --all or --selector')
    refs = [await provider.current(selection.context)]
  }
  if (selection.selector) {
    const requirements = parseSelector(selection.selector)
    refs = refs.filter((r) => matchesSelector(requirements, r.labels))
  }
  return refs
}
