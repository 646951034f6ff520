// fleet auth diff against the real control plane: one identity (a client certificate every apiserver trusts) holds RBAC
// written three ways on the hub and the two members; the hub and member-1 grant the same thing spelled differently,
// member-2 grants more and less. The exact differences, the exit codes, --baseline, -n, a hub-backed provider and the
// JSON shape are checked.
import assert from 'node:assert/strict';
import { readFileSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';

import yaml from 'js-yaml';

import type { NormalRule } from '../../src/access/diff.js';
import type { RulesDiff } from '../../src/commands/auth/diff.js';
import { type CliResult, runFleet } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  kubeconfigFor,
  loadControlPlane,
  scratchDir,
  uniqueName,
} from '../support/fixture.js';
import { kubeconfigObject } from '../support/kubeconfig.js';
import { closedPort } from '../support/net.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const [m1, m2] = cp.members;
const user = uniqueName('differ');
const ns = uniqueName('diff');
let cert: { certFile: string; keyFile: string };
let files: { hub: string; m1: string; m2: string };
let names: { hub: string; m1: string; m2: string };
let secrets: string[];
const subject = { kind: 'User' as const, name: user };

const rule = (resource: string, verbs: string[], resourceNames: string[] = [], scope = 'namespace'): NormalRule => ({
  scope: scope as NormalRule['scope'],
  apiGroup: '',
  resource,
  resourceNames,
  verbs,
});
const none = { rules: [], nonResourceRules: [] };

function noSecrets(...results: CliResult[]): void {
  for (const r of results)
    for (const s of secrets) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), 'a client key was printed');
}

function diff(res: CliResult): RulesDiff {
  const out = res.json<RulesDiff>();
  assert.equal(out.kind, 'RulesDiff');
  return out;
}

const all = () => ['--all', '--kubeconfig', [files.hub, files.m1, files.m2].join(':')];

before(async () => {
  const c = await createCertUser(cp.hub, { user });
  cert = { certFile: c.certFile, keyFile: c.keyFile };
  const key = readFileSync(c.keyFile, 'utf8');
  secrets = [key.split('\n').slice(1, -2).join(''), Buffer.from(key).toString('base64').slice(0, 60)];
  for (const server of [cp.hub, m1, m2])
    await applyYaml(server, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  // The hub: a Role in the namespace, a ClusterRole bound cluster-wide.
  await grant(cp.hub, {
    name: `${user}-ns`,
    namespace: ns,
    subject,
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
    ],
  });
  await grant(cp.hub, {
    name: `${user}-wide`,
    subject,
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }],
  });
  // member-1: the same grants written differently (split, repeated, reordered; two Roles).
  await grant(m1, {
    name: `${user}-ns`,
    namespace: ns,
    subject,
    rules: [
      { apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'get'] },
    ],
  });
  await grant(m1, {
    name: `${user}-ns2`,
    namespace: ns,
    subject,
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
  });
  await grant(m1, {
    name: `${user}-wide`,
    subject,
    rules: [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    ],
  });
  // member-2: every verb on pods, one named Secret, no ConfigMaps; the same cluster-wide grant.
  await grant(m2, {
    name: `${user}-ns`,
    namespace: ns,
    subject,
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['*'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['s1'] },
    ],
  });
  await grant(m2, {
    name: `${user}-wide`,
    subject,
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }],
  });
  // Each kubeconfig's context is in the namespace, so the default -n is it.
  files = {
    hub: kubeconfigFor(cp.hub, cert, { name: user, namespace: ns }),
    m1: kubeconfigFor(m1, cert, { name: user, namespace: ns }),
    m2: kubeconfigFor(m2, cert, { name: user, namespace: ns }),
  };
  names = {
    hub: `${files.hub}+${user}@hub`,
    m1: `${files.m1}+${user}@${m1.name}`,
    m2: `${files.m2}+${user}@${m2.name}`,
  };
});

describe('fleet auth diff (live)', () => {
  it('each cluster against the others: exact grants only member-2 has, and those it lacks; equivalent RBAC is equal', async () => {
    const res = await runFleet(['auth', 'diff', ...all(), '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = diff(res);
    assert.deepEqual(Object.keys(out).sort(), ['baseline', 'complete', 'drift', 'items', 'kind']);
    assert.deepEqual([out.baseline, out.drift, out.complete], [null, true, true]);
    const [hub, one, two] = out.items;
    assert.deepEqual([hub.cluster, one.cluster, two.cluster], [names.hub, names.m1, names.m2]);
    for (const item of out.items) {
      assert.deepEqual(Object.keys(item).sort(), [
        'cluster',
        'extra',
        'incomplete',
        'missing',
        'namespace',
        'nonResourceRules',
        'ok',
        'rules',
      ]);
      assert.deepEqual([item.ok, item.namespace, item.incomplete], [true, ns, false]);
      assert.ok(
        item.rules!.some((r) => r.scope === 'cluster' && r.resource === 'namespaces' && r.verbs.join() === 'get'),
        `${item.cluster}: the ClusterRoleBinding's grant is cluster-wide`,
      );
      assert.ok(
        item.nonResourceRules!.some((r) => r.url === '/version'),
        'the basic non-resource rules are there',
      );
    }
    // The hub's and member-1's rules, written differently, normalise to the same.
    assert.deepEqual(one.rules, hub.rules);
    assert.deepEqual(one.nonResourceRules, hub.nonResourceRules);
    assert.deepEqual(
      hub.rules!.filter((r) => r.scope === 'namespace'),
      [rule('configmaps', ['get']), rule('pods', ['get', 'list'])],
    );
    assert.deepEqual(
      two.rules!.filter((r) => r.scope === 'namespace'),
      [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
    );

    // Compared with the majority (issue 41): the hub and member-1 grant the same, so member-2 is the odd one out and the
    // only cluster with differences; the two that agree list nothing (they used to list member-2's grants as missing).
    for (const item of [hub, one]) assert.deepEqual([item.extra, item.missing], [none, none]);
    // member-2's "*" on pods covers get and list: only "*" is extra, not get/list.
    assert.deepEqual(two.extra, {
      rules: [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
      nonResourceRules: [],
    });
    assert.deepEqual(two.missing, { rules: [rule('configmaps', ['get'])], nonResourceRules: [] });

    const strict = await runFleet(['auth', 'diff', ...all(), '--fail-on-drift']);
    // A table names a file's cluster by its context when no other listed cluster has that name (issue 41).
    const shown = { m2: `${user}@${m2.name}` };
    assert.equal(strict.code, 1, 'drift fails --fail-on-drift');
    assert.match(strict.stdout, /^CLUSTER\s+DIFF\s+SCOPE\s+RESOURCE\s+RESOURCE NAMES\s+VERBS$/m);
    const esc = (s: string) => s.replace(/[.+*?[\]()]/g, '\\$&');
    assert.match(
      strict.stdout,
      new RegExp(`^${esc(shown.m2)}\\s+\\+\\s+namespace\\s+secrets\\s+\\[s1\\]\\s+\\[get\\]$`, 'm'),
    );
    assert.match(
      strict.stdout,
      new RegExp(`^${esc(shown.m2)}\\s+-\\s+namespace\\s+configmaps\\s+\\[\\]\\s+\\[get\\]$`, 'm'),
    );
    assert.match(
      strict.stdout,
      new RegExp(`^${esc(shown.m2)}\\s+\\+\\s+namespace\\s+pods\\s+\\[\\]\\s+\\[\\*\\]$`, 'm'),
    );
    assert.equal(
      strict.stdout.trim().split('\n').length,
      1 + 3,
      'three rows for the one cluster that differs, nothing else',
    );
    assert.match(
      strict.stderr,
      new RegExp(`^drift: ${esc(names.m2)} differs from the other 2 \\(3 clusters compared with each other\\)$`, 'm'),
    );
    const name = await runFleet(['auth', 'diff', ...all(), '-o', 'name']);
    assert.deepEqual([name.code, name.stdout], [0, `${names.m2}\n`], '-o name: the one cluster that differs');
    noSecrets(res, strict, name);
  });

  it('two clusters that grant the same: no drift, --fail-on-drift exits 0; -o name lists nobody', async () => {
    const args = [
      'auth',
      'diff',
      '-c',
      names.hub,
      '-c',
      names.m1,
      '--kubeconfig',
      [files.hub, files.m1].join(':'),
      '--fail-on-drift',
    ];
    const res = await runFleet([...args, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = diff(res);
    assert.deepEqual([out.drift, out.complete], [false, true]);
    for (const item of out.items) assert.deepEqual([item.extra, item.missing], [none, none]);
    const table = await runFleet(args);
    assert.equal(table.code, 0);
    assert.equal(table.stdout, '');
    assert.equal(table.stderr, 'no drift: 2 clusters compared with each other grant the same\n');
    const name = await runFleet([...args, '-o', 'name']);
    assert.deepEqual([name.code, name.stdout], [0, '']);
    noSecrets(res, table, name);
  });

  it('--baseline: every cluster against one; -o name is the clusters that differ from it', async () => {
    const res = await runFleet(['auth', 'diff', ...all(), '--baseline', names.hub, '--fail-on-drift', '-o', 'json']);
    assert.equal(res.code, 1, 'member-2 differs from the baseline');
    const out = diff(res);
    assert.deepEqual([out.baseline, out.drift], [names.hub, true]);
    const [hub, one, two] = out.items;
    assert.deepEqual([hub.extra, hub.missing, one.extra, one.missing], [none, none, none, none]);
    assert.deepEqual(two.extra, {
      rules: [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
      nonResourceRules: [],
    });
    assert.deepEqual(two.missing, { rules: [rule('configmaps', ['get'])], nonResourceRules: [] });
    const name = await runFleet(['auth', 'diff', ...all(), '--baseline', names.hub, '-o', 'name']);
    assert.deepEqual([name.code, name.stdout], [0, `${names.m2}\n`]);

    // Against member-2: the hub has configmaps it lacks, and lacks what it has extra.
    const other = diff(await runFleet(['auth', 'diff', ...all(), '--baseline', names.m2, '-o', 'json']));
    assert.deepEqual(other.items[0].extra, { rules: [rule('configmaps', ['get'])], nonResourceRules: [] });
    assert.deepEqual(other.items[0].missing, {
      rules: [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
      nonResourceRules: [],
    });
    assert.deepEqual([other.items[2].extra, other.items[2].missing], [none, none]);
    noSecrets(res, name);
  });

  it('-n: in a namespace without the Roles only the cluster-wide grants count, and they agree', async () => {
    const res = await runFleet(['auth', 'diff', ...all(), '-n', 'default', '--fail-on-drift', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = diff(res);
    assert.equal(out.drift, false);
    for (const item of out.items) {
      assert.equal(item.namespace, 'default');
      assert.deepEqual(
        item.rules!.filter((r) => r.scope === 'namespace'),
        [],
      );
    }
  });

  it('bad input is refused before any cluster is contacted: one cluster, a baseline that is not selected', async () => {
    const one = await runFleet(['auth', 'diff', '--kubeconfig', files.hub]);
    assert.equal(one.code, 2);
    assert.equal(
      one.stderr,
      `error: auth diff compares clusters: only ${names.hub} is selected (use -c NAME twice or more, --all or -l)\n`,
    );
    const notSelected = await runFleet([
      'auth',
      'diff',
      '-c',
      names.hub,
      '-c',
      names.m1,
      '--kubeconfig',
      [files.hub, files.m1, files.m2].join(':'),
      '--baseline',
      names.m2,
    ]);
    assert.equal(notSelected.code, 2);
    assert.equal(
      notSelected.stderr,
      `error: --baseline ${names.m2}: ${names.m2} is not among the selected clusters (${names.hub}, ${names.m1}); select it with -c, --all or -l\n`,
    );
    const unknown = await runFleet(['auth', 'diff', ...all(), '--baseline', 'nowhere', '-o', 'json']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: --baseline nowhere: .*nowhere.*\n$/);
    assert.equal(unknown.stdout.includes('RulesDiff'), false);
  });

  it('a cluster that does not answer: its row and exit 1; the baseline down means nothing was compared', async () => {
    const port = await closedPort();
    const down = kubeconfigFor({ ...m1, url: `https://127.0.0.1:${port}` }, cert, { name: uniqueName('down') });
    const res = await runFleet([
      'auth',
      'diff',
      '--all',
      '--kubeconfig',
      [files.hub, down, files.m1].join(':'),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1);
    const out = diff(res);
    assert.deepEqual(
      out.items.map((i) => [i.ok, i.error?.kind]),
      [
        [true, undefined],
        [false, 'unreachable'],
        [true, undefined],
      ],
    );
    assert.deepEqual([out.drift, out.complete], [false, false]);
    assert.deepEqual(Object.keys(out.items[1]).sort(), ['cluster', 'error', 'ok']);
    const downName = out.items[1].cluster;
    const baseDown = await runFleet([
      'auth',
      'diff',
      '--all',
      '--kubeconfig',
      [files.hub, down, files.m1].join(':'),
      '--baseline',
      downName,
    ]);
    assert.equal(baseDown.code, 1);
    assert.match(baseDown.stderr, /^error: the baseline .* did not answer: nothing was compared$/m);
    noSecrets(res, baseDown);
  });

  it('the same kubeconfig by KUBECONFIG, a relative path and a symlink name the same clusters with the same answer', async () => {
    const dir = scratchDir();
    const link = join(dir, `${uniqueName('link')}.kubeconfig`);
    symlinkSync(files.m2, link);
    const viaEnv = await runFleet(['auth', 'diff', '--all', '--baseline', names.hub, '-o', 'json'], {
      env: { KUBECONFIG: [files.hub, files.m1, files.m2].join(':') },
    });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.deepEqual(diff(viaEnv).items[2].extra!.rules, [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])]);
    const rel = relative(dir, files.hub);
    const mixed = await runFleet(
      [
        'auth',
        'diff',
        '--all',
        '--kubeconfig',
        [rel, link].join(':'),
        '--baseline',
        `${rel}+${user}@hub`,
        '-o',
        'json',
      ],
      { cwd: dir },
    );
    assert.equal(mixed.code, 0, mixed.stderr);
    const out = diff(mixed);
    assert.deepEqual(out.items[1].extra, {
      rules: [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
      nonResourceRules: [],
    });
    assert.deepEqual(out.items[1].missing, { rules: [rule('configmaps', ['get'])], nonResourceRules: [] });
    noSecrets(viaEnv, mixed);
  });

  it('over a hub-backed provider (multicluster-runtime Secrets on the hub) in a fleet configuration', async () => {
    const hubNs = uniqueName('diff-hub');
    const label = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
    const secret = (name: string, server: { url: string; caFile: string }) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: hubNs, labels: label },
      stringData: {
        kubeconfig: yaml.dump(
          kubeconfigObject({
            path: '',
            server: server.url,
            caFile: server.caFile,
            context: name,
            user: cert,
            namespace: ns,
          }),
        ),
      },
    });
    await applyYaml(
      cp.hub,
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } },
        secret('east', cp.hub),
        secret('west', m1),
        secret('south', m2),
      ]
        .map((d) => yaml.dump(d))
        .join('---\n'),
    );
    const dir = scratchDir();
    const fleetYaml = join(dir, `${hubNs}-fleet.yaml`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      fleetYaml,
      `hub: {kubeconfig: ${cp.hub.kubeconfig}}\nproviders:\n  - {name: mcr, type: kubeconfig, namespace: ${hubNs}}\n`,
    );
    const res = await runFleet([
      'auth',
      'diff',
      '--fleet-config',
      fleetYaml,
      '--all',
      '--baseline',
      'east',
      '--fail-on-drift',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const out = diff(res);
    assert.deepEqual(
      out.items.map((i) => i.cluster),
      ['east', 'south', 'west'],
    );
    assert.equal(out.baseline, 'east');
    const byName = Object.fromEntries(out.items.map((i) => [i.cluster, i]));
    assert.deepEqual([byName.west.extra, byName.west.missing], [none, none]);
    assert.deepEqual(byName.south.extra, {
      rules: [rule('pods', ['*']), rule('secrets', ['get'], ['s1'])],
      nonResourceRules: [],
    });
    assert.deepEqual(byName.south.missing, { rules: [rule('configmaps', ['get'])], nonResourceRules: [] });
    const same = await runFleet([
      'auth',
      'diff',
      '--fleet-config',
      fleetYaml,
      '-c',
      'east',
      '-c',
      'west',
      '--fail-on-drift',
    ]);
    assert.equal(same.code, 0, same.stderr);
    noSecrets(res, same);
  });
});
