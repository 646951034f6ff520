import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { FileProvider, isKubeconfigFileName } from '../../src/providers/file.js';
import { closeMatches } from '../../src/base/text.js';
import { ClusterNotFoundError } from '../../src/providers/not-found.js';

const cfg = (contexts: string[], current?: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': current,
    clusters: [{ name: 'c', cluster: { server: 'https://c.example' } }],
    users: [{ name: 'u', user: { token: 'token-value-123' } }],
    contexts: contexts.map((name) => ({ name, context: { cluster: 'c', user: 'u' } })),
  });

describe('file provider', () => {
  it('matches upstream directory globs', () => {
    for (const yes of ['kubeconfig.yaml', 'kubeconfig.yml', 'a.kubeconfig', 'a.kubeconfig.yaml', 'a.kubeconfig.yml'])
      assert.ok(isKubeconfigFileName(yes), yes);
    for (const no of ['config', 'a.yaml', 'kubeconfig', 'a.kubeconfig.json', 'README.txt'])
      assert.ok(!isKubeconfigFileName(no), no);
  });

  it('names clusters <path>+<context>, keeps same-named contexts of different files apart, and accepts unambiguous short names', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-fp-'));
    await mkdir(join(d, 'fleet'));
    await writeFile(join(d, 'fleet', 'a.kubeconfig'), cfg(['admin', 'prod']));
    await writeFile(join(d, 'fleet', 'b.kubeconfig.yaml'), cfg(['admin', 'dev']));
    await writeFile(join(d, 'fleet', 'notes.yaml'), cfg(['ignored']));
    const dirPath = join(d, 'fleet');
    const p = new FileProvider({ paths: [dirPath] });
    const names = (await p.list()).map((r) => r.name);
    assert.deepEqual(names, [
      `${dirPath}/a.kubeconfig+admin`,
      `${dirPath}/a.kubeconfig+prod`,
      `${dirPath}/b.kubeconfig.yaml+admin`,
      `${dirPath}/b.kubeconfig.yaml+dev`,
    ]);
    assert.equal((await p.get('prod')).name, `${dirPath}/a.kubeconfig+prod`);
    assert.equal((await p.get(`${dirPath}/b.kubeconfig.yaml+admin`)).source.context, 'admin');
    await assert.rejects(p.get('admin'), /ambiguous/);
    await assert.rejects(
      p.get('prdo'),
      (e: Error) => e instanceof ClusterNotFoundError && e.suggestions.includes('prod') && e.exitCode === 2,
    );
  });

  it('merges KUBECONFIG files like kubectl and marks the current context', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-fp-'));
    await writeFile(join(d, 'a'), cfg(['one', 'shared']));
    await writeFile(join(d, 'b'), cfg(['shared', 'two'], 'two'));
    const p = new FileProvider({
      env: { KUBECONFIG: `${join(d, 'a')}:${join(d, 'missing')}:${join(d, 'b')}`, HOME: d },
    });
    const refs = await p.list();
    assert.deepEqual(
      refs.map((r) => r.name),
      [`${join(d, 'a')}+one`, `${join(d, 'a')}+shared`, `${join(d, 'b')}+two`],
    );
    assert.deepEqual(
      refs.map((r) => r.current),
      [false, false, true],
    );
    assert.equal((await p.current()).name, `${join(d, 'b')}+two`);
    assert.equal((await p.current('one')).name, `${join(d, 'a')}+one`);
    assert.equal((await p.get('shared')).source.path, join(d, 'a'));
  });

  it('lists a context with a missing cluster as not ready, with the file and entry in the reason', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-fp-'));
    const f = join(d, 'x.kubeconfig');
    await writeFile(f, JSON.stringify({ contexts: [{ name: 'broken', context: { cluster: 'nowhere', user: 'u' } }] }));
    const [ref] = await new FileProvider({ paths: [f] }).list();
    assert.equal(ref.ready, false);
    assert.equal(ref.reason, `${f}: context "broken" refers to cluster "nowhere", which is not defined`);
  });

  it('suggests close names', () => {
    assert.deepEqual(closeMatches('prod-ue', ['prod-eu', 'prod-us', 'dev', 'staging']), ['prod-eu', 'prod-us']);
    assert.deepEqual(closeMatches('zzz', ['prod-eu']), []);
  });
});
