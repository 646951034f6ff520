// Issue 32's papercuts a newcomer hit that need no cluster, each at the command line with HOME empty: what help offers,
// and what fleet says when there is no kubeconfig or no such context.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { inTerminal, runFleet } from '../support/cli.js';

const flat = (text: string) => text.replace(/\s+/g, ' ');

describe('help says what each command takes', () => {
  it('wi token --help offers neither -o prometheus nor --concurrency (it prints one ExecCredential from one hub)', async () => {
    const res = await runFleet(['wi', 'token', '--help']);
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stdout, /prometheus/);
    assert.doesNotMatch(res.stdout, /--concurrency/);
    assert.doesNotMatch(res.stdout, /--output/);
    // Still the hub's flags, and -o json still works as it did (refused formats are refused in run).
    assert.match(res.stdout, /--hub-kubeconfig/);
    const yaml = await runFleet(['wi', 'token', '-o', 'yaml', '--service-account', 'a/b']);
    assert.deepEqual(
      [yaml.code, yaml.stderr],
      [2, 'error: -o yaml: fleet wi token prints the ExecCredential, which is JSON\n'],
    );
  });

  it('creds rotate --help: --shard-count splits the Secrets of --all, not clusters', async () => {
    const res = await runFleet(['creds', 'rotate', '--help']);
    assert.equal(res.code, 0, res.stderr);
    const help = flat(res.stdout);
    const from = help.indexOf('--shard-count=<value>');
    assert.ok(from >= 0, help);
    const entry = help.slice(from, help.indexOf('GLOBAL FLAGS', from));
    assert.match(entry, /Secrets/, entry);
    assert.doesNotMatch(entry, /cluster/, entry);
  });

  it('creds rotate: the summary (its line in creds --help too) says files are rotated, not only hub Secrets', async () => {
    const own = await runFleet(['creds', 'rotate', '--help']);
    assert.equal(own.code, 0, own.stderr);
    const summary = own.stdout.split('\n')[0];
    assert.match(summary, /hub Secrets or kubeconfig files \(--file\)/, summary);
    const topic = flat((await runFleet(['creds', '--help'])).stdout);
    assert.match(
      topic,
      /creds rotate Replace fleet-made credentials, in hub Secrets or kubeconfig files \(--file\)/,
      topic,
    );
  });
});

const KC = `apiVersion: v1
kind: Config
clusters: [{name: k, cluster: {server: "https://k.example:6443"}}]
users: [{name: u, user: {token: not-a-secret-here}}]
contexts: [{name: one, context: {cluster: k, user: u}}, {name: two, context: {cluster: k, user: u}}]
`;

describe('no kubeconfig, or no such context: said as such', () => {
  it('clusters list with no ~/.kube/config and no KUBECONFIG says the file does not exist (exit 0, as before)', async () => {
    const home = await mkdtemp(join(tmpdir(), 'fleet-papercut-home-'));
    const res = await runFleet(['clusters', 'list'], { cwd: home, env: { HOME: home } });
    assert.deepEqual(
      [res.code, res.stdout, res.stderr],
      [0, '', `No clusters found in ${join(home, '.kube', 'config')} (no such file).\n`],
    );
    const listed = await runFleet(['clusters', 'list'], {
      cwd: home,
      env: { HOME: home, KUBECONFIG: join(home, 'a') },
    });
    assert.deepEqual(
      [listed.code, listed.stderr],
      [0, `No clusters found in KUBECONFIG=${join(home, 'a')} (none of its files exist).\n`],
    );
  });

  it('auth whoami with no kubeconfig names the missing file instead of "no current-context is set in" it', async () => {
    const home = await mkdtemp(join(tmpdir(), 'fleet-papercut-home-'));
    const res = await runFleet(['auth', 'whoami'], { cwd: home, env: { HOME: home } });
    assert.deepEqual(
      [res.code, res.stdout, res.stderr],
      [
        2,
        '',
        `error: no kubeconfig: ${join(home, '.kube', 'config')} does not exist and KUBECONFIG is not set; pass --kubeconfig or set KUBECONFIG\n`,
      ],
    );
    const env = await runFleet(['auth', 'whoami'], {
      cwd: home,
      env: { HOME: home, KUBECONFIG: `${join(home, 'a')}:${join(home, 'b')}` },
    });
    assert.deepEqual(
      [env.code, env.stderr],
      [
        2,
        `error: no kubeconfig: none of the files in KUBECONFIG=${join(home, 'a')}:${join(home, 'b')} exist; pass --kubeconfig or set KUBECONFIG\n`,
      ],
    );
    // A kubeconfig that exists without a current-context keeps its own words.
    await mkdir(join(home, '.kube'));
    await writeFile(join(home, '.kube', 'config'), KC);
    const none = await runFleet(['auth', 'whoami'], { cwd: home, env: { HOME: home } });
    assert.deepEqual(
      [none.code, none.stderr],
      [2, `error: no current-context is set in ${join(home, '.kube', 'config')}; name a cluster or pass --context\n`],
    );
  });

  it('--context nosuch names the context, where it looked and the contexts there, as clusters list does (exit 2)', async () => {
    const home = await mkdtemp(join(tmpdir(), 'fleet-papercut-home-'));
    await mkdir(join(home, '.kube'));
    const file = join(home, '.kube', 'config');
    await writeFile(file, KC);
    const want = `error: --context "nosuch": no such context in ${file}; contexts: one, two\n`;
    for (const args of [
      ['auth', 'whoami'],
      ['auth', 'can-i', 'get', 'pods'],
      ['clusters', 'list'],
    ]) {
      const res = await runFleet([...args, '--context', 'nosuch'], { cwd: home, env: { HOME: home } });
      assert.deepEqual([res.code, res.stdout, res.stderr], [2, '', want], args.join(' '));
    }
    const json = await runFleet(['auth', 'whoami', '--context', 'nosuch', '-o', 'json'], {
      cwd: home,
      env: { HOME: home },
    });
    assert.deepEqual(json.json(), { error: { kind: 'usage', message: want.slice('error: '.length, -1) } });
    // No kubeconfig at all: the missing file is named, and no empty list of contexts.
    const empty = await mkdtemp(join(tmpdir(), 'fleet-papercut-home-'));
    const res = await runFleet(['auth', 'whoami', '--context', 'nosuch'], { cwd: empty, env: { HOME: empty } });
    assert.deepEqual(
      [res.code, res.stderr],
      [2, `error: --context "nosuch": no such context in ${join(empty, '.kube', 'config')} (no such file)\n`],
    );
  });
});

describe('creds rotate and creds revoke refuse what fleet did not write alike', () => {
  it('--file of a kubeconfig fleet did not write: exit 2 and one line from both, the file untouched, no lock left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-papercut-foreign-'));
    const file = join(dir, 'foreign.kubeconfig');
    await writeFile(file, KC);
    const want = (verb: string, done: string) =>
      `error: --file ${file} was not written by fleet creds generate (no fleet.dev/credential extension): fleet ${verb} only what it made; nothing was ${done}\n`;
    const rotate = await runFleet(['creds', 'rotate', '--file', file], { cwd: dir, env: { HOME: dir } });
    assert.deepEqual([rotate.code, rotate.stdout, rotate.stderr], [2, '', want('rotates', 'rotated')]);
    const revoke = await runFleet(['creds', 'revoke', '--file', file], { cwd: dir, env: { HOME: dir } });
    assert.deepEqual([revoke.code, revoke.stdout, revoke.stderr], [2, '', want('revokes', 'deleted')]);
    assert.equal(await readFile(file, 'utf8'), KC);
    assert.deepEqual(await readdir(dir), ['foreign.kubeconfig']);
  });
});

describe('creds rotate shows progress at a terminal, as clusters verify does', () => {
  // Three kubeconfig files fleet "wrote" (the extension is there) for a cluster nobody lists: each rotation fails at once,
  // so the run is quick and still has three credentials to count.
  const written = (i: number) => `${KC}current-context: one
extensions:
- name: fleet.dev/credential
  extension: {method: token, identity: "system:serviceaccount:team:app-${i}", cluster: gone-${i}}
`;

  it('[n/N] credentials on stderr, rewritten in place and erased at the end; nothing of it without a terminal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-papercut-progress-'));
    const files = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const file = join(dir, `c${i}.kubeconfig`);
        await writeFile(file, written(i));
        return file;
      }),
    );
    const args = ['creds', 'rotate', ...files.flatMap((f) => ['--file', f])];
    const tty = await inTerminal(args, { TERM: 'xterm', HOME: dir }, { cwd: dir });
    const ESC = '\u001B';
    for (const line of ['[0/3] credentials', '[1/3] credentials, 1 failed', '[2/3] credentials, 2 failed']) {
      assert.ok(tty.includes(`\r${ESC}[2K${line}`), `${line} in ${JSON.stringify(tty)}`);
    }
    // Erased before the table and the errors are written, so the line never mixes with them.
    const erased = tty.lastIndexOf(`\r${ESC}[2K`);
    assert.ok(erased < tty.indexOf('CREDENTIAL') && erased < tty.indexOf('error:'), JSON.stringify(tty));
    const piped = await runFleet(args, { cwd: dir, env: { HOME: dir } });
    assert.equal(piped.code, 1, piped.stderr);
    assert.doesNotMatch(piped.stderr + piped.stdout, /credentials, |\[\d\/3\]|\u001B/);
  });
});
