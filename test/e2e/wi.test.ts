// fleet wi setup / test / doctor against real API servers: the sandbox hub and member (which trust the hub's issuer),
// plus extra kube-apiservers started per case with exactly the configuration under test (a fresh member configured from
// what `wi setup` prints, a member trusting a misspelt issuer, a second hub whose discovery is private, a member trusting
// nobody). Every answer a check reports is a real API server's.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';

import { runFleet, type CliResult } from '../support/cli.js';
import { type ExtraApiserver, hubSigningKeyPem, startExtraApiserver } from '../support/extra-apiserver.js';
import {
  apiRequest,
  applyYaml,
  createServiceAccountToken,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { junitCases, junitSchemaErrors } from '../support/junit.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const member = cp.members[0];
const AUTHN_V1 = 'apiserver.config.k8s.io/v1';

type Check = { name: string; status: 'pass' | 'fail' | 'warn' | 'skip'; message: string; fix?: string };
type Item = {
  cluster: string;
  ok: boolean;
  audience: string;
  passed: boolean;
  claims?: any;
  user?: { username: string };
  checks: Check[];
  diagnosis?: Check[];
  error?: any;
};

const kubeconfigs = (...extra: string[]) =>
  [cp.hub.kubeconfig, ...cp.members.map((m) => m.kubeconfig), ...extra].join(':');

function wi(args: string[], extraKubeconfigs: string[] = []): Promise<CliResult> {
  return runFleet(['wi', ...args, '--kubeconfig', kubeconfigs(...extraKubeconfigs)], { timeoutMs: 120_000 });
}

function items(res: CliResult): Item[] {
  const out = res.json();
  assert.ok(['WorkloadIdentityTest', 'WorkloadIdentityDiagnosis'].includes(out.kind), res.stdout);
  return out.items;
}

function check(checks: Check[] | undefined, name: string): Check {
  const c = (checks ?? []).find((x) => x.name === name);
  assert.ok(c, `no check ${name} in ${JSON.stringify(checks, null, 1)}`);
  return c;
}

const failing = (checks: Check[] | undefined) => (checks ?? []).filter((c) => c.status === 'fail').map((c) => c.name);

/** No token in any output: neither a JWT-shaped string nor a scrubbed one (fleet never tried to print it), nor the given ones. */
function assertNoToken(res: CliResult, what: string, tokens: string[] = []) {
  for (const stream of [res.stdout, res.stderr]) {
    assert.doesNotMatch(stream, /eyJ[A-Za-z0-9_-]{8,}\./, `a JWT appears in the output of ${what}`);
    assert.ok(!stream.includes('REDACTED'), `${what} tried to print a secret (scrubbed)`);
    for (const t of tokens) assert.ok(!stream.includes(t), `the token appears in the output of ${what}`);
  }
}

const user = (ns: string, name: string) => `hub:system:serviceaccount:${ns}:${name}`;

async function ensureNamespace(server: string | { kubeconfig: string; name: string }, ns: string) {
  await applyYaml(server as any, `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`);
}

/** Polls a SelfSubjectReview with a hub token on `server` until it is no longer 401 (the target fetches discovery async). */
async function awaitTrust(server: { url: string; caFile: string }, token: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await apiRequest({
      url: server.url,
      caFile: server.caFile,
      token,
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    if (r.status === 201) return;
    if (Date.now() > deadline) throw new Error(`${server.url} still answers ${r.status} to hub tokens`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

describe('fleet wi (live)', () => {
  const ns = uniqueName('wi');
  const sa = 'app';

  before(async () => {
    await ensureNamespace(cp.hub, ns);
    await ensureNamespace(member, ns);
  });

  it('wi setup --apply, then wi test: the target maps the hub token to hub:system:serviceaccount:NS:NAME and --can-i passes', async () => {
    const setup = await wi([
      'setup',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--role',
      'view',
      '--namespace',
      ns,
      '--apply',
      '-o',
      'json',
    ]);
    assert.equal(setup.code, 0, setup.stderr);
    const plan = setup.json();
    assert.equal(plan.kind, 'WorkloadIdentitySetup');
    assert.equal(plan.username, user(ns, sa));
    assert.equal(plan.issuer, cp.hub.issuer);
    assert.equal(plan.audience, member.url);
    assert.equal(plan.authenticationConfiguration.apiVersion, AUTHN_V1);
    const results = Object.fromEntries(plan.objects.map((o: any) => [`${o.side} ${o.object.kind}`, o.result]));
    assert.equal(results['hub ServiceAccount'], 'created');
    assert.equal(results['hub ConfigMap'], 'created');
    assert.equal(results['target RoleBinding'], 'created');
    assert.ok(['created', 'unchanged', 'configured'].includes(results['hub ClusterRoleBinding']));
    // What the API servers now hold, read back independently.
    const rb = JSON.parse(
      await kubectl(member, [
        'get',
        'rolebinding',
        '-n',
        ns,
        `fleet-wi:hub:${ns}:${sa}`,
        '-o',
        'json',
        '--show-managed-fields',
      ]),
    );
    assert.deepEqual(rb.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user(ns, sa) }]);
    assert.equal(rb.roleRef.name, 'view');
    assert.ok(JSON.stringify(rb.metadata.managedFields).includes('"manager":"fleet"'));
    const cm = JSON.parse(await kubectl(cp.hub, ['get', 'configmap', '-n', ns, 'fleet-wi-member-1', '-o', 'json']));
    assert.equal(cm.data.provider, 'generic');
    assert.equal(cm.data.address, member.url);
    assert.equal(cm.data.audiences, member.url);
    assert.equal(cm.data['ca.crt'], readFileSync(member.caFile, 'utf8'));

    // Idempotent: a second apply changes nothing.
    const again = await wi([
      'setup',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--role',
      'view',
      '--namespace',
      ns,
      '--apply',
      '-o',
      'json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual([...new Set(again.json().objects.map((o: any) => o.result))], ['unchanged']);

    const res = await wi([
      'test',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--expect-user',
      user(ns, sa),
      '--can-i',
      `list configmaps -n ${ns}`,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const [item] = items(res);
    assert.equal(item.passed, true);
    assert.equal(item.user?.username, user(ns, sa));
    assert.deepEqual(
      item.checks.map((c) => [c.name, c.status]),
      [
        ['token-request', 'pass'],
        ['target-authenticates', 'pass'],
        ['expected-user', 'pass'],
        ['can-i', 'pass'],
      ],
    );
    assert.equal(item.claims.iss, cp.hub.issuer);
    assert.deepEqual(item.claims.aud, [member.url]);
    assert.equal(item.claims.sub, `system:serviceaccount:${ns}:${sa}`);
    assert.equal(item.diagnosis, undefined);
    assertNoToken(res, 'wi test -o json');

    // --junit: one testsuite for the target, one passing testcase per step, valid against the schemas CI systems read.
    const junitFile = join(scratchDir(), `${uniqueName('wi-junit')}.xml`);
    const withJunit = await wi([
      'test',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--expect-user',
      user(ns, sa),
      '--can-i',
      `list configmaps -n ${ns}`,
      '--can-i',
      `get configmaps -n ${ns}`,
      '--junit',
      junitFile,
    ]);
    assert.equal(withJunit.code, 0, withJunit.stderr);
    const xml = readFileSync(junitFile, 'utf8');
    assert.deepEqual(await junitSchemaErrors(xml), []);
    assert.deepEqual(
      junitCases(xml).map((c) => [c.suite.split('+').pop(), c.name, c.outcome]),
      [
        ['member-1', 'token-request', 'passed'],
        ['member-1', 'target-authenticates', 'passed'],
        ['member-1', 'expected-user', 'passed'],
        ['member-1', 'can-i', 'passed'],
        ['member-1', 'can-i #2', 'passed'],
      ],
    );
    assert.match(xml, new RegExp(`<property name="username" value="${user(ns, sa)}"/>`));
    assertNoToken({ stdout: xml, stderr: '' } as CliResult, 'the wi test JUnit file');

    // The table names every step; no token there either.
    const table = await wi([
      'test',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--can-i',
      `list configmaps -n ${ns}`,
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^TARGET\s+CHECK\s+STATUS\s+MESSAGE$/m);
    assert.match(table.stdout, new RegExp(`target-authenticates\\s+pass\\s+.*${user(ns, sa)}`));
    assertNoToken(table, 'wi test (table)');

    // A permission view does not give fails the step, and the run.
    const denied = await wi([
      'test',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--can-i',
      `delete configmaps -n ${ns}`,
      '-o',
      'json',
    ]);
    assert.equal(denied.code, 1);
    const [d] = items(denied);
    assert.equal(check(d.checks, 'can-i').status, 'fail');
    assert.match(check(d.checks, 'can-i').message, /authenticated but not allowed \(a request would get 403/);
    assert.equal(
      check(d.diagnosis, 'target-rbac').status,
      'pass',
      'the RoleBinding exists; it just does not grant delete',
    );
  });

  it('--all tests every cluster but the hub; usage errors are one line with exit 2', async () => {
    await applyYaml(cp.hub, `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${sa}\n  namespace: ${ns}\n`);
    const res = await wi(['test', '--hub', 'hub', '--all', '--service-account', `${ns}/${sa}`, '-o', 'json']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.deepEqual(
      items(res).map((i) => [i.cluster.split('+').pop(), i.passed, i.user?.username]),
      cp.members.map((m) => [m.name, true, user(ns, sa)]),
    );
    for (const [args, msg] of [
      [['test', '--hub', 'hub', '--service-account', `${ns}/${sa}`], /--target/],
      [['test', '--hub', 'hub', '--target', 'hub', '--service-account', `${ns}/${sa}`], /is the hub itself/],
      [
        ['doctor', '--hub', 'hub', '--target', 'member-1', '--service-account', 'nope'],
        /--service-account: expected NAMESPACE\/NAME/,
      ],
      [
        ['test', '--hub', 'hub', '--target', 'member-1', '--service-account', `${ns}/${sa}`, '--can-i', 'list'],
        /--can-i "list": expected/,
      ],
      [
        [
          'doctor',
          '--hub',
          'hub',
          '--target',
          'member-1',
          '--service-account',
          `${ns}/${sa}`,
          '--authentication-config',
          '/nonexistent/ac.yaml',
        ],
        /--authentication-config \/nonexistent\/ac.yaml: file not found/,
      ],
    ] as const) {
      const r = await wi([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('wi setup: --dry-run saves nothing; a step the user may not do stops the run before anything is created; cluster-admin is refused', async () => {
    const ns3 = uniqueName('wi-setup');
    await ensureNamespace(cp.hub, ns3);
    await ensureNamespace(member, ns3);
    const exists = async (ref: any, args: string[]) => (await kubectlResult(ref, ['get', ...args])).code === 0;
    const dry = await wi([
      'setup',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns3}/dry`,
      '--role',
      'view',
      '--namespace',
      ns3,
      '--apply',
      '--dry-run',
      '-o',
      'json',
    ]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json().dryRun, true);
    assert.ok(
      dry
        .json()
        .objects.filter((o: any) => o.object.kind !== 'ClusterRoleBinding')
        .every((o: any) => o.result === 'dry-run'),
    );
    assert.equal(await exists(cp.hub, ['serviceaccount', '-n', ns3, 'dry']), false);
    assert.equal(await exists(member, ['rolebinding', '-n', ns3, `fleet-wi:hub:${ns3}:dry`]), false);

    // bob may read RBAC on the target (so the plan is made) but not create bindings: the dry run of the target's
    // RoleBinding fails, and the hub's ServiceAccount and ConfigMap, which came first, are not created either.
    await grant(member, {
      name: uniqueName('bob-reads-rbac'),
      subject: { kind: 'User', name: 'bob' },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['rolebindings', 'clusterroles'],
          verbs: ['get', 'list'],
        },
      ],
    });
    const bob = tokenUser(member, 'bob');
    const half = await runFleet([
      'wi',
      'setup',
      '--hub',
      'hub',
      '--target',
      'bob@member-1',
      '--service-account',
      `${ns3}/half`,
      '--role',
      'view',
      '--namespace',
      ns3,
      '--apply',
      '--kubeconfig',
      [cp.hub.kubeconfig, bob.kubeconfigPath].join(':'),
    ]);
    assert.equal(half.code, 1, half.stderr);
    assert.match(half.stderr, /^error: .*bob@member-1: apply RoleBinding .*forbidden.*\(nothing was changed\)\n$/);
    assert.equal(await exists(cp.hub, ['serviceaccount', '-n', ns3, 'half']), false);
    assert.equal(await exists(cp.hub, ['configmap', '-n', ns3, 'fleet-wi-bob-member-1']), false);
    assertNoToken(half, 'wi setup as bob', [bob.token]);

    const risky = await wi([
      'setup',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${ns3}/root`,
      '--cluster-role',
      'cluster-admin',
      '--apply',
    ]);
    assert.equal(risky.code, 2);
    assert.match(
      risky.stderr,
      /^error: ClusterRole cluster-admin on .* is too powerful for a cross-cluster identity \(cluster-admin\); pass --allow-risky to bind it anyway\n$/,
    );
    assert.equal(await exists(cp.hub, ['serviceaccount', '-n', ns3, 'root']), false);
  });

  it('wi setup --apply into namespaces that do not exist: refused naming them (exit 2, nothing created); --create-namespace creates them first', async () => {
    const hubNs = uniqueName('wi-newhub');
    const targetNs = uniqueName('wi-newtgt');
    const exists = async (ref: any, args: string[]) => (await kubectlResult(ref, ['get', ...args])).code === 0;
    const args = [
      'setup',
      '--hub',
      'hub',
      '--target',
      'member-1',
      '--service-account',
      `${hubNs}/app`,
      '--role',
      'view',
      '--namespace',
      targetNs,
      '--apply',
    ];
    try {
      const refused = await wi(args);
      assert.deepEqual([refused.code, refused.stdout], [2, ''], refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`^error: hub [^:]+: namespace ${hubNs} does not exist; pass --create-namespace to create it\n$`),
      );
      assert.equal(await exists(cp.hub, ['namespace', hubNs]), false);

      // A plan without --apply is unchanged by a missing namespace.
      const plan = await wi(args.filter((a) => a !== '--apply'));
      assert.equal(plan.code, 0, plan.stderr);

      const created = await wi([...args, '--create-namespace', '-o', 'json']);
      assert.equal(created.code, 0, created.stderr);
      const objects = created
        .json()
        .objects.map(
          (o: any) =>
            `${o.side} ${o.object.kind} ${o.object.metadata.namespace ? `${o.object.metadata.namespace}/` : ''}${o.object.metadata.name} ${o.result}`,
        );
      assert.ok(objects.includes(`hub Namespace ${hubNs} created`), objects.join('\n'));
      assert.ok(objects.includes(`target Namespace ${targetNs} created`), objects.join('\n'));
      assert.ok(
        objects.indexOf(`hub Namespace ${hubNs} created`) < objects.indexOf(`hub ServiceAccount ${hubNs}/app created`),
        objects.join('\n'),
      );
      assert.ok(
        objects.includes(`target RoleBinding ${targetNs}/fleet-wi:hub:${hubNs}:app created`),
        objects.join('\n'),
      );
      assert.equal(await exists(cp.hub, ['serviceaccount', '-n', hubNs, 'app']), true);
      assert.equal(await exists(member, ['rolebinding', '-n', targetNs, `fleet-wi:hub:${hubNs}:app`]), true);
      // A second run finds them: nothing to create, no flag needed.
      const again = await wi([...args, '-o', 'json']);
      assert.equal(again.code, 0, again.stderr);
      assert.ok(
        again.json().objects.every((o: any) => o.object.kind !== 'Namespace' && o.result === 'unchanged'),
        again.stdout,
      );
    } finally {
      await kubectlResult(cp.hub, ['delete', 'namespace', hubNs, '--wait=false']);
      await kubectlResult(member, ['delete', 'namespace', targetNs, '--wait=false']);
    }
  });

  it('a FRESH member configured with the AuthenticationConfiguration wi setup prints accepts the hub token; wi test passes', async () => {
    // The member must exist for setup to ask its version, so it starts trusting nobody useful and is given the
    // printed file afterwards.
    const fresh = await startExtraApiserver({
      authenticationConfig: ({ url }) => ({
        apiVersion: AUTHN_V1,
        kind: 'AuthenticationConfiguration',
        jwt: [
          {
            issuer: { url: 'https://placeholder.invalid', audiences: [url] },
            claimMappings: { username: { claim: 'sub', prefix: 'placeholder:' } },
          },
        ],
      }),
    });
    try {
      await applyYaml(
        fresh,
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: wi-e2e-configmap-reader\nrules:\n- apiGroups: [""]\n  resources: [configmaps]\n  verbs: [get, list]\n',
      );
      const file = join(scratchDir(), `${uniqueName('auth-config')}.yaml`);
      const setup = await wi(
        [
          'setup',
          '--hub',
          'hub',
          '--target',
          fresh.name,
          '--service-account',
          `${ns}/${sa}`,
          '--cluster-role',
          'wi-e2e-configmap-reader',
          '--apply',
          '--authentication-config-out',
          file,
          '-o',
          'json',
        ],
        [fresh.kubeconfig],
      );
      assert.equal(setup.code, 0, setup.stderr);
      const printed = setup.json().authenticationConfiguration;
      assert.deepEqual(printed, {
        apiVersion: AUTHN_V1,
        kind: 'AuthenticationConfiguration',
        jwt: [
          {
            issuer: {
              url: cp.hub.issuer,
              audiences: [fresh.url],
              certificateAuthority: readFileSync(cp.hub.caFile, 'utf8'),
            },
            claimMappings: { username: { claim: 'sub', prefix: 'hub:' } },
          },
        ],
      });
      // The file written is the printed configuration.
      assert.match(
        readFileSync(file, 'utf8'),
        /^apiVersion: apiserver.config.k8s.io\/v1\nkind: AuthenticationConfiguration\n/,
      );
      // Restarted with exactly that file (a reload would also do, but kube-apiserver checks the file about once a minute).
      await fresh.restartWithAuthenticationConfig(readFileSync(file, 'utf8'));
      await awaitTrust(fresh, await createServiceAccountToken(cp.hub, ns, sa, { audience: fresh.url }), 60_000);

      const res = await wi(
        [
          'test',
          '--hub',
          'hub',
          '--target',
          fresh.name,
          '--service-account',
          `${ns}/${sa}`,
          '--expect-user',
          user(ns, sa),
          '--can-i',
          'list configmaps -n default',
          '-o',
          'json',
        ],
        [fresh.kubeconfig],
      );
      assert.equal(res.code, 0, res.stdout + res.stderr);
      const [item] = items(res);
      assert.equal(item.user?.username, user(ns, sa));
      assert.deepEqual(failing(item.checks), []);
      // And the doctor, given the very file, agrees with it statically.
      const doc = await wi(
        [
          'doctor',
          '--hub',
          'hub',
          '--target',
          fresh.name,
          '--service-account',
          `${ns}/${sa}`,
          '--authentication-config',
          file,
          '-o',
          'json',
        ],
        [fresh.kubeconfig],
      );
      assert.equal(doc.code, 0, doc.stdout);
      const [dItem] = items(doc);
      for (const name of [
        'config-issuer',
        'config-audience',
        'config-ca',
        'config-username',
        'config-in-use',
        'signature',
        'discovery-anonymous',
        'target-rbac',
      ]) {
        assert.equal(check(dItem.checks, name).status, 'pass', name);
      }
      assertNoToken(doc, 'wi doctor on the fresh member');
    } finally {
      await fresh.stop();
    }
  });

  describe('wi doctor names each broken setup', () => {
    let hub2: ExtraApiserver;
    let slashMember: ExtraApiserver;
    const ns2 = uniqueName('wi-broken');

    before(async () => {
      // A second hub, left as kube-apiserver sets it up: discovery readable by ServiceAccounts only, not anonymously.
      // It trusts no other issuer (no --authentication-config), so it is also "a member that does not trust the hub".
      hub2 = await startExtraApiserver();
      // A member that trusts the sandbox hub spelt with a trailing slash, and hub2 (whose discovery it cannot read).
      slashMember = await startExtraApiserver({
        authenticationConfig: ({ url }) => ({
          apiVersion: AUTHN_V1,
          kind: 'AuthenticationConfiguration',
          jwt: [
            {
              issuer: {
                url: `${cp.hub.issuer}/`,
                audiences: [url],
                certificateAuthority: readFileSync(cp.hub.caFile, 'utf8'),
              },
              claimMappings: { username: { claim: 'sub', prefix: 'hub:' } },
            },
            {
              issuer: { url: hub2.issuer, audiences: [url], certificateAuthority: readFileSync(hub2.caFile, 'utf8') },
              claimMappings: { username: { claim: 'sub', prefix: 'hub2:' } },
            },
          ],
        }),
      });
      await applyYaml(
        hub2,
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns2}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${sa}\n  namespace: ${ns2}\n`,
      );
      await applyYaml(cp.hub, `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${sa}\n  namespace: ${ns}\n`);
    });
    after(async () => {
      await slashMember?.stop();
      await hub2?.stop();
    });

    it('wrong audience', async () => {
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--audience',
        'https://wrong.example:6443',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const [item] = items(res);
      assert.deepEqual(failing(item.checks), ['audience', 'target-response']);
      // The target has an authenticator for the hub's issuer, which saw (and rejected) the token.
      assert.match(
        check(item.checks, 'target-trusts-issuer').message,
        /has a JWT authenticator for exactly .*, and it rejected this token/,
      );
      assert.match(
        check(item.checks, 'audience').message,
        /aud "https:\/\/wrong.example:6443" is not the target's address/,
      );
      assert.match(check(item.checks, 'audience').fix!, new RegExp(`--audience ${member.url}`));
      assert.match(check(item.checks, 'target-response').message, /401 Unauthorized.*audience/);
      for (const ok of [
        'token-request',
        'discovery-anonymous',
        'issuer-matches',
        'jwks-anonymous',
        'signature',
        'expiry',
        'hub-ca',
      ])
        assert.equal(check(item.checks, ok).status, 'pass', ok);
      // wi test fails at authentication and carries the same diagnosis.
      const t = await wi([
        'test',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--audience',
        'https://wrong.example:6443',
        '-o',
        'json',
      ]);
      assert.equal(t.code, 1);
      const [ti] = items(t);
      assert.equal(check(ti.checks, 'target-authenticates').status, 'fail');
      assert.equal(check(ti.diagnosis, 'audience').status, 'fail');
      assertNoToken(res, 'wi doctor (wrong audience)');
      assertNoToken(t, 'wi test (wrong audience)');

      // The same runs with --junit: the failing checks are the failed testcases (wi test's diagnosis as doctor/NAME).
      for (const [command, expected] of [
        ['doctor', ['audience', 'target-response']],
        ['test', ['target-authenticates', 'doctor/audience', 'doctor/target-response']],
      ] as const) {
        const file = join(scratchDir(), `${uniqueName(`wi-${command}-junit`)}.xml`);
        const r = await wi([
          command,
          '--hub',
          'hub',
          '--target',
          'member-1',
          '--service-account',
          `${ns}/${sa}`,
          '--audience',
          'https://wrong.example:6443',
          '--junit',
          file,
        ]);
        assert.equal(r.code, 1, r.stderr);
        const xml = readFileSync(file, 'utf8');
        assert.deepEqual(await junitSchemaErrors(xml), [], `wi ${command}`);
        const cases = junitCases(xml);
        assert.deepEqual(
          cases.filter((c) => c.outcome === 'failure').map((c) => c.name),
          expected,
          `wi ${command}`,
        );
        assert.match(cases.find((c) => c.name.endsWith('audience'))!.message!, /is not the target's address/);
        assertNoToken({ stdout: xml, stderr: '' } as CliResult, `the wi ${command} JUnit file`);
      }
      // A report that cannot be written is a usage error before anything is asked of the hub.
      const bad = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--junit',
        '/nonexistent/dir/r.xml',
      ]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--junit \/nonexistent\/dir\/r.xml: directory \/nonexistent\/dir does not exist/);
    });

    it('an audience that differs only by :443 or a trailing slash is named as such', async () => {
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--audience',
        `${member.url}/`,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const a = check(items(res)[0].checks, 'audience');
      assert.equal(a.status, 'fail');
      assert.match(a.message, /differ only by trailing slash/);
    });

    it("issuer URL differing from the hub's by a trailing slash", async () => {
      const res = await wi(
        ['doctor', '--hub', 'hub', '--target', slashMember.name, '--service-account', `${ns}/${sa}`, '-o', 'json'],
        [slashMember.kubeconfig],
      );
      assert.equal(res.code, 1);
      const [item] = items(res);
      const trust = check(item.checks, 'target-trusts-issuer');
      assert.equal(trust.status, 'fail');
      assert.match(trust.message, new RegExp(`no JWT authenticator for issuer ${cp.hub.issuer}: .*trailing slash`));
      assert.equal(check(item.checks, 'audience').status, 'pass');
      assert.equal(check(item.checks, 'discovery-anonymous').status, 'pass');
      // With the target's file, the static check names the entry.
      const file = slashMember.authenticationConfigFile!;
      const withFile = await wi(
        [
          'doctor',
          '--hub',
          'hub',
          '--target',
          slashMember.name,
          '--service-account',
          `${ns}/${sa}`,
          '--authentication-config',
          file,
          '-o',
          'json',
        ],
        [slashMember.kubeconfig],
      );
      const ci = check(items(withFile)[0].checks, 'config-issuer');
      assert.equal(ci.status, 'fail');
      assert.match(ci.message, /jwt\[0\]\.issuer\.url ".*\/" differs from the hub's issuer ".*" by trailing slash/);
      assert.match(ci.fix!, new RegExp(`exactly "${cp.hub.issuer}"`));
    });

    it('discovery not readable anonymously on the hub', async () => {
      const res = await wi(
        ['doctor', '--hub', hub2.name, '--target', slashMember.name, '--service-account', `${ns2}/${sa}`, '-o', 'json'],
        [hub2.kubeconfig, slashMember.kubeconfig],
      );
      assert.equal(res.code, 1);
      const [item] = items(res);
      const d = check(item.checks, 'discovery-anonymous');
      assert.equal(d.status, 'fail');
      assert.match(d.message, /is not readable without credentials \(HTTP 403/);
      assert.match(d.fix!, /system:service-account-issuer-discovery.*system:unauthenticated/);
      assert.equal(check(item.checks, 'target-response').status, 'fail');
      assert.equal(check(item.checks, 'audience').status, 'pass');
      // The target knows the issuer but could not fetch its keys.
      assert.equal(check(item.checks, 'target-trusts-issuer').status, 'pass');
      assert.match(
        check(item.checks, 'target-trusts-issuer').message,
        /has a JWT authenticator for exactly .*, and it rejected this token/,
      );
    });

    it('a member that does not trust the hub at all', async () => {
      const res = await wi(
        ['doctor', '--hub', 'hub', '--target', hub2.name, '--service-account', `${ns}/${sa}`, '-o', 'json'],
        [hub2.kubeconfig],
      );
      assert.equal(res.code, 1);
      const [item] = items(res);
      const trust = check(item.checks, 'target-trusts-issuer');
      assert.equal(trust.status, 'fail');
      assert.match(
        trust.message,
        new RegExp(`no JWT authenticator for issuer ${cp.hub.issuer}: it does not trust the hub`),
      );
      assert.match(trust.fix!, /--authentication-config/);
      for (const ok of ['discovery-anonymous', 'signature', 'audience', 'expiry'])
        assert.equal(check(item.checks, ok).status, 'pass', ok);
      assert.equal(check(item.checks, 'target-response').status, 'fail');
    });

    it('RBAC missing on the target: authenticated (no 401) but forbidden (403), with the near miss named', async () => {
      const lonely = uniqueName('lonely');
      await applyYaml(
        cp.hub,
        `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${lonely}\n  namespace: ${ns}\n`,
      );
      // A classic mistake: binding the target's own ServiceAccount of that name instead of the hub's identity.
      await grant(member, {
        name: uniqueName('wrong-subject'),
        namespace: ns,
        subject: { kind: 'ServiceAccount', name: lonely, namespace: ns },
        clusterRole: 'view',
      });
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${lonely}`,
        '--can-i',
        `list configmaps -n ${ns}`,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const [item] = items(res);
      assert.deepEqual(failing(item.checks), ['target-rbac', 'can-i']);
      assert.equal(check(item.checks, 'target-response').status, 'pass');
      assert.match(
        check(item.checks, 'target-response').message,
        new RegExp(`authenticated the token as ${user(ns, lonely)}`),
      );
      const rbac = check(item.checks, 'target-rbac');
      assert.match(
        rbac.message,
        new RegExp(
          `no RoleBinding or ClusterRoleBinding on the target names User ${user(ns, lonely)}: it authenticates \\(no 401\\), but beyond what every authenticated user may do its requests are forbidden \\(403\\)`,
        ),
      );
      assert.match(rbac.message, /names ServiceAccount .* \(the target's own ServiceAccount, not the hub's\)/);
      assert.match(check(item.checks, 'can-i').message, /authenticated but not allowed/);
      // The 401 case reads differently: wrong audience gives a can-i that says 401, not 403.
      const unauth = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${lonely}`,
        '--audience',
        'https://wrong.example',
        '--can-i',
        `list configmaps -n ${ns}`,
        '-o',
        'json',
      ]);
      assert.match(
        check(items(unauth)[0].checks, 'can-i').message,
        /401 Unauthorized: the target does not accept the token at all \(not an RBAC problem\)/,
      );
    });

    it("a token another issuer signed (member-2's own ServiceAccount token, for member-1) says so first, and blames neither discovery nor the hub CA", async () => {
      const other = cp.members[1];
      const token = await createServiceAccountToken(other, ns, sa, { audience: member.url });
      const file = join(scratchDir(), `${uniqueName('foreign')}.token`);
      writeFileSync(file, token + '\n', { mode: 0o600 });
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--token-file',
        file,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const [item] = items(res);
      const firstFailure = item.checks.find((c) => c.status === 'fail')!;
      assert.equal(firstFailure.name, 'hub-issuer', JSON.stringify(item.checks, null, 1));
      assert.equal(
        firstFailure.message,
        `the token's iss "${other.issuer}" is not the hub's issuer "${cp.hub.issuer}": the hub did not issue this token, so the target's trust in the hub does not cover it`,
      );
      assert.match(firstFailure.fix!, /^use a token the hub .* issued for /);
      for (const name of ['discovery-anonymous', 'jwks-anonymous', 'signature', 'hub-ca', 'target-trusts-issuer']) {
        assert.equal(check(item.checks, name).status, 'skip', `${name} is not blamed`);
      }
      assert.match(check(item.checks, 'target-response').message, /the failing checks explain why: hub-issuer/);
      const table = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--token-file',
        file,
      ]);
      assert.doesNotMatch(
        table.stdout + table.stderr,
        /system:service-account-issuer-discovery|certificateAuthority/,
        'no fix about anonymous discovery or the hub CA',
      );
      assertNoToken(res, 'wi doctor --token-file (foreign)', [token]);
      assertNoToken(table, 'wi doctor --token-file (foreign, table)', [token]);
    });

    it('a token the hub issued passes hub-issuer', async () => {
      const token = await createServiceAccountToken(cp.hub, ns, sa, { audience: member.url });
      const file = join(scratchDir(), `${uniqueName('own')}.token`);
      writeFileSync(file, token + '\n', { mode: 0o600 });
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--token-file',
        file,
        '-o',
        'json',
      ]);
      const c = check(items(res)[0].checks, 'hub-issuer');
      assert.deepEqual([c.status, c.message], ['pass', `the token's iss is the hub's issuer (${cp.hub.issuer})`]);
      assertNoToken(res, 'wi doctor --token-file (hub)', [token]);
    });

    it("an expired token (signed by the hub's own key; TokenRequest cannot mint one in the past)", async () => {
      const jwks = JSON.parse(await kubectl(cp.hub, ['get', '--raw', '/openid/v1/jwks']));
      const key = await importPKCS8(hubSigningKeyPem(), 'RS256');
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ kubernetes: { io: undefined } })
        .setProtectedHeader({ alg: 'RS256', kid: jwks.keys[0].kid })
        .setIssuer(cp.hub.issuer)
        .setSubject(`system:serviceaccount:${ns}:${sa}`)
        .setAudience(member.url)
        .setIssuedAt(now - 1200)
        .setNotBefore(now - 1200)
        .setExpirationTime(now - 600)
        .sign(key);
      const file = join(scratchDir(), `${uniqueName('expired')}.token`);
      writeFileSync(file, token + '\n', { mode: 0o600 });
      const res = await wi([
        'doctor',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--token-file',
        file,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const [item] = items(res);
      assert.equal(check(item.checks, 'token').status, 'pass');
      const exp = check(item.checks, 'expiry');
      assert.equal(exp.status, 'fail');
      assert.match(exp.message, /the token expired at .*expired 1\dm ago/);
      assert.equal(check(item.checks, 'signature').status, 'pass', "the hub's key signed it");
      assert.match(check(item.checks, 'target-response').message, /401 Unauthorized.*expiry/);
      const t = await wi([
        'test',
        '--hub',
        'hub',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--token-file',
        file,
      ]);
      assert.equal(t.code, 1);
      assert.match(t.stdout, /doctor\/expiry\s+fail/);
      assertNoToken(res, 'wi doctor --token-file', [token]);
      assertNoToken(t, 'wi test --token-file', [token]);
    });
  });
});
