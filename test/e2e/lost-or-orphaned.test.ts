// Issue 49, "lost or orphaned", against the real control plane, run as a user runs fleet:
// - `kubeconfig export --out FILE` over member-1's admin kubeconfig (its client key) is refused, the file keeps every
//   byte and still works; --merge-into keeps it; --force replaces it after saying what; --out with --merge-into is a
//   usage error that writes neither file;
// - `creds generate --out FILE` over a file fleet wrote for another ServiceAccount is refused naming it and the revoke
//   command, the old legacy token still authenticates and `creds revoke --file` revokes it; with --force the warning
//   names the anchor that keeps the old bound token valid, and its command revokes it (the old token then gets 401);
// - `creds list --kubeconfig DIR` lists the files' credentials and reads no hub from the directory (exit 0, a warning),
//   and a hub named in the directory is one line before anything is listed;
// - two SIGINTs a few milliseconds apart (as GNU timeout sends them: to fleet, then to its process group) during
//   `creds generate` are one interrupt: the rollback runs and nothing is left on the member; and under `timeout -s INT`.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import {
  deleteFleetObjectsOf,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const m1 = cp.members[0];
const run = uniqueName('lost');
const ns = run;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
/** The name fleet gives (and records for) member-1 reached that way. */
const M1 = `${m1.kubeconfig}+${m1.context}`;
/** Text in a RegExp as itself. */
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const outputs: Array<{ what: string; res: { stdout: string; stderr: string } }> = [];
const secrets = new Set<string>();
let dir: string;

async function fleet(args: string[], cwd?: string): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000, ...(cwd ? { cwd } : {}) });
  outputs.push({ what: args.join(' '), res });
  return res;
}

function oneLine(res: CliResult, code: number): string {
  assert.equal(res.code, code, `exit ${res.code}: ${res.stderr}`);
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected: ${res.stderr}`);
  return lines[0];
}

const tokenOf = (path: string): string => {
  const t = (yaml.load(readFileSync(path, 'utf8')) as any).users[0].user.token as string;
  secrets.add(t);
  return t;
};

let probe = 0;
/** Who a token is on member-1, or undefined when the server refuses it (kubectl auth whoami). */
async function whoIs(token: string): Promise<string | undefined> {
  const doc = yaml.load(readFileSync(m1.kubeconfig, 'utf8')) as any;
  const path = join(dir, `${run}-probe-${probe++}.kubeconfig`);
  writeFileSync(
    path,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: doc.clusters,
      users: [{ name: 'probe', user: { token } }],
      contexts: [{ name: 'probe', context: { cluster: doc.clusters[0].name, user: 'probe' } }],
      'current-context': 'probe',
    }),
    { mode: 0o600 },
  );
  return new Promise((resolve) => {
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    );
  });
}

/** The API server caches a token's authentication for about 10 s: a revoked token is refused within 30. */
async function refusedWithin(token: string, ms = 30_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if ((await whoIs(token)) === undefined) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const credentialId = (username: string) => createHash('sha256').update(username).digest('hex').slice(0, 16);

/** What fleet labelled as this identity's on the member (ServiceAccounts, Roles, RoleBindings, Secrets). */
async function leftOnMember(sa: string): Promise<string[]> {
  const sel = `fleet.dev/credential=${credentialId(`system:serviceaccount:${ns}:${sa}`)}`;
  const out = await kubectl(m1, [
    'get',
    'serviceaccounts,roles,rolebindings,secrets',
    '-n',
    ns,
    '-l',
    sel,
    '-o',
    'name',
  ]);
  // By name too: an object made without labels (none should be) would still be found.
  const all = await kubectl(m1, ['get', 'serviceaccounts,roles,rolebindings,secrets', '-n', ns, '-o', 'name']);
  const byName = all.split('\n').filter((l) => l.includes(`/${sa}`) || l.includes(`-${sa}`));
  return [...new Set([...out.split('\n'), ...byName])].filter(Boolean);
}

before(async () => {
  dir = scratchDir();
  await kubectl(m1, ['create', 'namespace', ns]);
});

after(async () => {
  await kubectlResult(m1, ['delete', 'namespace', ns, '--wait=false']);
  await deleteFleetObjectsOf(m1, 'clusterroles,clusterrolebindings', run);
});

describe('kubeconfig export --out over a kubeconfig fleet did not write (live)', () => {
  it("member-1's admin kubeconfig: refused (exit 2, one line), every byte kept and still working; --merge-into keeps it; --force replaces it after saying what", async () => {
    const admin = join(dir, `${run}-admin.kubeconfig`);
    copyFileSync(m1.kubeconfig, admin);
    const before = readFileSync(admin);
    const args = ['kubeconfig', 'export', '--kubeconfig', m1.kubeconfig, '--all'];
    const refused = await fleet([...args, '--out', admin]);
    assert.match(
      oneLine(refused, 2),
      new RegExp(
        `^error: --out ${admin}: the file holds 1 context \\(${m1.context}\\), 1 cluster \\([^)]+\\), 1 user \\([^:]+: a client key\\) not exported by fleet; to add fleet's contexts to it use --merge-into ${admin}; to replace it pass --force$`,
      ),
    );
    assert.equal(refused.stdout, '');
    assert.ok(readFileSync(admin).equals(before), 'the admin kubeconfig changed');
    assert.equal((await kubectlResult(m1, ['get', 'namespace', ns], { kubeconfig: admin })).code, 0);

    const merged = await fleet([...args, '--merge-into', admin]);
    assert.equal(merged.code, 0, merged.stderr);
    const doc = yaml.load(readFileSync(admin, 'utf8')) as any;
    assert.ok(
      doc.contexts.some((c: any) => c.name === m1.context),
      "the admin's own context is kept",
    );
    assert.equal(doc.contexts.length, 2);

    const forced = await fleet([...args, '--out', admin, '--force', '-o', 'json']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(
      oneLine(forced, 0),
      new RegExp(
        `^warning: --out ${admin}: replacing 1 context \\(${m1.context}\\), 1 cluster \\([^)]+\\), 1 user \\([^:]+: a client key\\) not exported by fleet \\(--force\\)$`,
      ),
    );
    assert.deepEqual(forced.json().replaced.contexts, [m1.context]);
    const after = yaml.load(readFileSync(admin, 'utf8')) as any;
    assert.equal(after.contexts.length, 1);
    assert.ok(!readFileSync(admin, 'utf8').includes('client-key-data'));
    // Now every entry is fleet's: replaced again as before, without a word.
    const again = await fleet([...args, '--out', admin]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, `wrote 1 context to ${admin}\n`);
  });

  it('--out A --merge-into B: a usage error, neither file written', async () => {
    const a = join(dir, `${run}-a.kubeconfig`);
    const b = join(dir, `${run}-b.kubeconfig`);
    const res = await fleet([
      'kubeconfig',
      'export',
      '--kubeconfig',
      m1.kubeconfig,
      '--all',
      '--out',
      a,
      '--merge-into',
      b,
    ]);
    assert.match(oneLine(res, 2), /^error: --out and --merge-into cannot be used together: .*; use one of them$/);
    assert.equal(existsSync(a), false);
    assert.equal(existsSync(b), false);
  });
});

describe('creds generate --out over a file fleet wrote for another identity (live)', () => {
  it('a legacy token: refused naming the identity, the cluster and the revoke command; the old token keeps working until creds revoke --file revokes it', async () => {
    const file = join(dir, `${run}-ci.kubeconfig`);
    const gen = (sa: string) =>
      fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${ns}/${sa}`,
        '--role',
        'view',
        '-n',
        ns,
        '--method',
        'legacy-token',
        '--out',
        file,
      ]);
    const first = await gen('one');
    assert.equal(first.code, 0, first.stderr);
    const old = tokenOf(file);
    const bytes = readFileSync(file);

    const refused = await gen('two');
    assert.match(
      oneLine(refused, 2),
      new RegExp(
        `^error: --out ${file}: the file holds the legacy token of system:serviceaccount:${ns}:one on cluster ${esc(M1)} \\(token Secret ${ns}/one-fleet-token-[0-9a-f]{8}\\); replacing it would leave that credential valid and no longer revocable with creds revoke --file: revoke it first \\(fleet creds revoke --file ${file}\\), or pass --force to replace it$`,
      ),
    );
    assert.ok(readFileSync(file).equals(bytes), 'the file changed');
    assert.deepEqual(await leftOnMember('two'), [], 'the refused run made something');
    assert.equal(await whoIs(old), `system:serviceaccount:${ns}:one`);

    // The command the refusal names revokes it; then the file may take the other identity.
    const revoked = await fleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', file, '-o', 'json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.ok(await refusedWithin(old), 'the old legacy token still authenticates after creds revoke --file');
    const second = await gen('two');
    assert.equal(second.code, 0, second.stderr);
    tokenOf(file);
    const cleanup = await fleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', file]);
    assert.equal(cleanup.code, 0, cleanup.stderr);
  });

  it('a bound token with --force: replaced, the warning names the anchor that keeps the old token valid, and its command revokes it', async () => {
    const file = join(dir, `${run}-bound.kubeconfig`);
    const gen = (sa: string, ...extra: string[]) =>
      fleet([
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${ns}/${sa}`,
        '--role',
        'view',
        '-n',
        ns,
        '--duration',
        '1h',
        '--out',
        file,
        ...extra,
      ]);
    const first = await gen('three');
    assert.equal(first.code, 0, first.stderr);
    const old = tokenOf(file);

    const forced = await gen('four', '--force', '-o', 'json');
    assert.equal(forced.code, 0, forced.stderr);
    tokenOf(file);
    const warning = forced.json().warnings.find((w: string) => w.startsWith(`--out ${file} held`)) as
      string | undefined;
    assert.ok(warning, forced.stdout);
    const m = new RegExp(
      `^--out ${file} held the bound token of system:serviceaccount:${ns}:three on cluster ${esc(M1)} \\(anchor Secret ${ns}/(three-fleet-anchor-[0-9a-f]{8})\\), replaced \\(--force\\): it stays valid until \\S+, or until its anchor Secret is deleted; fleet creds revoke --file can no longer find it: to revoke it, on cluster ${esc(M1)}: kubectl -n ${ns} delete secret (\\S+)$`,
    ).exec(warning);
    assert.ok(m, warning);
    assert.equal(m[1], m[2]);
    // -o json carries it in warnings[]; the table output prints it as a `warning:` line on stderr, as every note.
    assert.equal(await whoIs(old), `system:serviceaccount:${ns}:three`, 'the old token is said to stay valid');
    // The command the warning gives, as the user runs it.
    await kubectl(m1, ['-n', ns, 'delete', 'secret', m[2]]);
    assert.ok(await refusedWithin(old), 'the old bound token still authenticates after its anchor was deleted');
    const cleanup = await fleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', file]);
    assert.equal(cleanup.code, 0, cleanup.stderr);
  });
});

describe('creds list --kubeconfig DIR (live files, no hub in a directory)', () => {
  it("lists the files' credentials and reads no hub from the directory: exit 0 and a warning, not exit 2 after the list", async () => {
    const files = join(dir, `${run}-files`);
    mkdirSync(files, { recursive: true });
    // The static token user's kubeconfig, written by the fixture (a sandbox made by `npm run sandbox` has one ready, the
    // CI control plane does not).
    const alice = tokenUser(m1, 'alice').kubeconfigPath;
    copyFileSync(alice, join(files, 'alice.kubeconfig'));
    tokenOf(alice);
    const warning = `no hub read: ${files} is a directory of kubeconfig files, with no current context to take a hub from; pass --hub-kubeconfig FILE to list a hub's Secrets too`;
    const table = await fleet(['creds', 'list', '--kubeconfig', files]);
    assert.equal(oneLine(table, 0), `warning: ${warning}`);
    assert.match(table.stdout, /alice\.kubeconfig/);
    const res = await fleet(['creds', 'list', '--kubeconfig', files, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const list = res.json();
    assert.deepEqual(
      list.items.map((i: any) => [i.source.path, i.method]),
      [[join(files, 'alice.kubeconfig'), 'static-token']],
    );
    assert.deepEqual(list.errors, []);
    assert.deepEqual(list.warnings, [warning]);
    // A hub named inside the directory: one line, before anything is listed.
    const named = await fleet(['creds', 'list', '--kubeconfig', files, '--hub-context', `alice@${m1.name}`]);
    assert.match(
      oneLine(named, 2),
      new RegExp(`^error: --hub-context alice@${m1.name}: ${files} is a directory, not a kubeconfig file`),
    );
    assert.equal(named.stdout, '');
  });
});

describe('creds generate: two SIGINTs a few milliseconds apart are one interrupt (live)', () => {
  let seq = 0;

  function start(
    args: string[],
    env: NodeJS.ProcessEnv,
    wrap?: string[],
  ): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
    const argv = [process.execPath, FLEET_BIN, ...args];
    const [cmd, ...rest] = wrap ? [...wrap, ...argv] : argv;
    const child = spawn(cmd, rest, { env: fleetTestEnv(env), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        const r = { code, stdout, stderr };
        outputs.push({ what: args.join(' '), res: r });
        resolve(r);
      });
    });
    return { child, done };
  }

  const generateArgs = (sa: string) => [
    'creds',
    'generate',
    ...MEMBER,
    '--service-account',
    `${ns}/${sa}`,
    '--role',
    'view',
    '-n',
    ns,
    '--duration',
    '1h',
    '--out',
    join(dir, `${run}-${sa}.kubeconfig`),
  ];

  async function paused(file: string, step: string, ended: () => boolean): Promise<void> {
    const deadline = Date.now() + 90_000;
    while (!(existsSync(file) && readFileSync(file, 'utf8') === step)) {
      if (ended()) throw new Error(`fleet ended before pausing at ${step}`);
      if (Date.now() > deadline) throw new Error(`fleet did not pause at ${step}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  for (const [step, gapMs] of [
    ['binding', 1],
    ['anchor', 5],
    ['role', 20],
  ] as const) {
    it(`SIGINT twice ${gapMs} ms apart after "${step}": exit 130, rolled back, no ServiceAccount, Role, RoleBinding or Secret left`, async () => {
      const sa = `sa${++seq}`;
      const pause = join(dir, `${run}-pause-${seq}`);
      const { child, done } = start(generateArgs(sa), { FLEET_TEST_PAUSE_AT: step, FLEET_TEST_PAUSE_FILE: pause });
      let ended = false;
      void done.then(() => (ended = true));
      await paused(pause, step, () => ended);
      assert.notDeepEqual(await leftOnMember(sa), [], 'nothing was made before the signal');
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, gapMs));
      child.kill('SIGINT');
      const r = await done;
      assert.equal(r.code, 130, r.stderr);
      assert.equal(
        r.stderr.trim(),
        `error: interrupted (SIGINT) after step "${step}": rolled back, nothing this run made is left`,
      );
      assert.deepEqual(await leftOnMember(sa), []);
      assert.equal(existsSync(join(dir, `${run}-${sa}.kubeconfig`)), false);
    });
  }

  it('under timeout -s INT (it signals fleet, then its process group): rolled back, nothing left', async () => {
    const sa = `sa${++seq}`;
    const pause = join(dir, `${run}-pause-${seq}`);
    // The run pauses after "binding" until a signal comes; timeout's comes after 15 s, well after it paused.
    const { done } = start(generateArgs(sa), { FLEET_TEST_PAUSE_AT: 'binding', FLEET_TEST_PAUSE_FILE: pause }, [
      'timeout',
      '--preserve-status',
      '-s',
      'INT',
      '15',
    ]);
    const r = await done;
    assert.equal(readFileSync(pause, 'utf8'), 'binding', 'the signal came before the pause');
    assert.equal(r.code, 130, r.stderr);
    assert.equal(
      r.stderr.trim(),
      'error: interrupted (SIGINT) after step "binding": rolled back, nothing this run made is left',
    );
    assert.deepEqual(await leftOnMember(sa), []);
  });
});

describe('secrets', () => {
  it('no token made here appears in any output', () => {
    assert.ok(secrets.size >= 4);
    for (const { what, res } of outputs)
      for (const s of secrets)
        assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a token appears in the output of fleet ${what}`);
  });
});
