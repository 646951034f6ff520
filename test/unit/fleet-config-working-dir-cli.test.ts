// Issue 38, item 5, at the command line: the working directory is not the user's word. A ./fleet.yaml in a pull request's
// checkout that names a program (here the issue's `kind` provider command) is refused before anything runs, even with a
// DenyAll kuberc in force (the kind command is no credential plugin, so the kuberc never stopped it); the same file
// named with --fleet-config or FLEET_CONFIG runs it as before. A ./fleet.yaml that is not YAML is exit 2, not skipped.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';

const KC = `apiVersion: v1
kind: Config
current-context: one
clusters: [{name: k, cluster: {server: "https://k.example:6443"}}]
contexts: [{name: one, context: {cluster: k}}]
`;

async function checkout() {
  const d = await mkdtemp(join(tmpdir(), 'fleet-pr-checkout-'));
  const marker = join(d, 'kind-ran');
  await mkdir(join(d, 'tools'));
  // Prints no cluster, so a run that may use it lists nothing and exits 0; the marker says it ran.
  await writeFile(join(d, 'tools', 'kind'), `#!/bin/sh\necho "$@" >> ${marker}\nexit 0\n`);
  await chmod(join(d, 'tools', 'kind'), 0o755);
  await writeFile(
    join(d, 'fleet.yaml'),
    'apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders: [{type: kind, command: ./tools/kind}]\n',
  );
  const home = join(d, 'home');
  await mkdir(join(home, '.kube'), { recursive: true });
  await writeFile(join(home, '.kube', 'config'), KC);
  await writeFile(
    join(home, '.kube', 'kuberc'),
    'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: DenyAll\n',
  );
  return { d, marker, env: { HOME: home, PATH: '/usr/bin:/bin' } };
}

describe('a ./fleet.yaml in the working directory (issue 38, item 5)', () => {
  it('naming a kind command: refused in one line saying how to allow it, exit 2, the planted ./tools/kind never runs', async () => {
    const { d, marker, env } = await checkout();
    const local = join(d, 'fleet.yaml');
    for (const args of [
      ['clusters', 'list'],
      ['clusters', 'list', '-o', 'json'],
      ['auth', 'whoami', '--all'],
      ['auth', 'plugins'],
    ]) {
      const res = await runFleet(args, { cwd: d, env });
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      const line = `${local}: providers[0].command: a fleet.yaml found in the working directory may not name programs or files (it may come from a checkout of someone else's code); if you trust it, name it: --fleet-config ${local} (or FLEET_CONFIG=${local})`;
      if (args.includes('json')) assert.equal(res.json().error.message, line);
      else assert.deepEqual([res.stdout, res.stderr], ['', `error: ${line}\n`], args.join(' '));
    }
    assert.equal(existsSync(marker), false, 'the checkout’s ./tools/kind did not run');
  });

  it('the same file named by --fleet-config or FLEET_CONFIG works as before: its kind command runs', async () => {
    const { d, marker, env } = await checkout();
    for (const [how, args, extra] of [
      ['--fleet-config ./fleet.yaml', ['--fleet-config', './fleet.yaml'], {}],
      ['FLEET_CONFIG=fleet.yaml', [], { FLEET_CONFIG: 'fleet.yaml' }],
    ] as const) {
      await rm(marker, { force: true });
      const res = await runFleet(['clusters', 'list', ...args, '-o', 'json'], { cwd: d, env: { ...env, ...extra } });
      assert.equal(res.code, 0, `${how}: ${res.stderr}`);
      assert.deepEqual(res.json().items, [], how);
      assert.ok(existsSync(marker), `${how}: the named file's kind command ran`);
    }
  });

  it('not valid YAML: exit 2 naming the file and that it was found in the working directory, no fallback to ~/.kube/config', async () => {
    const { d, env } = await checkout();
    const local = join(d, 'fleet.yaml');
    await writeFile(local, 'kind: FleetConfig\nproviders:\n  - {type: kind\n');
    const res = await runFleet(['clusters', 'list', '-o', 'name'], { cwd: d, env });
    assert.deepEqual(
      [res.code, res.stdout, res.stderr],
      [
        2,
        '',
        `error: ${local}: not valid YAML (line 4): unexpected end of the stream within a flow collection (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)\n`,
      ],
    );
    // A Rancher Fleet bundle file is still ignored: ~/.kube/config answers.
    await writeFile(local, 'defaultNamespace: team-a\nhelm:\n  chart: ./chart\n');
    const rancher = await runFleet(['clusters', 'list', '-o', 'name'], { cwd: d, env });
    assert.deepEqual([rancher.code, rancher.stdout], [0, `${join(env.HOME, '.kube', 'config')}+one\n`], rancher.stderr);
  });

  it('--provider cluster-inventory with nothing configured: ./clusterprofile-provider-file.json is not taken, exit 2 before any hub is asked', async () => {
    const { d, marker, env } = await checkout();
    await rm(join(d, 'fleet.yaml'));
    // Upstream's default file name, naming the checkout's program as an access provider's exec plugin.
    await writeFile(
      join(d, 'clusterprofile-provider-file.json'),
      JSON.stringify({
        providers: [
          {
            name: 'p',
            execConfig: { apiVersion: 'client.authentication.k8s.io/v1', command: join(d, 'tools', 'kind') },
          },
        ],
      }),
    );
    for (const args of [
      ['clusters', 'list', '--provider', 'cluster-inventory'],
      ['auth', 'whoami', '--provider', 'cluster-inventory', '--all', '-o', 'json'],
    ]) {
      const res = await runFleet(args, { cwd: d, env });
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      const line =
        '--provider cluster-inventory: nothing configures it; add an entry with providerFile (its access-provider file) or consumer to your fleet.yaml (fleet does not take ./clusterprofile-provider-file.json from the working directory: the commands it names would run as yours)';
      if (args.includes('json')) assert.equal(res.json().error.message, line);
      else assert.deepEqual([res.stdout, res.stderr], ['', `error: ${line}\n`], args.join(' '));
    }
    assert.equal(existsSync(marker), false, 'the checkout’s program did not run');
  });
});
