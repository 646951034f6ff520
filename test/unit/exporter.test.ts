// fleet exporter without a cluster: the exposition of a collection (labels escaped, nothing secret, both formats parse
// with promtool when it is installed), content negotiation, --listen, the schedule's waits, readiness before the
// first collection. The exporter against the real control plane and a real Prometheus is issue 47's e2e (not yet).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

import { type Collection, hubsToRead } from '../../src/exporter/collect.js';
import { nextWait, runSchedule } from '../../src/exporter/exporter.js';
import { ExporterMetrics, identityKind, management } from '../../src/exporter/metrics.js';
import { parseListen, serve, wantsOpenMetrics } from '../../src/exporter/server.js';

const HOSTILE = 'evil"} fleet_cluster_up{cluster="x"} 1\nfleet_forged 1 \\';

function collection(): Collection {
  return {
    startedAt: 1_700_000_000_000,
    finishedAt: 1_700_000_001_500,
    sources: [
      { kind: 'provider', name: 'file', up: true },
      { kind: 'hub', name: 'hub', up: false, error: { kind: 'unreachable', message: 'down' } },
    ],
    verify: {
      kind: 'VerifyReport',
      policy: null,
      strict: false,
      ok: false,
      summary: { clusters: 1, passed: 0, failed: 1, checks: { pass: 1, fail: 1, warn: 0, skip: 1 } },
      items: [
        {
          cluster: 'member-1',
          ok: false,
          provider: 'file',
          server: 'https://127.0.0.1:6443',
          version: 'v1.35.0',
          latencyMs: 12.5,
          status: 'fail',
          rules: [],
          durationMs: 30,
          checks: [
            { name: 'reachable', status: 'pass', message: '' },
            { name: 'identity', status: 'fail', message: '' },
            { name: 'permissions', status: 'skip', message: '' },
          ],
        },
      ],
    },
    credentials: {
      kind: 'CredentialList',
      errors: [],
      items: [
        {
          location: `secret hub:fleet/${HOSTILE}`,
          source: { kind: 'secret', hub: 'hub', namespace: 'fleet', name: HOSTILE },
          format: 'cluster-api',
          cluster: 'member-1',
          method: 'bound-token',
          identity: 'system:serviceaccount:fleet:reader',
          issued: '2026-12-04T10:00:00Z',
          expires: '2026-12-05T10:00:00Z',
          managedByFleet: true,
          adopted: true,
          credentialId: 'JTI=abc',
          live: { ok: true },
          problems: [],
        },
      ],
    },
  };
}

describe('fleet exporter: exposition', () => {
  it('writes every family from one collection, a hostile Secret name as one escaped label value', async () => {
    const m = new ExporterMetrics({ version: '1.2.3' });
    await m.publish(collection());
    const text = m.exposition!.prometheus;
    const series = text.split('\n').filter((l) => l && !l.startsWith('#'));
    // The forged series never appears as a line of its own.
    assert.ok(!series.some((l) => l.startsWith('fleet_forged') || l.startsWith('fleet_cluster_up{cluster="x"}')));
    assert.ok(text.includes(`name="evil\\"} fleet_cluster_up{cluster=\\"x\\"} 1\\nfleet_forged 1 \\\\"`), text);
    assert.ok(series.includes('fleet_cluster_up{cluster="member-1",provider="file"} 1'));
    assert.ok(
      series.some((l) =>
        /^fleet_credential_expiration_timestamp_seconds\{.*management="adopted",identity_kind="serviceaccount"\} 1796464800$/.test(
          l,
        ),
      ),
      text,
    );
    assert.ok(series.some((l) => /^fleet_credential_lifetime_seconds\{.*\} 86400$/.test(l)));
    assert.ok(series.includes('fleet_verify_check_ok{cluster="member-1",check="identity"} 0'));
    assert.ok(!series.some((l) => l.includes('check="permissions"')), 'a skipped check has no sample');
    assert.ok(series.includes('fleet_source_up{kind="hub",source="hub"} 0'));
    assert.ok(series.includes('fleet_source_errors_total{kind="hub",source="hub",error="unreachable"} 1'));
    assert.ok(series.includes('fleet_cluster_probe_duration_seconds{cluster="member-1",provider="file"} 0.0125'));
    assert.ok(!text.includes('credential_id'), 'no credential_id unless asked');
    // A second publish keeps the counter name (prom-client renames it for OpenMetrics) and counts again.
    await m.publish(collection());
    assert.ok(
      m.exposition!.prometheus.includes('fleet_source_errors_total{kind="hub",source="hub",error="unreachable"} 2'),
    );
    assert.ok(m.exposition!.openMetrics.endsWith('# EOF\n'));
    assert.ok(m.exposition!.openMetrics.includes('# TYPE fleet_source_errors counter'));
    try {
      execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    } catch {
      // .ci/run installs Debian's prometheus package: in CI a missing promtool is a failure, not a skipped check.
      if (process.env.CI) assert.fail('promtool is not installed (apt-get install prometheus)');
      return;
    }
    execFileSync('promtool', ['check', 'metrics'], { input: m.exposition!.prometheus });
  });

  it("a server's version is cut at 128 characters, however long the server made it", async () => {
    const c = collection();
    c.verify.items[0].version = 'v1.35.0-' + 'x'.repeat(1 << 20);
    const m = new ExporterMetrics({ version: '1' });
    await m.publish(c);
    const line = m.exposition!.prometheus.split('\n').find((l) => l.startsWith('fleet_cluster_info{'))!;
    assert.ok(line.length < 300, `${line.length} characters`);
    assert.match(line, /version="v1\.35\.0-x{120}\.\.\."/);
  });

  it('an unfinished rotation is a series with its phase and claim time; none when no rotation is recorded', async () => {
    const c = collection();
    const m = new ExporterMetrics({ version: '1' });
    await m.publish(c);
    assert.ok(!m.exposition!.prometheus.includes('fleet_credential_rotation_started_timestamp_seconds{'));
    c.credentials.items[0].rotation = { phase: 'replaced', started: '2026-12-04T11:00:00Z' };
    c.credentials.items.push({
      ...c.credentials.items[0],
      location: 'secret hub:fleet/no-time',
      source: { kind: 'secret', hub: 'hub', namespace: 'fleet', name: 'no-time' },
      rotation: { phase: 'claimed' },
    });
    await m.publish(c);
    const series = m.exposition!.prometheus.split('\n').filter((l) => l.startsWith('fleet_credential_rotation_'));
    assert.equal(series.length, 2, series.join('\n'));
    assert.match(series[0], /name="evil.*phase="replaced"\} 1796382000$/);
    // A claim without a readable time is still unfinished: the epoch, which any "older than" alert catches.
    assert.match(series[1], /name="no-time".*phase="claimed"\} 0$/);
    // The next collection without the claim drops the series (a finished rotation is not "unfinished" forever).
    await m.publish(collection());
    assert.ok(!m.exposition!.prometheus.includes('fleet_credential_rotation_started_timestamp_seconds{'));
  });

  it('credential_id only with --credential-id-label; management and identity kinds', async () => {
    const m = new ExporterMetrics({ version: '1', credentialIdLabel: true });
    await m.publish(collection());
    assert.match(m.exposition!.prometheus, /credential_id="JTI=abc"/);
    assert.equal(management({ managedByFleet: false }), 'unmanaged');
    assert.equal(management({ managedByFleet: true }), 'managed');
    assert.equal(identityKind('alice'), 'user');
    assert.equal(identityKind(undefined), 'unknown');
  });
});

describe('fleet exporter: serving', () => {
  it('negotiates OpenMetrics as Prometheus asks for it, text otherwise', () => {
    assert.equal(
      wantsOpenMetrics(
        'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
      ),
      true,
    );
    assert.equal(wantsOpenMetrics(undefined), false);
    assert.equal(wantsOpenMetrics('*/*'), false);
    assert.equal(wantsOpenMetrics('text/plain;q=1, application/openmetrics-text;q=0.5'), false);
  });

  it('--listen forms, and one line for a bad one', () => {
    assert.deepEqual(parseListen(':9478'), { host: '0.0.0.0', port: 9478 });
    assert.deepEqual(parseListen('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseListen('[::1]:80'), { host: '::1', port: 80 });
    for (const bad of ['9478', 'host:99999', 'a:b', ''])
      assert.throws(() => parseListen(bad), /^UsageError: --listen .*expected HOST:PORT/);
  });

  it('/readyz is 503 until a collection is published, /metrics serves the stored text', async () => {
    const m = new ExporterMetrics({ version: '1' });
    let ready = false;
    const l = await serve({ exposition: () => m.exposition, ready: () => ready }, { host: '127.0.0.1', port: 0 });
    try {
      const at = `http://127.0.0.1:${l.address.port}`;
      assert.equal((await fetch(`${at}/readyz`)).status, 503);
      assert.equal((await fetch(`${at}/metrics`)).status, 503);
      assert.equal((await fetch(`${at}/healthz`)).status, 200);
      await m.publish(collection());
      ready = true;
      assert.equal((await fetch(`${at}/readyz`)).status, 200);
      const res = await fetch(`${at}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
      assert.match(res.headers.get('content-type')!, /^application\/openmetrics-text/);
      assert.match(await res.text(), /# EOF\n$/);
      assert.equal((await fetch(`${at}/metrics`, { method: 'POST' })).status, 405);
      assert.equal((await fetch(`${at}/nope`)).status, 404);
    } finally {
      await l.close();
    }
  });
});

describe('fleet exporter: schedule', () => {
  it('waits the interval ±jitter, collections never overlap, a failure keeps the last result', async () => {
    assert.equal(
      nextWait(1000, 0.1, () => 0),
      900,
    );
    assert.equal(
      nextWait(1000, 0.1, () => 1),
      1100,
    );
    const m = new ExporterMetrics({ version: '1' });
    let running = 0;
    let n = 0;
    const told: boolean[] = [];
    const summary = await runSchedule(
      async () => {
        assert.equal(running++, 0, 'two collections at once');
        await new Promise((r) => setTimeout(r, 20));
        running--;
        if (++n === 2) throw new Error('hub gone');
        return collection();
      },
      m,
      { intervalMs: 5, jitter: 0.1, signal: new AbortController().signal, maxCollections: 3 },
      (o) => told.push(o.ok),
    );
    assert.deepEqual(told, [true, false, true]);
    assert.deepEqual([summary.collections, summary.failures], [3, 1]);
    assert.match(m.exposition!.prometheus, /fleet_exporter_collections_total\{result="failure"\} 1/);
  });
});

describe('fleet exporter: hubs', () => {
  it('a guessed hub that cannot be found is dropped with one note; a configured one stays, found or not', async () => {
    const env = { HOME: '/nonexistent-home' };
    const r = await hubsToRead([{ guessed: true }, { kubeconfig: ['/nonexistent/hub.yaml'] }], env);
    assert.deepEqual(r.hubs, [{ kubeconfig: ['/nonexistent/hub.yaml'] }]);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /^no hub Secrets read: no kubeconfig found: KUBECONFIG is unset/);
  });
});
