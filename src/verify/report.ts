import {type Check, type CheckStatus, countByStatus, worstStatus} from '../base/checks.js'
import type {ClusterResult, ClusterTask} from '../fleet/runner.js'
import type {ClusterItem} from '../fleet/items.js'
import type {ClusterRef} from '../providers/types.js'
import {CheckList, type VerifyFacts, type VerifyOptions, verifyCluster} from './checks.js'
import {type Policy, effectivePolicy} from './policy.js'

/** The value fields of one cluster in `clusters verify -o json` (inside the shared ClusterItem). */
export interface VerifyValue extends VerifyFacts {
  /** The worst check outcome. */
  status: CheckStatus
  checks: Check[]
  /** The policy rules (name or selector) that applied to this cluster. */
  rules: string[]
  server?: string
  provider: string
  durationMs: number
}

/** `ok` is true when no check failed (with --strict, when none warned either). */
export type VerifyItem = ClusterItem<VerifyValue>

/** The stable JSON shape of `clusters verify` (documented in docs/verify.md). */
export interface VerifyReport {
  kind: 'VerifyReport'
  /** The policy file, or null for the built-in defaults. */
  policy: string | null
  strict: boolean
  ok: boolean
  summary: {clusters: number; passed: number; failed: number; checks: Record<CheckStatus, number>}
  items: VerifyItem[]
}

/**
 * Verifies a fleet: `work` is what the fleet runner runs per cluster; `report` turns the runner's results into the
 * report, including clusters whose work failed or was cut short (their decided checks are kept).
 */
export class FleetVerifier {
  private readonly lists = new Map<string, CheckList>()
  private readonly rules = new Map<string, string[]>()
  private readonly refs = new Map<string, ClusterRef>()

  constructor(
    readonly policy: Policy,
    private readonly options: VerifyOptions & {strict: boolean},
  ) {}

  private listFor(cluster: string): CheckList {
    let list = this.lists.get(cluster)
    if (!list) this.lists.set(cluster, (list = new CheckList()))
    return list
  }

  work = async (task: ClusterTask): Promise<void> => {
    const effective = effectivePolicy(this.policy, task.ref.labels)
    this.rules.set(task.ref.name, effective.rules)
    this.refs.set(task.ref.name, task.ref)
    await verifyCluster(task, effective, this.options, this.listFor(task.ref.name))
  }

  report(results: ClusterResult<void>[], refs: ClusterRef[]): VerifyReport {
    const byName = new Map(refs.map((r) => [r.name, r]))
    const items = results.map((r): VerifyItem => {
      const ref = this.refs.get(r.cluster) ?? byName.get(r.cluster)
      const list = this.listFor(r.cluster)
      // A cluster whose provider entry is not ready and has no server never reaches `work`: that is this check's failure.
      const unready = !r.ok && ref !== undefined && !ref.ready && !list.has('provider-ready')
      if (unready) {
        list.set('provider-ready', 'fail', `not ready in provider ${ref.provider}: ${ref.reason ?? r.error?.message ?? 'no reason given'}`, 'see why the provider reports the cluster not ready (fleet clusters inspect)')
      }
      const checks = list.finish(r.ok ? undefined : r.error, unready ? 'provider-ready' : undefined)
      const status = worstStatus(checks)
      const ok = !(status === 'fail' || (this.options.strict && status === 'warn'))
      return {
        cluster: r.cluster,
        ok,
        status,
        ...(ref?.server ? {server: ref.server} : {}),
        provider: ref?.provider ?? '',
        rules: this.rules.get(r.cluster) ?? (ref ? effectivePolicy(this.policy, ref.labels).rules : []),
        ...list.facts,
        checks,
        durationMs: r.durationMs,
        ...(r.error ? {error: r.error} : {}),
      }
    })
    const all = items.flatMap((i) => i.checks ?? [])
    const passed = items.filter((i) => i.ok).length
    return {
      kind: 'VerifyReport',
      policy: this.policy.file ?? null,
      strict: this.options.strict,
      ok: passed === items.length && items.length > 0,
      summary: {clusters: items.length, passed, failed: items.length - passed, checks: countByStatus(all)},
      items,
    }
  }
}
