import { ConfigError } from '../../base/errors.js';
import type { Secret } from '../../providers/hub/objects.js';
import { ANNOTATIONS, MANAGED_BY_LABELS } from '../labels.js';
import { argocd } from './argocd.js';
import { clusterApi } from './cluster-api.js';
import { clusterInventory } from './cluster-inventory.js';
import type { Codec, Contents, SecretDestination as Destination, SecretObject } from './codec.js';
import { flux } from './flux.js';
import { kubeconfigSecretreader } from './kubeconfig-secretreader.js';
import { multiclusterRuntime } from './multicluster-runtime.js';

export type { Codec, Held } from './codec.js';

/**
 * Every consumer Secret format, one codec each, keyed by its name. The table's keys are the formats (`--format`'s
 * choices, in this order), and a key whose codec names another format, or a codec missing a part, is a compile error.
 * Detection tries the codecs in this order. The names, labels and keys come from the providers fleet already reads
 * (src/providers/hub/), so a Secret fleet writes is read back by the same code a controller's provider mirrors.
 */
const table = <T extends { [F in keyof T]: Codec<F & string> }>(t: T) => t;
export const CODECS = table({
  'multicluster-runtime': multiclusterRuntime,
  'cluster-api': clusterApi,
  'cluster-inventory': clusterInventory,
  'kubeconfig-secretreader': kubeconfigSecretreader,
  argocd,
  flux,
});

export type SecretFormat = keyof typeof CODECS;
export const FORMATS = Object.keys(CODECS) as SecretFormat[];
export type SecretDestination = Destination<SecretFormat>;

export const isFormat = (value: string): value is SecretFormat => Object.hasOwn(CODECS, value);

/**
 * A format fleet does not know (a record written by a newer fleet, a hand edit): rotate and revoke refuse the whole run
 * for it before anything is touched, as for a Secret fleet did not write, rather than fail it as one credential.
 */
export class UnknownFormatError extends ConfigError {
  constructor(where: string, format: string) {
    super(`${where}: unknown consumer Secret format "${format}" (fleet knows ${FORMATS.join(', ')})`);
    this.name = 'UnknownFormatError';
  }
}

/** The codec of a format; a name fleet does not know is refused, naming it and the known ones. */
export function codecOf(format: string, where: string): Codec<SecretFormat> {
  if (!isFormat(format)) throw new UnknownFormatError(where, format);
  return CODECS[format];
}

/**
 * Which format a hub Secret is in: fleet's own annotation first, else the first codec whose mark it carries; undefined
 * when it is no consumer Secret at all (fleet's anchors and legacy token Secrets carry only the managed-by label). An
 * annotation naming a format fleet does not know is `unknown`, with the reason to report.
 */
export function detectFormat(s: Secret): { format: SecretFormat } | { format: 'unknown'; reason: string } | undefined {
  const annotated = s.metadata.annotations?.[ANNOTATIONS.format];
  if (annotated !== undefined) {
    return isFormat(annotated)
      ? { format: annotated }
      : {
          format: 'unknown',
          reason: `${ANNOTATIONS.format}: "${annotated}" is not a format fleet knows (${FORMATS.join(', ')})`,
        };
  }
  const found = FORMATS.find((f) => CODECS[f].detect(s));
  return found ? { format: found } : undefined;
}

/** The list queries that find every marked consumer Secret on a hub (formats found by references have none). */
export const FORMAT_QUERIES: Array<Record<string, string>> = FORMATS.flatMap((f) => {
  const find = CODECS[f].find;
  return find === 'references' ? [] : [find];
});

export const secretName = (d: SecretDestination) => (CODECS[d.format] as Codec<SecretFormat>).secretName(d);

export function checkDestination(d: SecretDestination): void {
  (CODECS[d.format] as Codec<SecretFormat>).check(d);
}

/** The consumer Secret of a destination: the codec's labels, type and data, fleet's managed-by label and the annotations. */
export function destinationSecret(
  d: SecretDestination,
  w: Contents & { annotations: Record<string, string> },
): SecretObject {
  const codec = CODECS[d.format] as Codec<SecretFormat>;
  const { labels, type, data } = codec.encode(d, w);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: codec.secretName(d),
      namespace: d.namespace,
      labels: { ...MANAGED_BY_LABELS, ...labels },
      annotations: w.annotations,
    },
    type,
    data,
  };
}
