import type {CheckStatus} from '../base/checks.js'
import type {CredentialItem, CredentialList} from '../creds/list.js'
import type {VerifyReport} from '../verify/report.js'
import {type MetricFamily, type Sample, unixSeconds} from './prometheus.js'

/**
 * The metrics of `creds list -o prometheus` and `clusters verify -o prometheus` (documented in docs/creds.md and
 * docs/verify.md). Labels come only from fields that name things (clusters, files, contexts, Secrets, checks), never
 * from a credential's content; identity is the subject a credential names (a user or ServiceAccount name).
 */

/** Labels that tell one credential from another: where it is, and the cluster it is for. */
function credentialLabels(i: CredentialItem): Record<string, string> {
  const s = i.source
  const where: Record<string, string> = s.kind === 'kubeconfig' ? {path: s.path, context: s.context, user: s.user ?? ''} : {hub: s.hub, namespace: s.namespace, name: s.name, key: (s.kind === 'secret' ? s.key : undefined) ?? ''}
  return {location: i.location, source: s.kind, cluster: i.cluster ?? '', ...where}
}

const bool = (b: boolean | undefined) => (b ? 1 : 0)

export function credentialMetrics(list: CredentialList): MetricFamily[] {
  const each = (value: (i: CredentialItem) => number | undefined, extra?: (i: CredentialItem) => Record<string, string>): Sample[] =>
    list.items.flatMap((i) => {
      const v = value(i)
      return v === undefined ? [] : [{labels: {...credentialLabels(i), ...extra?.(i)}, value: v}]
    })
  return [
    {
      name: 'fleet_credential_info',
      help: 'A credential fleet can see (always 1), with its format, method, identity and whether fleet manages it.',
      samples: each(() => 1, (i) => ({format: i.format, method: i.method, identity: i.identity ?? '', managed_by_fleet: String(i.managedByFleet)})),
    },
    {name: 'fleet_credential_expiry_timestamp_seconds', help: 'When the credential expires (JWT exp, certificate NotAfter), in Unix seconds.', samples: each((i) => unixSeconds(i.expires))},
    {name: 'fleet_credential_issued_timestamp_seconds', help: 'When the credential was issued (JWT iat, certificate NotBefore), in Unix seconds.', samples: each((i) => unixSeconds(i.issued))},
    {
      name: 'fleet_credential_expiring',
      help: 'Whether the credential expires within --expiring-within (1) or not (0); only with --expiring-within.',
      samples: list.expiringWithin === undefined ? [] : each((i) => bool(i.expiring), () => ({within: list.expiringWithin!})),
    },
    {name: 'fleet_credential_live_ok', help: 'Whether the credential still authenticates (1) or not (0); only with --live.', samples: each((i) => (i.live ? bool(i.live.ok) : undefined))},
    {name: 'fleet_credential_problems', help: 'How many problems fleet found in the credential (unreadable files, bad certificates, ...).', samples: each((i) => i.problems.length)},
    {
      name: 'fleet_credential_hub_error',
      help: 'A hub whose Secrets could not be read (always 1): the listing is incomplete.',
      samples: list.errors.map((e) => ({labels: {hub: e.hub, kind: e.error.kind}, value: 1})),
    },
  ]
}

const STATUSES: CheckStatus[] = ['pass', 'fail', 'warn', 'skip']

export function verifyMetrics(report: VerifyReport): MetricFamily[] {
  const items = report.items
  return [
    {
      name: 'fleet_verify_check',
      help: 'The outcome of one check on one cluster: 1 for its status, 0 for the other statuses.',
      samples: items.flatMap((i) =>
        (i.checks ?? []).flatMap((c) => STATUSES.map((status) => ({labels: {cluster: i.cluster, check: c.name, status}, value: bool(c.status === status)}))),
      ),
    },
    {name: 'fleet_verify_cluster_ok', help: 'Whether the cluster passed (1: no check failed; with --strict none warned either) or not (0).', samples: items.map((i) => ({labels: {cluster: i.cluster}, value: bool(i.ok)}))},
    {
      name: 'fleet_verify_cluster_error',
      help: 'A cluster whose verification ended early (always 1), with the kind of error.',
      samples: items.flatMap((i) => (i.error ? [{labels: {cluster: i.cluster, kind: i.error.kind}, value: 1}] : [])),
    },
    {
      name: 'fleet_verify_credential_expiry_timestamp_seconds',
      help: 'When the credential fleet used for the cluster expires (certificate, JWT exp, exec plugin expirationTimestamp), in Unix seconds.',
      samples: items.flatMap((i) => {
        const at = unixSeconds(i.expires)
        return at === undefined ? [] : [{labels: {cluster: i.cluster}, value: at}]
      }),
    },
    {
      name: 'fleet_verify_cluster_duration_seconds',
      help: 'How long verifying the cluster took, in seconds.',
      samples: items.flatMap((i) => (i.durationMs === undefined ? [] : [{labels: {cluster: i.cluster}, value: i.durationMs / 1000}])),
    },
    {name: 'fleet_verify_ok', help: 'Whether every selected cluster passed (1) or not (0).', samples: [{labels: {}, value: bool(report.ok)}]},
    {name: 'fleet_verify_clusters', help: 'How many clusters were verified.', samples: [{labels: {}, value: report.summary.clusters}]},
  ]
}
