import { parseTimeLimit } from '../base/duration.js';
import { UsageError } from '../base/errors.js';
import type { Impersonation } from '../kube/client.js';
import { Connector } from '../kube/connector.js';
import { ExecCredentialRunner } from '../kube/exec-credential.js';
import { kubercLocation } from '../kubeconfig/kuberc.js';
import { TrustPolicy } from '../kubeconfig/trust.js';
import type { RequestLog } from '../kube/request-log.js';
import type { RunOptions } from '../fleet/runner.js';
import { type Selection, selectClusters, takeShard } from '../fleet/select.js';
import { resolveShard, shardName } from '../fleet/shard.js';
import { type DeferredProvider, fleetProvider } from '../providers/registry.js';
import type { ClusterRef, ProviderFailure } from '../providers/types.js';
import { selectionFailures } from '../fleet/failures.js';
import type { SelectionFlags } from './flags.js';
import type { ProgressBoard } from './progress.js';

/** What a Fleet is made of: the command's parsed flags and the facts the base command decided at init. */
export interface FleetInputs {
  /** The global flags (BaseCommand.baseFlags). */
  flags: {
    kubeconfig?: string;
    context?: string;
    provider?: string;
    kuberc?: string;
    'fleet-config'?: string;
    'request-timeout': string;
    concurrency: number;
    verbose?: boolean;
    verbosity?: number;
  };
  /** JSON, YAML, name, prometheus (or a quiet command): no progress line, no plugin talking to the user. */
  machineOutput: boolean;
  /** Whether an exec plugin may talk to the user (asked when the first plugin runs). */
  interactive: () => boolean;
  /** --as/--as-group/--as-uid, for the clusters of a run (never a hub). */
  impersonation?: Impersonation;
  /** One line on stderr, the command's scrubbed way. */
  say: (line: string) => void;
  /** The command's live line (drawn or not by its one rule, progressShown): the runner counts clusters on it. */
  progress?: ProgressBoard;
  /** The command shows skipped TLS verification in its own output (BaseCommand.reportsSkippedTls): no warning then. */
  reportsSkippedTls?: boolean;
  /**
   * The command's selection flags (fleetFlags or a part of them), typed by the command that declares them
   * (BaseCommand.selectionFlags); undefined for a command that selects no clusters. Read on first use.
   */
  selection?: () => SelectionFlags | undefined;
}

/**
 * What a command works over, composed once by the base command at init: the providers, the connector (time limit, exec
 * runner, request log), the selection and how the runner runs. Each part is made on first use, so a command that never
 * looks at clusters reads no fleet configuration and checks no --request-timeout, as before.
 */
export class Fleet {
  constructor(private readonly inputs: FleetInputs) {}

  private connectorMade?: Connector;
  private execRunnerMade?: ExecCredentialRunner;
  private providerMade?: DeferredProvider;
  private selectionMade?: Selection;
  private selectedMade?: Promise<ClusterRef[]>;

  private get flags(): FleetInputs['flags'] {
    return this.inputs.flags;
  }

  /** `--kubeconfig` split like KUBECONFIG (path or list). */
  get kubeconfigPaths(): string[] | undefined {
    const value = this.flags.kubeconfig;
    if (value === undefined) return undefined;
    const paths = value.split(':').filter((p) => p !== '');
    if (paths.length === 0) throw new UsageError('--kubeconfig: no path given');
    return paths;
  }

  get requestTimeoutMs(): number {
    return parseTimeLimit(this.flags['request-timeout']);
  }

  /** kubectl-style request logging on stderr at -v 6 and up (undefined below: nothing is logged). */
  get requestLog(): RequestLog | undefined {
    const level = this.flags.verbosity ?? 0;
    if (level < 6) return undefined;
    return { level, write: this.inputs.say };
  }

  /**
   * One exec credential runner for the whole command: hubs, members and single-cluster commands share its cache and its
   * one-run-per-credential rule, and a plugin may talk to the user only when fleet may.
   */
  get execRunner(): ExecCredentialRunner {
    this.execRunnerMade ??= new ExecCredentialRunner({ interactiveAvailable: this.inputs.interactive() });
    return this.execRunnerMade;
  }

  /** How the command connects to clusters and hubs: one time limit, one exec runner, one request log (without --as). */
  get connector(): Connector {
    this.connectorMade ??= new Connector({
      timeoutMs: this.requestTimeoutMs,
      exec: this.execRunner,
      log: this.requestLog,
      trust: this.trust,
      reportsSkippedTls: this.inputs.reportsSkippedTls,
    });
    return this.connectorMade;
  }

  private trustMade?: TrustPolicy;
  /** Which plugins may run (the kuberc) and what hub data may use (the fleet configuration, added when it is read). */
  get trust(): TrustPolicy {
    this.trustMade ??= new TrustPolicy({ kuberc: this.flags.kuberc });
    return this.trustMade;
  }

  /**
   * A kuberc named by --kuberc or KUBERC is read before anything else, as kubectl reads it before any command (k8s.io/
   * kubectl pkg/kuberc DefaultGetPreferences, "explicitly" requested): missing, unreadable or unusable ends the run in
   * one line (exit 2) before any cluster is touched, whether or not a plugin would have asked it. The default
   * ~/.kube/kuberc is still read on first use, and may be absent.
   */
  async readNamedKuberc(): Promise<void> {
    if (kubercLocation({ flag: this.flags.kuberc, env: process.env })?.explicit) await this.trust.kuberc();
  }

  /** Short names of the file clusters listed so far (none when no provider was built: nothing is read for them). */
  shortNames(): Promise<Map<string, string>> {
    return this.providerMade?.shortNames() ?? Promise.resolve(new Map<string, string>());
  }

  /** The providers this run looks at, from flags and the fleet configuration (read on first use). */
  get provider(): DeferredProvider {
    this.providerMade ??= this.buildProvider();
    return this.providerMade;
  }

  private buildProvider(): DeferredProvider {
    return fleetProvider({
      kubeconfig: this.kubeconfigPaths,
      context: this.flags.context,
      provider: this.flags.provider,
      fleetConfig: this.flags['fleet-config'],
      connector: this.connector,
      note: this.flags.verbose ? (message) => this.inputs.say(`note: ${message}`) : undefined,
    });
  }

  /**
   * For a command that runs until stopped (fleet exporter): the selection listed anew from providers built for this
   * call, so a hub Secret or ClusterProfile added since the last call is seen and one deleted is gone. With no
   * --cluster or --selector it is every cluster (a watcher has no current context to default to). The providers that
   * could not list are returned beside the clusters, as a fleet-wide run reports them. The first call's provider is
   * the run's own (`provider`, whose configuration errors the command reported at start).
   */
  async relist(): Promise<{ refs: ClusterRef[]; failures: ProviderFailure[]; providers: string[] }> {
    const provider = this.relisted++ === 0 ? this.provider : this.buildProvider();
    const named = (this.selection.clusters ?? []).length > 0;
    const selection: Selection = { ...this.selection, all: this.selection.all || (!named && !this.selection.selector) };
    const refs = takeShard(await selectClusters(provider, selection), selection.shard);
    const providers = (await provider.providerNames?.()) ?? [provider.name];
    return { refs, failures: await selectionFailures(provider, selection), providers };
  }

  private relisted = 0;

  /** What --cluster / --all / --selector (and --context) select, and the part --shard / --shard-count takes. */
  get selection(): Selection {
    if (this.selectionMade) return this.selectionMade;
    const f = this.inputs.selection?.() ?? {};
    // The shard is resolved here once for the run (the runner, the provider failures and the stderr line share it).
    this.selectionMade = {
      clusters: f.cluster,
      all: f.all,
      selector: f.selector,
      context: this.flags.context,
      shard: resolveShard({ shard: f.shard, count: f['shard-count'], env: process.env }),
    };
    return this.selectionMade;
  }

  /**
   * The clusters chosen by --cluster / --all / --selector, or the current context, then this run's shard of them.
   * Needs fleetFlags. A sharded run says on stderr, in every format, how much of the selection it took (an empty part
   * is a Pod with nothing to do, not a success that checked something).
   */
  selected(): Promise<ClusterRef[]> {
    this.selectedMade ??= (async () => {
      const selection = this.selection;
      const all = await selectClusters(this.provider, selection);
      if (!selection.shard) return all;
      const part = takeShard(all, selection.shard);
      this.inputs.say(
        `${shardName(selection.shard)}: ${part.length} of the ${all.length} selected cluster${all.length === 1 ? '' : 's'}${part.length === 0 ? ': nothing to do in this shard' : ''}`,
      );
      return part;
    })();
    return this.selectedMade;
  }

  /**
   * How the fleet runner runs for this command: its concurrency, time limits, progress line and its connector (with
   * --as). Services that run over clusters themselves (clusters list --live) get these, so nothing makes a second runner.
   */
  runOptions(clusterTimeout = this.inputs.selection?.()?.['cluster-timeout'] ?? '0'): RunOptions {
    const as = this.inputs.impersonation;
    return {
      concurrency: this.flags.concurrency,
      clusterTimeoutMs: parseTimeLimit(clusterTimeout, '--cluster-timeout'),
      onProgress: this.inputs.progress?.counter('clusters'),
      connector: as ? this.connector.with({ impersonate: as }) : this.connector,
    };
  }
}
