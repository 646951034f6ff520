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
import { hubFlags } from '../../cli/hubs.js';
import { UsageError } from '../../base/errors.js';
import {
  type RevocationReport,
  type RevokedCredential,
  revokeCredentials,
  revokeUncheckedNote,
} from '../../creds/revoke.js';

export default class CredsRevoke extends BaseCommand<typeof CredsRevoke> {
  static summary =
    'Revoke credentials fleet made: delete the credential, the RBAC and ServiceAccount fleet created for it, and the hub Secret or file.';
  static description = `For each hub Secret (NAMESPACE/NAME) or kubeconfig file (--file) written by fleet creds generate: deletes the anchor Secret of a bound token (every token bound to it stops working) or the legacy token Secret, then the RBAC and the ServiceAccount fleet created for the identity (not ones it found, and not while another credential of the same identity uses them), checks that the server refuses the old credential (401), and only then deletes the hub Secret or the file. A client certificate cannot be revoked: it stays valid until its NotAfter (said), its RBAC is deleted. A Secret or file fleet did not write is refused (exit 2, nothing deleted). One that does not exist is reported as not found (exit 1; 0 with --ignore-not-found). An interrupted run is finished by running it again. See docs/creds.md.`;

  static examples = [
    '<%= config.bin %> creds revoke fleet-system/member-1',
    '<%= config.bin %> creds revoke --file reader.kubeconfig --dry-run',
    '<%= config.bin %> creds revoke clusters/work-kubeconfig -o json',
  ];

  static strict = false;

  static args = {
    secret: Args.string({ description: 'NAMESPACE/NAME of a hub Secret fleet wrote (repeatable).' }),
  };

  static flags = {
    file: Flags.string({
      description: 'A kubeconfig file creds generate --out wrote (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
    ...hubFlags(),
    cluster: Flags.string({
      char: 'c',
      description: "The credential's cluster, whatever it recorded (its cluster ID is still checked).",
    }),
    force: Flags.boolean({ description: FORCE_DESCRIPTION }),
    'ignore-not-found': Flags.boolean({
      description: 'A Secret or file that does not exist (already revoked) is not an error.',
    }),
    'dry-run': Flags.boolean({ description: 'List what would be deleted and what kept; touch nothing.' }),
  };

  async run(): Promise<RevocationReport> {
    const f = this.flags;
    const o = await revokeOptions(f, this.positionals);
    const hubs = o.targets.names.length > 0 ? await this.credsHubs(f) : [];
    const report = await revokeCredentials(
      { ...o.targets, ...credentialScope(this.fleet, hubs, o.clusterOverride), dryRun: o.dryRun },
      {
        connector: this.fleet.connector,
        guard: deleteGuard(this.fleet, f.force),
        // At a terminal, a live line: the credentials done, and the seconds spent waiting for the old token's 401.
        progress: this.progress.port('credentials'),
      },
    );
    const failed = report.items.filter((i) => i.status === 'failed');
    const missing = report.items.filter((i) => i.status === 'not-found');
    const notes: string[] = [];
    if (missing.length > 0 && f['ignore-not-found'])
      notes.push(...missing.map((i) => `${i.reason} (--ignore-not-found)`));
    for (const i of report.items) {
      const unchecked = revokeUncheckedNote(i);
      if (unchecked) notes.push(`${credentialWhere(i)}: ${unchecked}`);
      // A refusal is the item's error line; a plan that would be refused, and what --force overrode, are notes.
      if (i.stillUsed?.length && i.status === 'planned') notes.push(`${credentialWhere(i)}: ${i.reason ?? ''}`);
      if (i.stillUsed?.length && i.status === 'revoked')
        notes.push(`${credentialWhere(i)}: deleted although still used by ${i.stillUsed.join(', ')} (--force)`);
    }
    // Never a silent success: a failure, or a name that matched nothing without --ignore-not-found, exits 1.
    if (failed.length > 0 || (missing.length > 0 && !f['ignore-not-found'])) this.markFailed();
    const problems = [...failed, ...(f['ignore-not-found'] ? [] : missing)];
    await this.render(report, {
      rows: report.items,
      columns: [
        { header: 'credential', get: (i: RevokedCredential) => credentialWhere(i) },
        {
          header: 'status',
          get: (i) => i.status,
          color: (i, k) => (i.status === 'failed' || i.status === 'not-found' ? k.red : undefined),
        },
        { header: 'method', get: (i) => i.method ?? '' },
        { header: 'deleted', get: (i) => summary(i) },
        {
          header: 'kept',
          get: (i) =>
            i.kept
              .map((k) => `${k.kind} ${k.namespace ? `${k.namespace}/` : ''}${k.name}${k.on === 'hub' ? ' (hub)' : ''}`)
              .join(', '),
        },
        { header: 'refused', get: (i) => (i.refused ? `${i.refused.done ? 'yes' : 'no'}: ${i.refused.reason}` : '') },
        { header: 'reason', shrink: 'first', get: (i) => (i.status === 'revoked' ? '' : (i.reason ?? '')) },
        {
          header: 'objects',
          get: (i) =>
            i.deleted.map((d) => `${d.kind} ${d.namespace ? `${d.namespace}/` : ''}${d.name} (${d.action})`).join(', '),
          wide: true,
        },
        {
          header: 'why kept',
          get: (i) => i.kept.map((k) => `${k.kind} ${k.name}: ${k.reason}`).join('; '),
          wide: true,
        },
      ],
      // -o name: what was revoked (or would be, --dry-run); like kubectl delete, a name that was not found is not printed.
      names: report.items.filter((i) => i.status === 'revoked' || i.status === 'planned').map(credentialName),
      notes,
      failures: problems.map((i) =>
        credentialFailure(
          i,
          i.reason ?? i.error?.message ?? i.status,
          i.status === 'not-found' ? 'not-found' : 'server',
        ),
      ),
    });
    return report;
  }
}

/** What a revoke run does, from its flags and arguments, checked (Complete/Validate) before anything is touched. */
export interface RevokeOptions {
  targets: CredentialTargets;
  dryRun: boolean;
  /** --cluster: revoke on this cluster whatever the credential recorded. */
  clusterOverride?: string;
}

/** Complete and validate `creds revoke`'s flags and NAMESPACE/NAME arguments into its options (usage errors: exit 2). */
export async function revokeOptions(f: BaseFlags<typeof CredsRevoke>, names: string[]): Promise<RevokeOptions> {
  if (names.length === 0 && !f.file?.length)
    throw new UsageError('name at least one hub Secret NAMESPACE/NAME or --file PATH to revoke');
  // A --file that is a directory or unreadable is one line before anything is touched; a missing one is `not-found`
  // (already revoked), as kubectl delete reports it.
  const targets = await credentialTargets(names, f.file, { missingFileOk: true });
  return { targets, dryRun: f['dry-run'], clusterOverride: f.cluster };
}

function summary(i: RevokedCredential): string {
  const count = (a: string) => i.deleted.filter((d) => d.action === a).length;
  const parts = [
    count('deleted') && `${count('deleted')} deleted`,
    count('would-delete') && `${count('would-delete')} would be deleted`,
    count('already-gone') && `${count('already-gone')} already gone`,
  ];
  return parts.filter(Boolean).join(', ');
}
