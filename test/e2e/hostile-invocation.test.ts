// Issue 38, item 1, against the real control plane: whatever the spelling, hub data never chooses what runs. The operator
// allows their own bash plugin `mytok` (in fleet.yaml); fleet runs from a checked-out repository that holds its own
// `mytok`. Hub data then names `./mytok`, `x/../mytok`, `./././mytok`, or sets environment variables that would make bash
// run something else (`BASH_ENV=$(cmd)`, `BASH_FUNC_date%%`, SHELLOPTS with PS4), through a multicluster-runtime
// kubeconfig Secret, a ClusterProfile's additional-envs (access-provider file) and an Argo CD cluster Secret's
// execProviderConfig. Each is refused with one line and its planted program leaves no marker; `PATH=.:$PATH` is Go's
// ErrDot; the allowed `mytok` itself still works; an exported context whose Secret turns to `./mytok` runs nothing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { FLEET_BIN, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1] = cp.members;
const run = uniqueName('hostinv');
const ns = run;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const docs = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n---\n');
const caData = b64(readFileSync(m1.caFile, 'utf8'));
const alice = tokenUser(m1, 'alice');
const MCR = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
const EXEC_V1 = 'client.authentication.k8s.io/v1';

let dir: string;
let markers: string;
let trusted: string;
let checkout: string;
let fleetYaml: string;
let cache: string;

const marker = (name: string) => join(markers, name);
const ranMarkers = () => readdirSync(markers).sort();

/** The commands a relative path in hub data spells, each of which ran the checkout's mytok before. */
const RELATIVE = { dot: './mytok', dotdot: 'x/../mytok', dots: './././mytok' };
/** Variables that made the allowed bash plugin run something else; each case's payload touches its own marker. */
const ENV_CASES = (m: (n: string) => string) => ({
  bashenv: { [`BASH_ENV=$(touch ${m('bashenv')})`]: 'x' },
  func: { 'BASH_FUNC_date%%': `() { touch ${m('func')}; }` },
  shellopts: { SHELLOPTS: 'xtrace', PS4: `$(touch ${m('shellopts')})` },
});
const envLine = (object: string, name: string) =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? `${object}: hub data sets ${name} for exec plugin "mytok", which hub data may never set (it chooses what runs)`
    : `${object}: hub data sets the variable ${JSON.stringify(name)} for exec plugin "mytok", which hub data may never set (it is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*)`;
const relativeLine = (object: string, command: string) =>
  `${object}: exec plugin ${JSON.stringify(command)} is named by hub data with a relative path or "..", which would run a file of fleet's working directory; hub data may name a plugin only by absolute path or bare name`;

function kubeconfigFor(command: string, env: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: m1.url, 'certificate-authority-data': caData } }],
    users: [
      {
        name: 'u',
        user: {
          exec: {
            apiVersion: EXEC_V1,
            interactiveMode: 'Never',
            command,
            env: Object.entries(env).map(([name, value]) => ({ name, value })),
          },
        },
      },
    ],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
}

const secret = (name: string, data: Record<string, string>, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, labels },
  type: 'Opaque',
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});

const argoSecret = (name: string, command: string, env: Record<string, string> = {}) =>
  secret(
    name,
    {
      name,
      server: m1.url,
      config: JSON.stringify({
        execProviderConfig: { apiVersion: EXEC_V1, command, env },
        tlsClientConfig: { caData },
      }),
    },
    { 'argocd.argoproj.io/secret-type': 'cluster' },
  );

/** fleet as the operator runs it: from the checkout, the trusted directory on PATH (or `.` first). */
const fleet = (args: string[], path = `${trusted}:${process.env.PATH}`) =>
  runFleet(args, { cwd: checkout, env: { PATH: path, XDG_CACHE_HOME: cache } });

before(async () => {
  dir = join(scratchDir(), run);
  markers = join(dir, 'markers');
  trusted = join(dir, 'trusted-bin');
  checkout = join(dir, 'checkout');
  cache = join(dir, 'cache');
  for (const d of [markers, trusted, join(checkout, 'x'), cache]) mkdirSync(d, { recursive: true });
  // The operator's plugin: bash, calling `date` as scripts do, answering with alice's token on member-1.
  const credential = JSON.stringify({ apiVersion: EXEC_V1, kind: 'ExecCredential', status: { token: alice.token } });
  writeFileSync(join(trusted, 'mytok'), `#!/bin/bash\ndate >/dev/null\necho '${credential}'\n`);
  chmodSync(join(trusted, 'mytok'), 0o755);
  // The checkout's own mytok: what a relative name would run.
  writeFileSync(join(checkout, 'mytok'), `#!/bin/bash\ntouch ${marker('cwd-mytok')}\necho '${credential}'\n`);
  chmodSync(join(checkout, 'mytok'), 0o755);

  const accessFile = join(dir, 'access.json');
  writeFileSync(
    accessFile,
    JSON.stringify({
      providers: [
        {
          name: 'mytok-access',
          execConfig: { apiVersion: EXEC_V1, command: 'mytok', args: [], provideClusterInfo: true },
          profileSourcedEnvVarsPolicy: 'AppendIfNotExists',
        },
      ],
    }),
  );
  fleetYaml = join(dir, 'fleet.yaml');
  writeFileSync(
    fleetYaml,
    [
      'apiVersion: fleet/v1alpha1',
      'kind: FleetConfig',
      `hub: {kubeconfig: ${hub.kubeconfig}}`,
      'credentialPluginAllowlist: [{command: mytok}]',
      'providers:',
      `  - {name: secrets, type: kubeconfig, namespace: ${ns}}`,
      `  - {name: inventory, type: cluster-inventory, namespace: ${ns}, providerFile: ${accessFile}}`,
      '',
    ].join('\n'),
  );

  const envCases = ENV_CASES(marker);
  const profiles = ['ok', ...Object.keys(envCases)];
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  await applyYaml(
    hub,
    docs(
      secret('ok', { kubeconfig: kubeconfigFor('mytok') }, MCR),
      secret('exported', { kubeconfig: kubeconfigFor('mytok') }, MCR),
      ...Object.entries(RELATIVE).map(([k, command]) =>
        secret(`rel-${k}`, { kubeconfig: kubeconfigFor(command) }, MCR),
      ),
      ...Object.entries(envCases).map(([k, env]) =>
        secret(`env-${k}`, { kubeconfig: kubeconfigFor('mytok', env) }, MCR),
      ),
      argoSecret('argo-ok', 'mytok'),
      ...Object.entries(RELATIVE).map(([k, command]) => argoSecret(`argo-rel-${k}`, command)),
      ...Object.entries(envCases).map(([k, env]) => argoSecret(`argo-env-${k}`, 'mytok', env)),
      ...profiles.map((p) => ({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: `p-${p}`, namespace: ns },
        spec: { clusterManager: { name: 'e2e' } },
      })),
    ),
  );
  for (const p of profiles) {
    const env = p === 'ok' ? {} : envCases[p as keyof typeof envCases];
    const extensions =
      p === 'ok' ? [] : [{ name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs', extension: env }];
    const status = {
      conditions: [
        {
          type: 'ControlPlaneHealthy',
          status: 'True',
          reason: 'Healthy',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      accessProviders: [
        { name: 'mytok-access', cluster: { server: m1.url, 'certificate-authority-data': caData, extensions } },
      ],
    };
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      `p-${p}`,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
  }
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']);
});

const secretObject = (name: string) => `Secret ${ns}/${name} key kubeconfig`;

describe('a multicluster-runtime kubeconfig Secret', () => {
  it('naming ./mytok, x/../mytok or ./././mytok, or setting BASH_ENV=$(cmd), BASH_FUNC_date%% or SHELLOPTS: not ready with one line; mytok itself is ready', async () => {
    const res = await fleet(['clusters', 'list', '--fleet-config', fleetYaml, '--provider', 'secrets', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<ClusterList>().items;
    const reason = (name: string) => items.find((i) => i.name === name);
    for (const [k, command] of Object.entries(RELATIVE)) {
      assert.equal(reason(`rel-${k}`)?.ready, false, command);
      assert.equal(reason(`rel-${k}`)?.reason, relativeLine(secretObject(`rel-${k}`), command));
    }
    for (const [k, env] of Object.entries(ENV_CASES(marker))) {
      assert.equal(reason(`env-${k}`)?.ready, false, k);
      assert.equal(reason(`env-${k}`)?.reason, envLine(secretObject(`env-${k}`), Object.keys(env)[0]));
    }
    assert.equal(reason('ok')?.ready, true, reason('ok')?.reason);
    assert.deepEqual(ranMarkers(), []);
  });

  it('auth whoami --all: exit 1, each refused cluster names its line, the planted programs never run, and mytok answers as alice', async () => {
    const res = await fleet([
      'auth',
      'whoami',
      '--all',
      '--fleet-config',
      fleetYaml,
      '--provider',
      'secrets',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const items = res.json<WhoAmIList>().items;
    for (const k of Object.keys(RELATIVE))
      assert.match(
        items.find((i) => i.cluster === `rel-${k}`)?.error?.message ?? '',
        /is named by hub data with a relative path or "\.\."/,
      );
    for (const k of Object.keys(ENV_CASES(marker)))
      assert.match(items.find((i) => i.cluster === `env-${k}`)?.error?.message ?? '', /which hub data may never set/);
    assert.equal(items.find((i) => i.cluster === 'ok')?.user?.username, 'alice');
    assert.deepEqual(ranMarkers(), []);
  });

  it('PATH=.:$PATH: the allowed bare mytok is found in the working directory first, which Go refuses (ErrDot); nothing runs', async () => {
    const res = await fleet(
      ['auth', 'whoami', '-c', 'secrets#ok', '--fleet-config', fleetYaml, '-o', 'json'],
      `.:${trusted}:${process.env.PATH}`,
    );
    assert.equal(res.code, 1, res.stderr);
    assert.equal(
      res.json<WhoAmIList>().items[0].error?.message,
      `${secretObject('ok')}: exec plugin "mytok": mytok was found as mytok in a relative PATH directory, which Go refuses (ErrDot); hub data's plugins run only from absolute PATH directories`,
    );
    const list = await fleet(
      ['clusters', 'list', '--fleet-config', fleetYaml, '--provider', 'secrets', '-o', 'json'],
      `.:${trusted}:${process.env.PATH}`,
    );
    assert.equal(list.json<ClusterList>().items.find((i) => i.name === 'ok')?.ready, false);
    assert.deepEqual(ranMarkers(), []);
  });

  it('an exported context whose Secret turns to ./mytok: kubectl run from the checkout gets a refusal from fleet kubeconfig credential, and nothing runs', async () => {
    const out = join(dir, 'exported.kubeconfig');
    const exported = await fleet([
      'kubeconfig',
      'export',
      '--fleet-config',
      fleetYaml,
      '-c',
      'secrets#exported',
      '--command',
      FLEET_BIN,
      '--out',
      out,
      '-o',
      'json',
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    const context = exported.json().items[0].context;
    await applyYaml(hub, JSON.stringify(secret('exported', { kubeconfig: kubeconfigFor('./mytok') }, MCR)));
    const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        cp.binaries.kubectl,
        ['--context', context, 'auth', 'whoami'],
        {
          cwd: checkout,
          env: { PATH: `${trusted}:${process.env.PATH}`, HOME: dir, XDG_CACHE_HOME: cache, KUBECONFIG: out },
          timeout: 60_000,
        },
        (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }),
      );
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /is named by hub data with a relative path or "\.\."/);
    assert.deepEqual(ranMarkers(), []);
  });
});

describe("a ClusterProfile's additional-envs (access-provider file naming mytok)", () => {
  it('BASH_ENV=$(cmd), BASH_FUNC_date%% and SHELLOPTS refuse the cluster with one line; the profile without them is ready and answers as alice', async () => {
    const res = await fleet([
      'auth',
      'whoami',
      '--all',
      '--fleet-config',
      fleetYaml,
      '--provider',
      'inventory',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const items = res.json<WhoAmIList>().items;
    for (const [k, env] of Object.entries(ENV_CASES(marker))) {
      // The API server keeps the extension's keys sorted: the first refused name in that order is the one named.
      assert.equal(
        items.find((i) => i.cluster === `${ns}/p-${k}`)?.error?.message,
        envLine(`ClusterProfile ${ns}/p-${k}`, Object.keys(env).sort()[0]),
      );
    }
    assert.equal(items.find((i) => i.cluster === `${ns}/p-ok`)?.user?.username, 'alice');
    const list = await fleet([
      'clusters',
      'list',
      '--fleet-config',
      fleetYaml,
      '--provider',
      'inventory',
      '-o',
      'json',
    ]);
    for (const k of Object.keys(ENV_CASES(marker)))
      assert.equal(list.json<ClusterList>().items.find((i) => i.name === `${ns}/p-${k}`)?.ready, false);
    assert.deepEqual(ranMarkers(), []);
  });
});

describe("an Argo CD cluster Secret's execProviderConfig", () => {
  it('relative commands and the same variables are refused with one line by creds list --live, nothing runs; the mytok Secret connects', async () => {
    const res = await fleet(['creds', 'list', '--fleet-config', fleetYaml, '--live', '-o', 'json']);
    const items = res.json<{
      items: Array<{ location: string; problems: string[]; live?: { ok: boolean; error?: { message: string } } }>;
    }>().items;
    const item = (name: string) => items.find((i) => i.location === `secret ${hub.context}:${ns}/${name}`);
    for (const k of Object.keys(RELATIVE)) {
      assert.match(
        item(`argo-rel-${k}`)?.problems.join(' ') ?? '',
        /is named by hub data with a relative path or "\.\."/,
        k,
      );
      assert.equal(item(`argo-rel-${k}`)?.live?.ok, false);
    }
    for (const [k, env] of Object.entries(ENV_CASES(marker))) {
      // Argo CD's env is a JSON object (a Go map: no order), read by name order as the argocd provider reads it, so
      // the refusal names whichever forbidden variable of the case comes first: any of them is the right line.
      const names = Object.keys(env);
      assert.ok(
        item(`argo-env-${k}`)?.problems.some((p) => names.some((name) => p.endsWith(envLine('', name).slice(2)))),
        `${k}: ${String(item(`argo-env-${k}`)?.problems)}`,
      );
      assert.equal(item(`argo-env-${k}`)?.live?.ok, false);
    }
    assert.equal(item('argo-ok')?.live?.ok, true, JSON.stringify(item('argo-ok')));
    assert.deepEqual(ranMarkers(), []);
  });
});
