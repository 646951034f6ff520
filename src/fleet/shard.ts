import { createHash } from 'node:crypto';

import { UsageError } from '../base/errors.js';

/** One part of a selection split COUNT ways: INDEX in 0..COUNT-1, as an Indexed Job numbers its Pods. */
export interface Shard {
  index: number;
  count: number;
}

/** Where the shard was given, for messages: the flag, or the Indexed Job's environment. */
export interface ShardInput {
  /** --shard INDEX/COUNT */
  shard?: string;
  /** --shard-count (or FLEET_SHARD_COUNT), with the index from JOB_COMPLETION_INDEX */
  count?: number;
  /** The environment to read JOB_COMPLETION_INDEX from. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The shard a run takes, or none. `--shard INDEX/COUNT` says it outright; in an Indexed Job (JOB_COMPLETION_INDEX set by
 * Kubernetes) a count (--shard-count or FLEET_SHARD_COUNT) is enough, since every Pod runs the same command. A count
 * with no index anywhere is refused rather than run unsharded: COUNT Pods each doing the whole fleet is not what was
 * asked.
 */
export function resolveShard(input: ShardInput): Shard | undefined {
  if (input.shard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(input.shard.trim());
    if (!m) throw new UsageError(`--shard ${input.shard}: expected INDEX/COUNT, e.g. 0/4 (INDEX counts from 0)`);
    const shard = { index: Number(m[1]), count: Number(m[2]) };
    check(shard, `--shard ${input.shard}`);
    if (input.count !== undefined && input.count !== shard.count)
      throw new UsageError(`--shard ${input.shard} and --shard-count ${input.count} disagree on the count`);
    return shard;
  }
  if (input.count === undefined) return undefined;
  const raw = input.env?.JOB_COMPLETION_INDEX;
  if (raw === undefined || raw === '') {
    throw new UsageError(
      `--shard-count ${input.count}: no shard index; run in an Indexed Job (JOB_COMPLETION_INDEX) or pass --shard INDEX/${input.count}`,
    );
  }
  if (!/^\d+$/.test(raw)) throw new UsageError(`JOB_COMPLETION_INDEX=${raw}: not a number`);
  const shard = { index: Number(raw), count: input.count };
  check(shard, `JOB_COMPLETION_INDEX=${raw} with --shard-count ${input.count}`);
  return shard;
}

function check(s: Shard, where: string): void {
  if (!Number.isSafeInteger(s.count) || s.count < 1) throw new UsageError(`${where}: the count must be at least 1`);
  if (s.index >= s.count)
    throw new UsageError(`${where}: the index counts from 0 and must be under the count (0..${s.count - 1})`);
}

/**
 * The shard `key` (a cluster's name, a Secret's NAMESPACE/NAME) belongs to among `count`: the first 32 bits of its
 * SHA-256, modulo the count. It depends on the key alone, not on the order or the rest of the selection, so Pods that
 * list the fleet at slightly different moments still agree on every cluster both saw; any tool can compute it
 * (docs/scale.md).
 */
export function shardOf(key: string, count: number): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % count;
}

export function inShard(key: string, shard: Shard | undefined): boolean {
  return shard === undefined || shard.count === 1 || shardOf(key, shard.count) === shard.index;
}

/** "shard 2/4" as the user wrote it (0-based). */
export function shardName(shard: Shard): string {
  return `shard ${shard.index}/${shard.count}`;
}
