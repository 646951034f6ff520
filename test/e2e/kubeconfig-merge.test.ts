// `fleet kubeconfig export --merge-into` and `fleet kubeconfig prune` on the real control plane, read back by the tools
// that use the file (kubectl, grep). Prune: a kubeconfig with a context whose cluster was deleted from the hub, one at a
// closed port that has failed for two days (its earlier failures written into prune's state), one with an expired client certificate, one whose exec plugin must not run, one whose plugin the kuberc
// allows and whose credential has expired, and healthy ones: the plan,
// --dry-run and a refusal off a terminal change no byte, --yes removes exactly those (with their clusters and users)
// after a 0600 backup, and a second prune finds nothing; Ctrl-C at the terminal's prompt leaves the file as it was. The
// newcomer: an empty HOME, one export --merge-into, kubectl through every context, no credential in the file, a second
// run that changes nothing, and someone else's context left byte for byte.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import yaml from 'js-yaml';

import type { KubeconfigPruneResult } from '../../src/commands/kubeconfig/prune.js';
import { FLEET_BIN, runFleet } from '../support/cli.js';
import {
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { assertLibrariesList } from '../support/kubeconfig-consumers.js';
import { closedPort } from '../support/net.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const run = uniqueName('kcmerge');
const dir = join(scratchDir(), run);
mkdirSync(dir, { recursive: true });
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const caData = (s: typeof m1) => b64(readFileSync(s.caFile));
/** `fleet` on PATH, as an installed fleet is: the exec entries export writes run `fleet kubeconfig credential`. */
const binDir = join(dir, 'bin');
mkdirSync(binDir);
writeFileSync(join(binDir, 'fleet'), `#!/bin/sh\nexec '${process.execPath}' '${FLEET_BIN}' "$@"\n`, { mode: 0o755 });
const PATH = `${binDir}:${process.env.PATH}`;
const TOKEN_PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

/** A client certificate for `user`, signed by the control plane's client CA, that expired yesterday. */
async function expiredClientCert(user: string): Promise<{ cert: string; key: string }> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    createPrivateKey(readFileSync(cp.clientCa.keyFile)).export({ format: 'der', type: 'pkcs8' }),
    alg,
    false,
    ['sign'],
  );
  const ca = new x509.X509Certificate(readFileSync(cp.clientCa.certFile, 'utf8'));
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const day = 24 * 3600 * 1000;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomBytes(8).toString('hex'),
    subject: `CN=${user}`,
    issuer: ca.subject,
    notBefore: new Date(Date.now() - 2 * day),
    notAfter: new Date(Date.now() - day),
    signingAlgorithm: alg,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    cert: cert.toString('pem'),
    key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`,
  };
}

/** Every line of `part` is a line of `whole`, in the same order: nothing in `part` was rewritten, only lines added. */
function assertLinesKept(part: string, whole: string): void {
  const lines = whole.split('\n');
  let at = 0;
  for (const line of part.split('\n')) {
    at = lines.indexOf(line, at);
    assert.ok(at >= 0, `line not kept byte for byte: ${line}`);
    at++;
  }
}

/**
 * Prune's record of a server that has failed since `daysAgo` days (src/export/prune-state.ts): what earlier runs would
 * have left, so that this run's failure is the one that makes it `unreachable`, without waiting days.
 */
function seedFailure(stateHome: string, server: string, daysAgo: number): void {
  const since = new Date(Date.now() - daysAgo * 24 * 3600 * 1000).toISOString();
  mkdirSync(join(stateHome, 'fleet'), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(stateHome, 'fleet', 'prune-failures.json'),
    JSON.stringify({
      v: 1,
      servers: { [server]: { since, last: since, runs: 1, error: `${server}: connection refused` } },
    }),
    { mode: 0o600 },
  );
}

const snapshot = (path: string) => ({
  text: readFileSync(path, 'utf8'),
  mtimeMs: statSync(path).mtimeMs,
  mode: statSync(path).mode & 0o777,
});
const backups = (path: string) =>
  readdirSync(join(path, '..')).filter((f) => f.startsWith(`${path.split('/').pop()}.bak-`));

describe('fleet kubeconfig prune', () => {
  const file = join(dir, 'prune', 'config');
  const fleetYaml = join(dir, 'fleet.yaml');
  const marker = join(dir, 'plugin-ran');
  const alice = tokenUser(m1, 'alice');
  const ns = run;
  let own: string;
  let keepCtx: string;
  let goneCtx: string;
  /** Secrets the test made: never in any output. */
  const secrets: string[] = [alice.token];
  const outputs: string[] = [];
  // The kuberc allows one plugin (a wrapper script that runs the test plugin with node), so prune may run it; the
  // marker plugin stays refused. Not node itself: prune judges the file as data, and data may give an interpreter
  // arguments only by a fleet.yaml entry's exact args (issue 46), which a kuberc entry cannot say.
  const kuberc = join(dir, 'kuberc');
  const counted = join(dir, 'plugin-runs');
  const stateHome = join(dir, 'state');
  const fleet = async (args: string[]) => {
    const res = await runFleet(args, {
      env: { FLEET_CONFIG: fleetYaml, PATH, KUBERC: kuberc, XDG_STATE_HOME: stateHome },
    });
    outputs.push(res.stdout, res.stderr);
    return res;
  };

  before(async () => {
    mkdirSync(join(dir, 'prune'));
    // Two clusters on the hub as kubeconfig Secrets (the multicluster-runtime format), both member-2 as admin.
    const secret = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
      data: { kubeconfig: b64(readFileSync(m2.kubeconfig)) },
    });
    await applyYaml(
      hub,
      [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, secret('stays'), secret('deleted')]
        .map((o) => JSON.stringify(o))
        .join('\n---\n'),
    );
    writeFileSync(
      fleetYaml,
      `hub: {kubeconfig: ${hub.kubeconfig}}\nproviders:\n  - {name: secrets, type: kubeconfig, namespace: ${ns}}\n`,
    );

    const expired = await expiredClientCert(`${run}-expired`);
    secrets.push(expired.key);
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(
      plugin,
      `#!/bin/sh\ntouch '${marker}'\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'\n`,
      { mode: 0o755 },
    );
    const port = await closedPort();
    seedFailure(stateHome, `https://127.0.0.1:${port}`, 2);
    const wrapper = join(dir, 'token-plugin');
    writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${TOKEN_PLUGIN}' "$@"\n`, { mode: 0o755 });
    writeFileSync(
      kuberc,
      `apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: ${wrapper}\n`,
    );
    const tokenPlugin = (expiresIn: number) =>
      `{exec: {apiVersion: client.authentication.k8s.io/v1, command: ${wrapper}, args: [--tokens, ${alice.token}, --expires-in=${expiresIn}, --count, ${counted}], interactiveMode: Never}}`;
    // The user's own entries, written the way people write them (comments, flow style, quoting).
    own = [
      '# my kubeconfig',
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: m1   # alice's cluster`,
      `  cluster: {server: "${m1.url}", certificate-authority-data: ${caData(m1)}}`,
      '- name: closed',
      `  cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${caData(m1)}}`,
      '- name: m2',
      '  cluster:',
      `    server: '${m2.url}'`,
      `    certificate-authority-data: ${caData(m2)}`,
      'users:',
      `- name: alice`,
      `  user: {token: ${alice.token}}`,
      '- name: expired',
      '  user:',
      `    client-certificate-data: ${b64(expired.cert)}`,
      `    client-key-data: ${b64(expired.key)}`,
      '- name: plugin',
      `  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never}}`,
      '- name: plugin-expired',
      `  user: ${tokenPlugin(-60)}`,
      '- name: plugin-fresh',
      `  user: ${tokenPlugin(3600)}`,
      'contexts:',
      '- {name: healthy, context: {cluster: m1, user: alice}}',
      '- {name: closed-port, context: {cluster: closed, user: alice}}',
      '- {name: expired-cert, context: {cluster: m2, user: expired}}',
      '- {name: plugin-not-run, context: {cluster: m1, user: plugin}}',
      '- {name: plugin-expired, context: {cluster: m1, user: plugin-expired}}',
      '- {name: plugin-fresh, context: {cluster: m1, user: plugin-fresh}}',
      'current-context: healthy',
      '',
    ].join('\n');
    writeFileSync(file, own, { mode: 0o600 });

    const exported = await fleet(['kubeconfig', 'export', '--all', '--merge-into', file, '-o', 'json']);
    assert.equal(exported.code, 0, exported.stderr);
    const contexts = Object.fromEntries(
      exported.json().items.map((i: { cluster: string; context: string }) => [i.cluster, i.context]),
    );
    [keepCtx, goneCtx] = [contexts.stays, contexts.deleted];
    assert.ok(keepCtx && goneCtx, JSON.stringify(contexts));
    assertLinesKept(own, readFileSync(file, 'utf8'));
    await kubectl(hub, ['delete', 'secret', 'deleted', '-n', ns]);
  });

  after(async () => {
    await kubectlResult(hub, ['delete', 'namespace', ns, '--wait=false']);
    const all = outputs.join('\n');
    for (const s of secrets) assert.ok(!all.includes(s.trim()), 'a secret of the file appeared in the output');
  });

  const REMOVED = () => ({
    contexts: ['closed-port', 'expired-cert', 'plugin-expired', goneCtx],
    clusters: ['closed', 'm2', goneCtx],
    users: ['expired', 'plugin-expired', goneCtx],
  });
  const expectedItems = () => [
    { context: 'healthy', cluster: 'm1', user: 'alice', fleet: false, action: 'keep' },
    { context: 'closed-port', cluster: 'closed', user: 'alice', fleet: false, action: 'remove', reason: 'unreachable' },
    { context: 'expired-cert', cluster: 'm2', user: 'expired', fleet: false, action: 'remove', reason: 'expired' },
    { context: 'plugin-not-run', cluster: 'm1', user: 'plugin', fleet: false, action: 'keep' },
    {
      context: 'plugin-expired',
      cluster: 'm1',
      user: 'plugin-expired',
      fleet: false,
      action: 'remove',
      reason: 'expired',
    },
    { context: 'plugin-fresh', cluster: 'm1', user: 'plugin-fresh', fleet: false, action: 'keep' },
    // Export writes its clusters in the provider's order (by name).
    { context: goneCtx, cluster: goneCtx, user: goneCtx, fleet: true, action: 'remove', reason: 'gone' },
    { context: keepCtx, cluster: keepCtx, user: keepCtx, fleet: true, action: 'keep' },
  ];

  it('shows the plan with --dry-run and changes no byte', async () => {
    const before = snapshot(file);
    const res = await fleet(['kubeconfig', 'prune', file, '--dry-run', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<KubeconfigPruneResult>();
    assert.deepEqual(
      out.items.map(({ message, ...rest }) => rest),
      expectedItems(),
    );
    const why = Object.fromEntries(out.items.map((i) => [i.context, i.message]));
    assert.match(
      why['closed-port'],
      /^https:\/\/127\.0\.0\.1:\d+: connection refused; failing since \d{4}-\d\d-\d\dT[\d:.]+Z \(2 runs\), longer than --unreachable-for 24h$/,
    );
    assert.match(why['expired-cert'], /^client certificate expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(why[goneCtx], `provider "secrets" no longer lists cluster "deleted"`);
    assert.match(why.healthy, /^reachable \(SelfSubjectReview answered 201\)$/);
    assert.match(
      why['plugin-not-run'],
      /^reachable \(\/version answered 200\); exec plugin ".*plugin\.sh" not run \(not in an allowlist\), expiry not known$/,
    );
    assert.match(why[keepCtx], /^reachable \(\/version answered 200\)$/);
    // The plugin the kuberc allows ran (once per credential): its answer's expirationTimestamp decides.
    assert.match(why['plugin-expired'], /^exec credential expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(why['plugin-fresh'], 'reachable (SelfSubjectReview answered 201)');
    assert.equal(readFileSync(counted, 'utf8').trim().split('\n').length, 2);
    // m2 only served the expired context; m1 stays for the healthy ones.
    assert.deepEqual(out.remove, REMOVED());
    assert.deepEqual([out.dryRun, out.pruned, out.backup], [true, false, undefined]);
    assert.deepEqual(snapshot(file), before);
    assert.deepEqual(backups(file), []);
    assert.ok(!existsSync(marker), 'the exec plugin named by the file ran');

    // Run with another fleet configuration (the same content at another path), the export entries cannot be judged by
    // their provider: the deleted cluster's context is kept, and says why.
    const other = join(dir, 'other-fleet.yaml');
    copyFileSync(fleetYaml, other);
    const foreign = await runFleet(['kubeconfig', 'prune', file, '--dry-run', '-o', 'json'], {
      env: { FLEET_CONFIG: other, PATH, KUBERC: kuberc, XDG_STATE_HOME: stateHome },
    });
    outputs.push(foreign.stdout, foreign.stderr);
    const kept = foreign.json<KubeconfigPruneResult>().items.find((i) => i.context === goneCtx)!;
    assert.equal(kept.action, 'keep');
    assert.equal(
      kept.message,
      `reachable (/version answered 200); not checked against its provider: exported with --fleet-config ${fleetYaml}, which this run does not use`,
    );

    const table = await fleet(['kubeconfig', 'prune', file, '--dry-run']);
    assert.equal(table.code, 0);
    assert.match(table.stdout, /^closed-port\s+remove\s+unreachable\s+/m);
    assert.match(
      table.stderr,
      new RegExp(`^dry run: 4 contexts, 3 clusters, 3 users would be removed from ${file}; nothing changed$`, 'm'),
    );
  });

  it('refuses to change the file off a terminal without --yes, in one line, exit 2', async () => {
    const before = snapshot(file);
    for (const extra of [[], ['-o', 'json']]) {
      const res = await fleet(['kubeconfig', 'prune', file, ...extra]);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(
        res.stderr.trim(),
        `error: ${file}: 4 contexts, 3 clusters, 3 users to remove; pass --yes to remove them off a terminal (or --dry-run to only show them)`,
      );
    }
    assert.deepEqual(snapshot(file), before);
    assert.deepEqual(backups(file), []);
  });

  it('with --yes removes exactly those, with the clusters and users only they named, after a 0600 backup', async () => {
    const before = snapshot(file);
    const res = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<KubeconfigPruneResult>();
    assert.equal(out.pruned, true);
    assert.deepEqual(backups(file), [out.backup!.split('/').pop()]);
    assert.match(out.backup!, new RegExp(`^${file}\\.bak-\\d{8}T\\d{6}Z$`));
    assert.equal(readFileSync(out.backup!, 'utf8'), before.text);
    assert.equal(statSync(out.backup!).mode & 0o777, 0o600);
    const after = snapshot(file);
    assert.equal(after.mode, 0o600);
    // Exactly those entries are gone: the rest parses as it did, and every line left was a line before, in order.
    const gone = REMOVED();
    const expected = yaml.load(before.text) as Record<string, Array<{ name: string }>>;
    for (const section of ['contexts', 'clusters', 'users'] as const)
      expected[section] = expected[section].filter((e) => !gone[section].includes(e.name));
    assert.deepEqual(yaml.load(after.text), expected);
    assertLinesKept(after.text, before.text);
    // The survivors work: kubectl through the user's own context and fleet's (its exec entry runs fleet on PATH).
    for (const [context, user] of [
      ['healthy', 'alice'],
      [keepCtx, cp.admin.user],
    ]) {
      const k = spawnSync(
        cp.binaries.kubectl,
        ['--kubeconfig', file, '--context', context, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
        { encoding: 'utf8', env: { ...process.env, PATH, HOME: dir } },
      );
      assert.equal(k.stdout, user, `${context}: ${k.stderr}`);
    }
    assert.ok(!existsSync(marker), 'the exec plugin named by the file ran');
  });

  it('a second prune finds nothing to remove and writes nothing', async () => {
    const before = snapshot(file);
    const res = await fleet(['kubeconfig', 'prune', file, '--yes']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, new RegExp(`^nothing to remove from ${file}$`, 'm'));
    assert.deepEqual(snapshot(file), before);
    assert.equal(backups(file).length, 1);
  });
});

describe('fleet kubeconfig prune at a terminal (tmux)', () => {
  const socket = `fleet-${run}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const pane = (s: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', s);
  async function waitFor(session: string, text: string | RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = pane(session);
      if (typeof text === 'string' ? screen.includes(text) : text.test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${text}; the screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const shell = (args: string[]) =>
    [
      'env',
      '-u',
      'CI',
      'KUBECONFIG=',
      'NO_COLOR=1',
      `HOME=${dir}`,
      'XDG_CONFIG_HOME=/nonexistent-fleet-test-config',
      `XDG_STATE_HOME=${stateHome}`,
      process.execPath,
      FLEET_BIN,
      ...args,
    ]
      .map((a) => `'${a}'`)
      .join(' ');
  const file = join(dir, 'tty', 'config');
  const stateHome = join(dir, 'tty-state');

  before(async () => {
    mkdirSync(join(dir, 'tty'));
    const port = await closedPort();
    seedFailure(stateHome, `https://127.0.0.1:${port}`, 2);
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster: {server: "https://127.0.0.1:${port}"}\n- name: here\n  cluster: {server: "${m1.url}", certificate-authority-data: ${caData(m1)}}\ncontexts:\n- {name: dead, context: {cluster: gone}}\n- {name: alive, context: {cluster: here}}\ncurrent-context: alive\n`,
      { mode: 0o600 },
    );
  });
  after(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  });

  it('Ctrl-C at the confirmation leaves the file as it was: exit 130, no backup, no lock', async () => {
    const before = snapshot(file);
    tmux(
      'new-session',
      '-d',
      '-s',
      'ctrlc',
      '-x',
      '200',
      '-y',
      '50',
      `${shell(['kubeconfig', 'prune', file])}; echo FLEET-EXIT=$?; sleep 120`,
    );
    const plan = await waitFor('ctrlc', '? Remove 1 context, 1 cluster from');
    assert.match(plan, /dead\s+remove\s+unreachable/);
    tmux('send-keys', '-t', 'ctrlc', 'C-c');
    const screen = await waitFor('ctrlc', /FLEET-EXIT=\d+/);
    assert.match(screen, /FLEET-EXIT=130/);
    assert.deepEqual(snapshot(file), before);
    assert.deepEqual(backups(file), []);
    assert.ok(!existsSync(`${file}.lock`));
  });

  it('"no" changes nothing; "yes" prunes, with the backup named', async () => {
    const before = snapshot(file);
    tmux(
      'new-session',
      '-d',
      '-s',
      'no',
      '-x',
      '200',
      '-y',
      '50',
      `${shell(['kubeconfig', 'prune', file])}; echo FLEET-EXIT=$?; sleep 120`,
    );
    await waitFor('no', '? Remove');
    tmux('send-keys', '-t', 'no', 'n', 'Enter');
    assert.match(await waitFor('no', /FLEET-EXIT=\d+/), /nothing changed in .*\n(.*\n)*FLEET-EXIT=0/);
    assert.deepEqual(snapshot(file), before);
    tmux(
      'new-session',
      '-d',
      '-s',
      'yes',
      '-x',
      '200',
      '-y',
      '50',
      `${shell(['kubeconfig', 'prune', file])}; echo FLEET-EXIT=$?; sleep 120`,
    );
    await waitFor('yes', '? Remove');
    tmux('send-keys', '-t', 'yes', 'y', 'Enter');
    const screen = await waitFor('yes', /FLEET-EXIT=\d+/);
    assert.match(screen, /removed 1 context, 1 cluster from .*; backup .*config\.bak-\d{8}T\d{6}Z/);
    assert.match(screen, /FLEET-EXIT=0/);
    assert.equal(backups(file).length, 1);
    assert.ok(!readFileSync(file, 'utf8').includes('dead'));
  });
});

describe('the newcomer: fleet kubeconfig export --all --merge-into ~/.kube/config on the sandbox fleet', () => {
  // The sandbox's `eval "$(npm run -s sandbox -- env)"`: KUBECONFIG names every cluster's admin kubeconfig.
  const sandbox = [hub, m1, m2].map((s) => s.kubeconfig).join(':');
  const kubectlIn = (home: string, args: string[]) =>
    spawnSync(cp.binaries.kubectl, args, {
      encoding: 'utf8',
      env: { ...process.env, PATH, HOME: home, KUBECONFIG: '' },
    });
  const exportInto = (home: string) =>
    runFleet(['kubeconfig', 'export', '--all', '--merge-into', join(home, '.kube', 'config'), '-o', 'json'], {
      env: { HOME: home, KUBECONFIG: sandbox, PATH },
    });
  const names = (home: string) => kubectlIn(home, ['config', 'get-contexts', '-o', 'name']).stdout.trim().split('\n');

  it('an empty HOME: every cluster through kubectl, no credential in the file, a second run changes no byte', async () => {
    const home = join(dir, 'newcomer');
    mkdirSync(home);
    const config = join(home, '.kube', 'config');
    const first = await exportInto(home);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.json().merge.created, true);
    assert.deepEqual([statSync(config).mode & 0o777, statSync(join(home, '.kube')).mode & 0o777], [0o600, 0o700]);
    const contexts = names(home);
    assert.equal(contexts.length, 3, contexts.join(','));
    for (const context of contexts) {
      const k = kubectlIn(home, ['--context', context, 'get', 'ns', '-o', 'name']);
      assert.equal(k.status, 0, `${context}: ${k.stderr}`);
      assert.match(k.stdout, /^namespace\/kube-system$/m);
    }
    // `grep -c token ~/.kube/config` finds nothing, and neither key nor certificate data is there.
    const grep = spawnSync('grep', ['-c', 'token', config], { encoding: 'utf8' });
    assert.deepEqual([grep.status, grep.stdout.trim()], [1, '0']);
    const text = readFileSync(config, 'utf8');
    for (const field of ['client-key', 'client-certificate', 'password']) assert.ok(!text.includes(field), field);
    for (const s of [hub, m1, m2])
      assert.ok(
        !text.includes((yaml.load(readFileSync(s.kubeconfig, 'utf8')) as any).users[0].user['client-key-data']),
      );

    // Client libraries load the same file and run the same exec entries: client-go and the Python kubernetes client.
    assertLibrariesList(config, { ...process.env, PATH, HOME: home, KUBECONFIG: '' }, contexts, [
      'kube-system',
      'default',
    ]);

    const before = snapshot(config);
    const second = await exportInto(home);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.json().merge.changed, false);
    assert.deepEqual(snapshot(config), before);
  });

  it("someone else's contexts stay byte for byte, current-context too", async () => {
    const home = join(dir, 'veteran');
    mkdirSync(join(home, '.kube'), { recursive: true, mode: 0o700 });
    const config = join(home, '.kube', 'config');
    const bob = tokenUser(m2, 'bob');
    const own = `# work clusters, by hand
apiVersion: v1
kind: Config
preferences: {}
clusters:
- cluster:
    certificate-authority-data: ${caData(m2)}
    server: ${m2.url}
  name: "work"
contexts:
- context: {cluster: work, user: bob, namespace: 'team-b'}   # mine
  name: work
current-context: work
users:
- name: bob
  user:
    token: ${bob.token}
`;
    writeFileSync(config, own, { mode: 0o640 });
    const res = await exportInto(home);
    assert.equal(res.code, 0, res.stderr);
    const after = readFileSync(config, 'utf8');
    assertLinesKept(own, after);
    assert.ok(
      after.startsWith(own.slice(0, own.indexOf('contexts:'))),
      'nothing written before the end of the clusters list',
    );
    assert.equal(statSync(config).mode & 0o777, 0o640);
    assert.equal(kubectlIn(home, ['config', 'current-context']).stdout.trim(), 'work');
    assert.equal(kubectlIn(home, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']).stdout, 'bob');
    assert.equal(names(home).length, 4);
    const again = await exportInto(home);
    assert.equal(again.json().merge.changed, false);
    assert.equal(readFileSync(config, 'utf8'), after);
  });
});
