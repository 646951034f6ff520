import type { ClusterEntry, UserEntry } from '../../kubeconfig/types.js';
import { type ArgocdClusterConfig, argocdEntries, parseArgocdConfig } from '../../providers/hub/argocd.js';
import { ARGOCD_SECRET_TYPE_LABEL, secretText } from '../../providers/hub/objects.js';
import { buildKubeconfig } from '../kubeconfig-out.js';
import { type Codec, b64, destinationByName, sameName } from './codec.js';
import { parseJson } from '../../base/json.js';

export { ARGOCD_SECRET_TYPE_LABEL };
/** The label value that makes a Secret one of Argo CD's clusters. */
export const ARGOCD_CLUSTER_LABELS = { [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' };

/** Argo CD's cluster `config`: one type with the provider's decoder (Argo CD's ClusterConfig has more fields). */
export type ArgocdConfig = ArgocdClusterConfig;

/** The TLS part of the config: the CA, server name and skip-verify of the cluster, and a client certificate if the user has one. */
export function tlsClientConfig(
  cluster: ClusterEntry,
  user: UserEntry = {},
): NonNullable<ArgocdConfig['tlsClientConfig']> {
  const tls: NonNullable<ArgocdConfig['tlsClientConfig']> = { insecure: cluster['insecure-skip-tls-verify'] === true };
  if (cluster['certificate-authority-data']) tls.caData = cluster['certificate-authority-data'];
  if (cluster['tls-server-name']) tls.serverName = cluster['tls-server-name'];
  if (user['client-certificate-data']) {
    tls.certData = user['client-certificate-data'];
    tls.keyData = user['client-key-data'];
  }
  return tls;
}

/** The data of an Argo CD cluster Secret: the name Argo CD shows, the server, the config. */
export function argocdData(
  displayName: string,
  server: string | undefined,
  config: ArgocdConfig,
): Record<string, string> {
  return { name: b64(displayName), server: b64(server ?? ''), config: b64(JSON.stringify(config)) };
}

/**
 * Argo CD's declarative cluster Secret: labelled `argocd.argoproj.io/secret-type=cluster`, with `name` (what Argo CD
 * shows), `server` and `config` (a JSON bearer token or client certificate, and the CA) instead of a kubeconfig.
 */
export const argocd: Codec<'argocd'> = {
  format: 'argocd',
  key: 'config',
  kubeconfigInKey: false,
  find: { labelSelector: `${ARGOCD_SECRET_TYPE_LABEL}=cluster` },
  detect: (s) => s.metadata.labels?.[ARGOCD_SECRET_TYPE_LABEL] === 'cluster',
  secretName: sameName,
  destination: (s) => destinationByName('argocd', s),
  check: () => undefined,
  encode: (_d, w) => ({
    labels: { ...ARGOCD_CLUSTER_LABELS },
    type: 'Opaque',
    data: argocdData(w.displayName ?? w.clusterName, w.cluster.server, {
      ...(w.user.token ? { bearerToken: w.user.token } : {}),
      tlsClientConfig: tlsClientConfig(w.cluster, w.user),
    }),
  }),
  decode: (s) => {
    // Read as the argocd provider (and Argo CD's own Cluster.RawRestConfig) reads it: one decoder for both, so a
    // Secret creds list or adopt accepts is one the provider connects with, basic auth and awsAuthConfig included.
    const config = parseArgocdConfig(secretText(s, 'config'));
    if (config instanceof Error) throw config;
    const server = secretText(s, 'server');
    const { cluster, user } = argocdEntries(server ?? '', config);
    if (server === undefined) delete cluster.server;
    const names = { cluster: s.metadata.name, user: s.metadata.name };
    return {
      kubeconfig: buildKubeconfig({ name: names.cluster, userName: names.user, cluster, user }),
      cluster,
      user,
      names,
    };
  },
};

/**
 * Argo CD's `config` with the new credential in it and everything else it held kept (proxyUrl, disableCompression,
 * tlsClientConfig.serverName, fields of a newer Argo CD): only the credential fields are fleet's to replace. Base64 in,
 * base64 out, as in the Secret; a `config` that is not a JSON object is replaced whole.
 */
export function keepArgocdConfig(oldData: string | undefined, newData: string): string {
  const parse = (d: string | undefined): Record<string, unknown> | undefined => {
    try {
      const v: unknown = parseJson(Buffer.from(d ?? '', 'base64').toString('utf8'));
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const old = parse(oldData);
  const fresh = parse(newData);
  if (!old || !fresh) return newData;
  const kept = { ...old };
  for (const k of ['bearerToken', 'username', 'password', 'execProviderConfig', 'awsAuthConfig']) delete kept[k];
  const tls = { ...((typeof old.tlsClientConfig === 'object' && old.tlsClientConfig) || {}) } as Record<
    string,
    unknown
  >;
  delete tls.certData;
  delete tls.keyData;
  const merged = { ...kept, ...fresh, tlsClientConfig: { ...tls, ...(fresh.tlsClientConfig as object) } };
  return Buffer.from(JSON.stringify(merged)).toString('base64');
}
