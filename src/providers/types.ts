import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import type { FleetError } from '../base/errors.js';
import type { AuthKind } from '../kubeconfig/credentials.js';

/** Where a provider found a cluster; enough for a person to go and look. */
export interface ClusterSource {
  kind:
    | 'kubeconfig-file'
    | 'secret'
    | 'cluster-api'
    | 'cluster-profile'
    | 'namespace'
    | 'kind'
    | 'kcp-workspace'
    | 'exec'
    | 'argocd-cluster';
  /** Kubeconfig file (absolute path) and context, for file-based sources; for other sources the context used inside. */
  path?: string;
  context?: string;
  /** Object on a hub (Secret, Cluster, ClusterProfile, Namespace). */
  namespace?: string;
  name?: string;
  /** The hub's kubeconfig context. */
  hub?: string;
  /** apiVersion of the object read (cluster-api: v1beta2 or v1beta1). */
  apiVersion?: string;
  /** `<namespace>/<name>` of the Secret that holds the kubeconfig, and its data key. */
  secret?: string;
  key?: string;
  /** cluster-inventory: the access provider used, from the profile's status. */
  accessProvider?: string;
  /** kcp: the workspace path (`root:org:team`), its logical cluster, and whether its URL goes through a front proxy
   * (absent when unknown: the Shards could not be read). */
  workspace?: string;
  logicalCluster?: string;
  frontProxy?: boolean;
  /** exec: the program that printed the cluster (as fleet.yaml names it). */
  program?: string;
  /** argocd: what Argo CD keeps beside the credential in its cluster Secret. */
  argocd?: ArgocdClusterInfo;
}

/** An Argo CD cluster's settings, as Argo CD's database layer reads them from its Secret (util/db SecretToCluster). */
export interface ArgocdClusterInfo {
  /** The `server` key as Argo CD reads it (trailing slashes dropped); `https://kubernetes.default.svc` for in-cluster. */
  server: string;
  /** The AppProject the cluster is scoped to (`project`), if any. */
  project?: string;
  /** The namespaces Argo CD may manage there (`namespaces`, comma-separated); empty: all. */
  namespaces: string[];
  /** Whether cluster-scoped resources may be managed when `namespaces` is set (`clusterResources: "true"`). */
  clusterResources: boolean;
  /** The application controller shard the cluster is pinned to (`shard`), if any. */
  shard?: number;
  /** The cluster Argo CD runs in: Argo CD reaches it with its own ServiceAccount, fleet with the hub's context. */
  inCluster?: true;
  /**
   * Argo CD's own name for an in-cluster entry that fleet lists as `in-cluster` instead: a Secret for the in-cluster
   * address with no credential of its own names it as it likes in Argo CD, but the hub's credential it borrows is
   * reached only by the operator's name for it.
   */
  argocdName?: string;
}

/**
 * What a provider knows about one cluster without the network. `resolve()` produces the kubeconfig context used to
 * connect; providers that need a network call or a plugin to get it do that lazily there.
 */
export interface ClusterRef {
  /** Provider-scoped name, as upstream multicluster-runtime providers name it. */
  name: string;
  provider: string;
  /** Other names accepted when unambiguous (the file provider's context name). */
  aliases: string[];
  server?: string;
  auth: AuthKind;
  source: ClusterSource;
  labels: Record<string, string>;
  ready: boolean;
  /** Why not ready. */
  reason?: string;
  /** True for the current context of the kubeconfig loading rules (kubectl's `*`). */
  current?: boolean;
  clusterId?: string;
  /** Where clusterId came from: `ClusterProfile` (status.properties), `ClusterProperty` or `kube-system` (live). */
  clusterIdSource?: string;
  /**
   * The exec plugin the cluster's credential runs, where that command was written, and whether the trust policy lets it
   * run (set by the run's provider from TrustPolicy; `fleet auth plugins` lists these).
   */
  plugin?: PluginUse;
  resolve(): Promise<ResolvedContext>;
}

export interface PluginUse {
  command: string;
  /** Where the command is written: a kubeconfig file, a Secret, a ClusterProfile's access-provider file. */
  from: string;
  /** `file` (the user's) or `data` (read from a cluster). */
  trust: 'file' | 'data';
  /** The absolute path of a script the plugin's arguments run (`bash /opt/x/token.sh`): what to allow instead of an interpreter. */
  wrapper?: string;
  allowed: boolean;
  /** Why it is refused, or what allowed it when a policy had to. */
  reason?: string;
  /** What to add to allow it (hub data only). */
  allowWith?: string;
}

/**
 * A provider that could not list its clusters, reported beside the clusters the others listed: one unreachable hub must
 * not hide the rest of the fleet, nor vanish silently from it.
 */
export interface ProviderFailure {
  /** The provider's name (from the fleet configuration). */
  provider: string;
  /** Where its clusters would have been: how many clusters of the list come before them (the configuration's order). */
  position: number;
  /** `cannot list clusters: <why>`, with the original kind (unreachable, tls, config, ...). */
  error: FleetError;
}

export interface ClusterProvider {
  readonly name: string;
  /** The clusters this provider could list (a provider of several leaves out the ones that failed: see failures()). */
  list(): Promise<ClusterRef[]>;
  /** The providers that could not list, after list(); only a provider made of several has any. */
  failures?(): Promise<ProviderFailure[]>;
  /**
   * The names of the providers this one is made of (the fleet configuration's entries): a provider that listed no
   * cluster is still a source that answered (the exporter's fleet_source_up). One provider: its own name.
   */
  providerNames?(): Promise<string[]>;
  /** Exact name or an unambiguous alias; ClusterNotFoundError otherwise. */
  get(name: string): Promise<ClusterRef>;
  /** The default cluster when none is named (the file provider's current context). */
  current?(context?: string): Promise<ClusterRef>;
  /** Where the clusters come from, for messages (`cluster "x" not found in ...`). */
  describe?(): string;
  /**
   * The short name of each file cluster listed so far that get() accepts, by full name (shortestNames in
   * not-found.ts); nothing is listed for it, and a provider that has not listed, or could not, has none.
   */
  shortNames?(): Promise<Map<string, string>>;
}
