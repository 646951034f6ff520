import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import { runFleet } from '../support/cli.js';

// Command-level tests of the fleet configuration over providers that need no cluster: kubeconfig files and kind (the
// kind CLI is a stand-in script; kind cannot run on this machine). Hub-backed providers are tested in test/e2e.
const FAKE_KIND = fileURLToPath(new URL('../fixtures/providers/fake-kind', import.meta.url));

const kc = (context: string, server: string) =>
  JSON.stringify({
    'current-context': context,
    clusters: [{ name: context, cluster: { server } }],
    users: [{ name: context, user: { token: `fixture-token-cli-${context}` } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
  });

let dir: string;
let env: NodeJS.ProcessEnv;
/** env naming the fleet.yaml (FLEET_CONFIG): found by itself in the working directory, a fleet.yaml may not name files. */
let named: NodeJS.ProcessEnv;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-providers-cli-'));
  const kindDir = join(dir, 'kind');
  await writeFile(join(dir, 'a.kubeconfig'), kc('a', 'https://a.example:6443'));
  await import('node:fs/promises').then((fs) => fs.mkdir(kindDir));
  await writeFile(join(kindDir, 'clusters'), 'lab\ngone\n');
  await writeFile(join(kindDir, 'lab.kubeconfig'), kc('kind-lab', 'https://127.0.0.1:40100'));
  await writeFile(
    join(dir, 'fleet.yaml'),
    'kind: FleetConfig\nproviders:\n  - {name: local, type: file, kubeconfig: a.kubeconfig}\n  - {name: lab, type: kind}\n',
  );
  env = { PATH: `${FAKE_KIND}:${process.env.PATH}`, FAKE_KIND_DIR: kindDir, XDG_CONFIG_HOME: join(dir, 'xdg') };
  named = { ...env, FLEET_CONFIG: 'fleet.yaml' };
});

describe('fleet clusters list with a fleet configuration', () => {
  it('lists every provider, names prefixed <provider>#, not-ready rows with the reason', async () => {
    const res = await runFleet(['clusters', 'list', '-o', 'json'], { cwd: dir, env: named });
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<ClusterList>().items;
    assert.deepEqual(
      items.map((i) => [i.name, i.provider, i.ready]),
      [
        [`local#${join(dir, 'a.kubeconfig')}+a`, 'local', true],
        ['lab#lab', 'lab', true],
        ['lab#gone', 'lab', false],
      ],
    );
    assert.deepEqual(items[1].source, { kind: 'kind', name: 'lab', context: 'kind-lab' });
    assert.equal(
      items[2].reason,
      "kind get kubeconfig --name gone exited with 1: ERROR: could not locate any control plane nodes for cluster named 'gone'",
    );

    const table = await runFleet(['clusters', 'list'], { cwd: dir, env: named });
    const lines = table.stdout.trimEnd().split('\n');
    // The file provider's current context is still the default cluster, so kubectl's CURRENT column shows.
    assert.match(lines[0], /^CURRENT\s+NAME\s+PROVIDER\s+SERVER\s+AUTH\s+READY\s+REASON$/);
    // The file cluster by its context name, which no other cluster has (issue 41's short names).
    assert.match(lines[1], /^\*\s+a\s+local\s/);
    assert.match(
      lines[3],
      /^\s+lab#gone\s+lab\s+<none>\s+none\s+False\s+kind get kubeconfig --name gone exited with 1: ERROR/,
    );
    assert.equal(table.stderr, '');
    assert.ok(!table.stdout.includes('fixture-token-cli'), 'no token in output');
  });

  it('--strict exits 1 when a cluster is not ready; --provider selects one provider with its own names', async () => {
    assert.equal((await runFleet(['clusters', 'list', '--strict', '-o', 'name'], { cwd: dir, env: named })).code, 1);
    const one = await runFleet(['clusters', 'list', '--provider', 'lab', '-o', 'name'], { cwd: dir, env: named });
    assert.deepEqual([one.code, one.stdout], [0, 'lab\ngone\n']);
    const strictOk = await runFleet(['clusters', 'list', '--provider', 'local', '--strict', '-o', 'name'], {
      cwd: dir,
      env: named,
    });
    assert.deepEqual([strictOk.code, strictOk.stdout], [0, `${join(dir, 'a.kubeconfig')}+a\n`]);
  });

  it('a provider that cannot list is a row and exit 1; the rest of the fleet is still listed', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-providers-cli-'));
    await writeFile(
      join(d, 'fleet.yaml'),
      'kind: FleetConfig\nproviders:\n  - {name: local, type: file, kubeconfig: ' +
        join(dir, 'a.kubeconfig') +
        '}\n  - {name: lab, type: kind}\n',
    );
    const res = await runFleet(['clusters', 'list', '-o', 'json'], {
      cwd: d,
      env: { ...named, PATH: '/usr/bin:/bin' },
    });
    assert.equal(res.code, 1);
    const [local, lab] = res.json().items;
    assert.equal(local.ready, true);
    assert.deepEqual([lab.name, lab.ready, lab.source], ['lab', false, { kind: 'provider', name: 'lab' }]);
    assert.match(lab.reason, /^cannot list clusters: kind provider "lab": the "kind" command was not found on PATH/);
    const table = await runFleet(['clusters', 'list', '-o', 'name'], {
      cwd: d,
      env: { ...named, PATH: '/usr/bin:/bin' },
    });
    assert.equal(table.code, 1);
    assert.equal(table.stderr, `error: ${lab.reason}\n`);
  });

  it('--fleet-config and FLEET_CONFIG name the file; errors are one line with exit 2', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fleet-providers-cli-'));
    const viaFlag = await runFleet(['clusters', 'list', '--fleet-config', join(dir, 'fleet.yaml'), '-o', 'name'], {
      cwd: elsewhere,
      env,
    });
    assert.equal(viaFlag.stdout.split('\n')[1], 'lab#lab');
    const viaEnv = await runFleet(['clusters', 'list', '-o', 'name'], {
      cwd: elsewhere,
      env: { ...env, FLEET_CONFIG: join(dir, 'fleet.yaml') },
    });
    assert.equal(viaEnv.stdout, viaFlag.stdout);

    await writeFile(
      join(elsewhere, 'fleet.yaml'),
      'kind: FleetConfig\nproviders:\n  - {type: cluster-api, hub: {contxt: x}}\n',
    );
    const bad = await runFleet(['clusters', 'list'], { cwd: elsewhere, env });
    assert.deepEqual(
      [bad.code, bad.stdout, bad.stderr],
      [
        2,
        '',
        `error: ${join(elsewhere, 'fleet.yaml')}: providers[0].hub.contxt: unknown field (did you mean "context"?)\n`,
      ],
    );
    const badJson = await runFleet(['clusters', 'list', '-o', 'json'], { cwd: elsewhere, env });
    assert.equal(badJson.json().error.kind, 'config');

    const missing = await runFleet(['clusters', 'list', '--fleet-config', 'nope.yaml'], { cwd: elsewhere, env });
    assert.deepEqual([missing.code, missing.stderr], [2, 'error: --fleet-config: nope.yaml: no such file\n']);
    const unknown = await runFleet(['clusters', 'list', '--provider', 'prod'], { cwd: dir, env: named });
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /^error: --provider: no provider "prod"; .*fleet.yaml names "local", "lab"; provider types: file, kubeconfig, cluster-api, cluster-inventory, namespace, kind, kcp, exec, argocd\n$/,
    );
  });
});
