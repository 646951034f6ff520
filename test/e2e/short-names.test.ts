// Issue 41: file-provider names are `<absolute path>+<context>` and were printed whole in every table, so `clusters list
// -o wide` ran past 200 columns with the file's path twice in a row (NAME and SOURCE). Tables now show the short name the
// same listing accepts back; -o json and -o name keep the full name, which is the identifier.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';
import { loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const [m1] = cp.members;

/** A directory about 100 characters long, as a CI workspace or a home on a network share has. */
function longDir(): string {
  const d = join(
    scratchDir(),
    uniqueName('short-names'),
    'platform-team-kubeconfigs-for-every-environment',
    'generated-by-the-bootstrap-pipeline',
  );
  mkdirSync(d, { recursive: true });
  return d;
}

const widest = (text: string) =>
  Math.max(
    ...text
      .trimEnd()
      .split('\n')
      .map((l) => l.length),
  );

/** The NAME (or CLUSTER) cell of each row, read at the header's column. */
function column(table: string, header: string): string[] {
  const [head, ...rows] = table.trimEnd().split('\n');
  const at = head.indexOf(header);
  assert.ok(at >= 0, `no ${header} column in:\n${table}`);
  return rows.map((r) => r.slice(at).split(/\s+/)[0]);
}

describe('tables name file clusters by their short names (issue 41)', () => {
  it('clusters list and auth whoami stay narrow with long paths; json and name keep full names; inspect takes the shown name', async () => {
    const d = longDir();
    const hubFile = join(d, 'hub.kubeconfig');
    const memberFile = join(d, 'member.kubeconfig');
    copyFileSync(cp.hub.kubeconfig, hubFile);
    copyFileSync(m1.kubeconfig, memberFile);
    assert.ok(hubFile.length > 120, hubFile);
    const env = { KUBECONFIG: `${hubFile}:${memberFile}` };
    const full = [`${hubFile}+${cp.hub.context}`, `${memberFile}+${m1.context}`];

    const table = await runFleet(['clusters', 'list'], { env });
    assert.equal(table.code, 0, table.stderr);
    assert.ok(widest(table.stdout) < 100, `clusters list is ${widest(table.stdout)} columns:\n${table.stdout}`);
    assert.deepEqual(column(table.stdout, 'NAME'), [cp.hub.context, m1.context]);
    const whoami = await runFleet(['auth', 'whoami', '--all'], { env });
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.ok(widest(whoami.stdout) < 100, `auth whoami is ${widest(whoami.stdout)} columns:\n${whoami.stdout}`);
    assert.deepEqual(column(whoami.stdout, 'CLUSTER'), [cp.hub.context, m1.context]);

    const json = await runFleet(['clusters', 'list', '-o', 'json'], { env });
    assert.deepEqual(
      json.json<{ items: Array<{ name: string }> }>().items.map((i) => i.name),
      full,
    );
    const names = await runFleet(['clusters', 'list', '-o', 'name'], { env });
    assert.equal(names.stdout, full.map((n) => `${n}\n`).join(''));
    const yaml = await runFleet(['auth', 'whoami', '--all', '-o', 'yaml'], { env });
    for (const n of full) assert.ok(yaml.stdout.includes(`cluster: ${n}\n`), yaml.stdout);

    for (const [i, shown] of column(table.stdout, 'NAME').entries()) {
      const inspect = await runFleet(['clusters', 'inspect', shown, '-o', 'json'], { env });
      assert.equal(inspect.code, 0, inspect.stderr);
      const r = inspect.json<{ name: string; live: { ok: boolean } }>();
      assert.equal(r.name, full[i]);
      assert.equal(r.live.ok, true);
    }
  });

  it('clusters list -o wide says the file once, in SOURCE: no longer twice a row past 200 columns', async () => {
    // About 50 characters, like /home/someone/src/platform/kubeconfigs/hub.kubeconfig. The other wide columns take
    // about 140 (SERVER, EXPIRES with its age, empty NAMESPACE and REASON), so the file said once is what fits in 200.
    const d = join(scratchDir(), uniqueName('sn'));
    mkdirSync(d, { recursive: true });
    const hubFile = join(d, 'hub.kubeconfig');
    const memberFile = join(d, 'member.kubeconfig');
    copyFileSync(cp.hub.kubeconfig, hubFile);
    copyFileSync(m1.kubeconfig, memberFile);
    const wide = await runFleet(['clusters', 'list', '-o', 'wide'], {
      env: { KUBECONFIG: `${hubFile}:${memberFile}` },
    });
    assert.equal(wide.code, 0, wide.stderr);
    assert.ok(widest(wide.stdout) < 200, `-o wide is ${widest(wide.stdout)} columns:\n${wide.stdout}`);
    assert.deepEqual(column(wide.stdout, 'NAME'), [cp.hub.context, m1.context]);
    assert.deepEqual(column(wide.stdout, 'SOURCE'), [hubFile, memberFile]);
    for (const line of wide.stdout.trimEnd().split('\n').slice(1)) assert.equal(line.split(d).length, 2, line);
  });

  it('two files with the same context name: each is shown by the end of its path only it has, accepted back by inspect and --cluster', async () => {
    const d = longDir();
    const files = ['east', 'west'].map((side) => {
      mkdirSync(join(d, side));
      const f = join(d, side, 'kubeconfig.yaml');
      copyFileSync(cp.hub.kubeconfig, f);
      return f;
    });
    const fleetYaml = join(d, 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: files, type: file, kubeconfig: [${join(d, 'east')}, ${join(d, 'west')}]}\n`,
    );
    const list = await runFleet(['clusters', 'list', '--fleet-config', fleetYaml]);
    assert.equal(list.code, 0, list.stderr);
    const shown = column(list.stdout, 'NAME');
    assert.deepEqual(shown, [`east/kubeconfig.yaml+${cp.hub.context}`, `west/kubeconfig.yaml+${cp.hub.context}`]);
    for (const [i, name] of shown.entries()) {
      const inspect = await runFleet(['clusters', 'inspect', name, '--fleet-config', fleetYaml, '-o', 'json']);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.equal(inspect.json<{ name: string }>().name, `${files[i]}+${cp.hub.context}`);
    }
    // The same names in the CLUSTER column of a command that runs over the fleet, and --cluster takes them back.
    const whoami = await runFleet(['auth', 'whoami', '--all', '--fleet-config', fleetYaml]);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.deepEqual(column(whoami.stdout, 'CLUSTER'), shown);
    const one = await runFleet(['auth', 'whoami', '--cluster', shown[1], '--fleet-config', fleetYaml, '-o', 'json']);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(
      one.json<{ items: Array<{ cluster: string }> }>().items.map((i) => i.cluster),
      [`${files[1]}+${cp.hub.context}`],
    );
  });
});
