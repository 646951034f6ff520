// Issue 49's papercuts of the command line, each at the built CLI: a bad -v/--verbosity level, `help` of a typo, flags
// before can-i's arguments, a named kuberc that does not exist, wi token's missing hub kubeconfig and wi setup with no
// flags. Each is one line `error: ...`, exit 2, naming what to change.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A kubeconfig of token users (no exec plugin: nothing in it reads the kuberc) with contexts hub and other. */
async function kubeconfig(server = 'https://127.0.0.1:1'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-usage-'));
  const file = join(dir, 'fleet.kubeconfig');
  await writeFile(
    file,
    `apiVersion: v1
kind: Config
current-context: hub
clusters: [{name: k, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: not-a-secret-here}}]
contexts: [{name: hub, context: {cluster: k, user: u}}, {name: other, context: {cluster: k, user: u}}]
`,
  );
  return file;
}

/** The error line alone: exactly one line on stderr, no stack trace, exit 2. */
function oneUsageLine(res: { code: number; stderr: string }, what: string): string {
  assert.equal(res.code, 2, `${what}: ${res.stderr}`);
  const lines = res.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `${what}: one line, got:\n${res.stderr}`);
  assert.match(lines[0], /^error: /, what);
  return lines[0];
}

const LEVELS = 'use a whole number from 0 (6 logs each request, 7 adds request headers, 8 response headers)';

describe('a bad -v or --verbosity level', () => {
  const list = ['clusters', 'list', '--kubeconfig', 'examples/fleet', '-o', 'name'];

  it('--verbosity abc, --verbosity=abc, --verbosity -1, 1.5: one line naming the flag, the value and the levels', async () => {
    for (const [spelling, value] of [
      [['--verbosity', 'abc'], 'abc'],
      [['--verbosity=abc'], 'abc'],
      [['--verbosity', '-1'], '-1'],
      [['--verbosity=1.5'], '1.5'],
      [['--verbose', '--verbosity', 'abc'], 'abc'],
    ] as const) {
      const line = oneUsageLine(await runFleet([...list, ...spelling], { cwd: REPO }), spelling.join(' '));
      assert.equal(line, `error: --verbosity: "${value}" is not a log level; ${LEVELS}`, spelling.join(' '));
    }
  });

  it('-v abc, --v abc, -v=abc, --v=abc: one line about -v, which takes a level or nothing', async () => {
    for (const [spelling, flag] of [
      [['-v', 'abc'], '-v'],
      [['--v', 'abc'], '--v'],
      [['-v=abc'], '-v'],
      [['--v=abc'], '--v'],
      [['-v', '-1'], '-v'],
    ] as const) {
      const value = spelling.length === 2 ? spelling[1] : spelling[0].split('=')[1];
      const line = oneUsageLine(await runFleet([...list, ...spelling], { cwd: REPO }), spelling.join(' '));
      assert.equal(
        line,
        `error: ${flag}: "${value}" is not a log level; ${LEVELS}, or ${flag} alone for --verbose`,
        spelling.join(' '),
      );
    }
  });

  it('-v before an argument is still --verbose with that argument, and -v N still a level', async () => {
    // The cluster name after -v is the argument of clusters inspect, not a level (src/cli/argv.ts).
    const inspect = await runFleet(
      ['clusters', 'inspect', '-v', 'staging', '--offline', '--kubeconfig', 'examples/fleet'],
      {
        cwd: REPO,
      },
    );
    assert.equal(inspect.code, 0, inspect.stderr);
    const leveled = await runFleet([...list, '-v', '6'], { cwd: REPO });
    assert.equal(leveled.code, 0, leveled.stderr);
  });
});

describe('help of a command that does not exist', () => {
  it('fleet help clustrs: one line with the closest topic, exit 2', async () => {
    const res = await runFleet(['help', 'clustrs']);
    assert.deepEqual(
      [res.code, res.stderr, res.stdout],
      [2, 'error: "clustrs" is not a fleet command or topic; did you mean "clusters"?\n', ''],
    );
  });

  it('fleet help clusters lst: the closest command; nothing close: run "fleet help"', async () => {
    const lst = await runFleet(['help', 'clusters', 'lst']);
    assert.deepEqual(
      [lst.code, lst.stderr],
      [2, 'error: "clusters lst" is not a fleet command or topic; did you mean "clusters list"?\n'],
    );
    const far = await runFleet(['help', 'zzzzzzzz']);
    assert.deepEqual(
      [far.code, far.stderr],
      [2, 'error: "zzzzzzzz" is not a fleet command or topic; run "fleet help"\n'],
    );
  });

  it('help of what exists is unchanged: a topic, a command, the root', async () => {
    for (const argv of [['help', 'clusters'], ['help', 'clusters', 'list'], ['help'], ['help', 'auth', 'can-i']]) {
      const res = await runFleet(argv);
      assert.equal(res.code, 0, `${argv.join(' ')}: ${res.stderr}`);
      assert.equal(res.stderr, '');
      assert.match(res.stdout, /^USAGE$/m);
    }
  });
});

describe('auth can-i: flags before the arguments, as kubectl users type them', () => {
  type Answer = {
    query: { verb: string; resource: string; name?: string };
    namespace?: string;
    as?: { user: string; groups: string[] };
    items: Array<{ cluster: string }>;
  };
  const canI = async (file: string, argv: string[]): Promise<Answer> => {
    const res = await runFleet(['auth', 'can-i', ...argv, '--kubeconfig', file, '-o', 'json']);
    // The cluster is unreachable (127.0.0.1:1): exit 1 with its answer, never a usage error.
    assert.equal(res.code, 1, `${argv.join(' ')}: ${res.stderr}`);
    return res.json<Answer>();
  };
  const clusters = (a: Answer) => a.items.map((i) => i.cluster.split('+').at(-1));

  it('-c, --cluster=, --context, --all, -A, -n and --as-group before, between or after VERB RESOURCE', async () => {
    const file = await kubeconfig();
    const cases: Array<[string[], string[], string | undefined]> = [
      [['get', 'pods', '-c', 'hub'], ['hub'], undefined],
      [['-c', 'hub', 'get', 'pods'], ['hub'], undefined],
      [['--cluster', 'hub', 'get', 'pods'], ['hub'], undefined],
      [['--cluster=hub', 'get', 'pods'], ['hub'], undefined],
      [['get', '-c', 'hub', 'pods'], ['hub'], undefined],
      [['--context=hub', 'get', 'pods'], ['hub'], undefined],
      [['--context', 'other', 'get', 'pods'], ['other'], undefined],
      [['-c', 'hub', '-c', 'other', 'get', 'pods'], ['hub', 'other'], undefined],
      [['--all', 'get', 'pods'], ['hub', 'other'], undefined],
      [['-A', 'get', 'pods'], ['hub', 'other'], undefined],
      [['-n', 'team', '-c', 'hub', 'get', 'pods'], ['hub'], 'team'],
      [['-c', 'hub', '-n', 'team', 'get', 'pods'], ['hub'], 'team'],
      [['get', 'pods', '-n', 'team', '-c', 'hub'], ['hub'], 'team'],
      [['--all-namespaces', '-c', 'hub', 'get', 'pods'], ['hub'], ''],
    ];
    for (const [argv, want, namespace] of cases) {
      const answer = await canI(file, argv);
      assert.deepEqual(answer.query, { verb: 'get', resource: 'pods' }, argv.join(' '));
      assert.deepEqual(clusters(answer), want, argv.join(' '));
      assert.equal(answer.namespace, namespace, argv.join(' '));
    }
    const named = await canI(file, ['-c', 'hub', 'get', 'pods', 'web-0']);
    assert.deepEqual(named.query, { verb: 'get', resource: 'pods', name: 'web-0' });
    const as = await canI(file, ['--as', 'jane', '--as-group', 'devs', 'get', 'pods', '-c', 'hub']);
    assert.deepEqual(
      [as.query, as.as],
      [
        { verb: 'get', resource: 'pods' },
        { user: 'jane', groups: ['devs'] },
      ],
    );
  });

  it('a value after a repeatable flag is its one value, in every command (no flag swallows the arguments after it)', async () => {
    // oclif's `multiple: true` takes every word up to the next flag unless multipleNonGreedy is set: `-c hub get pods`
    // read get and pods as clusters. Every repeatable flag fleet defines says it takes one value per use.
    const dir = join(REPO, 'src/commands');
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 20);
    const greedy: string[] = [];
    for (const f of files) {
      const command = (await import(join(dir, f))).default as {
        flags?: Record<string, { multiple?: boolean; multipleNonGreedy?: boolean }>;
        baseFlags?: Record<string, { multiple?: boolean; multipleNonGreedy?: boolean }>;
      };
      for (const [name, flag] of Object.entries({ ...command.baseFlags, ...command.flags }))
        if (flag.multiple && !flag.multipleNonGreedy) greedy.push(`${f}: --${name}`);
    }
    assert.deepEqual(greedy, []);
    // A command without arguments still refuses a second word after one value (kubectl takes one value per flag).
    const file = await kubeconfig();
    const stray = await runFleet(['auth', 'whoami', '-c', 'hub', 'other', '--kubeconfig', file]);
    assert.equal(oneUsageLine(stray, 'auth whoami -c hub other'), 'error: Unexpected argument: other');
  });
});

describe('--kuberc naming a file that does not exist', () => {
  it('is one line naming the flag and the path, exit 2, before any cluster is touched (as kubectl 1.34+)', async () => {
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const file = await kubeconfig(`https://127.0.0.1:${port}`);
      const missing = join(tmpdir(), 'fleet-no-such-dir', 'kuberc');
      for (const argv of [
        ['auth', 'whoami', '--kuberc', missing],
        ['auth', 'whoami', `--kuberc=${missing}`],
        ['clusters', 'verify', '--all', '--kuberc', missing],
        ['clusters', 'list', '--kuberc', missing],
      ]) {
        const line = oneUsageLine(await runFleet([...argv, '--kubeconfig', file]), argv.join(' '));
        assert.equal(line, `error: --kuberc ${missing}: file not found`, argv.join(' '));
      }
      // KUBERC is a named kuberc too (kubectl: "explicitly" requested); the default ~/.kube/kuberc may be absent.
      const env = await runFleet(['auth', 'whoami', '--kubeconfig', file], { env: { KUBERC: missing } });
      assert.equal(oneUsageLine(env, 'KUBERC'), `error: KUBERC ${missing}: file not found`);
      assert.equal(connections, 0, 'no cluster was contacted');
      const absentDefault = await runFleet(['clusters', 'list', '--kubeconfig', file, '-o', 'name']);
      assert.deepEqual([absentDefault.code, absentDefault.stderr], [0, '']);
    } finally {
      server.close();
    }
  });
});

describe('wi token --hub-kubeconfig naming a file that does not exist', () => {
  it('says so first, in one line naming the flag and the path (not the audience KUBERNETES_EXEC_INFO lacks)', async () => {
    const missing = join(tmpdir(), 'fleet-no-such-dir', 'hub.kubeconfig');
    for (const extra of [[], ['--service-account', 'a/b'], ['--service-account', 'a/b', '--audience', 'https://x']]) {
      const res = await runFleet(['wi', 'token', '--hub-kubeconfig', missing, ...extra]);
      assert.equal(
        oneUsageLine(res, extra.join(' ')),
        `error: --hub-kubeconfig ${missing}: file not found`,
        extra.join(' '),
      );
    }
  });
});

describe('wi setup without its required flags', () => {
  it('says in one sentence which flags are missing and what each names', async () => {
    const none = await runFleet(['wi', 'setup']);
    assert.equal(
      oneUsageLine(none, 'wi setup'),
      'error: missing --target (the cluster that should accept the token) and --service-account (the hub ServiceAccount, NAMESPACE/NAME); see --help',
    );
    const one = await runFleet(['wi', 'setup', '--target', 'prod']);
    assert.equal(
      oneUsageLine(one, 'wi setup --target prod'),
      'error: missing --service-account (the hub ServiceAccount, NAMESPACE/NAME); see --help',
    );
  });
});
