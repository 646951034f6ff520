import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {fleetFlags} from '../../cli/flags.js'
import {progressLine} from '../../cli/progress.js'
import {resolveShard, shardName} from '../../fleet/shard.js'
import {parseLifetime} from '../../base/duration.js'
import {UsageError} from '../../base/errors.js'
import {checkReadableFile} from '../../base/files.js'
import {MIN_TOKEN_SECONDS} from '../../base/limits.js'
import {namespacedName} from '../../base/names.js'
import {describeLifetime, shortenedWarning} from '../../creds/lifetime.js'
import {type RotatedCredential, type RotationReport, rotateCredentials, rotationFailureNote} from '../../creds/rotate.js'
import {rotationHooks} from '../../creds/rotation-state.js'
import {rotationMetrics} from '../../cli/metrics.js'

export default class CredsRotate extends BaseCommand<typeof CredsRotate> {
  static metrics = true
  static summary = 'Replace fleet-made credentials, in hub Secrets or kubeconfig files (--file), with new ones, proved first, and revoke the old ones.'
  static description = `For each hub Secret (NAMESPACE/NAME, or --all) or kubeconfig file (--file) written by fleet creds generate: mints a new credential of the same method, identity and scope, verifies it (who am I, one granted and one denied access review), replaces the Secret with a resourceVersion precondition (a file under a lock, atomically), deletes the old anchor and checks that the old token is refused. Progress is recorded on the Secret or in the file, so a run that was killed is finished by the next one. Exit 1 when any rotation failed (a credential that failed before it was replaced keeps its old one, still working; one that failed after is finished by the next run). See docs/rotation.md.`

  static examples = [
    '<%= config.bin %> creds rotate fleet-system/member-1',
    '<%= config.bin %> creds rotate --all --expiring-within 48h -o json',
  ]

  static strict = false

  static args = {
    secret: Args.string({description: 'NAMESPACE/NAME of a hub Secret fleet wrote (repeatable).'}),
  }

  static flags = {
    all: Flags.boolean({description: 'Every hub Secret fleet wrote.'}),
    shard: Flags.string({description: 'With --all: only this part of the Secrets, INDEX/COUNT from 0 (e.g. 0/4), by NAMESPACE/NAME. See docs/scale.md.'}),
    // The fleet-wide flag splits clusters; here the Secrets of --all are split (the same env and Indexed Job rule).
    'shard-count': Flags.integer({
      description: 'With --all: split the Secrets this many ways and take the part of this Pod of an Indexed Job (JOB_COMPLETION_INDEX), by NAMESPACE/NAME.',
      env: fleetFlags['shard-count'].env,
    }),
    file: Flags.string({description: 'A kubeconfig file creds generate --out wrote (repeatable).', multiple: true}),
    'expiring-within': Flags.string({description: 'Only credentials that expire within this time (e.g. 48h, 7d).'}),
    duration: Flags.string({description: 'Lifetime of the new credential, e.g. 720h, 30d (default: the lifetime generate was asked for).'}),
    cluster: Flags.string({char: 'c', description: 'Mint on this cluster, whatever the credential recorded (its cluster ID is still checked).'}),
    'hub-kubeconfig': Flags.string({description: 'Hub kubeconfig (default: the fleet configuration hub, else the current context of --kubeconfig/--context, KUBECONFIG, ~/.kube/config, in-cluster).'}),
    'hub-context': Flags.string({description: 'Hub context.'}),
    'no-lease': Flags.boolean({description: 'Do not take the per-Secret Lease (correctness rests on resourceVersion preconditions alone).', hidden: true}),
    'dry-run': Flags.boolean({description: 'Say what would be rotated; touch nothing.'}),
  }

  async run(): Promise<RotationReport> {
    const f = this.flags
    // Parsed again for the variadic names (the base command keeps only the first argument); parsing has no side effects.
    const {argv} = await this.parse({flags: CredsRotate.flags, baseFlags: BaseCommand.baseFlags, args: CredsRotate.args, strict: false})
    const names = argv as string[]
    if (!f.all && names.length === 0 && !f.file?.length) throw new UsageError('name at least one hub Secret NAMESPACE/NAME or --file, or pass --all')
    if (f.all && names.length > 0) throw new UsageError('--all and Secret names exclude each other')
    const shard = resolveShard({shard: f.shard, count: f['shard-count'], env: process.env})
    if (shard && !f.all) throw new UsageError(`${f.shard === undefined ? '--shard-count' : '--shard'} splits --all; with named Secrets or --file, name each Pod's own`)
    // A --file that is missing, a directory or unreadable is one line before any cluster or hub is touched.
    for (const file of f.file ?? []) await checkReadableFile(file, `--file ${file}`, 'a kubeconfig file')
    const targets = names.map((n) => {
      const ref = namespacedName(n)
      if (!ref) throw new UsageError(`"${n}": expected NAMESPACE/NAME of a hub Secret`)
      return ref
    })
    const within = f['expiring-within'] === undefined ? undefined : parseLifetime(f['expiring-within'], '--expiring-within')
    const duration = f.duration === undefined ? undefined : Math.floor(parseLifetime(f.duration, '--duration') / 1000)
    if (duration !== undefined && duration < MIN_TOKEN_SECONDS) throw new UsageError('--duration: at least 10m (the API server refuses shorter tokens)')
    const hubs = f.all || names.length > 0 ? await this.credsHubs(f) : []
    // SIGINT/SIGTERM: each credential stops at its next step; one not yet written lifts its claim (exit 130, 143).
    const cancel = this.cancellation()
    const report = await rotateCredentials(
      {
        names: targets,
        files: f.file ?? [],
        all: f.all,
        shard,
        expiringWithinMs: within,
        durationSeconds: duration,
        dryRun: f['dry-run'],
        hub: hubs[0]?.spec,
        cluster: (name) => this.fleet.provider.get(name),
        clusters: () => this.fleet.provider.list(),
        clusterOverride: f.cluster,
        concurrency: f.concurrency,
        lease: !f['no-lease'],
      },
      // At a terminal, a progress line over the credentials, as clusters verify draws one over clusters.
      {connector: this.fleet.connector, cancel, hooks: rotationHooks(process.env), onProgress: this.machineOutput ? undefined : progressLine({noun: 'credentials'})},
    )
    const notes: string[] = []
    const failed = report.items.filter((i) => i.status === 'failed')
    const acted = report.items.filter((i) => i.status !== 'skipped')
    // Never a silent success: nothing selected, or nothing to do after the filter, is said; any failure exits 1.
    if (report.shard) this.logStderr(`${shardName(report.shard)}: ${report.items.length} of the ${report.shard.selected} credential Secret${report.shard.selected === 1 ? '' : 's'}${report.items.length === 0 && report.shard.selected > 0 ? ': nothing to do in this shard' : ''}`)
    const emptyShard = report.items.length === 0 && (report.shard?.selected ?? 0) > 0
    if (report.items.length === 0 && !emptyShard) notes.push(`no fleet-managed credential Secrets found on hub ${report.hub}`)
    else if (acted.length === 0) notes.push(`none of ${report.items.length} credentials expires within ${f['expiring-within']}: nothing rotated`)
    for (const i of report.items) {
      const shortened = i.lifetime && shortenedWarning(i.lifetime, i.method ?? '')
      if (shortened) notes.push(`warning: ${where(i)}: ${shortened}`)
    }
    if (failed.length > 0) notes.push(rotationFailureNote(failed))
    const swept = report.leases
    if (swept?.removed.length) notes.push(`removed ${swept.removed.length} rotation Lease${swept.removed.length === 1 ? '' : 's'} a stopped run left on the hub: ${swept.removed.join(', ')}`)
    if (swept?.error) notes.push(`warning: the rotation Leases stopped runs left could not be looked for (${swept.error.message}): the next run removes them`)
    if ((report.items.length === 0 && !emptyShard) || failed.length > 0) this.markFailed()
    if (cancel.interrupted) {
      notes.push(`interrupted (${cancel.interrupted.signalName}): a credential not yet replaced keeps its old one (claim lifted); one already replaced is finished by the next run`)
      process.exitCode = cancel.interrupted.exitCode
    }
    this.render(report, {
      rows: report.items,
      columns: [
        {header: 'credential', get: (i: RotatedCredential) => where(i)},
        {header: 'status', get: (i) => i.status + (i.resumed ? ` (resumed ${i.resumed})` : ''), color: (i, k) => (i.status === 'failed' ? k.red : undefined)},
        {header: 'method', get: (i) => i.method ?? ''},
        {header: 'new expires', get: (i) => i.new?.expires ?? ''},
        {header: 'lifetime', get: (i) => describeLifetime(i.lifetime)},
        {header: 'revoked', get: (i) => (i.revoked ? `${i.revoked.done ? 'yes' : 'no'}: ${i.revoked.reason}` : '')},
        {header: 'fingerprint', get: (i) => (i.new?.fingerprint ? `${i.old.fingerprint?.slice(0, 19) ?? '?'} -> ${i.new.fingerprint.slice(0, 19)}` : ''), wide: true},
        {header: 'steps', get: (i) => i.steps.map((s) => `${s.step} ${s.ms}ms`).join(', '), wide: true},
        {header: 'reason', get: (i) => (i.status === 'rotated' ? '' : (i.reason ?? ''))},
      ],
      name: (i) => (i.secret ? `secret/${where(i)}` : where(i)),
      notes,
      // One `error:` line per failed rotation on stderr, in every format (the table's reason column is not enough for -o yaml).
      failures: failed.map((i) => ({error: {kind: i.error?.kind ?? 'server', message: mention(i, unfinishedLine(i))}})),
      metrics: rotationMetrics(report),
    })
    return report
  }
}

const where = (i: RotatedCredential) => (i.secret ? `${i.secret.namespace}/${i.secret.name}` : (i.file?.path ?? ''))

/** A failed item's line: the cause, where it stopped, and what the next run does (docs/rotation.md, "What the CronJob says"). */
const unfinishedLine = (i: RotatedCredential) => {
  const cause = i.reason ?? i.error?.message ?? i.status
  const u = i.unfinished
  return u ? `${cause} (at ${u.step}, on ${u.on}); ${u.next}` : cause
}

/** The item's message, naming its Secret or file unless it already does. */
const mention = (i: RotatedCredential, message: string) => (message.includes(where(i)) ? message : `${where(i)}: ${message}`)
