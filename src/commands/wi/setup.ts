import { Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags } from '../../cli/base-command.js';
import { hubFlags } from '../../cli/hubs.js';
import { UsageError } from '../../base/errors.js';
import { escapeTerminal } from '../../base/terminal.js';
import type { Column } from '../../cli/table.js';
import { writeFileAtomic } from '../../kubeconfig/atomic-write.js';
import { checkWritableFile, writeError } from '../../base/files.js';
import { connectRef } from '../../workload-identity/connect.js';
import { type ServiceAccountRef, parseServiceAccount } from '../../workload-identity/service-account.js';
import {
  type ConsumerChoice,
  type ConsumerOutput,
  checkConsumerFlags,
  consumerHubSide,
  pluginHubOf,
  writeConsumer,
} from '../../workload-identity/setup-consumer.js';
import { CONSUMERS } from '../../workload-identity/consumers.js';
import {
  type PlannedObject,
  ROLE_PRESETS,
  type SetupPlan,
  applySetup,
  defaultFluxConfigMapName,
  describeObject,
  planSetup,
  toYaml,
} from '../../workload-identity/setup.js';

/** The stable JSON shape of `wi setup` (docs/workload-identity.md). */
export interface WorkloadIdentitySetup extends SetupPlan {
  kind: 'WorkloadIdentitySetup';
  /** --consumer (default flux) and what it needs besides the objects: the access provider, the provider file, the kubeconfig. */
  consumer: Omit<ConsumerOutput, 'notes'>;
  /** --consumer cluster-inventory: the access-provider file's list, so `-o json | jq '{providers}'` is that file. */
  providers?: ConsumerOutput['providers'];
  /** true after --apply (false: a plan only); dryRun with --dry-run. */
  applied: boolean;
  dryRun: boolean;
}

export default class WiSetup extends BaseCommand<typeof WiSetup> {
  static summary =
    "Set up workload identity: the hub's discovery RBAC, the target's RBAC, a Flux ConfigMap, and the target's AuthenticationConfiguration.";
  static description = `Plans what makes a hub ServiceAccount's token work on a target cluster and prints it: on the hub, the binding that lets anyone read the issuer's discovery document and keys (the target fetches them without credentials), the ServiceAccount, and a Flux ConfigMap (provider: generic) for spec.kubeConfig.configMapRef; on the target, a binding of --role/--cluster-role to the mapped user (prefix + system:serviceaccount:NS:NAME). With --apply these objects are applied (server-side apply, field manager fleet; dry-run first, so nothing is half-created; read back afterwards). Always printed: the target's AuthenticationConfiguration jwt entry (apiserver.config.k8s.io/v1 for 1.34+, v1beta1 for 1.30-1.33, as the target reports its version), to be put where the target's API server reads --authentication-config.`;

  static examples = [
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account flux-system/reconciler --role view',
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account tenant-a/deployer --role edit --namespace tenant-a --apply',
    '<%= config.bin %> wi setup --hub hub --target prod-eu --service-account tenant-a/deployer --authentication-config-out auth-config.yaml',
    '<%= config.bin %> wi setup --consumer cluster-inventory --profile fleet-system/prod-eu --target prod-eu --service-account fleet-system/mcr --role view --plugin-identity fleet-system/mcr-controller --apply',
    '<%= config.bin %> wi setup --consumer kubeconfig --out prod-eu.kubeconfig --target prod-eu --service-account ops/deployer --role edit -n apps --apply',
    '<%= config.bin %> wi setup --consumer argocd --target prod-eu --service-account argocd/prod-eu --role edit --plugin-identity argocd/argocd-application-controller --plugin-identity argocd/argocd-server --apply',
  ];

  static flags = {
    hub: Flags.string({
      description:
        "The cluster whose ServiceAccount issues the token (default: the hub by the rule of creds: --hub-kubeconfig/--hub-context, the fleet configuration's hub, else the current context).",
    }),
    ...hubFlags({ purpose: ', when --hub is not given', exclusive: ['hub'] }),
    target: Flags.string({ description: 'The cluster that should accept the token.', required: true }),
    'service-account': Flags.string({ description: 'The hub ServiceAccount, NAMESPACE/NAME.', required: true }),
    prefix: Flags.string({
      description: 'Username prefix the target gives hub identities (claimMappings.username.prefix).',
      default: 'hub:',
    }),
    role: Flags.string({
      description: 'Bind this built-in ClusterRole to the mapped user on the target.',
      options: [...ROLE_PRESETS],
      exclusive: ['cluster-role'],
    }),
    'cluster-role': Flags.string({ description: 'Bind this ClusterRole (of the target) to the mapped user.' }),
    namespace: Flags.string({
      char: 'n',
      description: 'Bind in this namespace of the target (repeatable; default: cluster-wide).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    audience: Flags.string({
      description:
        "Audience hub tokens are requested with (default: the target's server URL as written in its kubeconfig).",
    }),
    'flux-configmap': Flags.string({
      description:
        "Name of the Flux ConfigMap on the hub, in the ServiceAccount's namespace (default: fleet-wi-<target>).",
    }),
    flux: Flags.boolean({ description: 'Include the Flux ConfigMap.', default: true, allowNo: true }),
    'allow-risky': Flags.boolean({ description: 'Bind a ClusterRole even when it amounts to cluster-admin.' }),
    'authentication-config-out': Flags.string({
      description: "Also write the target's AuthenticationConfiguration to this file.",
    }),
    consumer: Flags.option({
      description:
        'Who uses the identity: flux (its generic provider: the ConfigMap), or, with fleet wi token as the exec credential plugin, cluster-inventory (a ClusterProfile access provider and the provider file), kubeconfig (a file), argocd (a cluster Secret).',
      options: CONSUMERS,
      default: 'flux' as const,
    })(),
    profile: Flags.string({
      description:
        '--consumer cluster-inventory: the ClusterProfile NAMESPACE/NAME (on the hub) whose status.accessProviders gets the entry.',
    }),
    out: Flags.string({
      description: '--consumer kubeconfig: write the kubeconfig here (0600, atomic; no token in it).',
    }),
    force: Flags.boolean({ description: '--consumer kubeconfig: replace an --out file fleet did not write.' }),
    'provider-file-out': Flags.string({
      description:
        "--consumer cluster-inventory: also write the access-provider file (multicluster-runtime's --clusterprofile-provider-file) here.",
    }),
    'argocd-namespace': Flags.string({
      description: '--consumer argocd: the namespace Argo CD runs in, on the hub.',
      default: 'argocd',
    }),
    'argocd-secret': Flags.string({
      description: "--consumer argocd: the cluster Secret's name (default: fleet-wi-<target>).",
    }),
    'plugin-command': Flags.string({
      description: 'How the consumer runs fleet (the exec command): a name on its PATH or an absolute path.',
      default: 'fleet',
    }),
    'plugin-hub-kubeconfig': Flags.string({
      description:
        'The hub kubeconfig the plugin reads (--hub-kubeconfig in its args). Default for --consumer kubeconfig: the hub this command used; for the others none, so a controller in a Pod uses its in-cluster configuration.',
    }),
    'plugin-hub-context': Flags.string({ description: 'With --plugin-hub-kubeconfig: the hub context.' }),
    'plugin-identity': Flags.string({
      description:
        'The hub ServiceAccount NAMESPACE/NAME the plugin runs as (a controller\'s own, in-cluster): gets "create" on serviceaccounts/token for --service-account only (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    apply: Flags.boolean({ description: 'Apply the hub and target objects (server-side apply, field manager fleet).' }),
    'create-namespace': Flags.boolean({
      description:
        "Create missing namespaces first: the ServiceAccount's (and the consumer's) on the hub, those of --namespace on the target.",
    }),
    'dry-run': Flags.boolean({
      description: 'With --apply: ask the API servers to validate the objects without saving them.',
    }),
  };

  async run(): Promise<WorkloadIdentitySetup> {
    const { flags } = this;
    const { serviceAccount: sa, authenticationConfigOut: out, consumer } = await setupOptions(flags);
    const provider = this.fleet.provider;
    const targetRef = await provider.get(flags.target);
    const connector = this.fleet.connector;
    // --hub names a cluster; without it the hub is found as creds finds it (creds/hubs.ts), the same rule everywhere.
    const hubRef = flags.hub ? await provider.get(flags.hub) : undefined;
    if (hubRef?.name === targetRef.name) throw new UsageError(`--target ${flags.target} is the hub itself`);
    const [hub, target] = await Promise.all([
      hubRef
        ? connectRef(hubRef, connector)
        : connector
            .hub((await this.credsHubs(flags))[0].spec)
            .then((client) => ({ name: client.context.contextName, context: client.context, client })),
      connectRef(targetRef, connector),
    ]);
    if (!hubRef && hub.context.cluster.server === target.context.cluster.server)
      throw new UsageError(`--target ${flags.target} is the hub itself (${hub.name})`);
    const shortName = targetRef.aliases[0] ?? targetRef.name;
    const plugin = pluginHubOf(consumer, hub);
    const side = await consumerHubSide(
      consumer,
      { target, serviceAccount: sa, audience: flags.audience, plugin },
      shortName,
      hub,
    );
    let plan = await planSetup({
      hub,
      target,
      targetShortName: shortName,
      serviceAccount: sa,
      prefix: flags.prefix,
      audience: flags.audience,
      clusterRole: flags['cluster-role'] ?? flags.role,
      namespaces: flags.namespace ?? [],
      fluxConfigMap:
        consumer.name === 'flux' && flags.flux
          ? (flags['flux-configmap'] ?? defaultFluxConfigMapName(shortName))
          : undefined,
      allowRisky: flags['allow-risky'],
      options: connector,
      consumerHubObjects: side.hubObjects,
      createNamespace: flags['create-namespace'],
      refuseMissingNamespaces: flags.apply,
    });
    if (flags.apply) {
      // The profile's status is checked by a dry run with the objects, before anything is changed; written after them.
      if (side.output.profile) await side.writeProfile(true);
      plan = await applySetup(plan, hub, target, { dryRun: flags['dry-run'] });
      if (side.output.profile && !flags['dry-run']) await side.writeProfile(false);
    }
    await writeConsumer(side, { apply: Boolean(flags.apply), dryRun: Boolean(flags['dry-run']) });
    const configYaml = toYaml(plan.authenticationConfiguration);
    if (out) {
      await writeFileAtomic(out, configYaml, { mode: 0o644 }).catch((error: unknown) => {
        throw writeError(
          `--authentication-config-out ${out}`,
          out,
          error,
          'a file for the AuthenticationConfiguration',
        );
      });
    }

    const { notes: consumerNotes, ...consumerOutput } = side.output;
    const result: WorkloadIdentitySetup = {
      kind: 'WorkloadIdentitySetup',
      ...plan,
      consumer: consumerOutput,
      ...(consumerOutput.providers ? { providers: consumerOutput.providers } : {}),
      applied: Boolean(flags.apply),
      dryRun: Boolean(flags['dry-run']),
    };
    const columns: Column<PlannedObject>[] = [
      { header: 'cluster', get: (p) => `${p.side} ${p.cluster}` },
      { header: 'object', get: (p) => describeObject(p.object) },
      { header: 'action', get: (p) => p.result ?? `${p.action} (not applied)` },
    ];
    await this.render(result, {
      rows: plan.objects,
      columns,
      name: (p) => `${p.object.kind.toLowerCase()}/${p.object.metadata.name}`,
      notes: [
        `target user: ${plan.username} (issuer ${plan.issuer}, audience ${plan.audience})`,
        ...plan.risks.map((r) => `warning: the bound role ${r.message} (${r.code}, ${r.severity})`),
        ...(consumerOutput.profile
          ? [
              `hub ${plan.hub}: ClusterProfile ${consumerOutput.profile.namespace}/${consumerOutput.profile.name} status.accessProviders[${consumerOutput.accessProvider!.name}]: ${consumerOutput.profile.result ?? `${consumerOutput.profile.action} (not applied)`}`,
            ]
          : []),
        ...consumerNotes,
        ...(flags.apply ? [] : ['nothing applied: run again with --apply']),
      ],
    });
    if (this.format === 'table' || this.format === 'wide') {
      // log() keeps line breaks as layout: the cluster name and titles (data) are escaped here, where they enter, so a
      // line break in them cannot add a line to the YAML shown below the comment.
      this.log(
        `\n# AuthenticationConfiguration for ${escapeTerminal(plan.target)} (${escapeTerminal(plan.targetVersion)}): put it where its kube-apiserver reads --authentication-config`,
      );
      this.log(configYaml.trimEnd());
      for (const [title, text] of side.printed) this.log(`\n# ${escapeTerminal(title)}\n${text.trimEnd()}`);
    }
    return result;
  }
}

/** What `wi setup` needs checked from its flags before any cluster is touched (the rest are used as they are). */
export interface SetupOptions {
  serviceAccount: ServiceAccountRef;
  /** --authentication-config-out, checked writable. */
  authenticationConfigOut?: string;
  /** --consumer and its flags, checked (and --out's directory and file). */
  consumer: ConsumerChoice;
}

/** Every flag that can be wrong is checked here, before any cluster is asked anything (one usage line, exit 2). */
export async function setupOptions(flags: BaseFlags<typeof WiSetup>): Promise<SetupOptions> {
  if (flags['dry-run'] && !flags.apply)
    throw new UsageError('--dry-run only makes sense with --apply (without --apply nothing is changed anyway)');
  if (flags.namespace && !flags.role && !flags['cluster-role'])
    throw new UsageError('--namespace needs --role or --cluster-role (what to bind there)');
  if (flags.prefix.includes(' ')) throw new UsageError(`--prefix: "${flags.prefix}" contains a space`);
  const serviceAccount = parseServiceAccount(flags['service-account']);
  const out = flags['authentication-config-out'];
  if (out)
    await checkWritableFile(out, `--authentication-config-out ${out}`, 'a file for the AuthenticationConfiguration');
  const consumer = await checkConsumerFlags({
    consumer: flags.consumer,
    profile: flags.profile,
    out: flags.out,
    force: flags.force,
    providerFileOut: flags['provider-file-out'],
    argocdSecret: flags['argocd-secret'],
    pluginCommand: flags['plugin-command'],
    pluginHubKubeconfig: flags['plugin-hub-kubeconfig'],
    pluginHubContext: flags['plugin-hub-context'],
    pluginIdentity: flags['plugin-identity'],
    fluxConfigMap: flags['flux-configmap'],
    argocdNamespace: flags['argocd-namespace'],
  });
  return { serviceAccount, authenticationConfigOut: out, consumer };
}
