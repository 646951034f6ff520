// `export --merge-into FILE` (src/kubeconfig/merge.ts over src/kubeconfig/edit.ts): only fleet's entries change, every
// other byte of the file stays (comments, quoting, flow style, CRLF), a second run changes nothing, conflicts stop the
// merge before anything is written, and the file's mode and current-context are kept.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
  lstatSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { KubeconfigEdit } from '../../src/kubeconfig/edit.js';
import { FLEET_EXPORT_EXTENSION } from '../../src/kubeconfig/export-marker.js';
import { checkMergeTarget, mergeIntoKubeconfigFile, mergeKubeconfigText } from '../../src/kubeconfig/merge.js';
import { dumpKubeconfig, parseKubeconfig } from '../../src/kubeconfig/parse.js';
import type { KubeconfigDoc } from '../../src/kubeconfig/types.js';

const mark = [{ name: FLEET_EXPORT_EXTENSION, extension: { provider: 'file' } }];

/** What export writes for some clusters: one cluster, user and context each, all marked. */
function exported(names: string[], server = (n: string) => `https://${n}.example:6443`): KubeconfigDoc {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: names.map((n) => ({
      name: `fleet-${n}`,
      cluster: { server: server(n), 'certificate-authority-data': 'TFMwdA==', extensions: mark },
    })),
    users: names.map((n) => ({
      name: `fleet-${n}`,
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: 'fleet',
          args: ['kubeconfig', 'credential', n],
          interactiveMode: 'Never',
          provideClusterInfo: true,
        },
        extensions: mark,
      },
    })),
    contexts: names.map((n) => ({
      name: `fleet-${n}`,
      context: { cluster: `fleet-${n}`, user: `fleet-${n}`, extensions: mark },
    })),
  };
}

// A user's own file, written the way people and tools write them: comments, odd quoting, flow style, anchors,
// fields fleet does not know, a trailing comment, no final line break.
const OWN = `# my clusters
apiVersion: v1
kind: Config
preferences: {colors: true}   # flow mapping
clusters:
  - name: 'home'            # single-quoted, indented list
    cluster:
      server: "https://home.lan:6443"
      certificate-authority-data: >-
        TFMwdA==
      extensions:
        - {name: mine, extension: &x {a: 1}}

  # a comment between entries
  - {name: "work", cluster: {server: https://work:443, insecure-skip-tls-verify: true}}
users:
- name: home
  user:
    token: "tok\\u0065n"   # escaped
- name: work
  user: {username: me, password: 'p''w'}
contexts:
- name: home
  context: {cluster: home, user: home, namespace: default}
- name: work
  context:
    cluster: work
    user: work
    extensions: [{name: again, extension: *x}]
current-context: home
x-unknown: [1, 2, {three: 3}]
# the end`;

const tmp = mkdtempSync(join(tmpdir(), 'fleet-merge-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (text?: string, mode = 0o600): string => {
  const path = join(tmp, `config-${++n}`);
  if (text !== undefined) {
    writeFileSync(path, text);
    chmodSync(path, mode);
  }
  return path;
};

/** Every entry that is not fleet's, as parsed, by section. */
function others(text: string): unknown {
  const doc = parseKubeconfig(text, 'x').doc;
  const mine = (list: Array<Record<string, unknown>> | null | undefined, key: string) =>
    (list ?? []).filter((i) => !JSON.stringify(i[key] ?? {}).includes(FLEET_EXPORT_EXTENSION));
  return {
    clusters: mine(doc.clusters, 'cluster'),
    users: mine(doc.users, 'user'),
    contexts: mine(doc.contexts, 'context'),
  };
}

describe('merge into a kubeconfig file', () => {
  it('adds fleet entries after the user own ones, leaving every byte before them as it was', () => {
    const { text, plan } = mergeKubeconfigText(OWN, exported(['a', 'b']), 'f');
    // The user's file is a prefix-wise subsequence: every original line is still there, in order, unchanged.
    const kept = OWN.split('\n');
    const lines = text.split('\n');
    let at = 0;
    for (const line of kept) {
      at = lines.indexOf(line, at);
      assert.ok(at >= 0, `line kept byte-for-byte: ${line}`);
      at++;
    }
    assert.deepEqual(others(text), others(OWN));
    const doc = parseKubeconfig(text, 'f').doc;
    assert.deepEqual(
      doc.contexts?.map((c) => c.name),
      ['home', 'work', 'fleet-a', 'fleet-b'],
    );
    assert.deepEqual(
      doc.clusters?.map((c) => c.name),
      ['home', 'work', 'fleet-a', 'fleet-b'],
    );
    assert.deepEqual(doc.users?.find((u) => u.name === 'fleet-b')?.user, exported(['b']).users![0].user);
    assert.equal(doc['current-context'], 'home');
    assert.deepEqual(doc['x-unknown'], [1, 2, { three: 3 }]);
    assert.equal(plan.added.length, 6);
    assert.deepEqual(plan.kept.map((e) => `${e.kind}/${e.name}`).sort(), [
      'cluster/home',
      'cluster/work',
      'context/home',
      'context/work',
      'user/home',
      'user/work',
    ]);
    assert.equal(plan.currentContextSet, false);
    // The user's lines sit where they were: only text after each list's last entry is new.
    assert.ok(text.startsWith(OWN.slice(0, OWN.indexOf('users:'))), 'clusters list untouched up to its end');
  });

  it('is idempotent: a second run changes no byte and reports everything unchanged', () => {
    const once = mergeKubeconfigText(OWN, exported(['a', 'b']), 'f').text;
    const twice = mergeKubeconfigText(once, exported(['a', 'b']), 'f');
    assert.equal(twice.text, once);
    assert.equal(twice.plan.changed, false);
    assert.equal(twice.plan.unchanged.length, 6);
    assert.deepEqual([twice.plan.added, twice.plan.updated], [[], []]);
  });

  it("is idempotent on kubectl's rewrite of the file too (sorted keys, no comments, env: null)", () => {
    const once = mergeKubeconfigText(OWN, exported(['a']), 'f').text;
    // What `kubectl config use-context` writes back: its own layout, every exec entry with env: null.
    const doc = parseKubeconfig(once, 'f').doc;
    for (const u of doc.users ?? []) if (u.user.exec) u.user.exec.env = null;
    const rewritten = dumpKubeconfig({ ...doc, 'current-context': 'work' });
    const again = mergeKubeconfigText(rewritten, exported(['a']), 'f');
    assert.equal(again.plan.changed, false);
    assert.equal(again.text, rewritten);
  });

  it('updates only the fleet entries that changed, in place, and keeps fleet entries the export no longer names', () => {
    const once = mergeKubeconfigText(OWN, exported(['a', 'b']), 'f').text;
    const moved = exported(['a'], () => 'https://moved:6443');
    const { text, plan } = mergeKubeconfigText(once, moved, 'f');
    assert.deepEqual(plan.updated, [{ kind: 'cluster', name: 'fleet-a' }]);
    assert.deepEqual(plan.unchanged.map((e) => e.kind).sort(), ['context', 'user']);
    assert.ok(plan.kept.some((e) => e.name === 'fleet-b'));
    assert.equal(text.replace('https://moved:6443', 'https://a.example:6443'), once, 'only the server changed');
    assert.deepEqual(others(text), others(OWN));
  });

  it('refuses to overwrite a same-named entry fleet did not write, naming the file and the entries, before writing', async () => {
    const clash = exported(['a']);
    clash.contexts![0].name = 'home';
    clash.users![0].name = 'work';
    assert.throws(
      () => mergeKubeconfigText(OWN, clash, '/x/config'),
      (e: Error) =>
        e instanceof ConfigError &&
        e.message ===
          `/x/config: user "work", context "home" exist and fleet did not write them (no ${FLEET_EXPORT_EXTENSION} extension); rename them in the file, or export under other names` &&
        !e.message.includes('\n'),
    );
    const path = file(OWN);
    const before = statSync(path);
    await assert.rejects(mergeIntoKubeconfigFile(path, clash), (e: ConfigError) => e.exitCode === 2);
    assert.equal(readFileSync(path, 'utf8'), OWN);
    assert.equal(statSync(path).mtimeMs, before.mtimeMs);
    assert.ok(!existsSync(`${path}.lock`), 'the lock is gone');
  });

  it('sets current-context only when the file has none', () => {
    const none = OWN.replace('current-context: home\n', '');
    const set = mergeKubeconfigText(none, exported(['a', 'b']), 'f');
    assert.equal(parseKubeconfig(set.text, 'f').currentContext, 'fleet-a');
    assert.equal(set.plan.currentContextSet, true);
    const empty = mergeKubeconfigText(
      OWN.replace('current-context: home', 'current-context: ""'),
      { ...exported(['a']), 'current-context': 'fleet-a' },
      'f',
    );
    assert.ok(empty.text.includes('current-context: fleet-a\n'));
    const bare = mergeKubeconfigText(
      OWN.replace('current-context: home', 'current-context:   # none'),
      exported(['a']),
      'f',
    );
    assert.ok(bare.text.includes('current-context: fleet-a   # none\n'), bare.text);
  });

  it('writes lists that are absent, null, empty or flow, in a style that fits the file', () => {
    const cases: Array<[string, string]> = [
      ['apiVersion: v1\nkind: Config\n', 'absent'],
      ['apiVersion: v1\nclusters: null\nusers:\ncontexts: [] # none yet\n', 'null and []'],
      ['apiVersion: v1\nclusters: [{name: x, cluster: {server: "https://x"}}]\nusers: []\ncontexts: []\n', 'flow'],
      ['{"apiVersion": "v1", "clusters": [], "users": [{"name": "u", "user": {}}]}', 'JSON'],
      ['{}', 'empty JSON'],
      ['', 'empty'],
      ['# only a comment\n', 'comment'],
      ['apiVersion: v1\r\nkind: Config\r\nclusters:\r\n- name: x\r\n  cluster: {server: "https://x"}\r\n', 'CRLF'],
      ['---\napiVersion: v1\nusers:\n  - name: u\n    user: {}\n---\nsecond: doc\n', 'two documents'],
    ];
    for (const [text, what] of cases) {
      const { text: out } = mergeKubeconfigText(text, exported(['a']), 'f');
      const doc = parseKubeconfig(out, 'f').doc;
      assert.equal(doc.contexts?.at(-1)?.name, 'fleet-a', what);
      assert.deepEqual(doc.users?.at(-1), exported(['a']).users![0], what);
      assert.equal(mergeKubeconfigText(out, exported(['a']), 'f').text, out, `${what}: idempotent`);
      if (what === 'CRLF') assert.ok(!/[^\r]\n/.test(out), 'CRLF kept');
      if (what === 'JSON') assert.doesNotThrow(() => JSON.parse(out), 'still JSON');
      if (what === 'comment') assert.ok(out.startsWith('# only a comment\n'));
      if (what === 'two documents') assert.ok(out.endsWith('---\nsecond: doc\n'));
    }
  });

  it('creates a missing file 0600 (and its directory), keeps an existing file mode, writes through a symlink', async () => {
    const dir = join(tmp, 'home', '.kube');
    const created = join(dir, 'config');
    const plan = await mergeIntoKubeconfigFile(created, exported(['a']));
    assert.equal(plan.created, true);
    assert.equal(statSync(created).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(parseKubeconfig(readFileSync(created, 'utf8'), 'f').currentContext, 'fleet-a');

    const shared = file(OWN, 0o640);
    await mergeIntoKubeconfigFile(shared, exported(['a']));
    assert.equal(statSync(shared).mode & 0o777, 0o640);

    const link = join(tmp, 'link');
    symlinkSync(shared, link);
    await mergeIntoKubeconfigFile(link, exported(['a', 'b']));
    assert.ok(lstatSync(link).isSymbolicLink(), 'still a link');
    assert.equal(parseKubeconfig(readFileSync(shared, 'utf8'), 'f').contexts.size, 4);
  });

  it('changes nothing on disk with dryRun or when nothing changes, and refuses while kubectl holds the lock', async () => {
    const path = file(OWN);
    const plan = await mergeIntoKubeconfigFile(path, exported(['a']), { dryRun: true });
    assert.deepEqual([plan.dryRun, plan.changed, plan.added.length], [true, true, 3]);
    assert.equal(readFileSync(path, 'utf8'), OWN);
    await mergeIntoKubeconfigFile(path, exported(['a']));
    const after = readFileSync(path, 'utf8');
    const mtime = statSync(path).mtimeMs;
    const second = await mergeIntoKubeconfigFile(path, exported(['a']));
    assert.equal(second.changed, false);
    assert.equal(readFileSync(path, 'utf8'), after);
    assert.equal(statSync(path).mtimeMs, mtime, 'not rewritten');
    writeFileSync(`${path}.lock`, '');
    await assert.rejects(
      mergeIntoKubeconfigFile(path, exported(['b'])),
      new RegExp(`^ConfigError: ${path}: ${path}.lock exists`),
    );
    assert.equal(readFileSync(path, 'utf8'), after);
  });

  it('keeps block scalars, aliases and multi-line quoting of the user entries; refuses a layout it cannot splice', () => {
    const layouts = [
      'x: &a {server: s}\nclusters:\n- name: c\n  cluster: *a  # alias\n',
      'clusters:\n- name: c\n  cluster:\n    server: "s\n      t"\n',
      'clusters:\n-\n  name: c\n  cluster: {}\n',
      'users:\n- name: u\n  user:\n    token: |\n      abc\n    username: x\n',
    ];
    for (const text of layouts) {
      const out = mergeKubeconfigText(text, exported(['a']), 'f').text;
      assert.ok(out.startsWith(text.trimEnd()), `the user's text comes first, unchanged: ${out}`);
      assert.deepEqual(others(out), others(text));
    }
    // A kept-newline block scalar at the end of a list: its trailing lines are its value, so new items cannot go
    // after its last line; the check after splicing refuses instead of changing the token.
    const kept = 'users:\n- name: u\n  user:\n    token: |+\n      abc\n\n\ncontexts: []\n';
    assert.throws(
      () => mergeKubeconfigText(kept, exported(['a']), '/k'),
      /^ConfigError: \/k: cannot edit this file without touching entries fleet did not write \(the users list did not come out as meant\); edit it by hand$/,
    );
  });

  it('refuses a file it cannot read as a kubeconfig, with the parser wording', async () => {
    assert.throws(() => mergeKubeconfigText('clusters: [', exported(['a']), '/k'), /^ConfigError: \/k: not valid YAML/);
    assert.throws(() => mergeKubeconfigText('contexts: 3\n', exported(['a']), '/k'), /\/k: "contexts" must be a list/);
  });
});

describe('merge keeps what the user set (issue 38, item 7)', () => {
  it('a file that starts with a UTF-16 or UTF-32 BOM, or two UTF-8 BOMs, is refused in one line and left byte for byte (issue 46)', async () => {
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(OWN, 'utf16le')]);
    const utf16be = Buffer.from(utf16le);
    utf16be.swap16();
    const cases: [string, Buffer, string][] = [
      ['utf16le', utf16le, 'a UTF-16 byte order mark'],
      ['utf16be', utf16be, 'a UTF-16 byte order mark'],
      ['utf32le', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from(OWN)]), 'a UTF-32 byte order mark'],
      ['two-boms', Buffer.from(`\uFEFF\uFEFF${OWN}`), 'two UTF-8 byte order marks'],
    ];
    for (const [name, bytes, problem] of cases) {
      const path = join(tmp, `bom-${name}.kubeconfig`);
      writeFileSync(path, bytes, { mode: 0o640 });
      const line = `--merge-into ${path}: the file starts with ${problem}; fleet merges into UTF-8 kubeconfigs only (with at most one BOM): convert it (iconv -t UTF-8) or remove the marks; nothing was written`;
      for (const run of [
        () => checkMergeTarget(path, `--merge-into ${path}`),
        () => mergeIntoKubeconfigFile(path, exported(['a']), { label: `--merge-into ${path}` }),
      ])
        await assert.rejects(
          run(),
          (e: ConfigError) => e instanceof ConfigError && e.exitCode === 2 && e.message === line,
        );
      assert.ok(readFileSync(path).equals(bytes), `${name}: the file is as it was`);
      assert.equal(statSync(path).mode & 0o777, 0o640);
    }
    // One UTF-8 BOM is merged (the case below), through the file too.
    const one = join(tmp, 'bom-one.kubeconfig');
    writeFileSync(one, `\uFEFF${OWN}`);
    await checkMergeTarget(one, 'f');
    assert.equal((await mergeIntoKubeconfigFile(one, exported(['a']))).added.length, 3);
    assert.ok(readFileSync(one, 'utf8').startsWith(`\uFEFF${OWN.slice(0, 20)}`));
  });

  it('a file that starts with a UTF-8 BOM is read as kubectl reads it (past the BOM) and keeps its BOM', () => {
    const bom = `\uFEFF${OWN}`;
    const { text, plan } = mergeKubeconfigText(bom, exported(['a']), 'f');
    assert.ok(
      text.startsWith(`\uFEFF${OWN.slice(0, OWN.indexOf('users:'))}`),
      'the BOM and the user bytes before the first new entry are kept',
    );
    assert.equal(text.indexOf('\uFEFF', 1), -1, 'one BOM');
    assert.deepEqual(others(text.slice(1)), others(OWN));
    assert.equal(plan.added.length, 3);
    // A second run changes nothing; the same through the file.
    assert.equal(mergeKubeconfigText(text, exported(['a']), 'f').plan.changed, false);
    const crlf = `\uFEFF${OWN.replace(/\n/g, '\r\n')}\r\n`;
    const merged = mergeKubeconfigText(crlf, exported(['a']), 'f').text;
    assert.ok(merged.startsWith('\uFEFF'));
    assert.doesNotMatch(merged, /(^|[^\r])\n/, 'a line ends in a bare LF');
  });

  it("a namespace set on fleet's context (kubectl config set-context --namespace) survives the next export, and so do other user fields and extensions", () => {
    const once = mergeKubeconfigText(OWN, exported(['a']), 'f').text;
    // What kubectl writes for `kubectl config set-context fleet-a --namespace team-x`: the whole file in its layout.
    const doc = parseKubeconfig(once, 'f').doc;
    const ctx = doc.contexts!.find((c) => c.name === 'fleet-a')!.context as Record<string, unknown>;
    ctx.namespace = 'team-x';
    ctx.extensions = [...(ctx.extensions as unknown[]), { name: 'mine', extension: { k: 'v' } }];
    const edited = dumpKubeconfig(doc);
    // The export changed something fleet owns (the server): the entries are rewritten, the user's fields kept.
    const { text, plan } = mergeKubeconfigText(
      edited,
      exported(['a'], () => 'https://moved:6443'),
      'f',
    );
    assert.deepEqual(plan.updated, [{ kind: 'cluster', name: 'fleet-a' }]);
    assert.deepEqual(plan.warnings, []);
    const after = parseKubeconfig(text, 'f').doc.contexts!.find((c) => c.name === 'fleet-a')!.context as Record<
      string,
      unknown
    >;
    assert.equal(after.namespace, 'team-x');
    assert.deepEqual(
      (after.extensions as Array<{ name: string }>).map((e) => e.name),
      [FLEET_EXPORT_EXTENSION, 'mine'],
    );
    // Nothing else to do: the same export again leaves the file as it is.
    assert.equal(
      mergeKubeconfigText(
        text,
        exported(['a'], () => 'https://moved:6443'),
        'f',
      ).plan.changed,
      false,
    );
    // The context fleet owns still points at fleet's cluster and user; a namespace of the export is written only where the file has none.
    const withNs = exported(['a'], () => 'https://moved:6443');
    (withNs.contexts![0].context as Record<string, unknown>).namespace = 'from-provider';
    const again = parseKubeconfig(mergeKubeconfigText(text, withNs, 'f').text, 'f').doc.contexts!.find(
      (c) => c.name === 'fleet-a',
    )!.context;
    assert.deepEqual([again.cluster, again.user, again.namespace], ['fleet-a', 'fleet-a', 'team-x']);
    const fresh = parseKubeconfig(mergeKubeconfigText(once, withNs, 'f').text, 'f').doc.contexts!.find(
      (c) => c.name === 'fleet-a',
    )!.context;
    assert.equal(fresh.namespace, 'from-provider');
  });

  it("a field set on fleet's cluster or user that the export does not write is replaced with a warning naming it, never silently", () => {
    const once = mergeKubeconfigText(OWN, exported(['a']), 'f').text;
    const doc = parseKubeconfig(once, 'f').doc;
    (doc.clusters!.find((c) => c.name === 'fleet-a')!.cluster as Record<string, unknown>)['proxy-url'] =
      'http://proxy:3128';
    const { text, plan } = mergeKubeconfigText(dumpKubeconfig(doc), exported(['a']), 'f');
    assert.deepEqual(plan.updated, [{ kind: 'cluster', name: 'fleet-a' }]);
    assert.deepEqual(plan.warnings, [
      'f: cluster "fleet-a": proxy-url was set in the file; fleet writes its cluster entries whole, so the export replaced it (set it on a cluster of your own)',
    ]);
    assert.ok(!text.includes('proxy:3128'));
  });
});

describe('kubeconfig edits', () => {
  it('removes entries from block and flow lists, leaving the rest byte-identical', () => {
    const edit = new KubeconfigEdit(OWN, 'f');
    edit.remove('contexts', 'work');
    edit.remove('clusters', 'work');
    edit.remove('users', 'home');
    const out = edit.result();
    const doc = parseKubeconfig(out, 'f').doc;
    assert.deepEqual(
      [doc.contexts?.map((c) => c.name), doc.clusters?.map((c) => c.name), doc.users?.map((u) => u.name)],
      [['home'], ['home'], ['work']],
    );
    assert.ok(out.includes("  - name: 'home'            # single-quoted, indented list\n"));
    assert.ok(out.includes("  user: {username: me, password: 'p''w'}\n"));
    assert.ok(!out.includes('{name: "work"'));
    const flow = new KubeconfigEdit(
      '{"contexts": [{"name": "a", "context": {}}, {"name": "b", "context": {}}], "x": 1}',
      'f',
    );
    flow.remove('contexts', 'a');
    assert.equal(flow.result(), '{"contexts": [{"name": "b", "context": {}}], "x": 1}');
  });
});
