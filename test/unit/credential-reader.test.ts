// fleet-credential (cmd/fleet-credential, Go) against the launcher's fast path (src/export/credential-fast.ts), which
// defines what a cache hit is: both run as processes of this test (the same parent, as two calls from one kubectl
// would be) over the same cache entries, written by fleet's own CredentialCache, and must print the same bytes, leave
// the same bytes in the cache, and agree on every miss, where fleet-credential must hand its exact arguments to fleet.
// Also: how export picks the reader (credentialRunner).
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  writeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { createInterface } from 'node:readline';
import fc from 'fast-check';

import { UsageError } from '../../src/base/errors.js';
import { CredentialCache, credentialCacheDir } from '../../src/export/credential-cache.js';
import { type CredentialFlags, answerFromCache, credentialIdentity } from '../../src/export/credential-fast.js';
import { readExecRequest } from '../../src/export/exec-info.js';
import { READER_NAME, credentialRunner, defaultFleetCommand } from '../../src/export/reader.js';
import { buildScriptOutput } from '../support/binaries.js';
import { CALLER, type CacheCase, cacheCase, cacheSnapshot, layOut } from '../support/credential-corpus.js';

/** Cases of the differential property (issue 38 asks for at least 10,000). */
const CORPUS_RUNS = 10_000;

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const driver = join(root, 'test/support/credential-fast-driver.ts');
let reader = '';
let fakeFleet = '';

before(() => {
  reader = buildScriptOutput(join(root, 'cmd/fleet-credential/build.sh'));
  const bin = mkdtempSync(join(tmpdir(), 'fleet-reader-bin-'));
  fakeFleet = join(bin, 'fleet');
  // Stands for fleet: shows what it was run with, and that kubectl (here: this test) is still its parent.
  // On stderr, the signals it ignores: none of those fleet-credential holds while it writes may stay ignored in fleet.
  writeFileSync(
    fakeFleet,
    '#!/bin/sh\nprintf "fleet ppid=%s args=%s\\n" "$PPID" "$*"\ngrep SigIgn /proc/$$/status >&2\nexit 3\n',
    { mode: 0o755 },
  );
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

const TOKEN = 'tok-reader-7f3a9c2e1b';
// A client key made for this run (never one committed), and a certificate's shape: neither side parses them.
const KEY = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
  type: 'sec1',
  format: 'pem',
}) as string;
const CERT = `-----BEGIN CERTIFICATE-----\n${randomBytes(48).toString('base64')}\n-----END CERTIFICATE-----\n`;

function flagArgs(flags: CredentialFlags): string[] {
  return Object.entries(flags).flatMap(([name, value]) => [`--${name}`, value]);
}

/** A cache home with one entry stored by fleet's CredentialCache for `flags` as kubectl would ask with `execInfo`. */
async function seeded(
  flags: CredentialFlags,
  execInfo: string,
  credential: { token?: string; clientCertificateData?: string; clientKeyData?: string },
  opts: { caller?: number; expiresIn?: number } = {},
) {
  const home = mkdtempSync(join(tmpdir(), 'fleet-reader-'));
  const env: Record<string, string> = {
    XDG_CACHE_HOME: join(home, 'cache'),
    HOME: home,
    KUBERNETES_EXEC_INFO: execInfo,
  };
  const cache = new CredentialCache(
    credentialIdentity(flags, readExecRequest(execInfo).cluster),
    credentialCacheDir(env),
  );
  const now = Date.now();
  await cache.store(flags.cluster ?? '', credential, now + (opts.expiresIn ?? 120_000), opts.caller ?? 1, now);
  return { home, env, path: cache.path, dir: dirname(cache.path) };
}

function runTs(args: string[], env: Record<string, string>, timeout = 60_000): Run {
  const r = spawnSync(process.execPath, ['--import', 'tsx', driver, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH!, ...env },
    encoding: 'utf8',
    timeout,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function runReader(
  args: string[],
  env: Record<string, string>,
  fleet = fakeFleet,
  timeout = 60_000,
): Run & { error?: Error } {
  const r = spawnSync(reader, ['--fleet', fleet, 'kubeconfig', 'credential', ...args], {
    env: { PATH: process.env.PATH!, ...env },
    encoding: 'utf8',
    timeout,
    maxBuffer: 8 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

/** Every file of the cache directory (the entry and its handover records), by name: what a reader leaves behind. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).sort()) {
    const st = lstatSync(join(dir, name));
    files.set(
      name,
      st.isFile()
        ? readFileSync(join(dir, name), 'utf8')
        : st.isSymbolicLink()
          ? `link to ${readlinkSync(join(dir, name))}`
          : st.isDirectory()
            ? 'directory'
            : 'other',
    );
  }
  return files;
}

function restore(dir: string, files: Map<string, string>) {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
  for (const [name, text] of files) {
    if (text.startsWith('link to ')) symlinkSync(text.slice('link to '.length), join(dir, name));
    else if (text === 'directory') mkdirSync(join(dir, name));
    else if (text === 'other') assert.fail(`${name}: not restored`);
    else writeFileSync(join(dir, name), text, { mode: 0o600 });
  }
}

/** Runs the fast path and then, on the cache as it was, fleet-credential: returns both runs and the cache after each. */
function both(path: string, args: string[], env: Record<string, string>) {
  const dir = dirname(path);
  const before = snapshot(dir);
  const ts = runTs(args, env);
  const afterTs = snapshot(dir);
  restore(dir, before);
  const go = runReader(args, env);
  const afterGo = snapshot(dir);
  return {
    before,
    ts,
    afterTs,
    go,
    afterGo,
    entry: afterGo.get(basename(path)),
    mode: existsSync(path) ? statSync(path).mode & 0o777 : undefined,
  };
}

const handedTo = (files: Map<string, string>, path: string) =>
  [...files.keys()]
    .filter((n) => n.startsWith(`${basename(path, '.json')}.handed-`))
    .map((n) => Number(n.split('-').pop()));

function assertHit(r: ReturnType<typeof both>, path: string) {
  assert.equal(r.ts.status, 0, `fast path: ${r.ts.stderr}`);
  assert.equal(r.go.status, 0, `fleet-credential: ${r.go.stderr}`);
  assert.equal(r.go.stdout, r.ts.stdout, 'the same ExecCredential, byte for byte');
  assert.deepEqual(r.afterGo, r.afterTs, 'the same cache left behind, byte for byte');
  assert.ok(handedTo(r.afterGo, path).includes(process.pid), 'the handover recorded for this parent');
  assert.equal(r.mode, 0o600);
  assert.equal(r.go.stderr, '');
}

function assertMiss(r: ReturnType<typeof both>, args: string[]) {
  assert.equal(r.ts.status, 3, `fast path answered: ${r.ts.stdout}`);
  assert.equal(r.ts.stdout, '');
  assert.equal(r.go.status, 3, `fleet-credential did not hand over: ${r.go.stdout}${r.go.stderr}`);
  assert.equal(
    r.go.stdout,
    `fleet ppid=${process.pid} args=kubeconfig credential ${args.join(' ')}\n`,
    'fleet runs in its place with the same arguments and parent',
  );
  assert.deepEqual(r.afterGo, r.afterTs, 'the same cache left behind, byte for byte');
}

const INFO = (
  apiVersion = 'client.authentication.k8s.io/v1',
  cluster: Record<string, unknown> = {
    server: 'https://10.0.0.1:6443',
    'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==',
  },
) =>
  JSON.stringify({
    apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false, cluster: { ...cluster, config: null } },
  });

describe('fleet-credential answers exactly as the fast path does', () => {
  const flags: CredentialFlags = {
    cluster: 'secrets#eu-1',
    provider: 'secrets',
    'fleet-config': '/etc/fleet/fleet.yaml',
    kubeconfig: '/home/u/.kube/hub.yaml',
    context: 'hub',
  };
  const args = flagArgs(flags);
  const info = (apiVersion: string) => INFO(apiVersion);

  it('a token, asked in v1 for a server and CA', async () => {
    const s = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    const r = both(s.path, args, s.env);
    assertHit(r, s.path);
    assert.match(
      r.go.stdout,
      /^\{"apiVersion":"client\.authentication\.k8s\.io\/v1","kind":"ExecCredential","status":\{"token":"tok-reader-7f3a9c2e1b","expirationTimestamp":"[^"]+Z"\}\}\n$/,
    );
  });

  it('a client certificate, asked in v1beta1', async () => {
    const s = await seeded(flags, info('client.authentication.k8s.io/v1beta1'), {
      clientCertificateData: CERT,
      clientKeyData: KEY,
    });
    const r = both(s.path, args, s.env);
    assertHit(r, s.path);
    assert.equal(JSON.parse(r.go.stdout).status.clientKeyData, KEY);
  });

  it('names and paths JSON escapes differently in other languages still find the same entry', async () => {
    const odd: CredentialFlags = {
      cluster: 'kc "a"\\b <x>&y é 日本 \u0007\u2028+ctx',
      provider: 'file',
      kubeconfig: '/tmp/dir with space/ä.yaml:/tmp/b&c.yaml',
    };
    const s = await seeded(
      odd,
      INFO(undefined, { server: 'https://h\u2028/', 'tls-server-name': 'n', 'insecure-skip-tls-verify': false }),
      { token: `${TOKEN}\u2028é` },
    );
    assertHit(both(s.path, flagArgs(odd), s.env), s.path);
  });

  it('a second call from the same parent drops the entry the same way and runs fleet', async () => {
    const s = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN }, { caller: process.pid });
    const r = both(s.path, args, s.env);
    assertMiss(r, args);
    const entry = JSON.parse(r.entry!);
    assert.equal(entry.credential, undefined);
    assert.match(entry.suspect, /^[0-9a-f]{64}$/);
    assert.ok(!r.entry!.includes(TOKEN), 'a refused credential is not kept');
    // It wrote the entry (holding SIGINT, SIGTERM and SIGHUP meanwhile) before it ran fleet: fleet ignores none of them.
    const ignored = BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(r.go.stderr)![1]}`);
    assert.equal(
      ignored & ((1n << 0n) | (1n << 1n) | (1n << 14n)),
      0n,
      `fleet runs with SigIgn ${ignored.toString(16)}`,
    );
  });

  it('an ended entry, another format version, another server, CA, TLS name or skipped verification: fleet runs', async () => {
    const ended = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN }, { expiresIn: 1000 });
    await new Promise((done) => setTimeout(done, 1100));
    assertMiss(both(ended.path, args, ended.env), args);

    const future = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    writeFileSync(future.path, readFileSync(future.path, 'utf8').replace('{"v":2,', '{"v":3,'), { mode: 0o600 });
    assertMiss(both(future.path, args, future.env), args);

    for (const moved of [
      { server: 'https://10.0.0.2:6443', 'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==' },
      { server: 'https://10.0.0.1:6443', 'certificate-authority-data': 'b3RoZXI=' },
      { server: 'https://10.0.0.1:6443' },
      {
        server: 'https://10.0.0.1:6443',
        'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==',
        'tls-server-name': 'other',
      },
      {
        server: 'https://10.0.0.1:6443',
        'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==',
        'insecure-skip-tls-verify': true,
      },
    ]) {
      const other = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
      assertMiss(both(other.path, args, { ...other.env, KUBERNETES_EXEC_INFO: INFO(undefined, moved) }), args);
    }
  });

  // Issue 38 item 3: no cluster info (provideClusterInfo: false, or by hand) or a server that is not a string: neither
  // reader answers from the cache; fleet refuses (kubeconfig-export.test.ts).
  it('no KUBERNETES_EXEC_INFO, no spec.cluster, or a server that is not a string: fleet runs, nothing is printed', async () => {
    const s = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    const noInfo: Record<string, string> = { ...s.env };
    delete noInfo.KUBERNETES_EXEC_INFO;
    assertMiss(both(s.path, args, noInfo), args);
    for (const execInfo of [
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: { interactive: false },
      }),
      INFO(undefined, { server: ['https://10.0.0.1:6443'], 'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==' }),
      INFO(undefined, { server: 6443, 'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==' }),
      INFO(undefined, { Server: 'https://10.0.0.1:6443', 'certificate-authority-data': 'LS0tLS1CRUdJTi<>&==' }),
    ]) {
      const r = both(s.path, args, { ...s.env, KUBERNETES_EXEC_INFO: execInfo });
      assertMiss(r, args);
      assert.ok(!`${r.ts.stdout}${r.go.stdout}`.includes(TOKEN));
    }
  });

  it('arguments not in the exported form, or a KUBERNETES_EXEC_INFO fleet would refuse: fleet runs and says why', async () => {
    const s = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    for (const bad of [
      [...args, '--extra', 'x'],
      [...args, '--cluster', 'again'],
      args.slice(2),
      ['--cluster', '-x'],
      [...args, '--provider'],
      ['--cluster=secrets#eu-1'],
    ]) {
      assertMiss(both(s.path, bad, s.env), bad);
    }
    for (const execInfo of [
      '{',
      '{"kind":"Other","apiVersion":"client.authentication.k8s.io/v1"}',
      info('client.authentication.k8s.io/v2'),
    ]) {
      assertMiss(both(s.path, args, { ...s.env, KUBERNETES_EXEC_INFO: execInfo }), args);
    }
  });

  it('a cache directory others may write to, or a link, is not read', async () => {
    const open = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    chmodSync(dirname(open.path), 0o777);
    assertMiss(both(open.path, args, open.env), args);

    const linked = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN });
    const real = `${dirname(linked.path)}.real`;
    renameSync(dirname(linked.path), real);
    symlinkSync(real, dirname(linked.path));
    const go = runReader(args, linked.env);
    const ts = runTs(args, linked.env);
    assert.equal(go.status, 3);
    assert.equal(ts.status, 3);
  });

  it('says how it is run, and what is wrong when fleet cannot be run, on stderr only', async () => {
    const usage = spawnSync(reader, [], { encoding: 'utf8' });
    assert.equal(usage.status, 2);
    assert.equal(usage.stdout, '');
    assert.match(usage.stderr, /^fleet-credential: run by the exec entries of `fleet kubeconfig export` as: /);

    const s = await seeded(flags, info('client.authentication.k8s.io/v1'), { token: TOKEN }, { expiresIn: -1 });
    const missing = runReader(args, { ...s.env, PATH: '/nonexistent' }, 'fleet');
    assert.equal(missing.status, 1);
    assert.equal(missing.stdout, '');
    assert.equal(
      missing.stderr,
      'fleet-credential: fleet: not found on PATH (install fleet, or export again with --command /absolute/path/to/fleet)\n',
    );
    const gone = runReader(args, s.env, '/nonexistent/fleet');
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /^fleet-credential: cannot run \/nonexistent\/fleet: no such file or directory\n$/);
    for (const run of [usage, missing, gone])
      assert.ok(!`${run.stdout}${run.stderr}`.includes(TOKEN) && !`${run.stdout}${run.stderr}`.includes(KEY));
  });
});

// Issue 38, item 4: the cases of the issue, each of which the two readers of 0b058ef answered differently or badly.
describe('one cache rule: what neither reader takes', () => {
  const flags: CredentialFlags = {
    cluster: 'secrets#eu-1',
    provider: 'secrets',
    'fleet-config': '/etc/fleet/fleet.yaml',
  };
  const args = flagArgs(flags);
  const noToken = (...runs: Run[]) => {
    for (const r of runs)
      assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN), 'the token is never printed');
  };

  it('a FIFO at the entry: both hand over at once (it hung both, and kubectl with them)', async () => {
    const s = await seeded(flags, INFO(), { token: TOKEN });
    rmSync(s.path);
    execFileSync('mkfifo', ['-m', '600', s.path]);
    const started = Date.now();
    const go = runReader(args, s.env, fakeFleet, 10_000);
    const ts = runTs(args, s.env, 20_000);
    assert.equal(go.status, 3, `fleet-credential: ${go.stderr}`);
    assert.equal(ts.status, 3, `fast path: ${ts.stderr}`);
    assert.ok(Date.now() - started < 20_000);
    assert.ok(lstatSync(s.path).isFIFO(), 'left as it was');
  });

  it('a 300 MB entry: refused by its size before it is read, by both (fleet-credential took 1.85 GB RSS)', async () => {
    const s = await seeded(flags, INFO(), { token: TOKEN });
    const text = readFileSync(s.path, 'utf8');
    const at = text.indexOf(TOKEN);
    // A valid entry but for its size: the token is 300 MB long.
    const fd = openSync(s.path, 'w');
    writeSync(fd, text.slice(0, at));
    const chunk = Buffer.alloc(16 * 1024 * 1024, 'A');
    for (let n = 0; n < 300_000_000; n += chunk.length) writeSync(fd, chunk);
    writeSync(fd, text.slice(at));
    closeSync(fd);
    const rss = join(s.home, 'rss');
    const go = spawnSync(
      '/usr/bin/time',
      ['-f', '%M', '-o', rss, reader, '--fleet', fakeFleet, 'kubeconfig', 'credential', ...args],
      { env: { PATH: process.env.PATH!, ...s.env }, encoding: 'utf8', timeout: 60_000 },
    );
    const ts = runTs(args, s.env);
    rmSync(s.path);
    assert.equal(go.status, 3, go.stderr);
    assert.equal(ts.status, 3, ts.stderr);
    const peakMb = Number(readFileSync(rss, 'utf8').trim().split('\n').pop()) / 1024;
    assert.ok(peakMb < 30, `fleet-credential peaked at ${peakMb.toFixed(1)} MB`);
  });

  it('an entry that is a link: neither follows it, and fleet behind fleet-credential prints no planted token', async () => {
    const s = await seeded(flags, INFO(), { token: TOKEN });
    const planted = join(s.home, 'planted.json');
    renameSync(s.path, planted);
    symlinkSync(planted, s.path);
    const before = snapshot(s.dir);
    const r = both(s.path, args, s.env);
    assertMiss(r, args);
    assert.deepEqual(r.afterGo, before);
    noToken(r.ts, r.go);
    // The real fleet behind the real fleet-credential (the launcher's fast path, then the full command, which fails to
    // find the provider here): the token at the link's end is never printed.
    const shim = join(s.home, 'fleet');
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'bin/run.js')}" "$@"\n`, { mode: 0o755 });
    const real = runReader(args, s.env, shim);
    assert.notEqual(real.status, 0);
    noToken(real);
    assert.ok(lstatSync(s.path).isSymbolicLink(), 'the link is left as it is');
  });

  it('capitalised, unknown or repeated keys, another spelling, trailing bytes: both hand over (fleet-credential served them)', async () => {
    for (const spoil of [
      (t: string) => t.replace('"v":2', '"V":2'),
      (t: string) => t.replace('"credential":', '"Credential":'),
      (t: string) => t.replace('"token":', '"Token":'),
      (t: string) => t.replace('"expires":', '"EXPIRES":'),
      (t: string) => t.replace('{"v":2,', '{"v":2,"handedTo":[],'),
      (t: string) => t.replace('{"v":2,', '{"v":2,"cluster":"other",'),
      (t: string) => t.replace('"v":2', '"v":2.0'),
      (t: string) => `${t}\n`,
      (t: string) => `${t}{}`,
      (t: string) => `${t}x`,
      (t: string) => ` ${t}`,
    ]) {
      const s = await seeded(flags, INFO(), { token: TOKEN });
      writeFileSync(s.path, spoil(readFileSync(s.path, 'utf8')), { mode: 0o600 });
      const r = both(s.path, args, s.env);
      assertMiss(r, args);
      noToken(r.ts, r.go);
    }
  });

  it('a directory at the entry, or an entry of another cluster: both hand over; fleet then stores nothing there and leaves the directory (it failed with EISDIR)', async () => {
    const s = await seeded(flags, INFO(), { token: TOKEN });
    rmSync(s.path);
    mkdirSync(s.path);
    assertMiss(both(s.path, args, s.env), args);
    // (both() lays the directory out again, empty: what it holds is put in after.)
    writeFileSync(join(s.path, 'keep'), "not fleet's");
    // Then fleet fetches and stores, as `kubeconfig credential` does after a miss: no EISDIR (every call failed so), the
    // directory and what it holds are left alone, and it stays a miss for both readers.
    const cache = new CredentialCache(credentialIdentity(flags, readExecRequest(INFO()).cluster), s.dir);
    assert.equal(cache.path, s.path);
    await cache.store(flags.cluster!, { token: TOKEN }, Date.now() + 120_000, process.pid);
    assert.equal(await cache.take(flags.cluster!, process.pid + 1), undefined);
    assert.ok(lstatSync(s.path).isDirectory());
    assert.equal(readFileSync(join(s.path, 'keep'), 'utf8'), "not fleet's");
    assertMiss(both(s.path, args, s.env), args);
    const other = await seeded(flags, INFO(), { token: TOKEN });
    writeFileSync(
      other.path,
      readFileSync(other.path, 'utf8').replace('"cluster":"secrets#eu-1"', '"cluster":"secrets#eu-2"'),
      { mode: 0o600 },
    );
    assertMiss(both(other.path, args, other.env), args);
  });

  it('records every handover of 12 concurrent calls from 12 parents, fleet-credential and fleet alike; none is handed out twice', async () => {
    const s = await seeded(flags, INFO(), { token: TOKEN });
    const work = mkdtempSync(join(tmpdir(), 'fleet-handover-'));
    // Each call has its own parent (a shell), as twelve kubectl processes would: it asks, waits for the others, asks again.
    const script =
      'd=$1; shift; echo $$ > "$d/pid"; "$@" > "$d/first" 2>/dev/null; echo $? > "$d/first.rc"; while [ ! -e "$d/../go" ]; do sleep 0.02; done; "$@" > "$d/second" 2>/dev/null; echo $? > "$d/second.rc"';
    const fleetCli = [process.execPath, join(root, 'bin/run.js'), 'kubeconfig', 'credential', ...args];
    const goCli = [reader, '--fleet', fakeFleet, 'kubeconfig', 'credential', ...args];
    const children = Array.from({ length: 12 }, (_, i) => {
      const d = join(work, String(i));
      mkdirSync(d);
      return {
        d,
        child: spawn('sh', ['-c', script, 'sh', d, ...(i % 2 === 0 ? goCli : fleetCli)], {
          env: { PATH: process.env.PATH!, ...s.env },
          stdio: 'ignore',
        }),
      };
    });
    const until = async (done: () => boolean, what: string) => {
      for (let t = 0; !done(); t++) {
        if (t > 3000) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until(() => children.every((c) => existsSync(join(c.d, 'first.rc'))), 'the first calls');
    const pids = children.map((c) => Number(readFileSync(join(c.d, 'pid'), 'utf8')));
    for (const c of children)
      assert.equal(
        readFileSync(join(c.d, 'first.rc'), 'utf8').trim(),
        '0',
        `first call of ${c.d}: ${readFileSync(join(c.d, 'first'), 'utf8')}`,
      );
    for (const c of children) assert.equal(JSON.parse(readFileSync(join(c.d, 'first'), 'utf8')).status.token, TOKEN);
    // Recorded: the handover files (and, in 0b058ef's format, handedTo in the entry).
    const files = snapshot(s.dir);
    const entry = JSON.parse(files.get(basename(s.path))!);
    const recorded = new Set([...handedTo(files, s.path), ...(entry.handedTo ?? [])]);
    assert.deepEqual(
      pids.filter((p) => !recorded.has(p)),
      [],
      `every handover recorded (${recorded.size - 1} of 12 besides the first caller)`,
    );
    writeFileSync(join(work, 'go'), '');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.child.exitCode === null ? c.child.once('exit', r) : r(undefined)))),
    );
    for (const c of children)
      assert.ok(
        !readFileSync(join(c.d, 'second'), 'utf8').includes(TOKEN),
        `second call of ${c.d} was handed the credential again`,
      );
  });
});

// Issue 38, items 4 and 8: fleet's fast path (the very module the launcher runs) and fleet-credential's reading (the
// package the binary uses, in one oracle process) over a generated corpus of calls and cache states: the same decision,
// the same bytes on stdout, the same files left behind. Plus a few hundred of them through the real binary.
describe('the differential corpus: fleet and fleet-credential give the same answer', () => {
  let work = '';
  let shared = { fifo: '', planted: '' };
  before(() => {
    // In memory where there is a tmpfs: on a disk, creating and removing 20,000 case directories is most of the time.
    work = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'fleet-corpus-'));
    shared = { fifo: join(work, 'fifo'), planted: join(work, 'planted.json') };
    execFileSync('mkfifo', ['-m', '600', shared.fifo]);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  const runFast = async (c: CacheCase, env: Record<string, string>) => {
    let stdout = '';
    const hit = await answerFromCache(c.args, env, (text) => (stdout += text), c.caller);
    return { hit, stdout };
  };

  it(`${CORPUS_RUNS} generated cases through both readers' code, the oracle in one process`, async () => {
    const oracle = spawn(buildScriptOutput(join(root, 'test/credential-oracle/build.sh')), [], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: oracle.stdout });
    const waiting: Array<(line: string) => void> = [];
    lines.on('line', (line) => waiting.shift()?.(line));
    const ask = (call: unknown) =>
      new Promise<{ hit: boolean; stdout: string }>((resolve) => {
        waiting.push((line) => {
          const answer = JSON.parse(line);
          resolve({ hit: answer.hit, stdout: Buffer.from(answer.stdout, 'base64').toString('utf8') });
        });
        oracle.stdin.write(`${JSON.stringify(call)}\n`);
      });
    let n = 0;
    const hits = { both: 0, neither: 0 };
    const started = performance.now();
    try {
      await fc.assert(
        fc.asyncProperty(cacheCase, async (c) => {
          n++;
          const ts = join(work, `${n}-ts`);
          const go = join(work, `${n}-go`);
          try {
            const tsEnv = layOut(c, ts, shared);
            const goEnv = layOut(c, go, shared);
            // The oracle works on its copy while the fast path works on the other.
            const asked = ask({
              args: ['kubeconfig', 'credential', ...c.args],
              env: goEnv,
              caller: c.caller,
              now: Date.now(),
            });
            const fast = await runFast(c, tsEnv);
            const slow = await asked;
            assert.equal(slow.hit, fast.hit, 'the same decision');
            assert.equal(slow.stdout, fast.stdout, 'the same ExecCredential, byte for byte');
            assert.equal(cacheSnapshot(go), cacheSnapshot(ts), 'the same cache left behind');
            hits[fast.hit ? 'both' : 'neither']++;
          } finally {
            rmSync(ts, { recursive: true, force: true });
            rmSync(go, { recursive: true, force: true });
          }
        }),
        { numRuns: CORPUS_RUNS },
      );
    } finally {
      oracle.stdin.end();
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `differential corpus: ${n} cases (${hits.both} answered by both, ${hits.neither} by neither) in ${seconds.toFixed(1)} s`,
    );
    // Enough of both kinds that the corpus is not all refusals.
    assert.ok(hits.both > CORPUS_RUNS / 10 && hits.neither > CORPUS_RUNS / 4, JSON.stringify(hits));
  });

  it('200 generated cases through the real fleet-credential binary, against the fast path', async () => {
    const cases = fc.sample(cacheCase, { numRuns: 200 });
    let answered = 0;
    for (const [i, generated] of cases.entries()) {
      // The binary's parent is this test: the handovers of the case are this process's.
      const c = {
        ...generated,
        caller: process.pid,
        handedBefore: generated.handedBefore.map((h) => (h === CALLER ? process.pid : h)),
      };
      const ts = join(work, `bin-${i}-ts`);
      const go = join(work, `bin-${i}-go`);
      const fast = await runFast(c, layOut(c, ts, shared));
      const r = runReader(c.args, layOut(c, go, shared), fakeFleet, 20_000);
      assert.equal(
        r.status,
        fast.hit ? 0 : 3,
        `case ${JSON.stringify(c).slice(0, 1500)}: ${r.stderr} ${r.error ?? ''}`,
      );
      if (fast.hit) assert.equal(r.stdout, fast.stdout);
      else assert.equal(r.stdout, `fleet ppid=${process.pid} args=kubeconfig credential ${c.args.join(' ')}\n`);
      assert.equal(cacheSnapshot(go), cacheSnapshot(ts));
      answered += fast.hit ? 1 : 0;
      rmSync(ts, { recursive: true, force: true });
      rmSync(go, { recursive: true, force: true });
    }
    assert.ok(answered > 10, `${answered} of 200 answered`);
  });
});

describe('which program the exported entries run', () => {
  const exe = (path: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '#!/bin/sh\n', { mode: 0o755 });
    return path;
  };

  it('fleet-credential beside fleet on PATH, by name; beside an absolute --command, by path; else fleet', () => {
    const d = mkdtempSync(join(tmpdir(), 'fleet-runner-'));
    exe(join(d, 'bin/fleet'));
    const env = { PATH: `${join(d, 'bin')}:/usr/bin` };
    assert.deepEqual(
      credentialRunner('fleet', undefined, env),
      { command: 'fleet', prefix: [] },
      'no reader installed',
    );
    exe(join(d, 'bin', READER_NAME));
    assert.deepEqual(credentialRunner('fleet', undefined, env), { command: READER_NAME, prefix: ['--fleet', 'fleet'] });
    assert.deepEqual(credentialRunner(join(d, 'bin/fleet'), undefined, env), {
      command: join(d, 'bin', READER_NAME),
      prefix: ['--fleet', join(d, 'bin/fleet')],
    });
    // Another fleet-credential earlier on PATH is not the one beside fleet: the entry names the right one by path.
    exe(join(d, 'other', READER_NAME));
    assert.deepEqual(credentialRunner('fleet', undefined, { PATH: `${join(d, 'other')}:${join(d, 'bin')}` }), {
      command: join(d, 'bin', READER_NAME),
      prefix: ['--fleet', 'fleet'],
    });
    assert.deepEqual(credentialRunner('fleet', 'none', env), { command: 'fleet', prefix: [] });
    assert.deepEqual(
      credentialRunner('fleet', undefined, { PATH: '/nonexistent' }),
      { command: 'fleet', prefix: [] },
      'fleet not found: the entry still names it',
    );
  });

  it('the default fleet: fleet from npm; the executable by the name PATH finds it by, else by its path', () => {
    const d = mkdtempSync(join(tmpdir(), 'fleet-runner-'));
    assert.equal(defaultFleetCommand({ PATH: '/usr/bin' }, undefined), 'fleet');
    // As krew installs it: the store holds the file, krew's bin directory on PATH a link to it.
    const store = exe(join(d, 'store/fleet-cli/v1/kubectl-fleet_cli'));
    mkdirSync(join(d, 'krew-bin'));
    symlinkSync(store, join(d, 'krew-bin/kubectl-fleet_cli'));
    assert.equal(defaultFleetCommand({ PATH: `/usr/bin:${join(d, 'krew-bin')}` }, store), 'kubectl-fleet_cli');
    // Installed as ~/.local/bin/fleet.
    const installed = exe(join(d, 'local-bin/fleet'));
    assert.equal(defaultFleetCommand({ PATH: join(d, 'local-bin') }, installed), 'fleet');
    // Run from where it was downloaded, not on PATH; or another program of that name comes first on PATH.
    const downloaded = exe(join(d, 'Downloads/fleet-linux-x64'));
    assert.equal(defaultFleetCommand({ PATH: join(d, 'local-bin') }, downloaded), downloaded);
    exe(join(d, 'rancher/fleet'));
    assert.equal(defaultFleetCommand({ PATH: `${join(d, 'rancher')}:${join(d, 'local-bin')}` }, installed), installed);
  });

  it('an explicit reader must be an absolute path to an executable file', () => {
    const d = mkdtempSync(join(tmpdir(), 'fleet-runner-'));
    const r = exe(join(d, 'r'));
    assert.deepEqual(credentialRunner('/usr/local/bin/fleet', r, {}), {
      command: r,
      prefix: ['--fleet', '/usr/local/bin/fleet'],
    });
    assert.throws(
      () => credentialRunner('fleet', 'bin/r', {}),
      (e: Error) =>
        e instanceof UsageError && e.message === '--credential-reader: bin/r is not an absolute path (or "none")',
    );
    assert.throws(
      () => credentialRunner('fleet', join(d, 'missing'), {}),
      (e: Error) => e instanceof UsageError && e.message === `--credential-reader: ${join(d, 'missing')} not found`,
    );
    writeFileSync(join(d, 'plain'), 'x', { mode: 0o644 });
    assert.throws(
      () => credentialRunner('fleet', join(d, 'plain'), {}),
      (e: Error) =>
        e instanceof UsageError && e.message === `--credential-reader: ${join(d, 'plain')} is not executable`,
    );
  });
});
