import type { ExecConfig } from './types.js';

/**
 * How an exec user that runs `fleet wi token` is recognised, and its settings read: the arguments, the access provider
 * name, the per-cluster config. On the kubeconfig floor because services on either side read it: creds/ (creds list
 * names such a credential `workload-identity`) and workload-identity/ (wi doctor, wi setup), and creds/ may not reach up
 * into workload-identity/, which builds on creds/ (scripts/check-layers.mjs).
 */
/** The arguments that make fleet the plugin: `fleet wi token`. */
export const PLUGIN_ARGS = ['wi', 'token'] as const;
/** The access provider name `wi setup --consumer cluster-inventory` writes into a ClusterProfile and the provider file. */
export const ACCESS_PROVIDER_NAME = 'fleet-workload-identity';
/**
 * The plugin's per-cluster settings, as a ClusterProfile's `client.authentication.k8s.io/exec` extension (or Argo CD's
 * `execProviderConfig.config`) carries them into `ExecCredential.spec.cluster.config`.
 */
export interface PluginClusterConfig {
  /** The hub ServiceAccount, NAMESPACE/NAME. */
  serviceAccount?: string;
  /** Default: the target's server URL exactly as written (spec.cluster.server). */
  audience?: string;
  expirationSeconds?: number;
}

/** The plugin's settings as an exec user runs it, when the exec user is `fleet wi token`; undefined otherwise. */
export interface WiTokenExec {
  serviceAccount?: string;
  audience?: string;
  hubKubeconfig?: string;
  hubContext?: string;
}

export function wiTokenExec(exec: ExecConfig | undefined, clusterExtensionConfig?: unknown): WiTokenExec | undefined {
  const args = exec?.args ?? [];
  const at = args.findIndex((a, i) => a === PLUGIN_ARGS[0] && args[i + 1] === PLUGIN_ARGS[1]);
  if (at === -1) return undefined;
  const rest = args.slice(at + 2);
  const flag = (name: string): string | undefined => {
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === name) return rest[i + 1];
      if (rest[i].startsWith(`${name}=`)) return rest[i].slice(name.length + 1);
    }
    return undefined;
  };
  const config = (
    clusterExtensionConfig && typeof clusterExtensionConfig === 'object' ? clusterExtensionConfig : {}
  ) as PluginClusterConfig;
  return {
    serviceAccount:
      flag('--service-account') ?? (typeof config.serviceAccount === 'string' ? config.serviceAccount : undefined),
    audience: flag('--audience') ?? (typeof config.audience === 'string' ? config.audience : undefined),
    hubKubeconfig: flag('--hub-kubeconfig'),
    hubContext: flag('--hub-context'),
  };
}
