import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { loadMerged, precedence, resolveContext, splitPathList } from '../../src/kubeconfig/loading-rules.js';
import { ConfigError } from '../../src/base/errors.js';

async function dir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'fleet-loading-'));
}

function kubeconfig(opts: {
  current?: string;
  clusters?: Record<string, object>;
  users?: Record<string, object>;
  contexts?: Record<string, object>;
}): string {
  const list = (m: Record<string, object> | undefined, key: string) =>
    Object.entries(m ?? {}).map(([name, v]) => ({ name, [key]: v }));
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    ...(opts.current ? { 'current-context': opts.current } : {}),
    clusters: list(opts.clusters, 'cluster'),
    users: list(opts.users, 'user'),
    contexts: list(opts.contexts, 'context'),
  });
}

describe('kubeconfig loading rules', () => {
  it('splits KUBECONFIG on ":" and drops empty entries and duplicates, keeping the first', () => {
    assert.deepEqual(splitPathList('a::b:a:c:'), ['a', 'b', 'c']);
    assert.deepEqual(splitPathList(''), []);
    assert.deepEqual(splitPathList(undefined), []);
  });

  it('falls back to ~/.kube/config when KUBECONFIG is unset or empty', () => {
    assert.deepEqual(precedence({ HOME: '/home/u' }).paths, ['/home/u/.kube/config']);
    assert.deepEqual(precedence({ HOME: '/home/u', KUBECONFIG: '' }).paths, ['/home/u/.kube/config']);
    assert.deepEqual(precedence({ HOME: '/home/u', KUBECONFIG: '/a:/b' }).paths, ['/a', '/b']);
  });

  it('skips missing files in a list, but not an explicit one', async () => {
    const d = await dir();
    await writeFile(
      join(d, 'a'),
      kubeconfig({ contexts: { one: { cluster: 'c' } }, clusters: { c: { server: 'https://a' } } }),
    );
    const merged = await loadMerged([join(d, 'missing'), join(d, 'a')]);
    assert.deepEqual([...merged.contexts.keys()], ['one']);
    assert.deepEqual(merged.missing, [join(d, 'missing')]);
    await assert.rejects(
      loadMerged([join(d, 'missing')], { explicit: true }),
      (e: Error) => e instanceof ConfigError && e.message.includes('missing'),
    );
  });

  it('lets the first file that sets a name win, for clusters, users and contexts', async () => {
    const d = await dir();
    await writeFile(
      join(d, 'a'),
      kubeconfig({
        clusters: { c: { server: 'https://from-a' } },
        users: { u: { token: 'tok-a-123456' } },
        contexts: { x: { cluster: 'c', user: 'u', namespace: 'a-ns' } },
      }),
    );
    await writeFile(
      join(d, 'b'),
      kubeconfig({
        clusters: { c: { server: 'https://from-b' }, d: { server: 'https://only-b' } },
        users: { u: { token: 'tok-b-123456' } },
        contexts: { x: { cluster: 'd' }, y: { cluster: 'd' } },
      }),
    );
    const merged = await loadMerged([join(d, 'a'), join(d, 'b')]);
    assert.equal(merged.clusters.get('c')?.entry.server, 'https://from-a');
    assert.equal(merged.users.get('u')?.entry.token, 'tok-a-123456');
    assert.equal(merged.contexts.get('x')?.entry.namespace, 'a-ns');
    assert.equal(merged.contexts.get('x')?.file.path, join(d, 'a'));
    assert.deepEqual([...merged.contexts.keys()], ['x', 'y']);
    assert.equal(merged.clusters.get('d')?.entry.server, 'https://only-b');
  });

  it('takes current-context from the first file that sets it', async () => {
    const d = await dir();
    await writeFile(join(d, 'a'), kubeconfig({}));
    await writeFile(join(d, 'b'), kubeconfig({ current: 'from-b' }));
    await writeFile(join(d, 'c'), kubeconfig({ current: 'from-c' }));
    const merged = await loadMerged([join(d, 'a'), join(d, 'b'), join(d, 'c')]);
    assert.equal(merged.currentContext, 'from-b');
  });

  it('resolves relative certificate, key, token file and exec command paths against the file that holds them', async () => {
    const d = await dir();
    await mkdir(join(d, 'sub'));
    await writeFile(
      join(d, 'sub', 'cfg'),
      kubeconfig({
        clusters: { c: { server: 'https://x', 'certificate-authority': 'ca.crt' } },
        users: {
          u: {
            'client-certificate': 'certs/u.crt',
            'client-key': '/abs/u.key',
            tokenFile: '../tok',
            exec: { command: './bin/plugin' },
          },
        },
        contexts: { x: { cluster: 'c', user: 'u' } },
      }),
    );
    await writeFile(
      join(d, 'other'),
      kubeconfig({ users: { v: { exec: { command: 'kubelogin' } } }, contexts: { y: { cluster: 'c', user: 'v' } } }),
    );
    const merged = await loadMerged([join(d, 'other'), join(d, 'sub', 'cfg')]);
    const ctx = resolveContext(merged, 'x');
    assert.equal(ctx.cluster['certificate-authority'], join(d, 'sub', 'ca.crt'));
    assert.equal(ctx.user['client-certificate'], join(d, 'sub', 'certs', 'u.crt'));
    assert.equal(ctx.user['client-key'], '/abs/u.key');
    assert.equal(ctx.user.tokenFile, join(d, 'tok'));
    assert.equal(ctx.user.exec?.command, join(d, 'sub', 'bin', 'plugin'));
    // A bare command is looked up on PATH, not resolved.
    assert.equal(resolveContext(merged, 'y').user.exec?.command, 'kubelogin');
    // Resolution works on copies: the loaded document is unchanged.
    assert.equal(merged.clusters.get('c')?.entry['certificate-authority'], 'ca.crt');
  });

  it('names the file and the entry when a context points at a missing cluster or user', async () => {
    const d = await dir();
    const f = join(d, 'cfg');
    await writeFile(
      f,
      kubeconfig({
        clusters: { c: { server: 'https://x' } },
        contexts: { nocluster: { cluster: 'gone' }, nouser: { cluster: 'c', user: 'ghost' } },
      }),
    );
    const merged = await loadMerged([f]);
    assert.throws(
      () => resolveContext(merged, 'nocluster'),
      (e: Error) =>
        e instanceof ConfigError &&
        e.message === `${f}: context "nocluster" refers to cluster "gone", which is not defined`,
    );
    assert.throws(
      () => resolveContext(merged, 'nouser'),
      (e: Error) =>
        e instanceof ConfigError && e.message === `${f}: context "nouser" refers to user "ghost", which is not defined`,
    );
  });

  it('reports malformed YAML, duplicate names and unreadable files with the file named', async () => {
    const d = await dir();
    await writeFile(join(d, 'bad'), 'clusters: [\n  - name: a\n   cluster: {}\n');
    await assert.rejects(
      loadMerged([join(d, 'bad')]),
      (e: Error) => e instanceof ConfigError && e.message.startsWith(`${join(d, 'bad')}: not valid YAML`),
    );
    await writeFile(
      join(d, 'dup'),
      kubeconfig({}).replace('"clusters":[]', '"clusters":[{"name":"a","cluster":{}},{"name":"a","cluster":{}}]'),
    );
    await assert.rejects(loadMerged([join(d, 'dup')]), /dup: duplicate name "a" in clusters/);
    await writeFile(join(d, 'list'), '- just\n- a list\n');
    await assert.rejects(loadMerged([join(d, 'list')]), /list: a kubeconfig must be a YAML mapping/);
    if (process.getuid?.() !== 0) {
      await writeFile(join(d, 'locked'), kubeconfig({}));
      await chmod(join(d, 'locked'), 0);
      await assert.rejects(loadMerged([join(d, 'locked')]), /locked: permission denied/);
    }
  });

  it('reports the first bad file in precedence order, not the first to fail', async () => {
    const d = await dir();
    // A large first file parses later than a tiny second one; the error must still name the first.
    await writeFile(
      join(d, 'big'),
      kubeconfig({
        contexts: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`c${i}`, { cluster: 'x' }])),
      }) + '\n: bad',
    );
    await writeFile(join(d, 'small'), '[');
    await assert.rejects(loadMerged([join(d, 'big'), join(d, 'small')]), (e: Error) =>
      e.message.startsWith(`${join(d, 'big')}: not valid YAML`),
    );
  });

  it('treats an empty file as an empty config', async () => {
    const d = await dir();
    await writeFile(join(d, 'empty'), '');
    const merged = await loadMerged([join(d, 'empty')]);
    assert.equal(merged.contexts.size, 0);
    assert.equal(merged.files.length, 1);
  });
});
