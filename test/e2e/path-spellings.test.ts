// The same kubeconfig path in every spelling a user types, with kubectl (not fleet) as the oracle for which file a
// spelling names: relative, absolute, `./`, through a link to the file, and `dir/..` where `dir` is a link to a
// directory elsewhere, which the kernel follows and Node's path.resolve does not (fleet read the kube.yaml of the working
// directory, kubectl the one beside the link's target). Each spelling goes through --kubeconfig, KUBECONFIG and a
// fleet configuration's file provider; `creds generate --out` writes where the kernel puts the spelling. HOME is an
// empty directory and nothing else names a kubeconfig.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliResult, cleanEnv, runFleet } from '../support/cli.js';
import { kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const [m1, m2] = cp.members;
const run = uniqueName('spell');
let root = '';
let work = '';
let home = '';

async function fleet(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runFleet(args, { cwd: work, env: cleanEnv(home, env), timeoutMs: 120_000 });
}

/** The server of the current context as kubectl reads the spelling (the oracle). */
function kubectlServer(spelling: string): string {
  return execFileSync(
    cp.binaries.kubectl,
    ['--kubeconfig', spelling, 'config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'],
    { cwd: work, env: { HOME: home, PATH: process.env.PATH }, encoding: 'utf8' },
  );
}

describe('a kubeconfig path in every spelling names the file kubectl reads', () => {
  before(() => {
    mkdirSync(join(scratchDir(), run));
    root = realpathSync(join(scratchDir(), run));
    work = join(root, 'work');
    home = join(root, 'home');
    for (const d of [work, home, join(root, 'elsewhere', 'deep')]) mkdirSync(d, { recursive: true });
    // work/kube.yaml is member-2; elsewhere/kube.yaml (beside the link's target) is member-1.
    writeFileSync(join(work, 'kube.yaml'), readFileSync(m2.kubeconfig), { mode: 0o600 });
    writeFileSync(join(root, 'elsewhere', 'kube.yaml'), readFileSync(m1.kubeconfig), { mode: 0o600 });
    symlinkSync(join(root, 'elsewhere', 'deep'), join(work, 'link'));
    symlinkSync(join(root, 'elsewhere', 'kube.yaml'), join(work, 'file-link.yaml'));
  });
  after(async () => {
    await kubectlResult(m1, ['delete', 'namespace', `${run}-sys`, '--wait=false']);
  });

  const spellings = () => [
    'kube.yaml',
    './kube.yaml',
    join(work, 'kube.yaml'),
    'file-link.yaml',
    'link/../kube.yaml',
    `${work}/link/../kube.yaml`,
  ];

  it('--kubeconfig, KUBECONFIG and a fleet.yaml file provider: the same server as kubectl for each spelling', async () => {
    const seen = new Set<string>();
    for (const s of spellings()) {
      const want = kubectlServer(s);
      seen.add(want);
      const viaFlag = await fleet(['clusters', 'list', '--kubeconfig', s, '-o', 'json']);
      assert.equal(viaFlag.code, 0, `${s}: ${viaFlag.stderr}`);
      const current = (JSON.parse(viaFlag.stdout) as { items: Array<{ server?: string; current?: boolean }> }).items;
      assert.deepEqual(
        current.map((c) => c.server),
        [want],
        `--kubeconfig ${s}: fleet read another file than kubectl`,
      );
      const viaEnv = await fleet(['clusters', 'list', '-o', 'json'], { KUBECONFIG: s });
      assert.equal(viaEnv.code, 0, `${s}: ${viaEnv.stderr}`);
      assert.deepEqual(
        (JSON.parse(viaEnv.stdout) as { items: Array<{ server?: string }> }).items.map((c) => c.server),
        [want],
        `KUBECONFIG=${s}: fleet read another file than kubectl`,
      );
      const config = join(work, `fleet-${seen.size}.yaml`);
      writeFileSync(
        config,
        `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: f, type: file, kubeconfig: [${JSON.stringify(s)}]}\n`,
      );
      const viaConfig = await fleet(['clusters', 'list', '--fleet-config', config, '-o', 'json']);
      assert.equal(viaConfig.code, 0, `${s}: ${viaConfig.stderr}`);
      assert.deepEqual(
        (JSON.parse(viaConfig.stdout) as { items: Array<{ server?: string }> }).items.map((c) => c.server),
        [want],
        `fleet.yaml naming ${s}: fleet read another file than kubectl`,
      );
    }
    // The corpus reaches both files, so a fleet that always read one of them would fail.
    assert.deepEqual([...seen].sort(), [m1.url, m2.url].sort());
  });

  it('creds generate --out link/../out.kubeconfig writes where the kernel puts it, not beside the working directory', async () => {
    const res = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      'link/../kube.yaml',
      '-c',
      'member-1',
      '--service-account',
      `${run}-sys/reader`,
      '--create-namespace',
      '--role',
      'view',
      '-n',
      `${run}-sys`,
      '--duration',
      '1h',
      '--out',
      'link/../out.kubeconfig',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const written = join(root, 'elsewhere', 'out.kubeconfig');
    assert.ok(existsSync(written), 'the file is not beside the link target');
    assert.equal(statSync(written).mode & 0o777, 0o600);
    assert.ok(!existsSync(join(work, 'out.kubeconfig')), 'the file was written beside the working directory');
    assert.equal(kubectlServer('link/../out.kubeconfig'), m1.url);
  });
});
