// The offline parts of `creds adopt --file`: which path and context are taken (relative, absolute, `..`, a symlink) and
// what is refused in one line before any cluster is touched; the write that keeps a file only if its bytes are as read
// (and writes through a symlink); the file a revoked adopted context leaves; and the flag combinations of the command.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { readAdoptFile } from '../../src/creds/adopt-file.js';
import { withoutContext } from '../../src/creds/kubeconfig-out.js';
import { Conflict, writeKubeconfigIfUnchanged } from '../../src/creds/rotation-store.js';
import { adoptOptions } from '../../src/commands/creds/adopt.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-adopt-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const doc = (users: Record<string, Record<string, unknown>>, current = Object.keys(users)[0], shared?: string) => ({
  apiVersion: 'v1',
  kind: 'Config',
  preferences: {},
  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', 'certificate-authority-data': 'Q0E=' } }],
  users: Object.entries(users).map(([name, user]) => ({ name: `${name}-user`, user })),
  contexts: [
    ...Object.keys(users).map((name) => ({ name, context: { cluster: 'c', user: `${name}-user` } })),
    ...(shared ? [{ name: 'twin', context: { cluster: 'c', user: `${shared}-user` } }] : []),
  ],
  'current-context': current,
});
const write = (name: string, content: unknown, mode = 0o600) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : yaml.dump(content), { mode });
  return path;
};

describe('readAdoptFile', () => {
  const path = write('team.kubeconfig', doc({ a: { token: 'tok-a' }, b: { token: 'tok-b' } }, 'a'));

  it('takes --context, else the current context; relative, absolute and `..` spellings name the same file', async () => {
    assert.equal((await readAdoptFile(path, undefined)).context, 'a');
    const b = await readAdoptFile(path, 'b');
    assert.equal(b.context, 'b');
    assert.equal(b.resolved.user.token, 'tok-b');
    assert.equal(b.path, path);
    assert.equal(b.target, path);
    assert.equal(b.mode, 0o600);
    mkdirSync(join(dir, 'sub'), { recursive: true });
    const viaDots = await readAdoptFile(join(dir, 'sub', '..', 'team.kubeconfig'), 'b');
    assert.equal(viaDots.path, path);
    const rel = relative(process.cwd(), path);
    assert.equal((await readAdoptFile(rel, 'b')).path, path);
  });

  it('through a symlink: the path stays the link, writes go to the file it leads to', async () => {
    mkdirSync(join(dir, 'links'), { recursive: true });
    const link = join(dir, 'links', 'config');
    symlinkSync('../team.kubeconfig', link);
    const f = await readAdoptFile(link, 'b');
    assert.equal(f.path, link);
    assert.equal(f.target, path);
  });

  it('refuses in one line what it cannot adopt', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const cases: Array<[string, string | undefined, RegExp]> = [
      [join(dir, 'missing'), undefined, /^--file .*missing: file not found$/],
      [dir, undefined, /^--file .*: is a directory, not a kubeconfig file$/],
      [join(dir, 'fifo'), undefined, /^--file .*fifo: not a regular file$/],
      [path, 'zz', /no context "zz" in the file \(its contexts: a, b\)$/],
      [
        write('nocurrent.kubeconfig', { ...doc({ a: { token: 't' } }), 'current-context': undefined }),
        undefined,
        /sets no current-context: name the context with --context$/,
      ],
      [
        write(
          'exec.kubeconfig',
          doc({ e: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'gke-gcloud-auth-plugin' } } }),
        ),
        undefined,
        /the exec plugin gke-gcloud-auth-plugin, which makes and renews it/,
      ],
      [write('ap.kubeconfig', doc({ o: { 'auth-provider': { name: 'oidc' } } })), undefined, /the oidc auth-provider/],
      [write('empty.kubeconfig', doc({ n: {} })), undefined, /has no token or client certificate/],
      [
        write('shared.kubeconfig', doc({ s: { token: 't' } }, 's', 's')),
        's',
        /user "s-user" of context "s" is also the user of "twin"/,
      ],
      [write('bad.kubeconfig', 'clusters: [\n'), undefined, /^--file .*bad\.kubeconfig/],
    ];
    for (const [p, ctx, want] of cases) {
      const error = await readAdoptFile(p, ctx).then(
        () => undefined,
        (e: Error) => e,
      );
      assert.ok(error, `${p} was accepted`);
      assert.equal(error.name, 'ConfigError', `${p}: ${error.message}`);
      assert.match(error.message, want);
      assert.equal(error.message.split('\n').length, 1, error.message);
    }
  });

  it('a file fleet keeps for another context is refused; for this context its record is returned', async () => {
    const kept = {
      ...doc({ a: { token: 't' }, b: { token: 'u' } }),
      extensions: [{ name: 'fleet.dev/credential', extension: { method: 'token', context: 'a' } }],
    };
    const p = write('kept.kubeconfig', kept);
    assert.equal((await readAdoptFile(p, 'a')).facts?.context, 'a');
    await assert.rejects(readAdoptFile(p, 'b'), /fleet keeps context "a" of this file already/);
  });
});

describe('writeKubeconfigIfUnchanged', () => {
  it('writes atomically 0600 only while the file holds what was read, and through a symlink', async () => {
    const p = write('w.kubeconfig', 'one\n', 0o644);
    const link = join(dir, 'w-link');
    symlinkSync('w.kubeconfig', link);
    await writeKubeconfigIfUnchanged(link, 'one\n', 'two\n');
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(p, 'utf8'), 'two\n');
    assert.equal(statSync(p).mode & 0o777, 0o600);
    await assert.rejects(writeKubeconfigIfUnchanged(p, 'one\n', 'three\n'), Conflict);
    assert.equal(readFileSync(p, 'utf8'), 'two\n');
    // An undo puts the mode it read back.
    await writeKubeconfigIfUnchanged(p, 'two\n', 'one\n', 0o640);
    assert.equal(statSync(p).mode & 0o777, 0o640);
    chmodSync(p, 0o600);
  });

  it("through a link, the file keeps its owner, group and mode (as kubectl's write in place): root adopting uid 1000's file left it root's and 0600", async () => {
    // Giving a file to another uid needs root, as the case itself does (.ci/run and the sandbox run as root).
    assert.equal(process.getuid?.(), 0, 'this test chowns files to uid 1000: run it as root');
    // In the system's /tmp, not tmpdir(): scripts/test.js points TMPDIR at a 0700 directory of root's, which uid 65534
    // below could not even pass through.
    const home = mkdtempSync(join('/tmp', 'fleet-adopt-owner-'));
    chmodSync(home, 0o755);
    const target = join(home, 'config');
    writeFileSync(target, 'one\n', { mode: 0o600 });
    chownSync(target, 1000, 1001);
    const link = join(home, 'link');
    symlinkSync(target, link);
    await writeKubeconfigIfUnchanged(link, 'one\n', 'two\n');
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link stays a link');
    const st = statSync(target);
    assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [1000, 1001, 0o600]);
    assert.equal(readFileSync(target, 'utf8'), 'two\n');
    // A 0644 file of another user's: its owner kept, group and others' bits dropped (a credential is in it).
    chmodSync(target, 0o644);
    await writeKubeconfigIfUnchanged(link, 'two\n', 'three\n');
    const again = statSync(target);
    assert.deepEqual([again.uid, again.gid, again.mode & 0o7777], [1000, 1001, 0o600]);
    // Someone who cannot give the file its owner back (not root, not its owner) writes nothing, in one line: here
    // uid 65534, who may read the file and write its directory, so the rename would have worked.
    chmodSync(target, 0o644);
    chmodSync(home, 0o777);
    // In this process with the effective uid and gid 65534 for the write (root takes them back after): a child run as
    // 65534 would need the node binary and this tree to be reachable by that uid, which a CI machine's layout may not be.
    let refusal: unknown;
    process.setegid!(65534);
    process.seteuid!(65534);
    try {
      await writeKubeconfigIfUnchanged(link, 'three\n', 'four\n');
    } catch (error) {
      refusal = error;
    } finally {
      process.seteuid!(0);
      process.setegid!(0);
    }
    assert.ok(refusal instanceof Error, 'the write as uid 65534 was refused');
    assert.equal(
      refusal.message,
      `${target}: owned by uid 1000 gid 1001, and this user (uid 65534) cannot write it keeping that owner: run as its owner (or root); nothing was written`,
    );
    assert.equal(readFileSync(target, 'utf8'), 'three\n');
    assert.deepEqual(readdirSync(home).sort(), ['config', 'link'], 'no temporary file left');
    rmSync(home, { recursive: true, force: true });
  });

  it('a FIFO swapped in where the file was is a Conflict at once, never a blocking read', async () => {
    const fifo = join(dir, 'swapped.kubeconfig');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    await assert.rejects(writeKubeconfigIfUnchanged(fifo, 'one\n', 'two\n'), Conflict);
    assert.ok(Date.now() - started < 2000, 'the FIFO was waited on');
    assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO was replaced');
  });
});

describe('withoutContext', () => {
  it('drops the context, its unshared user and cluster, and fleet record; keeps the rest', () => {
    const d = {
      ...doc({ a: { token: 'ta' }, b: { token: 'tb' } }, 'b'),
      extensions: [
        { name: 'fleet.dev/credential', extension: { context: 'b' } },
        { name: 'example.com/x', extension: { k: 'v' } },
      ],
    };
    const text = withoutContext(d, 'b');
    assert.ok(text);
    const out = yaml.load(text) as any;
    assert.deepEqual(
      out.contexts.map((c: any) => c.name),
      ['a'],
    );
    assert.deepEqual(
      out.users.map((u: any) => u.name),
      ['a-user'],
    );
    // The cluster is still named by context a.
    assert.deepEqual(
      out.clusters.map((c: any) => c.name),
      ['c'],
    );
    assert.equal(out['current-context'], undefined);
    assert.deepEqual(out.extensions, [{ name: 'example.com/x', extension: { k: 'v' } }]);
    assert.deepEqual(out.preferences, {});
  });
  it('is undefined when no other context is left (the whole file is the credential)', () => {
    assert.equal(withoutContext(doc({ a: { token: 't' } }) as never, 'a'), undefined);
  });
});

describe('adoptOptions with --file', () => {
  const flags = (f: Record<string, unknown>) =>
    ({ duration: '24h', 'revoke-old': false, 'dry-run': false, ...f }) as never;
  it('needs no Secret names; refuses names beside it; keeps the grant rules of the Secret path', async () => {
    const o = await adoptOptions(flags({ file: 'x' }), []);
    assert.deepEqual(o.names, []);
    await assert.rejects(adoptOptions(flags({ file: 'x' }), ['ns/n']), /--file and Secret names exclude each other/);
    await assert.rejects(adoptOptions(flags({ file: 'x', role: 'view' }), []), /name it with --service-account/);
    await assert.rejects(adoptOptions(flags({}), []), /or --file PATH/);
  });
});
