import {FileProvider} from './file.js'
import type {ClusterProvider} from './types.js'

export interface ProviderFlags {
  kubeconfig?: string[]
  context?: string
}

/** The providers a command works over. For now the file provider; hub-backed providers and fleet config come next. */
export function providersFromFlags(flags: ProviderFlags): FileProvider {
  return new FileProvider({paths: flags.kubeconfig})
}

export type {ClusterProvider}
