import { type Check, type CheckStatus, countByStatus, worstStatus } from '../base/checks.js';
import type { ClusterResult, ClusterTask } from '../fleet/runner.js';
import type { ClusterItem } from '../fleet/items.js';
import { describeRef } from '../clusters/summary.js';
import type { ClusterRef } from '../providers/types.js';
import type { Impersonation } from '../kube/client.js';
import { CHECK_NAMES, CheckList, type VerifyFacts, type VerifyOptions, verifyCluster } from './checks.js';
import { type Policy, effectivePolicy } from './policy.js';

/** The value fields of one cluster in `clusters verify -o json` (inside the shared ClusterItem). */
export interface VerifyValue extends VerifyFacts {
  /** The worst check outcome. */
  status: CheckStatus;
  checks: Check[];
  /** The policy rules (name or selector) that applied to this cluster. */
  rules: string[];
  server?: string;
  provider: string;
  durationMs: number;
}

/** `ok` is true when no check failed (with --strict, when none warned either). */
export type VerifyItem = ClusterItem<VerifyValue>;

/** The stable JSON shape of `clusters verify` (documented in docs/verify.md). */
export interface VerifyReport {
  kind: 'VerifyReport';
  /** The policy file, or null for the built-in defaults. */
  policy: string | null;
  strict: boolean;
  ok: boolean;
  /** The identity the checks were made as (--as, --as-group, --as-uid); absent when the credential answers for itself. */
  as?: Impersonation;
  summary: { clusters: number; passed: number; failed: number; checks: Record<CheckStatus, number> };
  items: VerifyItem[];
}

/**
 * Verifies a fleet: `work` is what the fleet runner runs per cluster; `report` turns the runner's results into the
 * report, including clusters whose work failed or was cut short (their decided checks are kept).
 */
export class FleetVerifier {
  private readonly lists = new Map<string, CheckList>();
  private readonly rules = new Map<string, string[]>();
  private readonly refs = new Map<string, ClusterRef>();
  private readonly unusable = new Set<string>();

  constructor(
    readonly policy: Policy,
    private readonly options: VerifyOptions & { strict: boolean },
  ) {}

  private listFor(cluster: string): CheckList {
    let list = this.lists.get(cluster);
    if (!list) this.lists.set(cluster, (list = new CheckList()));
    return list;
  }

  /**
   * READY as `clusters list` decides it: the provider's word plus what kubectl would refuse before sending a request
   * (a missing key file, an expired certificate, ...), so provider-ready fails for the same clusters list shows not ready.
   */
  async prepare(refs: ClusterRef[]): Promise<void> {
    await Promise.all(
      refs.map(async (ref) => {
        const { ready, reason } = await describeRef(ref);
        if (ready === ref.ready) return void this.refs.set(ref.name, ref);
        // Usable by its provider's word, refused by the kubeconfig checks: client-go would not send a request with it.
        this.refs.set(ref.name, { ...ref, ready, reason });
        this.unusable.add(ref.name);
      }),
    );
  }

  work = async (task: ClusterTask): Promise<void> => {
    const ref = this.refs.get(task.ref.name) ?? task.ref;
    const effective = effectivePolicy(this.policy, ref.labels);
    this.rules.set(ref.name, effective.rules);
    this.refs.set(ref.name, ref);
    const list = this.listFor(ref.name);
    if (this.unusable.has(ref.name)) {
      // One cause fails one check: the rest would only repeat the kubeconfig problem.
      list.set(
        'provider-ready',
        'fail',
        `not usable: ${ref.reason ?? 'no reason given'}`,
        'fix the kubeconfig entry the message names (fleet clusters inspect shows it)',
      );
      for (const name of CHECK_NAMES)
        if (!list.has(name)) list.set(name, 'skip', 'the cluster is not usable (provider-ready)');
      return;
    }
    await verifyCluster({ ...task, ref }, effective, this.options, list);
  };

  private readonly items = new Map<string, VerifyItem>();

  report(results: ClusterResult<void>[], refs: ClusterRef[]): VerifyReport {
    const byName = new Map(refs.map((r) => [r.name, r]));
    const items = results.map((r) => this.item(r, byName.get(r.cluster)));
    const all = items.flatMap((i) => i.checks ?? []);
    const passed = items.filter((i) => i.ok).length;
    return {
      kind: 'VerifyReport',
      policy: this.policy.file ?? null,
      strict: this.options.strict,
      ok: passed === items.length && items.length > 0,
      summary: { clusters: items.length, passed, failed: items.length - passed, checks: countByStatus(all) },
      items,
    };
  }

  /** One cluster's item, as soon as its result is in (-o jsonl prints it then; report() gathers them). */
  item(r: ClusterResult<void>, known?: ClusterRef): VerifyItem {
    // Once per cluster: finishing its checks is not repeatable, and a streamed item must be the one the report holds.
    const done = this.items.get(r.cluster);
    if (done) return done;
    const ref = this.refs.get(r.cluster) ?? known;
    const list = this.listFor(r.cluster);
    // A cluster whose provider entry is not ready and has no server never reaches `work`: that is this check's failure.
    const unready = !r.ok && ref !== undefined && !ref.ready && !list.has('provider-ready');
    if (unready) {
      list.set(
        'provider-ready',
        'fail',
        `not ready in provider ${ref.provider}: ${ref.reason ?? r.error?.message ?? 'no reason given'}`,
        'see why the provider reports the cluster not ready (fleet clusters inspect)',
      );
    }
    const checks = list.finish(r.ok ? undefined : r.error, unready ? 'provider-ready' : undefined);
    const status = worstStatus(checks);
    const ok = !(status === 'fail' || (this.options.strict && status === 'warn'));
    const item: VerifyItem = {
      cluster: r.cluster,
      ok,
      status,
      ...(ref?.server ? { server: ref.server } : {}),
      provider: ref?.provider ?? '',
      rules: this.rules.get(r.cluster) ?? (ref ? effectivePolicy(this.policy, ref.labels).rules : []),
      ...list.facts,
      checks,
      durationMs: r.durationMs,
      ...(r.error ? { error: r.error } : {}),
    };
    this.items.set(r.cluster, item);
    return item;
  }
}
