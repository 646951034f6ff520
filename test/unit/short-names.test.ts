// Issue 41: tables name a file cluster by the shortest name the same listing accepts back (its context name, else the
// shortest end of its path that only it has), never a name `--cluster` or `clusters inspect` would refuse or send to
// another cluster. -o json, yaml and name keep the full `<path>+<context>`.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { makeChalk } from '../../src/cli/color.js';
import { type Column, renderTable } from '../../src/cli/table.js';
import { FileProvider } from '../../src/providers/file.js';
import { MultiProvider } from '../../src/providers/multi.js';
import { AmbiguousClusterError, shortestNames } from '../../src/providers/not-found.js';
import type { ClusterProvider } from '../../src/providers/types.js';

const kc = (contexts: string[]) =>
  JSON.stringify({
    clusters: [{ name: 'c', cluster: { server: 'https://c.example' } }],
    users: [{ name: 'u', user: { token: 'fixture-token-short-names' } }],
    contexts: contexts.map((name) => ({ name, context: { cluster: 'c', user: 'u' } })),
  });

/** A directory with a long path, as a newcomer's home or a CI workspace has. */
async function longDir(): Promise<string> {
  const d = join(
    await mkdtemp(join(tmpdir(), 'fleet-short-names-')),
    'a-rather-long-directory-name-for-kubeconfigs',
    'of-the-platform-team',
  );
  await mkdir(d, { recursive: true });
  return d;
}

/** Every cluster's short name, and that get() finds that very cluster by it (the property the tables rely on). */
async function shortsAcceptedBack(p: ClusterProvider): Promise<Record<string, string>> {
  await p.list();
  const shorts = await p.shortNames!();
  const out: Record<string, string> = {};
  for (const ref of await p.list()) {
    const shown = shorts.get(ref.name) ?? ref.name;
    assert.equal((await p.get(shown)).name, ref.name, `${shown} is not accepted back as ${ref.name}`);
    out[ref.name] = shown;
  }
  return out;
}

describe('short names of file clusters', () => {
  it('is the context name where only one cluster has it, else the shortest end of the path only it has', async () => {
    const d = await longDir();
    await mkdir(join(d, 'east'));
    await mkdir(join(d, 'west'));
    await writeFile(join(d, 'east', 'kubeconfig.yaml'), kc(['prod', 'one']));
    await writeFile(join(d, 'west', 'kubeconfig.yaml'), kc(['prod', 'two']));
    await writeFile(join(d, 'west', 'other.kubeconfig'), kc(['prod']));
    const p = new FileProvider({ paths: [join(d, 'east'), join(d, 'west')] });
    assert.deepEqual(await shortsAcceptedBack(p), {
      [`${join(d, 'east', 'kubeconfig.yaml')}+prod`]: 'east/kubeconfig.yaml+prod',
      [`${join(d, 'east', 'kubeconfig.yaml')}+one`]: 'one',
      [`${join(d, 'west', 'kubeconfig.yaml')}+prod`]: 'west/kubeconfig.yaml+prod',
      [`${join(d, 'west', 'kubeconfig.yaml')}+two`]: 'two',
      [`${join(d, 'west', 'other.kubeconfig')}+prod`]: 'other.kubeconfig+prod',
    });
    // The end two clusters share is refused by name, as an ambiguous context name is.
    await assert.rejects(p.get('kubeconfig.yaml+prod'), (e: unknown) => e instanceof AmbiguousClusterError);
  });

  it('never uses an end that is another cluster’s context name, and nothing is shortened before a listing', async () => {
    const d = await longDir();
    await writeFile(join(d, 'a.kubeconfig'), kc(['prod']));
    await writeFile(join(d, 'b.kubeconfig'), kc(['prod']));
    // A context literally named like b's end: `b.kubeconfig+prod` finds it (an alias comes before an end).
    await writeFile(join(d, 'c.kubeconfig'), kc(['b.kubeconfig+prod']));
    const p = new FileProvider({ paths: [d] });
    assert.deepEqual(await p.shortNames(), new Map());
    const shown = await shortsAcceptedBack(p);
    assert.equal(shown[`${join(d, 'a.kubeconfig')}+prod`], 'a.kubeconfig+prod');
    assert.equal(shown[`${join(d, 'b.kubeconfig')}+prod`], `${d.split('/').at(-1)}/b.kubeconfig+prod`);
    assert.equal(shown[`${join(d, 'c.kubeconfig')}+b.kubeconfig+prod`], 'b.kubeconfig+prod');
  });

  it('only file clusters are shortened: other providers’ names are what their objects are called', () => {
    const ref = (name: string, kind: 'secret' | 'kubeconfig-file', aliases: string[]) => ({
      name,
      provider: 'p',
      aliases,
      auth: 'token' as const,
      source: { kind, context: aliases[0] },
      labels: {},
      ready: true,
      resolve: () => Promise.reject(new Error('not used')),
    });
    assert.deepEqual(
      shortestNames([ref('ns/prod', 'secret', ['prod']), ref('/k/config+dev', 'kubeconfig-file', ['dev'])]),
      new Map([['/k/config+dev', 'dev']]),
    );
  });

  it('in a fleet of several providers: the context name, else <provider>#<its short name>', async () => {
    const d = await longDir();
    for (const n of ['a', 'b']) {
      await mkdir(join(d, n));
      await writeFile(join(d, n, 'config'), kc(['hub', `only-${n}`]));
    }
    const m = new MultiProvider([
      new FileProvider({ name: 'a', paths: [join(d, 'a', 'config')] }),
      new FileProvider({ name: 'b', paths: [join(d, 'b', 'config')] }),
    ]);
    assert.deepEqual(await m.shortNames(), new Map());
    assert.deepEqual(await shortsAcceptedBack(m), {
      [`a#${join(d, 'a', 'config')}+hub`]: 'a#hub',
      [`a#${join(d, 'a', 'config')}+only-a`]: 'only-a',
      [`b#${join(d, 'b', 'config')}+hub`]: 'b#hub',
      [`b#${join(d, 'b', 'config')}+only-b`]: 'only-b',
    });
  });

  it('a short name that get() would hand to a provider by its name is not used', async () => {
    const d = await longDir();
    // A context named `b#x` in provider a: get('b#x') asks provider b, so a's cluster is shown as `a#b#x`.
    await writeFile(join(d, 'a.kubeconfig'), kc(['b#x']));
    await writeFile(join(d, 'b.kubeconfig'), kc(['y']));
    const m = new MultiProvider([
      new FileProvider({ name: 'a', paths: [join(d, 'a.kubeconfig')] }),
      new FileProvider({ name: 'b', paths: [join(d, 'b.kubeconfig')] }),
    ]);
    await m.list();
    const shown = await shortsAcceptedBack(m);
    assert.equal(shown[`a#${join(d, 'a.kubeconfig')}+b#x`], 'a#b#x');
    assert.equal(shown[`b#${join(d, 'b.kubeconfig')}+y`], 'y');
  });

  it('renderTable shows the short name in cluster columns only', () => {
    type Row = { cluster: string; note: string };
    const full = '/home/someone/.kube/a-long-path/config+prod';
    const columns: Column<Row>[] = [
      { header: 'cluster', get: (r) => r.cluster, cluster: true },
      { header: 'note', get: (r) => r.note },
    ];
    const out = renderTable([{ cluster: full, note: full }], columns, {
      wide: false,
      chalk: makeChalk(false),
      shortNames: new Map([[full, 'prod']]),
    });
    assert.equal(out, `CLUSTER   NOTE\nprod      ${full}`);
    // A cell that lists clusters (auth plugins' CLUSTERS) shows each by its short name before it is joined.
    const listed: Column<string[]>[] = [
      {
        header: 'clusters',
        get: (r) => r.join(', '),
        clusterList: { names: (r) => r, join: (shown) => shown.join(', ') },
      },
    ];
    const two = [full, '/elsewhere/config+dev'];
    const shortNames = new Map([[full, 'prod']]);
    assert.equal(
      renderTable([two], listed, { wide: false, chalk: makeChalk(false), shortNames }),
      'CLUSTERS\nprod, /elsewhere/config+dev',
    );
  });
});
