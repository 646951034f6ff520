// Issue 29, item 4: every kubeconfig field fleet reads, with the wrong type, is one line naming the file, the entry and
// the field, exit 2, when the file is parsed (kubeconfig/parse.ts), for files and for kubeconfigs held in hub Secrets.
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { parseKubeconfig } from '../../src/kubeconfig/parse.js';
import { kubeconfigInSecret } from '../../src/providers/hub/objects.js';
import { runFleet } from '../support/cli.js';

type Section = 'cluster' | 'user' | 'context';

/** A kubeconfig whose one entry of `section` (named "x") has `fields`; the others are valid. */
function kubeconfig(section: Section, fields: Record<string, unknown>): string {
  const entries = {
    cluster: { server: 'https://127.0.0.1:1' },
    user: { token: 'kubeconfig-types-token' },
    context: { cluster: 'x', user: 'x' },
  };
  return (
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'x', cluster: section === 'cluster' ? fields : entries.cluster }],
      users: [{ name: 'x', user: section === 'user' ? fields : entries.user }],
      contexts: [{ name: 'x', context: section === 'context' ? fields : entries.context }],
      'current-context': 'x',
    }) + '\n# YAML: read by the YAML parser, not the JSON fast path\n'
  );
}

const wrong = { map: { a: 'b' }, number: 6443, list: ['a', 'b'] };

/** [section, field path, the problem for a wrong value, the wrong values to try, a valid value]. */
const strings: Array<[Section, string]> = [
  ['cluster', 'server'],
  ['cluster', 'certificate-authority'],
  ['cluster', 'certificate-authority-data'],
  ['cluster', 'tls-server-name'],
  ['cluster', 'proxy-url'],
  ['user', 'client-certificate'],
  ['user', 'client-certificate-data'],
  ['user', 'client-key'],
  ['user', 'client-key-data'],
  ['user', 'token'],
  ['user', 'tokenFile'],
  ['user', 'username'],
  ['user', 'password'],
  ['user', 'as'],
  ['user', 'as-uid'],
  ['context', 'cluster'],
  ['context', 'user'],
  ['context', 'namespace'],
];
const booleans: Array<[Section, string]> = [
  ['cluster', 'insecure-skip-tls-verify'],
  ['cluster', 'disable-compression'],
];
const EXEC = { apiVersion: 'client.authentication.k8s.io/v1', command: 'plugin', interactiveMode: 'Never' };

/** Sets a dotted path (`exec.command`) in a copy of `base`. */
function withField(base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  if (rest.length === 0) return { ...base, [head]: value };
  return { ...base, [head]: withField((base[head] as Record<string, unknown>) ?? {}, rest.join('.'), value) };
}

const cases: Array<{
  section: Section;
  field: string;
  base?: Record<string, unknown>;
  bad: Record<string, unknown>;
  problem: string;
  ok: unknown[];
}> = [
  ...strings.map(([section, field]) => ({
    section,
    field,
    bad: wrong,
    problem: `${field} must be a string`,
    ok: ['text', null],
  })),
  ...booleans.map(([section, field]) => ({
    section,
    field,
    bad: { ...wrong, string: 'true' },
    problem: `${field} must be true or false`,
    ok: [true, false, null],
  })),
  ...(['cluster', 'user', 'context'] as const).map((section) => ({
    section,
    field: 'extensions',
    bad: { map: { a: 'b' }, number: 1, string: 'x' },
    problem: 'extensions must be a list',
    ok: [[{ name: 'n', extension: { any: [1] } }], null],
  })),
  ...(['cluster', 'user', 'context'] as const).map((section) => ({
    section,
    field: 'extensions',
    bad: { 'list of strings': ['a'], 'entry without a name': [{ extension: 1 }], 'a number as name': [{ name: 1 }] },
    problem: 'extensions[0] must be a mapping with a name (a string)',
    ok: [],
  })),
  {
    section: 'user',
    field: 'as-groups',
    bad: { ...wrong, list: [1, 2], 'list with null': ['a', null] },
    problem: 'as-groups must be a list of strings',
    ok: [['a'], null],
  },
  {
    section: 'user',
    field: 'exec',
    bad: { number: 1, list: ['a'], string: 'plugin' },
    problem: 'exec must be a mapping',
    ok: [EXEC, null],
  },
  ...['command', 'apiVersion', 'interactiveMode', 'installHint'].map((f) => ({
    section: 'user' as const,
    field: `exec.${f}`,
    base: { exec: EXEC },
    bad: wrong,
    problem: `exec.${f} must be a string`,
    ok: f === 'installHint' ? ['brew install plugin', null] : [],
  })),
  {
    section: 'user',
    field: 'exec.args',
    base: { exec: EXEC },
    bad: { ...wrong, list: [1, 2], 'list of maps': [{ a: 1 }] },
    problem: 'exec.args must be a list of strings',
    ok: [['--a', 'b'], null],
  },
  {
    section: 'user',
    field: 'exec.provideClusterInfo',
    base: { exec: EXEC },
    bad: { ...wrong, string: 'true' },
    problem: 'exec.provideClusterInfo must be true or false',
    ok: [true, null],
  },
  {
    section: 'user',
    field: 'exec.env',
    base: { exec: EXEC },
    bad: { map: { A: 'b' }, number: 1, string: 'A=b' },
    problem: 'exec.env must be a list of {name, value}',
    ok: [[{ name: 'A', value: 'b' }], null],
  },
  {
    section: 'user',
    field: 'exec.env',
    base: { exec: EXEC },
    bad: { 'list of strings': ['A=b'], 'list of lists': [['A', 'b']] },
    problem: 'exec.env[0] must be a mapping with name and value',
    ok: [],
  },
  {
    section: 'user',
    field: 'exec.env',
    base: { exec: EXEC },
    bad: {
      'a map as name': [{ name: { a: 1 }, value: 'b' }],
      'a number as name': [{ name: 1, value: 'b' }],
      'no name': [{ value: 'b' }],
    },
    problem: 'exec.env[0].name must be a string',
    ok: [],
  },
  {
    section: 'user',
    field: 'exec.env',
    base: { exec: EXEC },
    bad: { 'a list as value': [{ name: 'A', value: [1] }], 'a number as value': [{ name: 'A', value: 1 }] },
    problem: 'exec.env[0].value must be a string',
    ok: [],
  },
  {
    section: 'user',
    field: 'auth-provider',
    bad: { number: 1, list: ['a'], string: 'oidc' },
    problem: 'auth-provider must be a mapping',
    ok: [{ name: 'oidc', config: { 'client-id': 'a' } }, null],
  },
  {
    section: 'user',
    field: 'auth-provider.name',
    bad: wrong,
    problem: 'auth-provider.name must be a string',
    ok: ['oidc'],
  },
  {
    section: 'user',
    field: 'auth-provider.config',
    bad: { number: 1, list: ['a'], 'a number inside': { a: 1 }, 'a map inside': { a: { b: 'c' } } },
    problem: 'auth-provider.config must be a mapping of strings',
    ok: [{ a: 'b' }, null],
  },
];

describe('kubeconfig field types: one line naming the file, the entry and the field', () => {
  for (const c of cases) {
    for (const [kind, value] of Object.entries(c.bad)) {
      it(`${c.section} ${c.field}: ${kind}`, () => {
        const fields = withField(
          { ...(c.section === 'user' ? {} : c.section === 'cluster' ? { server: 'https://k' } : {}), ...c.base },
          c.field,
          value,
        );
        const text = kubeconfig(c.section, fields);
        for (const [label, source] of [
          ['/k.yaml', text],
          ['/k.json', text.replace(/\n#.*\n$/, '')],
        ]) {
          assert.throws(
            () => parseKubeconfig(source, label),
            (e: unknown) => {
              assert.ok(e instanceof ConfigError);
              assert.equal(e.message, `${label}: ${c.section} "x": ${c.problem}`);
              return true;
            },
          );
        }
      });
    }
    if (c.ok.length > 0) {
      it(`${c.section} ${c.field}: ${c.ok.map((v) => JSON.stringify(v)).join(', ')} accepted`, () => {
        for (const value of c.ok) {
          const fields = withField({ ...c.base }, c.field, value);
          assert.ok(parseKubeconfig(kubeconfig(c.section, fields), '/k'));
        }
      });
    }
  }

  it('an entry name of the wrong type, and top-level extensions', () => {
    assert.throws(() => parseKubeconfig('clusters: [{name: {a: 1}, cluster: {}}]', '/k'), {
      message: '/k: clusters[0]: name must be a string',
    });
    assert.throws(() => parseKubeconfig('users: [{name: 7, user: {}}]', '/k'), {
      message: '/k: users[0]: name must be a string',
    });
    assert.throws(() => parseKubeconfig('extensions: {a: b}', '/k'), { message: '/k: extensions must be a list' });
  });

  it('a kubeconfig in a hub Secret: the cluster is not ready, the reason names the Secret, the entry and the field', () => {
    const secret = (text: string) => ({
      metadata: { name: 'member-1', namespace: 'fleet' },
      data: { kubeconfig: Buffer.from(text).toString('base64') },
    });
    const bad = kubeconfigInSecret(secret(kubeconfig('cluster', { server: [1, 2] })), 'kubeconfig');
    assert.ok(bad instanceof Error);
    assert.equal(bad.message, 'secret fleet/member-1 key kubeconfig: cluster "x": server must be a string');
    const exec = kubeconfigInSecret(
      secret(kubeconfig('user', { exec: { ...EXEC, command: { sh: '-c' } } })),
      'kubeconfig',
    );
    assert.ok(exec instanceof Error);
    assert.equal(exec.message, 'secret fleet/member-1 key kubeconfig: user "x": exec.command must be a string');
    const good = kubeconfigInSecret(secret(kubeconfig('cluster', { server: 'https://k' })), 'kubeconfig');
    assert.ok(!(good instanceof Error));
  });
});

describe('through the CLI: exit 2, one line, no stack', () => {
  const runs: Array<[string, Section, Record<string, unknown>, string]> = [
    [
      'a list as server (was the URL "1,2", READY True)',
      'cluster',
      { server: [1, 2] },
      'cluster "x": server must be a string',
    ],
    [
      'a map as server (was `t.includes is not a function`)',
      'cluster',
      { server: { host: 'a' } },
      'cluster "x": server must be a string',
    ],
    ['a number as exec.command', 'user', { exec: { ...EXEC, command: 42 } }, 'user "x": exec.command must be a string'],
    [
      'a string as insecure-skip-tls-verify',
      'cluster',
      { server: 'https://k', 'insecure-skip-tls-verify': 'yes' },
      'cluster "x": insecure-skip-tls-verify must be true or false',
    ],
    [
      'a map as namespace',
      'context',
      { cluster: 'x', user: 'x', namespace: { a: 1 } },
      'context "x": namespace must be a string',
    ],
  ];
  for (const [what, section, fields, problem] of runs) {
    it(what, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'fleet-kubeconfig-types-'));
      const path = join(dir, 'kubeconfig');
      await writeFile(path, kubeconfig(section, fields));
      for (const args of [
        ['clusters', 'list', '-o', 'wide'],
        ['clusters', 'inspect', '--offline'],
        ['auth', 'whoami'],
      ]) {
        const r = await runFleet([...args, '--kubeconfig', path]);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, `error: ${path}: ${problem}\n`);
        assert.equal(r.stdout, '');
      }
    });
  }
});
