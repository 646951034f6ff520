import { Counter, Gauge, Registry, type RegistryContentType } from 'prom-client';

import type { CheckStatus } from '../base/checks.js';
import type { CredentialItem } from '../creds/list.js';
import { scrub } from '../kubeconfig/redact.js';
import { type Collection, clusterUp } from './collect.js';

/**
 * The metrics of `fleet exporter` (every name and label in docs/exporter.md), written with prom-client: it escapes label
 * values as the text formats define (backslash, double quote, line feed), so a Secret's name, whatever its author
 * wrote, is a value and never a second series or a forged line; the text still goes through the scrubber, as all of
 * fleet's output does. Labels come from fields that name things (clusters, providers, Secrets, files, checks), never
 * from a credential's content.
 *
 * The exposition is rendered once per collection, in both formats, and a scrape is handed the stored text: it never
 * waits for a cluster, and it costs what writing a string costs whatever the fleet's size.
 */

const CREDENTIAL_LABELS = [
  'cluster',
  'location',
  'source',
  'namespace',
  'name',
  'file',
  'context',
  'format',
  'method',
  'management',
  'identity_kind',
] as const;

export const PROMETHEUS_TEXT = Registry.PROMETHEUS_CONTENT_TYPE;
export const OPENMETRICS_TEXT = Registry.OPENMETRICS_CONTENT_TYPE;

export interface Exposition {
  prometheus: string;
  openMetrics: string;
}

export interface MetricsOptions {
  /** fleet's version, for fleet_exporter_build_info. */
  version: string;
  /** Add a credential_id label to the credential series (one series per token: off by default, for cardinality). */
  credentialIdLabel?: boolean;
}

/** managed (fleet made it), adopted (creds adopt took it over) or unmanaged (someone else's). */
export function management(i: Pick<CredentialItem, 'managedByFleet' | 'adopted'>): string {
  return i.adopted ? 'adopted' : i.managedByFleet ? 'managed' : 'unmanaged';
}

/** Whose identity the credential carries: a ServiceAccount's, a user's, or none fleet could read. */
export function identityKind(identity: string | undefined): string {
  if (!identity) return 'unknown';
  return identity.startsWith('system:serviceaccount:') ? 'serviceaccount' : 'user';
}

function credentialLabels(i: CredentialItem, withId: boolean): Record<string, string> {
  const s = i.source;
  return {
    cluster: i.cluster ?? '',
    location: i.location,
    source: s.kind,
    namespace: s.kind === 'secret' || s.kind === 'cluster-profile' ? s.namespace : '',
    name: s.kind === 'secret' || s.kind === 'cluster-profile' ? s.name : '',
    file: s.kind === 'kubeconfig' ? s.path : '',
    context: s.kind === 'kubeconfig' ? s.context : '',
    format: i.format,
    method: i.method,
    management: management(i),
    identity_kind: identityKind(i.identity),
    ...(withId ? { credential_id: i.credentialId ?? '' } : {}),
  };
}

const seconds = (iso: string | undefined): number | undefined => {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms / 1000;
};

/**
 * A value the member's API server chose (its /version gitVersion) is cut to this many characters: escaped or not, a
 * server answering with megabytes there would otherwise be served, and stored by Prometheus, at every scrape.
 * Everything else in a label is bounded by Kubernetes (names) or by the operator's own configuration.
 */
const MAX_SERVER_VALUE = 128;
const capped = (v: string) => (v.length > MAX_SERVER_VALUE ? `${v.slice(0, MAX_SERVER_VALUE)}...` : v);

/** 1 when the check passed, 0 when it failed or warned; a skipped check has no sample (it said nothing). */
const CHECK_VALUE: Record<CheckStatus, number | undefined> = { pass: 1, fail: 0, warn: 0, skip: undefined };

export class ExporterMetrics {
  private readonly registry = new Registry<RegistryContentType>();
  private readonly counters: Array<{ metric: Counter; name: string }> = [];
  private text?: Exposition;

  private gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  private counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    const metric = new Counter({ name, help, labelNames, registers: [this.registry] });
    this.counters.push({ metric, name });
    return metric;
  }

  private readonly credentialLabelNames: readonly string[];
  private readonly expiration: Gauge;
  private readonly issued: Gauge;
  private readonly lifetime: Gauge;
  private readonly valid: Gauge;
  private readonly credentialProblems: Gauge;
  private readonly rotationStarted: Gauge;
  private readonly clusterUp: Gauge;
  private readonly probeDuration: Gauge;
  private readonly clusterInfo: Gauge;
  private readonly checkOk: Gauge;
  private readonly clusterOk: Gauge;
  private readonly sourceUp: Gauge;
  private readonly sourceErrors: Counter;
  private readonly collections: Counter;
  private readonly hubLists: Counter;
  private readonly hubEvents: Counter;
  /** The cache's cumulative counts as last published: a counter goes up by the difference. */
  private readonly hubPublished = new Map<string, number>();
  private readonly collectionDuration: Gauge;
  private readonly lastSuccess: Gauge;
  private readonly lastAttempt: Gauge;

  constructor(private readonly options: MetricsOptions) {
    const c = (this.credentialLabelNames = [
      ...CREDENTIAL_LABELS,
      ...(options.credentialIdLabel ? ['credential_id'] : []),
    ]);
    this.expiration = this.gauge(
      'fleet_credential_expiration_timestamp_seconds',
      'When the credential expires (JWT exp, certificate NotAfter), in Unix seconds; absent for one that never expires.',
      c,
    );
    this.issued = this.gauge(
      'fleet_credential_issued_timestamp_seconds',
      'When the credential was issued (JWT iat, certificate NotBefore), in Unix seconds.',
      c,
    );
    this.lifetime = this.gauge(
      'fleet_credential_lifetime_seconds',
      'How long the credential was issued for (expiration minus issue time), in seconds: the base of "fraction of lifetime left".',
      c,
    );
    this.valid = this.gauge(
      'fleet_credential_valid',
      'Whether the credential authenticates now (1: a SelfSubjectReview with it answered; 0: the server refused it as unauthenticated); absent when it could not be asked.',
      c,
    );
    this.credentialProblems = this.gauge(
      'fleet_credential_problems',
      'How many problems fleet found in the credential (an unreadable file, a bad certificate, a forged credential-id, ...).',
      c,
    );
    this.rotationStarted = this.gauge(
      'fleet_credential_rotation_started_timestamp_seconds',
      'When the unfinished rotation recorded on the Secret or file was claimed, in Unix seconds, with its phase (claimed: the credential is unchanged; replaced: only the old credential is left to revoke); absent when no rotation is unfinished.',
      [...c, 'phase'],
    );
    this.clusterUp = this.gauge(
      'fleet_cluster_up',
      "Whether the cluster's API server answered ready (/readyz) with the credential fleet uses for it (1) or not (0).",
      ['cluster', 'provider'],
    );
    this.probeDuration = this.gauge(
      'fleet_cluster_probe_duration_seconds',
      "How long the cluster's GET /version took, in seconds.",
      ['cluster', 'provider'],
    );
    this.clusterInfo = this.gauge(
      'fleet_cluster_info',
      'A cluster the providers list (always 1), with its server and the version it reported.',
      ['cluster', 'provider', 'server', 'version'],
    );
    this.checkOk = this.gauge(
      'fleet_verify_check_ok',
      'The outcome of one clusters verify check on one cluster: 1 passed, 0 failed or warned; absent when it was skipped.',
      ['cluster', 'check'],
    );
    this.clusterOk = this.gauge(
      'fleet_verify_cluster_ok',
      'Whether no clusters verify check failed on the cluster (1) or one did (0).',
      ['cluster'],
    );
    this.sourceUp = this.gauge(
      'fleet_source_up',
      'Whether a source could be read in the last collection: a provider listed its clusters, a hub its Secrets (1), or not (0).',
      ['kind', 'source'],
    );
    this.sourceErrors = this.counter(
      'fleet_source_errors_total',
      'Collections in which the source could not be read.',
      ['kind', 'source', 'error'],
    );
    this.hubLists = this.counter(
      'fleet_exporter_hub_lists_total',
      'Full lists of a hub resource (Secrets, ClusterProfiles): the first, and each one after the server said the kept resourceVersion was too old (410).',
      ['hub', 'resource'],
    );
    this.hubEvents = this.counter(
      'fleet_exporter_hub_watch_events_total',
      'Watch events applied to the kept hub objects between lists, by type (ADDED, MODIFIED, DELETED, BOOKMARK).',
      ['hub', 'resource', 'type'],
    );
    this.collections = this.counter(
      'fleet_exporter_collections_total',
      'Collections run, by result (success: published; failure: the previous result kept).',
      ['result'],
    );
    this.collectionDuration = this.gauge(
      'fleet_exporter_collection_duration_seconds',
      'How long the last published collection took, in seconds.',
    );
    this.lastSuccess = this.gauge(
      'fleet_exporter_last_success_timestamp_seconds',
      'When the last published collection ended, in Unix seconds.',
    );
    this.lastAttempt = this.gauge(
      'fleet_exporter_last_collection_timestamp_seconds',
      'When the last collection, published or not, ended, in Unix seconds.',
    );
    this.gauge('fleet_exporter_build_info', 'The exporter (always 1), with its version and Node.js version.', [
      'version',
      'node_version',
    ]).set({ version: options.version, node_version: process.version }, 1);
    for (const result of ['success', 'failure']) this.collections.inc({ result }, 0);
  }

  /** A complete collection: its series replace the previous ones. */
  async publish(c: Collection): Promise<void> {
    for (const g of [
      this.expiration,
      this.issued,
      this.lifetime,
      this.valid,
      this.credentialProblems,
      this.rotationStarted,
      this.clusterUp,
      this.probeDuration,
      this.clusterInfo,
      this.checkOk,
      this.clusterOk,
      this.sourceUp,
    ])
      g.reset();
    const withId = this.options.credentialIdLabel === true;
    for (const i of c.credentials.items) {
      const labels = credentialLabels(i, withId);
      const exp = seconds(i.expires);
      const iat = seconds(i.issued);
      if (exp !== undefined) this.expiration.set(labels, exp);
      if (iat !== undefined) this.issued.set(labels, iat);
      if (exp !== undefined && iat !== undefined && exp > iat) this.lifetime.set(labels, exp - iat);
      if (i.live?.ok) this.valid.set(labels, 1);
      else if (i.live?.error?.kind === 'unauthorized') this.valid.set(labels, 0);
      this.credentialProblems.set(labels, i.problems.length);
      // A claim whose time cannot be read still says a rotation is unfinished: 0 (the epoch) is "overdue" to any alert.
      if (i.rotation)
        this.rotationStarted.set({ ...labels, phase: i.rotation.phase }, seconds(i.rotation.started) ?? 0);
    }
    for (const item of c.verify.items) {
      const cl = { cluster: item.cluster, provider: item.provider ?? '' };
      this.clusterUp.set(cl, clusterUp(item) ? 1 : 0);
      if (item.latencyMs !== undefined) this.probeDuration.set(cl, item.latencyMs / 1000);
      this.clusterInfo.set({ ...cl, server: item.server ?? '', version: capped(item.version ?? '') }, 1);
      for (const k of item.checks ?? []) {
        const v = CHECK_VALUE[k.status];
        if (v !== undefined) this.checkOk.set({ cluster: item.cluster, check: k.name }, v);
      }
      this.clusterOk.set({ cluster: item.cluster }, item.ok ? 1 : 0);
    }
    for (const s of c.sources) {
      this.sourceUp.set({ kind: s.kind, source: s.name }, s.up ? 1 : 0);
      if (!s.up) this.sourceErrors.inc({ kind: s.kind, source: s.name, error: s.error?.kind ?? 'unknown' });
    }
    for (const r of c.hubReads ?? []) {
      this.bump(this.hubLists, { hub: r.hub, resource: r.resource }, r.lists);
      for (const [type, n] of Object.entries(r.events))
        this.bump(this.hubEvents, { hub: r.hub, resource: r.resource, type }, n);
    }
    this.collections.inc({ result: 'success' });
    this.collectionDuration.set((c.finishedAt - c.startedAt) / 1000);
    this.lastSuccess.set(c.finishedAt / 1000);
    this.lastAttempt.set(c.finishedAt / 1000);
    await this.render();
  }

  /** Raises a counter to a cumulative total (the series exists, at 0, from the first time it is seen). */
  private bump(counter: Counter, labels: Record<string, string>, total: number): void {
    const id = `${(counter as unknown as { name: string }).name}${JSON.stringify(labels)}`;
    const before = this.hubPublished.get(id) ?? 0;
    counter.inc(labels, Math.max(0, total - before));
    this.hubPublished.set(id, Math.max(before, total));
  }

  /** A collection that could not finish (no provider could be built, ...): the previous series stay, the failure is counted. */
  async failed(at = Date.now()): Promise<void> {
    this.collections.inc({ result: 'failure' });
    this.lastAttempt.set(at / 1000);
    await this.render();
  }

  private async render(): Promise<void> {
    this.registry.setContentType(PROMETHEUS_TEXT);
    const prometheus = await this.registry.metrics();
    this.registry.setContentType(OPENMETRICS_TEXT);
    const openMetrics = await this.registry.metrics();
    this.registry.setContentType(PROMETHEUS_TEXT);
    // prom-client renames a counter in place for OpenMetrics (fleet_x_total becomes fleet_x, whose samples it writes as
    // fleet_x_total): the name is put back, or the next Prometheus text would lose the _total of its samples.
    for (const { metric, name } of this.counters) (metric as unknown as { name: string }).name = name;
    this.text = { prometheus: scrub(prometheus), openMetrics: scrub(openMetrics) };
  }

  /** The last rendered exposition; undefined before the first collection was published or failed. */
  get exposition(): Exposition | undefined {
    return this.text;
  }
}
