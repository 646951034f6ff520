import { Args, Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags } from '../../cli/base-command.js';
import {
  type CredentialTargets,
  FORCE_DESCRIPTION,
  credentialFailure,
  credentialName,
  credentialScope,
  credentialTargets,
  credentialWhere,
  deleteGuard,
} from '../../cli/credential-targets.js';
import { fleetFlags } from '../../cli/flags.js';
import { hubFlags } from '../../cli/hubs.js';
import { type Shard, resolveShard, shardName } from '../../fleet/shard.js';
import { parseLifetime } from '../../base/duration.js';
import { UsageError } from '../../base/errors.js';
import { MIN_TOKEN_SECONDS } from '../../base/limits.js';
import { describeLifetime, shortenedWarning } from '../../creds/lifetime.js';
import {
  type RotatedCredential,
  type RotationReport,
  oldAnchorKept,
  rotateCredentials,
  rotationFailureNote,
} from '../../creds/rotate.js';
import { rotationHooks } from '../../creds/rotation-state.js';
import { uncheckedText } from '../../creds/still-used.js';
import { rotationMetrics } from '../../cli/metrics.js';
import { type Pushgateway, parsePushgateway, pushMetrics } from '../../cli/pushgateway.js';

export default class CredsRotate extends BaseCommand<typeof CredsRotate> {
  static metrics = true;
  static summary =
    'Replace fleet-made credentials, in hub Secrets or kubeconfig files (--file), with new ones, proved first, and revoke the old ones.';
  static description = `For each hub Secret (NAMESPACE/NAME, or --all) or kubeconfig file (--file) written by fleet creds generate: mints a new credential of the same method, identity and scope, verifies it (who am I, one granted and one denied access review), replaces the Secret with a resourceVersion precondition (a file under a lock, atomically), deletes the old anchor and checks that the old token is refused. Progress is recorded on the Secret or in the file, so a run that was killed is finished by the next one. Exit 1 when any rotation failed (a credential that failed before it was replaced keeps its old one, still working; one that failed after is finished by the next run). See docs/rotation.md.`;

  static examples = [
    '<%= config.bin %> creds rotate fleet-system/member-1',
    '<%= config.bin %> creds rotate --all --expiring-within 48h -o json',
  ];

  static strict = false;

  static args = {
    secret: Args.string({ description: 'NAMESPACE/NAME of a hub Secret fleet wrote (repeatable).' }),
  };

  static flags = {
    all: Flags.boolean({ description: 'Every hub Secret fleet wrote (here --all selects Secrets, not clusters).' }),
    shard: Flags.string({
      description:
        'With --all: only this part of the Secrets, INDEX/COUNT from 0 (e.g. 0/4), by NAMESPACE/NAME. See docs/scale.md.',
    }),
    // The fleet-wide flag splits clusters; here the Secrets of --all are split (the same env and Indexed Job rule).
    'shard-count': Flags.integer({
      description:
        'With --all: split the Secrets this many ways and take the part of this Pod of an Indexed Job (JOB_COMPLETION_INDEX), by NAMESPACE/NAME.',
      env: fleetFlags['shard-count'].env,
    }),
    file: Flags.string({
      description: 'A kubeconfig file creds generate --out wrote (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'expiring-within': Flags.string({ description: 'Only credentials that expire within this time (e.g. 48h, 7d).' }),
    duration: Flags.string({
      description: 'Lifetime of the new credential, e.g. 720h, 30d (default: the lifetime generate was asked for).',
    }),
    cluster: Flags.string({
      char: 'c',
      description: 'Mint on this cluster, whatever the credential recorded (its cluster ID is still checked).',
    }),
    ...hubFlags(),
    'no-lease': Flags.boolean({
      description: 'Do not take the per-Secret Lease (correctness rests on resourceVersion preconditions alone).',
      hidden: true,
    }),
    force: Flags.boolean({ description: `Deleting the old anchor: ${FORCE_DESCRIPTION}` }),
    'dry-run': Flags.boolean({ description: 'Say what would be rotated; touch nothing.' }),
    pushgateway: Flags.string({
      description:
        'Also push the -o prometheus metrics to this Prometheus Pushgateway (http(s)://HOST:PORT), job fleet_creds_rotate (and shard=INDEX when sharded), whatever -o prints; a failed push exits 1.',
    }),
  };

  async run(): Promise<RotationReport> {
    const o = await rotateOptions(this.flags, this.positionals, process.env);
    const hubs = o.needsHub ? await this.credsHubs(this.flags) : [];
    // SIGINT/SIGTERM: each credential stops at its next step; one not yet written lifts its claim (exit 130, 143).
    const cancel = this.cancellation();
    const report = await rotateCredentials(
      {
        ...o.targets,
        ...credentialScope(this.fleet, hubs, o.clusterOverride),
        all: o.all,
        shard: o.shard,
        expiringWithinMs: o.expiringWithinMs,
        durationSeconds: o.durationSeconds,
        dryRun: o.dryRun,
        concurrency: o.concurrency,
        lease: o.lease,
      },
      // At a terminal, a live line: the credentials done, what one is doing, the old token's 401 wait (src/cli/progress.ts).
      {
        connector: this.fleet.connector,
        cancel,
        hooks: rotationHooks(process.env),
        guard: deleteGuard(this.fleet, this.flags.force),
        progress: this.progress.port(
          'credentials',
          'a credential not yet replaced is put back as it was, one already replaced is left for the next run to finish, one not started is not touched',
        ),
      },
    );
    const f = this.flags;
    const notes: string[] = [];
    const failed = report.items.filter((i) => i.status === 'failed');
    const acted = report.items.filter((i) => i.status !== 'skipped');
    // Never a silent success: nothing selected, or nothing to do after the filter, is said; any failure exits 1.
    if (report.shard)
      this.logStderr(
        `${shardName(report.shard)}: ${report.items.length} of the ${report.shard.selected} credential Secret${report.shard.selected === 1 ? '' : 's'}${report.items.length === 0 && report.shard.selected > 0 ? ': nothing to do in this shard' : ''}`,
      );
    const emptyShard = report.items.length === 0 && (report.shard?.selected ?? 0) > 0;
    if (report.items.length === 0 && !emptyShard)
      notes.push(`no fleet-managed credential Secrets found on hub ${report.hub}`);
    else if (acted.length === 0)
      notes.push(`none of ${report.items.length} credentials expires within ${f['expiring-within']}: nothing rotated`);
    for (const i of report.items) {
      const shortened = i.lifetime && shortenedWarning(i.lifetime, i.method ?? '');
      if (shortened) notes.push(`warning: ${credentialWhere(i)}: ${shortened}`);
    }
    if (failed.length > 0) notes.push(rotationFailureNote(failed));
    // Nothing deleted that something else still uses: an old anchor kept for that is said, and the run exits 1.
    const kept = report.items.filter((i) => i.status === 'rotated' && oldAnchorKept(i.revoked, i));
    for (const i of report.items) {
      if (i.revoked?.unchecked?.length)
        notes.push(
          `${credentialWhere(i)}: ${uncheckedText(`the old anchor ${i.old.anchor ?? ''}`, { users: [], unchecked: i.revoked.unchecked })}`,
        );
      if (i.revoked?.stillUsed?.length && (i.status === 'planned' || kept.includes(i)))
        notes.push(`${credentialWhere(i)}: ${i.revoked.reason}`);
    }
    if (kept.length > 0) this.markFailed();
    const swept = report.leases;
    if (swept?.removed.length)
      notes.push(
        `removed ${swept.removed.length} rotation Lease${swept.removed.length === 1 ? '' : 's'} a stopped run left on the hub: ${swept.removed.join(', ')}`,
      );
    if (swept?.error)
      notes.push(
        `warning: the rotation Leases stopped runs left could not be looked for (${swept.error.message}): the next run removes them`,
      );
    if ((report.items.length === 0 && !emptyShard) || failed.length > 0) this.markFailed();
    if (cancel.interrupted) {
      notes.push(
        `interrupted (${cancel.interrupted.signalName}): a credential not yet replaced keeps its old one (claim lifted); one already replaced is finished by the next run`,
      );
      this.markFailed(cancel.interrupted.exitCode);
    }
    await this.render(report, {
      rows: report.items,
      columns: [
        { header: 'credential', get: (i: RotatedCredential) => credentialWhere(i) },
        {
          header: 'status',
          get: (i) => i.status + (i.resumed ? ` (resumed ${i.resumed})` : ''),
          color: (i, k) => (i.status === 'failed' ? k.red : undefined),
        },
        { header: 'method', get: (i) => i.method ?? '' },
        { header: 'new expires', get: (i) => i.new?.expires ?? '' },
        { header: 'lifetime', get: (i) => describeLifetime(i.lifetime) },
        { header: 'revoked', get: (i) => (i.revoked ? `${i.revoked.done ? 'yes' : 'no'}: ${i.revoked.reason}` : '') },
        {
          header: 'fingerprint',
          get: (i) =>
            i.new?.fingerprint ? `${i.old.fingerprint?.slice(0, 19) ?? '?'} -> ${i.new.fingerprint.slice(0, 19)}` : '',
          wide: true,
        },
        { header: 'steps', get: (i) => i.steps.map((s) => `${s.step} ${s.ms}ms`).join(', '), wide: true },
        { header: 'reason', shrink: 'first', get: (i) => (i.status === 'rotated' ? '' : (i.reason ?? '')) },
      ],
      name: credentialName,
      notes,
      // One `error:` line per failed rotation on stderr, in every format (the table's reason column is not enough for -o yaml).
      failures: failed.map((i) => credentialFailure(i, unfinishedLine(i), 'server')),
      metrics: rotationMetrics(report),
    });
    // After the run, failed or not: a failed rotation is what an alert on these metrics is for.
    if (o.pushgateway) {
      const grouping: [string, string][] = [['job', 'fleet_creds_rotate']];
      if (report.shard) grouping.push(['shard', String(report.shard.index)]);
      try {
        await pushMetrics(o.pushgateway, grouping, rotationMetrics(report));
      } catch (err) {
        this.logStderr(`error: ${(err as Error).message}`);
        this.markFailed();
      }
    }
    return report;
  }
}

/** A failed item's line: the cause, where it stopped, and what the next run does (docs/rotation.md, "What the CronJob says"). */
const unfinishedLine = (i: RotatedCredential) => {
  const cause = i.reason ?? i.error?.message ?? i.status;
  const u = i.unfinished;
  return u ? `${cause} (at ${u.step}, on ${u.on}); ${u.next}` : cause;
};

/** What a rotate run does, from its flags and arguments, every value checked (Complete/Validate) before anything is touched. */
export interface RotateOptions {
  targets: CredentialTargets;
  all: boolean;
  /** With --all: this run's part of the Secrets (--shard, or --shard-count in an Indexed Job), resolved here once. */
  shard?: Shard;
  expiringWithinMs?: number;
  durationSeconds?: number;
  dryRun: boolean;
  /** --cluster: mint on this cluster whatever the credential recorded. */
  clusterOverride?: string;
  concurrency: number;
  lease: boolean;
  /** Whether a hub is asked at all: --all or Secret names (--file alone needs none). */
  needsHub: boolean;
  /** --pushgateway: where the metrics are also pushed. */
  pushgateway?: Pushgateway;
}

/**
 * Complete and validate `creds rotate`'s flags and NAMESPACE/NAME arguments into its options: usage errors here are
 * exit 2 before any hub or cluster is touched. `env` is where an Indexed Job's JOB_COMPLETION_INDEX is read.
 */
export async function rotateOptions(
  f: BaseFlags<typeof CredsRotate>,
  names: string[],
  env: NodeJS.ProcessEnv,
): Promise<RotateOptions> {
  if (!f.all && names.length === 0 && !f.file?.length)
    throw new UsageError('name at least one hub Secret NAMESPACE/NAME or --file, or pass --all');
  if (f.all && names.length > 0) throw new UsageError('--all and Secret names exclude each other');
  const shard = resolveShard({ shard: f.shard, count: f['shard-count'], env });
  if (shard && !f.all)
    throw new UsageError(
      `${f.shard === undefined ? '--shard-count' : '--shard'} splits --all; with named Secrets or --file, name each Pod's own`,
    );
  // A --file that is missing, a directory or unreadable is one line before any cluster or hub is touched.
  const targets = await credentialTargets(names, f.file, { missingFileOk: false });
  const within =
    f['expiring-within'] === undefined ? undefined : parseLifetime(f['expiring-within'], '--expiring-within');
  const duration = f.duration === undefined ? undefined : Math.floor(parseLifetime(f.duration, '--duration') / 1000);
  if (duration !== undefined && duration < MIN_TOKEN_SECONDS)
    throw new UsageError('--duration: at least 10m (the API server refuses shorter tokens)');
  return {
    targets,
    all: f.all,
    shard,
    expiringWithinMs: within,
    durationSeconds: duration,
    dryRun: f['dry-run'],
    clusterOverride: f.cluster,
    concurrency: f.concurrency,
    lease: !f['no-lease'],
    needsHub: f.all || names.length > 0,
    pushgateway: f.pushgateway === undefined ? undefined : parsePushgateway('--pushgateway', f.pushgateway),
  };
}
