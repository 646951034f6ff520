// Small command-line conventions (issue 14 item 8): -h, --color=false, FORCE_COLOR=0, TERM=dumb, help text wrapped by
// oclif, examples that exist and parse, the did-you-mean prompt, plain parse errors and kubectl's -v levels. Terminal
// behaviour is tested in a real terminal: `script` gives the CLI a pty and records the raw bytes, tmux drives a prompt.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

import { Config, Parser } from '@oclif/core';

import { normalizeArgv } from '../../src/cli/argv.js';
import { colorEnabled } from '../../src/cli/color.js';
import { FLEET_BIN, inTerminal as inTerminalAt, runFleet } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const ESC = '\u001B';

const shellQuote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/** Runs fleet at a terminal (test/support/cli.ts), in the repository (examples/ is read from there). */
const inTerminal = (args: string[], env: NodeJS.ProcessEnv) => inTerminalAt(args, env, { cwd: REPO });

describe('-h is help', () => {
  for (const argv of [['-h'], ['clusters', '-h'], ['clusters', 'list', '-h'], ['auth', 'can-i', 'get', 'pods', '-h']]) {
    it(`fleet ${argv.join(' ')}`, async () => {
      const res = await runFleet(argv, { cwd: REPO });
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^USAGE$/m);
      assert.equal(res.stderr, '');
    });
  }
});

describe('colour', () => {
  const list = ['clusters', 'list', '--kubeconfig', 'examples/fleet', '-o', 'wide'];

  it('--color=false and --color=true are accepted; another value is one usage error', async () => {
    const off = await runFleet([...list, '--color=false'], { cwd: REPO, env: { NO_COLOR: '' } });
    assert.equal(off.code, 0, off.stderr);
    assert.ok(!off.stdout.includes(ESC));
    // staging has insecure-skip-tls-verify, which the wide table colours.
    const on = await runFleet([...list, '--color=true'], { cwd: REPO, env: { NO_COLOR: '' } });
    assert.equal(on.code, 0, on.stderr);
    assert.ok(on.stdout.includes(`${ESC}[33minsecure`), on.stdout);
    const bad = await runFleet([...list, '--color=sometimes'], { cwd: REPO });
    assert.deepEqual(
      [bad.code, bad.stderr],
      [2, 'error: --color: "sometimes" is not true or false (also: always, never, auto)\n'],
    );
  });

  it('FORCE_COLOR=0 turns colour off, even at a terminal', async () => {
    const tty = { isTTY: true } as NodeJS.WriteStream;
    assert.equal(colorEnabled({ stream: tty, env: { FORCE_COLOR: '0' } }), false);
    assert.equal(colorEnabled({ stream: tty, env: { FORCE_COLOR: 'false' } }), false);
    assert.equal(
      colorEnabled({ stream: tty, env: { FORCE_COLOR: '0' }, flag: true }),
      true,
      'an explicit --color still wins',
    );
    const plain = await inTerminal(list, { TERM: 'xterm', FORCE_COLOR: '0' });
    assert.match(plain, /staging\.kubeconfig\+admin/);
    assert.ok(!plain.includes(ESC), JSON.stringify(plain));
    const coloured = await inTerminal(list, { TERM: 'xterm' });
    assert.ok(coloured.includes(`${ESC}[33minsecure`), 'colour at a terminal by default (so the check above can fail)');
  });
});

describe('progress line', () => {
  // Six example clusters, none reachable: the run is quick, and the progress line is drawn between them.
  const whoami = [
    'auth',
    'whoami',
    '--all',
    '--kubeconfig',
    'examples/fleet',
    '--request-timeout',
    '1s',
    '--cluster-timeout',
    '2s',
  ];

  it('uses cursor control at a terminal, and none with TERM=dumb', async () => {
    const smart = await inTerminal(whoami, { TERM: 'xterm' });
    assert.ok(smart.includes(`\r${ESC}[2K[`), 'a progress line at a normal terminal (so the check below can fail)');
    const dumb = await inTerminal(whoami, { TERM: 'dumb' });
    assert.match(dumb, /prod-eu/);
    assert.ok(!dumb.includes(ESC), JSON.stringify(dumb));
  });
});

/** Every fleet command class (not the plugins' own), loaded through oclif as the CLI loads them. */
async function commands() {
  const config = await Config.load(REPO);
  return Promise.all(
    config.commands.filter((c) => c.pluginName === config.name).map(async (c) => ({ id: c.id, cls: await c.load() })),
  );
}

describe('help text', () => {
  it('descriptions have no hard line breaks inside a paragraph (oclif wraps them to the terminal)', async () => {
    const cmds = await commands();
    assert.ok(cmds.length >= 5);
    for (const { id, cls } of cmds) {
      for (const text of [cls.description ?? '', cls.summary ?? '']) {
        assert.doesNotMatch(text, /[^\n]\n[^\n]/, `${id}: a line break inside a paragraph`);
      }
    }
  });

  it('root description names only what exists', async () => {
    const pjson = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const ids = new Set((await commands()).map((c) => c.id));
    // Each feature the description names must be a command that exists.
    const features: Array<[RegExp, string]> = [
      [/verify/, 'clusters:verify'],
      [/credentials/, 'creds:generate'],
      [/workload identity/, 'wi:test'],
    ];
    for (const [pattern, id] of features) {
      if (pattern.test(pjson.description))
        assert.ok(ids.has(id), `the description names ${pattern} but there is no ${id} command`);
    }
  });

  it('every example names a command and parses with its flags', async () => {
    const cmds = await commands();
    const ids = cmds.map((c) => c.id.split(':').join(' ')).sort((a, b) => b.length - a.length);
    let count = 0;
    for (const { id, cls } of cmds) {
      for (const example of (cls.examples ?? []) as Array<string | { command: string }>) {
        const line = (typeof example === 'string' ? example : example.command).replace('<%= config.bin %>', 'fleet');
        // The fleet part of a shell line: up to the first && or |.
        const words = line
          .split(/\s+(?:&&|\|\|?)\s+/)[0]
          .match(/"[^"]*"|'[^']*'|\S+/g)!
          .map((w) => w.replace(/^["']|["']$/g, ''));
        assert.equal(words[0], 'fleet', line);
        const named = ids.find(
          (i) =>
            words
              .slice(1)
              .join(' ')
              .startsWith(i + ' ') || words.slice(1).join(' ') === i,
        );
        assert.equal(named, id.split(':').join(' '), `${line}: belongs to another command`);
        const argv = normalizeArgv(words.slice(1 + named.split(' ').length));
        await assert.doesNotReject(
          Parser.parse(argv, {
            flags: { ...cls.baseFlags, ...cls.flags },
            args: cls.args ?? {},
            strict: cls.strict ?? true,
          }),
          `${line}: does not parse`,
        );
        count++;
      }
    }
    assert.ok(count >= 15, `only ${count} examples`);
  });

  it('the examples that need no cluster work against examples/fleet', async () => {
    const cmds = await commands();
    const offline = cmds
      .flatMap(({ cls }) => (cls.examples ?? []) as string[])
      .map((e) => e.replace('<%= config.bin %> ', ''))
      .filter((e) => e.includes('examples/fleet'));
    assert.ok(offline.length >= 2, offline.join('\n'));
    for (const example of offline) {
      const res = await runFleet(example.split(' '), { cwd: REPO });
      assert.equal(res.code, 0, `${example}\n${res.stderr}`);
      assert.notEqual(res.stdout, '');
    }
  });
});

describe('the did-you-mean prompt, in a real terminal (tmux)', () => {
  const tmux = (...args: string[]) => run('tmux', args).then((r) => r.stdout);

  async function answer(key: string): Promise<string> {
    const session = `fleet-dym-${process.pid}-${key}`;
    const command = `cd ${shellQuote(REPO)} && env -u CI -u FORCE_COLOR NO_COLOR=1 KUBECONFIG= ${shellQuote(process.execPath)} ${shellQuote(FLEET_BIN)} clustrs list --kubeconfig examples/fleet -o name; echo "EXIT=$?"; sleep 60`;
    await tmux('new-session', '-d', '-s', session, '-x', '150', '-y', '40', command);
    try {
      let screen = '';
      for (let i = 0; i < 100 && !/Did you mean clusters list\?/.test(screen); i++) {
        await new Promise((r) => setTimeout(r, 100));
        screen = await tmux('capture-pane', '-p', '-t', session);
      }
      assert.match(screen, /Did you mean clusters list\?/);
      await tmux('send-keys', '-t', session, key, 'Enter');
      for (let i = 0; i < 100 && !/EXIT=\d+/.test(screen); i++) {
        await new Promise((r) => setTimeout(r, 100));
        screen = await tmux('capture-pane', '-p', '-t', session, '-S', '-40');
      }
      return screen;
    } finally {
      await tmux('kill-session', '-t', session).catch(() => {});
    }
  }

  it('"no" is a usage error: one line, exit 2', async () => {
    const screen = await answer('n');
    assert.match(screen, /^error: "clustrs list" is not a fleet command; run "fleet help"$/m);
    assert.match(screen, /^EXIT=2$/m);
  });

  it('"yes" runs the suggested command', async () => {
    const screen = await answer('y');
    assert.match(screen, /^examples\/fleet\/prod\.kubeconfig\+prod-eu$/m);
    assert.match(screen, /^EXIT=0$/m);
  });
});

describe('parse errors in plain words', () => {
  it('-n with --all-namespaces, and a bad --request-timeout: one line each, exit 2', async () => {
    const both = await runFleet(
      ['auth', 'can-i', 'get', 'pods', '--all-namespaces', '-n', 'team-a', '--kubeconfig', 'examples/fleet'],
      { cwd: REPO },
    );
    assert.deepEqual(
      [both.code, both.stderr],
      [2, 'error: --all-namespaces and --namespace cannot be used together; use one of them\n'],
    );
    const timeout = await runFleet(
      ['clusters', 'list', '--kubeconfig', 'examples/fleet', '--request-timeout', 'soon'],
      { cwd: REPO },
    );
    assert.deepEqual(
      [timeout.code, timeout.stderr],
      [2, 'error: --request-timeout: invalid duration "soon" (use forms like 30s, 1m, 500ms, or 0 for none)\n'],
    );
  });
});

describe('-v, with and without a level', () => {
  it('reads -v N, -v=N, -vN and --v=N as a level; bare -v stays --verbose; nothing after -- changes', () => {
    for (const spelling of [['-v', '6'], ['-v=6'], ['-v6'], ['--v=6'], ['--v', '6']]) {
      assert.deepEqual(
        normalizeArgv(['auth', 'whoami', ...spelling]),
        ['auth', 'whoami', '--verbose', '--verbosity=6'],
        spelling.join(' '),
      );
    }
    assert.deepEqual(normalizeArgv(['clusters', 'inspect', '-v', 'prod']), ['clusters', 'inspect', '-v', 'prod']);
    assert.deepEqual(normalizeArgv(['x', '--', '-v', '6', '--color=false']), ['x', '--', '-v', '6', '--color=false']);
  });

  it('-v 6 is accepted where a number used to be a stray argument; -v and -v 6 both print the stack of an error', async () => {
    for (const v of [['-v'], ['-v', '6'], ['-v=8']]) {
      const res = await runFleet(
        ['clusters', 'inspect', '--kubeconfig', join(REPO, 'no-such-dir', 'x.kubeconfig'), ...v],
        { cwd: REPO },
      );
      assert.equal(res.code, 2, res.stderr);
      assert.match(res.stderr, /^error: /);
      assert.match(res.stderr, /^\s+at /m, `${v.join(' ')}: a stack trace`);
    }
    const listed = await runFleet(['clusters', 'list', '--kubeconfig', 'examples/fleet', '-v', '6', '-o', 'name'], {
      cwd: REPO,
    });
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.trim().split('\n').length, 6);
  });
});
