// fleet's single executable (scripts/executable.mjs, issue 31) on the real control plane: the journeys' main commands
// run by dist/exe/fleet-linux-x64 with no node on PATH at all, and again with the machine's Node 20 first on PATH, each
// giving the same stdout, stderr and exit code, byte for byte, as the bundle (`node bin/run.js`) for the same command.
// Masked, as legitimately different: the Node version fleet names in `--version`, `--help` and its user agent (the
// executable carries Node 26; the bundle runs on the test's Node), and in JSON the numbers measured or counted from the
// clock (latencyMs, ageSeconds, verify's "in 31.8ms").
// Mutations (creds generate, rotate, revoke) run once, by the executable; the bundle and the executable both preview
// them (--dry-run) first and both list the result after.
// The executables are built once per bundle: scripts/executable.mjs keeps them in ~/.cache/fleet/exe/ keyed by the
// bundle's hash. The arm64 one cannot run here; its shape (an aarch64 ELF), checksum file and SBOM are checked.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  closeSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { kubectlResult, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { mergedKubeconfig } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXE = join(ROOT, 'dist/exe/fleet-linux-x64');
const run = uniqueName('exe');
const hubNs = `${run}-hub`;
const nsSys = `${run}-sys`;
const nsApp = `${run}-app`;

let dir = '';
let merged = '';
/** PATH with no node in it at all (fleet is run by its absolute path). */
let noNode = '';
/** PATH with the machine's node (20 here) first, then the usual directories. */
let node20 = '';
const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();

/**
 * What legitimately differs between two runs of the same command: the Node version fleet names in `--version`,
 * `--help` and its user agent (Node 26 in the executable, the test's Node for the bundle), and what is measured or
 * counted from the clock (in JSON a request's latencyMs and a credential's ageSeconds; verify's "ready (/readyz) in
 * 31.8ms").
 */
const mask = (text: string) =>
  text
    .replace(/node-v\d+\.\d+\.\d+/g, 'node-vX')
    .replace(/("\w*(?:Ms|Seconds)": )[\d.]+/g, '$1N')
    .replace(/ in [\d.]+ms\b/g, ' in Nms');

const env = (path: string): NodeJS.ProcessEnv => ({ PATH: path, KUBECONFIG: merged, HOME: join(dir, 'home') });

async function exe(args: string[], path = noNode, extra: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const res = await runFleet(args, { executable: EXE, env: { ...env(path), ...extra }, cwd: dir, timeoutMs: 120_000 });
  outputs.push({ what: `(executable) ${args.join(' ')}`, res });
  return res;
}

async function bundle(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { env: env(process.env.PATH ?? ''), cwd: dir, timeoutMs: 120_000 });
  outputs.push({ what: `(bundle) ${args.join(' ')}`, res });
  return res;
}

/** The executable (with no node on PATH, then with Node 20 first) and the bundle give the same output for ARGS. */
async function same(args: string[], expectCode = 0): Promise<CliResult> {
  const b = await bundle(args);
  assert.equal(
    b.code,
    expectCode,
    `bundle: fleet ${args.join(' ')}: exit ${b.code}\n${b.stderr}${b.stdout.slice(0, 2000)}`,
  );
  for (const [label, path] of [
    ['no node on PATH', noNode],
    ['node 20 first on PATH', node20],
  ]) {
    const e = await exe(args, path);
    assert.equal(
      e.code,
      b.code,
      `executable (${label}): fleet ${args.join(' ')}: exit ${e.code}, the bundle's ${b.code}\n${e.stderr}`,
    );
    assert.equal(mask(e.stdout), mask(b.stdout), `executable (${label}): fleet ${args.join(' ')}: stdout differs`);
    assert.equal(mask(e.stderr), mask(b.stderr), `executable (${label}): fleet ${args.join(' ')}: stderr differs`);
  }
  return b;
}

before(() => {
  dir = join(scratchDir(), run);
  mkdirSync(join(dir, 'home'), { recursive: true, mode: 0o700 });
  merged = join(dir, 'merged.yaml');
  writeFileSync(merged, mergedKubeconfig([hub, m1, m2], hub.context), { mode: 0o600 });
  noNode = join(dir, 'empty-bin');
  mkdirSync(noNode);
  node20 = join(dir, 'node20-bin');
  mkdirSync(node20);
  symlinkSync(
    execFileSync('sh', ['-c', 'PATH=/usr/local/bin:/usr/bin:/bin command -v node'], { encoding: 'utf8' }).trim(),
    join(node20, 'node'),
  );
  node20 = `${node20}:/usr/local/bin:/usr/bin:/bin`;
  // Built (or copied from the cache when this bundle was built before) for both architectures.
  execFileSync(process.execPath, [join(ROOT, 'scripts/executable.mjs')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 600_000,
  });
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false', '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, nsApp, '--wait=false', '--ignore-not-found']);
});

describe('the single executable', { concurrency: false }, () => {
  it('is what PATH says: no node in the first, Node 20 first in the second', () => {
    const which = (path: string) => {
      try {
        return execFileSync('sh', ['-c', 'command -v node && node --version'], {
          env: { PATH: path },
          encoding: 'utf8',
        }).trim();
      } catch {
        return '';
      }
    };
    assert.equal(which(noNode), '');
    assert.match(which(node20), /\nv20\./);
  });

  it('--version and --help as the bundle prints them, the executable naming Node 26', async () => {
    const v = await exe(['--version']);
    assert.match(v.stdout, /^fleet\/\d+\.\d+\.\d+ linux-x64 node-v26\.\d+\.\d+\n$/);
    await same(['--version']);
    await same(['--help']);
    await same(['clusters', '--help']);
  });

  it('clusters list, inspect and verify over the hub and two members', async () => {
    const list = await same(['clusters', 'list', '-o', 'json']);
    assert.equal(list.json().items.length, 3);
    await same(['clusters', 'list']);
    const inspect = await same(['clusters', 'inspect', m1.context, '-o', 'json']);
    assert.ok(inspect.stdout.includes(m1.url), inspect.stdout);
    const verify = await same(['clusters', 'verify', '--all', '-o', 'json']);
    assert.equal(verify.json().items.length, 3);
  });

  it('auth whoami and can-i over every cluster', async () => {
    const who = await same(['auth', 'whoami', '--all', '-o', 'json']);
    assert.equal(who.json().items.length, 3);
    await same(['auth', 'can-i', 'list', 'pods', '--all']);
    await same(['auth', 'can-i', 'list', 'pods', '--all', '-o', 'json']);
  });

  it("an exec credential plugin on 20 contexts: run through fleet's spawner, which is the executable itself", async () => {
    // Past 16 exec runs fleet starts them from its spawner process (src/base/subprocess.ts): a plain Node is given its
    // source with -e, the executable through its environment. Each user's args differ ($0), so none shares a cached run.
    const { token } = tokenUser(m1, 'alice');
    secrets.add(token);
    const cred = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token },
    });
    const base = yaml.load(readFileSync(m1.kubeconfig, 'utf8')) as any;
    const n = 20;
    const file = join(dir, 'exec.kubeconfig');
    writeFileSync(
      file,
      yaml.dump({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'e-0',
        clusters: [{ name: 'm1', cluster: base.clusters[0].cluster }],
        users: Array.from({ length: n }, (_, i) => ({
          name: `u-${i}`,
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: '/bin/sh',
              args: ['-c', `printf '%s' '${cred}'`, `u-${i}`],
              interactiveMode: 'Never',
            },
          },
        })),
        contexts: Array.from({ length: n }, (_, i) => ({ name: `e-${i}`, context: { cluster: 'm1', user: `u-${i}` } })),
      }),
      { mode: 0o600 },
    );
    const who = await same(['auth', 'whoami', '--all', '--kubeconfig', file, '-o', 'json']);
    const items = who.json().items;
    assert.equal(items.length, n);
    assert.ok(
      items.every((i: any) => !i.error),
      who.stdout,
    );
  });

  it('creds generate, list, rotate and revoke one credential (previews compared, mutations by the executable)', async () => {
    const hubArgs = ['--hub-kubeconfig', hub.kubeconfig];
    await kubectlResult(hub, ['create', 'namespace', hubNs]);
    for (const ns of [nsSys, nsApp]) await kubectlResult(m1, ['create', 'namespace', ns]);
    const gen = [
      'creds',
      'generate',
      '-c',
      m1.context,
      '--service-account',
      `${nsSys}/app`,
      '--role',
      'view',
      '-n',
      nsApp,
      '--secret',
      `${hubNs}/app`,
      '--format',
      'multicluster-runtime',
      '--duration',
      '2h',
      ...hubArgs,
    ];
    await same([...gen, '--dry-run', '-o', 'json']);
    const made = await exe([...gen, '-o', 'json']);
    assert.equal(made.code, 0, made.stderr);
    const secret = JSON.parse((await kubectlResult(hub, ['get', 'secret', 'app', '-n', hubNs, '-o', 'json'])).stdout);
    const kubeconfig = Buffer.from(Object.values(secret.data as Record<string, string>)[0], 'base64').toString('utf8');
    const token = (yaml.load(kubeconfig) as any).users[0].user.token as string;
    assert.ok(token, 'the Secret holds a token');
    secrets.add(token);

    const list = ['creds', 'list', ...hubArgs, '-o', 'json'];
    const listed = await same(list);
    assert.ok(
      listed
        .json()
        .items.some((i: any) => i.location?.includes(`${hubNs}/app`) || JSON.stringify(i).includes(`${hubNs}/app`)),
      listed.stdout,
    );

    const rotate = ['creds', 'rotate', `${hubNs}/app`, '--kubeconfig', merged, ...hubArgs];
    await same([...rotate, '--dry-run', '-o', 'json']);
    const rotated = await exe([...rotate, '-o', 'json']);
    assert.equal(rotated.code, 0, rotated.stderr + rotated.stdout);
    const after = JSON.parse((await kubectlResult(hub, ['get', 'secret', 'app', '-n', hubNs, '-o', 'json'])).stdout);
    const newToken = (
      yaml.load(Buffer.from(Object.values(after.data as Record<string, string>)[0], 'base64').toString('utf8')) as any
    ).users[0].user.token as string;
    assert.notEqual(newToken, token);
    secrets.add(newToken);
    await same(list);

    const revoke = ['creds', 'revoke', `${hubNs}/app`, '--kubeconfig', merged, ...hubArgs];
    await same([...revoke, '--dry-run', '-o', 'json']);
    const revoked = await exe([...revoke, '-o', 'json']);
    assert.equal(revoked.code, 0, revoked.stderr + revoked.stdout);
    assert.equal((await kubectlResult(hub, ['get', 'secret', 'app', '-n', hubNs])).code, 1);
    await same(list);
  });

  it('a newcomer: fleet and fleet-credential on a PATH with no node, export --all --merge-into ~/.kube/config, kubectl on every cluster', async () => {
    // Installed as the README says: both files in one directory on PATH, nothing else there but kubectl and grep.
    const bin = join(dir, 'installed');
    mkdirSync(bin);
    copyFileSync(EXE, join(bin, 'fleet'));
    chmodSync(join(bin, 'fleet'), 0o755);
    copyFileSync(join(ROOT, 'dist/exe/fleet-credential-linux-x64'), join(bin, 'fleet-credential'));
    chmodSync(join(bin, 'fleet-credential'), 0o755);
    symlinkSync(cp.binaries.kubectl, join(bin, 'kubectl'));
    symlinkSync(execFileSync('sh', ['-c', 'command -v grep'], { encoding: 'utf8' }).trim(), join(bin, 'grep'));
    const home = join(dir, 'newcomer');
    mkdirSync(home, { mode: 0o700 });
    const sh = (command: string, extra: NodeJS.ProcessEnv = {}) => {
      try {
        return {
          code: 0,
          out: execFileSync('/bin/sh', ['-c', command], {
            env: { PATH: bin, HOME: home, ...extra },
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 120_000,
          }),
        };
      } catch (error: any) {
        return { code: error.status as number, out: `${error.stdout}${error.stderr}` };
      }
    };
    const exported = sh('fleet kubeconfig export --all --merge-into ~/.kube/config', { KUBECONFIG: merged });
    assert.equal(exported.code, 0, exported.out);
    const config = readFileSync(join(home, '.kube/config'), 'utf8');
    assert.equal(sh('grep -c token ~/.kube/config').out.trim(), '0', 'a token in the merged kubeconfig');
    for (const s of secrets) assert.ok(!config.includes(s));
    const doc = yaml.load(config) as any;
    assert.equal(doc.contexts.length, 3);
    for (const u of doc.users) {
      assert.equal(u.user.exec.command, 'fleet-credential', 'found beside fleet on PATH: named as fleet is');
      assert.deepEqual(u.user.exec.args.slice(0, 4), ['--fleet', 'fleet', 'kubeconfig', 'credential']);
    }
    const whoami = (context: string) =>
      sh(`kubectl --context '${context}' auth whoami -o jsonpath='{.status.userInfo.username}'`);
    const want = (context: string) =>
      execFileSync(
        cp.binaries.kubectl,
        [
          '--kubeconfig',
          merged,
          '--context',
          context.replace(/^file\//, ''),
          'auth',
          'whoami',
          '-o',
          'jsonpath={.status.userInfo.username}',
        ],
        { encoding: 'utf8' },
      );
    // Cold: fleet-credential finds nothing and runs fleet, which fills the cache.
    for (const c of doc.contexts) {
      const who = whoami(c.name);
      assert.equal(who.code, 0, `${c.name}: ${who.out}`);
      assert.equal(who.out, want(c.name), c.name);
      assert.equal(sh(`kubectl --context '${c.name}' get ns -o name`).code, 0);
    }
    // Warm, with fleet gone from PATH: every call is answered by fleet-credential alone.
    renameSync(join(bin, 'fleet'), join(dir, 'fleet-away'));
    try {
      for (const c of doc.contexts) {
        const who = whoami(c.name);
        assert.equal(who.code, 0, `warm ${c.name} (fleet-credential alone): ${who.out}`);
        assert.equal(who.out, want(c.name), c.name);
      }
      // And without the cache, the same call needs fleet: the entries do not work by fleet-credential alone.
      rmSync(join(home, '.cache/fleet/credentials'), { recursive: true });
      const cold = whoami(doc.contexts[0].name);
      assert.notEqual(cold.code, 0);
      assert.match(cold.out, /fleet-credential: fleet: not found on PATH/);
    } finally {
      renameSync(join(dir, 'fleet-away'), join(bin, 'fleet'));
    }
  });

  it('a configuration error: the same one line and exit 2', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: Config\ncontexts: {not: a list}\n', { mode: 0o600 });
    const res = await same(['clusters', 'list', '--kubeconfig', bad], 2);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  });

  it('no secret made here appears in any output', () => {
    assert.ok(secrets.size >= 3, `only ${secrets.size} secrets remembered`);
    for (const { what, res } of outputs) {
      for (const s of secrets)
        assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a secret in the output of fleet ${what}`);
    }
  });

  it("a new build's first start removes builds unpacked over a day ago, and nothing else; a start that finds its own removes nothing", async () => {
    // The executable unpacks into $TMPDIR/fleet-exe-<uid>/<its bundle's hash>/: learn that hash from a first TMPDIR.
    const uid = process.getuid!();
    const first = join(dir, 'tmp-first');
    mkdirSync(first);
    const probe = await exe(['--version'], noNode, { TMPDIR: first });
    assert.equal(probe.code, 0, probe.stderr);
    const built = readdirSync(join(first, `fleet-exe-${uid}`)).filter((n) => /^[0-9a-f]{16}$/.test(n));
    assert.equal(built.length, 1, `unpacked: ${built.join(', ')}`);
    const own = built[0];

    const tmp = join(dir, 'tmp-prune');
    const base = join(tmp, `fleet-exe-${uid}`);
    mkdirSync(base, { recursive: true, mode: 0o700 });
    const day = 24 * 60 * 60;
    const now = Date.now() / 1000;
    const plant = (name: string, age: number) => {
      mkdirSync(join(base, name));
      writeFileSync(join(base, name, 'cli.cjs'), '// an older build\n');
      utimesSync(join(base, name), now - age, now - age);
    };
    plant('0123456789abcdef', 2 * day); // another build, unpacked two days ago: removed
    plant('.unpack-Ab12Cd', 2 * day); // an unpack killed two days ago: removed
    plant('fedcba9876543210', day - 3600); // another build, unpacked 23 hours ago: may be running, kept
    plant('not-a-build', 2 * day); // not fleet's name: kept
    plant('0123456789ABCDEF', 2 * day); // not a hash as fleet names one (upper case): kept
    writeFileSync(join(base, 'aaaaaaaaaaaaaaaa'), 'a file, not a directory\n');
    utimesSync(join(base, 'aaaaaaaaaaaaaaaa'), now - 2 * day, now - 2 * day);
    // A link with a build's name to an old directory elsewhere: neither the link nor what it points to is touched.
    const target = join(dir, 'link-target');
    mkdirSync(target);
    writeFileSync(join(target, 'keep'), 'keep\n');
    utimesSync(target, now - 2 * day, now - 2 * day);
    symlinkSync(target, join(base, 'bbbbbbbbbbbbbbbb'));
    lutimesSync(join(base, 'bbbbbbbbbbbbbbbb'), now - 2 * day, now - 2 * day);
    // Another user's directory (only root can make one): kept.
    const foreign = uid === 0 ? 'cccccccccccccccc' : undefined;
    if (foreign) {
      plant(foreign, 2 * day);
      chownSync(join(base, foreign), 65534, 65534);
      utimesSync(join(base, foreign), now - 2 * day, now - 2 * day);
    }

    const fresh = await exe(['--version'], noNode, { TMPDIR: tmp });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, probe.stdout);
    const left = readdirSync(base).sort();
    const expected = [
      own,
      'fedcba9876543210',
      'not-a-build',
      '0123456789ABCDEF',
      'aaaaaaaaaaaaaaaa',
      'bbbbbbbbbbbbbbbb',
      ...(foreign ? [foreign] : []),
    ].sort();
    assert.deepEqual(left, expected);
    assert.ok(lstatSync(join(base, 'bbbbbbbbbbbbbbbb')).isSymbolicLink());
    assert.equal(readFileSync(join(target, 'keep'), 'utf8'), 'keep\n');
    assert.ok(existsSync(join(base, 'fedcba9876543210', 'cli.cjs')));

    // The next start finds its own build and looks at nothing else: an old build planted now stays.
    plant('1111111111111111', 2 * day);
    const again = await exe(['--version'], noNode, { TMPDIR: tmp });
    assert.equal(again.code, 0, again.stderr);
    assert.ok(
      existsSync(join(base, '1111111111111111', 'cli.cjs')),
      'a start that unpacked nothing removed an old build',
    );
  });

  it('a fleet-exe-<uid> another user planted (their directory, a link, a writable directory, a file) is never used: it unpacks into the user’s cache, saying so; both refused is one line naming both', async () => {
    const uid = process.getuid!();
    const cases: Array<[string, (p: string) => void]> = [
      [
        'a link',
        (p) => {
          const elsewhere = join(dir, 'planted-target');
          mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
          symlinkSync(elsewhere, p);
        },
      ],
      [
        'a directory anyone may write',
        (p) => {
          mkdirSync(p);
          chmodSync(p, 0o777);
        },
      ],
      ['a file', (p) => writeFileSync(p, 'planted\n')],
      ...(uid === 0
        ? ([
            [
              'another user’s directory',
              (p: string) => {
                mkdirSync(p, { mode: 0o755 });
                chownSync(p, 65534, 65534);
              },
            ],
          ] as Array<[string, (p: string) => void]>)
        : []),
    ];
    for (const [i, [what, plantIt]] of cases.entries()) {
      const tmp = join(dir, `tmp-planted-${i}`);
      const cache = join(dir, `cache-planted-${i}`);
      mkdirSync(tmp);
      const shared = join(tmp, `fleet-exe-${uid}`);
      plantIt(shared);
      const before = lstatSync(shared);
      const res = await exe(['--version'], noNode, { TMPDIR: tmp, XDG_CACHE_HOME: cache });
      assert.equal(res.code, 0, `${what}: ${res.stderr}`);
      assert.match(res.stdout, /^fleet\/\d+\.\d+\.\d+ /, what);
      const own = join(cache, 'fleet', 'exe-unpacked');
      assert.match(
        res.stderr,
        new RegExp(`^fleet: not unpacking into ${shared} \\(.*\\); unpacked into ${own} instead\n$`),
        what,
      );
      const unpacked = readdirSync(own).filter((n) => /^[0-9a-f]{16}$/.test(n));
      assert.equal(unpacked.length, 1, what);
      assert.ok(existsSync(join(own, unpacked[0], 'fleet.mjs')), `${what}: the bundle is in the user's cache`);
      assert.equal(statSync(own).mode & 0o777, 0o700, what);
      const after = lstatSync(shared);
      assert.deepEqual(
        [after.ino, after.uid, after.mode],
        [before.ino, before.uid, before.mode],
        `${what}: left as planted`,
      );
    }
    // Both refused: the cache's directory is a link too. One line naming both, exit 1, nothing run.
    const tmp = join(dir, 'tmp-planted-both');
    const cache = join(dir, 'cache-planted-both');
    mkdirSync(tmp);
    mkdirSync(join(cache, 'fleet'), { recursive: true });
    symlinkSync(tmp, join(tmp, `fleet-exe-${uid}`));
    symlinkSync(tmp, join(cache, 'fleet', 'exe-unpacked'));
    const both = await exe(['--version'], noNode, { TMPDIR: tmp, XDG_CACHE_HOME: cache });
    assert.equal(both.code, 1);
    assert.equal(
      both.stderr,
      `Error: fleet could not unpack itself: ${join(tmp, `fleet-exe-${uid}`)} is not a directory of this user that only it may write to; and ${join(cache, 'fleet', 'exe-unpacked')} is not a directory of this user that only it may write to (TMPDIR and XDG_CACHE_HOME name where it unpacks)\n`,
    );
    assert.equal(both.stdout, '');
  });

  it('the arm64 executable: an aarch64 ELF, its checksum file and an SBOM of Node and the bundled packages', () => {
    const arm = join(ROOT, 'dist/exe/fleet-linux-arm64');
    const head = Buffer.alloc(20);
    const fd = openSync(arm, 'r');
    readSync(fd, head, 0, 20, 0);
    closeSync(fd);
    assert.equal(head.subarray(0, 4).toString('latin1'), '\x7fELF');
    assert.equal(head.readUInt16LE(18), 183, 'e_machine is EM_AARCH64');
    for (const name of ['fleet-linux-x64', 'fleet-linux-arm64']) {
      const file = join(ROOT, 'dist/exe', name);
      const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
      assert.equal(readFileSync(`${file}.sha256`, 'utf8'), `${sum}  ${name}\n`);
      const sbom = JSON.parse(readFileSync(`${file}.cdx.json`, 'utf8'));
      assert.equal(sbom.bomFormat, 'CycloneDX');
      assert.equal(sbom.metadata.component.hashes[0].content, sum);
      const node = sbom.components.find((c: any) => c.name === 'node');
      assert.match(node.version, /^26\./);
      const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages;
      for (const pkg of ['@oclif/core', 'js-yaml', 'chalk', 'jose', 'ajv']) {
        const c = sbom.components.find((x: any) => x.name === pkg);
        assert.ok(c, `${name}: the SBOM lists ${pkg}`);
        assert.equal(c.version, lock[`node_modules/${pkg}`].version);
        assert.ok(c.licenses?.length, `${pkg} has a licence in the SBOM`);
      }
    }
    assert.ok(existsSync(EXE));
  });

  it('fleet-credential for both architectures: static ELFs with their checksum files', () => {
    for (const [arch, machine] of [
      ['x64', 62],
      ['arm64', 183],
    ] as const) {
      const name = `fleet-credential-linux-${arch}`;
      const file = join(ROOT, 'dist/exe', name);
      const data = readFileSync(file);
      assert.equal(data.subarray(0, 4).toString('latin1'), '\x7fELF');
      assert.equal(data.readUInt16LE(18), machine, `${name}: e_machine`);
      assert.equal(
        readFileSync(`${file}.sha256`, 'utf8'),
        `${createHash('sha256').update(data).digest('hex')}  ${name}\n`,
      );
    }
    const usage = spawnSync(join(ROOT, 'dist/exe/fleet-credential-linux-x64'), [], { env: {}, encoding: 'utf8' });
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /^fleet-credential: run by the exec entries of `fleet kubeconfig export`/);
  });
});
