import { type CaKind, type CredentialDescription, caKind, describeCredentials } from '../kubeconfig/credentials.js';
import { checkContext } from '../kubeconfig/readiness.js';
import { maskUrlCredentials } from '../kubeconfig/redact.js';
import type { ClusterRef, ClusterSource } from '../providers/types.js';

/** The source of the row `clusters list` shows for a provider that could not list its clusters. */
export interface FailedProviderSource extends Omit<ClusterSource, 'kind'> {
  kind: 'provider';
}

/** The stable JSON shape of one cluster in `clusters list` (documented in README "Output shapes"). */
export interface ClusterSummary {
  name: string;
  provider: string;
  context?: string;
  /** The context's namespace (kubectl's NAMESPACE column). */
  namespace?: string;
  current: boolean;
  server?: string;
  auth: string;
  ca?: CaKind;
  expires?: string;
  ready: boolean;
  reason?: string;
  clusterId?: string;
  /** `ClusterProfile` (its status.properties), `Workspace` (kcp: spec.cluster, the logical cluster), or with --live
   * `ClusterProperty` / `kube-system` (namespace UID). */
  clusterIdSource?: string;
  labels: Record<string, string>;
  source: ClusterSource | FailedProviderSource;
}

export interface ClusterDetails extends ClusterSummary {
  credentials?: Omit<CredentialDescription, 'auth' | 'ca' | 'expires'>;
}

/** Everything known without the network, credentials described (never included). */
export async function describeRef(ref: ClusterRef, options: { credentials?: boolean } = {}): Promise<ClusterDetails> {
  const out: ClusterDetails = {
    name: ref.name,
    provider: ref.provider,
    context: ref.source.context,
    current: ref.current === true,
    // Shown in tables and JSON: a password or token in the URL is masked, the rest kept as written.
    server: ref.server === undefined ? undefined : maskUrlCredentials(ref.server),
    auth: ref.auth,
    ready: ref.ready,
    reason: ref.reason,
    clusterId: ref.clusterId,
    clusterIdSource: ref.clusterIdSource,
    labels: ref.labels,
    source: ref.source,
  };
  if (!ref.ready && !ref.server) return out;
  try {
    const ctx = await ref.resolve();
    out.namespace = ctx.namespace;
    // credentials: false (a list) spares describing what is not shown, such as each token's fingerprint.
    const { auth, ca, expires, ...rest } = await describeCredentials(ctx.cluster, ctx.user, {
      tokens: options.credentials !== false,
    });
    out.auth = auth;
    out.ca = ca ?? caKind(ctx.cluster);
    out.expires = expires;
    if (options.credentials !== false) out.credentials = rest;
    // READY means usable: what kubectl would refuse before sending a request makes the cluster not ready, with why.
    const { problems } = await checkContext(ctx);
    if (problems.length > 0 && out.ready) {
      out.ready = false;
      out.reason = problems[0];
    }
  } catch (error) {
    out.ready = false;
    out.reason ??= (error as Error).message;
  }
  return out;
}

/** Where a cluster comes from, in a few words: a file path, or the kind and name of the object on a hub. */
export function sourceText(source: ClusterSource | FailedProviderSource): string {
  const object = [source.namespace, source.name].filter(Boolean).join('/');
  switch (source.kind) {
    case 'kubeconfig-file':
      return source.path ?? '';
    case 'secret':
      return `Secret ${object}`;
    case 'cluster-api':
      return `Cluster ${object}${source.secret ? ` (Secret ${source.secret})` : ''}`;
    case 'cluster-profile':
      return `ClusterProfile ${object}${source.accessProvider ? ` (access provider ${source.accessProvider})` : source.secret ? ` (Secret ${source.secret})` : ''}`;
    case 'namespace':
      return `Namespace ${object}`;
    case 'argocd-cluster':
      return source.name ? `Argo CD cluster Secret ${object}` : `Argo CD in-cluster (hub ${source.hub ?? ''})`;
    case 'kind':
      return `kind cluster ${object}`;
    case 'kcp-workspace': {
      const details = [
        source.logicalCluster && `logical cluster ${source.logicalCluster}`,
        source.frontProxy === true
          ? 'through the front proxy'
          : source.frontProxy === false
            ? 'on its shard'
            : undefined,
      ].filter(Boolean);
      return `kcp workspace ${source.workspace ?? ''}${details.length ? ` (${details.join(', ')})` : ''}`;
    }
    case 'exec':
      return `exec ${source.program ?? ''}`;
    case 'provider':
      return `provider ${object}`;
  }
}
