import { FleetError } from '../base/errors.js';
import { customResource } from '../kube/resources.js';
import type { Hub } from '../providers/hub/client.js';
import type { Secret } from '../providers/hub/objects.js';

/**
 * The Flux objects that can deploy to another cluster with a kubeconfig Secret: `spec.kubeConfig.secretRef` of
 * Kustomizations and HelmReleases ({name, key?}, the Secret in the object's own namespace). A Secret Flux reads carries
 * no label of its own, so following these references is the only way to find one fleet did not write.
 */
const FLUX_KINDS = [
  { kind: 'Kustomization', group: 'kustomize.toolkit.fluxcd.io', plural: 'kustomizations' },
  { kind: 'HelmRelease', group: 'helm.toolkit.fluxcd.io', plural: 'helmreleases' },
] as const;

export interface FluxSecretRef {
  namespace: string;
  name: string;
  /** The key named in the reference; without one Flux reads `value`, else `value.yaml`. */
  key?: string;
  /** The objects that reference it, e.g. `Kustomization flux-system/apps`. */
  referencedBy: string[];
}

interface FluxObject {
  metadata: { namespace?: string; name: string };
  spec?: { kubeConfig?: { secretRef?: { name?: unknown; key?: unknown } } };
}

/** Every Secret the hub's Flux objects point at, once per Secret and key. Flux APIs the hub does not serve are skipped. */
export async function fluxSecretRefs(hub: Hub, namespace?: string): Promise<FluxSecretRef[]> {
  const refs = new Map<string, FluxSecretRef>();
  for (const { kind, group, plural } of FLUX_KINDS) {
    let objects: FluxObject[];
    try {
      // The preferred version first (discovery lists it first): kustomize v1, helm v2 on current Flux, older betas before.
      const [version] = await hub.groupVersions(group);
      if (!version) continue;
      objects = await hub.listObjects<FluxObject>(customResource(group, version, plural, kind, true), `list ${kind}s`, {
        namespace,
      });
    } catch (error) {
      // No such API, or no permission to read it: nothing to follow (as for ClusterProfiles).
      if (
        error instanceof FleetError &&
        (error.kind === 'api-missing' || error.kind === 'forbidden' || error.kind === 'not-found')
      )
        continue;
      throw error;
    }
    for (const o of objects) {
      const ref = o.spec?.kubeConfig?.secretRef;
      if (typeof ref?.name !== 'string' || !ref.name) continue;
      const namespace = o.metadata.namespace ?? 'default';
      const key = typeof ref.key === 'string' && ref.key ? ref.key : undefined;
      const id = `${namespace}/${ref.name}/${key ?? ''}`;
      const entry = refs.get(id) ?? { namespace, name: ref.name, ...(key ? { key } : {}), referencedBy: [] };
      entry.referencedBy.push(`${kind} ${namespace}/${o.metadata.name}`);
      refs.set(id, entry);
    }
  }
  return [...refs.values()];
}

/** The key Flux reads from the Secret: the one named, else `value`, else `value.yaml` (Flux's own fallback order). */
export function fluxKey(ref: FluxSecretRef, secret: Secret): string {
  if (ref.key) return ref.key;
  const data = secret.data ?? {};
  return 'value' in data || !('value.yaml' in data) ? 'value' : 'value.yaml';
}
