import type { CheckStatus } from '../base/checks.js';
import type { CredentialItem, CredentialList } from '../creds/list.js';
import type { RotatedCredential, RotationReport } from '../creds/rotate.js';
import type { VerifyReport } from '../verify/report.js';
import { type MetricFamily, type Sample, unixSeconds } from './prometheus.js';

/**
 * The metrics of `creds list -o prometheus` and `clusters verify -o prometheus` (documented in docs/creds.md and
 * docs/verify.md). Labels come only from fields that name things (clusters, files, contexts, Secrets, checks), never
 * from a credential's content; identity is the subject a credential names (a user or ServiceAccount name).
 */

/** Labels that tell one credential from another: where it is, and the cluster it is for. */
function credentialLabels(i: CredentialItem): Record<string, string> {
  const s = i.source;
  const where: Record<string, string> =
    s.kind === 'kubeconfig'
      ? { path: s.path, context: s.context, user: s.user ?? '' }
      : s.kind === 'exec'
        ? { provider: s.provider, program: s.program }
        : { hub: s.hub, namespace: s.namespace, name: s.name, key: (s.kind === 'secret' ? s.key : undefined) ?? '' };
  return { location: i.location, source: s.kind, cluster: i.cluster ?? '', ...where };
}

const bool = (b: boolean | undefined) => (b ? 1 : 0);

export function credentialMetrics(list: CredentialList): MetricFamily[] {
  const each = (
    value: (i: CredentialItem) => number | undefined,
    extra?: (i: CredentialItem) => Record<string, string>,
  ): Sample[] =>
    list.items.flatMap((i) => {
      const v = value(i);
      return v === undefined ? [] : [{ labels: { ...credentialLabels(i), ...extra?.(i) }, value: v }];
    });
  return [
    {
      name: 'fleet_credential_info',
      help: 'A credential fleet can see (always 1), with its format, method, identity and whether fleet manages it.',
      samples: each(
        () => 1,
        (i) => ({
          format: i.format,
          method: i.method,
          identity: i.identity ?? '',
          managed_by_fleet: String(i.managedByFleet),
        }),
      ),
    },
    {
      name: 'fleet_credential_expiry_timestamp_seconds',
      help: 'When the credential expires (JWT exp, certificate NotAfter), in Unix seconds.',
      samples: each((i) => unixSeconds(i.expires)),
    },
    {
      name: 'fleet_credential_issued_timestamp_seconds',
      help: 'When the credential was issued (JWT iat, certificate NotBefore), in Unix seconds.',
      samples: each((i) => unixSeconds(i.issued)),
    },
    {
      name: 'fleet_credential_expiring',
      help: 'Whether the credential expires within --expiring-within (1) or not (0); only with --expiring-within.',
      samples:
        list.expiringWithin === undefined
          ? []
          : each(
              (i) => bool(i.expiring),
              () => ({ within: list.expiringWithin! }),
            ),
    },
    {
      name: 'fleet_credential_live_ok',
      help: 'Whether the credential still authenticates (1) or not (0); only with --live.',
      samples: each((i) => (i.live ? bool(i.live.ok) : undefined)),
    },
    {
      name: 'fleet_credential_problems',
      help: 'How many problems fleet found in the credential (unreadable files, bad certificates, ...).',
      samples: each((i) => i.problems.length),
    },
    {
      name: 'fleet_credential_hub_error',
      help: 'A hub whose Secrets could not be read (always 1): the listing is incomplete.',
      samples: list.errors.map((e) => ({ labels: { hub: e.hub, kind: e.error.kind }, value: 1 })),
    },
  ];
}

const STATUSES: CheckStatus[] = ['pass', 'fail', 'warn', 'skip'];

export function verifyMetrics(report: VerifyReport): MetricFamily[] {
  const items = report.items;
  return [
    {
      name: 'fleet_verify_check',
      help: 'The outcome of one check on one cluster: 1 for its status, 0 for the other statuses.',
      samples: items.flatMap((i) =>
        (i.checks ?? []).flatMap((c) =>
          STATUSES.map((status) => ({
            labels: { cluster: i.cluster, check: c.name, status },
            value: bool(c.status === status),
          })),
        ),
      ),
    },
    {
      name: 'fleet_verify_cluster_ok',
      help: 'Whether the cluster passed (1: no check failed; with --strict none warned either) or not (0).',
      samples: items.map((i) => ({ labels: { cluster: i.cluster }, value: bool(i.ok) })),
    },
    {
      name: 'fleet_verify_cluster_error',
      help: 'A cluster whose verification ended early (always 1), with the kind of error.',
      samples: items.flatMap((i) =>
        i.error ? [{ labels: { cluster: i.cluster, kind: i.error.kind }, value: 1 }] : [],
      ),
    },
    {
      name: 'fleet_verify_credential_expiry_timestamp_seconds',
      help: 'When the credential fleet used for the cluster expires (certificate, JWT exp, exec plugin expirationTimestamp), in Unix seconds.',
      samples: items.flatMap((i) => {
        const at = unixSeconds(i.expires);
        return at === undefined ? [] : [{ labels: { cluster: i.cluster }, value: at }];
      }),
    },
    {
      name: 'fleet_verify_cluster_duration_seconds',
      help: 'How long verifying the cluster took, in seconds.',
      samples: items.flatMap((i) =>
        i.durationMs === undefined ? [] : [{ labels: { cluster: i.cluster }, value: i.durationMs / 1000 }],
      ),
    },
    {
      name: 'fleet_verify_ok',
      help: 'Whether every selected cluster passed (1) or not (0).',
      samples: [{ labels: {}, value: bool(report.ok) }],
    },
    {
      name: 'fleet_verify_clusters',
      help: 'How many clusters were verified.',
      samples: [{ labels: {}, value: report.summary.clusters }],
    },
  ];
}

const ROTATION_STATUSES: Array<RotatedCredential['status']> = ['rotated', 'failed', 'skipped', 'planned'];
const PHASES = ['unchanged', 'claimed', 'replaced', 'unknown'] as const;

/** Which credential: its hub Secret, or its file. */
function rotationLabels(i: RotatedCredential): Record<string, string> {
  return i.secret
    ? { hub: i.secret.hub, namespace: i.secret.namespace, name: i.secret.name }
    : { file: i.file?.path ?? '' };
}

/**
 * `creds rotate -o prometheus` (docs/rotation.md): each credential's outcome, and for a failed one its error kind, the
 * step it stopped at and what its store holds (so an alert can tell "the old credential is still in place" from "the
 * new one is written, the old anchor not yet deleted"); the Leases the run removed or could not.
 */
export function rotationMetrics(report: RotationReport): MetricFamily[] {
  const items = report.items;
  const sweep = report.leases;
  return [
    {
      name: 'fleet_rotation_status',
      help: "The outcome of one credential's rotation: 1 for its status, 0 for the other statuses.",
      samples: items.flatMap((i) =>
        ROTATION_STATUSES.map((status) => ({
          labels: { ...rotationLabels(i), status },
          value: bool(i.status === status),
        })),
      ),
    },
    {
      name: 'fleet_rotation_error',
      help: 'A rotation that failed (always 1), with the kind of error, the step it stopped at and where that step ran.',
      samples: items.flatMap((i) =>
        i.status === 'failed'
          ? [
              {
                labels: {
                  ...rotationLabels(i),
                  kind: i.error?.kind ?? 'server',
                  step: i.unfinished?.step ?? '',
                  on: i.unfinished?.on ?? '',
                },
                value: 1,
              },
            ]
          : [],
      ),
    },
    {
      name: 'fleet_rotation_unfinished_phase',
      help: "A failed rotation: what its store holds now, 1 for that phase (unchanged: the old credential; claimed: the old one and this run's claim; replaced: the new one, the old anchor left for the next run; unknown: a write to it got no answer).",
      samples: items.flatMap((i) =>
        i.unfinished
          ? PHASES.map((phase) => ({
              labels: { ...rotationLabels(i), phase },
              value: bool(i.unfinished!.phase === phase),
            }))
          : [],
      ),
    },
    {
      name: 'fleet_rotation_duration_seconds',
      help: "How long the credential's rotation took, in seconds.",
      samples: items.map((i) => ({ labels: rotationLabels(i), value: i.durationMs / 1000 })),
    },
    {
      name: 'fleet_rotation_leases_removed',
      help: 'Rotation Leases that stopped runs left on the hub, removed by this run.',
      samples: sweep ? [{ labels: { hub: report.hub }, value: sweep.removed.length }] : [],
    },
    {
      name: 'fleet_rotation_leases_left',
      help: "Rotation Leases over this run's selection still held by another, live run.",
      samples: sweep ? [{ labels: { hub: report.hub }, value: sweep.left.length }] : [],
    },
    {
      name: 'fleet_rotation_leases_error',
      help: 'The Leases stopped runs left could not be looked for (always 1), with the kind of error.',
      samples: sweep?.error ? [{ labels: { hub: report.hub, kind: sweep.error.kind }, value: 1 }] : [],
    },
  ];
}
