import { Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags, type FlagGroups } from '../cli/base-command.js';
import { fleetFlags } from '../cli/flags.js';
import { hubFlags } from '../cli/hubs.js';
import { formatLifetime, parseTimeLimit } from '../base/duration.js';
import { UsageError } from '../base/errors.js';
import { parseNamespace } from '../base/names.js';
import { counted } from '../base/text.js';
import { listHubs } from '../creds/list.js';
import { type Collection, clusterUp, collect, hubsToRead } from '../exporter/collect.js';
import { type CollectionOutcome, type ExporterSummary, runSchedule } from '../exporter/exporter.js';
import { ExporterMetrics } from '../exporter/metrics.js';
import { HubObjectCache } from '../providers/hub/watch-cache.js';
import { type ListenAddress, parseListen, serve } from '../exporter/server.js';
import { DEFAULT_POLICY, type Policy, loadPolicy } from '../verify/policy.js';

/** The port fleet exporter listens on unless told: one no exporter of the Prometheus wiki's list takes. */
export const DEFAULT_LISTEN = ':9478';
const JITTER = 0.1;

export default class Exporter extends BaseCommand<typeof Exporter> {
  static summary = 'Serve the fleet’s credential expiry, reachability and policy checks as Prometheus metrics.';
  static description = `Runs until stopped: collects at once, then every --interval (±10 %, counted from the end of the last collection, so collections never overlap), over the selected clusters (every cluster by default) and the consumer Secrets of the hubs, what clusters verify (with --policy) and creds list --live would say, and serves the last complete collection on /metrics (Prometheus text, or OpenMetrics when the scraper asks for it), with /healthz and /readyz (ready after the first collection). A scrape never waits for a cluster. A failing hub or member is a metric (fleet_source_up, fleet_cluster_up), never the end of the process; SIGTERM ends it at once (exit 143). With --once: one collection, printed (-o prometheus for the exposition), nothing served. Metrics and labels: docs/exporter.md.`;

  static examples = [
    '<%= config.bin %> exporter --fleet-config fleet.yaml --policy policy.yaml',
    '<%= config.bin %> exporter --listen 127.0.0.1:9478 --interval 1m',
    '<%= config.bin %> exporter --once -o prometheus',
  ];

  static metrics = true;
  // Skipped TLS verification is the tls-verified check's series (fleet_verify_check_ok), not a warning repeated at
  // every collection.
  static reportsSkippedTls = true;

  static flags = {
    ...fleetFlags,
    ...hubFlags({
      defaultHub:
        'the hubs of the fleet configuration, else the current context of --kubeconfig/--context, KUBECONFIG, ~/.kube/config, in-cluster',
    }),
    listen: Flags.string({
      description: `Where to serve /metrics, /healthz and /readyz: HOST:PORT, :PORT or [IPv6]:PORT (port 0: any free one, printed).`,
      default: DEFAULT_LISTEN,
    }),
    interval: Flags.string({
      description: 'Time between the end of one collection and the start of the next (±10 %).',
      default: '5m',
    }),
    policy: Flags.string({
      char: 'p',
      description:
        'clusters verify policy file whose checks become fleet_verify_check_ok series (default: the built-in checks).',
    }),
    'credential-id-label': Flags.boolean({
      description:
        'Add a credential_id label (JTI=..., X509SHA256=...) to the credential series: one series per token, so a new series at every rotation.',
    }),
    'hub-namespace': Flags.string({
      description:
        'Read hub Secrets, ClusterProfiles and Flux objects in this namespace only (repeatable; default: every namespace). What a reader granted Roles in those namespaces, not every Secret of the hub, can do.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    once: Flags.boolean({ description: 'Collect once, print the result and exit; serve nothing.' }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags };
  }

  async run(): Promise<ExporterSummary | Collection> {
    const o = await exporterOptions(this.flags, this.format);
    // A fleet configuration that cannot be read, or a hub kubeconfig that is missing, ends the run here, before
    // anything is served (exit 2); from the first collection on, a source failing is a metric.
    await this.fleet.provider.provider();
    const listed = await listHubs(await this.credsHubs(this.flags));
    for (const w of listed.warnings) this.logStderr(`warning: ${w}`);
    const { hubs, notes } = await hubsToRead(listed.hubs);
    for (const n of notes) this.logStderr(`note: ${n}`);
    const metrics = new ExporterMetrics({ version: this.config.version, credentialIdLabel: o.credentialIdLabel });
    const run = { ...this.fleet.runOptions(), onProgress: undefined };
    // Hub Secrets and ClusterProfiles listed once, then followed by watch (relisted after a 410) for the process's life.
    const hubObjects = new HubObjectCache();
    const collectOnce = (signal?: AbortSignal) =>
      collect({
        list: () => this.fleet.relist(),
        hubs,
        hubNamespaces: o.hubNamespaces,
        hubObjects,
        policy: o.policy,
        exec: this.fleet.execRunner,
        run,
        signal,
      });

    if (o.once) {
      const c = await collectOnce();
      await metrics.publish(c);
      return this.printOnce(c, metrics);
    }

    let ready = false;
    const listening = await serve({ exposition: () => metrics.exposition, ready: () => ready }, o.listen);
    const host = listening.address.host.includes(':') ? `[${listening.address.host}]` : listening.address.host;
    this.logStderr(
      `serving http://${host}:${listening.address.port}/metrics (/healthz, /readyz); collecting every ${formatLifetime(o.intervalMs / 1000)} (±10 %)`,
    );
    // Nothing aborts it but a test's --once: SIGTERM and SIGINT end the process at once (src/cli/interrupt.ts), as
    // for every command that only reads, and the socket closes with it.
    const stop = new AbortController();
    try {
      return await runSchedule(
        (signal) => collectOnce(signal),
        metrics,
        { intervalMs: o.intervalMs, jitter: JITTER, signal: stop.signal },
        (outcome) => {
          if (outcome.ok) ready = true;
          this.told(outcome);
        },
      );
    } finally {
      await listening.close();
    }
  }

  /** One line per collection on stderr (and one JSON line on stdout with -o json or jsonl). */
  private told(outcome: CollectionOutcome): void {
    const next = outcome.nextInMs === undefined ? '' : `; next in ${formatLifetime(outcome.nextInMs / 1000)}`;
    const took = `${(outcome.durationMs / 1000).toFixed(1)} s`;
    const line = outcome.collection ? collectionSummary(outcome.collection) : undefined;
    if (this.format === 'json' || this.format === 'jsonl')
      this.logJsonLine({
        kind: 'ExporterCollection',
        n: outcome.n,
        ok: outcome.ok,
        durationMs: outcome.durationMs,
        ...line,
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(outcome.nextInMs === undefined ? {} : { nextInMs: outcome.nextInMs }),
      });
    if (outcome.ok && line)
      this.logStderr(
        `collection ${outcome.n}: ${line.clustersUp} of ${counted(line.clusters, 'cluster')} up, ${counted(line.checksFailing, 'failing check')}, ${counted(line.credentials, 'credential')}, ${counted(line.sourcesDown, 'source')} down, in ${took}${next}`,
      );
    else
      this.logStderr(
        `error: collection ${outcome.n} failed: ${outcome.error?.message ?? 'unknown error'}; the previous result stays served${next}`,
      );
  }

  private async printOnce(c: Collection, metrics: ExporterMetrics): Promise<Collection> {
    const s = collectionSummary(c);
    if (s.clusters === 0 && s.credentials === 0) this.markFailed();
    await this.render(c, {
      rows: c.verify.items,
      columns: [
        { header: 'cluster', get: (i) => i.cluster, cluster: true },
        { header: 'up', get: (i) => (clusterUp(i) ? 'yes' : 'no') },
        { header: 'version', get: (i) => i.version ?? '' },
        {
          header: 'failing checks',
          get: (i) =>
            (i.checks ?? [])
              .filter((k) => k.status === 'fail' || k.status === 'warn')
              .map((k) => k.name)
              .join(', '),
        },
      ],
      name: (i) => i.cluster,
      exposition: metrics.exposition?.prometheus,
      notes: [
        `${counted(s.credentials, 'credential')} (${s.credentialsValid} valid), ${counted(s.sourcesDown, 'source')} down`,
        ...c.sources.filter((x) => !x.up).map((x) => `${x.kind} ${x.name}: ${x.error?.message ?? 'down'}`),
      ],
    });
    return c;
  }
}

/** The counts of one collection: its log line and JSON line. */
export function collectionSummary(c: Collection) {
  const items = c.verify.items;
  return {
    clusters: items.length,
    clustersUp: items.filter(clusterUp).length,
    checksFailing: items.flatMap((i) => i.checks ?? []).filter((k) => k.status === 'fail' || k.status === 'warn')
      .length,
    credentials: c.credentials.items.length,
    credentialsValid: c.credentials.items.filter((i) => i.live?.ok).length,
    sourcesDown: c.sources.filter((s) => !s.up).length,
  };
}

export interface ExporterOptions {
  listen: ListenAddress;
  intervalMs: number;
  policy: Policy;
  credentialIdLabel: boolean;
  once: boolean;
  hubNamespaces?: string[];
}

/** The flags, checked before any cluster or hub is read: a bad address, interval, format or policy is exit 2. */
export async function exporterOptions(f: BaseFlags<typeof Exporter>, format: string): Promise<ExporterOptions> {
  const listen = parseListen(f.listen);
  const intervalMs = parseTimeLimit(f.interval, '--interval');
  if (intervalMs < 1000) throw new UsageError(`--interval ${f.interval}: at least 1s`);
  if (!f.once && !['table', 'wide', 'json', 'jsonl'].includes(format))
    throw new UsageError(
      `-o ${format}: fleet exporter serves until stopped; -o json or jsonl prints one line per collection, and --once prints one collection as ${format}`,
    );
  const policy = f.policy ? await loadPolicy(f.policy) : DEFAULT_POLICY;
  const hubNamespaces = f['hub-namespace']?.map((n) => parseNamespace(n, '--hub-namespace'));
  return {
    listen,
    intervalMs,
    policy,
    credentialIdLabel: f['credential-id-label'],
    once: f.once,
    ...(hubNamespaces?.length ? { hubNamespaces: [...new Set(hubNamespaces)] } : {}),
  };
}
