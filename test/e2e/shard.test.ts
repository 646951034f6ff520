// Sharding a fleet-wide run over the Pods of an Indexed Job (issue 23): COUNT runs with --shard INDEX/COUNT, or with
// JOB_COMPLETION_INDEX and --shard-count / FLEET_SHARD_COUNT as an Indexed Job sets them, each take a part of the
// selection; together the parts are the whole selection, with no cluster (or credential Secret) in two. Real clusters:
// nine contexts over the sandbox's three API servers, and credential Secrets creds generate wrote on the hub.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliResult, runFleet } from '../support/cli.js';
import {
  applyYaml,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';
import { junitCases } from '../support/junit.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const servers = [cp.hub, ...cp.members];
const run = uniqueName('shard');
const hubNs = `${run}-hub`;
const memberNs = `${run}-sys`;
let dir: string;
let fleetDir: string;
const outputs: CliResult[] = [];
const tokens: string[] = [];

async function fleet(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const res = await runFleet(args, { env, timeoutMs: 120_000 });
  outputs.push(res);
  return res;
}
const names = (res: CliResult): string[] => (res.json().items as Array<{ cluster: string }>).map((i) => i.cluster);

before(() => {
  dir = join(scratchDir(), run);
  fleetDir = join(dir, 'fleet');
  mkdirSync(fleetDir, { recursive: true });
  // Nine clusters: three static-token users on each API server, one kubeconfig file each.
  for (const s of servers) {
    for (const u of s.tokenUsers.slice(0, 3)) {
      tokens.push(u.token);
      writeKubeconfig({
        path: join(fleetDir, `${u.name}-${s.name}.kubeconfig`),
        server: s.url,
        caFile: s.caFile,
        context: `${u.name}@${s.name}`,
        user: { token: u.token },
      });
    }
  }
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', memberNs, '--wait=false']);
  // No token of the clusters used here, and no credential made here, in anything fleet printed.
  for (const res of outputs)
    for (const t of tokens)
      assert.ok(!res.stdout.includes(t) && !res.stderr.includes(t), "a token appeared in fleet's output");
});

describe('--shard over the clusters of a selection', { concurrency: false }, () => {
  it('auth whoami --all: three shards are disjoint and together the whole selection; each says its part on stderr', async () => {
    const whole = await fleet(['auth', 'whoami', '--all', '--kubeconfig', fleetDir, '-o', 'json']);
    assert.equal(whole.code, 0, whole.stderr);
    const all = names(whole).sort();
    assert.equal(all.length, 9);
    const parts: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fleet(['auth', 'whoami', '--all', '--kubeconfig', fleetDir, '-o', 'json', '--shard', `${i}/3`]);
      assert.equal(res.code, 0, res.stderr);
      parts.push(names(res));
      assert.match(res.stderr, new RegExp(`^shard ${i}/3: ${parts[i].length} of the 9 selected clusters`, 'm'));
      // Each item is the real answer of that cluster (the user of the context's token).
      for (const item of res.json().items as Array<{ cluster: string; user: { username: string } }>)
        assert.equal(item.user.username, item.cluster.split('+')[1].split('@')[0]);
    }
    const union = parts.flat();
    assert.equal(union.length, new Set(union).size, `a cluster in two shards: ${JSON.stringify(parts)}`);
    assert.deepEqual(union.sort(), all);
    // The same part every time (it depends on the cluster's name alone), and in the Indexed Job's way of saying it.
    for (let i = 0; i < 3; i++) {
      const viaJob = await fleet(['auth', 'whoami', '--all', '--kubeconfig', fleetDir, '-o', 'json'], {
        JOB_COMPLETION_INDEX: String(i),
        FLEET_SHARD_COUNT: '3',
      });
      assert.equal(viaJob.code, 0, viaJob.stderr);
      assert.deepEqual(names(viaJob), parts[i]);
      const viaFlag = await fleet(
        ['auth', 'whoami', '--all', '--kubeconfig', fleetDir, '-o', 'json', '--shard-count', '3'],
        { JOB_COMPLETION_INDEX: String(i) },
      );
      assert.deepEqual(names(viaFlag), parts[i]);
    }
  });

  it('clusters verify in an Indexed Job of 4: one JUnit file per shard, whose test suites together are every cluster once; -l selects before sharding', async () => {
    const suites: string[] = [];
    for (let i = 0; i < 4; i++) {
      const junit = join(dir, `verify-${i}.xml`);
      const res = await fleet(
        ['clusters', 'verify', '--all', '--kubeconfig', fleetDir, '-o', 'json', '--junit', junit],
        { JOB_COMPLETION_INDEX: String(i), FLEET_SHARD_COUNT: '4' },
      );
      assert.ok(res.code === 0 || res.code === 1, res.stderr);
      const items = names(res);
      assert.match(res.stderr, new RegExp(`^shard ${i}/4: ${items.length} of the 9 selected clusters`, 'm'));
      const inFile = [...new Set(junitCases(readFileSync(junit, 'utf8')).map((c) => c.suite))];
      assert.deepEqual(
        inFile.sort(),
        [...items].sort(),
        `shard ${i}: the JUnit file's suites are not the shard's clusters`,
      );
      suites.push(...inFile);
    }
    assert.equal(suites.length, 9);
    assert.equal(new Set(suites).size, 9);

    // A label selector first, then the shard: the parts of a smaller selection.
    const sel = `fleet.dev/context in (alice@${hub.name},bob@${hub.name},carol@${hub.name})`;
    const picked: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fleet([
        'auth',
        'whoami',
        '-l',
        sel,
        '--kubeconfig',
        fleetDir,
        '-o',
        'json',
        '--shard',
        `${i}/2`,
      ]);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, new RegExp(`^shard ${i}/2: \\d of the 3 selected clusters`, 'm'));
      picked.push(...names(res));
    }
    assert.deepEqual(picked.map((n) => n.split('+')[1]).sort(), [
      `alice@${hub.name}`,
      `bob@${hub.name}`,
      `carol@${hub.name}`,
    ]);
  });

  it('an empty shard says so and exits 0; bad shards are usage errors before any cluster is asked', async () => {
    // One cluster split 8 ways: seven Pods have nothing to do.
    const one = join(fleetDir, `alice-${hub.name}.kubeconfig`);
    let empty = 0;
    for (let i = 0; i < 8; i++) {
      const res = await fleet(['auth', 'whoami', '--all', '--kubeconfig', one, '-o', 'json', '--shard', `${i}/8`]);
      assert.equal(res.code, 0, res.stderr);
      if (res.json().items.length === 0) {
        empty++;
        assert.match(res.stderr, new RegExp(`shard ${i}/8: 0 of the 1 selected cluster: nothing to do in this shard`));
      }
    }
    assert.equal(empty, 7);
    for (const [args, env, message] of [
      [['--shard', '3/3'], {}, /--shard 3\/3: the index counts from 0 and must be under the count \(0\.\.2\)/],
      [['--shard', '1/0'], {}, /--shard 1\/0: the count must be at least 1/],
      [['--shard', 'two'], {}, /--shard two: expected INDEX\/COUNT/],
      [
        ['--shard-count', '3'],
        {},
        /--shard-count 3: no shard index; run in an Indexed Job \(JOB_COMPLETION_INDEX\) or pass --shard INDEX\/3/,
      ],
      [
        [],
        { FLEET_SHARD_COUNT: '2', JOB_COMPLETION_INDEX: '5' },
        /JOB_COMPLETION_INDEX=5 with --shard-count 2: the index counts from 0/,
      ],
      [['--shard', '0/2', '--shard-count', '3'], {}, /disagree on the count/],
    ] as Array<[string[], NodeJS.ProcessEnv, RegExp]>) {
      const res = await fleet(
        ['auth', 'whoami', '--all', '--kubeconfig', fleetDir, '--request-timeout', '1s', ...args],
        env,
      );
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.equal(res.stdout, '');
    }
  });
});

describe('creds rotate --all --shard', { concurrency: false }, () => {
  it("splits the hub's credential Secrets by NAMESPACE/NAME: disjoint parts whose union holds every Secret", async () => {
    await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fleet([
        'creds',
        'generate',
        '--kubeconfig',
        m1.kubeconfig,
        '--cluster',
        m1.context,
        '--hub-kubeconfig',
        hub.kubeconfig,
        '--service-account',
        `${memberNs}/sa-${i}`,
        '--role',
        'view',
        '--create-namespace',
        '--duration',
        '2h',
        '--secret',
        `${hubNs}/member-${i}`,
        '--format',
        'multicluster-runtime',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      made.push(`${hubNs}/member-${i}`);
    }
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fleet([
        'creds',
        'rotate',
        '--all',
        '--dry-run',
        '--kubeconfig',
        m1.kubeconfig,
        '--hub-kubeconfig',
        hub.kubeconfig,
        '-o',
        'json',
        '--shard',
        `${i}/3`,
      ]);
      assert.equal(res.code, 0, res.stderr);
      const report = res.json();
      assert.deepEqual({ index: report.shard.index, count: report.shard.count }, { index: i, count: 3 });
      const here = (report.items as Array<{ secret: { namespace: string; name: string } }>).map(
        (x) => `${x.secret.namespace}/${x.secret.name}`,
      );
      assert.match(
        res.stderr,
        new RegExp(`^shard ${i}/3: ${here.length} of the ${report.shard.selected} credential Secrets`, 'm'),
      );
      seen.push(...here);
    }
    assert.equal(seen.length, new Set(seen).size, 'a Secret in two shards');
    for (const m of made) assert.ok(seen.includes(m), `${m} is in no shard`);

    const named = await fleet(['creds', 'rotate', made[0], '--shard', '0/2', '--hub-kubeconfig', hub.kubeconfig]);
    assert.equal(named.code, 2);
    assert.match(named.stderr, /--shard splits --all/);
  });
});
