import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Check } from '../../src/base/checks.js';
import { CHECK_NAMES, CheckList } from '../../src/verify/checks.js';
import { annotations, escapeData, escapeProperty, markdownSummary } from '../../src/verify/github.js';
import { junitXml } from '../../src/verify/junit.js';
import type { VerifyItem, VerifyReport } from '../../src/verify/report.js';
import { junitCases, junitSchemaErrors } from '../support/junit.js';

function checks(overrides: Partial<Record<string, Partial<Check>>>): Check[] {
  return CHECK_NAMES.map((name) => ({ name, status: 'pass', message: `${name} ok`, ...overrides[name] }));
}

function item(cluster: string, list: Check[], extra: Partial<VerifyItem> = {}): VerifyItem {
  const failed = list.some((c) => c.status === 'fail');
  return {
    cluster,
    ok: !failed,
    status: failed ? 'fail' : 'pass',
    provider: 'file',
    rules: [],
    checks: list,
    durationMs: 1234,
    ...extra,
  };
}

function report(items: VerifyItem[], strict = false): VerifyReport {
  const all = items.flatMap((i) => i.checks ?? []);
  const count = (s: string) => all.filter((c) => c.status === s).length;
  const passed = items.filter((i) => i.ok).length;
  return {
    kind: 'VerifyReport',
    policy: 'policy.yaml',
    strict,
    ok: passed === items.length,
    summary: {
      clusters: items.length,
      passed,
      failed: items.length - passed,
      checks: { pass: count('pass'), fail: count('fail'), warn: count('warn'), skip: count('skip') },
    },
    items,
  };
}

const awkward = 'kubeconfig with "quotes" & <angles>+ctx';
const sample = () =>
  report([
    item('/k/a.kubeconfig+a', checks({})),
    item(
      awkward,
      checks({
        permissions: {
          status: 'fail',
          message: '1 of 2 denied: create deployments.apps in namespace apps',
          fix: 'grant it',
        },
        'tls-verified': {
          status: 'warn',
          message: 'insecure-skip-tls-verify is set (allowed by the policy)',
          fix: 'set a CA',
        },
        identity: { status: 'skip', message: 'no expected identity in the policy' },
        reachable: { message: 'control \u0001 character, 100%, a:b,c\nsecond line' },
      }),
      { username: 'bob', version: 'v1.34.10', error: undefined },
    ),
  ]);

describe('verify JUnit XML', () => {
  it('is valid against the Ant and the Jenkins xunit JUnit schemas, awkward names and characters included', async () => {
    const xml = junitXml(sample(), { timestamp: new Date('2026-11-22T08:00:00.123Z'), host: 'ci-runner' });
    assert.deepEqual(await junitSchemaErrors(xml), []);
    assert.deepEqual(await junitSchemaErrors(junitXml(report([]))), [], 'an empty report is valid too');
  });

  it('one testsuite per cluster, one testcase per check, failures with message and fix, skips marked', () => {
    const xml = junitXml(sample());
    const cases = junitCases(xml);
    assert.equal(cases.length, 2 * CHECK_NAMES.length);
    assert.deepEqual([...new Set(cases.map((c) => c.suite))], ['/k/a.kubeconfig+a', awkward]);
    const second = cases.filter((c) => c.suite === awkward);
    assert.deepEqual(
      second.map((c) => c.name),
      [...CHECK_NAMES],
    );
    assert.deepEqual(
      second.filter((c) => c.outcome === 'failure').map((c) => [c.name, c.message]),
      [['permissions', '1 of 2 denied: create deployments.apps in namespace apps']],
    );
    assert.deepEqual(
      second.filter((c) => c.outcome === 'skipped').map((c) => c.name),
      ['identity'],
    );
    assert.match(
      xml,
      /<failure [^>]*type="fail"[^>]*>1 of 2 denied: create deployments.apps in namespace apps\nfix: grant it<\/failure>/,
    );
    assert.match(
      xml,
      /<system-out>warn tls-verified: insecure-skip-tls-verify is set \(allowed by the policy\) \(fix: set a CA\)<\/system-out>/,
    );
    assert.match(xml, /tests="9" failures="1" errors="0" skipped="1"/);
  });

  it('--strict turns warnings into failures', () => {
    const cases = junitCases(junitXml(report(sample().items, true)));
    assert.deepEqual(
      cases.filter((c) => c.outcome === 'failure').map((c) => c.name),
      ['tls-verified', 'permissions'],
    );
  });
});

describe('verify GitHub Actions output', () => {
  it('escapes workflow command data and properties as the runner expects', () => {
    assert.equal(escapeData('100%\r\nnext'), '100%25%0D%0Anext');
    assert.equal(escapeProperty('a:b,c%'), 'a%3Ab%2Cc%25');
  });

  it('one annotation per failed or warning check, titled by cluster and check', () => {
    assert.deepEqual(annotations(sample()), [
      `::warning title=fleet verify%3A ${awkward}%3A tls-verified::insecure-skip-tls-verify is set (allowed by the policy) (fix: set a CA)`,
      `::error title=fleet verify%3A ${awkward}%3A permissions::1 of 2 denied: create deployments.apps in namespace apps (fix: grant it)`,
    ]);
    assert.ok(
      annotations(report(sample().items, true))[0].startsWith('::error '),
      'with --strict a warning is an error',
    );
  });

  it('the Markdown summary: verdict, a row per cluster, the problems', () => {
    const md = markdownSummary(sample());
    assert.match(md, /^## fleet clusters verify: failed\n/);
    assert.match(md, /\| cluster \| provider-ready \| reachable \| tls-verified \|/);
    assert.match(md, /\| \/k\/a\.kubeconfig\+a \| ✅ pass \|/);
    assert.match(md, /- \*\*kubeconfig with "quotes" & <angles>\+ctx\*\* `permissions` \(fail\): 1 of 2 denied/);
    assert.ok(!md.includes('\u0001\n'), 'no raw line break inside a table row');
  });
});

describe('verify check list', () => {
  it('a run cut short: decided checks stay, the failure lands on the next one, the rest are skipped', () => {
    const list = new CheckList();
    list.set('provider-ready', 'pass', 'ready');
    list.set('reachable', 'pass', 'ready');
    const out = list.finish({ kind: 'timeout', message: 'no result within 30s (--cluster-timeout)' });
    assert.deepEqual(
      out.map((c) => c.status),
      ['pass', 'pass', 'fail', 'skip', 'skip', 'skip', 'skip', 'skip', 'skip'],
    );
    assert.equal(out[2].message, 'no result within 30s (--cluster-timeout)');
    assert.ok(out[2].fix);
    assert.equal(out[3].message, 'not checked: tls-verified failed');
  });

  it('once the cluster time limit has aborted the work, late results decide nothing', () => {
    const list = new CheckList();
    const abort = new AbortController();
    list.bind(abort.signal);
    list.set('provider-ready', 'pass', 'ready');
    abort.abort();
    list.set('reachable', 'pass', 'arrived too late');
    const out = list.finish({ kind: 'timeout', message: 'no result within 2s (--cluster-timeout)' });
    assert.deepEqual(
      out.slice(0, 3).map((c) => [c.status, c.message]),
      [
        ['pass', 'ready'],
        ['fail', 'no result within 2s (--cluster-timeout)'],
        ['skip', 'not checked: reachable failed'],
      ],
    );
  });

  it('a fix is kept only for fail and warn', () => {
    const list = new CheckList();
    list.set('reachable', 'pass', 'ok', 'never shown');
    assert.equal(list.finish()[1].fix, undefined);
  });
});
