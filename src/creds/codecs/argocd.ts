import { EXEC_CLUSTER_CONFIG_EXTENSION } from '../../kubeconfig/types.js';
import type { ClusterEntry, UserEntry } from '../../kubeconfig/types.js';
import { ARGOCD_SECRET_TYPE_LABEL, secretText } from '../../providers/hub/objects.js';
import { buildKubeconfig } from '../kubeconfig-out.js';
import { type Codec, b64, destinationByName, sameName } from './codec.js';

export { ARGOCD_SECRET_TYPE_LABEL };
/** The label value that makes a Secret one of Argo CD's clusters. */
export const ARGOCD_CLUSTER_LABELS = { [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' };

/** Argo CD's cluster `config` (the fields fleet writes and reads; Argo CD's ClusterConfig has more). */
export interface ArgocdConfig {
  bearerToken?: string;
  tlsClientConfig?: { insecure?: boolean; caData?: string; serverName?: string; certData?: string; keyData?: string };
  /** client-go's exec config as Argo CD holds it (env a map; v3.5+ adds provideClusterInfo and config). */
  execProviderConfig?: {
    command?: string;
    args?: string[];
    apiVersion?: string;
    env?: Record<string, string>;
    provideClusterInfo?: boolean;
    config?: unknown;
  };
}

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

/** The credential in a `config`, as kubeconfig entries (Argo CD's exec config as client-go runs it). */
function entries(server: string | undefined, config: ArgocdConfig): { cluster: ClusterEntry; user: UserEntry } {
  const tls = config.tlsClientConfig ?? {};
  const exec = config.execProviderConfig;
  // Only the fields that are set: the entries are also written out as a kubeconfig, which has no undefined.
  const cluster: ClusterEntry = server === undefined ? {} : { server };
  if (tls.caData) cluster['certificate-authority-data'] = tls.caData;
  if (tls.serverName) cluster['tls-server-name'] = tls.serverName;
  if (tls.insecure) cluster['insecure-skip-tls-verify'] = true;
  if (exec?.config !== undefined)
    cluster.extensions = [{ name: EXEC_CLUSTER_CONFIG_EXTENSION, extension: exec.config }];
  const user: UserEntry = {};
  if (config.bearerToken) user.token = config.bearerToken;
  if (tls.certData) {
    user['client-certificate-data'] = tls.certData;
    user['client-key-data'] = tls.keyData;
  }
  if (exec) {
    const set = Object.entries({
      command: exec.command,
      args: exec.args,
      apiVersion: exec.apiVersion,
      provideClusterInfo: exec.provideClusterInfo,
    }).filter(([, v]) => v !== undefined);
    user.exec = {
      ...Object.fromEntries(set),
      interactiveMode: 'Never',
      env: Object.entries(exec.env ?? {}).map(([name, value]) => ({ name, value })),
    };
  }
  return { cluster, user };
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
    const { cluster, user } = entries(
      secretText(s, 'server'),
      JSON.parse(secretText(s, 'config') ?? '{}') as ArgocdConfig,
    );
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
      const v: unknown = JSON.parse(Buffer.from(d ?? '', 'base64').toString('utf8'));
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
