// The exec provider against the real control plane (issue 39, item 4): a program the user's fleet.yaml names prints a
// ClusterList; fleet lists its clusters and reaches each one with the credential the list gives: an exec credential (a
// plugin that mints a real TokenRequest token, as `aws eks get-token` would) that runs only because fleet.yaml allows
// that command for this provider, or a kubeconfig. The same output without the allowance runs nothing; a ./fleet.yaml
// found in the working directory may not name the program at all; a failing program is one line without its stderr.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { runFleet } from '../support/cli.js';
import {
  createServiceAccountToken,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';
import { tokenRequestExecUser } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const [m1, m2] = cp.members;
const PROGRAM = fileURLToPath(new URL('../fixtures/providers/cluster-list.mjs', import.meta.url));
const run = uniqueName('execprov');
const dir = join(scratchDir(), run);
mkdirSync(dir, { recursive: true, mode: 0o700 });
const caData = (s: { caFile: string }) => readFileSync(s.caFile).toString('base64');

/** The ClusterList the program prints: member-1 through an exec credential, member-2 through a kubeconfig. */
async function clusterList(execNamespace: string): Promise<string> {
  const token = await createServiceAccountToken(m2, run, 'kc-reader');
  const kubeconfig = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'm2', cluster: { server: m2.url, 'certificate-authority-data': caData(m2) } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'm2', context: { cluster: 'm2', user: 'u' } }],
    'current-context': 'm2',
  });
  const user = tokenRequestExecUser(cp, m1, { namespace: execNamespace, serviceAccount: 'viewer' });
  if (!('exec' in user)) throw new Error('tokenRequestExecUser gave no exec user');
  const exec = user.exec;
  return JSON.stringify({
    apiVersion: 'fleet.dev/v1alpha1',
    kind: 'ClusterList',
    clusters: [
      {
        name: 'east',
        server: m1.url,
        certificateAuthorityData: caData(m1),
        labels: { env: 'prod', region: 'east' },
        exec: { command: exec.command, args: exec.args },
      },
      { name: 'west', kubeconfig, labels: { env: 'dev', region: 'west' } },
    ],
  });
}

/** The exact arguments of east's credential (node and a script: an interpreter runs for data only with these). */
const eastArgs = (execNamespace: string): string[] => {
  const user = tokenRequestExecUser(cp, m1, { namespace: execNamespace, serviceAccount: 'viewer' });
  if (!('exec' in user)) throw new Error('tokenRequestExecUser gave no exec user');
  return user.exec.args ?? [];
};

/** `allow`: the arguments node is allowed with for hub data, or 'command' for an entry that names node alone. */
function fleetYaml(name: string, o: { listFile: string; counter: string; allow?: string[] | 'command' }): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'apiVersion: fleet/v1alpha1',
      'kind: FleetConfig',
      'providers:',
      '  - name: inventory',
      '    type: exec',
      `    command: ${PROGRAM}`,
      `    args: [--count, ${o.counter}, ${o.listFile}]`,
      '    timeout: 30s',
      ...(o.allow === 'command' ? [`    credentialPluginAllowlist: [{command: ${process.execPath}}]`] : []),
      ...(Array.isArray(o.allow)
        ? [`    credentialPluginAllowlist: [${JSON.stringify({ command: process.execPath, args: o.allow })}]`]
        : []),
      '',
    ].join('\n'),
  );
  return path;
}

describe('exec provider (issue 39, item 4)', () => {
  it('lists the clusters the program prints, with their labels, and reaches each one with the credential it gives', async () => {
    const execNs = `${run}-ok`;
    const listFile = join(dir, 'ok.json');
    writeFileSync(listFile, await clusterList(execNs));
    const counter = join(dir, 'ok.runs');
    const config = fleetYaml('ok.yaml', { listFile, counter, allow: eastArgs(execNs) });

    const list = await runFleet(['clusters', 'list', '--fleet-config', config, '-o', 'json']);
    assert.equal(list.code, 0, list.stderr);
    const items = list.json<ClusterList>().items;
    assert.deepEqual(
      items.map((c) => [c.name, c.ready, c.server, c.auth, c.labels.env, c.labels.region]),
      [
        ['east', true, m1.url, 'exec', 'prod', 'east'],
        ['west', true, m2.url, 'token', 'dev', 'west'],
      ],
    );

    const who = await runFleet(['auth', 'whoami', '--fleet-config', config, '--all', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(
      who
        .json<WhoAmIList>()
        .items.map((i) => [i.cluster, i.ok, i.user?.username])
        .sort(),
      [
        ['east', true, `system:serviceaccount:${execNs}:viewer`],
        ['west', true, `system:serviceaccount:${run}:kc-reader`],
      ],
    );
    // -l selects by the labels the program gave, as for any provider.
    const prod = await runFleet(['auth', 'whoami', '--fleet-config', config, '-l', 'env=prod', '-o', 'json']);
    assert.equal(prod.code, 0, prod.stderr);
    assert.deepEqual(
      prod.json<WhoAmIList>().items.map((i) => i.cluster),
      ['east'],
    );
    // Once per command: the listing is cached for the run (three commands above, three runs).
    assert.equal(readFileSync(counter, 'utf8'), 'ran\n'.repeat(3));
    const inspect = await runFleet(['clusters', 'inspect', 'east', '--fleet-config', config, '--offline']);
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.match(inspect.stdout, /^Source +exec .*cluster-list\.mjs$/m);
    assert.match(inspect.stdout, /^Exec interactiveMode +Never$/m);
  });

  it('an exec credential in the output is data: without credentialPluginAllowlist it is refused and never runs', async () => {
    const execNs = `${run}-refused`;
    const listFile = join(dir, 'refused.json');
    writeFileSync(listFile, await clusterList(execNs));
    const config = fleetYaml('refused.yaml', { listFile, counter: join(dir, 'refused.runs') });

    const list = await runFleet(['clusters', 'list', '--fleet-config', config, '-o', 'json']);
    const east = list.json<ClusterList>().items.find((c) => c.name === 'east')!;
    assert.equal(east.ready, false);
    assert.equal(
      east.reason,
      `exec provider "inventory" cluster "east": exec plugin "${process.execPath}" is named by hub data, and hub data may not run programs; to allow it, add credentialPluginAllowlist: [{command: ${process.execPath}, args: [its ${eastArgs(execNs).length} arguments as exec provider "inventory" cluster "east" writes them]}] to provider "inventory" in ${config}`,
    );
    const who = await runFleet(['auth', 'whoami', '--fleet-config', config, '--all', '-o', 'json']);
    assert.equal(who.code, 1);
    const items = who.json<WhoAmIList>().items;
    assert.equal(items.find((i) => i.cluster === 'west')?.ok, true, 'the other cluster still answers');
    assert.equal(items.find((i) => i.cluster === 'east')?.ok, false);
    // node is a language runtime: an entry naming it alone does not let the program's output give it a script.
    const nodeOnly = fleetYaml('node-only.yaml', { listFile, counter: join(dir, 'node-only.runs'), allow: 'command' });
    const byName = await runFleet(['clusters', 'list', '--fleet-config', nodeOnly, '-o', 'json']);
    assert.equal(
      byName.json<ClusterList>().items.find((c) => c.name === 'east')?.reason,
      `exec provider "inventory" cluster "east": exec plugin "${process.execPath}" is an interpreter (a language runtime: it runs whatever its arguments say), and hub data gives it ${eastArgs(execNs).length} arguments of its own; an interpreter runs for hub data only with the exact arguments the operator allowed; to allow these, add credentialPluginAllowlist: [{command: ${process.execPath}, args: [its ${eastArgs(execNs).length} arguments as exec provider "inventory" cluster "east" writes them]}] to provider "inventory" in ${nodeOnly} (or allow the wrapper script they run instead)`,
    );
    // Arguments that differ in one word are not the ones allowed.
    const otherArgs = eastArgs(`${execNs}-x`);
    const other = fleetYaml('other-args.yaml', { listFile, counter: join(dir, 'other.runs'), allow: otherArgs });
    const byOther = await runFleet(['auth', 'whoami', '--fleet-config', other, '-c', 'east', '-o', 'json']);
    assert.equal(byOther.code, 1);
    assert.match(byOther.stderr, /is an interpreter \(a language runtime/);
    // The plugin creates its namespace when it runs: it never did.
    const ns = await kubectlResult(m1, ['get', 'namespace', execNs]);
    assert.notEqual(ns.code, 0, 'the refused plugin ran');
  });

  it('a ./fleet.yaml found in the working directory may not name the program: exit 2, nothing runs', async () => {
    const work = join(dir, 'checkout');
    mkdirSync(work, { recursive: true });
    const counter = join(dir, 'found.runs');
    writeFileSync(
      join(work, 'fleet.yaml'),
      readFileSync(fleetYaml('found.yaml', { listFile: join(dir, 'ok.json'), counter }), 'utf8'),
    );
    const res = await runFleet(['clusters', 'list'], { cwd: work });
    assert.equal(res.code, 2);
    assert.match(
      res.stderr,
      /^error: .*fleet\.yaml: providers\[0\]\.command: a fleet\.yaml found in the working directory may not name programs or files/m,
    );
    assert.equal(existsSync(counter), false, 'the program ran');
  });

  it('a failing program is one line naming it and its exit code, without what it wrote on stderr', async () => {
    const secret = `AKIA${run.replace(/[^a-z0-9]/g, '').toUpperCase()}`;
    const path = join(dir, 'fail.yaml');
    writeFileSync(path, `providers:\n  - {name: inventory, type: exec, command: ${PROGRAM}, args: [--fail]}\n`);
    for (const args of [
      ['clusters', 'list'],
      ['auth', 'whoami', '--all', '-o', 'json'],
    ]) {
      const res = await runFleet([...args, '--fleet-config', path], { env: { CLUSTER_LIST_SECRET: secret } });
      assert.equal(res.code, 1, res.stderr);
      assert.doesNotMatch(res.stdout + res.stderr, new RegExp(secret));
      assert.match(
        res.stderr,
        /exec provider "inventory" \(.*cluster-list\.mjs --fail\): exited with 3 \(its stderr is not shown, as it may hold secrets: run the program yourself to see it\)/,
      );
    }
  });
});
