// How long `fleet clusters verify` takes over the sandbox, against the shell a pipeline would otherwise run: per
// cluster `kubectl version`, `kubectl get --raw /readyz`, `kubectl auth whoami` and one `kubectl auth can-i` per required
// permission (fewer checks than verify makes: no rules review, no lifetime, no JUnit). Medians of R runs, as ratios.
//   npm run sandbox -- up; FLEET_TEST_CONTROL_PLANE=.sandbox/state.json npx tsx bench/verify.ts [--contexts N] [--runs R]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const CONTEXTS = arg('contexts', 30);
const RUNS = arg('runs', 5);
const FLEET = fileURLToPath(new URL('../bin/run.js', import.meta.url));
const POLICY = fileURLToPath(new URL('../docs/examples/policy.yaml', import.meta.url));

const statePath = process.env.FLEET_TEST_CONTROL_PLANE;
if (!statePath) throw new Error('set FLEET_TEST_CONTROL_PLANE to a sandbox state.json (npm run sandbox -- up)');
const state = JSON.parse(readFileSync(statePath, 'utf8'));
const servers: Array<{ name: string; kubeconfig: string }> = state.servers;
const kubectl: string = state.binaries.kubectl;

/** One kubeconfig with CONTEXTS contexts spread over the sandbox's servers (admin credentials, distinct names). */
function fleetKubeconfig(n: number): string {
  const docs = servers.map((s) => yaml.load(readFileSync(s.kubeconfig, 'utf8')) as any);
  const out: any = { apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [], 'current-context': '' };
  for (let i = 0; i < n; i++) {
    const d = docs[i % docs.length];
    const name = `c${i}`;
    out.clusters.push({ name, cluster: d.clusters[0].cluster });
    out.users.push({ name, user: d.users[0].user });
    out.contexts.push({ name, context: { cluster: name, user: name } });
  }
  out['current-context'] = 'c0';
  const path = join(mkdtempSync(join(tmpdir(), 'fleet-bench-verify-')), 'fleet.kubeconfig');
  writeFileSync(path, yaml.dump(out), { mode: 0o600 });
  return path;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(run: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    run();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

function ok(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  const r = spawnSync(cmd, args, {
    env: { ...process.env, KUBECONFIG: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
}

for (const n of [servers.length, CONTEXTS]) {
  const kc = fleetKubeconfig(n);
  const contexts = Array.from({ length: n }, (_, i) => `c${i}`);
  const fleetMs = time(() =>
    ok(
      process.execPath,
      [
        FLEET,
        'clusters',
        'verify',
        '--kubeconfig',
        kc,
        '--all',
        '--policy',
        POLICY,
        '--junit',
        join(tmpdir(), 'fleet-bench-verify.xml'),
      ],
      { GITHUB_ACTIONS: '' },
    ),
  );
  const shellMs = time(() => {
    for (const ctx of contexts) {
      const base = ['--kubeconfig', kc, '--context', ctx];
      ok(kubectl, [...base, 'version']);
      ok(kubectl, [...base, 'get', '--raw', '/readyz']);
      ok(kubectl, [...base, 'auth', 'whoami']);
      ok(kubectl, [...base, 'auth', 'can-i', 'list', 'namespaces', '-A']);
      ok(kubectl, [...base, 'auth', 'can-i', 'get', '/version']);
    }
  });
  console.log(
    `${n} clusters: fleet clusters verify ${Math.round(fleetMs)} ms, kubectl shell loop ${Math.round(shellMs)} ms, ratio ${(fleetMs / shellMs).toFixed(2)} (median of ${RUNS})`,
  );
}
