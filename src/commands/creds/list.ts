import { Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags } from '../../cli/base-command.js';
import { credentialMetrics } from '../../cli/metrics.js';
import { hubFlags } from '../../cli/hubs.js';
import { formatAge, parseLifetime } from '../../base/duration.js';
import { EXIT_USAGE } from '../../base/errors.js';
import { parseCredentialId } from '../../kubeconfig/credentials.js';

import { type CredentialItem, type CredentialList, listCredentials, listHubs } from '../../creds/list.js';

export default class CredsList extends BaseCommand<typeof CredsList> {
  static summary = 'List every credential fleet can see, with its method, identity and expiry.';
  static description = `Reads the users of the kubeconfig files fleet uses, the credentials exec providers' programs print, and the consumer Secrets on the hubs of the fleet configuration (multicluster-runtime, Cluster API, cluster-inventory, Argo CD, and every Secret fleet wrote), and describes each from the credential itself: JWT iat/exp, certificate NotBefore/NotAfter. Nothing secret is printed. With --expiring-within, exit 1 when any credential expires within that time (for a CI cron). --live checks that each still authenticates.`;

  static examples = [
    '<%= config.bin %> creds list',
    '<%= config.bin %> creds list --expiring-within 72h',
    '<%= config.bin %> creds list --hub-kubeconfig hub.kubeconfig --live -o json',
    '<%= config.bin %> creds list --credential-id JTI=5f0c2d2e-6a6b-4f5e-9c1e-3b0a8f1d2c4e',
  ];

  static metrics = true;

  static flags = {
    'expiring-within': Flags.string({
      description: 'Exit 1 when any credential expires within this time (e.g. 72h, 30d, 2w).',
    }),
    live: Flags.boolean({ description: 'Check that each credential still authenticates (SelfSubjectReview).' }),
    'credential-id': Flags.string({
      description:
        'Only the credential with this credential-id, as an audit event records it in user.extra["authentication.kubernetes.io/credential-id"] (JTI=<jti> of a ServiceAccount token, X509SHA256=<hex> of a client certificate): which Secret, file or context holds it. Repeatable.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    ...hubFlags({
      defaultHub:
        'the hubs of the fleet configuration, else the current context of --kubeconfig/--context, KUBECONFIG, ~/.kube/config, in-cluster',
    }),
  };

  async run(): Promise<CredentialList> {
    const f = this.flags;
    const { expiringWithinMs: within, credentialIds } = listOptions(f);
    // A directory given as --kubeconfig is sorted out first: no hub guessed from it, or one line (exit 2) before anything is listed.
    const { hubs, warnings: hubWarnings } = await listHubs(await this.credsHubs(f));
    const refs = await this.fleet.provider.list();
    const result = await listCredentials(refs, hubs, {
      connector: this.fleet.connector,
      expiringWithinMs: within,
      live: f.live,
      concurrency: this.flags.concurrency,
      credentialIds,
    });
    if (within !== undefined) result.expiringWithin = f['expiring-within'];
    if (hubWarnings.length > 0) result.warnings = [...hubWarnings, ...(result.warnings ?? [])];
    const expiring = result.items.filter((i) => i.expiring);
    const notes = (result.warnings ?? []).map((w) => `warning: ${w}`);
    if (result.items.length === 0)
      notes.push(
        credentialIds
          ? `no credential with credential-id ${credentialIds.join(' or ')} in the kubeconfig files and hub Secrets fleet read (a credential since rotated, revoked or held elsewhere is not found)`
          : 'no credentials found (kubeconfig files, hub Secrets)',
      );
    if (expiring.length > 0)
      notes.push(
        `${expiring.length} credential${expiring.length > 1 ? 's' : ''} expire${expiring.length > 1 ? '' : 's'} within ${f['expiring-within']}`,
      );
    const liveFailed = result.items.filter((i) => i.live && !i.live.ok);
    if (liveFailed.length > 0)
      notes.push(
        `${liveFailed.length} credential${liveFailed.length > 1 ? 's' : ''} no longer authenticate${liveFailed.length > 1 ? '' : 's'}`,
      );
    // Never a silent success: nothing found, an unreadable hub, an expiring or dead credential all fail the run.
    if (result.items.length === 0 || result.errors.length > 0 || expiring.length > 0 || liveFailed.length > 0)
      this.markFailed();
    // A hub whose kubeconfig is broken is a configuration error: exit 2, as in every command.
    if (result.errors.some((e) => e.error.kind === 'config' || e.error.kind === 'usage')) this.markFailed(EXIT_USAGE);
    await this.render(result, {
      rows: result.items,
      columns: [
        { header: 'location', get: (i: CredentialItem) => i.location },
        { header: 'format', get: (i) => i.format },
        { header: 'method', get: (i) => i.method },
        { header: 'identity', get: (i) => i.identity ?? '' },
        { header: 'age', get: (i) => (i.issued ? formatAge(i.issued).replace(/^expired (.*) ago$/, '$1') : '') },
        {
          header: 'expires',
          get: (i) =>
            i.expires
              ? `${i.expires} (${formatAge(i.expires)})`
              : i.method === 'legacy-token'
                ? 'never'
                : i.method === 'workload-identity'
                  ? 'minted per use'
                  : '',
          color: (i, k) => (i.expiring ? k.red : undefined),
        },
        { header: 'fleet', get: (i) => (i.managedByFleet ? 'yes' : '') },
        {
          header: 'credential-id',
          get: (i) => i.credentialId ?? (i.method === 'legacy-token' ? 'none (legacy token)' : ''),
          wide: true,
        },
        { header: 'adoptable', get: (i) => i.adoptable?.join(', ') ?? '', wide: true },
        { header: 'cluster', get: (i) => i.cluster ?? '', wide: true, cluster: true },
        { header: 'server', get: (i) => i.server ?? '', wide: true },
        ...(f.live
          ? [
              {
                header: 'live',
                get: (i: CredentialItem) =>
                  i.live
                    ? i.live.ok
                      ? `ok ${i.live.username}`
                      : `${i.live.error?.kind}: ${i.live.error?.message}`
                    : '',
              },
            ]
          : []),
        { header: 'problems', get: (i) => i.problems.join('; '), wide: true },
      ],
      name: (i) => i.location,
      notes,
      metrics: credentialMetrics(result),
      // A hub that could not be read is one `error:` line on stderr in every format, JSON and YAML included.
      failures: result.errors.map((e) => ({
        error: { kind: e.error.kind, message: `hub ${e.hub}: ${e.error.message}` },
      })),
    });
    return result;
  }
}

/** What `creds list` filters on, checked before any hub or cluster is read. */
export interface ListOptions {
  /** --expiring-within as milliseconds (a lifetime: 30d and 720h alike). */
  expiringWithinMs?: number;
  /** --credential-id, each checked and written as the API server writes it. */
  credentialIds?: string[];
}

export function listOptions(f: BaseFlags<typeof CredsList>): ListOptions {
  const ids = f['credential-id'];
  return {
    expiringWithinMs:
      f['expiring-within'] === undefined ? undefined : parseLifetime(f['expiring-within'], '--expiring-within'),
    ...(ids ? { credentialIds: ids.map((id) => parseCredentialId(id, '--credential-id')) } : {}),
  };
}
