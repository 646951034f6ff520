// fleet auth plugins at the command line over the user's own kubeconfigs, the way users name them (--kubeconfig with
// HOME empty, KUBECONFIG, a relative path, a symlink), with and without a kuberc: nothing runs, the verdict is kubectl's.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { type PluginEntry, kubercChoice } from '../../src/access/plugins.js';
import type { PluginList } from '../../src/commands/auth/plugins.js';
import { checkKubercHolds, loadKuberc } from '../../src/kubeconfig/kuberc.js';
import { runFleet } from '../support/cli.js';

/** A credential program that is not an interpreter (nothing runs it here: fleet auth plugins only reads). */
const SSO = '/opt/sso/bin/sso-token';

/** A kubeconfig of one cluster, k.example, with these users and contexts (the first context current). */
function kubeconfigText(users: unknown[], contexts: Array<{ name: string; user: string }>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': contexts[0].name,
    clusters: [{ name: 'k', cluster: { server: 'https://k.example:6443' } }],
    users,
    contexts: contexts.map((c) => ({ name: c.name, context: { cluster: 'k', user: c.user } })),
  });
}

/** Users of one file: `sh` runs `first` (an interpreter by default) for contexts a and b, `login` cloudco-login for c. */
async function fixture(first = '/bin/sh') {
  const d = await mkdtemp(join(tmpdir(), 'fleet-plugins-'));
  const marker = join(d, 'ran');
  const exec = (command: string) => ({
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
      command,
      args: ['-c', `touch ${marker}`],
    },
  });
  const kc = join(d, 'fleet.kubeconfig');
  await writeFile(
    kc,
    kubeconfigText(
      [
        { name: 'sh', user: exec(first) },
        { name: 'login', user: exec('cloudco-login') },
        { name: 'token', user: { token: 'not-a-plugin' } },
      ],
      [
        { name: 'a', user: 'sh' },
        { name: 'b', user: 'sh' },
        { name: 'c', user: 'login' },
        { name: 'd', user: 'token' },
      ],
    ),
  );
  await symlink(kc, join(d, 'link.kubeconfig'));
  const deny = join(d, 'deny.kuberc');
  await writeFile(
    deny,
    'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: DenyAll\n',
  );
  return { d, kc, marker, deny };
}

describe('fleet auth plugins over the user’s kubeconfigs', () => {
  it('every spelling of the file gives the same answer: each command once, its clusters, from the user’s file, allowed; nothing runs', async () => {
    const { d, kc, marker } = await fixture();
    const home = await mkdtemp(join(tmpdir(), 'fleet-plugins-home-'));
    const runs = [
      await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'json'], { env: { HOME: home } }),
      await runFleet(['auth', 'plugins', '-o', 'json'], { env: { HOME: home, KUBECONFIG: kc } }),
      await runFleet(['auth', 'plugins', '--kubeconfig', 'fleet.kubeconfig', '-o', 'json'], {
        env: { HOME: home },
        cwd: d,
      }),
      await runFleet(['auth', 'plugins', '--kubeconfig', join(d, 'link.kubeconfig'), '-o', 'json'], {
        env: { HOME: home },
      }),
    ];
    for (const res of runs) {
      assert.equal(res.code, 0, res.stderr);
      const list = res.json<PluginList>();
      assert.equal(list.kuberc, undefined);
      assert.deepEqual(
        list.items.map((p) => [p.command, p.trust, p.allowed, p.clusters.length]),
        [
          ['/bin/sh', 'file', true, 2],
          ['cloudco-login', 'file', true, 1],
        ],
      );
      assert.equal(list.items[0].sources.length, 1);
    }
    assert.equal(existsSync(marker), false, 'listing runs nothing');
    const names = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'name']);
    assert.equal(names.stdout, '/bin/sh\ncloudco-login\n');
  });

  it('a kuberc with DenyAll (--kuberc, KUBERC, ~/.kube/kuberc): each plugin refused naming the kuberc, exit 1; KUBECTL_KUBERC=false turns it off', async () => {
    const { kc, marker, deny } = await fixture();
    const home = await mkdtemp(join(tmpdir(), 'fleet-plugins-home-'));
    const { mkdir, copyFile } = await import('node:fs/promises');
    await mkdir(join(home, '.kube'));
    await copyFile(deny, join(home, '.kube', 'kuberc'));
    for (const [how, args, env] of [
      ['--kuberc', ['--kuberc', deny], {}],
      ['KUBERC', [], { KUBERC: deny }],
      ['default', [], { HOME: home }],
    ] as const) {
      const res = await runFleet(['auth', 'plugins', '--kubeconfig', kc, ...args, '-o', 'json'], { env });
      assert.equal(res.code, 1, how);
      const list = res.json<PluginList>();
      assert.ok(
        list.items.every((p) => !p.allowed),
        how,
      );
      assert.match(list.items[0].reason ?? '', /"\/bin\/sh" not allowed by credentialPluginPolicy DenyAll in /, how);
      const table = await runFleet(['auth', 'plugins', '--kubeconfig', kc, ...args], { env });
      assert.match(
        table.stdout,
        /^COMMAND\s+FROM\s+CLUSTERS\s+ALLOWED\s+REASON\n\/bin\/sh\s+user file\s+.*\s+no\s+/,
        how,
      );
    }
    const off = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'json'], {
      env: { HOME: home, KUBECTL_KUBERC: 'false' },
    });
    assert.equal(off.code, 0, off.stderr);
    // And whoami on the refused context says so in one line, naming the context, the command and the kuberc; nothing runs.
    const who = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '--kuberc', deny]);
    assert.equal(who.code, 1);
    assert.match(
      who.stderr,
      new RegExp(
        `^error: .*context "a" \\(${kc}\\): plugin "/bin/sh" not allowed by credentialPluginPolicy DenyAll in ${deny}`,
        'm',
      ),
    );
    assert.equal(existsSync(marker), false);
  });

  it('--write-kuberc needs a writable place and a command the fleet runs; --command and --dry-run need --write-kuberc', async () => {
    const { kc } = await fixture();
    const noDir = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', '/nonexistent-dir/kuberc']);
    assert.deepEqual(
      [noDir.code, noDir.stderr],
      [2, 'error: --write-kuberc /nonexistent-dir/kuberc: directory /nonexistent-dir does not exist\n'],
    );
    const alone = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--dry-run']);
    assert.deepEqual([alone.code, alone.stderr], [2, 'error: --dry-run needs --write-kuberc\n']);
  });
});

// Issue 38, item 2: --write-kuberc writes what the user chose, under the lock --merge-into takes, through symlinks, and
// says "added" only for entries the file holds, spelled as written.
describe('fleet auth plugins --write-kuberc', () => {
  const V1BETA1 = 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n';

  it('adds the commands of the user’s files, spelled as written (name:, or command: when the list uses it), with the stable JSON', async () => {
    const { d, kc } = await fixture(SSO);
    const kuberc = join(d, 'kuberc');
    const res = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', kuberc]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, `${kuberc}: added name: ${SSO}, name: cloudco-login to credentialPluginAllowlist\n`);
    assert.deepEqual((await loadKuberc({ flag: kuberc, env: {} }))?.allowlist, [SSO, 'cloudco-login']);

    const spelled = [join(d, 'spelled-kuberc'), join(d, 'spelled-kuberc-2')];
    for (const f of spelled)
      await writeFile(
        f,
        `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: ${SSO}\n`,
      );
    const table = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', spelled[0]]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stderr,
      new RegExp(`^${spelled[0]}: added command: cloudco-login to credentialPluginAllowlist$`, 'm'),
    );
    assert.match(await readFile(spelled[0], 'utf8'), /- command: cloudco-login\n/);
    const json = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', spelled[1], '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(json.json<PluginList>().written, {
      path: spelled[1],
      added: ['cloudco-login'],
      dryRun: false,
      entryKey: 'command',
      notAdded: [],
    });
  });

  it('--dry-run writes nothing; a DenyAll kuberc is never loosened (exit 2, file unchanged)', async () => {
    const { d, kc, deny } = await fixture(SSO);
    const kuberc = join(d, 'kuberc');
    await writeFile(kuberc, `${V1BETA1}defaults: []\n`);
    const dry = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', kuberc, '--dry-run']);
    assert.deepEqual(
      [dry.code, dry.stderr],
      [0, `${kuberc}: would add name: ${SSO}, name: cloudco-login to credentialPluginAllowlist\n`],
    );
    assert.equal(await readFile(kuberc, 'utf8'), `${V1BETA1}defaults: []\n`);
    const before = await readFile(deny, 'utf8');
    const denied = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', deny]);
    assert.equal(denied.code, 2);
    assert.match(denied.stderr, /credentialPluginPolicy is DenyAll; fleet does not loosen it/);
    assert.equal(await readFile(deny, 'utf8'), before);
  });

  it('a kuberc that is a symlink stays one: its target is rewritten (0600), also when the target does not exist yet', async () => {
    const { d, kc } = await fixture(SSO);
    const dotfiles = join(d, 'dotfiles');
    await mkdir(dotfiles);
    const target = join(dotfiles, 'kuberc');
    await writeFile(target, V1BETA1, { mode: 0o644 });
    const link = join(d, 'kuberc-link');
    await symlink(target, link);
    const res = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', link]);
    assert.equal(res.code, 0, res.stderr);
    assert.ok((await lstat(link)).isSymbolicLink(), 'the link is still a link');
    assert.equal((await stat(target)).mode & 0o777, 0o600);
    assert.deepEqual((await loadKuberc({ flag: target, env: {} }))?.allowlist, [SSO, 'cloudco-login']);
    assert.ok(!existsSync(`${target}.lock`) && !existsSync(`${link}.lock`), 'no lock left');

    const dangling = join(d, 'dangling-link');
    await symlink('dotfiles/new-kuberc', dangling);
    const made = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', dangling]);
    assert.equal(made.code, 0, made.stderr);
    assert.ok((await lstat(dangling)).isSymbolicLink());
    assert.equal((await stat(join(dotfiles, 'new-kuberc'))).mode & 0o777, 0o600);
    assert.deepEqual((await loadKuberc({ flag: dangling, env: {} }))?.allowlist, [SSO, 'cloudco-login']);
  });

  it('an interpreter is never added, by any name that runs one; the rest is, and the run fails naming what to allow instead', async () => {
    const { d, kc } = await fixture('/bin/sh');
    const kuberc = join(d, 'kuberc');
    const res = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', kuberc]);
    assert.equal(res.code, 1, res.stderr);
    const refusal = `${kuberc}: not adding "/bin/sh": it is an interpreter (a shell), and an allowlist entry for it would let any kubeconfig run any program through its arguments; make the kubeconfig run your wrapper script itself (command: /path/to/script, with its #! line) and add \`- name: /path/to/script\``;
    assert.equal(res.stderr, `${kuberc}: added name: cloudco-login to credentialPluginAllowlist\n${refusal}\n`);
    assert.deepEqual((await loadKuberc({ flag: kuberc, env: {} }))?.allowlist, ['cloudco-login']);
    const json = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', kuberc, '-o', 'json']);
    assert.equal(json.code, 1);
    const w = json.json<PluginList>().written!;
    assert.deepEqual(
      [w.added, w.notAdded.map((n) => [n.command, n.why, n.line, n.message])],
      [[], [['/bin/sh', 'interpreter', '- name: /path/to/script', refusal]]],
    );

    // A link of another name to a shell is judged by the file it runs; the wrapper its arguments name is suggested.
    const link = join(d, 'tok');
    await symlink('/bin/sh', link);
    const only = join(d, 'only-shell.kubeconfig');
    const wrapped = {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: link, args: ['/opt/sso/token.sh', '--eu'] },
    };
    await writeFile(only, kubeconfigText([{ name: 'u', user: wrapped }], [{ name: 'a', user: 'u' }]));
    const fresh = join(d, 'fresh-kuberc');
    const linked = await runFleet(['auth', 'plugins', '--kubeconfig', only, '--write-kuberc', fresh]);
    assert.equal(linked.code, 1);
    assert.equal(
      linked.stderr,
      `${fresh}: nothing was written\n${fresh}: not adding "${link}": it is an interpreter (a shell), and an allowlist entry for it would let any kubeconfig run any program through its arguments; make the kubeconfig run the script itself (command: /opt/sso/token.sh, with its #! line) and add \`- name: /opt/sso/token.sh\`\n`,
    );
    assert.equal(
      existsSync(fresh),
      false,
      'no kuberc made: an empty Allowlist would refuse every plugin the user runs',
    );

    // Named explicitly with --command, it is refused the same way.
    const named = await runFleet([
      'auth',
      'plugins',
      '--kubeconfig',
      kc,
      '--write-kuberc',
      fresh,
      '--command',
      '/bin/sh',
    ]);
    assert.equal(named.code, 1);
    assert.match(named.stderr, /not adding "\/bin\/sh": it is an interpreter \(a shell\)/);
    assert.equal(existsSync(fresh), false);
  });

  it('eight concurrent runs (real processes) adding different commands: every one exits 0 and every entry is in the file', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-plugins-race-'));
    const kuberc = join(d, 'kuberc');
    await writeFile(kuberc, V1BETA1, { mode: 0o600 });
    const commands = Array.from({ length: 8 }, (_, i) => `/opt/tok-${i}/bin/tok`);
    const files = await Promise.all(
      commands.map(async (command, i) => {
        const file = join(d, `k${i}.kubeconfig`);
        await writeFile(
          file,
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Config',
            'current-context': 'c',
            clusters: [{ name: 'k', cluster: { server: 'https://k.example:6443' } }],
            users: [
              {
                name: 'u',
                user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', command } },
              },
            ],
            contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
          }),
        );
        return file;
      }),
    );
    const runs = await Promise.all(
      files.map((file) => runFleet(['auth', 'plugins', '--kubeconfig', file, '--write-kuberc', kuberc])),
    );
    // The file first: on 0b058ef every run said "added" and exited 0 while some of the entries were lost.
    assert.deepEqual(
      [...((await loadKuberc({ flag: kuberc, env: {} }))?.allowlist ?? [])].sort(),
      [...commands].sort(),
    );
    for (const [i, res] of runs.entries())
      assert.deepEqual(
        [res.code, res.stderr],
        [0, `${kuberc}: added name: ${commands[i]} to credentialPluginAllowlist\n`],
        `run ${i}`,
      );
    assert.equal((await stat(kuberc)).mode & 0o777, 0o600);
    assert.ok(!existsSync(`${kuberc}.lock`));
  });
});

describe('kubercChoice and the read-back check', () => {
  const entry = (command: string, trust: 'file' | 'data', sources: string[]): PluginEntry => ({
    command,
    trust,
    sources,
    clusters: ['c'],
    allowed: trust === 'file',
  });

  it('without --command: only the commands of the user’s files; a command only data names is left out with its sources', () => {
    const items = [
      entry('/bin/sh', 'data', ['Secret ns/evil key kubeconfig']),
      entry('/bin/sh', 'data', ['ClusterProfile ns/x']),
      entry('mytok', 'file', ['/home/u/.kube/config']),
      entry('mytok', 'data', ['Secret ns/copy key kubeconfig']),
      entry('argo-login', 'data', ['Secret argocd/c key config']),
    ];
    assert.deepEqual(kubercChoice(items), {
      wanted: ['mytok'],
      dataOnly: [
        { command: '/bin/sh', sources: ['Secret ns/evil key kubeconfig', 'ClusterProfile ns/x'] },
        { command: 'argo-login', sources: ['Secret argocd/c key config'] },
      ],
    });
    // --command is the user choosing by name: exactly those.
    assert.deepEqual(kubercChoice(items, ['/bin/sh', '/bin/sh']), { wanted: ['/bin/sh'], dataOnly: [] });
    assert.deepEqual(kubercChoice([entry('/bin/sh', 'data', ['s'])]), {
      wanted: [],
      dataOnly: [{ command: '/bin/sh', sources: ['s'] }],
    });
  });

  it('checkKubercHolds refuses a file that lacks an entry it reports added', () => {
    const V = 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n';
    assert.doesNotThrow(() =>
      checkKubercHolds(
        `${V}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: a}, {command: b}]\n`,
        'k',
        ['a', 'b'],
      ),
    );
    assert.throws(
      () =>
        checkKubercHolds(`${V}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: a}]\n`, 'k', [
          'a',
          'b',
        ]),
      {
        message:
          'k: read back after writing, credentialPluginAllowlist lacks b (another program rewrote the file meanwhile?); nothing is reported added, run again',
      },
    );
    assert.throws(() => checkKubercHolds(`${V}credentialPluginPolicy: AllowAll\n`, 'k', ['a']), /lacks a/);
    assert.throws(() => checkKubercHolds('', 'k', ['a']), /lacks a/);
  });
});
