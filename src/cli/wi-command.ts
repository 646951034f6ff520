import type { Command, Interfaces } from '@oclif/core';

import { parseLifetime } from '../base/duration.js';
import { UsageError } from '../base/errors.js';
import { type ClusterItem, toItem } from '../fleet/items.js';
import type { Connector } from '../kube/connector.js';
import type { ClusterRef } from '../providers/types.js';
import { connectRef } from '../workload-identity/connect.js';
import { expirationSeconds, readAuthenticationConfig, readTokenFile } from '../workload-identity/inputs.js';
import { type Probe, type ProbeResult, probeFor } from '../workload-identity/probe.js';
import { type ServiceAccountRef, parseServiceAccount } from '../workload-identity/service-account.js';
import { type PluginTarget, pluginTarget, wiTokenExec } from '../workload-identity/plugin.js';
import { credsHubs } from '../creds/hubs.js';
import type { Cluster } from '../workload-identity/connect.js';
import { type CanIQuestion, parseCanI } from '../workload-identity/target.js';
import { BaseCommand, type FlagGroups } from './base-command.js';
import { checkJunitTarget, writeJunit } from './junit-file.js';
import { checkColumns, checkRows, fixNotes, junitSuitesOf, wiFlags } from './wi-format.js';

/** The stable JSON shape of `wi test` and `wi doctor` (docs/workload-identity.md). */
export interface WorkloadIdentityReport {
  kind: 'WorkloadIdentityTest' | 'WorkloadIdentityDiagnosis';
  hub: string;
  serviceAccount: string;
  items: Array<ClusterItem<ProbeResult>>;
}

/**
 * `wi test` and `wi doctor` differ only in what they run per target: both resolve --hub and the targets through fleet's
 * providers, build one probe per target and render its checks.
 */
export abstract class WiProbeCommand<T extends typeof Command> extends BaseCommand<T> {
  private targets?: ClusterRef[];

  /** The wiFlags values, as the subclass hands them to report() (`this.report(this.flags)`): typed there, never cast. */
  private values?: Interfaces.InferredFlags<typeof wiFlags>;

  private get wi(): Interfaces.InferredFlags<typeof wiFlags> {
    if (!this.values) throw new Error('wi: report() reads the flags it was given; nothing reads them before');
    return this.values;
  }

  /**
   * --all walks the providers' list (a provider that could not list is reported) and --cluster-timeout limits each
   * probe: read by the fleet when the probes run, after report() was given the flags.
   */
  protected flagGroups(): FlagGroups {
    return { selection: { all: this.values?.all, 'cluster-timeout': this.values?.['cluster-timeout'] } };
  }

  protected abstract readonly reportKind: WorkloadIdentityReport['kind'];
  protected abstract probe(p: Probe): Promise<ProbeResult>;

  /** The targets: --target (repeatable), or --all = every cluster but the hub. Never an empty selection. */
  private async selectTargets(): Promise<ClusterRef[]> {
    if (this.targets) return this.targets;
    const f = this.wi;
    const provider = this.fleet.provider;
    // Without --hub (a fleet wi token target), there is no hub among the clusters to leave out.
    const hub = f.hub ? await provider.get(f.hub) : undefined;
    let refs: ClusterRef[];
    if (f.all) refs = (await provider.list()).filter((r) => r.name !== hub?.name);
    else {
      const names = f.target ?? [];
      if (names.length === 0)
        throw new UsageError('name the cluster that should accept the token with --target, or use --all');
      refs = [];
      for (const n of names) {
        const r = await provider.get(n);
        if (r.name === hub?.name)
          throw new UsageError(
            `--target ${n} is the hub itself; a cluster does not trust its own issuer through --authentication-config`,
          );
        if (!refs.includes(r)) refs.push(r);
      }
    }
    if (refs.length === 0) throw new UsageError(`--all: fleet knows no cluster besides the hub ${hub?.name}`);
    this.targets = refs;
    return refs;
  }

  /** Another cluster fleet knows with the same server and a user that is not the plugin: your own credentials there. */
  private async readerFor(target: ClusterRef): Promise<ClusterRef | undefined> {
    const server = (await target.resolve()).cluster.server;
    const refs = await this.fleet.provider.list().catch(() => [] as ClusterRef[]);
    for (const r of refs) {
      if (r.name === target.name) continue;
      const ctx = await r.resolve().catch(() => undefined);
      if (ctx && ctx.cluster.server === server && !wiTokenExec(ctx.user.exec)) return r;
    }
    return undefined;
  }

  protected async report(
    flags: Interfaces.InferredFlags<typeof wiFlags>,
    authenticationConfig?: string,
  ): Promise<WorkloadIdentityReport> {
    this.values = flags;
    const f = this.wi;
    const o = await probeOptions(f, authenticationConfig);
    const { canI, expirationSeconds: seconds, token, authConfig } = o;
    const connector = this.fleet.connector;
    // Targets first: a bad --target is a usage error before anything is asked of the hub.
    const targets = await this.selectTargets();
    const plugin = o.named ? undefined : pluginTarget(targets[0].name, await targets[0].resolve());
    const sa = o.named ? o.named.serviceAccount : plugin!.serviceAccountRef;
    const hubRef = o.named ? await this.fleet.provider.get(o.named.hub) : undefined;
    const hubWith = (c: Connector) => (plugin ? pluginHub(plugin, c) : connectRef(hubRef!, c));
    const hub = await hubWith(connector);
    // The plugin's identity may not read the target's metrics or RBAC; your own credentials for the same server may.
    const reader = plugin ? await this.readerFor(targets[0]) : undefined;
    const readerClient = reader ? (await connectRef(reader, connector)).client : undefined;
    const results = await this.overClusters(
      async ({ ref, client, signal }) =>
        this.probe(
          // The hub's requests for this target end with the target's --cluster-timeout too (a client per target costs no
          // connection: they share the hub's keep-alive agent), so a hung hub never outlives the limit.
          probeFor(
            await hubWith(connector.with({ signal })),
            { name: ref.name, context: client.context, client: readerClient ?? client },
            {
              serviceAccount: sa,
              audience: f.audience ?? plugin?.audience,
              expirationSeconds: seconds,
              expectUser: f['expect-user'],
              canI,
              token,
              authConfig,
              options: connector.with({ signal }),
            },
          ),
        ),
      undefined,
      targets,
    );
    if (plugin) {
      const from = plugin.hubKubeconfig
        ? `--hub-kubeconfig ${plugin.hubKubeconfig}${plugin.hubContext ? ` --hub-context ${plugin.hubContext}` : ''}`
        : 'the one hub rule (in a Pod: in-cluster)';
      for (const r of results) {
        const reads = reader
          ? `; the target's metrics and RBAC are read with the credentials of ${reader.name} (same server)`
          : "; no other credentials for this server: the target's metrics and RBAC are read as the plugin (add a context with the same server to --kubeconfig to read them as you)";
        r.value?.checks.unshift({
          name: 'plugin',
          status: 'pass',
          message: `${r.cluster}'s user runs fleet wi token: ServiceAccount ${sa.namespace}/${sa.name}, audience ${plugin.audience}, hub ${hub.name} (from ${from})${reads}`,
        });
      }
    }
    const items = results.map((r) => toItem(r, (v: ProbeResult) => v));
    if (items.some((i) => !i.ok || !i.passed)) this.markFailed();
    const report: WorkloadIdentityReport = {
      kind: this.reportKind,
      hub: hub.name,
      serviceAccount: `${sa.namespace}/${sa.name}`,
      items,
    };
    // The XML builder is loaded only for --junit (as in clusters verify).
    if (f.junit)
      await writeJunit(
        f.junit,
        (await import('../verify/junit.js')).junitSuites(
          junitSuitesOf(report, new Map(results.map((r) => [r.cluster, r.durationMs]))),
        ),
      );
    const rows = checkRows(items);
    await this.render(report, {
      // -o name: the targets where everything passed, for scripts.
      rows:
        this.format === 'name'
          ? rows.filter(
              (r, i) =>
                items.find((x) => x.cluster === r.cluster)?.passed &&
                rows.findIndex((o) => o.cluster === r.cluster) === i,
            )
          : rows,
      columns: checkColumns,
      name: (r) => r.cluster,
      notes: fixNotes(rows),
      // A target whose probe could not run at all (its time limit, its configuration): one stderr line in every format.
      failures: items,
    });
    return report;
  }
}

/** What `wi test` and `wi doctor` ask, from their flags, checked (and their files read) before any cluster is touched. */
export interface ProbeOptions {
  /** --hub and --service-account; absent in plugin mode (neither given: the target's own fleet wi token user says both). */
  named?: { hub: string; serviceAccount: ServiceAccountRef };
  canI: CanIQuestion[];
  expirationSeconds: number;
  token?: Awaited<ReturnType<typeof readTokenFile>>;
  authConfig?: Awaited<ReturnType<typeof readAuthenticationConfig>>;
}

export async function probeOptions(
  f: Interfaces.InferredFlags<typeof wiFlags>,
  authenticationConfig?: string,
): Promise<ProbeOptions> {
  const { hub: hubName, 'service-account': saName } = f;
  const pluginMode = !hubName && !saName;
  if (!pluginMode && !hubName)
    throw new UsageError('missing --hub (the cluster whose ServiceAccount issues the token)');
  if (!pluginMode && !saName) throw new UsageError('missing --service-account NAMESPACE/NAME');
  if (pluginMode && (f.all || (f.target ?? []).length !== 1)) {
    throw new UsageError(
      'without --hub and --service-account, name exactly one --target whose user runs fleet wi token',
    );
  }
  const canI = (f['can-i'] ?? []).map(parseCanI);
  const seconds = expirationSeconds(parseLifetime(f.expiration, '--expiration'));
  const token = f['token-file'] ? await readTokenFile(f['token-file']) : undefined;
  const authConfig = authenticationConfig ? await readAuthenticationConfig(authenticationConfig) : undefined;
  if (f.junit) await checkJunitTarget(f.junit);
  // Outside plugin mode both names were required above.
  const named = pluginMode ? undefined : { hub: hubName!, serviceAccount: parseServiceAccount(saName!) };
  return { named, canI, expirationSeconds: seconds, token, authConfig };
}

/** The hub as the plugin finds it: its own flags and environment, the one hub rule. */
async function pluginHub(p: PluginTarget, connector: Connector): Promise<Cluster> {
  const [choice] = await credsHubs({ hubKubeconfig: p.hubKubeconfig, hubContext: p.hubContext, env: p.env });
  const client = await connector.hub(choice.spec, p.env);
  return { name: client.context.contextName, context: client.context, client };
}
