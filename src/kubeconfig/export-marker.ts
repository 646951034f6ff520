import type { NamedExtension } from './types.js';

/**
 * The kubeconfig extension fleet puts on every cluster, context and user `fleet kubeconfig export` writes. Merging
 * (`--merge-into`) and pruning key on exactly this name: an entry without it is the user's and is never changed. Its
 * value names the fleet cluster the entry stands for, so a later export replaces the same entries.
 */
export const FLEET_EXPORT_EXTENSION = 'fleet.dev/export';

/** The extension's value: no secret, only which cluster (as `fleet kubeconfig credential --cluster` finds it). */
export interface ExportMarker {
  /** The fleet cluster id the export selected (`<provider>#<name>` when several providers are configured). */
  cluster: string;
  /** The provider that lists it. */
  provider?: string;
}

export function exportMarkerExtension(marker: ExportMarker): NamedExtension {
  return { name: FLEET_EXPORT_EXTENSION, extension: marker };
}

/** The marker of an entry fleet exported, or undefined for anyone else's entry. */
export function exportMarkerOf(entry: { extensions?: NamedExtension[] | null } | undefined): ExportMarker | undefined {
  const ext = entry?.extensions?.find((e) => e?.name === FLEET_EXPORT_EXTENSION)?.extension as
    Partial<ExportMarker> | undefined;
  return ext && typeof ext === 'object' && typeof ext.cluster === 'string'
    ? { cluster: ext.cluster, ...(typeof ext.provider === 'string' ? { provider: ext.provider } : {}) }
    : undefined;
}
