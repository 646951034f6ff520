import { Args, Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlags } from '../../cli/flags.js';
import type { Column } from '../../cli/table.js';
import { errorColumn } from '../../cli/access-format.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import type { AccessQuery } from '../../access/can-i.js';
import { queryWarnings } from '../../access/can-i.js';
import type { Grant, PolicyRule } from '../../access/rbac-eval.js';
import { type LimitNote, type SubjectAnswer, type WhoCan, parseWhoCanQuery, whoCan } from '../../access/who-can.js';

/** The stable JSON shape of `auth who-can` (documented in docs/access.md). */
export type WhoCanItem = ClusterItem<Omit<WhoCan, 'warnings' | 'notes'>> & { warnings: string[]; notes: LimitNote[] };

export interface WhoCanList {
  kind: 'WhoCanList';
  query: AccessQuery;
  /** The namespace asked about when fixed for all clusters (-n), "" with --all-namespaces; absent: each context's. */
  namespace?: string;
  /** Whether every subject was confirmed with a SubjectAccessReview (false with --no-confirm). */
  confirm: boolean;
  warnings: string[];
  items: WhoCanItem[];
}

/** One table row: a grant of a subject on a cluster, or a cluster that could not answer. */
interface Row {
  item: WhoCanItem;
  subject?: SubjectAnswer;
  grant?: Grant;
}

export default class AuthWhoCan extends BaseCommand<typeof AuthWhoCan> {
  static summary =
    'List who may do something (users, groups, ServiceAccounts), with the binding, role and rule that allow it.';
  static description = `Reads each cluster's RBAC objects (ClusterRoles, ClusterRoleBindings, and the Roles and RoleBindings of the namespace asked about) and lists every subject they allow to perform VERB on RESOURCE, each with its provenance: binding → role → rule. Wildcards, resourceNames, subresources (pods/exec) and non-resource URLs (/healthz) are matched as the RBAC authorizer matches them; aggregated ClusterRoles are read with the rules kube-controller-manager filled in, and the source ClusterRoles are named.

Every subject is then confirmed with a SubjectAccessReview, the authorizer's own answer for that subject (needs "create subjectaccessreviews"; --no-confirm skips it). A subject RBAC allows but the authorizer refuses, or reviews that could not be made, are warnings and exit 1.

What RBAC objects cannot show is always said: system:masters (allowed everything), the Node authorizer, webhook authorizers, and bindings the caller may not list (a warning per list).

RESOURCE/SUB is a subresource here (pods/exec), as RBAC rules write it; the name is the NAME argument. The namespace is -n, else the context's namespace, else "default"; --all-namespaces reads RoleBindings of every namespace. Cluster-scoped resources and non-resource URLs count ClusterRoleBindings only, as the authorizer does. (-A selects all clusters in fleet.)`;

  static examples = [
    '<%= config.bin %> auth who-can delete secrets -n prod',
    '<%= config.bin %> auth who-can create pods/exec --all-namespaces --all -o json',
    '<%= config.bin %> auth who-can get configmaps app-config -n team-a',
    '<%= config.bin %> auth who-can get /healthz -l env=prod',
  ];

  static args = {
    verb: Args.string({ description: 'Verb: get, list, create, delete, impersonate, ... or "*".', required: true }),
    resource: Args.string({
      description: 'Resource (pods, deployments.apps, pods/exec, "*") or a non-resource URL (/healthz).',
      required: true,
    }),
    name: Args.string({ description: 'Object name (rules limited by resourceNames count only for a name).' }),
  };

  static flags = {
    ...fleetFlags,
    namespace: Flags.string({
      char: 'n',
      description: 'Namespace to ask about (default: the context\'s namespace, else "default").',
    }),
    'all-namespaces': Flags.boolean({
      description: 'Ask about every namespace: RoleBindings of all namespaces count, each grant says where.',
      exclusive: ['namespace'],
    }),
    subresource: Flags.string({ description: 'Subresource, e.g. log, exec, status, scale (or write RESOURCE/SUB).' }),
    confirm: Flags.boolean({
      description: 'Confirm every subject with a SubjectAccessReview on the live server (--no-confirm skips it).',
      allowNo: true,
      default: true,
    }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags };
  }

  async run(): Promise<WhoCanList> {
    const o = whoCanOptions(this.flags, this.args);
    const { query, namespace: fixed } = o;
    const results = await this.overClusters(({ client, ref }) =>
      whoCan(client, query, {
        namespace: o.allNamespaces ? undefined : (fixed ?? client.context.namespace ?? 'default'),
        confirm: o.confirm,
        source: ref.source,
      }),
    );
    const items: WhoCanItem[] = results.map((r) =>
      toItem(r, (v) => v, { warnings: [] as string[], notes: [] as LimitNote[] }),
    );
    const result: WhoCanList = {
      kind: 'WhoCanList',
      query,
      ...(fixed === undefined ? {} : { namespace: fixed }),
      confirm: o.confirm,
      warnings: queryWarnings(query),
      items,
    };
    // A subject the authorizer refused, reviews that could not be made, or a namespace that does not exist (a typo answers
    // another question): the list is not what it claims to be.
    if (
      items.some(
        (i) =>
          i.confirmation === 'failed' ||
          i.namespaceExists === false ||
          (i.subjects ?? []).some((s) => s.confirmed === false),
      )
    )
      this.markFailed();

    const rows: Row[] = items.flatMap((item) =>
      !item.ok
        ? [{ item }]
        : (item.subjects ?? []).flatMap((subject) => subject.grants.map((grant) => ({ item, subject, grant }))),
    );
    const columns: Column<Row>[] = [
      { header: 'cluster', get: (r) => r.item.cluster, cluster: true },
      { header: 'kind', get: (r) => r.subject?.kind ?? '' },
      {
        header: 'subject',
        get: (r) =>
          r.subject ? (r.subject.namespace ? `${r.subject.namespace}/${r.subject.name}` : r.subject.name) : '',
      },
      { header: 'namespace', get: (r) => (r.grant ? r.grant.namespace || '*' : '') },
      {
        header: 'binding',
        shrink: 'first',
        get: (r) => (r.grant ? `${r.grant.binding.kind}/${r.grant.binding.name}` : ''),
      },
      { header: 'role', shrink: 'first', get: (r) => (r.grant ? roleText(r.grant) : '') },
      { header: 'rule', get: (r) => (r.grant ? ruleText(r.grant.rule) : ''), wide: true },
      {
        header: 'confirmed',
        get: (r) => (r.subject ? (r.subject.confirmed === undefined ? '-' : r.subject.confirmed ? 'yes' : 'NO') : ''),
        color: (r, k) => (r.subject?.confirmed === false ? k.red : undefined),
      },
      ...errorColumn(rows, (r) => r.item),
    ];
    await this.render(result, {
      rows,
      columns,
      // -o name: one line per subject and cluster, kind/name (kubectl's way of naming objects).
      names: items.flatMap((i) =>
        (i.subjects ?? []).map((s) => `${s.kind}/${s.namespace ? `${s.namespace}/` : ''}${s.name}`),
      ),
      notes: [
        ...result.warnings.map((w) => `warning: ${w}`),
        ...items
          .filter((i) => i.ok && (i.subjects ?? []).length === 0)
          .map((i) => `note: ${i.cluster}: no subject found`),
        ...items.flatMap((i) => i.warnings.map((w) => `warning: ${i.cluster}: ${w}`)),
        ...items
          .filter((i) => i.confirmation === 'failed')
          .map(
            (i) =>
              `warning: ${i.cluster}: the subjects are not confirmed: ${i.confirmationError} (--no-confirm to skip the reviews)`,
          ),
        ...noteLines(items),
      ],
      failures: items,
    });
    return result;
  }
}

/** What `auth who-can` asks, from its flags and arguments, checked before any cluster is asked. */
export interface WhoCanOptions {
  query: AccessQuery;
  /** The namespace asked about on every cluster: '' for --all-namespaces; undefined: each context's namespace. */
  namespace?: string;
  /** --all-namespaces: RoleBindings of every namespace count. */
  allNamespaces: boolean;
  /** Confirm each subject with a SubjectAccessReview (--no-confirm: false). */
  confirm: boolean;
}

export function whoCanOptions(
  flags: BaseFlags<typeof AuthWhoCan>,
  args: { verb: string; resource: string; name?: string },
): WhoCanOptions {
  const query = parseWhoCanQuery({
    verb: args.verb,
    resource: args.resource,
    name: args.name,
    subresource: flags.subresource,
  });
  const allNamespaces = Boolean(flags['all-namespaces']);
  return { query, namespace: allNamespaces ? '' : flags.namespace, allNamespaces, confirm: flags.confirm };
}

function roleText(g: Grant): string {
  const r = g.role;
  let text = `${r.kind}/${r.name}`;
  if (r.aggregated) text += r.aggregatedFrom ? ` (aggregated from ${r.aggregatedFrom.join(',')})` : ' (aggregated)';
  return text;
}

/** A rule in one line: verbs, then resources with their group (or URLs), then names when limited. */
export function ruleText(rule: PolicyRule): string {
  const verbs = (rule.verbs ?? []).join(',');
  if ((rule.nonResourceURLs ?? []).length > 0) return `${verbs} ${(rule.nonResourceURLs ?? []).join(',')}`;
  const groups = rule.apiGroups ?? [];
  const resources = (rule.resources ?? []).flatMap((res) => groups.map((g) => (g === '' ? res : `${res}.${g}`)));
  const names = (rule.resourceNames ?? []).length > 0 ? ` names=${(rule.resourceNames ?? []).join(',')}` : '';
  return `${verbs} ${resources.join(',')}${names}`;
}

/** Each limit note once, with the clusters it applies to; the same three would otherwise repeat for every cluster. */
function noteLines(items: WhoCanItem[]): string[] {
  const byMessage = new Map<string, string[]>();
  for (const item of items)
    for (const n of item.notes) byMessage.set(n.message, [...(byMessage.get(n.message) ?? []), item.cluster]);
  const total = items.filter((i) => i.ok).length;
  return [...byMessage].map(([message, clusters]) => {
    const shown =
      clusters.length === total && total > 1
        ? 'every cluster'
        : clusters.length > 3
          ? `${clusters.slice(0, 3).join(', ')} and ${clusters.length - 3} more`
          : clusters.join(', ');
    return `note: ${shown}: beyond these bindings: ${message}`;
  });
}
