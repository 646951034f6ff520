// Generated attacks on what fleet runs (issue 38, items 1 and 8): command spellings, PATH layouts and environment
// names, each property over at least 10,000 cases, against oracles that are not fleet:
// (a) Go's exec.LookPath and exec.Command on the same directory tree (test/exec-oracle, one process for every case);
// (b) an independent list of the variables that choose what runs, and a real bash run with every accepted name set to
//     payloads that would make bash run a planted program if the name chose anything;
// (c) client-go 1.35's credential plugin allowlist check (k8s.io/client-go plugin/pkg/client/auth/exec), called
//     in-process by the same oracle, for generated commands, PATHs and allowlists;
// (d) the whole approval of a hub Secret's command: what it approves to run is the file Go runs for the clean command;
// (e) variables from data (issue 46): a real plugin's /proc/PID/environ holds exactly what its allowlist entry names,
//     the oracle being the rule itself (set inclusion), not fleet's code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import fc from 'fast-check';

import { goClean, pluginAllowed, resolveProgram } from '../../src/kubeconfig/kuberc.js';
import { contextFromKubeconfigText } from '../../src/kubeconfig/from-text.js';
import { TrustPolicy, dataEnvProblem } from '../../src/kubeconfig/trust.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { ExecOracle } from '../support/exec-oracle.js';

const RUNS = 10_000;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-invocation-')));
const base = basename(root);
let oracle: ExecOracle;
const startDir = process.cwd();

/** Makes the tree every command is resolved in: programs, a non-executable file, directories, links, a dangling link. */
function plantTree(): void {
  const exe = (p: string) => {
    // Empty and executable: found by LookPath, and if Go ever starts one it fails at once (exec format error).
    writeFileSync(join(root, p), '');
    chmodSync(join(root, p), 0o755);
  };
  for (const d of ['bin', 'bin2', 'sub', 'x', 'bin/dirprog', 'sub/dirprog'])
    mkdirSync(join(root, d), { recursive: true });
  for (const f of ['mytok', 'other', 'bin/mytok', 'bin/other', 'bin2/mytok', 'sub/mytok']) exe(f);
  for (const f of ['bin/noexec', 'bin2/noexec', 'noexec']) writeFileSync(join(root, f), '');
  symlinkSync(join(root, 'bin2/mytok'), join(root, 'bin/link'));
  symlinkSync('../bin2/noexec', join(root, 'bin/rel-link'));
  symlinkSync(join(root, 'nope'), join(root, 'bin/dangling'));
  symlinkSync('bin2', join(root, 'linkdir'));
}

const NAMES = ['mytok', 'other', 'noexec', 'dirprog', 'link', 'rel-link', 'dangling', 'missing'];

/** Command spellings: bare, ./, ././, absolute, //, .., through a linked directory, trailing slash. */
const pathSpelling = fc
  .record({
    // Absolute spellings stay inside the tree: a system path such as /bin/link would be run by client-go once allowed.
    prefix: fc.constantFrom('', '', '', './', '././', `${root}/./`, `${root}/`, `${root}//`, `../${base}/`),
    parts: fc.array(fc.constantFrom('bin', 'bin2', 'sub', 'x', '..', '.', '', 'linkdir', 'nope'), { maxLength: 3 }),
    sep: fc.constantFrom('/', '/', '//'),
    name: fc.constantFrom(...NAMES),
    trailing: fc.constantFrom('', '', '', '', '/'),
  })
  .map(({ prefix, parts, sep, name, trailing }) => prefix + parts.map((p) => p + sep).join('') + name + trailing);
const spelling = fc.oneof({ arbitrary: fc.constantFrom(...NAMES), weight: 2 }, { arbitrary: pathSpelling, weight: 3 });

/** PATH layouts: absolute and relative entries, empty entries, `.`, missing directories, a file, a linked directory; or unset. */
const pathLayout = fc.option(
  fc
    .array(
      fc.constantFrom(
        `${root}/bin`,
        `${root}/bin2`,
        `${root}/sub`,
        '.',
        '',
        'bin',
        'sub',
        './bin',
        '..',
        `${root}/nope`,
        `${root}/bin/`,
        `${root}//bin2`,
        'x/..',
        `${root}/bin/mytok`,
        `${root}/linkdir`,
        `../${base}/bin`,
      ),
      { maxLength: 5 },
    )
    .map((entries) => entries.join(':')),
  { nil: undefined },
);

const godebug = fc.constantFrom(
  undefined,
  undefined,
  'execerrdot=0',
  'execerrdot=1',
  'execerrdot=0,execerrdot=1',
  'execerrdot=1,execerrdot=0',
  'panicnil=1,execerrdot=0',
  'execerrdot=00',
);

const envOf = (path: string | undefined, debug: string | undefined): NodeJS.ProcessEnv => ({
  ...(path === undefined ? {} : { PATH: path }),
  ...(debug === undefined ? {} : { GODEBUG: debug }),
});

before(() => {
  plantTree();
  process.chdir(root);
  oracle = ExecOracle.start(root);
});

after(() => {
  oracle?.stop();
  process.chdir(startDir);
  rmSync(root, { recursive: true, force: true });
});

describe('invocation properties', () => {
  it("(a) fleet resolves a command to the very file Go's exec.LookPath and exec.Command name, ErrDot included", async (t) => {
    const seen = { ok: 0, dot: 0, bare: 0 };
    await fc.assert(
      fc.asyncProperty(spelling, pathLayout, godebug, async (name, path, debug) => {
        const fleet = resolveProgram(name, envOf(path, debug), root);
        const go = await oracle.lookPath(name, path, debug);
        // exec.Command keeps LookPath's error for a bare name; a path is checked when it starts (LookPath's check).
        if (!name.includes('/')) {
          seen.bare++;
          assert.equal(go.cmdErr, go.lookErr);
        }
        const goOk = go.lookErr === '';
        assert.equal(
          fleet.error === undefined,
          goOk,
          `${name} PATH=${path} GODEBUG=${debug}: fleet ${JSON.stringify(fleet)}, Go ${JSON.stringify(go)}`,
        );
        assert.equal(
          fleet.error !== undefined && fleet.dot === true,
          go.lookErr === 'dot',
          `${name} PATH=${path}: ErrDot`,
        );
        if (goOk) {
          seen.ok++;
          assert.equal(fleet.program, go.abs, `${name} PATH=${path}: the file run`);
        }
        if (go.lookErr === 'dot') seen.dot++;
      }),
      { numRuns: RUNS },
    );
    // The generators reach every outcome, not only failures.
    assert.ok(seen.ok > RUNS / 20 && seen.dot > RUNS / 100 && seen.bare > RUNS / 5, JSON.stringify(seen));
    t.diagnostic(`${RUNS} cases: ${seen.ok} resolved, ${seen.dot} ErrDot, ${seen.bare} bare names`);
  });

  it("(c) fleet's credentialPluginAllowlist decision is client-go 1.35's for generated commands, PATHs and allowlists", async (t) => {
    const entry = fc.constantFrom(
      'mytok',
      'other',
      'link',
      'noexec',
      'bin/mytok',
      'sub/mytok',
      './mytok',
      `${root}/bin/mytok`,
      `${root}/bin2/mytok`,
      `${root}/linkdir/mytok`,
      `${root}/bin/link`,
      `${root}/sub/mytok`,
      `${root}/mytok`,
      `${root}/bin/../mytok`,
      `${root}/bin/noexec`,
      `${root}/bin/dirprog`,
    );
    const seen = { allowed: 0, refused: 0 };
    let id = 0;
    await fc.assert(
      fc.asyncProperty(
        spelling,
        pathLayout,
        godebug,
        fc.uniqueArray(entry.map(goClean), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (name, path, debug, entries, listed) => {
          // Half the time the command's own clean spelling is listed too, so that both answers are common.
          const allowlist = listed && !entries.includes(goClean(name)) ? [...entries, goClean(name)] : entries;
          const fleet = pluginAllowed({ path: 'kuberc', policy: 'Allowlist', allowlist }, name, envOf(path, debug));
          const go = await oracle.allowlist(name, path, debug, allowlist, id++);
          assert.equal(
            fleet.allowed,
            go.allowed,
            `${name} PATH=${path} GODEBUG=${debug} allowlist=${JSON.stringify(allowlist)}: fleet ${JSON.stringify(fleet)}, client-go ${go.err}`,
          );
          seen[go.allowed ? 'allowed' : 'refused']++;
        },
      ),
      { numRuns: RUNS },
    );
    assert.ok(seen.allowed > RUNS / 20 && seen.refused > RUNS / 20, JSON.stringify(seen));
    t.diagnostic(`${RUNS} cases: ${seen.allowed} allowed, ${seen.refused} refused`);
  });
});

/**
 * The variables the issue names as choosing what runs, written here independently of fleet's list: exact names and
 * prefixes. Any name fleet accepts must be an identifier and none of these.
 */
const RUNS_WHAT_EXACT = new Set([
  'PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  'IFS',
  'CDPATH',
  'GLOBIGNORE',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PERLLIB',
  'GCONV_PATH',
  'LOCPATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'ZDOTDIR',
  'KUBERNETES_EXEC_INFO',
]);
const RUNS_WHAT_PREFIX = ['LD_', 'DYLD_', 'BASH_FUNC_', 'PYTHON', 'PERL5', 'RUBY', 'CLOUDSDK_PYTHON'];
const DANGEROUS = [
  ...RUNS_WHAT_EXACT,
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'DYLD_INSERT_LIBRARIES',
  'BASH_FUNC_date%%',
  'BASH_FUNC_date',
  'PYTHONSTARTUP',
  'PERL5OPT',
  'RUBYOPT',
  'BASH_ENV=$(touch x)',
  'BASH_XTRACEFD',
  'GLIBC_TUNABLES',
];

const envName = fc.oneof(
  fc.constantFrom(...DANGEROUS),
  // Near misses of the dangerous names: other case, a character added before or after, a piece of one.
  fc
    .tuple(
      fc.constantFrom(...DANGEROUS),
      fc.constantFrom('', '_', 'X', '1', '%%', '=', ' ', '$', '()'),
      fc.constantFrom('', '_', 'X', '1', '%%', '=x', '\n'),
      fc.boolean(),
    )
    .map(([n, pre, post, lower]) => {
      const s = pre + n + post;
      return lower ? s.toLowerCase() : s;
    }),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/),
  fc.string({ unit: fc.constantFrom(...'ABZabz_019%=$() -.\n\t{}'.split('')), maxLength: 12 }),
  fc.string({ maxLength: 12 }),
);

describe('what hub data gets to run', () => {
  it('(d) an approved invocation of a data command is the file Go runs for that command (exec.Command of the clean name), else a refusal', async (t) => {
    const entry = fc.constantFrom(
      'mytok',
      'other',
      'link',
      `${root}/bin/mytok`,
      `${root}/bin2/mytok`,
      `${root}/linkdir/mytok`,
      `${root}/mytok`,
      'sub/mytok',
    );
    const seen = { ran: 0, relative: 0, dot: 0, other: 0 };
    await fc.assert(
      fc.asyncProperty(
        spelling,
        pathLayout,
        godebug,
        fc.uniqueArray(entry, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        async (name, path, debug, entries: string[], listed) => {
          const allowlist = listed && !entries.includes(goClean(name)) ? [...entries, goClean(name)] : entries;
          const policy = new TrustPolicy({ env: envOf(path, debug), loadKuberc: async () => undefined });
          policy.allow(undefined, {
            credentialPluginAllowlist: allowlist.map((command) => ({ command, env: [] })),
            localFileAllowlist: [],
            where: 'fleet.yaml',
          });
          const ctx = contextFromKubeconfigText(dataKubeconfig(name), 'Secret ns/s key kubeconfig', {
            object: 'Secret ns/s key kubeconfig',
          });
          const a = await policy.approve(ctx, root);
          const relative = name.includes('/') && (!name.startsWith('/') || name.split('/').includes('..'));
          if (relative) {
            seen.relative++;
            assert.match(a.refusal?.message ?? '', /relative path or "\.\."/, name);
            return;
          }
          const go = await oracle.lookPath(goClean(name), path, debug);
          if (a.plugin?.invocation) {
            seen.ran++;
            assert.equal(go.lookErr, '', `${name} PATH=${path}: approved, but Go: ${go.lookErr}`);
            assert.equal(a.plugin.invocation.program, go.abs, `${name} PATH=${path}: the file run`);
          } else if (a.refusal && /ErrDot/.test(a.refusal.message)) {
            seen.dot++;
            assert.equal(go.lookErr, 'dot', `${name} PATH=${path}: fleet says ErrDot`);
          } else seen.other++;
        },
      ),
      { numRuns: RUNS },
    );
    assert.ok(seen.ran > RUNS / 50 && seen.relative > RUNS / 10 && seen.dot > RUNS / 100, JSON.stringify(seen));
    t.diagnostic(
      `${RUNS} cases: ${seen.ran} approved to run, ${seen.relative} relative refused, ${seen.dot} ErrDot refused, ${seen.other} otherwise refused or not found`,
    );
  });
});

function dataKubeconfig(command: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [
      {
        name: 'u',
        user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', command } },
      },
    ],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
}

describe('environment names from hub data', () => {
  const accepted = new Set<string>();
  it('every name fleet accepts is a POSIX identifier and none of the variables that choose what runs', (t) => {
    let refused = 0;
    fc.assert(
      fc.property(envName, (name) => {
        const problem = dataEnvProblem(name);
        if (problem !== undefined) {
          refused++;
          return;
        }
        assert.match(name, /^[A-Za-z_][A-Za-z0-9_]*$/, `accepted ${JSON.stringify(name)}`);
        const upper = name.toUpperCase();
        assert.ok(
          !RUNS_WHAT_EXACT.has(upper) && !RUNS_WHAT_PREFIX.some((p) => upper.startsWith(p)),
          `accepted ${name}, which chooses what runs`,
        );
        accepted.add(name);
      }),
      { numRuns: RUNS },
    );
    assert.ok(accepted.size > RUNS / 10 && refused > RUNS / 10, `${accepted.size} accepted, ${refused} refused`);
    t.diagnostic(`${RUNS} cases: ${accepted.size} distinct names accepted, ${refused} refused`);
  });

  it('no accepted name, whatever its value, makes a real bash plugin run anything else (and the planted names do)', () => {
    assert.ok(accepted.size > 1000, 'the previous property filled the accepted names');
    // Under /tmp itself, not the run's TMPDIR: scripts/test.js points TMPDIR at a 0700 directory of this user, which the
    // unprivileged user the plugin runs as (below) cannot enter, and then no payload could run, harmful or not.
    const dir = mkdtempSync(join('/tmp', 'fleet-invocation-bash-'));
    chmodSync(dir, 0o777);
    try {
      const marker = join(dir, 'ran');
      const evil = join(dir, 'evil.sh');
      writeFileSync(evil, `touch ${marker}\n`);
      chmodSync(evil, 0o755);
      const evilBin = join(dir, 'bin');
      mkdirSync(evilBin, { mode: 0o755 });
      writeFileSync(join(evilBin, 'date'), `#!/bin/sh\ntouch ${marker}\n`);
      chmodSync(join(evilBin, 'date'), 0o755);
      // Values that run the planted program if the variable is a start-up file, a function, a search path, a prompt or
      // trace string, or the shell's options; the plugin traces, runs a command by name and expands a prompt.
      const payloads = [
        evil,
        `() { touch ${marker}; }`,
        `${evilBin}:/usr/bin:/bin`,
        `$(touch ${marker})`,
        'xtrace',
        `\`touch ${marker}\``,
      ];
      const script = 'set -x; date >/dev/null; printf "%s" "${PS1@P}" >/dev/null; echo ok';
      // stdin not a socket: bash run with a socket on stdin takes itself for an rshd child and reads ~/.bashrc instead.
      // Not as root: bash ignores PS4 from the environment for uid 0, and plugins run as users.
      const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
      const plugin = (env: Record<string, string>) =>
        spawnSync('/bin/bash', ['-c', script], {
          env: { PATH: '/usr/bin:/bin', ...env },
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          cwd: dir,
          ...user,
        });
      for (const value of payloads) {
        const env = Object.fromEntries([...accepted].map((n) => [n, value]));
        const r = plugin(env);
        assert.equal(
          r.stdout,
          'ok\n',
          `bash with ${accepted.size} accepted names set to ${JSON.stringify(value)}: ${r.stderr.slice(-400)}`,
        );
        assert.equal(
          existsSync(marker),
          false,
          `an accepted name set to ${JSON.stringify(value)} made bash run the planted program`,
        );
      }
      // The harness can tell: each planted name the issue reports does run it (so a miss above means something).
      const planted: Array<Record<string, string>> = [
        { BASH_ENV: evil },
        { 'BASH_FUNC_date%%': `() { touch ${marker}; }` },
        { PATH: `${evilBin}:/usr/bin:/bin` },
        { PS4: `$(touch ${marker})` },
        { SHELLOPTS: 'xtrace', PS4: `$(touch ${marker})` },
      ];
      for (const env of planted) {
        rmSync(marker, { force: true });
        plugin(env);
        assert.equal(existsSync(marker), true, `the harness did not notice ${Object.keys(env).join('+')}`);
        assert.ok(
          Object.keys(env).some((n) => dataEnvProblem(n) !== undefined),
          `fleet accepts ${Object.keys(env).join('+')}`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('variables hub data sets for a plugin (issue 46, item 7)', () => {
  it('(e) a real plugin receives a data variable exactly when its entry names it, with the value given; nothing else of data', async (t) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-invocation-env-')));
    const plugin = join(dir, 'envdump');
    const dump = join(dir, 'environ');
    // The plugin's own initial environment, as the kernel gave it (NUL-separated), then a credential.
    writeFileSync(
      plugin,
      `#!/bin/sh\ncat /proc/$$/environ > '${dump}'\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'\n`,
      { mode: 0o755 },
    );
    // Names an operator might allow (none chooses what runs: the floor would refuse the entry), and the generated ones.
    const pool = [
      'REGION',
      'AWS_PROFILE',
      'CLOUDSDK_CONFIG',
      'CLOUDSDK_CORE_PROJECT',
      'HOME',
      'HTTPS_PROXY',
      'SSL_CERT_FILE',
      'X_1',
      'lower',
      '_U',
    ];
    const base = { PATH: '/usr/bin:/bin', FLEET_BASE: 'kept' };
    const seen = { ran: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // Mostly names an entry may list, so that many cases are approved and really run.
            name: fc.oneof({ arbitrary: fc.constantFrom(...pool), weight: 6 }, { arbitrary: envName, weight: 1 }),
            value: fc.string({ maxLength: 16 }).filter((v) => !v.includes('\u0000')),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.subarray(pool, { minLength: 4 }),
        async (data, allowed) => {
          const policy = new TrustPolicy({ env: base, loadKuberc: async () => undefined });
          policy.allow(undefined, {
            credentialPluginAllowlist: [{ command: plugin, env: allowed }],
            localFileAllowlist: [],
            where: 'fleet.yaml',
          });
          const env = data.map((d, i) => ({ name: d.name, value: `v${i}:${d.value}` }));
          const doc = JSON.parse(dataKubeconfig(plugin));
          doc.users[0].user.exec.env = env;
          const ctx = contextFromKubeconfigText(JSON.stringify(doc), 'Secret ns/s key kubeconfig', {
            object: 'Secret ns/s key kubeconfig',
          });
          const a = await policy.approve(ctx, dir);
          const expected = data.every((d) => allowed.includes(d.name));
          if (!expected) {
            seen.refused++;
            assert.equal(a.plugin, undefined, `${JSON.stringify(data)} with env ${JSON.stringify(allowed)}: approved`);
            assert.ok(a.refusal?.message, 'a refusal says why');
            for (const e of env)
              if (e.value.length > 3) assert.ok(!a.refusal.message.includes(e.value), 'a value shown');
            return;
          }
          seen.ran++;
          assert.equal(a.refusal, undefined, `${JSON.stringify(data)} with env ${JSON.stringify(allowed)}: refused`);
          rmSync(dump, { force: true });
          await new ExecCredentialRunner().get(a.plugin!, a.context.cluster);
          const got = new Map<string, string>();
          for (const kv of readFileSync(dump, 'utf8').split('\u0000').filter(Boolean)) {
            const at = kv.indexOf('=');
            got.set(kv.slice(0, at), kv.slice(at + 1));
          }
          got.delete('KUBERNETES_EXEC_INFO');
          // The last value of a name given twice wins, as Go's exec keeps the last.
          const want = new Map<string, string>(Object.entries(base));
          for (const e of env) want.set(e.name, e.value);
          assert.deepEqual(Object.fromEntries([...got].sort()), Object.fromEntries([...want].sort()));
        },
      ),
      { numRuns: 2_000 },
    );
    rmSync(dir, { recursive: true, force: true });
    assert.ok(seen.ran > 300 && seen.refused > 300, JSON.stringify(seen));
    t.diagnostic(
      `2000 cases: ${seen.ran} ran a real plugin with exactly the allowed variables, ${seen.refused} refused`,
    );
  });
});
