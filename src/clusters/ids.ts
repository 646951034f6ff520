import type { V1Namespace } from '@kubernetes/client-node';
import { FleetError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { resourcePath } from '../kube/paths.js';
import { CLUSTER_PROPERTY, NAMESPACE, type Resource, atVersion } from '../kube/resources.js';
import { getObject } from '../kube/typed.js';
import { CLUSTER_ID_PROPERTY } from '../providers/hub/cluster-inventory.js';

/**
 * A cluster's id as KEP-2149 defines it: the ClusterProperty `cluster.clusterset.k8s.io` (about.k8s.io, served as
 * v1beta1 and v1alpha1) on the cluster itself; failing that, the kube-system namespace UID, which the KEP recommends
 * as the value. Missing APIs and forbidden reads only mean "unknown"; a cluster that cannot be reached or rejects the
 * credential is an error.
 */
export interface ClusterIdentity {
  clusterId?: string;
  clusterIdSource?: 'ClusterProperty' | 'kube-system';
}

const ABOUT_VERSIONS = ['v1beta1', 'v1alpha1'];

async function tryGet<T>(client: KubeClient, r: Resource, name: string): Promise<T | undefined> {
  try {
    return await getObject<T>(client, r, name, { what: `GET ${resourcePath(r, { name })}` });
  } catch (error) {
    if (error instanceof FleetError && error.kind === 'forbidden') return undefined;
    throw error;
  }
}

export async function readClusterId(client: KubeClient): Promise<ClusterIdentity> {
  for (const version of ABOUT_VERSIONS) {
    const prop = await tryGet<{ spec?: { value?: string } }>(
      client,
      atVersion(CLUSTER_PROPERTY, version),
      CLUSTER_ID_PROPERTY,
    );
    if (prop?.spec?.value) return { clusterId: prop.spec.value, clusterIdSource: 'ClusterProperty' };
    if (prop) break;
  }
  const ns = await tryGet<Wire<V1Namespace>>(client, NAMESPACE, 'kube-system');
  return ns?.metadata?.uid ? { clusterId: ns.metadata.uid, clusterIdSource: 'kube-system' } : {};
}
