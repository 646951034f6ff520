import { Flags } from '@oclif/core';

import { BaseCommand } from '../../cli/base-command.js';
import { formatAge } from '../../base/duration.js';
import type { Column } from '../../cli/table.js';
import { toErrorInfo } from '../../base/errors.js';
import { listClusters } from '../../clusters/list.js';
import { type ClusterSummary, sourceText } from '../../clusters/summary.js';

export interface ClusterList {
  kind: 'ClusterList';
  items: ClusterSummary[];
}

export default class ClustersList extends BaseCommand<typeof ClustersList> {
  static summary = 'List the clusters fleet can reach and how each is reached.';
  static description = `Lists the clusters of every provider in the fleet configuration (--fleet-config, ./fleet.yaml, or $XDG_CONFIG_HOME/fleet/config.yaml), or of one with --provider, named as multicluster-runtime names them (<provider>#<name> when several providers are configured).

Without a fleet configuration, or with --kubeconfig, reads kubeconfig files with kubectl's loading rules; each context is a cluster named <path>+<context>. Tables show such a cluster by the shortest name --cluster accepts for it (its context name when no other cluster has it); -o json, yaml and name keep the full name.

Hub-backed providers read their hub; member clusters are contacted only with --live, which reads each cluster's id (ClusterProperty cluster.clusterset.k8s.io, else the kube-system namespace UID) and marks clusters it cannot reach not ready.

A cluster that is not ready is listed with the reason; --strict makes that exit 1.`;

  static examples = [
    '<%= config.bin %> clusters list',
    '<%= config.bin %> clusters list --provider cluster-api -o wide',
    '<%= config.bin %> clusters list --fleet-config fleet.yaml --live --strict',
    '<%= config.bin %> clusters list --kubeconfig examples/fleet -o wide',
  ];

  static flags = {
    live: Flags.boolean({
      description: 'Contact each cluster: read its id and mark the clusters that cannot be reached not ready.',
    }),
    strict: Flags.boolean({ description: 'Exit 1 when any cluster is not ready.' }),
    selector: Flags.string({
      char: 'l',
      description: 'Only clusters whose labels match this selector (e.g. env=prod, fleet.dev/namespace=team-a).',
    }),
  };

  async run(): Promise<ClusterList> {
    const listing = await listClusters(this.fleet.provider, {
      context: this.flags.context,
      selector: this.flags.selector,
      live: this.flags.live ? this.fleet.runOptions('0') : undefined,
    });
    const items = listing.items;
    const result: ClusterList = { kind: 'ClusterList', items };
    const anyNotReady = items.some((c) => !c.ready);
    const columns: Column<ClusterSummary>[] = [
      // kubectl's CURRENT column, shown only when the loading rules name a current context.
      ...(items.some((c) => c.current)
        ? [{ header: 'current', get: (c: ClusterSummary) => (c.current ? '*' : '') }]
        : []),
      { header: 'name', get: (c) => c.name, cluster: true },
      { header: 'provider', get: (c) => c.provider },
      { header: 'server', get: (c) => c.server ?? '<none>', shrink: 'first' },
      { header: 'auth', get: (c) => c.auth },
      { header: 'namespace', get: (c) => c.namespace ?? '', wide: true },
      {
        header: 'ready',
        shrink: 'never',
        get: (c) => (c.ready ? 'True' : 'False'),
        color: (c, k) => (c.ready ? undefined : k.red),
      },
      ...(items.some((c) => c.clusterId) ? [{ header: 'id', get: (c: ClusterSummary) => c.clusterId ?? '' }] : []),
      { header: 'reason', get: (c) => c.reason ?? '', wide: !anyNotReady, shrink: 'first' },
      { header: 'source', get: (c) => sourceText(c.source), wide: true },
      {
        header: 'ca',
        get: (c) => c.ca ?? '',
        wide: true,
        color: (c, k) => (c.ca === 'insecure' ? k.yellow : undefined),
      },
      {
        header: 'expires',
        get: (c) => (c.expires ? `${c.expires} (${formatAge(c.expires)})` : ''),
        wide: true,
        color: (c, k) => (c.expires && Date.parse(c.expires) < Date.now() ? k.red : undefined),
      },
    ];
    // A provider that could not list its clusters is a failure even without --strict.
    if (listing.failures.length > 0 || (this.flags.strict && anyNotReady)) this.markFailed();
    await this.render(result, {
      rows: items,
      columns,
      // -o name: the clusters only; a provider that could not list is an error line, not a name.
      names: listing.clusters.map((c) => c.name),
      failures: listing.failures.map((f) => ({ error: toErrorInfo(f.error) })),
      notes: items.length === 0 ? [`No clusters found in ${this.fleet.provider.describe()}.`] : [],
    });
    return result;
  }
}
