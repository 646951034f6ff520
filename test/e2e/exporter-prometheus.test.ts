// fleet exporter watched by a real Prometheus (issue 47, item 4): Debian's prometheus server scrapes `fleet exporter`
// on 127.0.0.1 and evaluates the chart's own PrometheusRule (rendered by helm from deploy/chart, with shorter `for:`
// bands and thresholds given as the chart's per-alert overrides, so that minutes become seconds). The fleet: member-1
// and an extra kube-apiserver started for this file (killed half-way), the hub's Secrets of one namespace: a 10-minute
// bound token fleet generated (Cluster API format), a 30-day one (Argo CD format), a Secret fleet adopted
// (multicluster-runtime), one nobody manages (a 1-day token put there by hand) and the members' kubeconfig files. Read
// through Prometheus's HTTP API: the expiry series hold the tokens' own `exp`; FleetCredentialExpiringSoon goes pending,
// then firing, for the 10-minute token only; the extra member killed makes fleet_cluster_up 0 and FleetClusterDown fire;
// a rotation killed after it replaced the Secret moves the expiry and fires FleetCredentialRotationUnfinished, which the
// next rotation resolves; every query of the chart's dashboard returns series. Every exposition and every output is
// grepped for the tokens and keys made here; SIGTERM ends the exporter within a second.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { repoRoot } from '../support/binaries.js';
import { renderAlertRules } from '../support/chart-rules.js';
import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import {
  applyYaml,
  createServiceAccountToken,
  deleteFleetObjectsOf,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('exp');
const hubNs = `${run}-hub`;
const memberNs = `${run}-sys`;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const PROMETHEUS = '/usr/bin/prometheus';
const SHORT = `${run}-short`;
const LONG = `${run}-long`;
const ADOPTED = `${run}-adopted`;
const UNMANAGED = `${run}-unmanaged`;

const outputs: Array<{ what: string; text: string }> = [];
const secrets = new Set<string>();
let dir: string;
let extra: ExtraApiserver | undefined;
let exporter: ChildProcess | undefined;
let exporterOut = '';
let exporterErr = '';
let exporterUrl = '';
let prometheus: ChildProcess | undefined;
let promUrl = '';
let shortSecret = '';
let extraCluster = '';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

async function fleet(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 180_000, env });
  outputs.push({ what: args.join(' '), text: res.stdout + res.stderr });
  return res;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

/** The bearer token a consumer Secret holds (kubeconfig key, Cluster API `value`, or Argo CD's config), remembered. */
function tokenIn(s: any): string {
  let token: string;
  if (s.data.config) token = JSON.parse(decode(s.data.config)).bearerToken;
  else {
    const text = decode(s.data.kubeconfig ?? s.data.value);
    token = (yaml.load(text) as any).users[0].user.token;
  }
  assert.ok(token, `no token in Secret ${s.metadata.name}`);
  secrets.add(token);
  return token;
}

const expOf = (token: string): number =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')).exp as number;

async function promGet(path: string): Promise<any> {
  const res = await fetch(`${promUrl}${path}`);
  const body = (await res.json()) as any;
  assert.equal(body.status, 'success', `${path}: ${JSON.stringify(body)}`);
  return body.data;
}

async function query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  return (await promGet(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result;
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}
const alerts = async (): Promise<Alert[]> => (await promGet('/api/v1/alerts')).alerts;

/** Polls until `test` holds, at most `ms`; returns what it last saw, or fails saying what it waited for. */
async function until<T>(what: string, ms: number, probe: () => Promise<T>, test: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (test(last)) return last;
    if (Date.now() > deadline)
      assert.fail(`${what}: not within ${ms / 1000}s; last: ${JSON.stringify(last).slice(0, 2000)}`);
    await sleep(500);
  }
}

/** The states an alert for the series matching `match` goes through, as seen every half second, until firing. */
async function pendingThenFiring(name: string, match: Record<string, string>, ms: number): Promise<string[]> {
  const seen: string[] = [];
  await until(
    `${name} ${JSON.stringify(match)} firing`,
    ms,
    async () => {
      const a = (await alerts()).find(
        (x) => x.labels.alertname === name && Object.entries(match).every(([k, v]) => x.labels[k] === v),
      );
      if (a && seen.at(-1) !== a.state) seen.push(a.state);
      return a?.state;
    },
    (state) => state === 'firing',
  );
  return seen;
}

/** Both expositions as a scraper gets them, kept for the grep at the end. */
async function scrape(): Promise<{ text: string; openMetrics: string }> {
  const text = await (await fetch(`${exporterUrl}/metrics`)).text();
  const openMetrics = await (
    await fetch(`${exporterUrl}/metrics`, { headers: { accept: 'application/openmetrics-text;version=1.0.0' } })
  ).text();
  outputs.push({ what: 'GET /metrics', text }, { what: 'GET /metrics (OpenMetrics)', text: openMetrics });
  return { text, openMetrics };
}

async function generate(name: string, sa: string, format: string, duration: string): Promise<void> {
  const res = await fleet([
    'creds',
    'generate',
    '--kubeconfig',
    m1.kubeconfig,
    '--cluster',
    m1.context,
    ...HUB,
    '--service-account',
    `${memberNs}/${sa}`,
    '--role',
    'view',
    '--create-namespace',
    '--duration',
    duration,
    '--secret',
    `${hubNs}/${name}`,
    '--format',
    format,
    '-o',
    'json',
  ]);
  assert.equal(res.code, 0, res.stderr + res.stdout);
}

/** A multicluster-runtime Secret someone else wrote: member-1's server and CA, a bound token made with kubectl. */
async function handMade(name: string, sa: string, duration: string): Promise<string> {
  const token = await createServiceAccountToken(m1, memberNs, sa, { duration });
  secrets.add(token);
  const kubeconfig = yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'm', cluster: { server: m1.url, 'certificate-authority-data': b64(readFileSync(m1.caFile, 'utf8')) } },
    ],
    users: [{ name: 'm', user: { token } }],
    contexts: [{ name: 'm', context: { cluster: 'm', user: 'm' } }],
    'current-context': 'm',
  });
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
      data: { kubeconfig: b64(kubeconfig) },
    }),
  );
  return token;
}

before(async () => {
  assert.ok(existsSync(PROMETHEUS), `${PROMETHEUS} is missing (apt-get install prometheus; .ci/run installs it)`);
  // scratchDir() is shared by every test file: this file's files (and Prometheus's TSDB) in a directory of its own.
  dir = join(scratchDir(), run);
  mkdirSync(dir, { mode: 0o700 });
  // The admin identities' keys of the kubeconfig files the exporter reads: never in an exposition either.
  for (const file of [m1.kubeconfig]) {
    const key = (yaml.load(readFileSync(file, 'utf8')) as any).users[0].user['client-key-data'];
    if (key) secrets.add(key).add(decode(key).trim());
  }
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  await applyYaml(m1, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: memberNs } }));
  extra = await startExtraApiserver({ name: `${run}-down` });
});

after(async () => {
  exporter?.kill('SIGKILL');
  prometheus?.kill('SIGKILL');
  await extra?.stop();
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', memberNs, '--wait=false']);
  // The cluster-wide grants generate and adopt made (named after the ServiceAccounts' namespace, which carries `run`).
  await deleteFleetObjectsOf(m1, 'clusterroles,clusterrolebindings', run);
});

describe('fleet exporter scraped by Prometheus, with the chart’s alerts', { concurrency: false }, () => {
  it('a fleet with generated, adopted and unmanaged credentials: the 10-minute one, a 30-day one, an adopted and a hand-made Secret', async () => {
    await generate(SHORT, 'short', 'cluster-api', '10m');
    await generate(LONG, 'long', 'argocd', '30d');
    await handMade(ADOPTED, 'adoptee', '24h');
    const adopt = await fleet([
      'creds',
      'adopt',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/${ADOPTED}`,
      '--service-account',
      `${memberNs}/adopted`,
      '--role',
      'view',
      '--duration',
      '30d',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(adopt.code, 0, adopt.stderr + adopt.stdout);
    assert.equal(adopt.json().items[0].status, 'adopted', adopt.stdout);
    await handMade(UNMANAGED, 'unmanaged', '24h');
    // The Cluster API codec names the Secret <cluster>-kubeconfig unless it already ends so.
    const listed = await fleet(['creds', 'list', ...HUB, '--kubeconfig', m1.kubeconfig, '-o', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    const mine = listed.json().items.filter((i: any) => i.source.kind === 'secret' && i.source.namespace === hubNs);
    shortSecret = mine.find((i: any) => i.format === 'cluster-api').source.name;
    for (const i of mine) tokenIn(await hubSecret(i.source.name));
    assert.deepEqual(
      mine.map((i: any) => `${i.format} ${i.adopted ? 'adopted' : i.managedByFleet ? 'managed' : 'unmanaged'}`).sort(),
      ['argocd managed', 'cluster-api managed', 'multicluster-runtime adopted', 'multicluster-runtime unmanaged'],
    );
  });

  it('the exporter serves; Prometheus scrapes it and loads the chart’s PrometheusRule', async () => {
    const fleetYaml = join(dir, 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      [
        'apiVersion: fleet/v1alpha1',
        'kind: FleetConfig',
        'providers:',
        `  - {name: members, type: file, kubeconfig: [${m1.kubeconfig}, ${extra!.kubeconfig}]}`,
        // A hub-backed provider whose hub is the extra server: a source that goes down with it.
        `  - {name: beyond, type: kubeconfig, namespace: default, hub: {kubeconfig: [${extra!.kubeconfig}]}}`,
        '',
      ].join('\n'),
    );
    exporter = spawn(
      process.execPath,
      [
        FLEET_BIN,
        'exporter',
        '--fleet-config',
        fleetYaml,
        ...HUB,
        '--hub-namespace',
        hubNs,
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '2s',
        '-o',
        'jsonl',
      ],
      { env: fleetTestEnv(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    exporter.stdout!.on('data', (d) => (exporterOut += d));
    exporter.stderr!.on('data', (d) => (exporterErr += d));
    const served = await until(
      'the exporter says where it serves',
      30_000,
      async () => /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(exporterErr)?.[1],
      Boolean,
    );
    exporterUrl = served!;
    await until(
      '/readyz 200',
      60_000,
      async () => (await fetch(`${exporterUrl}/readyz`)).status,
      (s) => s === 200,
    );

    const rules = await renderAlertRules({
      exporter: {
        prometheusRule: {
          alerts: {
            // Minutes made seconds: a 10-minute token is below 97 % of its lifetime after 18 s.
            FleetCredentialExpiringSoon: { for: '15s', fractionLeft: 0.97 },
            FleetClusterDown: { for: '5s' },
            FleetSourceDown: { for: '5s' },
            FleetCredentialRotationUnfinished: { for: '0s', afterMinutes: 0.05 },
          },
        },
      },
    });
    const rulesFile = join(dir, 'rules.yaml');
    writeFileSync(rulesFile, rules);
    execFileSync('promtool', ['check', 'rules', rulesFile], { stdio: 'pipe' });
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      yaml.dump({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [rulesFile],
        scrape_configs: [{ job_name: 'fleet-exporter', static_configs: [{ targets: [new URL(exporterUrl).host] }] }],
      }),
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let promErr = '';
    prometheus.stderr!.on('data', (d) => (promErr += d));
    await until(
      `Prometheus ready (${promErr.slice(-500)})`,
      60_000,
      async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.status,
      (s) => s === 200,
    );
    const targets = await until(
      'the exporter scraped',
      30_000,
      async () => (await promGet('/api/v1/targets')).activeTargets as Array<{ health: string; lastError: string }>,
      (t) => t.length === 1 && t[0].health === 'up',
    );
    assert.equal(targets[0].lastError, '');
    const groups = (await promGet('/api/v1/rules')).groups as Array<{ rules: Array<{ name: string }> }>;
    const names = groups.flatMap((g) => g.rules.map((r) => r.name));
    for (const a of [
      'FleetCredentialExpiringSoon',
      'FleetClusterDown',
      'FleetSourceDown',
      'FleetCredentialRotationUnfinished',
    ])
      assert.ok(names.includes(a), `${a} not loaded: ${names.join(', ')}`);
  });

  it('the expiry series hold each token’s own exp, with the labels of its Secret', async () => {
    const series = await until(
      'expiry series of the four Secrets',
      30_000,
      () => query(`fleet_credential_expiration_timestamp_seconds{namespace="${hubNs}"}`),
      (r) => r.length === 4,
    );
    extraCluster = (await query(`fleet_cluster_info{server="${extra!.url}"}`))[0]?.metric.cluster;
    assert.ok(extraCluster, 'the extra member is listed');
    for (const s of series) {
      const secret = await hubSecret(s.metric.name);
      const token = tokenIn(secret);
      assert.equal(Number(s.value[1]), expOf(token), s.metric.name);
      assert.equal(s.metric.source, 'secret');
      // The cluster fleet recorded on the Secret when it generated or adopted it; none on a Secret it never managed.
      // Prometheus stores no empty label: an unmanaged Secret's series has no cluster.
      assert.equal(
        s.metric.cluster,
        secret.metadata.annotations?.['fleet.dev/credential-cluster'],
        JSON.stringify(s.metric),
      );
      if (s.metric.management !== 'unmanaged') assert.match(s.metric.cluster, /member-1/);
      assert.equal(s.metric.identity_kind, 'serviceaccount');
    }
    const by = Object.fromEntries(series.map((s) => [s.metric.name, s.metric]));
    assert.equal(by[shortSecret].format, 'cluster-api');
    assert.equal(by[shortSecret].management, 'managed');
    assert.equal(by[LONG].format, 'argocd');
    assert.equal(by[ADOPTED].management, 'adopted');
    assert.equal(by[UNMANAGED].management, 'unmanaged');
    const lifetime = await query(`fleet_credential_lifetime_seconds{name="${shortSecret}"}`);
    assert.equal(Number(lifetime[0].value[1]), 600);
    const valid = await query(`fleet_credential_valid{namespace="${hubNs}"}`);
    assert.deepEqual(
      valid.map((v) => v.value[1]),
      ['1', '1', '1', '1'],
      'each credential authenticated with its own SelfSubjectReview',
    );
    // The member's kubeconfig file is a credential too (a client certificate: its NotAfter).
    const files = await query(`fleet_credential_expiration_timestamp_seconds{source="kubeconfig"}`);
    assert.ok(files.length >= 2, JSON.stringify(files));
    const up = await query('fleet_cluster_up');
    assert.deepEqual(
      up.map((u) => u.value[1]),
      ['1', '1'],
      JSON.stringify(up),
    );
  });

  it('hub Secrets are followed by watch: a Secret added and deleted between collections is seen without another list', async () => {
    const lists = async () =>
      Object.fromEntries(
        (await query('fleet_exporter_hub_lists_total')).map((r) => [r.metric.resource, Number(r.value[1])]),
      );
    const events = async (type: string) =>
      (await query(`sum(fleet_exporter_hub_watch_events_total{resource="secrets",type="${type}"})`)).map((r) =>
        Number(r.value[1]),
      )[0] ?? 0;
    const before = await lists();
    // One list per query the first collection made (the consumer formats and fleet's label, in one namespace).
    assert.ok(before.secrets >= 4, JSON.stringify(before));
    const added = await events('ADDED');
    const late = `${run}-late`;
    await handMade(late, 'late', '24h');
    await until(
      'the added Secret’s series',
      30_000,
      () => query(`fleet_credential_expiration_timestamp_seconds{name="${late}"}`),
      (r) => r.length === 1,
    );
    assert.ok((await events('ADDED')) > added, 'counted as an ADDED event');
    const deleted = await events('DELETED');
    await kubectl(hub, ['delete', 'secret', late, '-n', hubNs]);
    await until(
      'the deleted Secret’s series gone',
      30_000,
      () => query(`fleet_credential_expiration_timestamp_seconds{name="${late}"}`),
      (r) => r.length === 0,
    );
    assert.ok((await events('DELETED')) > deleted, 'counted as a DELETED event');
    const collections = await query('fleet_exporter_collections_total{result="success"}');
    assert.ok(Number(collections[0].value[1]) >= 4, JSON.stringify(collections));
    assert.deepEqual(await lists(), before, 'no list after the first: the changes came by watch');
  });

  it('FleetCredentialExpiringSoon goes pending, then firing, for the 10-minute token and for no other', async () => {
    const seen = await pendingThenFiring('FleetCredentialExpiringSoon', { name: shortSecret }, 120_000);
    assert.deepEqual(seen, ['pending', 'firing']);
    const firing = (await alerts()).filter(
      (a) => a.labels.alertname === 'FleetCredentialExpiringSoon' && a.labels.namespace === hubNs,
    );
    assert.deepEqual(
      firing.map((a) => a.labels.name),
      [shortSecret],
    );
    assert.equal(firing[0].labels.severity, 'warning');
    assert.match(firing[0].labels.cluster, /member-1/);
  });

  it('the extra member’s API server killed: fleet_cluster_up 0 and FleetClusterDown pending, then firing; the provider it was the hub of is FleetSourceDown', async () => {
    assert.equal((await query('fleet_source_up{kind="provider",source="beyond"}'))[0]?.value[1], '1');
    assert.ok(
      !(await alerts()).some((a) => a.labels.alertname === 'FleetClusterDown' && a.labels.cluster === extraCluster),
    );
    await extra!.stop();
    // Both alerts watched from the kill on: each has its own `for:` and may go pending while the other is awaited.
    const clusterDown = pendingThenFiring('FleetClusterDown', { cluster: extraCluster }, 90_000);
    const sourceDown = pendingThenFiring('FleetSourceDown', { source: 'beyond' }, 90_000);
    await until(
      'fleet_cluster_up 0',
      60_000,
      () => query(`fleet_cluster_up{cluster="${extraCluster}"}`),
      (r) => r[0]?.value[1] === '0',
    );
    // The provider whose hub it was is a source down, and counted.
    await until(
      'fleet_source_up 0 for the provider on the killed server',
      60_000,
      () => query('fleet_source_up{kind="provider",source="beyond"}'),
      (r) => r[0]?.value[1] === '0',
    );
    const errors = await query('fleet_source_errors_total{kind="provider",source="beyond"}');
    assert.ok(errors.length === 1 && Number(errors[0].value[1]) >= 1, JSON.stringify(errors));
    assert.equal((await query('fleet_source_up{kind="provider",source="members"}'))[0]?.value[1], '1');
    assert.deepEqual(await clusterDown, ['pending', 'firing']);
    assert.deepEqual(await sourceDown, ['pending', 'firing']);
    // member-1 answers still, and nothing says it is down.
    const others = await query(`fleet_cluster_up{cluster!="${extraCluster}"}`);
    assert.deepEqual(
      others.map((o) => o.value[1]),
      ['1'],
      JSON.stringify(others),
    );
    assert.ok(
      !(await alerts()).some((a) => a.labels.alertname === 'FleetClusterDown' && a.labels.cluster !== extraCluster),
    );
  });

  it('a rotation killed after it replaced the Secret moves the expiry and fires FleetCredentialRotationUnfinished; the next rotation resolves it', async () => {
    const before = expOf(tokenIn(await hubSecret(shortSecret)));
    // So that the new token's exp is later than the old one's by more than a second's rounding.
    await sleep(2000);
    const killed = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/${shortSecret}`], {
      FLEET_ROTATE_FAILPOINT: 'after-replace',
    });
    assert.notEqual(killed.code, 0, 'the failpoint kills the run');
    const s = await hubSecret(shortSecret);
    assert.equal(s.metadata.annotations['fleet.dev/rotation-phase'], 'replaced');
    const moved = expOf(tokenIn(s));
    assert.ok(moved > before, `${moved} > ${before}`);
    await until(
      'the moved expiry scraped',
      30_000,
      () => query(`fleet_credential_expiration_timestamp_seconds{name="${shortSecret}"}`),
      (r) => Number(r[0]?.value[1]) === moved,
    );
    const started = await query(`fleet_credential_rotation_started_timestamp_seconds{name="${shortSecret}"}`);
    assert.equal(started[0]?.metric.phase, 'replaced');
    about(Number(started[0].value[1]), Date.parse(s.metadata.annotations['fleet.dev/rotation-started']) / 1000);
    const seen = await pendingThenFiring('FleetCredentialRotationUnfinished', { name: shortSecret }, 30_000);
    assert.ok(seen.at(-1) === 'firing', seen.join());
  });

  it('every query of the chart’s dashboard returns series from this Prometheus', async () => {
    const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/chart/dashboards/fleet-exporter.json'), 'utf8'));
    const exprs: string[] = [];
    const walk = (panels: any[]) => {
      for (const p of panels ?? []) {
        for (const t of p.targets ?? []) if (t.expr) exprs.push(t.expr);
        walk(p.panels);
      }
    };
    walk(dashboard.panels);
    assert.ok(exprs.length >= 8, `${exprs.length} queries`);
    const empty: string[] = [];
    for (const e of exprs) {
      const q = e
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$__range', '5m')
        .replaceAll('$__interval', '15s')
        .replaceAll('$cluster', '.*');
      assert.ok(!q.includes('$'), `a variable the e2e does not know: ${e}`);
      if ((await query(q)).length === 0) empty.push(e);
    }
    assert.deepEqual(empty, [], 'queries that returned no series');
  });

  it('the next rotation finishes the killed one: the series goes and the alert resolves', async () => {
    const res = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/${shortSecret}`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    tokenIn(await hubSecret(shortSecret));
    await until(
      'no unfinished rotation series',
      30_000,
      () => query(`fleet_credential_rotation_started_timestamp_seconds{name="${shortSecret}"}`),
      (r) => r.length === 0,
    );
    await until(
      'FleetCredentialRotationUnfinished resolved',
      30_000,
      alerts,
      (a) =>
        !a.some((x) => x.labels.alertname === 'FleetCredentialRotationUnfinished' && x.labels.name === shortSecret),
    );
  });

  it('promtool accepts the exposition; SIGTERM ends the exporter within a second (exit 143)', async () => {
    const { text, openMetrics } = await scrape();
    execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
    assert.ok(openMetrics.endsWith('# EOF\n'));
    const lines = exporterOut
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(lines.length >= 5 && lines.every((l) => l.kind === 'ExporterCollection'), exporterOut.slice(0, 500));
    const t = performance.now();
    const code = new Promise<number | null>((r) => exporter!.once('exit', (c) => r(c)));
    exporter!.kill('SIGTERM');
    assert.equal(await code, 143);
    const ms = performance.now() - t;
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
    exporter = undefined;
    outputs.push({ what: 'fleet exporter', text: exporterOut + exporterErr });
  });

  it('no token or key made here appears in any exposition or output', async () => {
    // What Prometheus stored, too: every label value of every fleet series.
    const stored = await promGet(`/api/v1/series?match[]=${encodeURIComponent('{__name__=~"fleet_.+"}')}`);
    outputs.push({ what: 'Prometheus series', text: JSON.stringify(stored) });
    assert.ok(secrets.size >= 7, `only ${secrets.size} secrets collected`);
    for (const o of outputs)
      for (const s of secrets) assert.ok(!o.text.includes(s), `${o.what}: a credential appears in it`);
  });
});

function about(actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) <= 1, `${actual} is not ${expected}`);
}
