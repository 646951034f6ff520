import { Flags } from '@oclif/core';

import { BaseCommand } from '../../cli/base-command.js';
import { credsWizard } from '../../cli/creds-wizard.js';
import type { OutputFormat } from '../../cli/parse.js';
import { hubFlags } from '../../cli/hubs.js';
import { parseLifetime } from '../../base/duration.js';
import { UsageError } from '../../base/errors.js';
import { parseNamespacedName } from '../../base/names.js';
import { FORMATS } from '../../creds/codecs/index.js';
import {
  type AccessRequest,
  type Destination,
  type GenerateRequest,
  type GeneratedCredential,
  generateCredential,
  generateHooks,
} from '../../creds/generate.js';
import { describeLifetime } from '../../creds/lifetime.js';
import { METHODS } from '../../creds/methods.js';
import { PRESETS } from '../../creds/presets.js';
import type { Identity } from '../../creds/rbac.js';

export default class CredsGenerate extends BaseCommand<typeof CredsGenerate> {
  static summary =
    'Make a least-privilege credential for one cluster and deliver it as a kubeconfig file or a hub Secret.';
  static description = `Creates (server-side apply, field manager fleet) a ServiceAccount's or a user's RBAC grant from a preset, a rules file or an existing ClusterRole, per namespace or cluster-wide; refuses risky grants unless --allow-risky; issues the credential (a TokenRequest bound to an anchor Secret, a legacy token Secret, or a client certificate whose key never leaves this machine); proves it (who am I, one granted and one denied access review); then writes it to --out or to a consumer Secret on the hub. On failure, what this run created is removed. Presets: ${PRESETS.map((p) => p.name).join(', ')}.`;

  static examples = [
    '<%= config.bin %> creds generate --cluster member-1 --service-account team-a/reader --role view -n team-a --out reader.kubeconfig',
    '<%= config.bin %> creds generate -c member-1 --service-account fleet/mcr --role pod-lister --secret fleet/member-1 --format multicluster-runtime',
    '<%= config.bin %> creds generate -c member-1 --method client-cert --user ci --group ci --role deployer -n apps --out - ',
  ];

  static flags = {
    cluster: Flags.string({ char: 'c', description: 'The cluster (any name fleet resolves).' }),
    'service-account': Flags.string({
      description: 'NAMESPACE/NAME of the ServiceAccount (token methods); created if missing.',
    }),
    user: Flags.string({ description: 'User name (CN) for --method client-cert.' }),
    group: Flags.string({
      description: 'Group (O) for --method client-cert (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    role: Flags.string({
      description: `Access preset: ${PRESETS.map((p) => p.name).join(', ')}.`,
      exclusive: ['rules', 'cluster-role'],
    }),
    rules: Flags.string({
      description: 'YAML file of RBAC PolicyRules (a list, or a mapping with rules:).',
      exclusive: ['role', 'cluster-role'],
    }),
    'cluster-role': Flags.string({
      description: 'Bind this existing ClusterRole (its rules are checked for risk too).',
      exclusive: ['role', 'rules'],
    }),
    namespace: Flags.string({
      char: 'n',
      description: 'Grant in this namespace (repeatable); cluster-wide when absent.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    method: Flags.option({
      description: 'How the credential is issued.',
      options: METHODS,
      default: 'token' as const,
    })(),
    duration: Flags.string({
      description:
        'Lifetime of a token or certificate (at least 10m), e.g. 8h, 720h, 30d, 1y; the server may issue less (said in the output).',
      default: '24h',
    }),
    out: Flags.string({
      description: 'Write a one-context kubeconfig here (0600, atomic); "-" prints it to stdout.',
      exclusive: ['secret'],
    }),
    secret: Flags.string({
      description: 'Write a consumer Secret HUBNAMESPACE/NAME on the hub (with --format).',
      exclusive: ['out'],
    }),
    format: Flags.option({ description: 'Consumer Secret format.', options: FORMATS })(),
    consumer: Flags.string({ description: 'cluster-inventory format: the consumer label value.' }),
    profile: Flags.string({
      description: 'cluster-inventory format: the ClusterProfile name (default: the Secret name).',
    }),
    'display-name': Flags.string({
      description:
        "The name people see: the Argo CD cluster Secret's name (default: the context's name for a kubeconfig cluster, else the cluster's name) and the written kubeconfig's context.",
    }),
    'update-profile': Flags.string({
      description:
        'kubeconfig-secretreader format: NAMESPACE/NAME of the ClusterProfile whose status.accessProviders gets the entry.',
    }),
    ...hubFlags({ purpose: ' for --secret' }),
    'allow-risky': Flags.boolean({
      description:
        'Grant even what fleet risk rules flag (wildcards, Secrets cluster-wide, escalate, bind, impersonate ...).',
    }),
    'create-namespace': Flags.boolean({
      description:
        'Create missing namespaces (the ServiceAccount one and those of -n, and the hub namespace of --secret).',
    }),
    force: Flags.boolean({ description: 'Replace a destination (file or Secret) that fleet did not write.' }),
    'dry-run': Flags.boolean({ description: 'Print the objects that would be applied; touch nothing.' }),
  };

  async run(): Promise<GeneratedCredential> {
    let f = this.flags;
    const missing = missingFlags(f);
    if (missing.length > 0) {
      if (!this.interactive) throw new UsageError(`missing ${missing.join(', ')} (see fleet creds generate --help)`);
      f = { ...f, ...(await credsWizard(this.fleet.provider, f)) };
    }
    // What the wizard left missing is said by the options, with every other flag checked before anything is touched.
    const o = generateOptions(f, this.format);
    const ref = await this.fleet.provider.get(o.cluster);
    const hubs = o.needsHub ? await this.credsHubs(f) : [];

    // Ctrl-C (SIGINT) or SIGTERM from here on undoes what the run made, as a failure does, then exits 130 (143).
    const cancel = this.cancellation();
    const { result, kubeconfig } = await generateCredential(
      { ...o.request, ref, hub: hubs[0]?.spec },
      { connector: this.fleet.connector, cancel, hooks: generateHooks(process.env) },
    );
    // A signal after the last step (delivery) has nothing to undo: the credential was delivered and is kept.
    if (cancel.interrupted)
      result.warnings.push(`${cancel.interrupted.signalName} arrived after the credential was delivered: it is kept`);
    // The one place fleet prints a secret: asked for with --out -, raw, and nothing else on stdout.
    if (kubeconfig !== undefined) {
      process.stdout.write(kubeconfig);
      for (const line of summary(result)) this.logStderr(`${line.field}: ${line.value}`);
      return result;
    }
    if (result.dryRun && (this.format === 'table' || this.format === 'wide')) {
      const yaml = (await import('js-yaml')).default;
      this.log(result.plan!.map((o) => yaml.dump(o, { noRefs: true, lineWidth: -1 })).join('---\n'));
      return result;
    }
    await this.render(result, {
      rows: summary(result),
      columns: [
        { header: 'field', get: (r) => r.field },
        { header: 'value', get: (r) => r.value },
      ],
      name: () =>
        result.destination.kind === 'secret'
          ? `secret/${result.destination.name}`
          : result.destination.kind === 'file'
            ? result.destination.path
            : '-',
      notes: result.warnings.map((w) => `warning: ${w}`),
    });
    return result;
  }
}

type GenerateFlags = CredsGenerate['flags'];

/** What `creds generate` does, from its flags: the cluster to look up, whether a hub is needed, and the rest of the request. */
export interface GenerateOptions {
  /** The cluster, as typed (the provider resolves it). */
  cluster: string;
  /** --secret: the hub (the one hub rule) receives the Secret. */
  needsHub: boolean;
  request: Omit<GenerateRequest, 'ref' | 'hub'>;
}

/**
 * The flags (completed by the wizard at a terminal) as options, every one checked before any cluster or hub is asked
 * anything: a missing flag, --out - with -o, a lifetime, NAMESPACE/NAME values, --secret without --format.
 */
export function generateOptions(f: GenerateFlags, format: OutputFormat): GenerateOptions {
  const missing = missingFlags(f);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  if (f.out === '-' && format !== 'table')
    throw new UsageError('--out - prints the kubeconfig on stdout; it cannot be combined with -o');
  // A lifetime, not a timer: 30d and 720h are fine.
  const durationSeconds = Math.floor(parseLifetime(f.duration, '--duration') / 1000);
  const method = f.method;
  const identity: Identity =
    method === 'client-cert'
      ? { kind: 'User', name: f.user ?? '', groups: f.group ?? [] }
      : { kind: 'ServiceAccount', ...parseNamespacedName(f['service-account'] ?? '', '--service-account') };
  if (method === 'client-cert' && !f.user) throw new UsageError('--method client-cert needs --user NAME');
  if (f['display-name'] !== undefined && f['display-name'].trim() === '')
    throw new UsageError('--display-name: must not be empty');
  const access: AccessRequest = f.role
    ? { preset: f.role }
    : f.rules
      ? { rulesFile: f.rules }
      : { clusterRole: f['cluster-role']! };
  let destination: Destination;
  if (f.secret) {
    if (!f.format) throw new UsageError(`--secret needs --format (${FORMATS.join(', ')})`);
    const named = parseNamespacedName(f.secret, '--secret');
    // Cluster API's Secret is the Cluster's name and `-kubeconfig`: a --secret already ending in it was the Secret's
    // name, and taking it as the Cluster's would write `prod-kubeconfig-kubeconfig` for a Cluster nobody has.
    if (f.format === 'cluster-api' && named.name.endsWith('-kubeconfig'))
      throw new UsageError(
        `--secret ${f.secret} with --format cluster-api names the Cluster, not its Secret: give --secret ${named.namespace}/${named.name.slice(0, -'-kubeconfig'.length)} (the Secret is ${named.name})`,
      );
    destination = {
      kind: 'secret',
      ...named,
      format: f.format,
      consumer: f.consumer,
      profile: f.profile,
    };
  } else destination = f.out === '-' ? { kind: 'stdout' } : { kind: 'file', path: f.out! };
  return {
    cluster: f.cluster!,
    needsHub: Boolean(f.secret),
    request: {
      identity,
      access,
      namespaces: f.namespace ?? [],
      method,
      durationSeconds,
      destination,
      allowRisky: f['allow-risky'],
      createNamespace: f['create-namespace'],
      force: f.force,
      dryRun: f['dry-run'],
      updateProfile: f['update-profile'] ? parseNamespacedName(f['update-profile'], '--update-profile') : undefined,
      displayName: f['display-name'],
    },
  };
}

/** The flags without which nothing can be generated; the wizard asks for them at a terminal. */
export function missingFlags(f: Partial<GenerateFlags>): string[] {
  const missing: string[] = [];
  if (!f.cluster) missing.push('--cluster');
  if (f.method === 'client-cert' ? !f.user : !f['service-account'])
    missing.push(f.method === 'client-cert' ? '--user' : '--service-account');
  if (!f.role && !f.rules && !f['cluster-role']) missing.push('--role, --rules or --cluster-role');
  if (!f.out && !f.secret) missing.push('--out or --secret');
  return missing;
}

function summary(r: GeneratedCredential): Array<{ field: string; value: string }> {
  const rows = [
    { field: 'cluster', value: r.cluster },
    {
      field: 'identity',
      value: r.identity.username + (r.identity.groups?.length ? ` (groups ${r.identity.groups.join(',')})` : ''),
    },
    { field: 'access', value: r.access },
    { field: 'scope', value: r.scope.clusterWide ? 'cluster-wide' : `namespaces ${r.scope.namespaces.join(',')}` },
    { field: 'method', value: r.method },
    { field: 'expires', value: r.dryRun ? '(not issued: dry run)' : (r.expires ?? 'never') },
  ];
  if (r.lifetime) rows.push({ field: 'lifetime', value: describeLifetime(r.lifetime) });
  if (r.fingerprint) rows.push({ field: 'fingerprint', value: r.fingerprint });
  const d = r.destination;
  rows.push({
    field: 'destination',
    value:
      d.kind === 'secret'
        ? `Secret ${d.namespace}/${d.name} (${d.format}) on hub ${d.hub}`
        : d.kind === 'file'
          ? d.path
          : 'stdout',
  });
  if (r.anchor) rows.push({ field: 'anchor', value: `Secret ${r.anchor.namespace}/${r.anchor.name}` });
  for (const c of r.verification) rows.push({ field: `verify ${c.name}`, value: `${c.status}: ${c.message}` });
  for (const o of r.objects)
    rows.push({
      field: o.action,
      value: `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}${o.on === 'hub' ? ' (hub)' : ''}`,
    });
  return rows;
}
