import { Args, Flags } from '@oclif/core';

import { counted } from '../../base/text.js';
import { BaseCommand, type BaseFlags } from '../../cli/base-command.js';
import { FORCE_DESCRIPTION, credentialScope, deleteGuard } from '../../cli/credential-targets.js';
import { hubFlags } from '../../cli/hubs.js';
import { parseLifetime } from '../../base/duration.js';
import { UsageError } from '../../base/errors.js';
import { MIN_TOKEN_SECONDS } from '../../base/limits.js';
import { type NamespacedName, namespacedName, parseNamespacedName } from '../../base/names.js';
import {
  type AdoptRequest,
  type AdoptedCredential,
  type AdoptionReport,
  adoptCredentials,
  checkAdoptGrant,
} from '../../creds/adopt.js';
import { FORMATS } from '../../creds/codecs/index.js';
import type { AccessRequest } from '../../creds/generate.js';
import { describeLifetime } from '../../creds/lifetime.js';
import { PRESETS } from '../../creds/presets.js';
import { rotationHooks } from '../../creds/rotation-state.js';
import { uncheckedText } from '../../creds/still-used.js';
import { type AdoptFile, adoptFile, checkAdoptFileWritable, readAdoptFile } from '../../creds/adopt-file.js';

/** What an interrupted adoption does with each credential (said by the first Ctrl-C's acknowledgement). */
const ADOPT_INTERRUPTED =
  'a credential not yet written is put back as it was, one already written is left for the next creds adopt or creds rotate to finish';

export default class CredsAdopt extends BaseCommand<typeof CredsAdopt> {
  static summary =
    'Take over consumer Secrets fleet did not write (Argo CD, Cluster API, multicluster-runtime, ...): a fleet-made, verified, short-lived token in place of the credential found there.';
  static description = `For each hub Secret (NAMESPACE/NAME, or --all-unmanaged): says who the credential in it is (a SelfSubjectReview made with it), what it may do (the risk report of fleet auth rules) and when it expires ("never" for a legacy token); --dry-run stops there. Then mints a bound token for the same ServiceAccount (or, with --service-account and --role/--rules/--cluster-role, for a new least-privilege identity), verifies it, and writes it into the same Secret in the same format with a resourceVersion precondition, keeping every key, label and annotation fleet does not own. From then on creds rotate and creds revoke treat the Secret as fleet's. The old credential is said plainly; --revoke-old deletes the legacy token Secret that holds it and checks it is refused. Progress is recorded on the Secret as a rotation's is: a run that was killed is finished by the next creds adopt or creds rotate; a failure or Ctrl-C before the Secret was written puts it back as it was. Asks at a terminal; elsewhere needs --yes. See docs/creds.md, "Adopting credentials fleet did not make".`;

  static examples = [
    '<%= config.bin %> creds adopt argocd/cluster-10.0.0.5-1234567 --dry-run',
    '<%= config.bin %> creds adopt argocd/cluster-10.0.0.5-1234567 --service-account argocd-system/argocd-view --role view --duration 30d --revoke-old --yes',
    '<%= config.bin %> creds adopt --all-unmanaged --hub-namespace capi-clusters --yes -o json',
    '<%= config.bin %> creds adopt --file ./ci.kubeconfig --context ci --service-account ci/deployer --role edit -n apps --duration 30d --yes',
  ];

  static strict = false;

  static args = {
    secret: Args.string({ description: 'NAMESPACE/NAME of a hub Secret fleet did not write (repeatable).' }),
  };

  static flags = {
    file: Flags.string({
      description:
        'A kubeconfig file fleet did not write: the credential of its --context (default its current-context) is adopted in the file, every other entry kept. A symlink is written through, as kubectl does.',
      exclusive: ['all-unmanaged', 'format', 'hub-namespace', 'selector'],
    }),
    'all-unmanaged': Flags.boolean({
      description: 'Every consumer Secret on the hub that fleet did not write (narrowed by --hub-namespace and -l).',
    }),
    'hub-namespace': Flags.string({ description: 'With --all-unmanaged: only Secrets in this hub namespace.' }),
    selector: Flags.string({ char: 'l', description: 'With --all-unmanaged: only Secrets with these labels.' }),
    format: Flags.option({
      description: "The Secret's format, for one that carries no mark of its own (flux, kubeconfig-secretreader).",
      options: FORMATS,
    })(),
    'service-account': Flags.string({
      description:
        'Adopt into this ServiceAccount NAMESPACE/NAME (created if missing) with the grant of --role, --rules or --cluster-role, instead of the same one.',
    }),
    role: Flags.string({
      description: `Access preset of the new identity: ${PRESETS.map((p) => p.name).join(', ')}.`,
      exclusive: ['rules', 'cluster-role'],
    }),
    rules: Flags.string({
      description: 'YAML file of RBAC PolicyRules for the new identity.',
      exclusive: ['role', 'cluster-role'],
    }),
    'cluster-role': Flags.string({
      description: 'Bind this existing ClusterRole to the new identity.',
      exclusive: ['role', 'rules'],
    }),
    namespace: Flags.string({
      char: 'n',
      description: "The new identity's grant in this namespace (repeatable); cluster-wide when absent.",
      multiple: true,
      multipleNonGreedy: true,
    }),
    'allow-risky': Flags.boolean({ description: 'Grant the new identity even what the risk rules flag.' }),
    duration: Flags.string({
      description: 'Lifetime of the new token (at least 10m), e.g. 24h, 30d; creds rotate asks for it again.',
      default: '24h',
    }),
    'revoke-old': Flags.boolean({
      description:
        'Delete what fleet can prove is the old credential (the legacy token Secret holding it) and check it is refused.',
    }),
    force: Flags.boolean({ description: `With --revoke-old: ${FORCE_DESCRIPTION}` }),
    cluster: Flags.string({
      char: 'c',
      description: "Mint on this cluster, whatever the credential's server and CA match.",
    }),
    ...hubFlags(),
    yes: Flags.boolean({ char: 'y', description: 'Adopt without asking (required off a terminal).' }),
    'dry-run': Flags.boolean({ description: 'Say who the credentials are and what would be done; change nothing.' }),
  };

  async run(): Promise<AdoptionReport> {
    const o = await adoptOptions(this.flags, this.positionals);
    // The file, its context and its credential are checked before anything else: one line, exit 2, nothing contacted.
    const file = this.flags.file ? await readAdoptFile(this.flags.file, this.flags.context) : undefined;
    // Asked before any hub or cluster is touched: off a terminal nothing is adopted without --yes.
    if (!o.dryRun && !this.flags.yes && !this.interactive)
      throw new UsageError(
        `creds adopt replaces credentials in ${file ? 'a kubeconfig file' : 'Secrets'}: pass --yes to adopt without a prompt (or --dry-run to see what it would do)`,
      );
    if (file) return this.adoptFile(o, file);
    const hubs = await this.credsHubs(this.flags);
    const request: AdoptRequest = { ...o, ...credentialScope(this.fleet, hubs, this.flags.cluster) };
    const cancel = this.cancellation();
    const env = {
      connector: this.fleet.connector,
      cancel,
      hooks: rotationHooks(process.env),
      guard: deleteGuard(this.fleet, this.flags.force),
      progress: this.progress.port('Secrets', ADOPT_INTERRUPTED),
    };
    if (!o.dryRun && !this.flags.yes) {
      const plan = await adoptCredentials({ ...request, dryRun: true }, env);
      await this.show(plan);
      const planned = plan.items.filter((i) => i.status === 'planned');
      if (planned.length === 0) return plan;
      const { confirm } = await import('@inquirer/prompts');
      const go = await confirm({
        message: `Adopt ${counted(planned.length, 'Secret')} as planned above?`,
        default: false,
      });
      if (!go) {
        this.logStderr('nothing was adopted');
        return plan;
      }
    }
    const report = await adoptCredentials(request, env);
    await this.show(report, cancel.interrupted?.exitCode);
    return report;
  }

  /** --file: the same report, plan, question and exit codes as a Secret's adoption; no hub is needed. */
  private async adoptFile(o: Awaited<ReturnType<typeof adoptOptions>>, file: AdoptFile): Promise<AdoptionReport> {
    if (!o.dryRun) await checkAdoptFileWritable(file);
    const scope = credentialScope(this.fleet, [], this.flags.cluster);
    const request = { ...o, ...scope, file };
    const cancel = this.cancellation();
    const env = {
      connector: this.fleet.connector,
      cancel,
      hooks: rotationHooks(process.env),
      guard: deleteGuard(this.fleet, this.flags.force),
      progress: this.progress.port('files', ADOPT_INTERRUPTED),
    };
    if (!o.dryRun && !this.flags.yes) {
      const plan = await adoptFile({ ...request, dryRun: true }, env);
      await this.show(plan);
      if (plan.items[0]?.status !== 'planned') return plan;
      const { confirm } = await import('@inquirer/prompts');
      if (!(await confirm({ message: `Adopt ${where(plan.items[0])} as planned above?`, default: false }))) {
        this.logStderr('nothing was adopted');
        return plan;
      }
    }
    const report = await adoptFile(request, env);
    await this.show(report, cancel.interrupted?.exitCode);
    return report;
  }

  private async show(report: AdoptionReport, interruptedExit?: number): Promise<void> {
    const failed = report.items.filter((i) => i.status === 'failed');
    const notes: string[] = [];
    if (report.items.length === 0) notes.push(`no unmanaged consumer Secrets found on hub ${report.hub}`);
    for (const i of report.items) {
      if (i.old && i.status !== 'failed' && i.old.valid)
        notes.push(`${where(i)}: the old credential ${i.before?.identity ?? ''}: ${i.old.reason}`);
      // What could not be looked at before the old token Secret's deletion is said, never passed over.
      if (i.old?.unchecked?.length)
        notes.push(
          `${where(i)}: ${uncheckedText(`the old token Secret ${i.before?.tokenSecret ?? ''}`, { users: [], unchecked: i.old.unchecked })}`,
        );
    }
    // --revoke-old asked for a deletion that was refused (something still uses the old token): adopted, but exit 1.
    if (!report.dryRun && report.items.some((i) => i.status === 'adopted' && i.old?.stillUsed && !i.old.revoked))
      this.markFailed(1);
    if (failed.length > 0) {
      // Nothing adopted and every failure a configuration problem (a grant refused, an identity to name): exit 2.
      const config =
        failed.length === report.items.length &&
        failed.every((i) => i.error?.kind === 'config' || i.error?.kind === 'usage');
      this.markFailed(config ? 2 : 1);
    }
    if (interruptedExit !== undefined) this.markFailed(interruptedExit);
    await this.render(report, {
      rows: report.items,
      columns: [
        { header: report.items.some((i) => i.file) ? 'file' : 'secret', get: (i: AdoptedCredential) => where(i) },
        { header: 'format', get: (i) => (i.file ? 'kubeconfig' : (i.secret?.format ?? '')) },
        {
          header: 'status',
          get: (i) => i.status + (i.resumed ? ` (resumed ${i.resumed})` : ''),
          color: (i, k) => (i.status === 'failed' ? k.red : undefined),
        },
        {
          header: 'before',
          get: (i) =>
            i.before
              ? `${i.before.identity} ${i.before.method}, ${i.before.risksUnknown ? 'risk unknown' : i.before.risks.length ? i.before.risks.join(',') : 'no risk found'}, expires ${i.before.expires}`
              : '',
        },
        {
          header: 'after',
          get: (i) =>
            i.after
              ? `${i.after.identity} ${i.after.access} ${i.after.scope}${i.after.expires ? `, expires ${i.after.expires}` : ''}`
              : '',
        },
        { header: 'lifetime', get: (i) => describeLifetime(i.after?.lifetime), wide: true },
        {
          header: 'old credential',
          get: (i) => (i.old ? `${i.old.revoked ? 'revoked' : i.old.valid ? 'still valid' : 'refused'}` : ''),
        },
        { header: 'steps', get: (i) => i.steps.map((s) => `${s.step} ${s.ms}ms`).join(', '), wide: true },
        { header: 'reason', shrink: 'first', get: (i) => (i.status === 'adopted' ? '' : (i.reason ?? '')) },
      ],
      name: (i) => (i.file ? `file/${where(i)}` : `secret/${where(i)}`),
      notes,
      failures: failed.map((i) => ({
        error: {
          kind: i.error?.kind ?? 'server',
          message: (i.error?.message ?? i.reason ?? 'failed').includes(where(i))
            ? (i.error?.message ?? i.reason ?? 'failed')
            : `${where(i)}: ${i.error?.message ?? i.reason ?? 'failed'}`,
        },
      })),
    });
  }
}

const where = (i: AdoptedCredential) =>
  i.file ? `${i.file.path} (context ${i.file.context})` : `${i.secret?.namespace}/${i.secret?.name}`;

/** The flags and arguments as a request, every value checked before any hub or cluster is touched (exit 2). */
export async function adoptOptions(
  f: BaseFlags<typeof CredsAdopt>,
  names: string[],
): Promise<Omit<AdoptRequest, 'cluster' | 'clusters' | 'hub' | 'clusterOverride'>> {
  if (f.file && names.length > 0)
    throw new UsageError('--file and Secret names exclude each other: adopt one or the other');
  if (!f.file && !f['all-unmanaged'] && names.length === 0)
    throw new UsageError('name at least one hub Secret NAMESPACE/NAME, or pass --all-unmanaged or --file PATH');
  if (f['all-unmanaged'] && names.length > 0)
    throw new UsageError('--all-unmanaged and Secret names exclude each other');
  if (!f['all-unmanaged'] && (f['hub-namespace'] || f.selector))
    throw new UsageError('--hub-namespace and -l narrow --all-unmanaged');
  const refs: NamespacedName[] = names.map((n) => {
    const ref = namespacedName(n);
    if (!ref) throw new UsageError(`"${n}": expected NAMESPACE/NAME of a hub Secret`);
    return ref;
  });
  const grant = f.role ?? f.rules ?? f['cluster-role'];
  if (grant && !f['service-account'])
    throw new UsageError(
      '--role, --rules and --cluster-role are the grant of a new identity: name it with --service-account',
    );
  if (f['service-account'] && !grant)
    throw new UsageError('--service-account needs its grant: --role, --rules or --cluster-role');
  if (!f['service-account'] && (f.namespace?.length || f['allow-risky']))
    throw new UsageError('-n and --allow-risky shape the grant of a new identity: name it with --service-account');
  if (f.force && !f['revoke-old'])
    throw new UsageError(
      '--force overrides the checks before --revoke-old deletes the old token Secret: pass it with --revoke-old',
    );
  const durationSeconds = Math.floor(parseLifetime(f.duration, '--duration') / 1000);
  if (durationSeconds < MIN_TOKEN_SECONDS)
    throw new UsageError('--duration: at least 10m (the API server refuses shorter tokens)');
  const access: AccessRequest | undefined = f.role
    ? { preset: f.role }
    : f.rules
      ? { rulesFile: f.rules }
      : f['cluster-role']
        ? { clusterRole: f['cluster-role'] }
        : undefined;
  const into =
    f['service-account'] && access
      ? {
          identity: {
            kind: 'ServiceAccount' as const,
            ...parseNamespacedName(f['service-account'], '--service-account'),
          },
          access,
          namespaces: f.namespace ?? [],
          allowRisky: f['allow-risky'],
        }
      : undefined;
  await checkAdoptGrant(into);
  return {
    names: refs,
    allUnmanaged: f['all-unmanaged'] ? { namespace: f['hub-namespace'], labelSelector: f.selector } : undefined,
    format: f.format,
    into,
    durationSeconds,
    revokeOld: f['revoke-old'],
    dryRun: f['dry-run'],
  };
}
