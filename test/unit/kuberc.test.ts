import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { setWarningSink } from '../../src/base/warnings.js';
import {
  type Kuberc,
  goClean,
  kubercLocation,
  loadKuberc,
  mergeKubercAllowlist,
  pluginAllowed,
  splitYamlDocuments,
  writeKubercAllowlist,
} from '../../src/kubeconfig/kuberc.js';

const warnings: string[] = [];
setWarningSink((line) => warnings.push(line));

let root: string;
let n = 0;
/** A fresh file in its own directory, so warnings (said once per message) name a path no other test used. */
async function file(text: string, name = 'kuberc'): Promise<string> {
  const dir = join(root, `k${++n}`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const V1BETA1 = 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n';

async function configError(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, /\n/);
    return true;
  });
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'fleet-kuberc-'));
});

describe('where kuberc is read from (kubectl 1.35: --kuberc, KUBERC, ~/.kube/kuberc)', () => {
  const env = { HOME: '/home/u' };
  it('defaults to $HOME/.kube/kuberc, not explicitly', () => {
    assert.deepEqual(kubercLocation({ env }), {
      path: '/home/u/.kube/kuberc',
      label: '/home/u/.kube/kuberc',
      explicit: false,
    });
  });
  it('uses .kube/kuberc under the current directory with HOME unset, as client-go homedir does', () => {
    assert.equal(kubercLocation({ env: {} })?.path, '.kube/kuberc');
  });
  it('takes KUBERC over the default and --kuberc over KUBERC', () => {
    assert.deepEqual(kubercLocation({ env: { ...env, KUBERC: '/e' } }), {
      path: '/e',
      label: 'KUBERC /e',
      explicit: true,
    });
    assert.deepEqual(kubercLocation({ flag: '/f', env: { ...env, KUBERC: '/e' } }), {
      path: '/f',
      label: '--kuberc /f',
      explicit: true,
    });
    assert.deepEqual(kubercLocation({ flag: '/f', env }), { path: '/f', label: '--kuberc /f', explicit: true });
  });
  it('keeps kubectl quirk: --kuberc naming the default path loses to KUBERC', () => {
    assert.equal(kubercLocation({ flag: '/home/u/.kube/kuberc', env: { ...env, KUBERC: '/e' } })?.path, '/e');
  });
  it('treats an empty KUBERC as unset', () => {
    assert.equal(kubercLocation({ env: { ...env, KUBERC: '' } })?.path, '/home/u/.kube/kuberc');
  });
  it('is off with KUBECTL_KUBERC=false (any case) and with KUBERC=off', () => {
    assert.equal(kubercLocation({ env: { ...env, KUBECTL_KUBERC: 'false' } }), undefined);
    assert.equal(kubercLocation({ env: { ...env, KUBECTL_KUBERC: 'FALSE', KUBERC: '/e' } }), undefined);
    assert.equal(kubercLocation({ env: { ...env, KUBERC: 'off' } }), undefined);
    assert.notEqual(kubercLocation({ env: { ...env, KUBECTL_KUBERC: 'no' } }), undefined);
  });
  it('refuses --kuberc with kuberc turned off, and an empty --kuberc', () => {
    assert.throws(
      () => kubercLocation({ flag: '/f', env: { ...env, KUBERC: 'off' } }),
      /--kuberc \/f: KUBERC=off turns kuberc off/,
    );
    assert.throws(
      () => kubercLocation({ flag: '/f', env: { ...env, KUBECTL_KUBERC: 'false' } }),
      /--kuberc \/f: kuberc is turned off by KUBECTL_KUBERC=false/,
    );
    assert.throws(() => kubercLocation({ flag: '', env }), /--kuberc: empty path/);
  });
});

describe('loadKuberc', () => {
  it('is undefined when the default file is absent, and when kuberc is turned off', async () => {
    const home = join(root, 'home-absent');
    assert.equal(await loadKuberc({ env: { HOME: home } }), undefined);
    const path = await file(`${V1BETA1}credentialPluginPolicy: DenyAll\n`);
    assert.equal(await loadKuberc({ env: { HOME: home, KUBERC: path, KUBECTL_KUBERC: 'false' } }), undefined);
    assert.equal(await loadKuberc({ env: { HOME: home, KUBERC: 'off' } }), undefined);
  });

  it('reads the default file under HOME', async () => {
    const home = join(root, 'home-default');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(join(home, '.kube', 'kuberc'), `${V1BETA1}credentialPluginPolicy: DenyAll\n`);
    assert.deepEqual(await loadKuberc({ env: { HOME: home } }), {
      path: join(home, '.kube', 'kuberc'),
      policy: 'DenyAll',
      allowlist: [],
    });
  });

  it('reads KUBERC, and --kuberc before it', async () => {
    const fromEnv = await file(`${V1BETA1}credentialPluginPolicy: DenyAll\n`);
    const fromFlag = await file(`${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: a\n`);
    assert.equal((await loadKuberc({ env: { HOME: root, KUBERC: fromEnv } }))?.policy, 'DenyAll');
    assert.deepEqual(await loadKuberc({ flag: fromFlag, env: { HOME: root, KUBERC: fromEnv } }), {
      path: fromFlag,
      policy: 'Allowlist',
      allowlist: ['a'],
    });
  });

  it('refuses a missing file named by --kuberc or KUBERC', async () => {
    const missing = join(root, 'nope', 'kuberc');
    await configError(
      loadKuberc({ flag: missing, env: { HOME: root } }),
      new RegExp(`^--kuberc ${missing}: file not found$`),
    );
    await configError(
      loadKuberc({ env: { HOME: root, KUBERC: missing } }),
      new RegExp(`^KUBERC ${missing}: file not found$`),
    );
  });

  it('has no policy for an empty file or a v1beta1 Preference without one', async () => {
    assert.equal(await loadKuberc({ flag: await file(''), env: {} }), undefined);
    assert.deepEqual(await loadKuberc({ flag: await file(V1BETA1), env: {} }), {
      path: `${root}/k${n}/kuberc`,
      policy: 'AllowAll',
      allowlist: [],
    });
  });

  it('skips a default kuberc kubectl cannot use, with a warning; refuses it when named', async () => {
    for (const text of [
      '{not yaml',
      'apiVersion: v1\nkind: Config\n',
      `${V1BETA1}credentialPluginPolicy: 5\n`,
      '# only a comment\n',
      '--- !tag\n',
    ]) {
      const path = await file(text);
      const home = join(path, '..', '..', `h${n}`);
      await mkdir(join(home, '.kube'), { recursive: true });
      await writeFile(join(home, '.kube', 'kuberc'), text);
      warnings.length = 0;
      assert.equal(await loadKuberc({ env: { HOME: home } }), undefined, text);
      assert.equal(warnings.length, 1, text);
      assert.match(warnings[0], new RegExp(`^warning: kuberc: no preferences loaded from ${home}/.kube/kuberc: `));
      await configError(loadKuberc({ flag: path, env: { HOME: home } }), new RegExp(`^--kuberc ${path}: `));
    }
  });

  it('skips an unreadable default kuberc with a warning, and refuses it when named', async () => {
    const home = join(root, 'home-dir');
    await mkdir(join(home, '.kube', 'kuberc'), { recursive: true });
    warnings.length = 0;
    assert.equal(await loadKuberc({ env: { HOME: home } }), undefined);
    assert.deepEqual(warnings, [
      `warning: kuberc: no preferences loaded from ${home}/.kube/kuberc: is a directory, not a kuberc file (kubectl 1.35 ignores this file too)`,
    ]);
    await configError(
      loadKuberc({ env: { HOME: home, KUBERC: join(home, '.kube', 'kuberc') } }),
      /^KUBERC \S+: is a directory, not a kuberc file$/,
    );
  });

  it('uses the first usable Preference of several documents', async () => {
    const path = await file(
      `apiVersion: v1\nkind: Config\n---\n{broken\n---\n${V1BETA1}credentialPluginPolicy: DenyAll\n---\n${V1BETA1}\n`,
    );
    assert.equal((await loadKuberc({ flag: path, env: {} }))?.policy, 'DenyAll');
  });

  it('warns about unknown fields and goes on, as kubectl does', async () => {
    warnings.length = 0;
    const path = await file(`${V1BETA1}metadata: {name: x}\ncredentialPluginPolicy: DenyAll\n`);
    assert.equal((await loadKuberc({ flag: path, env: {} }))?.policy, 'DenyAll');
    assert.deepEqual(warnings, [`warning: kuberc ${path}: ignoring unknown field metadata (as kubectl 1.35 does)`]);
  });

  it('ignores the credential fields of a v1alpha1 Preference (kubectl 1.35 runs every plugin then), with a warning', async () => {
    warnings.length = 0;
    const path = await file(
      'apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\ncredentialPluginPolicy: DenyAll\n',
    );
    assert.equal((await loadKuberc({ flag: path, env: {} }))?.policy, 'AllowAll');
    assert.match(
      warnings.join('\n'),
      /v1alpha1 has no credentialPluginPolicy; kubectl 1.35 ignores it and runs every plugin/,
    );
  });

  it('refuses the policies kubectl refuses, naming the file and the field', async () => {
    const cases: Array<[string, RegExp]> = [
      ['credentialPluginPolicy: denyall\n', /credentialPluginPolicy: unknown policy "denyall"/],
      [
        'credentialPluginPolicy: Allowlist\n',
        /credentialPluginPolicy is Allowlist but credentialPluginAllowlist is missing/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: null\n',
        /credentialPluginPolicy is Allowlist but credentialPluginAllowlist is missing/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: []\n',
        /credentialPluginPolicy is Allowlist but credentialPluginAllowlist is empty \(use DenyAll/,
      ],
      [
        'credentialPluginPolicy: AllowAll\ncredentialPluginAllowlist: [{name: a}]\n',
        /credentialPluginAllowlist is set but credentialPluginPolicy is AllowAll/,
      ],
      [
        'credentialPluginAllowlist: []\n',
        /credentialPluginAllowlist is set but credentialPluginPolicy is unset \(AllowAll\)/,
      ],
      [
        'credentialPluginPolicy: DenyAll\ncredentialPluginAllowlist: []\n',
        /credentialPluginAllowlist is set but credentialPluginPolicy is DenyAll/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{}]\n',
        /credentialPluginAllowlist\[0\]: empty entry/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: a}, {name: ""}]\n',
        /credentialPluginAllowlist\[1\]: empty entry/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: ./bin/x}]\n',
        /credentialPluginAllowlist\[0\]: "\.\/bin\/x" is not a clean path \(kubectl requires "bin\/x"\)/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: /usr/bin/}]\n',
        /credentialPluginAllowlist\[0\]: "\/usr\/bin\/" is not a clean path/,
      ],
      [
        'credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{name: a, command: b}]\n',
        /credentialPluginAllowlist\[0\]: name "a" and command "b" differ/,
      ],
      ['aliases: [{name: get-all, command: get}]\n', /aliases\[0\]\.name: "get-all" is not a valid alias name/],
      ['aliases: [{name: g, command: get}, {name: g, command: get}]\n', /aliases\[1\]\.name: duplicate alias name g/],
      [
        'defaults: [{command: apply, options: [{name: --server-side, default: "true"}]}]\n',
        /defaults\[0\]\.options\[0\]\.name: flag name --server-side should be in long form/,
      ],
    ];
    for (const [body, pattern] of cases) {
      const path = await file(V1BETA1 + body);
      // Refused whether named or found at the default place: kubectl checks the policy of every kuberc it uses.
      await configError(loadKuberc({ flag: path, env: {} }), new RegExp(`^${path}: ${pattern.source}`));
    }
  });

  it('reads allowlist entries spelled name (1.35) or command (1.36 on), and both when they agree', async () => {
    const path = await file(
      `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: a\n- command: /b\n- {name: c, command: c}\n`,
    );
    warnings.length = 0;
    assert.deepEqual((await loadKuberc({ flag: path, env: {} }))?.allowlist, ['a', '/b', 'c']);
    assert.deepEqual(warnings, [
      `warning: kuberc ${path}: credentialPluginAllowlist entries spelled command: are kubectl 1.36's; kubectl 1.35 ignores that field (and refuses an entry with no name:); fleet reads them as 1.36 does`,
    ]);
  });
});

describe('splitYamlDocuments and goClean', () => {
  it('splits at --- lines as apimachinery does, with a comment allowed after the dashes', () => {
    assert.deepEqual(splitYamlDocuments('a: 1\n--- # two\nb: 2\n---\n'), ['a: 1\n', 'b: 2\n', '']);
    assert.throws(() => splitYamlDocuments('a: 1\n--- b: 2\n'), /invalid YAML document separator: b: 2/);
  });
  it('cleans paths as Go filepath.Clean', () => {
    const cases: Array<[string, string]> = [
      ['', '.'],
      ['.', '.'],
      ['./x', 'x'],
      ['x/', 'x'],
      ['/a//b/./c/..', '/a/b'],
      ['//a', '/a'],
      ['/..', '/'],
      ['a/..', '.'],
      ['../a/../..', '../..'],
      ['/', '/'],
    ];
    for (const [input, want] of cases) assert.equal(goClean(input), want, input);
  });
});

describe('pluginAllowed (client-go 1.35 allowlist semantics)', () => {
  let dir: string;
  let bin: string;
  let links: string;
  let cwd: string;
  const kuberc = (policy: Kuberc['policy'], allowlist: string[] = []): Kuberc => ({
    path: '/home/u/.kube/kuberc',
    policy,
    allowlist,
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-kuberc-path-'));
    bin = join(dir, 'bin');
    links = join(dir, 'links');
    await mkdir(bin);
    await mkdir(links);
    for (const name of ['x', 'y']) {
      await writeFile(join(bin, name), '#!/bin/sh\n');
      await chmod(join(bin, name), 0o755);
    }
    await writeFile(join(dir, 'z'), '#!/bin/sh\n');
    await chmod(join(dir, 'z'), 0o755);
    await writeFile(join(bin, 'noexec'), '#!/bin/sh\n');
    await chmod(join(bin, 'noexec'), 0o644);
    await mkdir(join(bin, 'adir'));
    // links/x -> bin/x: the same file under another path, as a package manager's shim directory makes.
    await symlink(join(bin, 'x'), join(links, 'x'));
    cwd = process.cwd();
    process.chdir(dir);
  });
  after(() => process.chdir(cwd));

  type Row = [string, Kuberc | undefined, string, NodeJS.ProcessEnv, boolean, RegExp?];
  it('decides each case as client-go does', () => {
    const path = { PATH: `/nonexistent:${bin}` };
    const viaLinks = { PATH: `${links}:${bin}` };
    const rows: Row[] = [
      ['no kuberc', undefined, 'x', path, true],
      ['AllowAll', kuberc('AllowAll'), 'anything', path, true],
      [
        'DenyAll',
        kuberc('DenyAll'),
        'x',
        path,
        false,
        /^plugin "x" not allowed by credentialPluginPolicy DenyAll in \/home\/u\/\.kube\/kuberc$/,
      ],
      ['Allowlist by name, bare command', kuberc('Allowlist', ['x']), 'x', path, true],
      [
        'Allowlist by name, absolute command found by that name on PATH',
        kuberc('Allowlist', ['x']),
        `${bin}/x`,
        path,
        true,
      ],
      ['Allowlist by full path, bare command', kuberc('Allowlist', [`${bin}/x`]), 'x', path, true],
      ['Allowlist by full path, absolute command', kuberc('Allowlist', [`${bin}/x`]), `${bin}/x`, path, true],
      [
        'another plugin listed',
        kuberc('Allowlist', ['y', `${bin}/y`]),
        'x',
        path,
        false,
        /not allowed by credentialPluginPolicy Allowlist in \/home\/u\/\.kube\/kuberc: no credentialPluginAllowlist entry matches .*\/bin\/x$/,
      ],
      [
        'listed by name, but absolute command not the one PATH finds',
        kuberc('Allowlist', ['x']),
        `${bin}/x`,
        { PATH: links },
        false,
        /no credentialPluginAllowlist entry matches/,
      ],
      [
        'listed bare name not on PATH: allowed verbatim (the run then fails)',
        kuberc('Allowlist', ['x']),
        'x',
        { PATH: '/nonexistent' },
        true,
      ],
      [
        'command not found',
        kuberc('Allowlist', [`${bin}/x`]),
        'nothere',
        path,
        false,
        /: nothere not found in PATH, so it cannot be checked/,
      ],
      [
        'absolute command missing',
        kuberc('Allowlist', [`${bin}/x`]),
        `${bin}/gone`,
        path,
        false,
        /\/bin\/gone not found, so it cannot be checked/,
      ],
      [
        'not executable',
        kuberc('Allowlist', [`${bin}/x`]),
        `${bin}/noexec`,
        path,
        false,
        /\/bin\/noexec is not executable/,
      ],
      ['a directory', kuberc('Allowlist', [`${bin}/x`]), `${bin}/adir`, path, false, /\/bin\/adir is a directory/],
      ['empty PATH', kuberc('Allowlist', [`${bin}/x`]), 'x', {}, false, /x not found in PATH/],
      ['non-normalised command is cleaned first', kuberc('Allowlist', [`${bin}/x`]), `${bin}/../bin//x`, path, true],
      // Symlinks are not resolved: links/x is another path than bin/x even though it runs the same file.
      [
        'symlink on PATH, target listed by full path',
        kuberc('Allowlist', [`${bin}/x`]),
        'x',
        viaLinks,
        false,
        /no credentialPluginAllowlist entry matches .*\/links\/x$/,
      ],
      [
        'symlink by absolute path, target listed',
        kuberc('Allowlist', [`${bin}/x`]),
        `${links}/x`,
        viaLinks,
        false,
        /matches .*\/links\/x$/,
      ],
      ['symlink on PATH, the link listed', kuberc('Allowlist', [`${links}/x`]), 'x', viaLinks, true],
      ['symlink on PATH, listed by name', kuberc('Allowlist', ['x']), 'x', viaLinks, true],
      // A command with a slash is used as is, relative to the current directory (here the temporary one).
      ['relative ./bin/x, listed as bin/x', kuberc('Allowlist', ['bin/x']), './bin/x', path, true],
      [
        'relative ./bin/x, listed by full path',
        kuberc('Allowlist', [`${bin}/x`]),
        './bin/x',
        path,
        false,
        /matches bin\/x$/,
      ],
      ['relative ./bin/x, listed by name', kuberc('Allowlist', ['x']), './bin/x', path, false, /matches bin\/x$/],
      // A bare name found through a relative PATH entry is refused by Go (exec.ErrDot) unless listed verbatim.
      [
        'relative PATH entry, listed by full path',
        kuberc('Allowlist', [`${bin}/x`]),
        'x',
        { PATH: 'bin' },
        false,
        /x was found as bin\/x in a relative PATH directory/,
      ],
      ['relative PATH entry, listed by name', kuberc('Allowlist', ['x']), 'x', { PATH: 'bin' }, true],
      [
        'empty PATH entry is the current directory (refused like any relative one)',
        kuberc('Allowlist', ['z']),
        './z',
        { PATH: `:${bin}` },
        true,
      ],
      [
        'empty PATH entry, bare name found there',
        kuberc('Allowlist', [`${dir}/z`]),
        'z',
        { PATH: `:${bin}` },
        false,
        /z was found as z in a relative PATH directory/,
      ],
      [
        'GODEBUG=execerrdot=0 accepts a relative PATH hit',
        kuberc('Allowlist', ['bin/x']),
        'x',
        { PATH: 'bin', GODEBUG: 'execerrdot=0' },
        true,
      ],
    ];
    for (const [name, k, command, env, allowed, reason] of rows) {
      const decision = pluginAllowed(k, command, env);
      assert.equal(decision.allowed, allowed, `${name}: ${JSON.stringify(decision)}`);
      if (!decision.allowed) {
        assert.match(decision.reason, reason ?? /./, name);
        assert.match(
          decision.reason,
          new RegExp(
            `^plugin "${command.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" not allowed by credentialPluginPolicy`,
          ),
          name,
        );
        assert.doesNotMatch(decision.reason, /\n/);
      }
    }
  });
});

describe('mergeKubercAllowlist', () => {
  it('writes a new v1beta1 Preference with the entries when the file is absent', async () => {
    const path = join(root, 'new-kuberc');
    const { text, added, policyWas } = await mergeKubercAllowlist(path, ['kubelogin', './bin/x', 'kubelogin']);
    assert.deepEqual(added, ['kubelogin', 'bin/x']);
    assert.equal(policyWas, undefined);
    await writeFile(path, text);
    assert.deepEqual(await loadKuberc({ flag: path, env: {} }), {
      path,
      policy: 'Allowlist',
      allowlist: ['kubelogin', 'bin/x'],
    });
    assert.match(text, /- name: kubelogin\n/);
  });

  it('turns AllowAll into Allowlist and keeps every other field and document', async () => {
    const first = '# a note\napiVersion: v1\nkind: Config\n';
    const path = await file(
      `${first}---\n${V1BETA1}credentialPluginPolicy: AllowAll\ndefaults:\n- command: apply\n  options:\n  - name: server-side\n    default: "true"\naliases:\n- name: getn\n  command: get\n  prependArgs: [nodes]\n`,
    );
    const { text, added, policyWas } = await mergeKubercAllowlist(path, ['/usr/local/bin/aws']);
    assert.equal(policyWas, 'AllowAll');
    assert.deepEqual(added, ['/usr/local/bin/aws']);
    assert.ok(text.startsWith(`${first}---\n`), text);
    await writeFile(path, text);
    assert.deepEqual((await loadKuberc({ flag: path, env: {} }))?.allowlist, ['/usr/local/bin/aws']);
    assert.match(text, /server-side/);
    assert.match(text, /prependArgs:\n\s+- nodes/);
  });

  it('adds only the missing entries to an Allowlist, in the spelling the list already uses', async () => {
    const path = await file(`${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: a\n`);
    const { text, added } = await mergeKubercAllowlist(path, ['a', 'b']);
    assert.deepEqual(added, ['b']);
    assert.match(text, /- command: a\n\s*- command: b\n/);
  });

  it('refuses DenyAll, a v1alpha1 file and a file kubectl cannot use, in one line', async () => {
    await configError(
      mergeKubercAllowlist(await file(`${V1BETA1}credentialPluginPolicy: DenyAll\n`), ['x']),
      /credentialPluginPolicy is DenyAll; fleet does not loosen it \(set it to Allowlist yourself to allow x\)/,
    );
    await configError(
      mergeKubercAllowlist(await file('apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\n'), ['x']),
      /v1alpha1 has no credentialPluginPolicy/,
    );
    await configError(
      mergeKubercAllowlist(await file('apiVersion: v1\nkind: Config\n'), ['x']),
      /no usable Preference .*; not rewriting it/,
    );
    await configError(
      mergeKubercAllowlist(await file(`${V1BETA1}credentialPluginPolicy: Bogus\n`), ['x']),
      /unknown policy "Bogus"/,
    );
    await configError(mergeKubercAllowlist(join(root, 'none'), ['']), /empty command/);
  });

  it('writes the file atomically with mode 0600', async () => {
    const path = await file(V1BETA1);
    await chmod(path, 0o644);
    const { added } = await writeKubercAllowlist(path, ['x']);
    assert.deepEqual(added, ['x']);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.match(await readFile(path, 'utf8'), /credentialPluginPolicy: Allowlist/);
  });
});

describe('a key given twice', () => {
  it('is refused with the file and line (kubectl keeps the last value with a warning; skipping could drop a DenyAll)', async () => {
    const path = await file(
      `apiVersion: v1\nkind: Config\n---\n${V1BETA1}credentialPluginPolicy: AllowAll\ncredentialPluginPolicy: DenyAll\n`,
    );
    const home = join(path, '..');
    await configError(
      loadKuberc({ env: { HOME: home, KUBERC: path } }),
      new RegExp(
        `^${path}: not valid YAML \\(line 7\\): duplicated mapping key \\(kubectl 1.35 warns and uses the last value; fleet refuses the file\\)$`,
      ),
    );
  });
});
