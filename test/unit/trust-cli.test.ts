// Issue 14 at the command line, no cluster needed: empty listings, empty directories, a Rancher fleet.yaml.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';

const KC = `apiVersion: v1
kind: Config
current-context: one
clusters: [{name: k, cluster: {server: "https://k.example:6443"}}]
contexts: [{name: one, context: {cluster: k, namespace: team-a}}]
`;

describe('no silent success at the command line', () => {
  it('clusters list with nothing to list: an empty list and "No clusters found" on stderr, exit 0, as kubectl', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-trust-empty-'));
    const table = await runFleet(['clusters', 'list'], { cwd: d, env: { HOME: d } });
    assert.deepEqual(
      [table.code, table.stdout, table.stderr],
      [0, '', `No clusters found in ${join(d, '.kube', 'config')} (no such file).\n`],
    );
    const json = await runFleet(['clusters', 'list', '-o', 'json'], { cwd: d, env: { HOME: d } });
    assert.deepEqual([json.code, json.json()], [0, { kind: 'ClusterList', items: [] }]);
  });

  it('--kubeconfig DIR without kubeconfig files is an error naming what is there', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-trust-dir-'));
    await writeFile(join(d, 'notes.txt'), 'x');
    await writeFile(join(d, 'config.yaml'), KC);
    const res = await runFleet(['clusters', 'list', '--kubeconfig', d]);
    assert.equal(res.code, 2);
    assert.equal(
      res.stderr,
      `error: ${d}: no kubeconfig files in this directory (looked for kubeconfig.yaml, kubeconfig.yml, *.kubeconfig, *.kubeconfig.yaml, *.kubeconfig.yml; found config.yaml, notes.txt)\n`,
    );
  });

  it('-l over file clusters: fleet.dev/ fields select; no match is exit 2 naming the keys', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-trust-labels-'));
    await writeFile(join(d, 'a.kubeconfig'), KC);
    const hit = await runFleet([
      'clusters',
      'list',
      '--kubeconfig',
      join(d, 'a.kubeconfig'),
      '-l',
      'fleet.dev/namespace=team-a',
      '-o',
      'json',
    ]);
    assert.equal(hit.code, 0, hit.stderr);
    assert.deepEqual(hit.json().items[0].labels, {
      'fleet.dev/context': 'one',
      'fleet.dev/file': 'a.kubeconfig',
      'fleet.dev/cluster': 'k',
      'fleet.dev/namespace': 'team-a',
      'fleet.dev/auth': 'none',
    });
    const byAuth = await runFleet([
      'clusters',
      'list',
      '--kubeconfig',
      join(d, 'a.kubeconfig'),
      '-l',
      'fleet.dev/auth=none',
      '-o',
      'name',
    ]);
    assert.deepEqual([byAuth.code, byAuth.stdout], [0, `${join(d, 'a.kubeconfig')}+one\n`], byAuth.stderr);
    const miss = await runFleet(['clusters', 'list', '--kubeconfig', join(d, 'a.kubeconfig'), '-l', 'env=prod']);
    assert.deepEqual([miss.code, miss.stdout], [2, '']);
    assert.equal(
      miss.stderr,
      'error: --selector env=prod matched none of the 1 cluster; label keys in use: fleet.dev/auth, fleet.dev/cluster, fleet.dev/context, fleet.dev/file, fleet.dev/namespace\n',
    );
  });
});

describe('a fleet.yaml that is not ours', () => {
  it('a Rancher Fleet bundle file in the working directory is ignored (said with --verbose); --fleet-config stays strict', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-trust-rancher-'));
    await mkdir(join(d, 'kube'));
    await writeFile(join(d, 'kube', 'config'), KC);
    await writeFile(
      join(d, 'fleet.yaml'),
      'defaultNamespace: team-a\nhelm:\n  releaseName: web\n  chart: ./chart\ntargetCustomizations:\n  - name: prod\n    clusterSelector: {matchLabels: {env: prod}}\n',
    );
    const env = { KUBECONFIG: join(d, 'kube', 'config') };
    const quiet = await runFleet(['clusters', 'list', '-o', 'name'], { cwd: d, env });
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [0, `${join(d, 'kube', 'config')}+one\n`, '']);
    const verbose = await runFleet(['clusters', 'list', '-o', 'name', '--verbose'], { cwd: d, env });
    assert.equal(verbose.code, 0);
    assert.equal(
      verbose.stderr,
      `note: ignoring ${join(d, 'fleet.yaml')}: it does not say "kind: FleetConfig" (a Rancher Fleet bundle file?)\n`,
    );
    const strict = await runFleet(['clusters', 'list', '--fleet-config', 'fleet.yaml'], { cwd: d, env });
    assert.equal(strict.code, 2);
    assert.match(strict.stderr, /^error: fleet.yaml: defaultNamespace: unknown field/);
  });
});
