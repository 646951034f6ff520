// fleet as a kubectl plugin (issue 31): krew, built from its Go module (test/krew/build.sh), installs fleet from the
// manifest and archive `npm run executable` wrote (dist/exe/krew/fleet-cli.yaml, dist/exe/kubectl-fleet_cli-linux-amd64
// .tar.gz) into a scratch KREW_ROOT, run as `kubectl krew` by the harness's kubectl; then `kubectl fleet-cli` runs fleet:
// --version, and `auth whoami` against the real control plane. Offline: krew's default index is a local git repository
// holding the one manifest (krew clones it from GitHub otherwise), and the archive is given with --archive.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const MANIFEST = join(ROOT, 'dist/exe/krew/fleet-cli.yaml');
const ARCHIVE = join(ROOT, 'dist/exe/kubectl-fleet_cli-linux-amd64.tar.gz');

let krewRoot = '';
let env: NodeJS.ProcessEnv = {};

function run(
  cmd: string,
  args: string[],
  extra: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env: { ...env, ...extra }, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

before(() => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/executable.mjs'), '--arch', 'x64'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  });
  const krew = buildScriptOutput(join(ROOT, 'test/krew/build.sh'), 1_200_000);
  const dir = join(scratchDir(), uniqueName('krew'));
  krewRoot = join(dir, 'krew-root');
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  // kubectl finds krew as the plugin kubectl-krew on PATH, as krew's own installation links it.
  symlinkSync(krew, join(bin, 'kubectl-krew'));
  symlinkSync(cp.binaries.kubectl, join(bin, 'kubectl'));
  // The default index: a git repository with plugins/fleet-cli.yaml, where `kubectl krew update` would clone krew-index.
  const index = join(dir, 'index');
  mkdirSync(join(index, 'plugins'), { recursive: true });
  copyFileSync(MANIFEST, join(index, 'plugins', 'fleet-cli.yaml'));
  const git = (args: string[], cwd: string) =>
    execFileSync('git', args, {
      cwd,
      stdio: 'ignore',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'fleet',
        GIT_AUTHOR_EMAIL: 'fleet@example.com',
        GIT_COMMITTER_NAME: 'fleet',
        GIT_COMMITTER_EMAIL: 'fleet@example.com',
      },
    });
  git(['init', '-q', '-b', 'master'], index);
  git(['add', '.'], index);
  git(['commit', '-q', '-m', 'fleet-cli'], index);
  mkdirSync(join(krewRoot, 'index'), { recursive: true });
  git(['clone', '-q', index, join(krewRoot, 'index', 'default')], dir);
  env = {
    PATH: `${join(krewRoot, 'bin')}:${bin}:/usr/bin:/bin`,
    HOME: join(dir, 'home'),
    KREW_ROOT: krewRoot,
    // No check for a newer krew on GitHub: the test is offline.
    KREW_NO_UPGRADE_CHECK: '1',
    KUBECONFIG: '',
  };
});

describe('the krew plugin', { concurrency: false }, () => {
  it('has a manifest krew accepts, named fleet-cli, with kubectl-fleet_cli as its binary', () => {
    const m = yaml.load(readFileSync(MANIFEST, 'utf8')) as any;
    assert.equal(m.kind, 'Plugin');
    assert.equal(m.metadata.name, 'fleet-cli');
    assert.equal(m.spec.version, `v${VERSION}`);
    const amd64 = m.spec.platforms.find((p: any) => p.selector.matchLabels.arch === 'amd64');
    assert.equal(amd64.bin, 'kubectl-fleet_cli');
    assert.equal(amd64.sha256, execFileSync('sha256sum', [ARCHIVE], { encoding: 'utf8' }).split(' ')[0]);
    // krew-index asks for the licence in the archive and installed with the plugin.
    assert.ok(
      amd64.files.some((f: any) => f.from === 'LICENSE' && f.to === '.'),
      JSON.stringify(amd64.files),
    );
  });

  it('has an archive of the executable, its SBOM and LICENSE, root-owned at the epoch', () => {
    // GNU tar's verbose listing: mode, owner/group, size, date, time, name.
    const listing = execFileSync('tar', ['--numeric-owner', '--utc', '-tvzf', ARCHIVE], {
      encoding: 'utf8',
      maxBuffer: 16 << 20,
    })
      .trim()
      .split('\n');
    const entries = listing.map((line) => {
      const [mode, owner, , date, time, name] = line.split(/\s+/);
      return { mode, owner, when: `${date} ${time}`, name };
    });
    assert.deepEqual(
      entries.map((e) => e.name),
      ['LICENSE', 'fleet-linux-x64.cdx.json', 'kubectl-fleet_cli'],
    );
    for (const e of entries) {
      assert.equal(e.owner, '0/0', `${e.name}: ${listing.join('\n')}`);
      assert.equal(e.when, '1970-01-01 00:00', `${e.name}: ${listing.join('\n')}`);
    }
    assert.deepEqual(
      entries.map((e) => e.mode),
      ['-rw-r--r--', '-rw-r--r--', '-rwxr-xr-x'],
    );
  });

  it('installs with kubectl krew install --manifest --archive into a scratch KREW_ROOT', async () => {
    const res = await run('kubectl', ['krew', 'install', `--manifest=${MANIFEST}`, `--archive=${ARCHIVE}`]);
    assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}`);
    const link = join(krewRoot, 'bin', 'kubectl-fleet_cli');
    assert.ok(existsSync(link), `${link} after install:\n${res.stderr}`);
    assert.equal(realpathSync(link), join(krewRoot, 'store', 'fleet-cli', `v${VERSION}`, 'kubectl-fleet_cli'));
    const installed = dirname(realpathSync(link));
    assert.ok(existsSync(join(installed, 'fleet-linux-x64.cdx.json')), 'the SBOM is installed beside it');
    assert.ok(existsSync(join(installed, 'LICENSE')), 'the LICENSE is installed beside it');
    assert.equal(readFileSync(join(installed, 'LICENSE'), 'utf8'), readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
    const list = await run('kubectl', ['krew', 'list']);
    assert.equal(list.code, 0, list.stderr);
    // Installed from a manifest file, not from an index: krew lists it as detached.
    assert.match(list.stdout, /^detached\/fleet-cli$/m);
    // The manifest as an index entry: krew reads and validates it there too.
    const info = await run('kubectl', ['krew', 'info', 'fleet-cli']);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, new RegExp(`^VERSION: v${VERSION.replace(/\./g, '\\.')}$`, 'm'));
    const plugins = await run('kubectl', ['plugin', 'list']);
    assert.match(plugins.stdout, /\/kubectl-fleet_cli$/m);
  });

  it('runs as kubectl fleet-cli: --version, and auth whoami on the sandbox', async () => {
    const version = await run('kubectl', ['fleet-cli', '--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.match(
      version.stdout,
      new RegExp(`^fleet/${VERSION.replace(/\./g, '\\.')} linux-x64 node-v26\\.\\d+\\.\\d+\\n$`),
    );
    assert.equal(version.stderr, '');

    const bob = tokenUser(cp.hub, 'bob');
    const who = await run('kubectl', ['fleet-cli', 'auth', 'whoami', '-o', 'json'], { KUBECONFIG: bob.kubeconfigPath });
    assert.equal(who.code, 0, who.stderr);
    const out = JSON.parse(who.stdout);
    assert.equal(out.items.length, 1, who.stdout);
    assert.equal(out.items[0].user.username, 'bob', who.stdout);
    assert.ok(!who.stdout.includes(bob.token) && !who.stderr.includes(bob.token), 'the token appears in the output');
  });

  it('kubeconfig export as the plugin: the entries run kubectl-fleet_cli, which krew put on PATH, and kubectl uses them', async () => {
    const bob = tokenUser(cp.hub, 'bob');
    mkdirSync(env.HOME!, { recursive: true });
    const out = join(env.HOME!, 'exported.kubeconfig');
    const res = await run('kubectl', [
      'fleet-cli',
      'kubeconfig',
      'export',
      '--kubeconfig',
      bob.kubeconfigPath,
      '--all',
      '--out',
      out,
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const text = readFileSync(out, 'utf8');
    assert.ok(!text.includes(bob.token), 'the token is in the exported file');
    const exec = (yaml.load(text) as any).users[0].user.exec;
    assert.equal(exec.command, 'kubectl-fleet_cli', 'no fleet is on PATH here: the entry names the plugin');
    const context = JSON.parse(res.stdout).items[0].context;
    const who = await run('kubectl', [
      '--kubeconfig',
      out,
      '--context',
      context,
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username}',
    ]);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'bob');
    assert.ok(!who.stdout.includes(bob.token) && !who.stderr.includes(bob.token) && !res.stdout.includes(bob.token));
  });

  it('uninstalls cleanly', async () => {
    const res = await run('kubectl', ['krew', 'uninstall', 'fleet-cli']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(!existsSync(join(krewRoot, 'bin', 'kubectl-fleet_cli')));
  });
});
