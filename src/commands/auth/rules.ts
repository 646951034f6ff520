import { Flags } from '@oclif/core';

import { BaseCommand, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlags, impersonationFlags } from '../../cli/flags.js';
import { type Impersonation, describeImpersonation } from '../../kube/client.js';
import type { Column } from '../../cli/table.js';
import { bracketed, errorColumn } from '../../cli/access-format.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import type { ClusterResult } from '../../fleet/runner.js';
import { type RiskCode, summarizeRisks } from '../../access/risk.js';
import { type RulesReview, failsRiskCheck, qualifiedResources, rulesReview } from '../../access/rules.js';

/** The stable JSON shape of `auth rules` (documented in docs/access.md). */
export type RulesItem = ClusterItem<RulesReview>;

export interface RulesReviewList {
  kind: 'RulesReviewList';
  /** The identity asked about (--as, --as-group, --as-uid); absent when the credential answers for itself. */
  as?: Impersonation;
  items: RulesItem[];
}

/** One table row: a rule of a cluster, or a cluster that could not answer. */
interface Row {
  item: RulesItem;
  resources: string[];
  nonResourceURLs: string[];
  resourceNames: string[];
  verbs: string[];
  risks: RiskCode[];
}

export default class AuthRules extends BaseCommand<typeof AuthRules> {
  static summary = 'List what you may do in a namespace on each cluster, and name the dangerous grants.';
  static description = `Asks each cluster for the rules that apply to the current identity in one namespace (SelfSubjectRulesReview; cluster-wide grants included) and names the risky ones: wildcards in verbs, resources or API groups, reading Secrets, escalate, bind, impersonate, creating ServiceAccount tokens, pods/exec, nodes/proxy, approving certificate requests.

A second review, of a namespace that cannot exist, says which rules are cluster-wide (ClusterRoleBindings). A rule granted only in the namespace (a RoleBinding) cannot reach what the API server checks cluster-wide: "*" on "*.*" there is namespace-admin, not cluster-admin, and it carries no nodes/proxy, certificate approval or impersonation of users and groups; its non-resource URLs are not listed, as the authorizer never applies them.

The namespace is -n, else each context's namespace, else "default". A rules review can be incomplete (some authorizers cannot list rules); that is shown, and for decisions use "auth can-i".

Exit 1 when any cluster could not answer, or with --fail-on-risk when any risk was found.`;

  static examples = [
    '<%= config.bin %> auth rules',
    '<%= config.bin %> auth rules -n team-a --all',
    '<%= config.bin %> auth rules --all --fail-on-risk -o json',
  ];

  static flags = {
    ...fleetFlags,
    ...impersonationFlags,
    namespace: Flags.string({
      char: 'n',
      description: 'Namespace whose rules to list (default: the context\'s namespace, else "default").',
    }),
    'fail-on-risk': Flags.boolean({ description: 'Exit 1 when any cluster grants a risky permission (for CI).' }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags, impersonation: this.flags };
  }

  async run(): Promise<RulesReviewList> {
    const item = (r: ClusterResult<RulesReview>) => toItem(r, (v) => v);
    const results = await this.overClusters(
      ({ client }) => rulesReview(client, this.flags.namespace ?? client.context.namespace ?? 'default'),
      item,
    );
    const result: RulesReviewList = {
      kind: 'RulesReviewList',
      ...(this.impersonation ? { as: this.impersonation } : {}),
      items: results.map(item),
    };
    const risky = result.items.filter((i) => (i.risks?.length ?? 0) > 0);
    if (this.flags['fail-on-risk'] && failsRiskCheck(result.items)) this.markFailed();

    const rows = result.items.flatMap(toRows);
    const columns: Column<Row>[] = [
      { header: 'cluster', get: (r) => r.item.cluster, cluster: true },
      { header: 'namespace', get: (r) => r.item.namespace ?? '', wide: true },
      { header: 'resources', shrink: 'first', get: (r) => r.resources.join(',') },
      { header: 'non-resource urls', shrink: 'first', get: (r) => (r.item.ok ? bracketed(r.nonResourceURLs) : '') },
      { header: 'resource names', shrink: 'first', get: (r) => (r.item.ok ? bracketed(r.resourceNames) : '') },
      { header: 'verbs', get: (r) => (r.item.ok ? bracketed(r.verbs) : '') },
      {
        header: 'risk',
        get: (r) => r.risks.join(','),
        color: (r, k) => (r.risks.includes('cluster-admin') ? k.red : r.risks.length > 0 ? k.yellow : undefined),
      },
      ...errorColumn(rows, (r) => r.item),
    ];
    await this.render(result, {
      rows,
      columns,
      // -o name: the clusters where the identity holds a risky grant.
      names: risky.map((i) => i.cluster),
      notes: [
        ...(result.as ? [`note: the rules are those of ${describeImpersonation(result.as)} (impersonated)`] : []),
        ...result.items
          .filter((i) => i.incomplete)
          .map(
            (i) =>
              `warning: ${i.cluster}: the rules are incomplete${i.evaluationError ? `: ${i.evaluationError}` : ''}`,
          ),
        ...risky.map((i) => `risk: ${i.cluster} (namespace ${i.namespace}): ${summarizeRisks(i.risks!).join(', ')}`),
      ],
      failures: result.items,
    });
    return result;
  }
}

function toRows(item: RulesItem): Row[] {
  if (!item.ok) return [{ item, resources: [], nonResourceURLs: [], resourceNames: [], verbs: [], risks: [] }];
  const rows: Row[] = (item.resourceRules ?? []).map((rule, index) => ({
    item,
    resources: qualifiedResources(rule),
    nonResourceURLs: [],
    resourceNames: rule.resourceNames,
    verbs: rule.verbs,
    risks: summarizeRisks((item.risks ?? []).filter((f) => f.rule === index)),
  }));
  for (const rule of item.nonResourceRules ?? []) {
    rows.push({
      item,
      resources: [],
      nonResourceURLs: rule.nonResourceURLs,
      resourceNames: [],
      verbs: rule.verbs,
      risks: [],
    });
  }
  return rows;
}
