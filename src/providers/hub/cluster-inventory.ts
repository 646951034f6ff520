import type { ClusterInventoryProviderConfig } from '../../config/fleet-config.js';
import type { ResolvedContext } from '../../kubeconfig/loading-rules.js';
import {
  type AccessConfig,
  type ProfileAccessProvider,
  accessShapeProblem,
  chooseAccessProvider,
  execContext,
  loadAccessConfig,
} from './access-providers.js';
import { makeRef } from '../ref.js';
import { CLUSTER_PROFILE, SECRET, apiVersionOf } from '../../kube/resources.js';
import { type ObjectMeta, type Secret, kubeconfigInSecret } from './objects.js';
import { HubProvider } from './hub-provider.js';
import type { ClusterRef, ClusterSource } from '../types.js';

/**
 * multicluster-runtime's cluster-inventory-api provider: every ClusterProfile on the hub is a cluster named
 * `<namespace>/<name>`, ready when its ControlPlaneHealthy condition is True. Credentials come from an exec plugin chosen
 * through the access-provider file, or (deprecated upstream, still deployed) from a labelled Secret.
 */
export const CONSUMER_LABEL = 'x-k8s.io/cluster-inventory-consumer';
export const PROFILE_LABEL = 'x-k8s.io/cluster-profile';
export const SECRET_STRATEGY_KEY = 'Config';
export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';

export interface ClusterProfile {
  metadata: ObjectMeta;
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    accessProviders?: ProfileAccessProvider[];
    credentialProviders?: ProfileAccessProvider[];
    properties?: { name: string; value: string }[];
  };
}

export function profileNotReady(profile: ClusterProfile): string | undefined {
  if (profile.metadata.deletionTimestamp) return 'the ClusterProfile is being deleted';
  const c = profile.status?.conditions?.find((x) => x.type === 'ControlPlaneHealthy');
  if (!c) return 'no ControlPlaneHealthy condition';
  if (c.status === 'True') return undefined;
  return `ControlPlaneHealthy is ${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`;
}

type Strategy =
  { kind: 'access'; config: AccessConfig } | { kind: 'secret'; consumer: string; secrets: Map<string, Secret[]> };

/** The context for one profile through the access-provider strategy. */
function accessContext(
  profile: ClusterProfile,
  config: AccessConfig,
  name: string,
  provider: string,
): { found: ResolvedContext | Error; source: Partial<ClusterSource> } {
  const shape = accessShapeProblem(profile.status);
  if (shape) return { found: new Error(`ClusterProfile ${name}: ${shape}`), source: {} };
  const chosen = chooseAccessProvider(config, profile.status ?? {});
  if (chosen instanceof Error) return { found: chosen, source: {} };
  const built = execContext(chosen.entry, chosen.access);
  const source = { accessProvider: chosen.entry.name };
  if (built instanceof Error) return { found: built, source };
  const where = `clusterprofile ${name} accessProvider ${chosen.entry.name}`;
  return {
    source,
    found: {
      contextName: name,
      clusterName: chosen.entry.name,
      userName: chosen.entry.name,
      cluster: built.cluster,
      user: { exec: built.exec },
      contextFile: where,
      clusterFile: where,
      userFile: config.path,
      // The command is the access-provider file's (the user's); the cluster entry, and any arguments and variables the
      // profile adds to the command, are hub data.
      origin: { object: `ClusterProfile ${name}`, provider, commandFromUser: true, dataEnv: built.dataEnv },
    },
  };
}

/** The context for one profile through the Secret strategy: exactly one labelled Secret, key `Config`. */
function secretContext(
  profile: ClusterProfile,
  consumer: string,
  secrets: Secret[],
  provider: string,
): { found: ResolvedContext | Error; source: Partial<ClusterSource> } {
  const { namespace, name } = profile.metadata;
  const labels = `${CONSUMER_LABEL}=${consumer},${PROFILE_LABEL}=${name}`;
  if (secrets.length === 0)
    return { found: new Error(`no Secret labelled ${labels} in namespace ${namespace}`), source: {} };
  if (secrets.length > 1) {
    const names = secrets
      .map((s) => s.metadata.name)
      .sort()
      .join(', ');
    return {
      found: new Error(
        `${secrets.length} Secrets labelled ${labels} in namespace ${namespace} (${names}); expected one`,
      ),
      source: {},
    };
  }
  const secret = secrets[0];
  const found = kubeconfigInSecret(secret, SECRET_STRATEGY_KEY, provider);
  return {
    found,
    source: {
      secret: `${namespace}/${secret.metadata.name}`,
      key: SECRET_STRATEGY_KEY,
      context: found instanceof Error ? undefined : found.contextName,
    },
  };
}

export function refFromProfile(
  profile: ClusterProfile,
  strategy: Strategy,
  o: { provider: string; hub?: string },
): ClusterRef {
  const { namespace, name } = profile.metadata;
  const full = `${namespace}/${name}`;
  const { found, source } =
    strategy.kind === 'access'
      ? accessContext(profile, strategy.config, full, o.provider)
      : secretContext(profile, strategy.consumer, strategy.secrets.get(full) ?? [], o.provider);
  const clusterId = profile.status?.properties?.find((p) => p.name === CLUSTER_ID_PROPERTY)?.value || undefined;
  const notReady = profileNotReady(profile);
  return makeRef(
    {
      name: full,
      provider: o.provider,
      aliases: [name],
      labels: profile.metadata.labels ?? {},
      source: {
        kind: 'cluster-profile',
        namespace,
        name,
        hub: o.hub,
        apiVersion: apiVersionOf(CLUSTER_PROFILE),
        ...source,
      },
      clusterId,
      clusterIdSource: clusterId ? 'ClusterProfile' : undefined,
    },
    found instanceof Error && notReady ? new Error(`${notReady}; ${found.message}`) : found,
    notReady,
  );
}

export class ClusterInventoryProvider extends HubProvider<ClusterInventoryProviderConfig> {
  protected async build(): Promise<ClusterRef[]> {
    const hubName = await this.hub.name();
    // The local file is read first: a broken configuration is reported before the hub is contacted.
    const config = this.config.providerFile
      ? await loadAccessConfig(this.config.providerFile, this.options.env)
      : undefined;
    const profiles = await this.hub.listObjects<ClusterProfile>(CLUSTER_PROFILE, 'list ClusterProfiles', {
      namespace: this.config.namespace,
    });
    const strategy: Strategy = config
      ? { kind: 'access', config }
      : { kind: 'secret', consumer: this.config.consumer!, secrets: await this.consumerSecrets() };
    return profiles
      .map((p) => refFromProfile(p, strategy, { provider: this.name, hub: hubName }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** All of this consumer's Secrets in one request, grouped by `<namespace>/<profile>`. */
  private async consumerSecrets(): Promise<Map<string, Secret[]>> {
    const secrets = await this.hub.listObjects<Secret>(SECRET, 'list cluster-inventory Secrets', {
      namespace: this.config.namespace,
      labelSelector: `${CONSUMER_LABEL}=${this.config.consumer},${PROFILE_LABEL}`,
    });
    const byProfile = new Map<string, Secret[]>();
    for (const s of secrets) {
      const key = `${s.metadata.namespace}/${s.metadata.labels?.[PROFILE_LABEL]}`;
      byProfile.set(key, [...(byProfile.get(key) ?? []), s]);
    }
    return byProfile;
  }
}
