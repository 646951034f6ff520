import { FleetError } from '../../base/errors.js';
import type { ClusterApiProviderConfig } from '../../config/fleet-config.js';
import type { ResolvedContext } from '../../kubeconfig/loading-rules.js';
import { mapLimit } from '../../base/concurrency.js';
import { makeRef } from '../ref.js';
import { CAPI_CLUSTER, SECRET, atVersion } from '../../kube/resources.js';
import { type ObjectMeta, type Secret, kubeconfigInSecret } from './objects.js';
import { HubProvider } from './hub-provider.js';
import type { ClusterRef } from '../types.js';

/**
 * multicluster-runtime's cluster-api provider: every Cluster API `Cluster` on the hub is a cluster named
 * `<namespace>/<name>`, reached with the kubeconfig in Secret `<name>-kubeconfig`, key `value`.
 */
export const CAPI_GROUP = CAPI_CLUSTER.group;
export const CAPI_SECRET_TYPE = 'cluster.x-k8s.io/secret';
export const CAPI_KUBECONFIG_KEY = 'value';
const PREFERRED = ['v1beta2', 'v1beta1'];

export interface CapiCluster {
  apiVersion?: string;
  metadata: ObjectMeta;
  status?: {
    phase?: string;
    initialization?: { controlPlaneInitialized?: boolean };
  };
}

/** v1beta2 when the hub serves it, else v1beta1 (older Cluster API); a forced version must be served. */
export function chooseCapiVersion(served: string[], forced?: string): string {
  if (served.length === 0) {
    throw new FleetError('api-missing', `the hub serves no ${CAPI_GROUP} API (is Cluster API installed?)`);
  }
  if (forced) {
    if (!served.includes(forced))
      throw new FleetError(
        'api-missing',
        `the hub does not serve ${CAPI_GROUP}/${forced} (it serves ${served.join(', ')})`,
      );
    return forced;
  }
  const version = PREFERRED.find((v) => served.includes(v));
  if (!version)
    throw new FleetError(
      'api-missing',
      `the hub serves ${CAPI_GROUP} ${served.join(', ')}; fleet reads v1beta2 or v1beta1`,
    );
  return version;
}

/** Upstream's readiness: v1beta2 `status.initialization.controlPlaneInitialized`, v1beta1 `status.phase == Provisioned`. */
export function capiNotReady(cluster: CapiCluster, version: string): string | undefined {
  if (cluster.metadata.deletionTimestamp) return 'the Cluster is being deleted';
  const phase = cluster.status?.phase;
  if (version === 'v1beta1') {
    if (phase === 'Provisioned') return undefined;
    return phase ? `phase is ${phase}, not Provisioned` : 'status.phase is not set (not Provisioned)';
  }
  if (cluster.status?.initialization?.controlPlaneInitialized === true) return undefined;
  return `control plane not initialized (status.initialization.controlPlaneInitialized is not true${phase ? `; phase ${phase}` : ''})`;
}

export const kubeconfigSecretName = (cluster: string) => `${cluster}-kubeconfig`;

export function refFromCapiCluster(
  cluster: CapiCluster,
  secret: Secret | undefined,
  o: { provider: string; version: string; hub?: string },
): ClusterRef {
  const { name, namespace } = cluster.metadata;
  const secretName = kubeconfigSecretName(name);
  const found: ResolvedContext | Error = secret
    ? kubeconfigInSecret(secret, CAPI_KUBECONFIG_KEY, o.provider)
    : new Error(`kubeconfig Secret ${namespace}/${secretName} not found`);
  const notReady = capiNotReady(cluster, o.version);
  return makeRef(
    {
      name: `${namespace}/${name}`,
      provider: o.provider,
      // The bare Cluster name works wherever it is unambiguous.
      aliases: [name],
      labels: cluster.metadata.labels ?? {},
      source: {
        kind: 'cluster-api',
        namespace,
        name,
        hub: o.hub,
        apiVersion: `${CAPI_GROUP}/${o.version}`,
        secret: `${namespace}/${secretName}`,
        key: CAPI_KUBECONFIG_KEY,
        context: found instanceof Error ? undefined : found.contextName,
      },
    },
    // An unready Cluster's missing Secret is expected: say what upstream waits for, not what follows from it.
    found instanceof Error && notReady ? new Error(`${notReady}; ${found.message}`) : found,
    notReady,
  );
}

export class ClusterApiProvider extends HubProvider<ClusterApiProviderConfig> {
  protected async build(): Promise<ClusterRef[]> {
    const hubName = await this.hub.name();
    const served = await this.hub.groupVersions(CAPI_GROUP);
    let version: string;
    try {
      version = chooseCapiVersion(served, this.config.apiVersion);
    } catch (error) {
      throw new FleetError(
        (error as FleetError).kind,
        `${this.describe()}: hub ${hubName}: ${(error as Error).message}`,
      );
    }
    const ns = this.config.namespace;
    const clusters = await this.hub.listObjects<CapiCluster>(
      atVersion(CAPI_CLUSTER, version),
      `list ${CAPI_GROUP}/${version} Clusters`,
      { namespace: ns },
    );
    const secrets = await this.kubeconfigSecrets(clusters);
    return clusters
      .map((c) =>
        refFromCapiCluster(c, secrets.get(`${c.metadata.namespace}/${kubeconfigSecretName(c.metadata.name)}`), {
          provider: this.name,
          version,
          hub: hubName,
        }),
      )
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Upstream reads `<name>-kubeconfig` by name. One list of Cluster API Secrets finds most of them in a single request;
   * any not found that way (another type, or no permission to list) is read by name, as upstream does.
   */
  private async kubeconfigSecrets(clusters: CapiCluster[]): Promise<Map<string, Secret>> {
    const byKey = new Map<string, Secret>();
    if (clusters.length === 0) return byKey;
    const wanted = new Set(clusters.map((c) => `${c.metadata.namespace}/${kubeconfigSecretName(c.metadata.name)}`));
    try {
      const listed = await this.hub.listObjects<Secret>(SECRET, 'list Cluster API Secrets', {
        namespace: this.config.namespace,
        fieldSelector: `type=${CAPI_SECRET_TYPE}`,
      });
      for (const s of listed) {
        const key = `${s.metadata.namespace}/${s.metadata.name}`;
        if (wanted.has(key)) byKey.set(key, s);
      }
    } catch (error) {
      if (!(error instanceof FleetError && error.kind === 'forbidden')) throw error;
    }
    const missing = [...wanted].filter((k) => !byKey.has(k));
    await mapLimit(missing, 8, async (key) => {
      const [namespace, name] = key.split('/');
      const secret = await this.hub.getObject<Secret>(SECRET, name, namespace, `get Secret ${key}`);
      if (secret) byKey.set(key, secret);
    });
    return byKey;
  }
}
