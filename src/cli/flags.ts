import { Flags, type Interfaces } from '@oclif/core';

import { formatDuration } from '../base/duration.js';
import { UsageError } from '../base/errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../base/limits.js';
import { PROVIDER_TYPES } from '../config/fleet-config.js';
import type { Impersonation } from '../kube/client.js';
import { OUTPUT_FORMATS } from './parse.js';

/** The flags of every command (BaseCommand.baseFlags), shown under GLOBAL in help. */
export const globalFlags = {
  kubeconfig: Flags.string({
    description:
      'Kubeconfig file or directory, or a ":"-separated list (files merge like KUBECONFIG; each file in a directory stands alone).',
    helpGroup: 'GLOBAL',
  }),
  context: Flags.string({ description: 'Kubeconfig context to use.', helpGroup: 'GLOBAL' }),
  'fleet-config': Flags.string({
    description:
      'Fleet configuration file naming the providers (default: ./fleet.yaml, then $XDG_CONFIG_HOME/fleet/config.yaml).',
    env: 'FLEET_CONFIG',
    helpGroup: 'GLOBAL',
  }),
  kuberc: Flags.string({
    description:
      "kubectl's preferences file, whose credentialPluginPolicy decides which exec plugins may run (default: $KUBERC, then ~/.kube/kuberc; KUBECTL_KUBERC=false: none).",
    helpGroup: 'GLOBAL',
  }),
  provider: Flags.string({
    description: `Only this provider: a name from the fleet configuration, or a provider type (${PROVIDER_TYPES.join(', ')}).`,
    helpGroup: 'GLOBAL',
  }),
  output: Flags.string({
    char: 'o',
    description:
      'Output format (jsonl: one JSON item per line, over many clusters each as its cluster answers; prometheus: metrics, on creds list, creds rotate and clusters verify only).',
    options: [...OUTPUT_FORMATS],
    helpGroup: 'GLOBAL',
  }),
  color: Flags.boolean({
    allowNo: true,
    description:
      'Colour the output: --color, --no-color, --color=true|false (default: when stdout is a terminal and NO_COLOR is unset; FORCE_COLOR=0 turns it off).',
    helpGroup: 'GLOBAL',
  }),
  'request-timeout': Flags.string({
    description: 'Time limit for each request to a cluster (e.g. 10s, 1m; 0 for none).',
    default: formatDuration(DEFAULT_REQUEST_TIMEOUT_MS),
    helpGroup: 'GLOBAL',
  }),
  concurrency: Flags.integer({
    description: 'How many clusters to talk to at once.',
    default: 16,
    min: 1,
    helpGroup: 'GLOBAL',
  }),
  verbose: Flags.boolean({
    char: 'v',
    description: 'Print more detail, and stack traces on errors. -v N also sets --verbosity N, as kubectl.',
    helpGroup: 'GLOBAL',
  }),
  verbosity: Flags.integer({
    description:
      'Log level like kubectl -v: 6 logs each request (method, URL, status, time) on stderr, 7 adds request headers, 8 response headers; credentials are masked.',
    min: 0,
    helpGroup: 'GLOBAL',
  }),
};

/**
 * The global flags of an exec credential plugin (wi token, kubeconfig credential): its stdout is the ExecCredential,
 * JSON whatever is asked, and it serves one cluster, so help offers neither the other formats nor --concurrency; both
 * are still parsed, as every command's (-o json is accepted, anything else refused in run).
 */
export const pluginGlobalFlags = {
  ...globalFlags,
  output: { ...globalFlags.output, hidden: true },
  concurrency: { ...globalFlags.concurrency, hidden: true },
};

/** Flags of commands that work over several clusters at once. */
export const fleetFlags = {
  cluster: Flags.string({
    char: 'c',
    description: 'Cluster to work on (repeatable): a full name or an unambiguous short name.',
    multiple: true,
    // One value per use, as kubectl's flags take: oclif's default for a repeatable flag takes every word up to the next
    // flag, so `auth can-i -c hub get pods` read get and pods as clusters. Every repeatable flag of fleet says this
    // (test/unit/usage-papercuts.test.ts checks each command).
    multipleNonGreedy: true,
  }),
  all: Flags.boolean({ char: 'A', description: 'Work on every cluster the providers list.' }),
  selector: Flags.string({
    char: 'l',
    description: 'Only clusters whose labels match this selector (e.g. env=prod,tier!=edge).',
  }),
  'cluster-timeout': Flags.string({
    description: 'Time limit for all the work on one cluster (0 for none).',
    default: '30s',
  }),
  shard: Flags.string({
    description:
      "Only this part of the selected clusters: INDEX/COUNT, INDEX from 0 (e.g. 0/4); a cluster's part depends on its name alone. See docs/scale.md.",
  }),
  'shard-count': Flags.integer({
    description:
      'Split the selected clusters this many ways and take the part of this Pod of an Indexed Job (JOB_COMPLETION_INDEX).',
    env: 'FLEET_SHARD_COUNT',
  }),
};

/**
 * fleetFlags without --shard/--shard-count, for a command whose answer needs every selected cluster at once (auth diff
 * compares them with each other): one part of the selection would answer another question.
 */
const { shard: _shard, 'shard-count': _shardCount, ...unsharded } = fleetFlags;
export const fleetFlagsUnsharded = unsharded;

/**
 * The values of fleetFlags as a command has them, each absent when the command does not declare it (auth diff has no
 * --shard, wi test only --all and --cluster-timeout). A command hands its own parsed flags over as this type
 * (BaseCommand.flagGroups), so a flag of the same name but another type (creds rotate's single --cluster, which names the
 * cluster to mint on) fails to compile instead of being read, or dropped, by name.
 */
export type SelectionFlags = Partial<Interfaces.InferredFlags<typeof fleetFlags>>;

/** kubectl's impersonation flags, for commands that ask a question as another identity (`auth whoami|can-i|rules`, `clusters verify`). */
export const impersonationFlags = {
  as: Flags.string({
    description:
      'Act as this user (Impersonate-User on every request), like kubectl --as: e.g. system:serviceaccount:ci:deployer. The caller needs "impersonate" permission.',
  }),
  'as-group': Flags.string({
    description: 'Act as a member of this group (repeatable; needs --as), like kubectl --as-group.',
    multiple: true,
    multipleNonGreedy: true,
  }),
  'as-uid': Flags.string({ description: 'Act with this UID (needs --as), like kubectl --as-uid.' }),
};

/** The values of impersonationFlags as a command that declares them has them (BaseCommand.flagGroups). */
export type ImpersonationFlags = Partial<Interfaces.InferredFlags<typeof impersonationFlags>>;

/** True when the command's flag definitions include any of `group`'s very definitions (not merely the same names). */
export function declaresGroup(definitions: object | undefined, group: object): boolean {
  const own = new Set(Object.values(definitions ?? {}));
  return Object.values(group).some((d) => own.has(d));
}

// What an HTTP header value cannot hold (RFC 9110 field-value: no control character but HTAB): such a value would end
// every cluster's request in a protocol error that reads as "unreachable", so it is refused before any is touched.
const NOT_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;

function notInHeader(flag: string, value: string): void {
  if (NOT_IN_HEADER.test(value))
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: a control character cannot be sent in an HTTP header (Impersonate-*)`,
    );
}

/**
 * The identity impersonationFlags name, checked before any cluster is touched; undefined when none was given. Groups or
 * a UID without a user are refused, as client-go refuses them ("without impersonating a user").
 */
export function impersonationValue(f: ImpersonationFlags): Impersonation | undefined {
  const user = f.as;
  const groups = f['as-group'] ?? [];
  const uid = f['as-uid'];
  if (user === undefined) {
    if (groups.length > 0 || uid !== undefined)
      throw new UsageError(`${groups.length > 0 ? '--as-group' : '--as-uid'} needs --as (the user to impersonate)`);
    return undefined;
  }
  if (user.trim() === '') throw new UsageError('--as: the user to impersonate must not be empty');
  if (groups.some((g) => g.trim() === '')) throw new UsageError('--as-group: a group must not be empty');
  if (uid !== undefined && uid.trim() === '') throw new UsageError('--as-uid: the UID must not be empty');
  notInHeader('--as', user);
  for (const g of groups) notInHeader('--as-group', g);
  if (uid !== undefined) notInHeader('--as-uid', uid);
  return { user, groups, ...(uid === undefined ? {} : { uid }) };
}
