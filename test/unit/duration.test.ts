import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { MAX_TIMER_MS, formatLifetime, parseLifetime, parseTimeLimit } from '../../src/base/duration.js';
import { UsageError } from '../../src/base/errors.js';
import { effectivePolicy, parsePolicy } from '../../src/verify/policy.js';
import { runFleet } from '../support/cli.js';

const DAY = 86_400_000;

describe('lifetimes and windows (parseLifetime): no timer cap', () => {
  it('reads days, weeks, years, hours and combinations', () => {
    assert.equal(parseLifetime('30d', '--duration'), 30 * DAY);
    assert.equal(parseLifetime('720h', '--duration'), 30 * DAY, 'the example of docs/creds.md and --help');
    assert.equal(parseLifetime('2w', '--duration'), 14 * DAY);
    assert.equal(parseLifetime('1y', '--duration'), 365 * DAY);
    assert.equal(parseLifetime('1d12h', '--expiring-within'), 36 * 3_600_000);
    assert.equal(parseLifetime('1h30m', '--duration'), 90 * 60_000);
    assert.equal(parseLifetime('1.5d', '--duration'), 36 * 3_600_000);
    assert.equal(parseLifetime('10m', '--duration'), 600_000);
    assert.equal(parseLifetime(' 45d ', '--expiring-within'), 45 * DAY);
    assert.equal(parseLifetime('0', '--expiring-within'), 0);
  });

  it('goes past the longest timer (about 24.8 days): a lifetime is never waited for', () => {
    assert.ok(parseLifetime('25d', '--duration') > MAX_TIMER_MS);
    assert.equal(parseLifetime('68y', '--duration'), 68 * 365 * DAY);
  });

  it('refuses bad input in one line naming the flag', () => {
    for (const bad of ['', 'soon', '30', '30x', '30 d', '-5d', '1d junk', '30D', '1mo', 'd']) {
      assert.throws(
        () => parseLifetime(bad, '--duration'),
        (e: Error) =>
          e instanceof UsageError &&
          e.exitCode === 2 &&
          e.message === `--duration: invalid duration "${bad}" (use a number and a unit, e.g. 30d, 720h, 90m, 2w, 1y)`,
        bad,
      );
    }
    assert.throws(
      () => parseLifetime('100y', '--expiring-within'),
      /^UsageError: --expiring-within: "100y" is longer than fleet accepts \(2147483647s, about 68 years/,
    );
  });

  it('writes lifetimes back in a form it reads', () => {
    for (const [s, text] of [
      [30 * 86_400, '30d'],
      [86_400, '24h'],
      [8 * 3600, '8h'],
      [5400, '1h30m'],
      [605, '10m5s'],
      [365 * 86_400, '1y'],
      [730 * 86_400, '2y'],
      [400 * 86_400, '400d'],
      [2 * 86_400 + 3600, '2d1h'],
    ] as const) {
      assert.equal(formatLifetime(s), text);
      assert.equal(parseLifetime(text, 'x') / 1000, s);
    }
  });
});

describe('time limits (parseTimeLimit): the timer cap stays', () => {
  it('reads the kubectl forms and the same units', () => {
    assert.equal(parseTimeLimit('0'), 0);
    assert.equal(parseTimeLimit('15'), 15_000);
    assert.equal(parseTimeLimit('1m30s', '--cluster-timeout'), 90_000);
    assert.equal(parseTimeLimit('1d'), DAY);
  });
  it('refuses a limit a timer cannot hold, naming the flag', () => {
    assert.throws(
      () => parseTimeLimit('30d'),
      /^UsageError: --request-timeout: "30d" is longer than the longest time limit fleet can keep \(2147483647ms, about 24 days\); use 0 for none$/,
    );
    assert.throws(
      () => parseTimeLimit('720h', '--cluster-timeout'),
      /^UsageError: --cluster-timeout: "720h" is longer than the longest time limit/,
    );
  });
});

describe('every lifetime flag reads days; every time limit keeps its cap (the CLI as users run it)', () => {
  it('--request-timeout 30d is refused before anything is contacted', async () => {
    const res = await runFleet(['creds', 'list', '--request-timeout', '30d', '--expiring-within', '30d']);
    assert.equal(res.code, 2, res.stderr);
    assert.equal(
      res.stderr,
      'error: --request-timeout: "30d" is longer than the longest time limit fleet can keep (2147483647ms, about 24 days); use 0 for none\n',
    );
  });
  for (const [cmd, flag] of [
    [['creds', 'list'], '--expiring-within'],
    [['creds', 'rotate', 'ns/name'], '--expiring-within'],
    [['creds', 'rotate', 'ns/name'], '--duration'],
    [
      [
        'creds',
        'generate',
        '--cluster',
        'x',
        '--service-account',
        'a/b',
        '--role',
        'view',
        '--out',
        '/tmp/x.kubeconfig',
      ],
      '--duration',
    ],
  ] as const) {
    it(`${cmd.slice(0, 2).join(' ')} ${flag}: 30d parses (the error is about the missing kubeconfig, not the duration); 30x names the flag`, async () => {
      const ok = await runFleet([...cmd, flag, '30d']);
      assert.doesNotMatch(ok.stderr, /duration|time limit/, ok.stderr);
      const ok2 = await runFleet([...cmd, flag, '720h']);
      assert.doesNotMatch(ok2.stderr, /duration|time limit/, ok2.stderr);
      const bad = await runFleet([...cmd, flag, '30x']);
      assert.equal(bad.code, 2);
      assert.equal(
        bad.stderr,
        `error: ${flag}: invalid duration "30x" (use a number and a unit, e.g. 30d, 720h, 90m, 2w, 1y)\n`,
      );
    });
  }
});

describe('verify policy lifetimes read like every lifetime', () => {
  const head = 'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\n';
  it('minLifetime 2w, 1y, 720h and 30d: the lifetime in force is what the file wrote (w = 7d, y = 365d)', () => {
    const day = 86_400_000;
    for (const [v, ms] of [
      ['2w', 14 * day],
      ['1y', 365 * day],
      ['720h', 30 * day],
      ['30d', 30 * day],
    ] as const) {
      const effective = effectivePolicy(
        parsePolicy(`${head}checks:\n  credentials:\n    minLifetime: ${v}\n`, 'p.yaml'),
        {},
      );
      assert.deepEqual([effective.minLifetime, effective.minLifetimeMs], [v, ms], v);
    }
  });
  it('a lifetime beyond what fleet accepts names the file, line and field', () => {
    assert.throws(
      () => parsePolicy(`${head}checks:\n  credentials:\n    warnLifetime: 100y\n`, 'p.yaml'),
      (e: Error) =>
        /^p\.yaml:5: checks\.credentials\.warnLifetime: "100y" is longer than fleet accepts/.test(e.message) &&
        !e.message.includes('\n'),
    );
  });
});
