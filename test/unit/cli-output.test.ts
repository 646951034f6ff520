// Output flags never drop output (issue 14, item 2): --json against -o, -o name one line per cluster for every command,
// a provider that could not list never printed as a cluster name, per-cluster errors on stderr in every format.
// Nothing here needs a cluster: unreachable servers are 127.0.0.1:1 (connection refused), providers are files and a
// kind stand-in that is missing from PATH.
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { ClusterInspection } from '../../src/commands/clusters/inspect.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { runFleet } from '../support/cli.js';

const TOKEN = 'fixture-token-output-0123456789';
const kc = (context: string, server: string) =>
  JSON.stringify({
    'current-context': context,
    clusters: [{ name: context, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: context, user: { token: `${TOKEN}-${context}` } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
  });

let dir: string;
let down: string;
let fleetDir: string;
// No kind on PATH: the "lab" provider cannot list its clusters.
const env = { PATH: '/usr/bin:/bin' };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-output-'));
  down = join(dir, 'down.kubeconfig');
  await writeFile(down, kc('down', 'https://127.0.0.1:1'));
  fleetDir = join(dir, 'fleet');
  await import('node:fs/promises').then((fs) => fs.mkdir(fleetDir));
  // Run with FLEET_CONFIG=fleet.yaml: found by itself in the working directory, a fleet.yaml may not name files.
  await writeFile(
    join(fleetDir, 'fleet.yaml'),
    `kind: FleetConfig\nproviders:\n  - {name: local, type: file, kubeconfig: ${down}}\n  - {name: lab, type: kind}\n`,
  );
});

const noSecret = (text: string) => assert.ok(!text.includes(TOKEN), 'no token in output');

describe('--json and -o: the later flag wins, consistently; never empty output', () => {
  it('prints the format named last, for results and for errors', async () => {
    const yamlLast = await runFleet(['clusters', 'list', '--kubeconfig', down, '--json', '-o', 'yaml']);
    assert.equal(yamlLast.code, 0, yamlLast.stderr);
    assert.equal((yaml.load(yamlLast.stdout) as ClusterList).kind, 'ClusterList');
    const jsonLast = await runFleet(['clusters', 'list', '--kubeconfig', down, '-o', 'yaml', '--json']);
    assert.equal(jsonLast.json<ClusterList>().kind, 'ClusterList');
    const nameLast = await runFleet(['clusters', 'list', '--kubeconfig', down, '--json', '-o', 'name']);
    assert.equal(nameLast.stdout, `${down}+down\n`);
    const tableLast = await runFleet(['clusters', 'list', '--kubeconfig', down, '--json', '-o', 'wide']);
    assert.match(tableLast.stdout, /^CURRENT\s+NAME\s+PROVIDER.*\sSOURCE\s/);
    // An error follows the same rule: the document is in the format named last.
    const err = await runFleet(['clusters', 'list', '--kubeconfig', join(dir, 'nope'), '--json', '-o', 'yaml']);
    assert.equal(err.code, 2);
    assert.equal((yaml.load(err.stdout) as { error: { kind: string } }).error.kind, 'config');
  });
});

describe('-o name: exactly one line per cluster', () => {
  it('clusters inspect prints the one cluster once', async () => {
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', down, '--offline', '-o', 'name']);
    assert.deepEqual([res.code, res.stdout, res.stderr], [0, `${down}+down\n`, '']);
  });

  it('clusters inspect of a cluster that does not answer: its name once, the error once on stderr, exit 1', async () => {
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', down, '-o', 'name']);
    assert.equal(res.code, 1);
    assert.equal(res.stdout, `${down}+down\n`);
    assert.match(res.stderr, new RegExp(`^error: ${down}\\+down: https://127.0.0.1:1: connection refused\\n$`));
  });

  it('a provider that cannot list is an error line, never a name', async () => {
    const res = await runFleet(['clusters', 'list', '-o', 'name'], {
      cwd: fleetDir,
      env: { ...env, FLEET_CONFIG: 'fleet.yaml' },
    });
    assert.equal(res.code, 1);
    assert.equal(res.stdout, `local#${down}+down\n`);
    assert.match(
      res.stderr,
      /^error: cannot list clusters: kind provider "lab": the "kind" command was not found on PATH[^\n]*\n$/,
    );
    const who = await runFleet(['auth', 'whoami', '--all', '-o', 'name'], {
      cwd: fleetDir,
      env: { ...env, FLEET_CONFIG: 'fleet.yaml' },
    });
    assert.equal(who.code, 1);
    assert.equal(who.stdout, '', 'no cluster answered, so no username; the failed provider is not a name either');
  });
});

describe('per-cluster errors: one stderr line each in every format, and in the JSON/YAML document', () => {
  for (const format of ['table', 'wide', 'json', 'yaml', 'name']) {
    it(`auth whoami -o ${format}`, async () => {
      const res = await runFleet(['auth', 'whoami', '--kubeconfig', down, '-o', format]);
      assert.equal(res.code, 1);
      const lines = res.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, res.stderr);
      assert.equal(lines[0], `error: ${down}+down: https://127.0.0.1:1: connection refused`);
      if (format === 'json' || format === 'yaml') {
        const doc = (format === 'json' ? res.json() : yaml.load(res.stdout)) as WhoAmIList;
        assert.deepEqual(doc.items[0].error, {
          kind: 'unreachable',
          message: 'https://127.0.0.1:1: connection refused',
        });
      }
      noSecret(res.stdout + res.stderr);
    });
  }

  it('clusters inspect -o json keeps the error in live and says it on stderr', async () => {
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', down, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.equal(res.json<ClusterInspection>().live?.error?.kind, 'unreachable');
    assert.equal(res.stderr, `error: ${down}+down: https://127.0.0.1:1: connection refused\n`);
  });

  it('a provider that cannot list: a row in the document, a line on stderr, exit 1, in JSON too', async () => {
    const res = await runFleet(['clusters', 'list', '-o', 'json'], {
      cwd: fleetDir,
      env: { ...env, FLEET_CONFIG: 'fleet.yaml' },
    });
    assert.equal(res.code, 1);
    const items = res.json<ClusterList>().items;
    assert.deepEqual(
      items.map((i) => [i.name, i.ready]),
      [
        [`local#${down}+down`, true],
        ['lab', false],
      ],
    );
    assert.equal(res.stderr, `error: ${items[1].reason}\n`);
    const who = await runFleet(['auth', 'whoami', '--all', '-o', 'json'], {
      cwd: fleetDir,
      env: { ...env, FLEET_CONFIG: 'fleet.yaml' },
    });
    const whoItems = who.json<WhoAmIList>().items;
    assert.deepEqual(
      whoItems.map((i) => [i.cluster, i.ok, i.error?.kind]),
      [
        [`local#${down}+down`, false, 'unreachable'],
        ['lab', false, 'config'],
      ],
    );
    assert.equal(who.stderr.trimEnd().split('\n').length, 2, who.stderr);
    assert.match(
      who.stderr,
      /\nerror: lab: cannot list clusters: kind provider "lab": the "kind" command was not found on PATH/,
    );
  });
});
