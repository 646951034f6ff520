// Issue 38, items 2 and 5, against the real control plane. An attacker may write one Secret on the hub (docs/security.md):
// it names /bin/sh beside the user's own plugin `mytok`. `fleet auth plugins --write-kuberc` (no --command, as
// docs/security.md recommends) must allow only what the user's files name: `mytok` is added, `/bin/sh` is listed with the
// line to add by hand and is not written, and `auth whoami --all` under that kuberc runs `mytok` (its marker appears) and
// never the Secret's /bin/sh (no marker). Then the working directory: a checkout's ./fleet.yaml naming the same user's
// files is refused before anything runs, and the same file named with --fleet-config runs as above.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { PluginList } from '../../src/commands/auth/plugins.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { loadKuberc } from '../../src/kubeconfig/kuberc.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const run = uniqueName('wdkuberc');
const ns = run;
const b64 = (s: string) => Buffer.from(s).toString('base64');

let dir: string;
let markers: string;
let bin: string;
let fleetYaml: string;
let userKubeconfig: string;
let token: string;
let tokenName: string;

const ranMarkers = () => readdirSync(markers).sort();
const fleet = (args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> =>
  runFleet(args, {
    cwd: o.cwd ?? dir,
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: join(dir, 'home'), ...o.env },
    timeoutMs: 120_000,
  });
const noToken = (res: CliResult) =>
  assert.ok(!res.stdout.includes(token) && !res.stderr.includes(token), 'the token was printed');

before(async () => {
  dir = join(scratchDir(), run);
  markers = join(dir, 'markers');
  bin = join(dir, 'bin');
  for (const d of [markers, bin, join(dir, 'home', '.kube')]) mkdirSync(d, { recursive: true });
  const user = tokenUser(m2, 'carol');
  token = user.token;
  tokenName = user.user.name;
  // The user's own plugin, a bare name found on PATH: leaves a marker and hands out a static token of member-2.
  writeFileSync(
    join(bin, 'mytok'),
    `#!/bin/sh\ntouch ${join(markers, 'mytok')}\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'\n`,
  );
  chmodSync(join(bin, 'mytok'), 0o755);
  userKubeconfig = join(dir, 'mine.kubeconfig');
  writeFileSync(
    userKubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'm2',
      clusters: [
        { name: 'm2', cluster: { server: m2.url, 'certificate-authority-data': b64(readFileSync(m2.caFile, 'utf8')) } },
      ],
      users: [
        {
          name: 'me',
          user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', command: 'mytok' } },
        },
      ],
      contexts: [{ name: 'm2', context: { cluster: 'm2', user: 'me' } }],
    }),
    { mode: 0o600 },
  );
  // The attacker's Secret: member-1, its user /bin/sh, which would leave a marker.
  const evil = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [
      { name: 'c', cluster: { server: m1.url, 'certificate-authority-data': b64(readFileSync(m1.caFile, 'utf8')) } },
    ],
    users: [
      {
        name: 'u',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            interactiveMode: 'Never',
            command: '/bin/sh',
            args: ['-c', `touch ${join(markers, 'sh')}; exit 1`],
          },
        },
      },
    ],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
  await applyYaml(
    hub,
    [
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'evil', namespace: ns, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
        data: { kubeconfig: b64(evil) },
      }),
    ].join('\n---\n'),
  );
  fleetYaml = join(dir, 'fleet.yaml');
  writeFileSync(
    fleetYaml,
    [
      'apiVersion: fleet/v1alpha1',
      'kind: FleetConfig',
      `hub: {kubeconfig: ${hub.kubeconfig}}`,
      'providers:',
      `  - {name: mine, type: file, kubeconfig: [${userKubeconfig}]}`,
      `  - {name: secrets, type: kubeconfig, namespace: ${ns}}`,
      '',
    ].join('\n'),
  );
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']);
});

describe('auth plugins --write-kuberc beside a hub Secret naming /bin/sh (issue 38, item 2)', () => {
  it('adds only the user’s mytok; /bin/sh is listed with the line to add by hand, not written; exit 1; nothing runs', async () => {
    const kuberc = join(dir, 'kuberc');
    const listed = await fleet(['auth', 'plugins', '--fleet-config', fleetYaml, '-o', 'json']);
    const rows = listed.json<PluginList>().items.map((p) => [p.command, p.trust, p.allowed]);
    assert.deepEqual(rows, [
      ['/bin/sh', 'data', false],
      ['mytok', 'file', true],
    ]);

    const dry = await fleet([
      'auth',
      'plugins',
      '--fleet-config',
      fleetYaml,
      '--write-kuberc',
      kuberc,
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(dry.code, 1, dry.stderr);
    assert.deepEqual(dry.json<PluginList>().written, {
      path: kuberc,
      added: ['mytok'],
      dryRun: true,
      entryKey: 'name',
      notAdded: [
        {
          command: '/bin/sh',
          sources: [`Secret ${ns}/evil key kubeconfig`],
          line: 'credentialPluginAllowlist: [{command: /bin/sh, args: [...]}]',
          why: 'data',
          message: `${kuberc}: not added "/bin/sh": named by hub data (Secret ${ns}/evil key kubeconfig), not by your files, and it is an interpreter: no kuberc entry lets hub data run it with arguments; if you trust what the data runs, add \`credentialPluginAllowlist: [{command: /bin/sh, args: [...]}]\` with its exact arguments to your fleet configuration`,
        },
      ],
    });
    assert.equal(existsSync(kuberc), false, '--dry-run wrote nothing');

    const wrote = await fleet(['auth', 'plugins', '--fleet-config', fleetYaml, '--write-kuberc', kuberc]);
    assert.equal(wrote.code, 1, wrote.stderr);
    const notes = wrote.stderr.split('\n').filter((l) => l.startsWith(`${kuberc}: `));
    assert.deepEqual(notes, [
      `${kuberc}: added name: mytok to credentialPluginAllowlist`,
      `${kuberc}: not added "/bin/sh": named by hub data (Secret ${ns}/evil key kubeconfig), not by your files, and it is an interpreter: no kuberc entry lets hub data run it with arguments; if you trust what the data runs, add \`credentialPluginAllowlist: [{command: /bin/sh, args: [...]}]\` with its exact arguments to your fleet configuration`,
    ]);
    assert.deepEqual(await loadKuberc({ flag: kuberc, env: {} }), {
      path: kuberc,
      policy: 'Allowlist',
      allowlist: ['mytok'],
    });
    assert.doesNotMatch(readFileSync(kuberc, 'utf8'), /bin\/sh/);
    const again = await fleet(['auth', 'plugins', '--fleet-config', fleetYaml, '--write-kuberc', kuberc, '-o', 'json']);
    assert.deepEqual(again.json<PluginList>().written?.added, []);

    // Only the hub's provider: nothing is the user's to add, so nothing is written (an empty Allowlist would deny all).
    const hubOnly = join(dir, 'hub-only.yaml');
    writeFileSync(
      hubOnly,
      `kind: FleetConfig\nhub: {kubeconfig: ${hub.kubeconfig}}\nproviders:\n  - {name: secrets, type: kubeconfig, namespace: ${ns}}\n`,
    );
    const none = join(dir, 'kuberc-none');
    const nothing = await fleet(['auth', 'plugins', '--fleet-config', hubOnly, '--write-kuberc', none]);
    assert.equal(nothing.code, 1);
    assert.deepEqual(
      nothing.stderr.split('\n').filter((l) => l.startsWith(`${none}: `)),
      [
        `${none}: your files name no exec plugin; nothing was written`,
        `${none}: not added "/bin/sh": named by hub data (Secret ${ns}/evil key kubeconfig), not by your files, and it is an interpreter: no kuberc entry lets hub data run it with arguments; if you trust what the data runs, add \`credentialPluginAllowlist: [{command: /bin/sh, args: [...]}]\` with its exact arguments to your fleet configuration`,
      ],
    );
    assert.equal(existsSync(none), false);
    assert.deepEqual(ranMarkers(), [], 'listing and writing run nothing');
  });

  it('auth whoami --all with the kuberc it writes: mytok runs and answers; the Secret’s /bin/sh never runs', async () => {
    // Its own kuberc, written here, so that this journey stands alone (the run's output is checked above).
    const kuberc = join(dir, 'kuberc-whoami');
    await fleet(['auth', 'plugins', '--fleet-config', fleetYaml, '--write-kuberc', kuberc]);
    const who = await fleet(['auth', 'whoami', '--all', '--fleet-config', fleetYaml, '--kuberc', kuberc, '-o', 'json']);
    noToken(who);
    assert.equal(who.code, 1, who.stderr);
    const items = who.json<WhoAmIList>().items;
    const mine = items.find((i) => i.cluster.startsWith('mine#'));
    assert.equal(mine?.ok, true, JSON.stringify(mine));
    assert.equal(mine?.user?.username, tokenName);
    assert.deepEqual(ranMarkers(), ['mytok'], 'mytok ran, /bin/sh did not');
    const evil = items.find((i) => i.cluster === 'secrets#evil');
    assert.equal(evil?.ok, false);
    assert.match(
      evil?.error?.message ?? '',
      /exec plugin "\/bin\/sh" is named by hub data, and hub data may not run programs/,
    );
  });
});

describe('the same fleet.yaml in the working directory (issue 38, item 5)', () => {
  it('found by itself: refused in one line before anything runs or any cluster is asked; named: runs as above', async () => {
    rmSync(join(markers, 'mytok'), { force: true });
    const found = await fleet(['auth', 'whoami', '--all', '--kuberc', join(dir, 'kuberc-whoami')]);
    assert.deepEqual([found.code, found.stdout], [2, '']);
    assert.equal(
      found.stderr,
      `error: ${fleetYaml}: hub.kubeconfig: a fleet.yaml found in the working directory may not name programs or files (it may come from a checkout of someone else's code); if you trust it, name it: --fleet-config ${fleetYaml} (or FLEET_CONFIG=${fleetYaml})\n`,
    );
    assert.deepEqual(ranMarkers(), []);
    const named = await fleet(['auth', 'whoami', '--all', '--kuberc', join(dir, 'kuberc-whoami'), '-o', 'json'], {
      env: { FLEET_CONFIG: 'fleet.yaml' },
    });
    noToken(named);
    assert.equal(named.json<WhoAmIList>().items.find((i) => i.cluster.startsWith('mine#'))?.ok, true, named.stderr);
    assert.deepEqual(ranMarkers(), ['mytok']);
  });
});

describe('kubeconfig export from a ./fleet.yaml fleet only found (issue 38, item 5)', () => {
  it("refused before anything is written: its entries would name the checkout's file as the user's configuration; named, it exports", async () => {
    // A found file that names no program or file (its hub from KUBECONFIG) is read; exporting it would pin it by path
    // into entries every kubectl call runs with, as if the user had named it, so a later change to the checkout would
    // choose what those calls run.
    const checkout = join(dir, 'checkout');
    mkdirSync(checkout, { recursive: true });
    const found = join(checkout, 'fleet.yaml');
    writeFileSync(found, `kind: FleetConfig\nproviders:\n  - {name: secrets, type: kubeconfig, namespace: ${ns}}\n`);
    const out = join(checkout, 'exported.kubeconfig');
    const res = await fleet(['kubeconfig', 'export', '--all', '--out', out], {
      cwd: checkout,
      env: { KUBECONFIG: hub.kubeconfig },
    });
    assert.deepEqual([res.code, res.stdout], [2, '']);
    assert.equal(
      res.stderr,
      `error: ${found} was found in the working directory, not named: exported entries would read it on every kubectl call as your own configuration; to export from it, name it: --fleet-config ${found} (or FLEET_CONFIG)\n`,
    );
    assert.equal(existsSync(out), false);
    const named = await fleet(['kubeconfig', 'export', '--all', '--out', out, '--fleet-config', found], {
      cwd: checkout,
      env: { KUBECONFIG: hub.kubeconfig },
    });
    assert.doesNotMatch(named.stderr, /was found in the working directory/);
    // The only cluster there is the attacker's, whose /bin/sh is refused: exported nothing, said so, ran nothing.
    assert.equal(named.code, 1, named.stderr);
    assert.match(named.stderr, /exec plugin "\/bin\/sh" is named by hub data/);
    assert.deepEqual(
      ranMarkers().filter((m) => m === 'sh'),
      [],
    );
  });
});
