import type {ResolvedContext} from '../kubeconfig/loading-rules.js'
import type {AuthKind} from '../kubeconfig/credentials.js'

/** Where a provider found a cluster; enough for a person to go and look. */
export interface ClusterSource {
  kind: 'kubeconfig-file' | 'secret' | 'cluster-api' | 'cluster-profile' | 'namespace' | 'kind'
  /** Kubeconfig file (absolute path) and context, for file-based sources. */
  path?: string
  context?: string
  /** Object on a hub (Secret, Cluster, ClusterProfile, Namespace). */
  namespace?: string
  name?: string
  hub?: string
}

/**
 * What a provider knows about one cluster without the network. `resolve()` produces the kubeconfig context used to
 * connect; providers that need a network call or a plugin to get it do that lazily there.
 */
export interface ClusterRef {
  /** Provider-scoped name, as upstream multicluster-runtime providers name it. */
  name: string
  provider: string
  /** Other names accepted when unambiguous (the file provider's context name). */
  aliases: string[]
  server?: string
  auth: AuthKind
  source: ClusterSource
  labels: Record<string, string>
  ready: boolean
  /** Why not ready. */
  reason?: string
  /** True for the current context of the kubeconfig loading rules (kubectl's `*`). */
  current?: boolean
  clusterId?: string
  resolve(): Promise<ResolvedContext>
}

export interface ClusterProvider {
  readonly name: string
  list(): Promise<ClusterRef[]>
  /** Exact name or an unambiguous alias; ClusterNotFoundError otherwise. */
  get(name: string): Promise<ClusterRef>
  /** The default cluster when none is named (the file provider's current context). */
  current?(context?: string): Promise<ClusterRef>
}
