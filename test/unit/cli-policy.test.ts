import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { colorEnabled } from '../../src/cli/color.js';
import { formatAge, parseTimeLimit } from '../../src/base/duration.js';
import { UsageError } from '../../src/base/errors.js';

const tty = { isTTY: true } as NodeJS.WriteStream;
const pipe = { isTTY: false } as NodeJS.WriteStream;

describe('colour policy', () => {
  it('colours a terminal, not a pipe', () => {
    assert.equal(colorEnabled({ stream: tty, env: {} }), true);
    assert.equal(colorEnabled({ stream: pipe, env: {} }), false);
  });
  it('NO_COLOR, --no-color and TERM=dumb turn it off; FORCE_COLOR and --color turn it on', () => {
    assert.equal(colorEnabled({ stream: tty, env: { NO_COLOR: '1' } }), false);
    assert.equal(colorEnabled({ stream: tty, env: { NO_COLOR: '' } }), true);
    assert.equal(colorEnabled({ stream: tty, env: {}, flag: false }), false);
    assert.equal(colorEnabled({ stream: tty, env: { TERM: 'dumb' } }), false);
    assert.equal(colorEnabled({ stream: pipe, env: { FORCE_COLOR: '1' } }), true);
    assert.equal(colorEnabled({ stream: pipe, env: { FORCE_COLOR: '0' } }), false);
    assert.equal(colorEnabled({ stream: pipe, env: {}, flag: true }), true);
    // An explicit --no-color beats FORCE_COLOR; NO_COLOR beats --color.
    assert.equal(colorEnabled({ stream: tty, env: { FORCE_COLOR: '1' }, flag: false }), false);
    assert.equal(colorEnabled({ stream: tty, env: { NO_COLOR: '1' }, flag: true }), false);
  });
});

describe('--request-timeout durations', () => {
  it('reads kubectl forms', () => {
    assert.equal(parseTimeLimit('0'), 0);
    assert.equal(parseTimeLimit('15'), 15_000);
    assert.equal(parseTimeLimit('10s'), 10_000);
    assert.equal(parseTimeLimit('500ms'), 500);
    assert.equal(parseTimeLimit('1m30s'), 90_000);
    assert.equal(parseTimeLimit('1h'), 3_600_000);
  });
  it('rejects anything else with a usage error naming the flag', () => {
    for (const bad of ['', 'soon', '10x', '1m junk', '-5s']) {
      assert.throws(
        () => parseTimeLimit(bad),
        (e: Error) => e instanceof UsageError && e.message.startsWith('--request-timeout: invalid duration'),
      );
    }
  });
  it('formats expiry as a short age', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(formatAge('2026-01-01T00:00:30Z', now), '30s');
    assert.equal(formatAge('2026-01-01T01:30:00Z', now), '90m');
    assert.equal(formatAge('2026-01-02T23:00:00Z', now), '47h');
    assert.equal(formatAge('2026-01-03T00:00:00Z', now), '2d');
    assert.equal(formatAge('2026-01-11T00:00:00Z', now), '10d');
    assert.equal(formatAge('2025-12-31T00:00:00Z', now), 'expired 24h ago');
  });
});
