import {Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {UsageError} from '../../base/errors.js'
import type {Column} from '../../cli/table.js'
import {writeFileAtomic} from '../../kubeconfig/atomic-write.js'
import {checkWritableFile, writeError} from '../../base/files.js'
import {connectRef} from '../../workload-identity/connect.js'
import {connectCredsHub} from '../../creds/hubs.js'
import {parseServiceAccount} from '../../workload-identity/service-account.js'
import {
  type PlannedObject,
  ROLE_PRESETS,
  type SetupPlan,
  applySetup,
  defaultFluxConfigMapName,
  describeObject,
  planSetup,
  toYaml,
} from '../../workload-identity/setup.js'

/** The stable JSON shape of `wi setup` (docs/workload-identity.md). */
export interface WorkloadIdentitySetup extends SetupPlan {
  kind: 'WorkloadIdentitySetup'
  /** true after --apply (false: a plan only); dryRun with --dry-run. */
  applied: boolean
  dryRun: boolean
}

export default class WiSetup extends BaseCommand<typeof WiSetup> {
  static summary = "Set up workload identity: the hub's discovery RBAC, the target's RBAC, a Flux ConfigMap, and the target's AuthenticationConfiguration."
  static description = `Plans what makes a hub ServiceAccount's token work on a target cluster and prints it: on the hub, the binding that lets anyone read the issuer's discovery document and keys (the target fetches them without credentials), the ServiceAccount, and a Flux ConfigMap (provider: generic) for spec.kubeConfig.configMapRef; on the target, a binding of --role/--cluster-role to the mapped user (prefix + system:serviceaccount:NS:NAME). With --apply these objects are applied (server-side apply, field manager fleet; dry-run first, so nothing is half-created; read back afterwards). Always printed: the target's AuthenticationConfiguration jwt entry (apiserver.config.k8s.io/v1 for 1.34+, v1beta1 for 1.30-1.33, as the target reports its version), to be put where the target's API server reads --authentication-config.`

  static examples = [
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account flux-system/reconciler --role view',
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account tenant-a/deployer --role edit --namespace tenant-a --apply',
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account tenant-a/deployer --authentication-config-out auth-config.yaml',
  ]

  static flags = {
    hub: Flags.string({description: 'The cluster whose ServiceAccount issues the token (default: the hub by the rule of creds: --hub-kubeconfig/--hub-context, the fleet configuration\'s hub, else the current context).'}),
    'hub-kubeconfig': Flags.string({description: 'Hub kubeconfig, when --hub is not given.', exclusive: ['hub']}),
    'hub-context': Flags.string({description: 'Hub context, when --hub is not given.', exclusive: ['hub']}),
    target: Flags.string({description: 'The cluster that should accept the token.', required: true}),
    'service-account': Flags.string({description: 'The hub ServiceAccount, NAMESPACE/NAME.', required: true}),
    prefix: Flags.string({description: 'Username prefix the target gives hub identities (claimMappings.username.prefix).', default: 'hub:'}),
    role: Flags.string({description: 'Bind this built-in ClusterRole to the mapped user on the target.', options: [...ROLE_PRESETS], exclusive: ['cluster-role']}),
    'cluster-role': Flags.string({description: 'Bind this ClusterRole (of the target) to the mapped user.'}),
    namespace: Flags.string({char: 'n', description: 'Bind in this namespace of the target (repeatable; default: cluster-wide).', multiple: true}),
    audience: Flags.string({description: "Audience hub tokens are requested with (default: the target's server URL as written in its kubeconfig)."}),
    'flux-configmap': Flags.string({description: 'Name of the Flux ConfigMap on the hub, in the ServiceAccount\'s namespace (default: fleet-wi-<target>).'}),
    flux: Flags.boolean({description: 'Include the Flux ConfigMap.', default: true, allowNo: true}),
    'allow-risky': Flags.boolean({description: 'Bind a ClusterRole even when it amounts to cluster-admin.'}),
    'authentication-config-out': Flags.string({description: "Also write the target's AuthenticationConfiguration to this file."}),
    apply: Flags.boolean({description: 'Apply the hub and target objects (server-side apply, field manager fleet).'}),
    'dry-run': Flags.boolean({description: 'With --apply: ask the API servers to validate the objects without saving them.'}),
  }

  async run(): Promise<WorkloadIdentitySetup> {
    const {flags} = this
    if (flags['dry-run'] && !flags.apply) throw new UsageError('--dry-run only makes sense with --apply (without --apply nothing is changed anyway)')
    if (flags.namespace && !flags.role && !flags['cluster-role']) throw new UsageError('--namespace needs --role or --cluster-role (what to bind there)')
    if (flags.prefix.includes(' ')) throw new UsageError(`--prefix: "${flags.prefix}" contains a space`)
    const sa = parseServiceAccount(flags['service-account'])
    const out = flags['authentication-config-out']
    // Where the configuration goes is checked before any cluster is asked anything.
    if (out) await checkWritableFile(out, `--authentication-config-out ${out}`, 'a file for the AuthenticationConfiguration')
    const provider = this.provider()
    const targetRef = await provider.get(flags.target)
    const options = this.connection
    // --hub names a cluster; without it the hub is found as creds finds it (creds/hubs.ts), the same rule everywhere.
    const hubRef = flags.hub ? await provider.get(flags.hub) : undefined
    if (hubRef?.name === targetRef.name) throw new UsageError(`--target ${flags.target} is the hub itself`)
    const [hub, target] = await Promise.all([
      hubRef ? connectRef(hubRef, options) : connectCredsHub((await this.credsHubs(flags))[0].spec, options).then((client) => ({name: client.context.contextName, context: client.context, client})),
      connectRef(targetRef, options),
    ])
    if (!hubRef && hub.context.cluster.server === target.context.cluster.server) throw new UsageError(`--target ${flags.target} is the hub itself (${hub.name})`)
    const shortName = targetRef.aliases[0] ?? targetRef.name
    let plan = await planSetup({
      hub, target, targetShortName: shortName, serviceAccount: sa, prefix: flags.prefix, audience: flags.audience,
      clusterRole: flags['cluster-role'] ?? flags.role, namespaces: flags.namespace ?? [],
      fluxConfigMap: flags.flux ? (flags['flux-configmap'] ?? defaultFluxConfigMapName(shortName)) : undefined,
      allowRisky: flags['allow-risky'], options,
    })
    if (flags.apply) plan = await applySetup(plan, hub, target, {dryRun: flags['dry-run']})
    const configYaml = toYaml(plan.authenticationConfiguration)
    if (out) {
      await writeFileAtomic(out, configYaml, {mode: 0o644}).catch((error: unknown) => {
        throw writeError(`--authentication-config-out ${out}`, out, error, 'a file for the AuthenticationConfiguration')
      })
    }

    const result: WorkloadIdentitySetup = {kind: 'WorkloadIdentitySetup', ...plan, applied: Boolean(flags.apply), dryRun: Boolean(flags['dry-run'])}
    const columns: Column<PlannedObject>[] = [
      {header: 'cluster', get: (p) => `${p.side} ${p.cluster}`},
      {header: 'object', get: (p) => describeObject(p.object)},
      {header: 'action', get: (p) => p.result ?? `${p.action} (not applied)`},
    ]
    this.render(result, {
      rows: plan.objects,
      columns,
      name: (p) => `${p.object.kind.toLowerCase()}/${p.object.metadata.name}`,
      notes: [
        `target user: ${plan.username} (issuer ${plan.issuer}, audience ${plan.audience})`,
        ...plan.risks.map((r) => `warning: the bound role ${r.message} (${r.code}, ${r.severity})`),
        ...(flags.apply ? [] : ['nothing applied: run again with --apply']),
      ],
    })
    if (this.format === 'table' || this.format === 'wide') {
      this.log(`\n# AuthenticationConfiguration for ${plan.target} (${plan.targetVersion}): put it where its kube-apiserver reads --authentication-config`)
      this.log(configYaml.trimEnd())
    }
    return result
  }
}
