import { Flags } from '@oclif/core';

import { BaseCommand, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlagsUnsharded, impersonationFlags } from '../../cli/flags.js';
import type { Impersonation } from '../../kube/client.js';
import type { Column } from '../../cli/table.js';
import { bracketed, errorColumn } from '../../cli/access-format.js';
import { UsageError } from '../../base/errors.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import {
  type ClusterDiff,
  type ClusterRules,
  type NormalRules,
  clusterRules,
  diffRules,
  isEmpty,
} from '../../access/diff.js';
import { counted } from '../../base/text.js';

/** One cluster in `auth diff -o json` (documented in docs/access.md). */
export type DiffItem = ClusterItem<ClusterRules & ClusterDiff>;

/** The stable JSON shape of `auth diff`. */
export interface RulesDiff {
  kind: 'RulesDiff';
  /** The identity compared (--as, --as-group, --as-uid); absent when the credential answers for itself. */
  as?: Impersonation;
  /** The cluster every other one was compared with, or null (each with all the others). */
  baseline: string | null;
  /** Some cluster grants what another does not. */
  drift: boolean;
  /** Every selected cluster answered with complete rules, so `drift: false` means no difference. */
  complete: boolean;
  items: DiffItem[];
}

/** One table row: a grant a cluster has that another does not ("+") or lacks ("-"), or a cluster that failed. */
interface Row {
  item: DiffItem;
  change: '+' | '-' | '';
  scope: string;
  what: string;
  resourceNames: string[];
  verbs: string[];
}

export default class AuthDiff extends BaseCommand<typeof AuthDiff> {
  static summary = 'Compare what you may do across clusters: the grants one cluster has that another does not.';
  static description = `Reads the rules of the current identity on each selected cluster (SelfSubjectRulesReview in the namespace, and once more for a namespace that cannot exist, which leaves only the cluster-wide grants), normalises them (one verb on one group/resource/object at a time; duplicates merged; a grant covered by a wider one, such as "get" next to "*", dropped) so that equivalent RBAC written differently compares equal, then lists what each cluster grants that another does not ("+") and what another grants that it does not ("-").

Each grant has a scope: "cluster" when it holds in every namespace (a ClusterRoleBinding), "namespace" when it holds only in the namespace reviewed (a RoleBinding). The namespace is -n, else each context's namespace, else "default".

With --baseline CLUSTER every cluster is compared with that one only; without, with the majority: a grant most clusters share is the norm (listed "-" where it is missing), one fewer than half share is an exception (listed "+" where it is held), and a grant exactly half share (two clusters that disagree) is listed on both sides. One cluster with an extra RoleBinding is the one row group shown. -o json has each cluster's normalised rules as well.

Exit 1 when a cluster could not answer, or with --fail-on-drift when any cluster differs or a rules review was incomplete (a difference could be hidden). Exit 2 when fewer than two clusters are selected.`;

  static examples = [
    '<%= config.bin %> auth diff --all',
    '<%= config.bin %> auth diff -l env=prod --baseline prod-eu -n payments',
    '<%= config.bin %> auth diff --all --fail-on-drift -o json',
    '<%= config.bin %> auth diff --all --as system:serviceaccount:ci:deployer',
  ];

  static flags = {
    ...fleetFlagsUnsharded,
    ...impersonationFlags,
    namespace: Flags.string({
      char: 'n',
      description: 'Namespace whose rules to compare (default: the context\'s namespace, else "default").',
    }),
    baseline: Flags.string({
      description: 'Compare every cluster with this one (a selected cluster: full or unambiguous short name).',
    }),
    'fail-on-drift': Flags.boolean({
      description: 'Exit 1 when any cluster grants what another does not, or a rules review was incomplete (for CI).',
    }),
  };

  // The identity is whoever the connection authenticates as: the caller, or with --as the identity the fleet runner's
  // connect options impersonate (KubeClient sets the headers); nothing in access/diff.ts knows the difference.
  protected flagGroups(): FlagGroups {
    return { selection: this.flags, impersonation: this.flags };
  }

  async run(): Promise<RulesDiff> {
    const refs = await this.fleet.selected();
    // Checked before any cluster is contacted: a comparison needs two sides, and the baseline must be one of them.
    if (refs.length < 2) {
      throw new UsageError(
        `auth diff compares clusters: ${refs.length === 1 ? `only ${refs[0].name} is` : 'no cluster is'} selected (use -c NAME twice or more, --all or -l)`,
      );
    }
    const baseline =
      this.flags.baseline === undefined
        ? undefined
        : await this.baselineAmong(
            this.flags.baseline,
            refs.map((r) => r.name),
          );

    const results = await this.overClusters(({ client }) =>
      clusterRules(client, this.flags.namespace ?? client.context.namespace ?? 'default'),
    );
    const answered = new Map(
      results.filter((r) => r.ok && r.value).map((r) => [r.cluster, r.value!] as [string, NormalRules]),
    );
    const baselineFailed = baseline !== undefined && !answered.has(baseline);
    const diffs = baselineFailed ? new Map<string, ClusterDiff>() : diffRules(answered, baseline);
    const items: DiffItem[] = results.map((r) => toItem(r, (v) => ({ ...v, ...diffs.get(r.cluster)! })));
    const drifted = items.filter((i) => i.ok && i.extra && i.missing && (!isEmpty(i.extra) || !isEmpty(i.missing)));
    const complete = items.every((i) => i.ok && !i.incomplete) && !baselineFailed;
    const result: RulesDiff = {
      kind: 'RulesDiff',
      ...(this.impersonation ? { as: this.impersonation } : {}),
      baseline: baseline ?? null,
      drift: drifted.length > 0,
      complete,
      items,
    };
    // Never a silent pass: with fewer than two answers (or no baseline answer) nothing was compared, and a failed
    // cluster has already marked the run failed.
    if (answered.size < 2 || baselineFailed) this.markFailed();
    if (this.flags['fail-on-drift'] && (result.drift || !complete)) this.markFailed();

    const rows = items.flatMap(toRows);
    const columns: Column<Row>[] = [
      { header: 'cluster', get: (r) => r.item.cluster, cluster: true },
      { header: 'namespace', get: (r) => r.item.namespace ?? '', wide: true },
      {
        header: 'diff',
        get: (r) => r.change,
        color: (r, k) => (r.change === '+' ? k.green : r.change === '-' ? k.red : undefined),
      },
      { header: 'scope', get: (r) => r.scope },
      { header: 'resource', get: (r) => r.what },
      { header: 'resource names', get: (r) => (r.change ? bracketed(r.resourceNames) : '') },
      { header: 'verbs', get: (r) => (r.change ? bracketed(r.verbs) : '') },
      ...errorColumn(rows, (r) => r.item),
    ];
    const compared =
      baseline === undefined
        ? `${counted(answered.size, 'cluster')} compared with each other`
        : `${counted(answered.size - 1, 'cluster')} compared with ${baseline}`;
    await this.render(result, {
      rows,
      columns,
      // -o name: the clusters that differ.
      names: drifted.map((i) => i.cluster),
      notes: [
        ...items
          .filter((i) => i.incomplete)
          .map(
            (i) =>
              `warning: ${i.cluster}: the rules are incomplete, a difference may be missing${i.evaluationError ? `: ${i.evaluationError}` : ''}`,
          ),
        ...(baselineFailed ? [`error: the baseline ${baseline} did not answer: nothing was compared`] : []),
        ...(answered.size < 2 && !baselineFailed
          ? ['error: fewer than two clusters answered: nothing was compared']
          : []),
        ...(answered.size >= 2 && !baselineFailed
          ? [
              result.drift
                ? driftNote(
                    drifted.map((i) => i.cluster),
                    answered.size,
                    baseline,
                    compared,
                  )
                : `no drift: ${compared} grant the same`,
            ]
          : []),
      ],
      failures: items,
    });
    return result;
  }

  /** The baseline resolved as -c resolves a name (full or unambiguous short name), and one of the selected clusters. */
  private async baselineAmong(wanted: string, selected: string[]): Promise<string> {
    let name: string;
    try {
      name = (await this.fleet.provider.get(wanted)).name;
    } catch (error) {
      throw new UsageError(`--baseline ${wanted}: ${(error as Error).message}`);
    }
    if (!selected.includes(name))
      throw new UsageError(
        `--baseline ${wanted}: ${name} is not among the selected clusters (${selected.join(', ')}); select it with -c, --all or -l`,
      );
    return name;
  }
}

/** Who differs: one cluster from the rest, or several (all of them when two disagree). */
function driftNote(drifted: string[], answered: number, baseline: string | undefined, compared: string): string {
  if (baseline === undefined && drifted.length === 1 && answered > 2)
    return `drift: ${drifted[0]} differs from the other ${answered - 1} (${compared})`;
  return `drift: ${drifted.join(', ')} ${drifted.length === 1 ? 'differs' : 'differ'} (${compared})`;
}

function resourceText(apiGroup: string, resource: string): string {
  return apiGroup === '' ? resource : `${resource}.${apiGroup}`;
}

function toRows(item: DiffItem): Row[] {
  if (!item.ok) return [{ item, change: '', scope: '', what: '', resourceNames: [], verbs: [] }];
  const side = (change: '+' | '-', rules?: NormalRules): Row[] => [
    ...(rules?.rules ?? []).map((r) => ({
      item,
      change,
      scope: r.scope,
      what: resourceText(r.apiGroup, r.resource),
      resourceNames: r.resourceNames,
      verbs: r.verbs,
    })),
    ...(rules?.nonResourceRules ?? []).map((r) => ({
      item,
      change,
      scope: 'cluster',
      what: r.url,
      resourceNames: [],
      verbs: r.verbs,
    })),
  ];
  return [...side('+', item.extra), ...side('-', item.missing)];
}
