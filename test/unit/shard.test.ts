// --shard and the Indexed Job's index (src/fleet/shard.ts): what is accepted, what is refused with which message, and
// the assignment docs/scale.md writes down (the first 32 bits of SHA-256 of the name, big-endian, modulo the count).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { UsageError } from '../../src/base/errors.js';
import { inShard, resolveShard, shardOf } from '../../src/fleet/shard.js';

describe('resolveShard', () => {
  it('reads --shard INDEX/COUNT, or JOB_COMPLETION_INDEX with a count; nothing without either', () => {
    assert.deepEqual(resolveShard({ shard: '0/4' }), { index: 0, count: 4 });
    assert.deepEqual(resolveShard({ shard: ' 3/4 ' }), { index: 3, count: 4 });
    assert.deepEqual(resolveShard({ shard: '1/2', count: 2 }), { index: 1, count: 2 });
    assert.deepEqual(resolveShard({ count: 5, env: { JOB_COMPLETION_INDEX: '4' } }), { index: 4, count: 5 });
    assert.equal(
      resolveShard({ env: { JOB_COMPLETION_INDEX: '4' } }),
      undefined,
      'an Indexed Job without a count runs unsharded',
    );
    assert.equal(resolveShard({}), undefined);
  });

  it('refuses, as usage errors naming the input: bad syntax, index not under the count, count 0, a count with no index, a disagreement', () => {
    const refused = (input: Parameters<typeof resolveShard>[0], message: RegExp) =>
      assert.throws(
        () => resolveShard(input),
        (e: Error) => e instanceof UsageError && message.test(e.message),
      );
    refused({ shard: '4/4' }, /^--shard 4\/4: the index counts from 0 and must be under the count \(0\.\.3\)$/);
    refused({ shard: '0/0' }, /^--shard 0\/0: the count must be at least 1$/);
    refused({ shard: '-1/4' }, /expected INDEX\/COUNT/);
    refused({ shard: '1' }, /expected INDEX\/COUNT/);
    refused({ shard: '1/2/3' }, /expected INDEX\/COUNT/);
    refused({ count: 3, env: {} }, /^--shard-count 3: no shard index/);
    refused({ count: 3, env: { JOB_COMPLETION_INDEX: 'x' } }, /^JOB_COMPLETION_INDEX=x: not a number$/);
    refused(
      { count: 3, env: { JOB_COMPLETION_INDEX: '3' } },
      /^JOB_COMPLETION_INDEX=3 with --shard-count 3: the index counts from 0/,
    );
    refused({ count: 0, env: { JOB_COMPLETION_INDEX: '0' } }, /the count must be at least 1/);
    refused({ shard: '0/2', count: 3 }, /disagree on the count/);
  });
});

describe('shardOf', () => {
  it('is the documented formula: sha256("a") starts ca978112, 3398926610 mod 4 = 2, mod 7 = 3', () => {
    assert.equal(shardOf('a', 4), 3398926610 % 4);
    assert.equal(shardOf('a', 7), 3398926610 % 7);
    assert.equal(3398926610 % 4, 2);
  });

  it('puts every name in exactly one shard, spread evenly (10,000 names over 4 within 5%)', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 10_000; i++) {
      const name = `clusters/prod-${i}.kubeconfig+ctx-${i}`;
      const here = [0, 1, 2, 3].filter((index) => inShard(name, { index, count: 4 }));
      assert.equal(here.length, 1);
      counts[here[0]]++;
    }
    for (const c of counts) assert.ok(Math.abs(c - 2500) < 125, `uneven: ${counts.join(', ')}`);
    assert.ok(inShard('anything', undefined));
    assert.ok(inShard('anything', { index: 0, count: 1 }));
  });
});
