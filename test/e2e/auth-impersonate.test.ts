// --as, --as-group, --as-uid on auth whoami|can-i|rules and clusters verify, against the real control plane: the
// answers are the impersonated identity's (no token of it ever exists), with every kind of credential (certificate,
// token, exec plugin with a token or a certificate); a caller who may not impersonate gets a forbidden error for that
// cluster only; hub-backed clusters are impersonated while the hub itself is read as the caller.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import yaml from 'js-yaml';

import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import type { RulesDiff } from '../../src/commands/auth/diff.js';
import type { RulesReviewList } from '../../src/commands/auth/rules.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import type { WhoCanList } from '../../src/commands/auth/who-can.js';
import { type CliResult, runFleet } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const hub = cp.hub;
const member = cp.members[0];
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

const ns = uniqueName('as');
const deployer = `system:serviceaccount:${ns}:deployer`;
const admins = [hub.kubeconfig, member.kubeconfig].join(':');
const secrets: string[] = [];

function noSecrets(...results: CliResult[]): void {
  for (const r of results)
    for (const s of secrets) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), 'a credential was printed');
}

let impersonatorToken: string;
let impersonatorCert: { certFile: string; keyFile: string; kubeconfigPath: string };

before(async () => {
  // The deployer may list Secrets on the hub (cluster-wide) and nothing on the member; no token of it is ever made.
  await grant(hub, {
    name: `${ns}-deployer`,
    subject: { kind: 'ServiceAccount', name: 'deployer', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list', 'get'] }],
  });
  // Two callers allowed to impersonate (and nothing else): a ServiceAccount (its token through an exec plugin) and a
  // certificate user (the plugin answers with its certificate).
  const impersonate = [
    { apiGroups: [''], resources: ['users', 'groups', 'serviceaccounts'], verbs: ['impersonate'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['uids'], verbs: ['impersonate'] },
  ];
  impersonatorToken = await createServiceAccountToken(hub, ns, 'impersonator');
  secrets.push(impersonatorToken);
  await grant(hub, {
    name: `${ns}-impersonator`,
    subject: { kind: 'ServiceAccount', name: 'impersonator', namespace: ns },
    rules: impersonate,
  });
  const certUser = uniqueName('impersonator-cert');
  impersonatorCert = await createCertUser(hub, { user: certUser });
  await grant(hub, { name: certUser, subject: { kind: 'User', name: certUser }, rules: impersonate });
});

function pluginKubeconfig(args: string[]): string {
  const count = join(scratchDir(), `${uniqueName('count')}.txt`);
  return kubeconfigFor(
    hub,
    { exec: { command: process.execPath, args: [PLUGIN, '--count', count, ...args] } },
    { name: uniqueName('exec') },
  );
}

describe('--as, --as-group, --as-uid', () => {
  it('auth can-i --all --as a ServiceAccount answers for it on every cluster, without its token', async () => {
    const res = await runFleet([
      'auth',
      'can-i',
      'list',
      'secrets',
      '--all',
      '--as',
      deployer,
      '--kubeconfig',
      admins,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, 'the member says no');
    const out = res.json<AccessReviewList>();
    assert.deepEqual(out.as, { user: deployer, groups: [] });
    assert.deepEqual(
      out.items.map((i) => [i.cluster.replace(/.*\+/, ''), i.allowed]),
      [
        ['hub', true],
        ['member-1', false],
      ],
    );
    // Without --as the admin may do anything: the answers above are the deployer's, not the caller's.
    const self = await runFleet(['auth', 'can-i', 'list', 'secrets', '--all', '--kubeconfig', admins, '-o', 'json']);
    assert.equal(self.code, 0);
    assert.equal(self.json<AccessReviewList>().as, undefined);
    const table = await runFleet([
      'auth',
      'can-i',
      'list',
      'secrets',
      '--all',
      '--as',
      deployer,
      '--kubeconfig',
      admins,
    ]);
    assert.match(table.stderr, new RegExp(`^note: the answers are for user "${deployer}" \\(impersonated\\)$`, 'm'));
  });

  it('a name outside ASCII reaches the server as its UTF-8 bytes, as from kubectl, over HTTP/2 and HTTP/1.1', async () => {
    for (const env of [{}, { DISABLE_HTTP2: '1' }]) {
      const res = await runFleet(
        [
          'auth',
          'whoami',
          '--as',
          'Jürgen Ørsted',
          '--as-group',
          'équipe-π',
          '--as-uid',
          'ü-1',
          '--kubeconfig',
          admins,
          '-o',
          'json',
        ],
        { env },
      );
      assert.equal(res.code, 0, res.stderr);
      const users = res.json<WhoAmIList>().items.map((i) => [i.user?.username, i.user?.groups?.[0], i.user?.uid]);
      assert.deepEqual(users, [['Jürgen Ørsted', 'équipe-π', 'ü-1']], JSON.stringify(env));
    }
  });

  it('whoami with groups and a uid, through an exec plugin token and an exec plugin certificate', async () => {
    const viaToken = pluginKubeconfig(['--tokens', impersonatorToken]);
    const viaCert = pluginKubeconfig(['--cert', impersonatorCert.certFile, '--key', impersonatorCert.keyFile]);
    for (const kubeconfig of [viaToken, viaCert, impersonatorCert.kubeconfigPath]) {
      const res = await runFleet([
        'auth',
        'whoami',
        '--as',
        'jane',
        '--as-group',
        'qa',
        '--as-group',
        'ops',
        '--as-uid',
        'uid-42',
        '--kubeconfig',
        kubeconfig,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const out = res.json<WhoAmIList>();
      assert.deepEqual(out.as, { user: 'jane', groups: ['qa', 'ops'], uid: 'uid-42' });
      const user = out.items[0].user!;
      assert.equal(user.username, 'jane');
      assert.equal(user.uid, 'uid-42');
      assert.deepEqual(user.groups, ['qa', 'ops', 'system:authenticated']);
      assert.deepEqual(out.items[0].notes, [], 'no groups-dropped note: the certificate is not who answered');
      noSecrets(res);
    }
  });

  it('a caller who may not impersonate: forbidden for that cluster, named as such, exit 1; the others answer', async () => {
    const bob = tokenUser(hub, 'bob');
    secrets.push(bob.token);
    const res = await runFleet([
      'auth',
      'can-i',
      'list',
      'secrets',
      '--all',
      '--as',
      deployer,
      '--kubeconfig',
      `${bob.kubeconfigPath}:${hub.kubeconfig}`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1);
    const [refused, answered] = res.json<AccessReviewList>().items;
    assert.equal(refused.ok, false);
    assert.equal(refused.error!.kind, 'forbidden');
    assert.match(
      refused.error!.message,
      new RegExp(`: the caller may not impersonate user "${deployer}": .*User "bob" cannot impersonate`),
    );
    assert.equal(answered.allowed, true);
    assert.match(res.stderr, /^error: .*bob.*: the caller may not impersonate user/m);
    // The same for whoami and rules: never the caller's own answer in place of the identity asked about.
    for (const cmd of [
      ['auth', 'whoami'],
      ['auth', 'rules'],
    ]) {
      const r = await runFleet([...cmd, '--as', deployer, '--kubeconfig', bob.kubeconfigPath, '-o', 'json']);
      assert.equal(r.code, 1, cmd.join(' '));
      assert.equal(r.json<WhoAmIList>().items[0].error!.kind, 'forbidden');
      assert.match(r.json<WhoAmIList>().items[0].error!.message, /the caller may not impersonate user/);
    }
    // clusters verify: the connection checks stay the caller's (reached, TLS verified); authenticated fails, saying why.
    const verify = await runFleet([
      'clusters',
      'verify',
      '--as',
      deployer,
      '--kubeconfig',
      bob.kubeconfigPath,
      '-o',
      'json',
    ]);
    assert.equal(verify.code, 1);
    const checks = Object.fromEntries(
      verify.json().items[0].checks.map((c: { name: string; status: string; message: string }) => [c.name, c]),
    );
    assert.equal(checks['reachable'].status, 'pass');
    assert.equal(checks['tls-verified'].status, 'pass');
    assert.equal(checks['authenticated'].status, 'fail');
    assert.match(checks['authenticated'].message, /the caller may not impersonate user/);
    noSecrets(res);
  });

  it('auth rules and clusters verify as the deployer', async () => {
    const rules = await runFleet([
      'auth',
      'rules',
      '-n',
      ns,
      '--as',
      deployer,
      '--kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(rules.code, 0, rules.stderr);
    const out = rules.json<RulesReviewList>();
    assert.deepEqual(out.as, { user: deployer, groups: [] });
    assert.ok(out.items[0].resourceRules!.some((r) => r.resources.includes('secrets') && r.verbs.includes('list')));
    assert.ok(
      !out.items[0].risks!.some((r) => r.code === 'cluster-admin'),
      'the deployer is not cluster-admin, the caller is',
    );

    const policy = join(scratchDir(), `${ns}-policy.yaml`);
    writeFileSync(
      policy,
      yaml.dump({
        apiVersion: 'fleet/v1alpha1',
        kind: 'VerifyPolicy',
        checks: {
          identity: { username: deployer },
          permissions: [{ verb: 'list', resource: 'secrets', namespace: ns }],
        },
      }),
    );
    const verify = await runFleet([
      'clusters',
      'verify',
      '--as',
      deployer,
      '--kubeconfig',
      hub.kubeconfig,
      '--policy',
      policy,
      '-o',
      'json',
    ]);
    const report = verify.json();
    assert.equal(verify.code, 0, JSON.stringify(report.items[0].checks));
    assert.deepEqual(report.as, { user: deployer, groups: [] });
    assert.equal(report.items[0].username, deployer);
    const onMember = await runFleet([
      'clusters',
      'verify',
      '--as',
      deployer,
      '--kubeconfig',
      member.kubeconfig,
      '--policy',
      policy,
      '-o',
      'json',
    ]);
    assert.equal(onMember.code, 1, 'the member does not grant the deployer');
  });

  it("auth diff --as compares the deployer's grants, not the caller's", async () => {
    const res = await runFleet([
      'auth',
      'diff',
      '--all',
      '--as',
      deployer,
      '-n',
      ns,
      '--kubeconfig',
      admins,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<RulesDiff>();
    assert.deepEqual(out.as, { user: deployer, groups: [] });
    assert.equal(out.drift, true);
    const hubItem = out.items.find((i) => i.cluster.endsWith('+hub'))!;
    assert.deepEqual(
      hubItem.extra!.rules.filter((r) => r.resource === 'secrets').map((r) => [r.scope, r.verbs]),
      [['cluster', ['get', 'list']]],
    );
    // The caller (system:masters) has the same rules on both: no drift without --as.
    const self = await runFleet(['auth', 'diff', '--all', '-n', ns, '--kubeconfig', admins, '-o', 'json']);
    assert.equal(self.json<RulesDiff>().drift, false);
  });

  it('usage errors before any cluster is touched: exit 2', async () => {
    for (const args of [
      ['--as-group', 'x'],
      ['--as-uid', 'u'],
      ['--as', ''],
    ]) {
      const res = await runFleet(['auth', 'whoami', ...args, '--kubeconfig', '/nonexistent/kubeconfig']);
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, /^error: --as/m);
    }
    const verify = await runFleet(['clusters', 'verify', '--as-group', 'x', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(verify.code, 2);
  });

  it('hub-backed clusters: the members are impersonated, the hub is read as the caller', async () => {
    // A kubeconfig Secret on the hub for member-1 (admin credentials): the hub provider lists it, fleet connects.
    const hubNs = uniqueName('as-hub');
    await applyYaml(
      hub,
      [
        yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }),
        yaml.dump({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'member-1',
            namespace: hubNs,
            labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' },
          },
          data: {
            kubeconfig: Buffer.from((await import('node:fs')).readFileSync(member.kubeconfig, 'utf8')).toString(
              'base64',
            ),
          },
        }),
      ].join('---\n'),
    );
    const grantee = `system:serviceaccount:${hubNs}:reader`;
    await grant(member, {
      name: `${hubNs}-reader`,
      namespace: hubNs,
      createNamespace: true,
      subject: { kind: 'ServiceAccount', name: 'reader', namespace: hubNs },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    const fleetYaml = join(scratchDir(), `${hubNs}-fleet.yaml`);
    writeFileSync(
      fleetYaml,
      yaml.dump({
        kind: 'FleetConfig',
        hub: { kubeconfig: hub.kubeconfig },
        providers: [{ name: 'mcr', type: 'kubeconfig', namespace: hubNs }],
      }),
    );
    // The grantee may not read Secrets on the hub: if the hub's requests carried --as, the provider could not list.
    const res = await runFleet([
      'auth',
      'can-i',
      'list',
      'configmaps',
      '-n',
      hubNs,
      '--all',
      '--as',
      grantee,
      '--fleet-config',
      fleetYaml,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<AccessReviewList>();
    assert.deepEqual(
      out.items.map((i) => [i.cluster, i.allowed]),
      [['member-1', true]],
    );
    const no = await runFleet([
      'auth',
      'can-i',
      'list',
      'secrets',
      '-n',
      hubNs,
      '--all',
      '--as',
      grantee,
      '--fleet-config',
      fleetYaml,
      '-o',
      'json',
    ]);
    assert.equal(no.code, 1);
    assert.equal(no.json<AccessReviewList>().items[0].allowed, false);

    // who-can over the hub-backed provider finds the grantee there, confirmed.
    const who = await runFleet([
      'auth',
      'who-can',
      'list',
      'configmaps',
      '-n',
      hubNs,
      '--all',
      '--fleet-config',
      fleetYaml,
      '-o',
      'json',
    ]);
    assert.equal(who.code, 0, who.stderr);
    const item = who.json<WhoCanList>().items[0];
    assert.equal(item.cluster, 'member-1');
    const sa = item.subjects!.find((s) => s.kind === 'ServiceAccount' && s.name === 'reader' && s.namespace === hubNs);
    assert.ok(sa, 'the grantee is listed');
    assert.equal(sa.confirmed, true);
    assert.deepEqual(
      sa.grants.map((g) => [g.binding.kind, g.binding.name, g.role.kind, g.role.name]),
      [['RoleBinding', `${hubNs}-reader`, 'Role', `${hubNs}-reader`]],
    );
  });
});
