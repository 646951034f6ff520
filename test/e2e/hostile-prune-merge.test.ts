// Issue 38, items 6 and 7, on the real control plane: `fleet kubeconfig prune` removes only what is certainly dead, and
// `export --merge-into` keeps what the user wrote. The cases of the issue, each of which failed on 0b058ef:
// - a context whose cluster and user are defined in the second KUBECONFIG file (kubectl and `clusters list` use it)
//   is kept, not `gone`;
// - a server paused (SIGSTOP of a forwarder this test starts, never the control plane) for 3 s, a name that does not
//   resolve (off the VPN), a server that accepts and never answers: none is removed in one run; the failures are
//   recorded with times, a success clears its record, and a server that has failed for longer than --unreachable-for
//   (earlier failures written into prune's state, not waited for) is removed, a DNS failure never;
//   `--request-timeout 1ms` is refused before anything is judged;
// - a context exported from the file `creds generate --out` wrote is `gone` under the plain `prune` once `creds revoke`
//   deleted that file;
// - a CRLF kubeconfig stays CRLF through prune and merge; a kubeconfig that starts with a UTF-8 BOM is merged into (as
//   kubectl 1.35 reads it) and keeps its BOM; a namespace set with `kubectl config set-context` on a fleet context
//   survives the next export.
// No secret the test made appears in any output.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { KubeconfigPruneResult } from '../../src/commands/kubeconfig/prune.js';
import { buildScriptOutput } from '../support/binaries.js';
import { type CliResult, FLEET_BIN, runFleet } from '../support/cli.js';
import { kubectlResult, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { blackhole, type StallServer } from '../support/stall-servers.js';

const cp = loadControlPlane();
const [m1] = cp.members;
const run = uniqueName('prunemerge');
const dir = join(scratchDir(), run);
mkdirSync(dir, { recursive: true });
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const caData = b64(readFileSync(m1.caFile));
/** `fleet` on PATH, as an installed fleet is: the exec entries export writes run `fleet kubeconfig credential`. */
const binDir = join(dir, 'bin');
mkdirSync(binDir);
writeFileSync(join(binDir, 'fleet'), `#!/bin/sh\nexec '${process.execPath}' '${FLEET_BIN}' "$@"\n`, { mode: 0o755 });
const PATH = `${binDir}:${process.env.PATH}`;
const KUBECTL_135 = fileURLToPath(new URL('../kubectl-135/build.sh', import.meta.url));

const alice = tokenUser(m1, 'alice');
const secrets = new Set<string>([alice.token]);
const outputs: string[] = [];
/** prune's state directory for this file's runs ($XDG_STATE_HOME). */
const stateHome = join(dir, 'state');
const stateFile = join(stateHome, 'fleet', 'prune-failures.json');

/** fleet with only what the case names: no fleet configuration, no KUBECONFIG unless given, prune's state here. */
async function fleet(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const res = await runFleet(args, { env: { PATH, XDG_STATE_HOME: stateHome, ...env }, timeoutMs: 120_000 });
  outputs.push(res.stdout, res.stderr);
  return res;
}

function kubectlWith(bin: string, env: NodeJS.ProcessEnv, args: string[]) {
  const r = spawnSync(bin, args, {
    encoding: 'utf8',
    env: { ...process.env, PATH, HOME: dir, KUBECONFIG: '', ...env },
    timeout: 60_000,
  });
  outputs.push(r.stdout, r.stderr);
  return r;
}
const kubectl = (env: NodeJS.ProcessEnv, args: string[]) => kubectlWith(cp.binaries.kubectl, env, args);

const records = (): Record<string, { since: string; last: string; runs: number; error: string }> =>
  existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')).servers : {};
/** Earlier runs' failures of `server`, `daysAgo` days back (what prune would have recorded then). */
function seed(servers: Record<string, number>): void {
  const all = records();
  for (const [server, daysAgo] of Object.entries(servers)) {
    const since = new Date(Date.now() - daysAgo * 24 * 3600 * 1000).toISOString();
    all[server] = { since, last: since, runs: 1, error: `${server}: earlier failure` };
  }
  mkdirSync(join(stateHome, 'fleet'), { recursive: true, mode: 0o700 });
  writeFileSync(stateFile, JSON.stringify({ v: 1, servers: all }), { mode: 0o600 });
}
const items = (res: CliResult) =>
  Object.fromEntries(res.json<KubeconfigPruneResult>().items.map((i) => [i.context, i]));
const backups = (path: string) =>
  readdirSync(join(path, '..')).filter((f) => f.startsWith(`${path.split('/').pop()}.bak-`));

after(() => {
  const all = outputs.join('\n');
  for (const s of secrets) assert.ok(!all.includes(s.trim()), 'a secret the test made appeared in the output');
});

describe('prune judges over every KUBECONFIG file', () => {
  it('a context whose cluster and user are defined in the second file is kept (kubectl and clusters list use it)', async () => {
    const first = join(dir, 'two-first');
    const second = join(dir, 'two-second');
    writeFileSync(
      first,
      'apiVersion: v1\nkind: Config\ncontexts:\n- {name: two-file, context: {cluster: defined-in-second, user: alice-second}}\ncurrent-context: two-file\n',
      { mode: 0o600 },
    );
    writeFileSync(
      second,
      `apiVersion: v1\nkind: Config\nclusters:\n- {name: defined-in-second, cluster: {server: "${m1.url}", certificate-authority-data: ${caData}}}\nusers:\n- {name: alice-second, user: {token: ${alice.token}}}\n`,
      { mode: 0o600 },
    );
    const KUBECONFIG = `${first}:${second}`;
    const who = kubectl({ KUBECONFIG }, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.stdout, 'alice', who.stderr);
    const list = await fleet(['clusters', 'list', '-o', 'json'], { KUBECONFIG });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /two-file/);

    const before = readFileSync(first, 'utf8');
    // FILE defaults to the first file of KUBECONFIG, as the docs show it.
    const res = await fleet(['kubeconfig', 'prune', '--yes', '-o', 'json'], { KUBECONFIG });
    assert.equal(res.code, 0, res.stderr);
    const item = items(res)['two-file'];
    assert.deepEqual(
      [item.action, item.reason, item.message],
      ['keep', undefined, 'reachable (SelfSubjectReview answered 201)'],
    );
    assert.deepEqual(res.json<KubeconfigPruneResult>().remove, { contexts: [], clusters: [], users: [] });
    assert.equal(readFileSync(first, 'utf8'), before);
    assert.deepEqual(backups(first), []);
  });
});

describe('unreachable only across runs, for the configured duration', () => {
  const file = join(dir, 'servers');
  let forwarder: ChildProcess;
  let pausedUrl: string;
  let silent: StallServer;
  const dnsUrl = 'https://nosuch.invalid:6443';

  before(async () => {
    // A process of this test's own, standing for an API server: a TCP forwarder to member-1 (its certificate is for
    // 127.0.0.1, so the CA of member-1 verifies it), which SIGSTOP pauses as a suspended VM is paused.
    const target = new URL(m1.url);
    const script = `const net=require('net');const s=net.createServer((c)=>{const u=net.connect(${target.port},'127.0.0.1');c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`;
    forwarder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<string>((resolve, reject) => {
      forwarder.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
      forwarder.once('exit', () => reject(new Error('the forwarder exited')));
    });
    pausedUrl = `https://127.0.0.1:${port}`;
    silent = await blackhole();
    const cluster = (name: string, server: string) =>
      `- {name: ${name}, cluster: {server: "${server}", certificate-authority-data: ${caData}}}`;
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        cluster('paused', pausedUrl),
        cluster('dns', dnsUrl),
        cluster('silent', silent.url),
        cluster('healthy', m1.url),
        'users:',
        `- {name: alice, user: {token: ${alice.token}}}`,
        'contexts:',
        '- {name: paused, context: {cluster: paused, user: alice}}',
        '- {name: dns, context: {cluster: dns, user: alice}}',
        '- {name: silent, context: {cluster: silent, user: alice}}',
        '- {name: healthy, context: {cluster: healthy, user: alice}}',
        'current-context: healthy',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  });
  after(async () => {
    // Only the process this test started, by its own handle.
    forwarder.kill('SIGCONT');
    forwarder.kill('SIGKILL');
    await silent.close();
  });

  it('through the forwarder, while it runs, the paused context is reachable', async () => {
    // Its own state: the runs counted below start there.
    const res = await fleet(['kubeconfig', 'prune', file, '--dry-run', '-o', 'json', '--request-timeout', '3s'], {
      XDG_STATE_HOME: join(dir, 'state-first'),
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(items(res).paused.message, 'reachable (SelfSubjectReview answered 201)');
  });

  it('a server paused 3 s, a name that does not resolve, one that accepts and never answers: none removed in one run, even with --yes; failures recorded', async () => {
    const before = readFileSync(file, 'utf8');
    const pausedAt = Date.now();
    assert.ok(forwarder.kill('SIGSTOP'));
    let res: CliResult;
    try {
      res = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json', '--request-timeout', '2s']);
    } finally {
      await new Promise((r) => setTimeout(r, Math.max(0, 3000 - (Date.now() - pausedAt))));
      forwarder.kill('SIGCONT');
    }
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<KubeconfigPruneResult>();
    assert.deepEqual([out.pruned, out.remove.contexts], [false, []]);
    const why = items(res);
    for (const name of ['paused', 'dns', 'silent', 'healthy'])
      assert.equal(why[name].action, 'keep', `${name}: ${why[name].message}`);
    assert.equal(
      why.paused.message,
      `${pausedUrl}: no answer within 2s (--request-timeout); first failure recorded, removed once it has failed for 24h (--unreachable-for)`,
    );
    assert.equal(
      why.silent.message,
      `${silent.url}: no answer within 2s (--request-timeout); first failure recorded, removed once it has failed for 24h (--unreachable-for)`,
    );
    assert.match(
      why.dns.message,
      /^https:\/\/nosuch\.invalid:6443: .*: a name that does not resolve \(off the VPN\?\) is not counted as a failure$/,
    );
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.deepEqual(backups(file), []);
    // Recorded with times, 0600: the two that failed, not the name that did not resolve, not the healthy one.
    const r = records();
    assert.deepEqual(Object.keys(r).sort(), [pausedUrl, silent.url].sort());
    assert.equal(r[pausedUrl].runs, 1);
    assert.ok(Math.abs(Date.parse(r[pausedUrl].since) - pausedAt) < 60_000);
    assert.equal(statSync(stateFile).mode & 0o777, 0o600);
  });

  it('a success clears the record: the forwarder answers again', async () => {
    const res = await fleet(['kubeconfig', 'prune', file, '--dry-run', '-o', 'json', '--request-timeout', '2s']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(items(res).paused.message, 'reachable (SelfSubjectReview answered 201)');
    assert.match(
      items(res).silent.message,
      /no answer within 2s \(--request-timeout\); failing since .* \(2 runs\), removed once it has failed for 24h/,
    );
    assert.deepEqual(Object.keys(records()), [silent.url]);
  });

  it('--request-timeout 1ms is refused in one line before anything is judged: nothing removed, nothing recorded', async () => {
    const before = readFileSync(file, 'utf8');
    const state = existsSync(stateFile) ? readFileSync(stateFile, 'utf8') : undefined;
    const message =
      '--request-timeout 1ms: prune needs at least 1s to tell a server that is gone from a slow one; nothing was judged';
    const human = await fleet(['kubeconfig', 'prune', file, '--request-timeout', '1ms', '--yes']);
    assert.deepEqual([human.code, human.stderr.trim(), human.stdout], [2, `error: ${message}`, '']);
    const json = await fleet(['kubeconfig', 'prune', file, '--request-timeout', '1ms', '--dry-run', '-o', 'json']);
    assert.deepEqual([json.code, json.json()], [2, { error: { kind: 'usage', message } }]);
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal(existsSync(stateFile) ? readFileSync(stateFile, 'utf8') : undefined, state);
  });

  it('removed only once the failures span --unreachable-for (older records written, not waited for); a DNS failure never', async () => {
    seed({ [silent.url]: 2, [dnsUrl]: 30 });
    const week = await fleet([
      'kubeconfig',
      'prune',
      file,
      '--yes',
      '-o',
      'json',
      '--request-timeout',
      '2s',
      '--unreachable-for',
      '7d',
    ]);
    assert.equal(week.code, 0, week.stderr);
    assert.deepEqual(week.json<KubeconfigPruneResult>().remove.contexts, []);

    const res = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json', '--request-timeout', '2s']);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<KubeconfigPruneResult>();
    assert.deepEqual(out.remove, { contexts: ['silent'], clusters: ['silent'], users: [] });
    assert.match(
      items(res).silent.message,
      new RegExp(
        `^${silent.url}: no answer within 2s \\(--request-timeout\\); failing since \\S+ \\(3 runs\\), longer than --unreachable-for 24h$`,
      ),
    );
    assert.equal(items(res).dns.action, 'keep');
    const left = yaml.load(readFileSync(file, 'utf8')) as { contexts: Array<{ name: string }> };
    assert.deepEqual(
      left.contexts.map((c) => c.name),
      ['paused', 'dns', 'healthy'],
    );
    assert.equal(readFileSync(out.backup!, 'utf8').includes('name: silent'), true);
  });
});

describe('a credential creds revoke ended', () => {
  it('its exported context is gone under the plain prune once revoke deleted the file generate wrote', async () => {
    const ns = `${run}-sys`;
    const cred = join(dir, 'cred.kubeconfig');
    const config = join(dir, 'revoke-config');
    const gen = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      m1.kubeconfig,
      '--cluster',
      m1.context,
      '--service-account',
      `${ns}/prune`,
      '--create-namespace',
      '--role',
      'view',
      '--duration',
      '1h',
      '--out',
      cred,
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
    const user = (yaml.load(readFileSync(cred, 'utf8')) as { users: Array<{ user: { token: string } }> }).users[0].user;
    secrets.add(user.token);
    const exported = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      cred,
      '--all',
      '--merge-into',
      config,
      '-o',
      'json',
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    const context = exported.json().items[0].context as string;

    const alive = await fleet(['kubeconfig', 'prune', config, '--dry-run', '-o', 'json']);
    assert.equal(alive.code, 0, alive.stderr);
    assert.equal(items(alive)[context].action, 'keep');

    const revoked = await fleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', cred, '-o', 'json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.ok(!existsSync(cred));

    const res = await fleet(['kubeconfig', 'prune', config, '--yes', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const item = items(res)[context];
    assert.deepEqual(
      [item.action, item.reason, item.message],
      ['remove', 'gone', `its kubeconfig file ${cred} no longer exists`],
    );
    assert.deepEqual(res.json<KubeconfigPruneResult>().remove, {
      contexts: [context],
      clusters: [context],
      users: [context],
    });
    assert.equal(kubectl({ KUBECONFIG: config }, ['config', 'get-contexts', '-o', 'name']).stdout.trim(), '');
    await kubectlResult(m1, ['delete', 'namespace', ns, '--wait=false']);
  });
});

describe('a credential creds revoke ended, in a hub Secret', () => {
  const hubNs = `${run}-hub`;
  const sys = `${run}-hubsys`;
  const xdg = join(dir, 'xdg');
  const config = join(xdg, 'fleet', 'config.yaml');
  const good = `hub: {kubeconfig: ${cp.hub.kubeconfig}}\nproviders:\n  - {name: secrets, type: kubeconfig, namespace: ${hubNs}}\n`;
  after(async () => {
    await kubectlResult(cp.hub, ['delete', 'namespace', hubNs, '--wait=false']);
    await kubectlResult(m1, ['delete', 'namespace', sys, '--wait=false']);
  });

  it('gone under the plain prune (the default fleet configuration) once the hub answers without it; kept while the hub cannot be asked', async () => {
    mkdirSync(join(xdg, 'fleet'), { recursive: true });
    writeFileSync(config, good);
    const env = { XDG_CONFIG_HOME: xdg };
    const file = join(dir, 'hub-secret-config');
    const gen = await fleet([
      'creds',
      'generate',
      '--kubeconfig',
      m1.kubeconfig,
      '--cluster',
      m1.context,
      '--hub-kubeconfig',
      cp.hub.kubeconfig,
      '--service-account',
      `${sys}/prune`,
      '--create-namespace',
      '--role',
      'view',
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/m1`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
    const exported = await fleet(['kubeconfig', 'export', '--all', '--merge-into', file, '-o', 'json'], env);
    assert.equal(exported.code, 0, exported.stderr);
    const context = exported.json().items[0].context as string;
    const revoked = await fleet([
      'creds',
      'revoke',
      '--kubeconfig',
      m1.kubeconfig,
      '--hub-kubeconfig',
      cp.hub.kubeconfig,
      `${hubNs}/m1`,
      '-o',
      'json',
    ]);
    assert.equal(revoked.code, 0, revoked.stderr);

    // The same configuration file, its hub at a port nothing listens on: the hub could not be asked, nothing is gone.
    const deadHub = join(dir, 'dead-hub.kubeconfig');
    const hubDoc = yaml.load(readFileSync(cp.hub.kubeconfig, 'utf8')) as {
      clusters: Array<{ cluster: { server: string } }>;
    };
    hubDoc.clusters[0].cluster.server = 'https://127.0.0.1:1';
    writeFileSync(deadHub, yaml.dump(hubDoc), { mode: 0o600 });
    writeFileSync(config, good.replace(cp.hub.kubeconfig, deadHub));
    const unasked = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json'], env);
    assert.equal(unasked.code, 0, unasked.stderr);
    assert.equal(items(unasked)[context].action, 'keep', items(unasked)[context].message);
    assert.deepEqual(backups(file), []);

    writeFileSync(config, good);
    const res = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json'], env);
    assert.equal(res.code, 0, res.stderr);
    const item = items(res)[context];
    assert.deepEqual(
      [item.action, item.reason, item.message],
      ['remove', 'gone', 'provider "secrets" no longer lists cluster "m1"'],
    );
  });
});

describe('line endings and a BOM are kept; the user edits of fleet entries too', () => {
  it('a CRLF kubeconfig stays CRLF through prune and merge', async () => {
    const file = join(dir, 'crlf');
    const lines = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: mine',
      '  cluster:',
      `    server: "${m1.url}"`,
      `    certificate-authority-data: ${caData}`,
      'users:',
      '- name: alice',
      `  user: {token: ${alice.token}}`,
      'contexts:',
      '- name: dead',
      '  context:',
      '    cluster: deleted-long-ago',
      '- name: mine',
      '  context: {cluster: mine, user: alice}',
      'current-context: mine',
      '',
    ];
    const text = lines.join('\r\n');
    writeFileSync(file, text, { mode: 0o600 });
    const res = await fleet(['kubeconfig', 'prune', file, '--yes', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<KubeconfigPruneResult>();
    assert.deepEqual(out.remove.contexts, ['dead']);
    assert.equal(readFileSync(out.backup!, 'utf8'), text, 'the backup is byte-exact');
    const pruned = readFileSync(file, 'utf8');
    assert.equal(pruned, [...lines.slice(0, 11), ...lines.slice(14)].join('\r\n'));

    const merged = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--merge-into',
      file,
      '-o',
      'json',
    ]);
    assert.equal(merged.code, 0, merged.stderr);
    const after = readFileSync(file, 'utf8');
    assert.doesNotMatch(after, /(^|[^\r])\n/, 'a line ends in a bare LF');
    assert.ok(after.startsWith(pruned.slice(0, pruned.indexOf('users:'))));
    const names = kubectl({ KUBECONFIG: file }, ['config', 'get-contexts', '-o', 'name']);
    assert.equal(names.stdout.trim().split('\n').length, 2, names.stderr);
  });

  it('a kubeconfig that starts with a UTF-8 BOM is merged into as kubectl 1.35 reads it, and keeps its BOM', async () => {
    const kubectl135 = buildScriptOutput(KUBECTL_135);
    const file = join(dir, 'bom');
    const own = `\uFEFFapiVersion: v1\nkind: Config\nclusters:\n- {name: mine, cluster: {server: "${m1.url}", certificate-authority-data: ${caData}}}\nusers:\n- {name: alice, user: {token: ${alice.token}}}\ncontexts:\n- {name: mine, context: {cluster: mine, user: alice}}\ncurrent-context: mine\n`;
    writeFileSync(file, own, { mode: 0o600 });
    // What kubectl 1.35 makes of the file as the user wrote it: it reads past the BOM.
    assert.equal(
      kubectlWith(kubectl135, { KUBECONFIG: file }, ['config', 'get-contexts', '-o', 'name']).stdout.trim(),
      'mine',
    );

    const res = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--merge-into',
      file,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const context = res.json().items[0].context as string;
    const after = readFileSync(file);
    assert.deepEqual([...after.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the BOM is kept');
    assert.ok(after.toString('utf8').startsWith(own.slice(0, own.indexOf('users:'))));
    for (const bin of [kubectl135, cp.binaries.kubectl]) {
      const names = kubectlWith(bin, { KUBECONFIG: file }, ['config', 'get-contexts', '-o', 'name']);
      assert.deepEqual(names.stdout.trim().split('\n').sort(), [context, 'mine'].sort(), names.stderr);
      const ns = kubectlWith(bin, { KUBECONFIG: file }, [
        '--context',
        context,
        'get',
        'ns',
        'kube-system',
        '-o',
        'name',
      ]);
      assert.equal(ns.stdout.trim(), 'namespace/kube-system', ns.stderr);
    }
    const again = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--merge-into',
      file,
      '-o',
      'json',
    ]);
    assert.equal(again.json().merge.changed, false);
  });

  it('a namespace set with kubectl config set-context on a fleet context survives the next export', async () => {
    const file = join(dir, 'namespace');
    const first = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--merge-into',
      file,
      '-o',
      'json',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const context = first.json().items[0].context as string;
    const set = kubectl({ KUBECONFIG: file }, ['config', 'set-context', context, '--namespace', 'team-x']);
    assert.equal(set.status, 0, set.stderr);

    const res = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--merge-into',
      file,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.json().merge.changed,
      false,
      "the entry is fleet's as it was, plus the user's namespace: nothing to change",
    );
    const view = kubectl({ KUBECONFIG: file }, [
      'config',
      'view',
      '--minify',
      '--context',
      context,
      '-o',
      'jsonpath={.contexts[0].context.namespace}',
    ]);
    assert.equal(view.stdout, 'team-x', view.stderr);
  });
});
