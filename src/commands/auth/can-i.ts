import { Args, Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags, type FlagGroups } from '../../cli/base-command.js';
import type { OutputFormat } from '../../cli/parse.js';
import { UsageError } from '../../base/errors.js';
import { fleetFlags, impersonationFlags } from '../../cli/flags.js';
import { type Impersonation, describeImpersonation } from '../../kube/client.js';
import type { Column } from '../../cli/table.js';
import type { AccessAnswer } from '../../access/can-i.js';
import { type AccessQuery, canI, parseAccessQuery, queryWarnings } from '../../access/can-i.js';
import { errorColumn } from '../../cli/access-format.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import type { ClusterResult } from '../../fleet/runner.js';

/** The stable JSON shape of `auth can-i` (documented in docs/access.md). */
export type AccessReviewItem = ClusterItem<Omit<AccessAnswer, 'warnings'>> & { warnings: string[] };

export interface AccessReviewList {
  kind: 'AccessReviewList';
  /** The identity asked about (--as, --as-group, --as-uid); absent when the credential answers for itself. */
  as?: Impersonation;
  query: AccessQuery;
  /** "" when asked with --all-namespaces; absent when each cluster used its context's namespace. */
  namespace?: string;
  warnings: string[];
  items: AccessReviewItem[];
}

export default class AuthCanI extends BaseCommand<typeof AuthCanI> {
  static summary = 'Check whether you may do something, on one cluster or across the fleet.';
  static description = `Asks each cluster's authorizer (SelfSubjectAccessReview) whether the current identity may perform VERB on RESOURCE, like kubectl auth can-i. RESOURCE may carry its group (deployments.apps), a name (pods/web-0), or be a non-resource URL (/healthz).

Short names, singular names and kinds are resolved through each cluster's discovery, and cluster-scoped resources are asked about cluster-wide. The namespace is -n, else each context's namespace, else "default".

Exit 0 when every cluster answers yes, 1 when any says no or fails; with -q nothing is printed. (-A selects all clusters in fleet, so all namespaces is --all-namespaces.)`;

  static examples = [
    '<%= config.bin %> auth can-i create deployments -n team-a',
    '<%= config.bin %> auth can-i get secrets --all-namespaces --all',
    '<%= config.bin %> auth can-i create pods --subresource exec -l env=prod',
    '<%= config.bin %> auth can-i get /healthz -A -q && echo "healthz readable everywhere"',
    '<%= config.bin %> auth can-i list secrets --all --as system:serviceaccount:ci:deployer',
  ];

  static args = {
    verb: Args.string({ description: 'Verb: get, list, create, delete, impersonate, ... or "*".', required: true }),
    resource: Args.string({
      description: 'Resource (pods, deployments.apps, pods/NAME, "*") or a non-resource URL (/healthz).',
      required: true,
    }),
    name: Args.string({ description: 'Object name.' }),
  };

  static flags = {
    ...fleetFlags,
    ...impersonationFlags,
    namespace: Flags.string({
      char: 'n',
      description: 'Namespace to ask about (default: the context\'s namespace, else "default").',
    }),
    'all-namespaces': Flags.boolean({ description: 'Ask about all namespaces.', exclusive: ['namespace'] }),
    subresource: Flags.string({ description: 'Subresource, e.g. log, exec, status, scale.' }),
    quiet: Flags.boolean({
      char: 'q',
      description: 'Print nothing; answer by exit code only (0 yes everywhere, 1 otherwise).',
    }),
  };

  // -q is for scripts: no progress line either.
  protected get machineOutput(): boolean {
    return super.machineOutput || this.flags?.quiet === true;
  }

  protected flagGroups(): FlagGroups {
    return { selection: this.flags, impersonation: this.flags };
  }

  async run(): Promise<AccessReviewList | undefined> {
    const { query, namespace: fixed, quiet } = canIOptions(this.flags, this.args, this.format);
    const item = (r: ClusterResult<AccessAnswer>): AccessReviewItem =>
      toItem(r, (v) => v, { warnings: [] as string[] });
    const results = await this.overClusters(
      ({ client }) => canI(client, query, fixed ?? client.context.namespace ?? 'default'),
      item,
    );
    const items: AccessReviewItem[] = results.map(item);
    const result: AccessReviewList = {
      kind: 'AccessReviewList',
      ...(this.impersonation ? { as: this.impersonation } : {}),
      query,
      ...(fixed === undefined ? {} : { namespace: fixed }),
      warnings: queryWarnings(query),
      items,
    };
    // Yes only when every cluster said yes, and at least one was asked: never a vacuous yes.
    if (items.length === 0 || items.some((i) => !i.allowed)) this.markFailed();
    if (quiet) return undefined;

    const columns: Column<AccessReviewItem>[] = [
      { header: 'cluster', get: (i) => i.cluster, cluster: true },
      {
        header: 'allowed',
        get: (i) => (i.error ? 'error' : i.allowed ? 'yes' : 'no'),
        color: (i, k) => (i.allowed ? k.green : k.red),
      },
      { header: 'namespace', get: (i) => namespaceOf(i), wide: true },
      { header: 'resource', get: (i) => resourceOf(i), wide: true },
      { header: 'reason', shrink: 'first', get: (i) => [i.reason, i.evaluationError].filter(Boolean).join('; ') },
      ...errorColumn(items, (i) => i),
    ];
    await this.render(result, {
      rows: items,
      columns,
      // -o name: the clusters that said yes, for scripts ("where may I deploy?").
      names: items.filter((i) => i.allowed).map((i) => i.cluster),
      notes: [
        ...(result.as ? [`note: the answers are for ${describeImpersonation(result.as)} (impersonated)`] : []),
        ...result.warnings.map((w) => `warning: ${w}`),
        ...items.flatMap((i) => i.warnings.map((w) => `warning: ${i.cluster}: ${w}`)),
      ],
      failures: items,
    });
    return result;
  }
}

/** What `auth can-i` asks, from its flags and arguments, checked before any cluster is asked. */
export interface CanIOptions {
  query: AccessQuery;
  /** The namespace asked about on every cluster: '' for --all-namespaces; undefined: each context's namespace. */
  namespace?: string;
  /** -q: the answer by exit code only. */
  quiet: boolean;
}

export function canIOptions(
  flags: BaseFlags<typeof AuthCanI>,
  args: { verb: string; resource: string; name?: string },
  format: OutputFormat,
): CanIOptions {
  if (flags.quiet && format !== 'table')
    throw new UsageError('-q/--quiet prints nothing, so it cannot be combined with -o or --json');
  const query = parseAccessQuery({
    verb: args.verb,
    resource: args.resource,
    name: args.name,
    subresource: flags.subresource,
  });
  return { query, namespace: flags['all-namespaces'] ? '' : flags.namespace, quiet: Boolean(flags.quiet) };
}

function namespaceOf(i: AccessReviewItem): string {
  if (!i.attributes || !('resourceAttributes' in i.attributes)) return '';
  return i.attributes.resourceAttributes.namespace || '*';
}

function resourceOf(i: AccessReviewItem): string {
  if (!i.attributes) return '';
  if ('nonResourceAttributes' in i.attributes) return i.attributes.nonResourceAttributes.path;
  const a = i.attributes.resourceAttributes;
  let text = a.group ? `${a.resource}.${a.group}` : a.resource;
  if (a.subresource) text += `/${a.subresource}`;
  if (a.name) text += ` ${a.name}`;
  return text;
}
