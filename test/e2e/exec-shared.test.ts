// One exec credential runner per command: when the hub's credential is also the members' (the namespace provider), the
// plugin runs once for listing the hub and asking every member, not once per role.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { runFleet } from '../support/cli.js';
import { applyYaml, kubeconfigFor, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const member = cp.members[0];
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

describe('exec credentials shared across a command', () => {
  it('the namespace provider lists the hub and asks each namespace with one plugin run', async () => {
    const label = uniqueName('shared');
    const namespaces = [uniqueName('ns-a'), uniqueName('ns-b'), uniqueName('ns-c')];
    await applyYaml(
      member,
      namespaces
        .map((n) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${n}, labels: {${label}: "true"}}\n`)
        .join('---\n'),
    );
    await grant(member, {
      name: uniqueName('ns-reader'),
      subject: { kind: 'User', name: 'dave' },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'get'] }],
    });
    const count = join(scratchDir(), `${uniqueName('count')}.txt`);
    const path = kubeconfigFor(member, {
      exec: {
        command: process.execPath,
        args: [PLUGIN, '--count', count, '--tokens', tokenUser(member, 'dave').token, '--sleep', '100'],
      },
    });
    const res = await runFleet([
      'auth',
      'whoami',
      '--provider',
      'namespace',
      '--kubeconfig',
      path,
      '-l',
      `${label}=true`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<WhoAmIList>().items;
    assert.deepEqual(items.map((i) => i.cluster).sort(), [...namespaces].sort());
    assert.ok(items.every((i) => i.user?.username === 'dave'));
    assert.equal(
      readFileSync(count, 'utf8').trim().split('\n').length,
      1,
      'one plugin run for the hub listing and all members',
    );
  });

  it('clusters list --live reads every member through the same runner that listed the hub', async () => {
    const label = uniqueName('live');
    const namespaces = [uniqueName('ns-a'), uniqueName('ns-b')];
    await applyYaml(
      member,
      namespaces
        .map((n) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${n}, labels: {${label}: "true"}}\n`)
        .join('---\n'),
    );
    await grant(member, {
      name: uniqueName('ns-reader'),
      subject: { kind: 'User', name: 'dave' },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'get'] }],
    });
    const dir = scratchDir();
    const count = join(dir, `${uniqueName('count')}.txt`);
    const path = kubeconfigFor(member, {
      exec: {
        command: process.execPath,
        args: [PLUGIN, '--count', count, '--tokens', tokenUser(member, 'dave').token, '--sleep', '100'],
      },
    });
    const fleetYaml = join(dir, `${uniqueName('fleet')}.yaml`);
    writeFileSync(
      fleetYaml,
      `providers:\n  - {name: tenants, type: namespace, hub: {kubeconfig: ${path}}, selector: ${label}=true}\n`,
    );
    const res = await runFleet(['clusters', 'list', '--fleet-config', fleetYaml, '--live', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const items = res.json<ClusterList>().items;
    assert.deepEqual(items.map((i) => [i.name, i.ready]).sort(), namespaces.map((n) => [n, true]).sort());
    // dave may read namespaces, so --live really asked each member for its id (the kube-system namespace UID).
    assert.ok(
      items.every((i) => i.clusterId !== undefined),
      JSON.stringify(items),
    );
    assert.equal(
      readFileSync(count, 'utf8').trim().split('\n').length,
      1,
      'one plugin run for the hub listing and --live',
    );
  });
});
