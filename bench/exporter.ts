// `fleet exporter` at fleet scale (issue 47, item 5): N clusters (bench/scale-fleet.ts: N contexts, each its own
// ServiceAccount token, every 10th through an exec plugin) and S multicluster-runtime Secrets in one hub namespace, each
// a working kubeconfig of its own token (a TokenRequest for bench-(i mod N)), read with --hub-namespace.
//
//   1. Scrapes: the exporter started with a long interval, ready after its first collection; then R scrapes of /metrics
//      interleaved with R of a trivial HTTP server (a `node` process serving the same exposition bytes from memory):
//      p50, p95 and size. Then R more of the exporter while it collects (a scrape must not wait for a cluster).
//   2. Collections: the exporter with --interval 1s for C collections; per collection its
//      fleet_exporter_collection_duration_seconds and the process's VmRSS right after it; then the client-go reference
//      (bench/reference -command exporter-collect) for C collections of the same requests, 1 s apart, with its own
//      duration and VmRSS. Reported: median collection ratio, peak RSS ratio, RSS slope (least squares, KiB per
//      collection over the second half, after warm-up).
//      Between collections 2 and 3, M Secrets are added and then deleted: fleet_exporter_hub_lists_total must not move
//      and fleet_exporter_hub_watch_events_total must grow by 2M (watch events applied without a relist).
//
// Standalone: FLEET_TEST_CONTROL_PLANE=.sandbox/state.json npx tsx bench/exporter.ts [--clusters 1000]
//               [--secrets 10000] [--collections 10] [--scrapes 200] [--churn 100]
// Prints the run as one JSON line and one markdown row of the "## fleet exporter at scale" table (docs/performance.md),
// where the rows of runs at different sizes are kept.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadAverage, median } from './measure.js';
import { Admin, type SandboxState, buildFleet, mapLimit, readSandbox } from './scale-fleet.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HUB_NAMESPACE = 'fleet-bench-exporter';
const MANAGER = 'fleet-bench';

const argText = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/** Least-squares slope of ys over their index. */
function slope(ys: number[]): number {
  const n = ys.length;
  if (n < 2) return Number.NaN;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

function mcrSecret(name: string, server: { url: string; caFile: string }, token: string) {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'member',
    clusters: [
      {
        name: 'member',
        cluster: { server: server.url, 'certificate-authority-data': readFileSync(server.caFile).toString('base64') },
      },
    ],
    users: [{ name: 'member', user: { token } }],
    contexts: [{ name: 'member', context: { cluster: 'member', user: 'member' } }],
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name,
      namespace: HUB_NAMESPACE,
      labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' },
    },
    data: { kubeconfig: Buffer.from(JSON.stringify(kubeconfig)).toString('base64') },
  };
}

/**
 * S multicluster-runtime Secrets on the hub, named s00000..., the i-th holding a fresh token of ServiceAccount
 * bench-(i mod clusters) on the server buildFleet put it on (server-side apply: a rerun replaces the tokens).
 */
async function makeSecrets(state: SandboxState, clusters: number, secrets: number, prefix = 's'): Promise<string[]> {
  const hubState = state.servers.find((s) => s.name === 'hub')!;
  const hub = new Admin(hubState, state, 32);
  const admins = state.servers.map((s) => new Admin(s, state, 32));
  try {
    await hub.ensure('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: HUB_NAMESPACE },
    });
    return await mapLimit(
      Array.from({ length: secrets }, (_, i) => i),
      32,
      async (i) => {
        const sa = i % clusters;
        const server = state.servers[sa % state.servers.length];
        const admin = admins[sa % state.servers.length];
        const r = await admin.request('POST', `/api/v1/namespaces/fleet-bench/serviceaccounts/bench-${sa}/token`, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 7200 },
        });
        if (r.status !== 201) throw new Error(`token for bench-${sa}: HTTP ${r.status}`);
        const token = (JSON.parse(r.body) as { status: { token: string } }).status.token;
        const name = `${prefix}${String(i).padStart(5, '0')}`;
        const applied = await hub.request(
          'PATCH',
          `/api/v1/namespaces/${HUB_NAMESPACE}/secrets/${name}?fieldManager=${MANAGER}&force=true`,
          mcrSecret(name, server, token),
          undefined,
          'application/apply-patch+yaml',
        );
        if (applied.status !== 200 && applied.status !== 201) throw new Error(`secret ${name}: HTTP ${applied.status}`);
        return name;
      },
    );
  } finally {
    hub.close();
    for (const a of admins) a.close();
  }
}

async function deleteSecrets(state: SandboxState, names: string[]): Promise<void> {
  const hub = new Admin(
    state.servers.find((s) => s.name === 'hub')!,
    state,
    32,
  );
  try {
    await mapLimit(names, 32, async (name) => {
      const r = await hub.request('DELETE', `/api/v1/namespaces/${HUB_NAMESPACE}/secrets/${name}`);
      if (r.status !== 200 && r.status !== 404) throw new Error(`delete ${name}: HTTP ${r.status}`);
    });
  } finally {
    hub.close();
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
/** One GET on a kept-alive connection: its time (ms), status and body. */
function get(port: number, path: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A started process that prints "PORT" ... as fleet exporter does for --listen 127.0.0.1:0; resolves its port. */
function listeningPort(child: ChildProcess, pattern: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    let err = '';
    const onData = (c: Buffer) => {
      err += c.toString();
      const m = pattern.exec(err);
      if (m) resolve(Number(m[1]));
    };
    child.stderr!.on('data', onData);
    child.stdout?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited with ${code} before listening: ${err.slice(0, 2000)}`)));
  });
}

function metricValue(exposition: string, name: string, labels = ''): number {
  let sum = 0;
  let found = false;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name + (labels ? '{' : ''))) continue;
    if (labels && !line.includes(labels)) continue;
    if (!labels && !/^\S+(\{[^}]*\})? /.test(line)) continue;
    const head = line.split(' ')[0];
    if (head !== name && !head.startsWith(name + '{')) continue;
    sum += Number(line.split(' ').pop());
    found = true;
  }
  if (!found) throw new Error(`no ${name}${labels ? ` with ${labels}` : ''} in the exposition`);
  return sum;
}

function vmRss(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

interface Exporter {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

async function startExporter(kubeconfig: string, hubKubeconfig: string, interval: string): Promise<Exporter> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/run.js'),
      'exporter',
      '--kubeconfig',
      kubeconfig,
      '--hub-kubeconfig',
      hubKubeconfig,
      '--hub-namespace',
      HUB_NAMESPACE,
      '--listen',
      '127.0.0.1:0',
      '--interval',
      interval,
    ],
    { env: { ...process.env, KUBECONFIG: '', NO_COLOR: '1', CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const port = await listeningPort(child, /127\.0\.0\.1:(\d+)/);
  child.stdout.resume();
  return {
    child,
    port,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function collections(e: Exporter): Promise<{ n: number; body: string }> {
  const r = await get(e.port, '/metrics');
  if (r.status !== 200) return { n: 0, body: r.body };
  return { n: metricValue(r.body, 'fleet_exporter_collections_total'), body: r.body };
}

async function waitCollections(e: Exporter, n: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await collections(e);
    if (c.n >= n) return c.body;
    if (Date.now() > deadline) throw new Error(`exporter: ${c.n} collections, ${n} awaited`);
    await sleep(100);
  }
}

export interface ExporterBench {
  clusters: number;
  secrets: number;
  collections: number;
  scrapes: number;
  scrapeBytes: number;
  idle: { p50: number; p95: number };
  trivial: { p50: number; p95: number };
  busy: { p50: number; p95: number; max: number };
  fleetMs: number[];
  referenceMs: number[];
  fleetRssKiB: number[];
  referenceRssKiB: number[];
  requestsPerCollection: number;
  lists: { before: number; after: number };
  watchEvents: { before: number; after: number };
  churn: number;
  credentials: number;
}

export async function benchExporter(
  state: SandboxState,
  o: { clusters: number; secrets: number; collections: number; scrapes: number; churn: number; reference: string },
): Promise<ExporterBench> {
  const fleet = await buildFleet(state, o.clusters);
  await makeSecrets(state, o.clusters, o.secrets);
  const hubKubeconfig = state.servers.find((s) => s.name === 'hub')!.kubeconfig;

  // 1. Scrapes, idle, against a trivial server of the same bytes.
  const idleExporter = await startExporter(fleet.kubeconfig, hubKubeconfig, '1h');
  let exposition: string;
  const idle: number[] = [];
  const trivial: number[] = [];
  let credentials: number;
  try {
    exposition = await waitCollections(idleExporter, 1, 30 * 60_000);
    credentials = exposition.split('\n').filter((l) => l.startsWith('fleet_credential_valid{')).length;
    const file = join(state.dir, 'bench', 'exposition.txt');
    writeFileSync(file, exposition);
    const server = spawn(
      process.execPath,
      [
        '-e',
        `const b=require('fs').readFileSync(process.argv[1]);require('http').createServer((q,s)=>{s.writeHead(200,{'content-type':'text/plain; version=0.0.4'});s.end(b)}).listen(0,'127.0.0.1',function(){console.error('listening 127.0.0.1:'+this.address().port)})`,
        file,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    try {
      const trivialPort = await listeningPort(server, /127\.0\.0\.1:(\d+)/);
      for (let i = 0; i < o.scrapes; i++) {
        const pair: Array<[number, number[]]> = [
          [idleExporter.port, idle],
          [trivialPort, trivial],
        ];
        if (i % 2 === 1) pair.reverse();
        for (const [port, into] of pair) {
          const r = await get(port, '/metrics');
          if (r.status !== 200) throw new Error(`scrape: HTTP ${r.status}`);
          into.push(r.ms);
        }
      }
    } finally {
      server.kill();
    }
  } finally {
    await idleExporter.stop();
  }

  // 2. Collections every second, scraped throughout; churn between collections 2 and 3.
  const e = await startExporter(fleet.kubeconfig, hubKubeconfig, '1s');
  const fleetMs: number[] = [];
  const fleetRssKiB: number[] = [];
  const busy: number[] = [];
  const lists = { before: 0, after: 0 };
  const watchEvents = { before: 0, after: 0 };
  try {
    let seen = 0;
    while (seen < o.collections) {
      const r = await get(e.port, '/metrics');
      if (r.status === 200) {
        busy.push(r.ms);
        const n = metricValue(r.body, 'fleet_exporter_collections_total');
        if (n > seen) {
          fleetRssKiB.push(vmRss(e.child.pid!));
          fleetMs.push(metricValue(r.body, 'fleet_exporter_collection_duration_seconds') * 1000);
          seen = n;
          if (seen === 2 && o.churn > 0) {
            lists.before = metricValue(r.body, 'fleet_exporter_hub_lists_total');
            watchEvents.before = metricValue(r.body, 'fleet_exporter_hub_watch_events_total');
            const added = await makeSecrets(state, o.clusters, o.churn, 'churn');
            await deleteSecrets(state, added);
          }
          if (seen === 4 || (seen === o.collections && lists.after === 0)) {
            lists.after = metricValue(r.body, 'fleet_exporter_hub_lists_total');
            watchEvents.after = metricValue(r.body, 'fleet_exporter_hub_watch_events_total');
          }
        }
      }
      await sleep(250);
    }
  } finally {
    await e.stop();
  }

  // 3. The reference.
  const ref = spawnSync(
    o.reference,
    [
      '-command',
      'exporter-collect',
      '-kubeconfig',
      fleet.kubeconfig,
      '-hub-kubeconfig',
      hubKubeconfig,
      '-hub-namespace',
      HUB_NAMESPACE,
      '-collections',
      String(o.collections),
      '-interval',
      '1s',
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (ref.status !== 0) throw new Error(`reference exit ${ref.status}: ${ref.stderr.slice(0, 1000)}`);
  const lines = ref.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { durationMs: number; rssKiB: number; requests: number; error?: string });
  const failed = lines.find((l) => l.error);
  if (failed) throw new Error(`reference: ${failed.error}`);
  return {
    clusters: o.clusters,
    secrets: o.secrets,
    collections: o.collections,
    scrapes: o.scrapes,
    scrapeBytes: Buffer.byteLength(exposition),
    idle: { p50: percentile(idle, 50), p95: percentile(idle, 95) },
    trivial: { p50: percentile(trivial, 50), p95: percentile(trivial, 95) },
    busy: { p50: percentile(busy, 50), p95: percentile(busy, 95), max: Math.max(...busy) },
    fleetMs,
    referenceMs: lines.map((l) => l.durationMs),
    fleetRssKiB,
    referenceRssKiB: lines.map((l) => l.rssKiB),
    requestsPerCollection: lines[0].requests,
    lists,
    watchEvents,
    churn: o.churn,
    credentials,
  };
}

const f1 = (x: number) => x.toFixed(1);
const mib = (kib: number) => (kib / 1024).toFixed(0);

export function renderRow(b: ExporterBench): string {
  const half = (xs: number[]) => xs.slice(Math.floor(xs.length / 2));
  const fm = median(b.fleetMs.slice(1));
  const rm = median(b.referenceMs.slice(1));
  const fPeak = Math.max(...b.fleetRssKiB);
  const rPeak = Math.max(...b.referenceRssKiB);
  const watchOk = b.churn === 0 ? 'n/a' : b.lists.after === b.lists.before ? 'no relist' : 'RELISTED';
  return (
    `| ${b.clusters} / ${b.secrets} | ${b.collections} | ${(b.scrapeBytes / 1024).toFixed(0)} KiB | ` +
    `${f1(b.idle.p50)} / ${f1(b.idle.p95)} | ${f1(b.trivial.p50)} / ${f1(b.trivial.p95)} | ` +
    `${f1(b.busy.p50)} / ${f1(b.busy.p95)} / ${f1(b.busy.max)} | ` +
    `${(fm / 1000).toFixed(2)} s / ${(rm / 1000).toFixed(2)} s = **${(fm / rm).toFixed(2)}x** | ` +
    `${mib(fPeak)} / ${mib(rPeak)} MiB = **${(fPeak / rPeak).toFixed(2)}x** | ` +
    `${slope(half(b.fleetRssKiB)).toFixed(0)} / ${slope(half(b.referenceRssKiB)).toFixed(0)} | ` +
    `${b.lists.after - b.lists.before} lists, ${b.watchEvents.after - b.watchEvents.before} events for ${2 * b.churn} changes (${watchOk}) |`
  );
}

export const TABLE_HEAD =
  '| clusters / hub Secrets | collections | scrape size | scrape ms p50 / p95 (idle) | trivial server ms p50 / p95 | scrape ms p50 / p95 / max while collecting | collection median: fleet / reference | peak RSS: fleet / reference | RSS slope KiB per collection (second half): fleet / reference | churn between collections 2 and 4 |\n' +
  '|---|---|---|---|---|---|---|---|---|---|';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const statePath = argText('sandbox') ?? process.env.FLEET_TEST_CONTROL_PLANE;
  if (!statePath) throw new Error('no sandbox: --sandbox STATE.json or FLEET_TEST_CONTROL_PLANE');
  const state = readSandbox(statePath);
  const reference = execFileSync('bash', [join(ROOT, 'bench/reference/build.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop()!;
  const load = loadAverage();
  const rev = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const b = await benchExporter(state, {
    clusters: Number(argText('clusters') ?? 1000),
    secrets: Number(argText('secrets') ?? 10_000),
    collections: Number(argText('collections') ?? 10),
    scrapes: Number(argText('scrapes') ?? 200),
    churn: Number(argText('churn') ?? 100),
    reference,
  });
  const row = renderRow(b);
  process.stdout.write(JSON.stringify(b) + '\n' + row + '\n');
  process.stderr.write(
    `fleet ms per collection: ${b.fleetMs.map((x) => x.toFixed(0)).join(' ')}\n` +
      `reference ms per collection: ${b.referenceMs.map((x) => x.toFixed(0)).join(' ')}\n` +
      `fleet RSS KiB: ${b.fleetRssKiB.join(' ')}\nreference RSS KiB: ${b.referenceRssKiB.join(' ')}\n` +
      `requests per reference collection: ${b.requestsPerCollection}; credential series: ${b.credentials}\n` +
      `load ${load} -> ${loadAverage()}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${rev}\n`,
  );
  agent.destroy();
}
