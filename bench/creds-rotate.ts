// `fleet creds rotate --all` at fleet scale (issue 33): N hub Secrets, each a real, working token credential with its own
// anchor, spread over the sandbox's members and over the formats controllers read (multicluster-runtime, Cluster API,
// Argo CD, Flux), rotated in one run; then the same Secrets by the client-go reference making the same requests
// (bench/reference -command rotate), then by four `--shard i/4` runs at once. After every run the bench checks what a
// rotation promises: every Secret rotated exactly once by that run (the shards: once over the four), every Secret's new
// credential answered by its member, every credential it held before refused.
//
// The Secrets are made quickly: one `fleet creds generate` per member and format (the template: its ServiceAccount,
// Role, binding and the Secret's annotations), then for each copy an anchor Secret applied on the member, a TokenRequest
// bound to it, and the template's Secret applied on the hub with that token and anchor (server-side apply, 32 at once).
//
// Standalone:   FLEET_TEST_CONTROL_PLANE=.sandbox/state.json npx tsx bench/creds-rotate.ts [--secrets 100,1000] [--no-reference]
// In the table: npm run bench -- --rotation-only [--rotation-sizes 100,1000]   (bench/run.ts writes docs/performance.md)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

import { runFleetMeasured } from '../test/support/peak-rss.js';
import { Admin, type SandboxState, mapLimit, readSandbox } from './scale-fleet.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ROTATION_FORMATS = ['multicluster-runtime', 'cluster-api', 'argocd', 'flux'] as const;
const MANAGED = 'app.kubernetes.io/managed-by=fleet';
const ANCHOR = 'fleet.dev/credential-anchor';

interface Secret {
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  type?: string;
  data?: Record<string, string>;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
const short = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

/** The bearer token a consumer Secret holds, in whichever format. */
export function tokenOf(s: Secret): string {
  const d = s.data ?? {};
  if (d.config) return (JSON.parse(unb64(d.config)) as { bearerToken: string }).bearerToken;
  const text = unb64(d.kubeconfig ?? d.value ?? d.config ?? '');
  return (yaml.load(text) as { users: Array<{ user: { token: string } }> }).users[0].user.token;
}

export interface RotationFleet {
  namespace: string;
  names: string[];
  hub: Admin;
  members: Map<string, Admin>;
  /** Member server URL by Secret name (where its credential works). */
  memberOf: Map<string, string>;
  close(): void;
}

function fleetCli(args: string[]): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/run.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', CI: 'true', KUBECONFIG: '' },
  });
  if (r.status !== 0) throw new Error(`fleet ${args.slice(0, 2).join(' ')}: exit ${r.status}: ${r.stderr}`);
}

/** N Secrets in hub namespace `ns`, their credentials on the members round-robin, formats round-robin. */
export async function makeRotationFleet(state: SandboxState, n: number, ns: string): Promise<RotationFleet> {
  const hubState = state.servers.find((s) => s.name === 'hub')!;
  const memberStates = state.servers.filter((s) => s.name !== 'hub');
  const hub = new Admin(hubState, state, 32);
  const members = new Map(memberStates.map((m) => [m.url, new Admin(m, state, 32)]));
  await hub.ensure('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  // One template per member and format, by fleet itself.
  const templates: Array<{ secret: Secret; member: string }> = [];
  for (const m of memberStates) {
    for (const format of ROTATION_FORMATS) {
      const sa = `rot-${format.replace(/[^a-z]/g, '').slice(0, 8)}`;
      const name = `tpl-${m.name}-${format}`;
      fleetCli([
        'creds',
        'generate',
        '--kubeconfig',
        m.kubeconfig,
        '-c',
        m.context,
        '--hub-kubeconfig',
        hubState.kubeconfig,
        '--service-account',
        `${ns}/${sa}`,
        '--role',
        'pod-lister',
        '--create-namespace',
        '--duration',
        '2h',
        '--secret',
        `${ns}/${name}`,
        '--format',
        format,
        '-o',
        'json',
      ]);
      const secretName = format === 'cluster-api' ? `${name}-kubeconfig` : name;
      const r = await hub.request('GET', `/api/v1/namespaces/${ns}/secrets/${secretName}`);
      if (r.status !== 200) throw new Error(`template ${secretName}: HTTP ${r.status}`);
      templates.push({ secret: JSON.parse(r.body) as Secret, member: m.url });
    }
  }
  // The templates are rotated with the copies (they are fleet's Secrets like any other): N counts them.
  const copies = Math.max(0, n - templates.length);
  const names = templates.map((t) => t.secret.metadata.name);
  const memberOf = new Map(templates.map((t) => [t.secret.metadata.name, t.member]));
  const made = await mapLimit(
    Array.from({ length: copies }, (_, i) => i),
    32,
    async (i) => {
      const t = templates[i % templates.length];
      const member = members.get(t.member)!;
      const ann = t.secret.metadata.annotations!;
      const format = ann['fleet.dev/credential-format'];
      const cluster = `c${String(i).padStart(4, '0')}`;
      const name = format === 'cluster-api' ? `${cluster}-kubeconfig` : cluster;
      const [anchorNs, anchorTpl] = ann[ANCHOR].split('/');
      const sa = /^system:serviceaccount:[^:]+:(.+)$/.exec(ann['fleet.dev/credential-identity'])![1];
      // The copy's anchor: the template's (labels, annotations) under its own name, applied as generate applies it.
      const tplAnchor = JSON.parse(
        (await member.request('GET', `/api/v1/namespaces/${anchorNs}/secrets/${anchorTpl}`)).body,
      ) as Secret;
      const anchorName = `${sa}-fleet-anchor-${short(`${ns}/${name}`)}`;
      const anchorBody = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name: anchorName,
          namespace: anchorNs,
          labels: tplAnchor.metadata.labels,
          annotations: tplAnchor.metadata.annotations,
        },
      };
      const a = await member.request(
        'PATCH',
        `/api/v1/namespaces/${anchorNs}/secrets/${anchorName}?fieldManager=fleet-bench&force=true`,
        anchorBody,
        undefined,
        'application/apply-patch+yaml',
      );
      if (a.status !== 200 && a.status !== 201) throw new Error(`anchor ${anchorName}: HTTP ${a.status} ${a.body}`);
      const uid = (JSON.parse(a.body) as { metadata: { uid: string } }).metadata.uid;
      const tr = await member.request('POST', `/api/v1/namespaces/${anchorNs}/serviceaccounts/${sa}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 7200, boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: anchorName, uid } },
      });
      if (tr.status !== 201) throw new Error(`token for ${sa}: HTTP ${tr.status}`);
      const { status } = JSON.parse(tr.body) as { status: { token: string; expirationTimestamp: string } };
      // The template's bytes with the copy's token: every key of the format, as generate would have written them.
      const old = tokenOf(t.secret);
      const data = Object.fromEntries(
        Object.entries(t.secret.data ?? {}).map(([k, v]) => [k, b64(unb64(v).split(old).join(status.token))]),
      );
      const kubeconfigKey = ['kubeconfig', 'value'].find((k) => data[k]);
      const labels = {
        ...t.secret.metadata.labels,
        ...(format === 'cluster-api' ? { 'cluster.x-k8s.io/cluster-name': cluster } : {}),
      };
      const annotations = {
        ...ann,
        [ANCHOR]: `${anchorNs}/${anchorName}`,
        'fleet.dev/credential-expires': status.expirationTimestamp,
        'fleet.dev/kubeconfig-sha256': createHash('sha256')
          .update(unb64(data[kubeconfigKey ?? 'config']))
          .digest('hex'),
      };
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: t.secret.type,
        metadata: { name, namespace: ns, labels, annotations },
        data,
      };
      const h = await hub.request(
        'PATCH',
        `/api/v1/namespaces/${ns}/secrets/${name}?fieldManager=fleet-bench&force=true`,
        body,
        undefined,
        'application/apply-patch+yaml',
      );
      if (h.status !== 200 && h.status !== 201) throw new Error(`Secret ${name}: HTTP ${h.status} ${h.body}`);
      return { name, member: t.member };
    },
  );
  for (const m of made) {
    names.push(m.name);
    memberOf.set(m.name, m.member);
  }
  return {
    namespace: ns,
    names: names.sort(),
    hub,
    members,
    memberOf,
    close: () => [hub, ...members.values()].forEach((a) => a.close()),
  };
}

/** Every Secret's token now, by name (straight from the hub, not through fleet). */
export async function tokensNow(f: RotationFleet): Promise<Map<string, string>> {
  const r = await f.hub.request(
    'GET',
    `/api/v1/namespaces/${f.namespace}/secrets?labelSelector=${encodeURIComponent(MANAGED)}`,
  );
  const items = (JSON.parse(r.body) as { items: Secret[] }).items;
  const out = new Map(items.filter((s) => f.memberOf.has(s.metadata.name)).map((s) => [s.metadata.name, tokenOf(s)]));
  // No Secret may be left mid-rotation.
  const claimed = items
    .filter((s) => Object.keys(s.metadata.annotations ?? {}).some((k) => k.startsWith('fleet.dev/rotation-')))
    .map((s) => s.metadata.name);
  if (claimed.length)
    throw new Error(`rotation annotations left on ${claimed.length} Secrets: ${claimed.slice(0, 5).join(', ')}`);
  return out;
}

/** SelfSubjectReview with a token on its member: 'ok', 'refused' (401) or the unexpected status. */
async function probe(f: RotationFleet, name: string, token: string): Promise<string> {
  const r = await f.members
    .get(f.memberOf.get(name)!)!
    .request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      token,
    );
  return r.status === 201 ? 'ok' : r.status === 401 ? 'refused' : `HTTP ${r.status}`;
}

/**
 * Every credential used once, as its consumer uses it, just before a timed run: the member's token cache then holds each
 * old token (up to 10 s), so each rotation's confirm-revoked waits for that cache as it does in a live fleet.
 */
async function warm(f: RotationFleet, tokens: Map<string, string>): Promise<void> {
  const answers = await mapLimit(f.names, 32, (name) => probe(f, name, tokens.get(name)!));
  const bad = answers.filter((a) => a !== 'ok').length;
  if (bad) throw new Error(`${bad} of ${f.names.length} credentials do not work before the run`);
}

/**
 * What a run over the fleet must leave: every Secret holds a new credential that works, every one it held before is
 * refused, no Secret is mid-rotation and no rotation Lease is left. Returns the problems (empty: all good).
 */
export async function checkRotated(
  f: RotationFleet,
  before: Map<string, string>,
): Promise<{ after: Map<string, string>; problems: string[] }> {
  const after = await tokensNow(f);
  const problems: string[] = [];
  for (const name of f.names) if (!after.has(name)) problems.push(`${name}: gone`);
  const results = await mapLimit(f.names, 32, async (name) => {
    const now = after.get(name)!;
    const old = before.get(name)!;
    if (now === old) return `${name}: not rotated`;
    const [n, o] = [await probe(f, name, now), await probe(f, name, old)];
    return n !== 'ok'
      ? `${name}: its new credential: ${n}`
      : o !== 'refused'
        ? `${name}: its old credential: ${o}`
        : undefined;
  });
  problems.push(...results.filter((x): x is string => Boolean(x)));
  const leases = JSON.parse(
    (await f.hub.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${f.namespace}/leases`)).body,
  ) as { items: unknown[] };
  if (leases.items.length) problems.push(`${leases.items.length} Leases left`);
  return { after, problems };
}

/** The items of a fleet or reference report that rotated, by Secret name (a name twice is a double rotation). */
export function rotatedNames(stdout: string): string[] {
  const doc = JSON.parse(stdout) as {
    items: Array<{ status?: string; ok?: boolean; secret?: { name: string }; cluster?: string }>;
  };
  return doc.items
    .filter((i) => i.status === 'rotated' || i.ok === true)
    .map((i) => i.secret?.name ?? i.cluster ?? '?');
}

export interface RotationRun {
  label: string;
  wallMs: number;
  /** CPU time (user + sys) of the client, the four shards' summed. */
  cpuMs: number;
  peakRssMb: number;
  rotated: number;
  problems: string[];
  /** Median time of each step over the items (fleet's JSON). */
  steps?: Record<string, number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : Number.NaN;
};

function sameOnce(label: string, names: string[], want: string[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const n of names) seen.set(n, (seen.get(n) ?? 0) + 1);
  const twice = [...seen].filter(([, c]) => c > 1).map(([n]) => n);
  if (twice.length) problems.push(`${label}: rotated twice: ${twice.slice(0, 5).join(', ')}`);
  const missed = want.filter((n) => !seen.has(n));
  if (missed.length) problems.push(`${label}: not rotated: ${missed.length} (${missed.slice(0, 5).join(', ')})`);
  return problems;
}

/** fleet creds rotate --all over the fleet's hub (one run, or `shards` runs at once), timed, then checked. */
export async function timeFleetRotate(
  state: { servers: Array<{ name: string; kubeconfig: string }> },
  f: RotationFleet,
  o: { shards?: number; extra?: string[] } = {},
): Promise<RotationRun> {
  const hub = state.servers.find((s) => s.name === 'hub')!;
  const kubeconfigs = state.servers
    .filter((s) => s.name !== 'hub')
    .map((s) => s.kubeconfig)
    .join(':');
  const before = await tokensNow(f);
  await warm(f, before);
  const args = (extra: string[]) => [
    'creds',
    'rotate',
    '--all',
    '--kubeconfig',
    kubeconfigs,
    '--hub-kubeconfig',
    hub.kubeconfig,
    '-o',
    'json',
    ...(o.extra ?? []),
    ...extra,
  ];
  const t0 = performance.now();
  const runs = await Promise.all(
    o.shards
      ? Array.from({ length: o.shards }, (_, i) => runFleetMeasured(args(['--shard', `${i}/${o.shards}`]), {}, 900_000))
      : [runFleetMeasured(args([]), {}, 900_000)],
  );
  const wallMs = performance.now() - t0;
  const problems: string[] = [];
  const names: string[] = [];
  const items: Array<{ steps: Array<{ step: string; ms: number }> }> = [];
  for (const r of runs) {
    if (r.code !== 0) problems.push(`exit ${r.code}: ${r.stderr.split('\n').slice(0, 3).join(' | ')}`);
    try {
      names.push(...rotatedNames(r.stdout).filter((n) => f.memberOf.has(n)));
      items.push(...(JSON.parse(r.stdout) as { items: typeof items }).items);
    } catch {
      problems.push(`not JSON: ${r.stdout.slice(0, 200)}`);
    }
  }
  const label = o.shards ? `${o.shards} shards` : 'fleet';
  problems.push(...sameOnce(label, names, f.names));
  problems.push(...(await checkRotated(f, before)).problems);
  const stepNames = [...new Set(items.flatMap((i) => i.steps.map((s) => s.step)))];
  const steps = Object.fromEntries(
    stepNames.map((s) => [s, median(items.flatMap((i) => i.steps.filter((x) => x.step === s).map((x) => x.ms)))]),
  );
  return {
    label,
    wallMs,
    cpuMs: runs.reduce((a, r) => a + r.cpuMs, 0),
    peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    rotated: names.length,
    problems,
    steps,
  };
}

/** The client-go reference over the same Secrets (bench/reference -command rotate), timed under /usr/bin/time, then checked. */
export async function timeReferenceRotate(
  reference: string,
  state: { servers: Array<{ name: string; kubeconfig: string }> },
  f: RotationFleet,
): Promise<RotationRun> {
  const hub = state.servers.find((s) => s.name === 'hub')!;
  const kubeconfigs = state.servers
    .filter((s) => s.name !== 'hub')
    .map((s) => s.kubeconfig)
    .join(':');
  const before = await tokensNow(f);
  await warm(f, before);
  const t0 = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%M %U %S', reference, '-command', 'rotate', '-hub-kubeconfig', hub.kubeconfig, '-kubeconfig', kubeconfigs],
    { encoding: 'utf8', maxBuffer: 256 << 20 },
  );
  const wallMs = performance.now() - t0;
  const problems: string[] = [];
  if (r.status !== 0) problems.push(`reference exit ${r.status}: ${r.stderr.slice(0, 500)}`);
  const [kb, user, sys] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  let names: string[] = [];
  try {
    names = rotatedNames(r.stdout);
  } catch {
    problems.push(`reference: not JSON: ${r.stdout.slice(0, 200)}`);
  }
  problems.push(
    ...sameOnce(
      'reference',
      names.filter((n) => f.memberOf.has(n)),
      f.names,
    ),
  );
  problems.push(...(await checkRotated(f, before)).problems);
  return {
    label: 'client-go reference',
    wallMs,
    cpuMs: (user + sys) * 1000,
    peakRssMb: (kb * 1024) / 1e6,
    rotated: names.length,
    problems,
  };
}

async function main() {
  const statePath = process.env.FLEET_TEST_CONTROL_PLANE ?? join(ROOT, '.sandbox/state.json');
  const state = readSandbox(statePath);
  const i = process.argv.indexOf('--secrets');
  const sizes = (i === -1 ? '100' : process.argv[i + 1]).split(',').map(Number);
  const reference = process.argv.includes('--no-reference')
    ? undefined
    : spawnSync('bash', [join(ROOT, 'bench/reference/build.sh')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      })
        .stdout.trim()
        .split('\n')
        .pop();
  for (const n of sizes) {
    const ns = `bench-rot-${n}-${Date.now().toString(36)}`;
    const t0 = performance.now();
    const f = await makeRotationFleet(state, n, ns);
    console.log(`N=${n}: made ${f.names.length} Secrets in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    try {
      const runs = [
        () => timeFleetRotate(state, f),
        ...(reference ? [() => timeReferenceRotate(reference, state, f)] : []),
        () => timeFleetRotate(state, f, { shards: 4 }),
      ];
      for (const one of runs) {
        const r = await one();
        console.log(
          `  ${r.label}: ${(r.wallMs / 1000).toFixed(1)} s (CPU ${(r.cpuMs / 1000).toFixed(1)} s), ${(r.wallMs / n).toFixed(1)} ms per credential, peak RSS ${r.peakRssMb.toFixed(0)} MB, ${r.rotated} rotated${r.problems.length ? `; PROBLEMS: ${r.problems.join('; ')}` : ''}`,
        );
        if (r.steps)
          console.log(
            `    median step ms: ${Object.entries(r.steps)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}`,
          );
      }
    } finally {
      await f.hub.request('DELETE', `/api/v1/namespaces/${ns}`);
      for (const m of f.members.values()) await m.request('DELETE', `/api/v1/namespaces/${ns}`);
      f.close();
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
