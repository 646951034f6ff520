import { existsSync } from 'node:fs';

import { ConfigError } from '../base/errors.js';
import { loadMerged, precedence, type ResolvedContext } from './loading-rules.js';

/**
 * The configuration a Pod has, read the way client-go's rest.InClusterConfig reads it: the API server from
 * KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the ServiceAccount token and the cluster CA from the files the
 * kubelet mounts. The token is referenced as a file (tokenFile), so a projected token the kubelet refreshes is re-read.
 * The paths can be moved with FLEET_IN_CLUSTER_TOKEN_FILE / FLEET_IN_CLUSTER_CA_FILE (tests give them the way a Pod has them).
 */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export function inClusterAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/**
 * Whether to use the in-cluster configuration, decided as client-go's deferred loading decides it: only when the
 * kubeconfig loading rules (KUBECONFIG, else ~/.kube/config) find nothing at all, so a kubeconfig in HOME wins over a
 * Pod's ServiceAccount. A file that exists but cannot be read is not "nothing": the caller reports it.
 */
export async function useInCluster(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (!inClusterAvailable(env)) return false;
  let merged;
  try {
    merged = await loadMerged(precedence(env).paths);
  } catch {
    return false;
  }
  return merged.clusters.size === 0 && merged.users.size === 0 && merged.contexts.size === 0 && !merged.currentContext;
}

export function inClusterContext(env: NodeJS.ProcessEnv = process.env): ResolvedContext {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new ConfigError('in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  const tokenFile = env.FLEET_IN_CLUSTER_TOKEN_FILE || `${SERVICE_ACCOUNT_DIR}/token`;
  const caFile = env.FLEET_IN_CLUSTER_CA_FILE || `${SERVICE_ACCOUNT_DIR}/ca.crt`;
  if (!existsSync(tokenFile))
    throw new ConfigError(`in-cluster configuration: no ServiceAccount token at ${tokenFile}`);
  if (!existsSync(caFile)) throw new ConfigError(`in-cluster configuration: no cluster CA at ${caFile}`);
  // An IPv6 host needs brackets in a URL, as client-go's net.JoinHostPort adds them.
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    contextName: 'in-cluster',
    clusterName: 'in-cluster',
    userName: 'in-cluster',
    cluster: { server, 'certificate-authority': caFile },
    user: { tokenFile },
    contextFile: 'in-cluster',
    clusterFile: 'in-cluster',
    userFile: 'in-cluster',
  };
}
