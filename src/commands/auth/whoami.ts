import { BaseCommand, type FlagGroups } from '../../cli/base-command.js';
import { fleetFlags, impersonationFlags } from '../../cli/flags.js';
import type { Impersonation } from '../../kube/client.js';
import type { Column } from '../../cli/table.js';
import { errorColumn } from '../../cli/access-format.js';
import { type ClusterItem, toItem } from '../../fleet/items.js';
import { type UserInfo, type WhoAmI, type WhoAmIWarning, whoami } from '../../access/whoami.js';
import type { ClusterResult } from '../../fleet/runner.js';
import type { IdentityNote } from '../../access/front-proxy.js';

/** The stable JSON shape of `auth whoami` (documented in docs/access.md). */
export type WhoAmIItem = ClusterItem<{ user: UserInfo }> & { warnings: WhoAmIWarning[]; notes: IdentityNote[] };

export interface WhoAmIList {
  kind: 'WhoAmIList';
  /** The identity asked about (--as, --as-group, --as-uid); absent when the credential answers for itself. */
  as?: Impersonation;
  items: WhoAmIItem[];
}

export default class AuthWhoami extends BaseCommand<typeof AuthWhoami> {
  static summary = 'Show who you are on each cluster, and warn about identities with unrestricted power.';
  static description = `Asks each cluster's API server who the credential is (SelfSubjectReview, authentication.k8s.io v1, falling back to v1beta1 and v1alpha1 like kubectl) and whether that identity may do everything: membership of system:masters, or permission for every verb on every resource in every API group, cluster-wide.

For a kcp workspace reached through kcp's front proxy, a note says which groups the proxy drops before the shard sees the request (system:masters among them); a client certificate whose groups are missing from the answer is noted for any cluster.

Without --cluster, --all or --selector, the current context is used. Exit 1 when any cluster could not answer.`;

  static examples = [
    '<%= config.bin %> auth whoami',
    '<%= config.bin %> auth whoami --all -o wide',
    '<%= config.bin %> auth whoami -l env=prod -o json',
    '<%= config.bin %> auth whoami --all --as system:serviceaccount:ci:deployer',
  ];

  static flags = { ...fleetFlags, ...impersonationFlags };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags, impersonation: this.flags };
  }

  async run(): Promise<WhoAmIList> {
    const item = (r: ClusterResult<WhoAmI>): WhoAmIItem =>
      toItem(r, (v) => ({ user: v.user, warnings: v.warnings, notes: v.notes }), {
        warnings: [] as WhoAmIWarning[],
        notes: [] as IdentityNote[],
      });
    const results = await this.overClusters(({ client, ref }) => whoami(client, ref.source), item);
    const result: WhoAmIList = {
      kind: 'WhoAmIList',
      ...(this.impersonation ? { as: this.impersonation } : {}),
      items: results.map(item),
    };
    const noted = result.items.some((i) => i.notes.length > 0);
    const columns: Column<WhoAmIItem>[] = [
      { header: 'cluster', get: (i) => i.cluster, cluster: true },
      { header: 'username', get: (i) => i.user?.username ?? '' },
      { header: 'uid', get: (i) => i.user?.uid ?? '' },
      { header: 'groups', shrink: 'first', get: (i) => i.user?.groups.join(',') ?? '' },
      { header: 'extra', get: (i) => formatExtra(i.user?.extra ?? {}), wide: true },
      {
        header: 'warning',
        shrink: 'never',
        get: (i) => i.warnings.map((w) => w.code).join(','),
        color: (i, k) => (i.warnings.length > 0 ? k.yellow : undefined),
      },
      ...(noted ? [{ header: 'note', get: (i: WhoAmIItem) => i.notes.map((n) => n.code).join(',') }] : []),
      ...errorColumn(result.items, (i) => i),
    ];
    await this.render(result, {
      rows: result.items,
      columns,
      // The usernames, one per cluster that answered: `fleet auth whoami -o name` is the scriptable form.
      names: result.items.flatMap((i) => (i.user ? [i.user.username] : [])),
      failures: result.items,
      notes: noteLines(result.items),
    });
    return result;
  }
}

function formatExtra(extra: Record<string, string[]>): string {
  return Object.entries(extra)
    .map(([k, v]) => `${k}=${v.join(',')}`)
    .join(';');
}

/** Each note once, with the clusters it applies to: over a workspace tree the same note would otherwise repeat per row. */
function noteLines(items: WhoAmIItem[]): string[] {
  const byMessage = new Map<string, string[]>();
  for (const item of items)
    for (const n of item.notes) byMessage.set(n.message, [...(byMessage.get(n.message) ?? []), item.cluster]);
  return [...byMessage].map(([message, clusters]) => {
    const shown =
      clusters.length > 3 ? `${clusters.slice(0, 3).join(', ')} and ${clusters.length - 3} more` : clusters.join(', ');
    return `note: ${shown}: ${message}`;
  });
}
