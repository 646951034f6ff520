import {ConfigError, FleetError} from '../base/errors.js'
import {authKind} from '../kubeconfig/credentials.js'
import type {ResolvedContext} from '../kubeconfig/loading-rules.js'
import type {ClusterRef} from './types.js'

/** The parts of a ClusterRef a provider decides; the rest follows from the resolved context (or the failure). */
export type RefFields = Pick<ClusterRef, 'name' | 'provider' | 'source' | 'labels'> & Partial<Pick<ClusterRef, 'aliases' | 'clusterId' | 'clusterIdSource'>>

/**
 * Builds a ref from what the provider found: a context to connect with (ready unless `notReady` says why not), or the
 * error that prevented one (not ready, with the error as the reason; resolve() fails with it).
 */
export function makeRef(fields: RefFields, found: ResolvedContext | Error, notReady?: string): ClusterRef {
  const base = {aliases: [], ...fields}
  if (found instanceof Error) {
    return {
      ...base,
      auth: 'none',
      ready: false,
      reason: found.message,
      resolve: async () => {
        throw found instanceof FleetError ? found : new ConfigError(found.message)
      },
    }
  }
  const server = found.cluster.server
  const reason = server ? notReady : `${found.clusterFile}: cluster "${found.clusterName}" has no server`
  return {...base, server, auth: authKind(found.user), ready: !reason, reason, resolve: async () => found}
}
