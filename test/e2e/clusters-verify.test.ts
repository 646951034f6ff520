// fleet clusters verify against the real control plane: identities of different power (the admin certificate, static
// token users, ServiceAccount tokens, an exec plugin), each check failing alone for its own reason with the matching
// JUnit testcase failed, the JUnit valid against the schemas CI systems read, GitHub output only when the env says so,
// and no secret in any output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, type Server as NetServer, createServer as createNetServer } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';
import { SignJWT, importPKCS8 } from 'jose';

import { runFleet, type CliResult } from '../support/cli.js';
import {
  applyYaml,
  createServiceAccountToken,
  kubeconfigFor,
  kubectl,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';
import { junitCases, junitSchemaErrors } from '../support/junit.js';
import { hubSigningKeyPem } from '../support/extra-apiserver.js';
import { kubeconfigObject, tokenRequestExecUser } from '../support/kubeconfig.js';
import { closedPort } from '../support/net.js';
import { startCountingProxy } from '../support/counting-proxy.js';
import { makeCa, makeLeaf } from '../support/pki.js';
import { grant } from '../support/rbac.js';

const cp = loadControlPlane();
const hub = cp.hub;
const EXAMPLE_POLICY = fileURLToPath(new URL('../../docs/examples/policy.yaml', import.meta.url));
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));
const CHECKS = [
  'provider-ready',
  'reachable',
  'tls-verified',
  'authenticated',
  'identity',
  'permissions',
  'forbidden-power',
  'credential-lifetime',
  'server-version',
];
// Environment of a run outside GitHub Actions, whatever runs the tests.
const NO_GITHUB = { GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '' };

interface Item {
  cluster: string;
  ok: boolean;
  status: string;
  username?: string;
  checks: Array<{ name: string; status: string; message: string; fix?: string }>;
  error?: { kind: string; message: string };
}

/** What a test made on the cluster for the pipeline's least-privilege identity: a namespace, a ServiceAccount, a Role. */
interface Pipeline {
  ns: string;
  username: string;
  token: string;
  kubeconfig: string;
}

/** Every credential the tests made: no run of the command may print or write any of them. */
const SECRETS = new Set<string>([cp.admin.keyFile, hub.kubeconfig].flatMap(keyMaterial));

/** The base64 and PEM body lines of a key or kubeconfig file's secret parts (what a leak would contain). */
function keyMaterial(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.key')) return text.split('\n').filter((l) => l.length > 40 && !l.startsWith('-----'));
  const user = (yaml.load(text) as any).users[0].user;
  return [user['client-key-data'], user.token].filter(Boolean);
}

async function pipelineIdentity(duration = '720h'): Promise<Pipeline> {
  const ns = uniqueName('verify-ci');
  const token = await createServiceAccountToken(hub, ns, 'deployer', { duration });
  SECRETS.add(token);
  await grant(hub, {
    name: 'deployer',
    namespace: ns,
    subject: { kind: 'ServiceAccount', name: 'deployer', namespace: ns },
    rules: [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create', 'update', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update'] },
    ],
  });
  return {
    ns,
    username: `system:serviceaccount:${ns}:deployer`,
    token,
    kubeconfig: kubeconfigFor(hub, { token }, { name: uniqueName('deployer') }),
  };
}

/** A policy that the pipeline identity passes in full: every check on, nothing skipped. */
function strictPolicy(p: Pipeline, extra = ''): string {
  return `# yaml-language-server: $schema=schemas/verify-policy.schema.json
apiVersion: fleet/v1alpha1
kind: VerifyPolicy
checks:
  identity:
    username: ${p.username}
    groups: [system:serviceaccounts]
  permissions:
    - {verb: create, resource: deployments.apps, namespace: ${p.ns}}
    - {verb: update, resource: configmaps, namespace: ${p.ns}}
    - {verb: get, nonResourceURL: /version}
  forbiddenPower:
    systemMasters: fail
    clusterAdmin: fail
    risks: [read-secrets, escalate, bind, impersonate, create-token, pods-exec]
    namespaces: [${p.ns}]
  credentials:
    minLifetime: 24h
  version:
    range: ">=1.30 <1.36"
${extra}`;
}

function policyFile(text: string): string {
  const path = join(scratchDir(), `${uniqueName('policy')}.yaml`);
  writeFileSync(path, text);
  return path;
}

async function verify(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ res: CliResult; junit: string; junitPath: string }> {
  const junitPath = join(scratchDir(), `${uniqueName('junit')}.xml`);
  const res = await runFleet(['clusters', 'verify', '--junit', junitPath, ...args], { env: { ...NO_GITHUB, ...env } });
  const files = [junitPath, ...(env.GITHUB_STEP_SUMMARY ? [env.GITHUB_STEP_SUMMARY] : [])];
  assertNoSecrets(res, [...SECRETS], files);
  return { res, junit: existsSync(junitPath) ? readFileSync(junitPath, 'utf8') : '', junitPath };
}

function items(res: CliResult): Item[] {
  const out = res.json();
  assert.equal(out.kind, 'VerifyReport', res.stderr);
  return out.items;
}

const statuses = (item: Item) => Object.fromEntries(item.checks.map((c) => [c.name, c.status]));

/** Every check passes except `failing` (which fail), and `skipped` (which are skipped). */
function assertOnly(item: Item, failing: string[], skipped: string[] = []) {
  const expected = Object.fromEntries(
    CHECKS.map((n) => [n, failing.includes(n) ? 'fail' : skipped.includes(n) ? 'skip' : 'pass']),
  );
  assert.deepEqual(statuses(item), expected, JSON.stringify(item.checks, null, 2));
  for (const c of item.checks.filter((x) => x.status === 'fail')) assert.ok(c.fix, `${c.name} has a fix`);
}

async function assertJUnit(junit: string, failing: string[]) {
  assert.deepEqual(await junitSchemaErrors(junit), []);
  assert.deepEqual(
    junitCases(junit)
      .filter((c) => c.outcome === 'failure')
      .map((c) => c.name),
    failing,
  );
}

function assertNoSecrets(res: CliResult, secrets: string[], files: string[] = []) {
  for (const s of secrets) {
    assert.ok(!res.stdout.includes(s), 'a secret in stdout');
    assert.ok(!res.stderr.includes(s), 'a secret in stderr');
    for (const f of files) if (existsSync(f)) assert.ok(!readFileSync(f, 'utf8').includes(s), `a secret in ${f}`);
  }
}

describe('fleet clusters verify (live)', () => {
  let ci: Pipeline;
  before(async () => {
    ci = await pipelineIdentity();
  });

  it('a least-privilege pipeline credential passes a policy with every check on: exit 0, valid JUnit, no failure', async () => {
    const { res, junit, junitPath } = await verify([
      '--kubeconfig',
      ci.kubeconfig,
      '--policy',
      policyFile(strictPolicy(ci)),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const [item] = items(res);
    assertOnly(item, []);
    assert.equal(item.ok, true);
    assert.equal(item.username, ci.username);
    assert.match(
      item.checks.find((c) => c.name === 'credential-lifetime')!.message,
      /^token \(JWT exp\) expires \d{4}-/,
    );
    assert.match(item.checks.find((c) => c.name === 'permissions')!.message, /^all 3 allowed$/);
    assert.match(
      item.checks.find((c) => c.name === 'server-version')!.message,
      /^v1\.34\.\d+ is within >=1\.30 <1\.36$/,
    );
    assert.deepEqual(Object.keys(item.checks[0]).sort(), ['message', 'name', 'status']);
    const report = res.json();
    assert.deepEqual(
      [report.ok, report.strict, report.summary],
      [true, false, { clusters: 1, passed: 1, failed: 0, checks: { pass: 9, fail: 0, warn: 0, skip: 0 } }],
    );
    await assertJUnit(junit, []);
    assertNoSecrets(res, [ci.token], [junitPath]);
  });

  it('a missing permission fails permissions alone, naming the denied review: exit 1, the permissions testcase failed', async () => {
    // Through a rule whose selector matches every cluster (no label "nowhere"), so rules add to the common list too.
    const policy = strictPolicy(
      ci,
      `rules:\n  - selector: "!nowhere"\n    checks:\n      permissions:\n        - {verb: delete, resource: deployments.apps, namespace: ${ci.ns}}\n`,
    );
    const { res, junit } = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policyFile(policy), '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(item, ['permissions']);
    assert.equal(
      item.checks.find((c) => c.name === 'permissions')!.message,
      `1 of 4 denied: delete deployments.apps in namespace ${ci.ns}`,
    );
    await assertJUnit(junit, ['permissions']);
  });

  it('the admin certificate where unrestricted power is forbidden fails forbidden-power alone', async () => {
    const policy = policyFile(`apiVersion: fleet/v1alpha1
kind: VerifyPolicy
checks:
  identity: {username: ${cp.admin.user}}
  permissions: [{verb: create, resource: deployments.apps, namespace: default}]
  forbiddenPower: {systemMasters: fail, clusterAdmin: fail, risks: [impersonate], namespaces: [default]}
  version: {range: ">=1.30"}
`);
    const { res, junit } = await verify(['--kubeconfig', hub.kubeconfig, '--policy', policy, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(item, ['forbidden-power']);
    assert.equal(
      item.checks.find((c) => c.name === 'forbidden-power')!.message,
      'member of system:masters (RBAC cannot restrict it); may do anything cluster-wide (cluster-admin); risks in namespace default: impersonate',
    );
    await assertJUnit(junit, ['forbidden-power']);
  });

  it('without a policy the admin certificate passes with a warning for system:masters; --strict makes it fail', async () => {
    const { res, junit } = await verify(['--kubeconfig', hub.kubeconfig, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = items(res);
    assert.deepEqual(statuses(item), {
      'provider-ready': 'pass',
      reachable: 'pass',
      'tls-verified': 'pass',
      authenticated: 'pass',
      identity: 'skip',
      permissions: 'skip',
      'forbidden-power': 'warn',
      'credential-lifetime': 'pass',
      'server-version': 'skip',
    });
    await assertJUnit(junit, []);
    const strict = await verify(['--kubeconfig', hub.kubeconfig, '--strict', '-o', 'json']);
    assert.equal(strict.res.code, 1);
    await assertJUnit(strict.junit, ['forbidden-power']);
  });

  it('a token under the minimum lifetime fails credential-lifetime alone', async () => {
    const short = await pipelineIdentity('10m');
    const { res, junit } = await verify([
      '--kubeconfig',
      short.kubeconfig,
      '--policy',
      policyFile(strictPolicy(short)),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(item, ['credential-lifetime']);
    assert.match(
      item.checks.find((c) => c.name === 'credential-lifetime')!.message,
      /^token \(JWT exp\) expires \S+, in (9|10)m: under the minimum of 24h \(credentials\.minLifetime\)$/,
    );
    await assertJUnit(junit, ['credential-lifetime']);
    assertNoSecrets(res, [short.token]);
  });

  it("an exec plugin's credential with 10 minutes left passes: the plugin renews it; one already expired fails credential-lifetime alone; the plugin runs once", async () => {
    const bob = tokenUser(hub, 'bob');
    SECRETS.add(bob.token);
    const count = join(scratchDir(), `${uniqueName('plugin-count')}.txt`);
    const path = kubeconfigFor(hub, {
      exec: {
        command: process.execPath,
        args: [PLUGIN, '--count', count, '--tokens', bob.token, '--expires-in', '600'],
      },
    });
    const policy = policyFile(
      'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nchecks:\n  identity: {username: bob}\n  permissions: [{verb: get, nonResourceURL: /version}]\n  version: {range: "1.34.x"}\n  credentials: {minLifetime: 24h}\n',
    );
    const { res, junit } = await verify(['--kubeconfig', path, '--policy', policy, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = items(res);
    assertOnly(item, []);
    assert.match(
      item.checks.find((c) => c.name === 'credential-lifetime')!.message,
      /^exec plugin credential \(expirationTimestamp\) expires \S+, in (9|10)m; the exec plugin renews it \(valid now is enough\)$/,
    );
    assert.equal(
      readFileSync(count, 'utf8').trim().split('\n').length,
      1,
      'one plugin run for every request and the lifetime check',
    );
    await assertJUnit(junit, []);
    assertNoSecrets(res, [bob.token]);

    // A plugin that answers with a credential already expired is broken, whatever the policy.
    const expired = kubeconfigFor(hub, {
      exec: { command: process.execPath, args: [PLUGIN, '--tokens', bob.token, '--expires-in=-60'] },
    });
    const bad = await verify(['--kubeconfig', expired, '--policy', policy, '-o', 'json']);
    assert.equal(bad.res.code, 1, bad.res.stderr);
    const [badItem] = items(bad.res);
    assertOnly(badItem, ['credential-lifetime']);
    const lifetime = badItem.checks.find((c) => c.name === 'credential-lifetime')!;
    assert.match(
      lifetime.message,
      /^exec plugin credential \(expirationTimestamp\) expired (6\d|5\d)s ago \(\S+\): the exec plugin returned a credential that is no longer valid$/,
    );
    assert.match(lifetime.fix!, /run the exec plugin by hand/);
    await assertJUnit(bad.junit, ['credential-lifetime']);
  });

  it('defaults: an exec context whose plugin mints a real 15-minute token (TokenRequest, like a cloud CLI) passes; fleet.dev/auth=exec selects it', async () => {
    const ns = uniqueName('verify-exec');
    const user = tokenRequestExecUser(cp, hub, { namespace: ns, serviceAccount: 'cloud-cli' });
    const path = kubeconfigFor(hub, user, { name: uniqueName('exec-15m') });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = items(res);
    assert.equal(
      item.username,
      `system:serviceaccount:${ns}:cloud-cli`,
      'the token the plugin minted is the one the server saw',
    );
    assert.deepEqual(
      statuses(item),
      {
        'provider-ready': 'pass',
        reachable: 'pass',
        'tls-verified': 'pass',
        authenticated: 'pass',
        identity: 'skip',
        permissions: 'skip',
        'forbidden-power': 'pass',
        'credential-lifetime': 'pass',
        'server-version': 'skip',
      },
      JSON.stringify(item.checks, null, 2),
    );
    assert.match(
      item.checks.find((c) => c.name === 'credential-lifetime')!.message,
      /^exec plugin credential \(expirationTimestamp\) expires \S+, in 1[45]m; the exec plugin renews it/,
    );
    await assertJUnit(junit, []);
    const strict = await verify(['--kubeconfig', path, '--strict', '-o', 'json']);
    assert.equal(strict.res.code, 0, `nothing even warns: ${strict.res.stderr}`);

    // The auth label: -l selects by it, and a policy rule applies by it (here one that would fail any exec context).
    const both = `${path}:${hub.kubeconfig}`;
    const selected = await verify(['--kubeconfig', both, '-l', 'fleet.dev/auth=exec', '-o', 'json']);
    assert.deepEqual(
      items(selected.res).map((i) => i.cluster),
      [`${path}+${basename(path).replace(/\.kubeconfig$/, '')}`],
    );
    const certs = await verify(['--kubeconfig', both, '-l', 'fleet.dev/auth=client-cert', '-o', 'json']);
    assert.deepEqual(
      items(certs.res).map((i) => i.cluster),
      [`${hub.kubeconfig}+hub`],
    );
    const rule = policyFile(
      'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nrules:\n  - name: exec-users\n    selector: fleet.dev/auth=exec\n    checks:\n      identity: {username: nobody}\n',
    );
    const ruled = await verify(['--kubeconfig', both, '-A', '--policy', rule, '-o', 'json']);
    const byCluster = Object.fromEntries(items(ruled.res).map((i) => [i.cluster, i]));
    assert.equal(statuses(byCluster[`${path}+${basename(path).replace(/\.kubeconfig$/, '')}`]).identity, 'fail');
    assert.equal(statuses(byCluster[`${hub.kubeconfig}+hub`]).identity, 'skip');
    assert.deepEqual(
      (ruled.res.json().items as Array<{ cluster: string; rules: string[] }>).map((i) => i.rules),
      items(ruled.res).map((i) => (i.cluster.startsWith(path) ? ['exec-users'] : [])),
    );
  });

  it("defaults: a freshly minted 2-hour ServiceAccount token (a CI job's) passes without a warning", async () => {
    const ns = uniqueName('verify-ci2h');
    const token = await createServiceAccountToken(hub, ns, 'ci', { duration: '2h' });
    SECRETS.add(token);
    const path = kubeconfigFor(hub, { token }, { name: uniqueName('ci-2h') });
    const { res, junit } = await verify(['--kubeconfig', path, '--strict', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const lifetime = items(res)[0].checks.find((c) => c.name === 'credential-lifetime')!;
    assert.equal(lifetime.status, 'pass');
    assert.match(lifetime.message, /^token \(JWT exp\) expires \S+, in 1\d\dm \(minimum 30m\)$/);
    await assertJUnit(junit, []);
    assertNoSecrets(res, [token]);
  });

  it('defaults: a stored token about to expire (10 minutes left) fails, the fix naming minLifetime and the rule to add', async () => {
    const ns = uniqueName('verify-short');
    const token = await createServiceAccountToken(hub, ns, 'ci', { duration: '10m' });
    SECRETS.add(token);
    const path = kubeconfigFor(hub, { token }, { name: uniqueName('short') });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const lifetime = items(res)[0].checks.find((c) => c.name === 'credential-lifetime')!;
    assert.equal(lifetime.status, 'fail');
    assert.match(
      lifetime.message,
      /^token \(JWT exp\) expires \S+, in (9|10)m: under the minimum of 30m \(credentials\.minLifetime\)$/,
    );
    assert.match(
      lifetime.fix!,
      /^issue a credential that lives longer than 30m; or, if it is short-lived by design, lower credentials\.minLifetime for such clusters: add under rules: \{selector: "fleet\.dev\/auth=token", checks: \{credentials: \{minLifetime: [89]m\}\}\}$/,
    );
    assert.doesNotMatch(lifetime.fix!, /renew/);
    await assertJUnit(junit, ['credential-lifetime']);
    // The rule the fix names, added as written, makes it pass.
    const rule = /add under rules: (\{.*\})$/.exec(lifetime.fix!)![1];
    const fixed = await verify([
      '--kubeconfig',
      path,
      '--policy',
      policyFile(`apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nrules:\n  - ${rule}\n`),
      '-o',
      'json',
    ]);
    assert.equal(fixed.res.code, 0, fixed.res.stderr);
    assertNoSecrets(res, [token]);
  });

  it('defaults: a stored token issued for 60 days with 3 days left warns (--strict fails); one issued for 3 days does not', async () => {
    const ns = uniqueName('verify-old');
    await createServiceAccountToken(hub, ns, 'ci', { duration: '10m' });
    const uid = JSON.parse(await kubectl(hub, ['get', 'serviceaccount', 'ci', '-n', ns, '-o', 'json'])).metadata.uid;
    const jwks = JSON.parse(await kubectl(hub, ['get', '--raw', '/openid/v1/jwks']));
    const key = await importPKCS8(hubSigningKeyPem(), 'RS256');
    const now = Math.floor(Date.now() / 1000);
    // TokenRequest cannot mint a token issued in the past: sign one with the hub's own key, as the hub would have.
    const sign = (issued: number, expires: number) =>
      new SignJWT({ 'kubernetes.io': { namespace: ns, serviceaccount: { name: 'ci', uid } } })
        .setProtectedHeader({ alg: 'RS256', kid: jwks.keys[0].kid })
        .setIssuer(hub.issuer)
        .setSubject(`system:serviceaccount:${ns}:ci`)
        .setAudience(hub.issuer)
        .setIssuedAt(issued)
        .setNotBefore(issued)
        .setExpirationTime(expires)
        .sign(key);
    const old = await sign(now - 60 * 86_400, now + 3 * 86_400);
    const fresh = await sign(now - 60, now + 3 * 86_400);
    SECRETS.add(old).add(fresh);
    const oldPath = kubeconfigFor(hub, { token: old }, { name: uniqueName('old') });
    const { res, junit } = await verify(['--kubeconfig', oldPath, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const [item] = items(res);
    assert.equal(statuses(item).authenticated, 'pass', 'the server accepts the hand-signed token');
    const lifetime = item.checks.find((c) => c.name === 'credential-lifetime')!;
    assert.equal(lifetime.status, 'warn');
    assert.match(
      lifetime.message,
      /^token \(JWT exp\) expires \S+, in (3d|7[12]h): under 7d \(credentials\.warnLifetime\)$/,
    );
    assert.match(lifetime.fix!, /^renew the credential before it expires/);
    await assertJUnit(junit, []);
    const strict = await verify(['--kubeconfig', oldPath, '--strict', '-o', 'json']);
    assert.equal(strict.res.code, 1);
    await assertJUnit(strict.junit, ['credential-lifetime']);

    const freshPath = kubeconfigFor(hub, { token: fresh }, { name: uniqueName('fresh') });
    const short = await verify(['--kubeconfig', freshPath, '--strict', '-o', 'json']);
    assert.equal(short.res.code, 0, short.res.stderr);
    assert.equal(statuses(items(short.res)[0])['credential-lifetime'], 'pass');
    assertNoSecrets(res, [old]);
    assertNoSecrets(short.res, [fresh]);
  });

  it('an exec plugin that fails fails authenticated; reachable and the lifetime are not checked', async () => {
    const count = join(scratchDir(), `${uniqueName('plugin-count')}.txt`);
    const path = kubeconfigFor(hub, {
      exec: { command: process.execPath, args: [PLUGIN, '--count', count, '--fail', 'no session'] },
    });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    const [item] = items(res);
    assertOnly(
      item,
      ['authenticated'],
      [
        'reachable',
        'tls-verified',
        'identity',
        'permissions',
        'forbidden-power',
        'credential-lifetime',
        'server-version',
      ],
    );
    assert.match(item.checks.find((c) => c.name === 'authenticated')!.message, /exec plugin/);
    assert.equal(
      readFileSync(count, 'utf8').trim().split('\n').length,
      1,
      'the failing plugin runs once, not again for the lifetime check',
    );
    await assertJUnit(junit, ['authenticated']);
  });

  it('an insecure-skip-tls-verify context fails tls-verified alone; allowed by the policy it warns, and --strict fails it', async () => {
    const path = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('insecure')}.kubeconfig`),
      server: hub.url,
      insecureSkipTlsVerify: true,
      context: 'insecure',
      user: { token: ci.token },
    });
    const policy = strictPolicy(ci);
    const { res, junit } = await verify(['--kubeconfig', path, '--policy', policyFile(policy), '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(item, ['tls-verified']);
    assert.equal(
      item.checks.find((c) => c.name === 'tls-verified')!.message,
      'insecure-skip-tls-verify is set: the server certificate is not verified',
    );
    await assertJUnit(junit, ['tls-verified']);

    const allowed = policyFile(policy.replace('checks:\n', 'checks:\n  tls: {allowInsecure: true}\n'));
    const warn = await verify(['--kubeconfig', path, '--policy', allowed, '-o', 'json']);
    assert.equal(warn.res.code, 0, warn.res.stderr);
    assert.equal(statuses(items(warn.res)[0])['tls-verified'], 'warn');
    await assertJUnit(warn.junit, []);
    const strict = await verify(['--kubeconfig', path, '--policy', allowed, '--strict']);
    assert.equal(strict.res.code, 1);
    await assertJUnit(strict.junit, ['tls-verified']);
    assertNoSecrets(strict.res, [ci.token]);
  });

  it('an unreachable cluster fails reachable; what needs the server is skipped, the offline lifetime still checked', async () => {
    const port = await closedPort();
    const path = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('closed')}.kubeconfig`),
      server: `https://127.0.0.1:${port}`,
      caFile: hub.caFile,
      context: 'closed',
      user: { token: ci.token },
    });
    const { res, junit } = await verify(['--kubeconfig', path, '--policy', policyFile(strictPolicy(ci)), '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(
      item,
      ['reachable'],
      ['tls-verified', 'authenticated', 'identity', 'permissions', 'forbidden-power', 'server-version'],
    );
    assert.equal(
      item.checks.find((c) => c.name === 'reachable')!.message,
      `https://127.0.0.1:${port}: connection refused`,
    );
    await assertJUnit(junit, ['reachable']);
  });

  it('an https URL whose port speaks plain HTTP says so, with the fix (http:// or the TLS port), not a CA to trust', async () => {
    const plain = createHttpServer((_req, res) => res.end('{"kind":"Status"}'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const port = (plain.address() as AddressInfo).port;
      const path = writeKubeconfig({
        path: join(scratchDir(), `${uniqueName('plain')}.kubeconfig`),
        server: `https://127.0.0.1:${port}`,
        caFile: hub.caFile,
        context: 'plain',
        user: { token: ci.token },
      });
      const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
      assert.equal(res.code, 1, res.stderr);
      const tls = items(res)[0].checks.find((c) => c.name === 'tls-verified')!;
      assert.equal(tls.status, 'fail');
      assert.equal(
        tls.message,
        `https://127.0.0.1:${port}: this port speaks plain HTTP, not HTTPS (it answered the TLS handshake in HTTP)`,
      );
      assert.match(
        tls.fix!,
        /^write the server as http:\/\/HOST:PORT if this endpoint is meant to be plain HTTP, or use the port where the API server serves TLS/,
      );
      assert.doesNotMatch(tls.fix!, /trust the CA|certificate-authority-data/);
      await assertJUnit(junit, ['tls-verified']);
      const table = await verify(['--kubeconfig', path]);
      assert.match(
        table.res.stderr,
        /tls-verified \(fail\): https:\/\/127\.0\.0\.1:\d+: this port speaks plain HTTP, not HTTPS .*; fix: write the server as http:\/\//,
      );
    } finally {
      plain.close();
    }
  });

  it('a dead proxy-url is reported as the proxy failing, naming it with its password masked, not as the API server refusing', async () => {
    const port = await closedPort();
    const password = `pw${uniqueName('proxy')}`;
    SECRETS.add(password);
    const path = join(scratchDir(), `${uniqueName('proxied')}.kubeconfig`);
    const doc = kubeconfigObject({
      path,
      server: hub.url,
      caFile: hub.caFile,
      context: 'proxied',
      user: { token: ci.token },
    }) as any;
    doc.clusters[0].cluster['proxy-url'] = `http://squid:${password}@127.0.0.1:${port}`;
    writeFileSync(path, yaml.dump(doc), { mode: 0o600 });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const reachable = items(res)[0].checks.find((c) => c.name === 'reachable')!;
    assert.equal(reachable.status, 'fail');
    assert.match(
      reachable.message,
      new RegExp(
        `^proxy http://squid:[^@]+@127\\.0\\.0\\.1:${port}: connection refused: the proxy \\(proxy-url\\) failed, the API server ${hub.url.replace(/\./g, '\\.')} was not contacted$`,
      ),
    );
    assert.match(reachable.fix!, /^check the cluster's proxy-url/);
    await assertJUnit(junit, ['reachable']);
    assertNoSecrets(res, [password]);
  });

  it('a server version outside the range fails server-version alone', async () => {
    const policy = strictPolicy(ci).replace('">=1.30 <1.36"', '"<1.34 || >=1.35"');
    const { res, junit } = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policyFile(policy), '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const [item] = items(res);
    assertOnly(item, ['server-version']);
    assert.match(
      item.checks.find((c) => c.name === 'server-version')!.message,
      /^v1\.34\.\d+ is outside <1\.34 \|\| >=1\.35$/,
    );
    await assertJUnit(junit, ['server-version']);
  });

  it('an unexpected identity fails identity alone, exact and by pattern', async () => {
    const exact = strictPolicy(ci).replace(`username: ${ci.username}`, 'username: system:serviceaccount:ci:deployer');
    const a = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policyFile(exact), '-o', 'json']);
    assert.equal(a.res.code, 1);
    assertOnly(items(a.res)[0], ['identity']);
    assert.equal(
      items(a.res)[0].checks.find((c) => c.name === 'identity')!.message,
      `username is ${ci.username}, expected system:serviceaccount:ci:deployer`,
    );
    await assertJUnit(a.junit, ['identity']);

    const matching = strictPolicy(ci).replace(
      `username: ${ci.username}`,
      `pattern: "system:serviceaccount:${ci.ns}:.*"`,
    );
    const b = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policyFile(matching), '-o', 'json']);
    assert.equal(b.res.code, 0, b.res.stderr);
    const other = strictPolicy(ci).replace(`username: ${ci.username}`, 'pattern: "system:serviceaccount:other:.*"');
    const c = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policyFile(other), '-o', 'json']);
    assert.equal(c.res.code, 1);
    assertOnly(items(c.res)[0], ['identity']);
  });

  it('a rejected token fails authenticated; what needs an identity is skipped', async () => {
    SECRETS.add('not-a-valid-token-for-anyone');
    const path = kubeconfigFor(hub, { token: 'not-a-valid-token-for-anyone' });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    const [item] = items(res);
    assertOnly(item, ['authenticated'], ['identity', 'permissions', 'forbidden-power', 'server-version']);
    assert.equal(
      item.checks.find((c) => c.name === 'authenticated')!.message,
      'the server rejected the credential (401 Unauthorized)',
    );
    await assertJUnit(junit, ['authenticated']);
    assertNoSecrets(res, ['not-a-valid-token-for-anyone']);
  });

  it('a context without a credential fails authenticated as anonymous', async () => {
    const path = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('anon')}.kubeconfig`),
      server: hub.url,
      caFile: hub.caFile,
      context: 'anon',
      user: { token: '' },
    });
    const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    const [item] = items(res);
    assertOnly(
      item,
      ['authenticated'],
      ['identity', 'permissions', 'forbidden-power', 'credential-lifetime', 'server-version'],
    );
    assert.equal(
      item.checks.find((c) => c.name === 'authenticated')!.message,
      'the server treats the requests as anonymous: no credential was presented or accepted',
    );
    await assertJUnit(junit, ['authenticated']);
  });

  it('annotations and the step summary only when the environment says so, without secrets', async () => {
    const summary = join(scratchDir(), `${uniqueName('summary')}.md`);
    writeFileSync(summary, '# earlier step\n');
    const policy = policyFile(
      strictPolicy(ci).replace(
        'namespace: ' + ci.ns + '}\n    - {verb: update',
        'namespace: kube-system}\n    - {verb: update',
      ),
    );
    const off = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policy]);
    assert.equal(off.res.code, 1);
    assert.doesNotMatch(off.res.stdout + off.res.stderr, /^::(error|warning)/m);
    assert.equal(readFileSync(summary, 'utf8'), '# earlier step\n');

    const on = await verify(['--kubeconfig', ci.kubeconfig, '--policy', policy, '-o', 'json'], {
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: summary,
    });
    assert.equal(on.res.code, 1);
    const cluster = items(on.res)[0].cluster;
    const lines = on.res.stderr.split('\n').filter((l) => l.startsWith('::'));
    assert.deepEqual(lines, [
      `::error title=fleet verify%3A ${cluster.replace(/:/g, '%3A').replace(/,/g, '%2C')}%3A permissions::1 of 3 denied: create deployments.apps in namespace kube-system (fix: grant the identity these permissions (a Role or ClusterRole and a binding), or use a credential that has them)`,
    ]);
    assert.ok(!on.res.stdout.includes('::error'), 'stdout stays JSON');
    const md = readFileSync(summary, 'utf8');
    assert.ok(md.startsWith('# earlier step\n## fleet clusters verify: failed\n'), 'appended, not replaced');
    assert.match(md, /`permissions` \(fail\): 1 of 3 denied: create deployments\.apps in namespace kube-system/);
    assertNoSecrets(on.res, [ci.token], [summary, on.junitPath]);
  });

  it('the table: a row per cluster, a column per check, details of failures below', async () => {
    const bob = tokenUser(hub, 'bob');
    SECRETS.add(bob.token);
    const both = `${hub.kubeconfig}:${bob.kubeconfigPath}`;
    const policy = policyFile(
      'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nchecks:\n  permissions: [{verb: list, resource: namespaces}]\n',
    );
    const { res } = await verify(['--kubeconfig', both, '--all', '--policy', policy]);
    assert.equal(res.code, 1);
    assert.match(
      res.stdout,
      /^CLUSTER\s+PROVIDER-READY\s+REACHABLE\s+TLS-VERIFIED\s+AUTHENTICATED\s+IDENTITY\s+PERMISSIONS\s+FORBIDDEN-POWER\s+CREDENTIAL-LIFETIME\s+SERVER-VERSION$/m,
    );
    // CLUSTER: each file cluster by its context name (issue 41's short names).
    assert.match(res.stdout, /^hub\s+pass\s+pass\s+pass\s+pass\s+-\s+pass\s+warn\s+pass\s+-$/m);
    assert.match(res.stdout, /^bob@hub\s+pass\s+pass\s+pass\s+pass\s+-\s+FAIL\s+pass\s+pass\s+-$/m);
    assert.match(
      res.stderr,
      /\+bob@hub: permissions \(fail\): 1 of 1 denied: list namespaces \(all namespaces\); fix: grant/,
    );
    assert.match(res.stderr, /\+hub: forbidden-power \(warn\): member of system:masters/);
    assert.match(res.stderr, /FAILED: 1 of 2 clusters passed/);
    assertNoSecrets(res, [bob.token]);
  });

  it('a malformed policy is one line naming file, line and field, exit 2, and no report is written', async () => {
    const bad = policyFile(
      'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nchecks:\n  credentials:\n    minLifetim: 24h\n',
    );
    const { res, junit } = await verify(['--kubeconfig', ci.kubeconfig, '--policy', bad]);
    assert.equal(res.code, 2);
    assert.equal(
      res.stderr,
      `error: ${bad}:5: checks.credentials.minLifetim: unknown field (did you mean "minLifetime"?)\n`,
    );
    assert.equal(junit, '', 'no JUnit file');
    const missing = await verify(['--kubeconfig', ci.kubeconfig, '--policy', '/nonexistent/policy.yaml']);
    assert.equal(missing.res.code, 2);
    assert.equal(missing.res.stderr, 'error: --policy /nonexistent/policy.yaml: file not found\n');
    const nowhere = await runFleet(
      ['clusters', 'verify', '--kubeconfig', ci.kubeconfig, '--junit', '/nonexistent/dir/out.xml'],
      { env: NO_GITHUB },
    );
    assert.equal(nowhere.code, 2);
    assert.equal(
      nowhere.stderr,
      'error: --junit /nonexistent/dir/out.xml: directory /nonexistent/dir does not exist\n',
    );
  });

  it('a selection that matches nothing verifies nothing and does not pass', async () => {
    const { res } = await verify(['--kubeconfig', ci.kubeconfig, '-l', 'env=nowhere']);
    assert.equal(res.code, 2);
    // The selection names what matched nothing and what exists (issue 14), on one line.
    assert.match(
      res.stderr,
      /^error: --selector env=nowhere matched none of the \d+ clusters?; label keys in use: [^\n]+\n$/,
    );
    assert.equal(res.stdout.includes('passed'), false);
  });

  it('a provider row that is not ready fails provider-ready with the reason; its ready sibling passes', async () => {
    const ns = uniqueName('verify-secrets');
    const label = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
    const good = yaml.dump(
      kubeconfigObject({ path: '', server: hub.url, caFile: hub.caFile, context: 'good', user: { token: ci.token } }),
    );
    await applyYaml(
      hub,
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'good', namespace: ns, labels: label },
          stringData: { kubeconfig: good },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'no-key', namespace: ns, labels: label },
          stringData: { other: 'x' },
        },
      ]
        .map((d) => yaml.dump(d))
        .join('---\n'),
    );
    const hubInNs = kubeconfigFor(
      hub,
      { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
      { name: uniqueName('hub-ns'), namespace: ns },
    );
    const { res, junit } = await verify([
      '--provider',
      'kubeconfig',
      '--kubeconfig',
      hubInNs,
      '--all',
      '--policy',
      policyFile(strictPolicy(ci)),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const [okItem, notReady] = items(res);
    assert.deepEqual([okItem.cluster, notReady.cluster], ['good', 'no-key']);
    assertOnly(okItem, []);
    assertOnly(notReady, ['provider-ready'], CHECKS.slice(1));
    assert.equal(
      notReady.checks[0].message,
      `not ready in provider kubeconfig: Secret ${ns}/no-key has no data key "kubeconfig"`,
    );
    await assertJUnit(junit, ['provider-ready']);
    assertNoSecrets(res, [ci.token]);
  });

  it('rules apply by cluster label selector: only the cluster labelled env=prod must hold the extra permission', async () => {
    const ns = uniqueName('verify-labels');
    const label = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
    const kubeconfig = yaml.dump(
      kubeconfigObject({ path: '', server: hub.url, caFile: hub.caFile, context: 'ci', user: { token: ci.token } }),
    );
    await applyYaml(
      hub,
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'dev', namespace: ns, labels: { ...label, env: 'dev' } },
          stringData: { kubeconfig },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'prod', namespace: ns, labels: { ...label, env: 'prod' } },
          stringData: { kubeconfig },
        },
      ]
        .map((d) => yaml.dump(d))
        .join('---\n'),
    );
    const hubInNs = kubeconfigFor(
      hub,
      { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
      { name: uniqueName('hub-ns'), namespace: ns },
    );
    const policy = strictPolicy(
      ci,
      `rules:\n  - name: production\n    selector: env=prod\n    checks:\n      permissions:\n        - {verb: delete, resource: namespaces}\n`,
    );
    const { res, junit } = await verify([
      '--provider',
      'kubeconfig',
      '--kubeconfig',
      hubInNs,
      '--all',
      '--policy',
      policyFile(policy),
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const [dev, prod] = items(res) as Array<Item & { rules: string[] }>;
    assert.deepEqual([dev.cluster, dev.rules, prod.cluster, prod.rules], ['dev', [], 'prod', ['production']]);
    assertOnly(dev, []);
    assertOnly(prod, ['permissions']);
    assert.equal(
      prod.checks.find((c) => c.name === 'permissions')!.message,
      '1 of 4 denied: delete namespaces (all namespaces)',
    );
    assert.deepEqual(
      junitCases(junit)
        .filter((c) => c.outcome === 'failure')
        .map((c) => [c.suite, c.name]),
      [['prod', 'permissions']],
    );
    // -l narrows the fleet first: the dev cluster alone passes.
    const devOnly = await verify([
      '--provider',
      'kubeconfig',
      '--kubeconfig',
      hubInNs,
      '-l',
      'env=dev',
      '--policy',
      policyFile(policy),
    ]);
    assert.equal(devOnly.res.code, 0, devOnly.res.stderr);
  });

  it('discovers each cluster once, however many permissions the policy lists (requests counted by a pass-through proxy)', async () => {
    const proxy = await startCountingProxy(hub);
    try {
      // Two clusters (contexts) behind the one proxy, each its own client: discovery once for each, not once per permission.
      const files = ['one', 'two'].map((context) =>
        writeKubeconfig({
          path: join(scratchDir(), `${uniqueName(`counted-${context}`)}.kubeconfig`),
          server: proxy.url,
          caFile: proxy.caFile,
          context,
          user: { token: ci.token },
        }),
      );
      const policy = `apiVersion: fleet/v1alpha1
kind: VerifyPolicy
checks:
  permissions:
    - {verb: create, resource: deployments.apps, namespace: ${ci.ns}}
    - {verb: get, resource: deploy, namespace: ${ci.ns}}
    - {verb: update, resource: configmaps, namespace: ${ci.ns}}
    - {verb: list, resource: cm, namespace: ${ci.ns}}
    - {verb: get, nonResourceURL: /version}
`;
      const { res } = await verify([
        '--kubeconfig',
        files.join(':'),
        '--all',
        '--policy',
        policyFile(policy),
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const checked = items(res);
      assert.deepEqual(
        checked.map((i) => [i.cluster.split('+').pop(), statuses(i).permissions]),
        [
          ['one', 'pass'],
          ['two', 'pass'],
        ],
      );
      const count = (key: string) => proxy.counts.get(key) ?? 0;
      // Aggregated discovery: GET /api and GET /apis, once per cluster (before the cache: once per resource permission, 8 each).
      assert.deepEqual(
        [count('GET /api'), count('GET /apis')],
        [2, 2],
        JSON.stringify(Object.fromEntries(proxy.counts)),
      );
      // The access reviews themselves are still one per permission (4 resource + 1 non-resource) per cluster, plus the
      // cluster-admin power review: the cache saved requests, not questions.
      assert.equal(
        count('POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews'),
        2 * (5 + 1),
        JSON.stringify(Object.fromEntries(proxy.counts)),
      );
    } finally {
      await proxy.close();
    }
  });

  describe('an API server that is not ready', () => {
    // A real kube-apiserver cannot be made unready on demand without breaking the shared control plane: this HTTPS
    // double answers /version and a failing /readyz the way kube-apiserver does.
    let server: Server;
    let caFile: string;
    before(async () => {
      const dir = scratchDir();
      const ca = await makeCa(dir, uniqueName('double-ca'), 'double-ca');
      const leaf = await makeLeaf({
        ca,
        dir,
        base: uniqueName('double'),
        cn: '127.0.0.1',
        usage: 'server',
        ips: ['127.0.0.1'],
      });
      caFile = ca.certFile;
      server = createServer({ cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) }, (req, res) => {
        if (req.url === '/version')
          return res.writeHead(200, { 'content-type': 'application/json' }).end('{"gitVersion":"v1.34.10"}');
        if (req.url?.startsWith('/readyz')) {
          const verbose = req.url.includes('verbose');
          return res
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(
              verbose
                ? '[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]poststarthook/start-apiextensions-informers failed: reason withheld\nreadyz check failed\n'
                : '[-]etcd failed: reason withheld\nreadyz check failed\n',
            );
        }
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    after(() => server.close());

    it('fails reachable, naming the failing checks of /readyz?verbose', async () => {
      const port = (server.address() as { port: number }).port;
      SECRETS.add('x'.repeat(24));
      const path = writeKubeconfig({
        path: join(scratchDir(), `${uniqueName('unready')}.kubeconfig`),
        server: `https://127.0.0.1:${port}`,
        caFile,
        context: 'unready',
        user: { token: 'x'.repeat(24) },
      });
      const { res, junit } = await verify(['--kubeconfig', path, '-o', 'json']);
      assert.equal(res.code, 1);
      const [item] = items(res);
      assert.equal(statuses(item).reachable, 'fail');
      assert.equal(statuses(item)['tls-verified'], 'pass');
      assert.equal(
        item.checks.find((c) => c.name === 'reachable')!.message,
        `https://127.0.0.1:${port} is not ready (/readyz HTTP 500): failing checks: etcd, poststarthook/start-apiextensions-informers`,
      );
      assert.ok(junitCases(junit).some((c) => c.name === 'reachable' && c.outcome === 'failure'));
      assert.deepEqual(await junitSchemaErrors(junit), []);
    });
  });

  describe('a server that accepts and never answers', () => {
    // A hang cannot be produced by a real API server on demand; a TCP listener that never answers stands in.
    let hang: NetServer;
    before(async () => {
      hang = createNetServer(() => {});
      await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    });
    after(() => hang.close());

    it('--cluster-timeout cuts the work short: decided checks are kept, the running one fails with the timeout', async () => {
      const port = (hang.address() as { port: number }).port;
      const path = writeKubeconfig({
        path: join(scratchDir(), `${uniqueName('hang')}.kubeconfig`),
        server: `https://127.0.0.1:${port}`,
        caFile: hub.caFile,
        context: 'hang',
        user: { token: ci.token },
      });
      const { res, junit } = await verify([
        '--kubeconfig',
        path,
        '--request-timeout',
        '0',
        '--cluster-timeout',
        '2s',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 1);
      const [item] = items(res);
      assert.equal(item.error?.kind, 'timeout');
      assertOnly(item, ['reachable'], CHECKS.slice(2));
      assert.equal(item.checks.find((c) => c.name === 'reachable')!.message, 'no result within 2s (--cluster-timeout)');
      assert.equal(item.checks.find((c) => c.name === 'tls-verified')!.message, 'not checked: reachable failed');
      await assertJUnit(junit, ['reachable']);
    });
  });

  describe('done when: the example policy over the sandbox', () => {
    it('passes for hub and members, and fails with the permissions testcase when one credential lacks a permission', async () => {
      const admins = cp.servers.map((s) => s.kubeconfig);
      const { res, junit } = await verify([
        '--kubeconfig',
        admins.join(':'),
        '--all',
        '--policy',
        EXAMPLE_POLICY,
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stdout + res.stderr);
      const all = items(res);
      assert.equal(all.length, cp.servers.length);
      for (const item of all) assert.equal(item.ok, true, JSON.stringify(item.checks));
      assert.deepEqual(await junitSchemaErrors(junit), []);
      assert.equal(junitCases(junit).length, cp.servers.length * CHECKS.length);
      assert.deepEqual(
        junitCases(junit).filter((c) => c.outcome === 'failure'),
        [],
      );

      // The last member reached as alice, who may not list namespaces.
      const last = cp.servers[cp.servers.length - 1];
      const alice = tokenUser(last, 'alice');
      SECRETS.add(alice.token);
      const mixed = [...admins.slice(0, -1), alice.kubeconfigPath];
      const failed = await verify(['--kubeconfig', mixed.join(':'), '--all', '--policy', EXAMPLE_POLICY]);
      assert.equal(failed.res.code, 1);
      assert.deepEqual(await junitSchemaErrors(failed.junit), []);
      const failures = junitCases(failed.junit).filter((c) => c.outcome === 'failure');
      assert.deepEqual(
        failures.map((c) => [c.suite, c.name]),
        [[`${alice.kubeconfigPath}+alice@${last.name}`, 'permissions']],
      );
      assert.equal(failures[0].message, '1 of 2 denied: list namespaces (all namespaces)');
      assertNoSecrets(failed.res, [alice.token], [failed.junitPath]);
    });
  });
});
