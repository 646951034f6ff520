import {Flags, type Interfaces} from '@oclif/core'

import {UsageError} from '../base/errors.js'
import type {Impersonation} from '../kube/client.js'

/** Flags of commands that work over several clusters at once. */
export const fleetFlags = {
  cluster: Flags.string({
    char: 'c',
    description: 'Cluster to work on (repeatable): a full name or an unambiguous short name.',
    multiple: true,
  }),
  all: Flags.boolean({char: 'A', description: 'Work on every cluster the providers list.'}),
  selector: Flags.string({char: 'l', description: 'Only clusters whose labels match this selector (e.g. env=prod,tier!=edge).'}),
  'cluster-timeout': Flags.string({description: 'Time limit for all the work on one cluster (0 for none).', default: '30s'}),
  shard: Flags.string({description: 'Only this part of the selected clusters: INDEX/COUNT, INDEX from 0 (e.g. 0/4); a cluster\'s part depends on its name alone. See docs/scale.md.'}),
  'shard-count': Flags.integer({description: 'Split the selected clusters this many ways and take the part of this Pod of an Indexed Job (JOB_COMPLETION_INDEX).', env: 'FLEET_SHARD_COUNT'}),
}

/**
 * fleetFlags without --shard/--shard-count, for a command whose answer needs every selected cluster at once (auth diff
 * compares them with each other): one part of the selection would answer another question.
 */
const {shard: _shard, 'shard-count': _shardCount, ...unsharded} = fleetFlags
export const fleetFlagsUnsharded = unsharded

/** The values of fleetFlags, each absent when the command does not declare it. */
export type FleetFlagValues = Partial<Interfaces.InferredFlags<typeof fleetFlags>>

/**
 * The fleetFlags values of a command's parsed flags, read by name and type: the base command does not know which
 * flags its subclass declares, so this is where that one unknown is checked instead of cast.
 */
export function fleetFlagValues(flags: object): FleetFlagValues {
  const f = flags as Record<string, unknown>
  const strings = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined)
  const string = (v: unknown) => (typeof v === 'string' ? v : undefined)
  return {
    cluster: strings(f.cluster),
    all: typeof f.all === 'boolean' ? f.all : undefined,
    selector: string(f.selector),
    'cluster-timeout': string(f['cluster-timeout']),
    shard: string(f.shard),
    'shard-count': typeof f['shard-count'] === 'number' ? f['shard-count'] : undefined,
  }
}

/** kubectl's impersonation flags, for commands that ask a question as another identity (`auth whoami|can-i|rules`, `clusters verify`). */
export const impersonationFlags = {
  as: Flags.string({description: 'Act as this user (Impersonate-User on every request), like kubectl --as: e.g. system:serviceaccount:ci:deployer. The caller needs "impersonate" permission.'}),
  'as-group': Flags.string({description: 'Act as a member of this group (repeatable; needs --as), like kubectl --as-group.', multiple: true}),
  'as-uid': Flags.string({description: 'Act with this UID (needs --as), like kubectl --as-uid.'}),
}

// What an HTTP header value cannot hold (RFC 9110 field-value: no control character but HTAB): such a value would end
// every cluster's request in a protocol error that reads as "unreachable", so it is refused before any is touched.
const NOT_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/

function notInHeader(flag: string, value: string): void {
  if (NOT_IN_HEADER.test(value)) throw new UsageError(`${flag} ${JSON.stringify(value)}: a control character cannot be sent in an HTTP header (Impersonate-*)`)
}

/**
 * The identity impersonationFlags name, checked before any cluster is touched; undefined when none was given. Groups or
 * a UID without a user are refused, as client-go refuses them ("without impersonating a user").
 */
export function impersonationValue(flags: object): Impersonation | undefined {
  const f = flags as Record<string, unknown>
  const user = typeof f.as === 'string' ? f.as : undefined
  const groups = Array.isArray(f['as-group']) ? (f['as-group'] as unknown[]).filter((g): g is string => typeof g === 'string') : []
  const uid = typeof f['as-uid'] === 'string' ? f['as-uid'] : undefined
  if (user === undefined) {
    if (groups.length > 0 || uid !== undefined) throw new UsageError(`${groups.length > 0 ? '--as-group' : '--as-uid'} needs --as (the user to impersonate)`)
    return undefined
  }
  if (user.trim() === '') throw new UsageError('--as: the user to impersonate must not be empty')
  if (groups.some((g) => g.trim() === '')) throw new UsageError('--as-group: a group must not be empty')
  if (uid !== undefined && uid.trim() === '') throw new UsageError('--as-uid: the UID must not be empty')
  notInHeader('--as', user)
  for (const g of groups) notInHeader('--as-group', g)
  if (uid !== undefined) notInHeader('--as-uid', uid)
  return {user, groups, ...(uid === undefined ? {} : {uid})}
}
