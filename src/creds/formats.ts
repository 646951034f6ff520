import type {V1Secret} from '@kubernetes/client-node'
import {UsageError} from '../base/errors.js'
import type {Wire} from '../kube/objects.js'
import type {ClusterEntry, UserEntry} from '../kubeconfig/types.js'
import {KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_LABEL} from '../providers/hub/kubeconfig-secret.js'
import {CAPI_KUBECONFIG_KEY, CAPI_SECRET_TYPE, kubeconfigSecretName} from '../providers/hub/cluster-api.js'
import {CONSUMER_LABEL, PROFILE_LABEL, SECRET_STRATEGY_KEY} from '../providers/hub/cluster-inventory.js'
import type {KubeObject} from './kube-objects.js'
import {MANAGED_BY, MANAGED_BY_LABEL} from './labels.js'

/**
 * One consumer Secret format per consumer. The names, labels and keys come from the providers fleet already reads
 * (src/providers/hub/), so a Secret fleet writes is read back by the same code a controller's provider mirrors.
 */
export const FORMATS = ['multicluster-runtime', 'cluster-api', 'cluster-inventory', 'kubeconfig-secretreader', 'argocd', 'flux'] as const
export type SecretFormat = (typeof FORMATS)[number]

export const CAPI_CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name'
export const ARGOCD_SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type'
export const FLUX_KEY = 'value'
export const SECRETREADER_KEY = 'kubeconfig'
export const SECRETREADER_PROVIDER = 'kubeconfig-secretreader'
export const EXEC_EXTENSION = 'client.authentication.k8s.io/exec'

export interface SecretDestination {
  namespace: string
  /** As given with --secret; for cluster-api the Cluster's name (the Secret is `<name>-kubeconfig`). */
  name: string
  format: SecretFormat
  /** cluster-inventory: the consumer label value. */
  consumer?: string
  /** cluster-inventory: the ClusterProfile name (default: name). */
  profile?: string
}

export function secretName(d: SecretDestination): string {
  return d.format === 'cluster-api' ? kubeconfigSecretName(d.name) : d.name
}

/** The data key that holds the kubeconfig, per format (argocd holds none: it has its own JSON). */
export function kubeconfigKey(format: SecretFormat): string | undefined {
  switch (format) {
    case 'multicluster-runtime':
      return KUBECONFIG_SECRET_KEY
    case 'cluster-api':
      return CAPI_KUBECONFIG_KEY
    case 'cluster-inventory':
      return SECRET_STRATEGY_KEY
    case 'kubeconfig-secretreader':
      return SECRETREADER_KEY
    case 'flux':
      return FLUX_KEY
    case 'argocd':
      return undefined
  }
}

export function checkDestination(d: SecretDestination): void {
  if (d.format === 'cluster-inventory' && !d.consumer) throw new UsageError('--format cluster-inventory needs --consumer NAME (the consumer label value)')
}

/** Argo CD's cluster Secret `config`: bearer token or client certificate, and the CA. */
export function argocdConfig(cluster: ClusterEntry, user: UserEntry): string {
  const tls: Record<string, unknown> = {insecure: cluster['insecure-skip-tls-verify'] === true}
  if (cluster['certificate-authority-data']) tls.caData = cluster['certificate-authority-data']
  if (cluster['tls-server-name']) tls.serverName = cluster['tls-server-name']
  if (user['client-certificate-data']) {
    tls.certData = user['client-certificate-data']
    tls.keyData = user['client-key-data']
  }
  return JSON.stringify({...(user.token ? {bearerToken: user.token} : {}), tlsClientConfig: tls})
}

export function destinationSecret(
  d: SecretDestination,
  o: {
    kubeconfig: string
    cluster: ClusterEntry
    user: UserEntry
    clusterName: string
    /** What the consumer shows people (Argo CD's `name`); default clusterName. */
    displayName?: string
    annotations: Record<string, string>
  },
): KubeObject {
  const labels: Record<string, string> = {[MANAGED_BY_LABEL]: MANAGED_BY}
  let type = 'Opaque'
  const data: Record<string, string> = {}
  const b64 = (s: string) => Buffer.from(s).toString('base64')
  switch (d.format) {
    case 'multicluster-runtime':
      labels[KUBECONFIG_SECRET_LABEL] = 'true'
      break
    case 'cluster-api':
      labels[CAPI_CLUSTER_NAME_LABEL] = d.name
      type = CAPI_SECRET_TYPE
      break
    case 'cluster-inventory':
      labels[CONSUMER_LABEL] = d.consumer!
      labels[PROFILE_LABEL] = d.profile ?? d.name
      break
    case 'argocd':
      labels[ARGOCD_SECRET_TYPE_LABEL] = 'cluster'
      data.name = b64(o.displayName ?? o.clusterName)
      data.server = b64(o.cluster.server ?? '')
      data.config = b64(argocdConfig(o.cluster, o.user))
      break
    default:
      break
  }
  const key = kubeconfigKey(d.format)
  if (key) data[key] = b64(o.kubeconfig)
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {name: secretName(d), namespace: d.namespace, labels, annotations: o.annotations},
    type,
    data,
  } satisfies Wire<V1Secret>
}

/**
 * The ClusterProfile `status.accessProviders` entry that makes cluster-inventory-api's kubeconfig-secretreader plugin
 * read this Secret: the cluster as the target presents it, and the plugin's config in the exec extension.
 */
export function secretreaderAccessProvider(d: SecretDestination, cluster: ClusterEntry): {name: string; cluster: ClusterEntry} {
  return {
    name: SECRETREADER_PROVIDER,
    cluster: {
      ...cluster,
      extensions: [{name: EXEC_EXTENSION, extension: {name: secretName(d), namespace: d.namespace, key: SECRETREADER_KEY}}],
    },
  }
}
