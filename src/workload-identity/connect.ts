import { requireNamedFile } from '../base/files.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { ClusterEntry } from '../kubeconfig/types.js';
import type { ClusterRef } from '../providers/types.js';

/** A cluster fleet knows, with the user's credentials. */
export interface Cluster {
  name: string;
  context: ResolvedContext;
  client: KubeClient;
}

export async function connectRef(ref: ClusterRef, connector: Connector): Promise<Cluster> {
  const context = await ref.resolve();
  return { name: ref.name, context, client: await connector.context(context, ref.name) };
}

/*
 * Connections workload identity needs besides the user's own: the target as the hub token (the kubeconfig's cluster
 * entry, the token as the only credential), and an issuer URL with no credentials at all, as the target's API server
 * fetches discovery and keys.
 */

/** The same cluster, presenting `token` and nothing else. */
export function connectWithToken(cluster: Cluster, token: string, connector: Connector): Promise<KubeClient> {
  registerSecret(token);
  return connector.context({ ...cluster.context, userName: 'workload-identity-token', user: { token } }, cluster.name);
}

/** An anonymous client for `url` (scheme, host, port and base path), trusting `caPem` or, without it, the system roots. */
export function connectAnonymous(url: string, caPem: string | undefined, connector: Connector): Promise<KubeClient> {
  const cluster: ClusterEntry = { server: url };
  if (caPem) cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
  const context: ResolvedContext = {
    contextName: 'anonymous',
    clusterName: url,
    cluster,
    user: {},
    contextFile: '(none)',
    clusterFile: '(none)',
  };
  return connector.context(context, url);
}

/** The PEM of the CA a kubeconfig cluster entry trusts; undefined when it relies on the system roots. */
export async function caPemOf(cluster: ClusterEntry, where: string): Promise<string | undefined> {
  if (cluster['certificate-authority-data'])
    return Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  const file = cluster['certificate-authority'];
  if (!file) return undefined;
  return (await requireNamedFile(file, `${where}: certificate-authority ${file}`)).toString('utf8');
}

/** `origin` of a URL, or undefined when it is not one. */
export function originOf(value: string): string | undefined {
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}
