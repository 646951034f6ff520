// -o prometheus: the text format writer (escaping, validity) and the metrics of creds list and clusters verify, from
// plain results. The e2e test (test/e2e/metrics.test.ts) reads real output with Prometheus's own parser.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { credentialMetrics, rotationMetrics, verifyMetrics } from '../../src/cli/metrics.js';
import { escapeHelp, escapeLabelValue, formatMetrics, unixSeconds } from '../../src/cli/prometheus.js';
import type { CredentialList } from '../../src/creds/list.js';
import type { RotationReport } from '../../src/creds/rotate.js';
import type { VerifyReport } from '../../src/verify/report.js';

describe('prometheus text format', () => {
  it('escapes backslash, double quote and line feed in label values, in that order; nothing else', () => {
    assert.equal(escapeLabelValue('plain/path (context a, user b)'), 'plain/path (context a, user b)');
    assert.equal(escapeLabelValue('a\\b'), 'a\\\\b');
    assert.equal(escapeLabelValue('say "hi"'), 'say \\"hi\\"');
    assert.equal(escapeLabelValue('two\nlines'), 'two\\nlines');
    // A backslash before a quote stays two characters, each escaped: \" becomes \\\".
    assert.equal(escapeLabelValue('\\"'), '\\\\\\"');
    assert.equal(escapeLabelValue('\\n'), '\\\\n', 'a literal backslash-n is not a line feed');
    assert.equal(escapeLabelValue('tab\there ünïcode {},='), 'tab\there ünïcode {},=');
  });

  it('escapes backslash and line feed in HELP, not double quotes', () => {
    assert.equal(escapeHelp('a "b" c\\d\ne'), 'a "b" c\\\\d\\ne');
  });

  it('writes HELP and TYPE once per family, leaves out empty families, empty labels and repeated series', () => {
    const text = formatMetrics([
      {
        name: 'x_total',
        help: 'X.',
        samples: [
          { labels: { a: '1', b: '' }, value: 3 },
          { labels: { a: '1' }, value: 4 },
          { labels: { a: 'q"' }, value: 0.5 },
        ],
      },
      { name: 'nothing', help: 'None.', samples: [] },
      {
        name: 'y',
        help: 'Y\nhelp.',
        samples: [
          { labels: {}, value: NaN },
          { labels: { z: 'inf' }, value: Infinity },
        ],
      },
    ]);
    assert.equal(
      text,
      [
        '# HELP x_total X.',
        '# TYPE x_total gauge',
        'x_total{a="1"} 3',
        'x_total{a="q\\""} 0.5',
        '# HELP y Y\\nhelp.',
        '# TYPE y gauge',
        'y NaN',
        'y{z="inf"} +Inf',
        '',
      ].join('\n'),
    );
    assert.equal(formatMetrics([]), '');
  });

  it('refuses invalid metric and label names (a bug, not user input)', () => {
    assert.throws(
      () => formatMetrics([{ name: 'bad-name', help: '', samples: [{ labels: {}, value: 1 }] }]),
      /metric name "bad-name" is not valid/,
    );
    assert.throws(
      () => formatMetrics([{ name: 'ok', help: '', samples: [{ labels: { 'bad-label': 'x' }, value: 1 }] }]),
      /label name "bad-label" is not valid/,
    );
    assert.throws(
      () => formatMetrics([{ name: 'ok', help: '', samples: [{ labels: { __reserved: 'x' }, value: 1 }] }]),
      /label name "__reserved"/,
    );
  });

  it('unixSeconds: whole seconds, undefined for nothing or nonsense', () => {
    assert.equal(unixSeconds('2030-01-02T03:04:05Z'), 1893553445);
    assert.equal(unixSeconds(undefined), undefined);
    assert.equal(unixSeconds('soon'), undefined);
  });
});

describe('metrics of creds list and clusters verify', () => {
  const list: CredentialList = {
    kind: 'CredentialList',
    expiringWithin: '72h',
    errors: [{ hub: 'hub-b', error: { kind: 'forbidden', message: 'secrets is forbidden' } }],
    items: [
      {
        location: '/k/a"b.kubeconfig (context c\\1, user u)',
        source: { kind: 'kubeconfig', path: '/k/a"b.kubeconfig', context: 'c\\1', user: 'u' },
        format: 'kubeconfig',
        cluster: 'a',
        method: 'bound-token',
        identity: 'system:serviceaccount:ci:deployer',
        issued: '2030-01-01T00:00:00Z',
        expires: '2030-01-02T00:00:00Z',
        managedByFleet: true,
        expiring: true,
        live: { ok: false },
        problems: [],
      },
      {
        location: 'secret hub:ns/s',
        source: { kind: 'secret', hub: 'hub', namespace: 'ns', name: 's' },
        format: 'argocd',
        method: 'exec',
        managedByFleet: false,
        problems: ['x'],
      },
    ],
  };

  it('creds: info for every credential, expiry/issued only where known, expiring with its window, hub errors', () => {
    const f = Object.fromEntries(credentialMetrics(list).map((m) => [m.name, m.samples]));
    const a = {
      location: '/k/a"b.kubeconfig (context c\\1, user u)',
      source: 'kubeconfig',
      cluster: 'a',
      path: '/k/a"b.kubeconfig',
      context: 'c\\1',
      user: 'u',
    };
    const s = {
      location: 'secret hub:ns/s',
      source: 'secret',
      cluster: '',
      hub: 'hub',
      namespace: 'ns',
      name: 's',
      key: '',
    };
    assert.deepEqual(f.fleet_credential_info, [
      {
        labels: {
          ...a,
          format: 'kubeconfig',
          method: 'bound-token',
          identity: 'system:serviceaccount:ci:deployer',
          managed_by_fleet: 'true',
        },
        value: 1,
      },
      { labels: { ...s, format: 'argocd', method: 'exec', identity: '', managed_by_fleet: 'false' }, value: 1 },
    ]);
    assert.deepEqual(f.fleet_credential_expiry_timestamp_seconds, [{ labels: a, value: 1893542400 }]);
    assert.deepEqual(f.fleet_credential_issued_timestamp_seconds, [{ labels: a, value: 1893456000 }]);
    assert.deepEqual(f.fleet_credential_expiring, [
      { labels: { ...a, within: '72h' }, value: 1 },
      { labels: { ...s, within: '72h' }, value: 0 },
    ]);
    assert.deepEqual(f.fleet_credential_live_ok, [{ labels: a, value: 0 }]);
    assert.deepEqual(
      f.fleet_credential_problems.map((x) => x.value),
      [0, 1],
    );
    assert.deepEqual(f.fleet_credential_hub_error, [{ labels: { hub: 'hub-b', kind: 'forbidden' }, value: 1 }]);
    // Without --expiring-within there is no expiring metric at all (not a 0 that claims a check).
    assert.deepEqual(
      credentialMetrics({ ...list, expiringWithin: undefined }).find((m) => m.name === 'fleet_credential_expiring')!
        .samples,
      [],
    );
  });

  it('verify: one 0/1 series per check status, cluster ok, errors, expiry, the run', () => {
    const report: VerifyReport = {
      kind: 'VerifyReport',
      policy: null,
      strict: false,
      ok: false,
      summary: { clusters: 2, passed: 1, failed: 1, checks: { pass: 1, fail: 1, warn: 0, skip: 0 } },
      items: [
        {
          cluster: 'a',
          ok: true,
          status: 'pass',
          checks: [{ name: 'reachable', status: 'pass', message: '' }],
          rules: [],
          provider: 'file',
          durationMs: 1500,
          expires: '2030-01-02T00:00:00Z',
        },
        {
          cluster: 'b',
          ok: false,
          status: 'fail',
          checks: [{ name: 'reachable', status: 'fail', message: '' }],
          rules: [],
          provider: 'file',
          durationMs: 20,
          error: { kind: 'unreachable', message: 'refused' },
        },
      ],
    };
    const f = Object.fromEntries(verifyMetrics(report).map((m) => [m.name, m.samples]));
    assert.deepEqual(
      f.fleet_verify_check.map((x) => `${x.labels.cluster} ${x.labels.check} ${x.labels.status} ${x.value}`),
      [
        'a reachable pass 1',
        'a reachable fail 0',
        'a reachable warn 0',
        'a reachable skip 0',
        'b reachable pass 0',
        'b reachable fail 1',
        'b reachable warn 0',
        'b reachable skip 0',
      ],
    );
    assert.deepEqual(f.fleet_verify_cluster_ok, [
      { labels: { cluster: 'a' }, value: 1 },
      { labels: { cluster: 'b' }, value: 0 },
    ]);
    assert.deepEqual(f.fleet_verify_cluster_error, [{ labels: { cluster: 'b', kind: 'unreachable' }, value: 1 }]);
    assert.deepEqual(f.fleet_verify_credential_expiry_timestamp_seconds, [
      { labels: { cluster: 'a' }, value: 1893542400 },
    ]);
    assert.deepEqual(f.fleet_verify_cluster_duration_seconds, [
      { labels: { cluster: 'a' }, value: 1.5 },
      { labels: { cluster: 'b' }, value: 0.02 },
    ]);
    assert.deepEqual(
      [f.fleet_verify_ok, f.fleet_verify_clusters],
      [[{ labels: {}, value: 0 }], [{ labels: {}, value: 2 }]],
    );
  });
});

describe('metrics of creds rotate', () => {
  it("each credential's status; a failed one's kind, step and what its Secret holds; the Leases removed", () => {
    const report: RotationReport = {
      kind: 'CredentialRotation',
      dryRun: false,
      hub: 'hub',
      items: [
        {
          secret: { hub: 'hub', namespace: 'ns', name: 'ok' },
          status: 'rotated',
          old: {},
          verification: [],
          steps: [],
          durationMs: 1200,
        },
        {
          secret: { hub: 'hub', namespace: 'ns', name: 'cut' },
          status: 'failed',
          old: {},
          verification: [],
          steps: [],
          durationMs: 300,
          error: { kind: 'unreachable', message: 'https://m:6443: connection refused' },
          unfinished: { step: 'mint', on: 'member-1', phase: 'claimed', next: 'the next run takes the claim over' },
        },
      ],
      leases: { removed: ['ns/fleet-rotate-0123456789ab'], left: [] },
    };
    const f = Object.fromEntries(rotationMetrics(report).map((m) => [m.name, m.samples]));
    assert.deepEqual(
      f.fleet_rotation_status.filter((x) => x.value === 1).map((x) => `${x.labels.name} ${x.labels.status}`),
      ['ok rotated', 'cut failed'],
    );
    assert.equal(f.fleet_rotation_status.length, 8);
    assert.deepEqual(f.fleet_rotation_error, [
      {
        labels: { hub: 'hub', namespace: 'ns', name: 'cut', kind: 'unreachable', step: 'mint', on: 'member-1' },
        value: 1,
      },
    ]);
    assert.deepEqual(
      f.fleet_rotation_unfinished_phase.map((x) => `${x.labels.phase} ${x.value}`),
      ['unchanged 0', 'claimed 1', 'replaced 0', 'unknown 0'],
    );
    assert.deepEqual(
      f.fleet_rotation_duration_seconds.map((x) => x.value),
      [1.2, 0.3],
    );
    assert.deepEqual(f.fleet_rotation_leases_removed, [{ labels: { hub: 'hub' }, value: 1 }]);
    assert.deepEqual(f.fleet_rotation_leases_left, [{ labels: { hub: 'hub' }, value: 0 }]);
    assert.deepEqual(f.fleet_rotation_leases_error, []);
    // The text is valid exposition format: every family once, no secret-bearing field.
    const text = formatMetrics(rotationMetrics(report));
    assert.match(
      text,
      /^fleet_rotation_error\{hub="hub",namespace="ns",name="cut",kind="unreachable",step="mint",on="member-1"\} 1$/m,
    );
    assert.doesNotMatch(text, /connection refused/);
  });
});
