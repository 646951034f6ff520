import {BaseCommand} from '../../cli/base-command.js'
import {formatAge} from '../../cli/duration.js'
import type {Column} from '../../cli/table.js'
import {providersFromFlags} from '../../providers/registry.js'
import {type ClusterSummary, describeRef} from '../../providers/summary.js'

export interface ClusterList {
  kind: 'ClusterList'
  items: ClusterSummary[]
}

export default class ClustersList extends BaseCommand<typeof ClustersList> {
  static summary = 'List the clusters fleet can reach and how each is reached.'
  static description = `Reads kubeconfig files with kubectl's loading rules (KUBECONFIG list, ~/.kube/config) or the files and directories
given with --kubeconfig. Each context is a cluster named <path>+<context>; the context name alone works wherever it is
unambiguous. No cluster is contacted.`

  static examples = [
    '<%= config.bin %> clusters list',
    '<%= config.bin %> clusters list --kubeconfig examples/fleet -o wide',
    'KUBECONFIG=a.yaml:b.yaml <%= config.bin %> clusters list -o json',
  ]

  async run(): Promise<ClusterList> {
    const provider = providersFromFlags({kubeconfig: this.kubeconfigPaths})
    let refs = await provider.list()
    if (this.flags.context) refs = refs.filter((r) => r.source.context === this.flags.context)
    const items = await Promise.all(refs.map((r) => describeRef(r)))
    const result: ClusterList = {kind: 'ClusterList', items: items.map(({credentials: _c, ...summary}) => summary)}
    const columns: Column<ClusterSummary>[] = [
      // kubectl's CURRENT column, shown only when the loading rules name a current context.
      ...(items.some((c) => c.current) ? [{header: 'current', get: (c: ClusterSummary) => (c.current ? '*' : '')}] : []),
      {header: 'name', get: (c) => c.name},
      {header: 'provider', get: (c) => c.provider},
      {header: 'server', get: (c) => c.server ?? '<none>'},
      {header: 'auth', get: (c) => c.auth},
      {header: 'ready', get: (c) => (c.ready ? 'True' : 'False'), color: (c, k) => (c.ready ? undefined : k.red)},
      {header: 'source', get: (c) => (c.source.path ? `${c.source.path}` : ''), wide: true},
      {header: 'ca', get: (c) => c.ca ?? '', wide: true, color: (c, k) => (c.ca === 'insecure' ? k.yellow : undefined)},
      {header: 'expires', get: (c) => (c.expires ? `${c.expires} (${formatAge(c.expires)})` : ''), wide: true,
        color: (c, k) => (c.expires && Date.parse(c.expires) < Date.now() ? k.red : undefined)},
      {header: 'reason', get: (c) => c.reason ?? '', wide: true},
    ]
    const notReady = items.filter((c) => !c.ready)
    this.render(result, {
      rows: result.items,
      columns,
      name: (c) => c.name,
      notes: this.format === 'table' && notReady.length > 0 ? notReady.map((c) => `warning: ${c.name}: ${c.reason}`) : [],
    })
    return result
  }
}
