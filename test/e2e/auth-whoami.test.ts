// fleet auth whoami against the real control plane: exact identities of users of different power, warnings for the
// over-powered, exec plugins run once per credential, and a fleet where members fail in their own ways.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import { closedPort } from '../support/net.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { runFleet, type CliResult } from '../support/cli.js';
import {
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  kubectl,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const member = cp.members[0];
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

/** An exec user running the test plugin, which prints `tokens` and counts its runs in a file of its own. */
function pluginUser(tokens: string[], extraArgs: string[] = []) {
  const count = join(scratchDir(), `${uniqueName('plugin-count')}.txt`);
  const exec = {
    command: process.execPath,
    args: [PLUGIN, '--count', count, '--tokens', tokens.join(','), ...extraArgs],
  };
  return { exec, runs: () => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0) };
}

function whoamiJson(res: CliResult) {
  const out = res.json<WhoAmIList>();
  assert.equal(out.kind, 'WhoAmIList');
  return out.items;
}

/** What kube-apiserver 1.34 puts in extra for a client certificate: the SHA-256 of the certificate. */
function certCredentialId(certFile: string): Record<string, string[]> {
  const sha = new X509Certificate(readFileSync(certFile)).fingerprint256.replace(/:/g, '').toLowerCase();
  return { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${sha}`] };
}

function assertNoSecrets(res: CliResult, secrets: string[], what: string) {
  for (const s of secrets)
    assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a token appears in the output of ${what}`);
}

describe('fleet auth whoami (live)', () => {
  it('the admin certificate: exact identity, flagged for system:masters and cluster-admin power', async () => {
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', cp.hub.kubeconfig, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = whoamiJson(res);
    assert.deepEqual(Object.keys(item).sort(), ['cluster', 'notes', 'ok', 'user', 'warnings']);
    assert.equal(item.cluster, `${cp.hub.kubeconfig}+${cp.hub.context}`);
    assert.deepEqual(item.user, {
      username: cp.admin.user,
      uid: '',
      groups: ['system:masters', 'system:authenticated'],
      extra: certCredentialId(cp.admin.certFile),
    });
    assert.deepEqual(
      item.warnings.map((w) => w.code),
      ['system-masters', 'cluster-admin'],
    );
    assert.deepEqual(item.notes, [], 'the certificate groups are all in the answer: nothing dropped on the way');
  });

  it('a static token user with a namespaced Role: exact identity, no warning', async () => {
    const ns = uniqueName('whoami-bob');
    await grant(cp.hub, {
      name: 'admin-here',
      namespace: ns,
      createNamespace: true,
      subject: { kind: 'User', name: 'bob' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
    const bob = tokenUser(cp.hub, 'bob');
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', bob.kubeconfigPath, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = whoamiJson(res);
    assert.deepEqual(item.user, {
      username: 'bob',
      uid: 'uid-bob',
      groups: ['devs', 'system:authenticated'],
      extra: {},
    });
    // Everything in one namespace is not everything: no cluster-admin warning.
    assert.deepEqual(item.warnings, []);
    assertNoSecrets(res, [bob.token], 'whoami as bob');
  });

  it('a client-certificate user with a ClusterRole: CN is the user, O the groups', async () => {
    const user = uniqueName('cert-ops');
    const group = uniqueName('grp');
    await grant(cp.hub, {
      name: user,
      subject: { kind: 'Group', name: group },
      rules: [{ apiGroups: [''], resources: ['namespaces', 'nodes'], verbs: ['get', 'list'] }],
    });
    const cert = await createCertUser(cp.hub, { user, groups: [group, 'team:platform'] });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', cert.kubeconfigPath, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = whoamiJson(res);
    assert.deepEqual(item.user, {
      username: user,
      uid: '',
      groups: [group, 'team:platform', 'system:authenticated'],
      extra: certCredentialId(cert.certFile),
    });
    assert.deepEqual(item.warnings, []);
  });

  it('a ServiceAccount token: the SA as user, its UID, groups and credential id', async () => {
    const ns = uniqueName('whoami-sa');
    const token = await createServiceAccountToken(cp.hub, ns, 'deployer');
    const uid = (
      await kubectl(cp.hub, ['get', 'serviceaccount', 'deployer', '-n', ns, '-o', 'jsonpath={.metadata.uid}'])
    ).trim();
    const path = kubeconfigFor(cp.hub, { token });
    for (const format of ['json', 'yaml', 'table', 'wide']) {
      const res = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', format]);
      assert.equal(res.code, 0, res.stderr);
      assertNoSecrets(res, [token], `whoami -o ${format}`);
      if (format !== 'json') continue;
      const [item] = whoamiJson(res);
      assert.equal(item.user?.username, `system:serviceaccount:${ns}:deployer`);
      assert.equal(item.user?.uid, uid);
      assert.deepEqual(item.user?.groups, [
        'system:serviceaccounts',
        `system:serviceaccounts:${ns}`,
        'system:authenticated',
      ]);
      assert.match(item.user?.extra['authentication.kubernetes.io/credential-id'][0] ?? '', /^JTI=/);
    }
    const wide = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'wide']);
    assert.match(wide.stdout, /^CLUSTER\s+USERNAME\s+UID\s+GROUPS\s+EXTRA\s+WARNING$/m);
    assert.match(
      wide.stdout,
      new RegExp(
        `system:serviceaccount:${ns}:deployer\\s+${uid}\\s+system:serviceaccounts,system:serviceaccounts:${ns},system:authenticated\\s+authentication.kubernetes.io/credential-id=JTI=`,
      ),
    );
    const name = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'name']);
    assert.equal(name.stdout, `system:serviceaccount:${ns}:deployer\n`);
  });

  it('an exec plugin user; three contexts sharing the plugin and cluster run it once for all their requests', async () => {
    const bob = cp.hub.tokenUsers.find((u) => u.name === 'bob')!;
    const plugin = pluginUser([bob.token], ['--sleep', '300']);
    const paths = ['exec-a', 'exec-b', 'exec-c'].map((n) =>
      kubeconfigFor(cp.hub, { exec: plugin.exec }, { name: uniqueName(n) }),
    );
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', paths.join(':'), '--all', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const items = whoamiJson(res);
    assert.equal(items.length, 3);
    for (const item of items)
      assert.deepEqual(item.user, {
        username: 'bob',
        uid: 'uid-bob',
        groups: ['devs', 'system:authenticated'],
        extra: {},
      });
    // 3 clusters x 2 requests (the review and the cluster-admin check), concurrently: one plugin run.
    assert.equal(plugin.runs(), 1);
    assertNoSecrets(res, [bob.token], 'whoami through the plugin');
  });

  it('a credential the server rejects is refreshed once through the plugin, shared by concurrent requests', async () => {
    const carol = cp.hub.tokenUsers.find((u) => u.name === 'carol')!;
    const plugin = pluginUser(['stale-token-the-server-rejects', carol.token], ['--sleep', '200']);
    const paths = ['stale-a', 'stale-b'].map((n) =>
      kubeconfigFor(cp.hub, { exec: plugin.exec }, { name: uniqueName(n) }),
    );
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', paths.join(':'), '--all', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(
      whoamiJson(res).map((i) => i.user?.username),
      ['carol', 'carol'],
    );
    assert.equal(plugin.runs(), 2);
  });

  it('provideClusterInfo: the plugin learns each cluster (server, CA, exec extension) and runs once per cluster', async () => {
    const plugin = pluginUser([], ['--token-from-config', 'token']);
    const exec = {
      ...plugin.exec,
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
      provideClusterInfo: true,
    };
    const servers = [cp.hub, member];
    // Written by hand: the cluster extension that becomes spec.cluster.config is not something the fixture writes.
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: servers.map((s) => ({
        name: s.name,
        cluster: {
          server: s.url,
          'certificate-authority-data': readFileSync(s.caFile).toString('base64'),
          extensions: [
            {
              name: 'client.authentication.k8s.io/exec',
              extension: { token: s.tokenUsers.find((u) => u.name === 'dave')!.token },
            },
          ],
        },
      })),
      users: [{ name: 'plugin', user: { exec } }],
      contexts: servers.map((s) => ({ name: `dave@${s.name}`, context: { cluster: s.name, user: 'plugin' } })),
      'current-context': `dave@${cp.hub.name}`,
    };
    const path = join(scratchDir(), `${uniqueName('cluster-info')}.kubeconfig`);
    writeFileSync(path, yaml.dump(doc), { mode: 0o600 });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', path, '--all', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(
      whoamiJson(res).map((i) => i.user?.username),
      ['dave', 'dave'],
    );
    assert.equal(plugin.runs(), 2);
    assertNoSecrets(
      res,
      servers.map((s) => s.tokenUsers.find((u) => u.name === 'dave')!.token),
      'whoami with cluster info',
    );
    // Without provideClusterInfo the plugin gets no spec.cluster and refuses, as the reference plugins do.
    writeFileSync(
      path,
      yaml.dump({ ...doc, users: [{ name: 'plugin', user: { exec: { ...exec, provideClusterInfo: false } } }] }),
      { mode: 0o600 },
    );
    const without = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'json']);
    assert.equal(without.code, 1);
    assert.match(whoamiJson(without)[0].error!.message, /exited with 4 \(its messages are on stderr\)$/);
    assert.match(without.stderr, /KUBERNETES_EXEC_INFO has no spec.cluster.server/);
  });

  it('a failing plugin is a plugin error naming the command and its message', async () => {
    const plugin = pluginUser(['unused'], ['--fail', 'corp-login: session expired, run corp-login']);
    const path = kubeconfigFor(cp.hub, { exec: plugin.exec });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    const [item] = whoamiJson(res);
    assert.equal(item.ok, false);
    assert.equal(item.error!.kind, 'plugin');
    assert.equal(item.error!.message, `exec plugin ${process.execPath} exited with 3 (its messages are on stderr)`);
    // As client-go does: the plugin's own words go to the user's stderr, never into the JSON document.
    assert.ok(!res.stdout.includes('session expired'), res.stdout);
    assert.match(res.stderr, /^corp-login: session expired, run corp-login$/m);
  });

  it("hub and members with --all -o json: each cluster's identity", async () => {
    const list = cp.servers.map((s) => s.kubeconfig).join(':');
    const started = Date.now();
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', list, '--all', '-o', 'json']);
    const elapsed = Date.now() - started;
    assert.equal(res.code, 0, res.stderr);
    const items = whoamiJson(res);
    assert.deepEqual(
      items.map((i) => i.cluster),
      cp.servers.map((s) => `${s.kubeconfig}+${s.context}`),
    );
    for (const item of items) {
      assert.equal(item.ok, true);
      assert.equal(item.user?.username, cp.admin.user);
      assert.deepEqual(
        item.warnings.map((w) => w.code),
        ['system-masters', 'cluster-admin'],
      );
    }
    process.stderr.write(`# whoami over ${items.length} clusters: ${elapsed} ms (whole process)\n`);
  });

  it('a fleet where one member is down and one rejects the credential: the others answer, each failure has its row, exit 1', async () => {
    const port = await closedPort();
    const down = kubeconfigFor(
      { ...member, url: `https://127.0.0.1:${port}` },
      { token: 'x'.repeat(24) },
      { name: uniqueName('down') },
    );
    const rejected = kubeconfigFor(
      member,
      { token: 'not-a-token-this-server-knows' },
      { name: uniqueName('rejected') },
    );
    const dave = tokenUser(member, 'dave');
    const res = await runFleet([
      'auth',
      'whoami',
      '--kubeconfig',
      [cp.hub.kubeconfig, down, rejected, dave.kubeconfigPath].join(':'),
      '--all',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1);
    const items = whoamiJson(res);
    assert.deepEqual(
      items.map((i) => [i.ok, i.user?.username ?? i.error?.kind]),
      [
        [true, cp.admin.user],
        [false, 'unreachable'],
        [false, 'unauthorized'],
        [true, 'dave'],
      ],
    );
    assert.equal(items[1].error!.message, `https://127.0.0.1:${port}: connection refused`);
    assert.deepEqual(items[1].warnings, []);

    const table = await runFleet([
      'auth',
      'whoami',
      '--kubeconfig',
      [cp.hub.kubeconfig, down, rejected, dave.kubeconfigPath].join(':'),
      '--all',
    ]);
    assert.equal(table.code, 1);
    assert.match(table.stdout, /^CLUSTER\s+USERNAME\s+UID\s+GROUPS\s+WARNING\s+ERROR$/m);
    // The CLUSTER column names a file cluster by its context (issue 41's short names).
    assert.match(table.stdout, /^down-\w+@member-1\s+unreachable$/m);
    assert.match(table.stdout, /^rejected-\w+@member-1\s+unauthorized$/m);
    assert.match(
      table.stderr,
      new RegExp(`^error: .*\\+down-\\w+@member-1: https://127\\.0\\.0\\.1:${port}: connection refused$`, 'm'),
    );
    assert.ok(
      table.stderr
        .split('\n')
        .filter(Boolean)
        .every((l) => l.startsWith('error: ')),
      table.stderr,
    );
    assertNoSecrets(table, [dave.token, 'not-a-token-this-server-knows'], 'whoami over a broken fleet');
  });
});
