import type {ResolvedContext} from '../kubeconfig/loading-rules.js'
import type {AuthKind} from '../kubeconfig/credentials.js'

/** Where a provider found a cluster; enough for a person to go and look. */
export interface ClusterSource {
  /** `provider` marks the row of a provider that could not list its clusters (in a multi-provider listing). */
  kind: 'kubeconfig-file' | 'secret' | 'cluster-api' | 'cluster-profile' | 'namespace' | 'kind' | 'provider'
  /** Kubeconfig file (absolute path) and context, for file-based sources; for other sources the context used inside. */
  path?: string
  context?: string
  /** Object on a hub (Secret, Cluster, ClusterProfile, Namespace). */
  namespace?: string
  name?: string
  /** The hub's kubeconfig context. */
  hub?: string
  /** apiVersion of the object read (cluster-api: v1beta2 or v1beta1). */
  apiVersion?: string
  /** `<namespace>/<name>` of the Secret that holds the kubeconfig, and its data key. */
  secret?: string
  key?: string
  /** cluster-inventory: the access provider used, from the profile's status. */
  accessProvider?: string
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
  /** Where clusterId came from: `ClusterProfile` (status.properties), `ClusterProperty` or `kube-system` (live). */
  clusterIdSource?: string
  resolve(): Promise<ResolvedContext>
}

export interface ClusterProvider {
  readonly name: string
  list(): Promise<ClusterRef[]>
  /** Exact name or an unambiguous alias; ClusterNotFoundError otherwise. */
  get(name: string): Promise<ClusterRef>
  /** The default cluster when none is named (the file provider's current context). */
  current?(context?: string): Promise<ClusterRef>
  /** Where the clusters come from, for messages (`cluster "x" not found in ...`). */
  describe?(): string
}
