import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { UsageError } from '../../src/base/errors.js';
import { selectClusters } from '../../src/fleet/select.js';
import { matchesSelector, parseSelector } from '../../src/fleet/selector.js';
import type { ClusterProvider, ClusterRef } from '../../src/providers/types.js';

function ref(name: string, labels: Record<string, string> = {}, aliases: string[] = []): ClusterRef {
  return {
    name,
    provider: 'test',
    aliases,
    auth: 'none',
    source: { kind: 'kubeconfig-file' },
    labels,
    ready: true,
    resolve: async () => {
      throw new Error('unused');
    },
  };
}

const REFS = [
  ref('a.kubeconfig+prod-eu', { env: 'prod', region: 'eu' }, ['prod-eu']),
  ref('a.kubeconfig+prod-us', { env: 'prod', region: 'us', tier: 'edge' }, ['prod-us']),
  ref('b.kubeconfig+dev', { env: 'dev' }, ['dev']),
  ref('c.kubeconfig+scratch', {}, ['scratch']),
];

const provider: ClusterProvider = {
  name: 'test',
  list: async () => REFS,
  get: async (name) => {
    const hit = REFS.find((r) => r.name === name || r.aliases.includes(name));
    if (!hit) throw new Error(`cluster "${name}" not found`);
    return hit;
  },
  current: async (context) => (context ? provider.get(context) : REFS[2]),
};

const names = (refs: ClusterRef[]) => refs.map((r) => r.name);

describe('cluster selection', () => {
  it('without flags, the current context (or --context)', async () => {
    assert.deepEqual(names(await selectClusters(provider, {})), ['b.kubeconfig+dev']);
    assert.deepEqual(names(await selectClusters(provider, { context: 'prod-us' })), ['a.kubeconfig+prod-us']);
  });

  it('--all lists everything in provider order', async () => {
    assert.deepEqual(names(await selectClusters(provider, { all: true })), names(REFS));
  });

  it('--cluster is repeatable, keeps the order given and drops repeats (by name or alias)', async () => {
    const got = await selectClusters(provider, {
      clusters: ['dev', 'a.kubeconfig+prod-eu', 'b.kubeconfig+dev', 'prod-eu'],
    });
    assert.deepEqual(names(got), ['b.kubeconfig+dev', 'a.kubeconfig+prod-eu']);
  });

  it('an unknown --cluster fails the whole selection', async () => {
    await assert.rejects(selectClusters(provider, { clusters: ['dev', 'nope'] }), /cluster "nope" not found/);
  });

  it('--all with --cluster is a usage error', async () => {
    await assert.rejects(
      selectClusters(provider, { all: true, clusters: ['dev'] }),
      (e) => e instanceof UsageError && /cannot be used together/.test(e.message),
    );
  });

  it('--selector alone selects from all clusters; with --cluster it narrows those', async () => {
    assert.deepEqual(names(await selectClusters(provider, { selector: 'env=prod' })), [
      'a.kubeconfig+prod-eu',
      'a.kubeconfig+prod-us',
    ]);
    assert.deepEqual(names(await selectClusters(provider, { selector: 'env=prod', clusters: ['dev', 'prod-us'] })), [
      'a.kubeconfig+prod-us',
    ]);
    // Nothing matched is never an empty success: a usage error naming the selector and the label keys that exist.
    await assert.rejects(
      selectClusters(provider, { selector: 'env=nowhere' }),
      (e) =>
        e instanceof UsageError &&
        e.message === '--selector env=nowhere matched none of the 4 clusters; label keys in use: env, region, tier',
    );
  });
});

describe('label selectors', () => {
  const match = (sel: string, labels: Record<string, string>) => matchesSelector(parseSelector(sel), labels);

  it('equality, inequality, existence and set-based requirements, all ANDed', () => {
    const eu = REFS[0].labels;
    const us = REFS[1].labels;
    assert.equal(match('env=prod', eu), true);
    assert.equal(match('env==prod,region=eu', eu), true);
    assert.equal(match('env=prod,region=eu', us), false);
    assert.equal(match('tier!=edge', eu), true, 'a missing key is not equal to anything');
    assert.equal(match('tier!=edge', us), false);
    assert.equal(match('tier', us), true);
    assert.equal(match('!tier', us), false);
    assert.equal(match('region in (eu, ap)', eu), true);
    assert.equal(match('region in (eu,ap),env notin (dev)', us), false);
    assert.equal(match('region notin (us)', {}), true);
    assert.equal(match('', {}), true);
  });

  it('garbage is a usage error quoting the part it could not read', () => {
    assert.throws(
      () => parseSelector('env=prod,=x'),
      (e) => e instanceof UsageError && e.message === '--selector: cannot parse "=x" in "env=prod,=x"',
    );
    assert.throws(() => parseSelector('region in eu'), /cannot parse "region in eu"/);
  });
});
