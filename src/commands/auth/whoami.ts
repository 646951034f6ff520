import {BaseCommand} from '../../cli/base-command.js'
import {fleetFlags} from '../../cli/flags.js'
import type {Column} from '../../cli/table.js'
import {errorColumn} from '../../cli/access-format.js'
import {type ClusterItem, toItem} from '../../fleet/items.js'
import {type UserInfo, type WhoAmIWarning, whoami} from '../../access/whoami.js'

/** The stable JSON shape of `auth whoami` (documented in docs/access.md). */
export type WhoAmIItem = ClusterItem<{user: UserInfo}> & {warnings: WhoAmIWarning[]}

export interface WhoAmIList {
  kind: 'WhoAmIList'
  items: WhoAmIItem[]
}

export default class AuthWhoami extends BaseCommand<typeof AuthWhoami> {
  static summary = 'Show who you are on each cluster, and warn about identities with unrestricted power.'
  static description = `Asks each cluster's API server who the credential is (SelfSubjectReview, authentication.k8s.io v1, falling back to v1beta1 and v1alpha1 like kubectl) and whether that identity may do everything: membership of system:masters, or permission for every verb on every resource in every API group, cluster-wide.

Without --cluster, --all or --selector, the current context is used. Exit 1 when any cluster could not answer.`

  static examples = [
    '<%= config.bin %> auth whoami',
    '<%= config.bin %> auth whoami --all -o wide',
    '<%= config.bin %> auth whoami -l env=prod -o json',
  ]

  static flags = {...fleetFlags}

  async run(): Promise<WhoAmIList> {
    const results = await this.overClusters(({client}) => whoami(client))
    const result: WhoAmIList = {
      kind: 'WhoAmIList',
      items: results.map((r) => toItem(r, (v) => ({user: v.user, warnings: v.warnings}), {warnings: [] as WhoAmIWarning[]})),
    }
    const columns: Column<WhoAmIItem>[] = [
      {header: 'cluster', get: (i) => i.cluster},
      {header: 'username', get: (i) => i.user?.username ?? ''},
      {header: 'uid', get: (i) => i.user?.uid ?? ''},
      {header: 'groups', get: (i) => i.user?.groups.join(',') ?? ''},
      {header: 'extra', get: (i) => formatExtra(i.user?.extra ?? {}), wide: true},
      {header: 'warning', get: (i) => i.warnings.map((w) => w.code).join(','), color: (i, k) => (i.warnings.length > 0 ? k.yellow : undefined)},
      ...errorColumn(result.items, (i) => i),
    ]
    this.render(result, {
      rows: result.items,
      columns,
      // The usernames, one per cluster that answered: `fleet auth whoami -o name` is the scriptable form.
      names: result.items.flatMap((i) => (i.user ? [i.user.username] : [])),
      failures: result.items,
    })
    return result
  }
}

function formatExtra(extra: Record<string, string[]>): string {
  return Object.entries(extra)
    .map(([k, v]) => `${k}=${v.join(',')}`)
    .join(';')
}
