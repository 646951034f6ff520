// Issue 29 against the real control plane: a hub object is data, never code. Whoever may write one labelled Secret (or a
// Cluster API kubeconfig Secret, a ClusterProfile's Secret, an Argo CD cluster Secret, a Secret a Flux Kustomization
// names) must not run a program on the machine of whoever runs fleet next, nor make fleet read a local file and send it
// to a server of its choosing. Each format holds a kubeconfig whose user runs /bin/sh, which would leave a marker file:
// none appears by default (the cluster is not ready, naming the object, the command and the line that allows it, and
// the others go on); each appears once the operator allows /bin/sh in fleet.yaml.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { PluginList } from '../../src/commands/auth/plugins.js';
import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const run = uniqueName('hostile');
const ns = run;
const consumer = `${run}-consumer`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const docs = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n---\n');
// Set in fleet's environment as a CI runner's would be: a program hub data runs must never see it.
const CANARY = `AKIA${run.replace(/[^a-z0-9]/g, '').toUpperCase()}CANARY`;

let dir: string;
let markers: string;

/** The arguments of the evil objects' shell: write the environment to a marker named for the object. */
const shArgs = (marker: string) => ['-c', `env > ${join(markers, marker)}; exit 1`];

/** A kubeconfig for member-1 whose user is `/bin/sh -c 'env > <marker>; exit 1'` (or names local files instead). */
function evilKubeconfig(marker: string, user?: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [
      {
        name: 'c',
        cluster: { server: m1.url, 'certificate-authority-data': b64(readFileSync(m1.caFile, 'utf8')), ...cluster },
      },
    ],
    users: [
      {
        name: 'u',
        user: user ?? {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            interactiveMode: 'Never',
            command: '/bin/sh',
            args: shArgs(marker),
          },
        },
      },
    ],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
}

const secret = (
  name: string,
  data: Record<string, string>,
  o: { labels?: Record<string, string>; type?: string } = {},
) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, labels: o.labels ?? {} },
  type: o.type ?? 'Opaque',
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const MCR = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };

function fleetYaml(name: string, allow: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    [
      'apiVersion: fleet/v1alpha1',
      'kind: FleetConfig',
      `hub: {kubeconfig: ${hub.kubeconfig}}`,
      allow,
      'providers:',
      `  - {name: secrets, type: kubeconfig, namespace: ${ns}}`,
      `  - {name: capi, type: cluster-api, namespace: ${ns}}`,
      `  - {name: inventory, type: cluster-inventory, namespace: ${ns}, consumer: ${consumer}}`,
      '',
    ].join('\n'),
  );
  return path;
}

const fleet = (args: string[]) => runFleet(args, { env: { AWS_SECRET_ACCESS_KEY: CANARY } });
const ranMarkers = () => readdirSync(markers).sort();

/** Nothing fleet printed holds the canary, and every line it printed on stderr is one line per problem. */
function clean(res: CliResult): void {
  assert.ok(!res.stdout.includes(CANARY) && !res.stderr.includes(CANARY), 'the environment leaked into the output');
}

let refusedYaml: string;
let allowedYaml: string;
let shellOnlyYaml: string;

before(async () => {
  dir = join(scratchDir(), run);
  markers = join(dir, 'markers');
  mkdirSync(markers, { recursive: true });
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  await applyYaml(
    hub,
    docs(
      // multicluster-runtime's kubeconfig provider: one evil, one good (member-2's admin), one naming local files.
      secret('evil', { kubeconfig: evilKubeconfig('mcr') }, { labels: MCR }),
      secret('good', { kubeconfig: readFileSync(m2.kubeconfig, 'utf8') }, { labels: MCR }),
      secret('files', { kubeconfig: evilKubeconfig('never', { tokenFile: '/etc/passwd' }) }, { labels: MCR }),
      secret(
        'ca-file',
        {
          kubeconfig: evilKubeconfig(
            'never',
            { token: 'x' },
            { 'certificate-authority': '/etc/hostname', 'certificate-authority-data': undefined },
          ),
        },
        { labels: MCR },
      ),
      // Cluster API: the Cluster's <name>-kubeconfig Secret, key value.
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'evil', namespace: ns }, spec: {} },
      secret(
        'evil-kubeconfig',
        { value: evilKubeconfig('capi') },
        { type: 'cluster.x-k8s.io/secret', labels: { 'cluster.x-k8s.io/cluster-name': 'evil' } },
      ),
      // cluster-inventory, Secret strategy: the consumer's labelled Secret, key Config.
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'evil', namespace: ns },
        spec: { clusterManager: { name: 'e2e' } },
      },
      secret(
        'evil-profile',
        { Config: evilKubeconfig('inventory') },
        { labels: { 'x-k8s.io/cluster-inventory-consumer': consumer, 'x-k8s.io/cluster-profile': 'evil' } },
      ),
      // Argo CD: a cluster Secret whose execProviderConfig is the program (creds list reads it, --live connects with it).
      secret(
        'argo-evil',
        {
          name: 'argo-evil',
          server: m1.url,
          config: JSON.stringify({
            execProviderConfig: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: '/bin/sh',
              args: shArgs('argocd'),
            },
            tlsClientConfig: { caData: b64(readFileSync(m1.caFile, 'utf8')) },
          }),
        },
        { labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
      ),
      // Flux: a Secret only a Kustomization names.
      secret('flux-evil', { value: evilKubeconfig('flux') }),
      {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'evil', namespace: ns },
        spec: {
          interval: '10m',
          prune: false,
          sourceRef: { kind: 'GitRepository', name: 'x' },
          kubeConfig: { secretRef: { name: 'flux-evil' } },
        },
      },
    ),
  );
  await kubectl(hub, [
    'patch',
    'clusters.cluster.x-k8s.io',
    'evil',
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { initialization: { controlPlaneInitialized: true } } }),
  ]);
  await kubectl(hub, [
    'patch',
    'clusterprofiles',
    'evil',
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        conditions: [
          {
            type: 'ControlPlaneHealthy',
            status: 'True',
            reason: 'Healthy',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    }),
  ]);
  refusedYaml = fleetYaml('refused', '');
  // An entry naming only the shell lets it run with no arguments of data's (issue 46): data's `-c ...` stays refused.
  shellOnlyYaml = fleetYaml('shell-only', 'credentialPluginAllowlist: [{command: /bin/sh}]');
  // What the operator allows for a shell is each exact argument list (as it would allow a wrapper script instead).
  allowedYaml = fleetYaml(
    'allowed',
    `credentialPluginAllowlist: ${JSON.stringify(
      ['argocd', 'capi', 'flux', 'inventory', 'mcr'].map((m) => ({ command: '/bin/sh', args: shArgs(m) })),
    )}`,
  );
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']);
});

const EVIL = ['secrets#evil', `capi#${ns}/evil`, `inventory#${ns}/evil`];
const OBJECT: Record<string, string> = {
  'secrets#evil': `Secret ${ns}/evil key kubeconfig`,
  [`capi#${ns}/evil`]: `Secret ${ns}/evil-kubeconfig key value`,
  [`inventory#${ns}/evil`]: `Secret ${ns}/evil-profile key Config`,
};

describe('hub data runs nothing and reads no local file by default', () => {
  it('clusters list -o wide shows each evil cluster not ready, naming the object, /bin/sh and the line that allows it, before anything runs', async () => {
    const res = await fleet(['clusters', 'list', '--fleet-config', refusedYaml, '-o', 'json']);
    clean(res);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<ClusterList>().items;
    for (const name of EVIL) {
      const c = items.find((i) => i.name === name);
      assert.equal(c?.ready, false, name);
      assert.equal(
        c?.reason,
        `${OBJECT[name]}: exec plugin "/bin/sh" is named by hub data, and hub data may not run programs; to allow it, add credentialPluginAllowlist: [{command: /bin/sh, args: [its 2 arguments as ${OBJECT[name]} writes them]}] to provider "${name.split('#')[0]}" in ${refusedYaml}`,
      );
    }
    assert.equal(items.find((i) => i.name === 'secrets#good')?.ready, true);
    assert.equal(
      items.find((i) => i.name === 'secrets#files')?.reason,
      `Secret ${ns}/files key kubeconfig: tokenFile names the local file /etc/passwd, and hub data may not read local files; to allow it, add localFileAllowlist: [/etc/passwd] to provider "secrets" in ${refusedYaml}`,
    );
    assert.match(
      items.find((i) => i.name === 'secrets#ca-file')?.reason ?? '',
      /certificate-authority names the local file \/etc\/hostname, and hub data may not read local files/,
    );
    const wide = await fleet(['clusters', 'list', '--fleet-config', refusedYaml, '-o', 'wide']);
    assert.match(wide.stdout, /secrets#evil .* False .*exec plugin "\/bin\/sh" is named by hub data/);
    assert.deepEqual(ranMarkers(), []);
  });

  it('auth whoami --all: the evil clusters fail on their own rows with that line, the good one answers, nothing runs', async () => {
    const res = await fleet(['auth', 'whoami', '--all', '--fleet-config', refusedYaml, '-o', 'json']);
    clean(res);
    assert.equal(res.code, 1);
    const items = res.json<WhoAmIList>().items;
    for (const name of EVIL) {
      const item = items.find((i) => i.cluster === name);
      assert.equal(item?.ok, false, name);
      assert.equal(item?.error?.kind, 'plugin');
      assert.match(
        item.error.message,
        /hub data may not run programs; to allow it, add credentialPluginAllowlist: \[\{command: \/bin\/sh, args: \[its 2 arguments as /,
      );
      assert.ok(res.stderr.includes(`error: ${name}: ${OBJECT[name]}: exec plugin "/bin/sh"`), res.stderr);
    }
    for (const name of ['secrets#files', 'secrets#ca-file'])
      assert.equal(items.find((i) => i.cluster === name)?.error?.kind, 'config', name);
    assert.equal(items.find((i) => i.cluster === 'secrets#good')?.user?.username, cp.admin.user);
    assert.deepEqual(ranMarkers(), []);
  });

  it('auth plugins lists /bin/sh from hub data, refused, with its clusters; exit 1', async () => {
    const res = await fleet(['auth', 'plugins', '--fleet-config', refusedYaml, '-o', 'json']);
    clean(res);
    assert.equal(res.code, 1);
    const sh = res.json<PluginList>().items.filter((p) => p.command === '/bin/sh');
    assert.equal(sh.length, 1);
    assert.deepEqual([sh[0].trust, sh[0].allowed, [...sh[0].clusters].sort()], ['data', false, [...EVIL].sort()]);
    assert.deepEqual([...sh[0].sources].sort(), Object.values(OBJECT).sort());
    assert.deepEqual(ranMarkers(), []);
  });

  it('creds list --live: the Argo CD and Flux Secrets are described without running their plugin, and not connected with', async () => {
    const res = await fleet(['creds', 'list', '--fleet-config', refusedYaml, '--live', '-o', 'json']);
    clean(res);
    const items = res.json<{
      items: Array<{
        location: string;
        method: string;
        problems: string[];
        live?: { ok: boolean; error?: { message: string } };
      }>;
    }>().items;
    for (const name of ['argo-evil', 'flux-evil', 'evil']) {
      const item = items.find((i) => i.location === `secret ${hub.context}:${ns}/${name}`);
      assert.ok(item, `${name} is listed`);
      assert.equal(item.method, 'exec');
      assert.match(
        item.problems.join(' '),
        /exec plugin "\/bin\/sh" is named by hub data, and hub data may not run programs/,
      );
      assert.equal(item.live?.ok, false);
      assert.match(item.live?.error?.message ?? '', /hub data may not run programs/);
    }
    assert.deepEqual(ranMarkers(), []);
  });
});

describe('a shell allowed in fleet.yaml runs for hub data only with the exact arguments allowed', () => {
  it('an entry naming only /bin/sh: every evil cluster is refused as an interpreter given arguments, naming the line; nothing runs', async () => {
    const res = await fleet(['auth', 'whoami', '--all', '--fleet-config', shellOnlyYaml, '-o', 'json']);
    clean(res);
    assert.equal(res.code, 1);
    const items = res.json<WhoAmIList>().items;
    for (const name of EVIL) {
      const message = items.find((i) => i.cluster === name)?.error?.message ?? '';
      assert.equal(
        message,
        `${OBJECT[name]}: exec plugin "/bin/sh" is an interpreter (a shell: it runs whatever its arguments say), and hub data gives it 2 arguments of its own; an interpreter runs for hub data only with the exact arguments the operator allowed; to allow these, add credentialPluginAllowlist: [{command: /bin/sh, args: [its 2 arguments as ${OBJECT[name]} writes them]}] to provider "${name.split('#')[0]}" in ${shellOnlyYaml} (or allow the wrapper script they run instead)`,
        name,
      );
      assert.ok(!message.includes('env >'), 'the arguments are never shown');
    }
    const plugins = await fleet(['auth', 'plugins', '--fleet-config', shellOnlyYaml, '-o', 'json']);
    assert.equal(plugins.code, 1);
    const sh = plugins.json<PluginList>().items.find((p) => p.command === '/bin/sh');
    assert.equal(sh?.allowed, false, 'auth plugins says what whoami does');
    // Each object's refusal names the object, so the row sends the reader to them.
    assert.equal(sh?.reason, 'refused (see each cluster in clusters list -o wide)');
    assert.deepEqual(ranMarkers(), []);
  });

  it('auth whoami --all and creds list --live run the plugin of every format (each marker appears), the local files stay refused', async () => {
    const whoami = await fleet(['auth', 'whoami', '--all', '--fleet-config', allowedYaml, '-o', 'json']);
    clean(whoami);
    const items = whoami.json<WhoAmIList>().items;
    for (const name of EVIL)
      assert.match(
        items.find((i) => i.cluster === name)?.error?.message ?? '',
        /exec plugin \/bin\/sh exited with 1/,
        name,
      );
    assert.match(
      items.find((i) => i.cluster === 'secrets#files')?.error?.message ?? '',
      /tokenFile names the local file/,
    );
    const creds = await fleet(['creds', 'list', '--fleet-config', allowedYaml, '--live', '-o', 'json']);
    clean(creds);
    assert.deepEqual(ranMarkers(), ['argocd', 'capi', 'flux', 'inventory', 'mcr']);
    // What the operator allowed runs as kubectl would run it: with fleet's environment (that is what allowing means).
    assert.ok(readFileSync(join(markers, 'mcr'), 'utf8').includes(CANARY));
    assert.ok(!existsSync(join(markers, 'never')));
  });

  it('auth plugins --write-kuberc never adds /bin/sh (dry run or not, file unchanged); a kuberc entry the user writes for it does not let hub data give it arguments', async () => {
    // The markers of the test before are cleared: nothing in this one may run.
    for (const m of ranMarkers()) rmSync(join(markers, m));
    const kuberc = join(dir, 'kuberc');
    writeFileSync(kuberc, 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults: []\n', {
      mode: 0o600,
    });
    const before = readFileSync(kuberc, 'utf8');
    const refusal = `${kuberc}: not adding "/bin/sh": it is an interpreter (a shell), and an allowlist entry for it would let any kubeconfig run any program through its arguments; make the kubeconfig run your wrapper script itself (command: /path/to/script, with its #! line) and add \`- name: /path/to/script\``;
    const writeKuberc = (...extra: string[]) =>
      fleet(['auth', 'plugins', '--fleet-config', refusedYaml, '--write-kuberc', kuberc, ...extra]);
    for (const dryRun of [true, false]) {
      const dry = dryRun ? ['--dry-run'] : [];
      const res = await writeKuberc('--command', '/bin/sh', ...dry, '-o', 'json');
      clean(res);
      assert.equal(res.code, 1, res.stderr);
      const w = res.json<PluginList>().written;
      assert.deepEqual(
        [w?.added, w?.dryRun, w?.notAdded.map((n) => [n.command, n.why, n.message])],
        [[], dryRun, [['/bin/sh', 'interpreter', refusal]]],
      );
      assert.equal(readFileSync(kuberc, 'utf8'), before, 'nothing written');
      const text = await writeKuberc('--command', '/bin/sh', ...dry);
      assert.ok(text.stderr.includes(`${refusal}\n`), text.stderr);
      assert.match(text.stderr, new RegExp(`${kuberc}: nothing ${dryRun ? 'would be' : 'was'} written`));
    }
    const unknown = await writeKuberc('--command', 'kubelogin');
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /^error: --command: no selected cluster runs "kubelogin"; the fleet runs "\/bin\/sh"\n$/,
    );

    // The user writes the entry by hand: their own kubeconfigs may run /bin/sh, hub data still may not give it a script.
    const own = join(dir, 'own-kuberc');
    writeFileSync(
      own,
      'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: /bin/sh\n',
      { mode: 0o600 },
    );
    const listed = await fleet(['auth', 'plugins', '--fleet-config', refusedYaml, '--kuberc', own, '-o', 'json']);
    clean(listed);
    const sh = listed.json<PluginList>().items.find((p) => p.command === '/bin/sh');
    assert.equal(sh?.allowed, false);
    assert.equal(sh?.reason, 'refused (see each cluster in clusters list -o wide)');
    assert.equal(listed.code, 1);
    const whoami = await fleet([
      'auth',
      'whoami',
      '--all',
      '--fleet-config',
      refusedYaml,
      '--kuberc',
      own,
      '-o',
      'json',
    ]);
    for (const name of EVIL)
      assert.match(
        whoami.json<WhoAmIList>().items.find((i) => i.cluster === name)?.error?.message ?? '',
        /is an interpreter \(a shell/,
        name,
      );
    assert.deepEqual(ranMarkers(), [], 'nothing ran');
  });
});
