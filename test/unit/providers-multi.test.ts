import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { FleetError, UsageError } from '../../src/base/errors.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { FileProvider } from '../../src/providers/file.js';
import { MultiProvider, splitMultiName } from '../../src/providers/multi.js';
import { ClusterNotFoundError, findCluster } from '../../src/providers/not-found.js';
import { DeferredProvider, buildProvider, mergeHub } from '../../src/providers/registry.js';
import type { ClusterProvider, ClusterRef } from '../../src/providers/types.js';

const kc = (contexts: string[], current?: string) =>
  JSON.stringify({
    'current-context': current,
    clusters: [{ name: 'c', cluster: { server: 'https://c.example' } }],
    users: [{ name: 'u', user: { token: 'fixture-token-multi' } }],
    contexts: contexts.map((name) => ({ name, context: { cluster: 'c', user: 'u' } })),
  });

/** A provider with fixed clusters (or a failure), standing for any hub-backed provider. */
function stub(name: string, clusters: string[] | Error): ClusterProvider {
  const refs = (): ClusterRef[] =>
    (clusters as string[]).map((c) => ({
      name: c,
      provider: name,
      aliases: [],
      auth: 'token',
      server: `https://${c.replace('/', '-')}.example`,
      source: { kind: 'secret', name: c },
      labels: {},
      ready: true,
      resolve: async () => {
        throw new Error('not used');
      },
    }));
  return {
    name,
    list: async () => {
      if (clusters instanceof Error) throw clusters;
      return refs();
    },
    get: async (n) => findCluster(refs(), n, `stub "${name}"`),
    describe: () => `stub "${name}"`,
  };
}

describe('multi provider', () => {
  it('splits names on the first #', () => {
    assert.deepEqual(splitMultiName('capi#ns/a#b'), { provider: 'capi', inner: 'ns/a#b' });
    assert.equal(splitMultiName('plain'), undefined);
    assert.equal(splitMultiName('#x'), undefined);
  });

  it('prefixes every name with its provider and accepts the inner name when unambiguous', async () => {
    const m = new MultiProvider([stub('secrets', ['prod', 'dev']), stub('capi', ['ns/prod', 'ns/edge'])]);
    assert.deepEqual(
      (await m.list()).map((r) => r.name),
      ['secrets#prod', 'secrets#dev', 'capi#ns/prod', 'capi#ns/edge'],
    );
    assert.equal((await m.get('capi#ns/prod')).name, 'capi#ns/prod');
    assert.equal((await m.get('ns/edge')).name, 'capi#ns/edge');
    await assert.rejects(m.get('secrets#prd'), (e: unknown) => {
      assert.ok(e instanceof ClusterNotFoundError);
      assert.equal(e.message, 'cluster "secrets#prd" not found in stub "secrets"; did you mean "secrets#prod"?');
      return true;
    });
    await assert.rejects(m.get('edg'), {
      message: 'cluster "edg" not found in providers "secrets", "capi"; did you mean "capi#ns/edge", "ns/edge"?',
    });
  });

  it('a provider that cannot list is one failure beside the clusters, in its place, and the others are still listed', async () => {
    const m = new MultiProvider([
      stub(
        'down',
        new FleetError('unreachable', 'kubeconfig provider "down": https://10.0.0.1:6443: connection refused'),
      ),
      stub('up', ['a']),
    ]);
    const [up] = await m.list();
    const [down] = await m.failures();
    assert.deepEqual([down.provider, down.position], ['down', 0]);
    assert.equal(
      down.error.message,
      'cannot list clusters: kubeconfig provider "down": https://10.0.0.1:6443: connection refused',
    );
    assert.equal(down.error.kind, 'unreachable');
    assert.equal(up.name, 'up#a');
    // It is not a cluster: naming it gives its listing error, not a row to connect to.
    await assert.rejects(m.get('down'), (e: unknown) => e instanceof FleetError && e.kind === 'unreachable');
  });

  it('the current cluster is the current context of the one file provider', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-multi-'));
    await writeFile(join(d, 'kc.yaml'), kc(['one', 'two'], 'two'));
    const m = new MultiProvider([
      new FileProvider({ name: 'local', paths: [join(d, 'kc.yaml')] }),
      stub('secrets', ['a']),
    ]);
    assert.equal((await m.current()).name, `local#${join(d, 'kc.yaml')}+two`);
    assert.equal((await m.current('one')).name, `local#${join(d, 'kc.yaml')}+one`);
    await assert.rejects(
      new MultiProvider([stub('a', []), stub('b', [])]).current(),
      (e: unknown) => e instanceof UsageError,
    );
  });
});

describe('provider selection (flags and fleet configuration)', () => {
  async function project(config?: string) {
    const d = await mkdtemp(join(tmpdir(), 'fleet-registry-'));
    await mkdir(join(d, 'kube'));
    await writeFile(join(d, 'kube', 'a.kubeconfig'), kc(['a1', 'a2'], 'a1'));
    await writeFile(join(d, 'kube', 'b.kubeconfig'), kc(['b1']));
    // A working-directory fleet.yaml is read only when it says it is ours.
    if (config)
      await writeFile(join(d, 'fleet.yaml'), /^kind:/m.test(config) ? config : `kind: FleetConfig\n${config}`);
    const env = { HOME: join(d, 'home'), KUBECONFIG: join(d, 'kube', 'a.kubeconfig') };
    return { d, env, cwd: d };
  }
  const names = async (p: ClusterProvider) => (await p.list()).map((r) => r.name);

  it("no fleet configuration: kubectl's loading rules, as before", async () => {
    const { d, env, cwd } = await project();
    const p = await buildProvider({
      env,
      cwd,
      connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
    });
    assert.ok(p instanceof FileProvider);
    assert.deepEqual(await names(p), [
      `${join(d, 'kube', 'a.kubeconfig')}+a1`,
      `${join(d, 'kube', 'a.kubeconfig')}+a2`,
    ]);
  });

  it('a fleet configuration lists all its providers, prefixed when there are several', async () => {
    const { d, env, cwd } = await project(
      'providers:\n  - {name: a, type: file, kubeconfig: kube/a.kubeconfig}\n  - {name: b, type: file, kubeconfig: kube/b.kubeconfig}\n',
    );
    // Named, not found: a fleet.yaml fleet finds in the working directory may not name files (config-fleet-config.test.ts).
    const fleetConfig = join(cwd, 'fleet.yaml');
    const all = await buildProvider({
      env,
      cwd,
      fleetConfig,
      connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
    });
    assert.ok(all instanceof MultiProvider);
    assert.deepEqual(await names(all), [
      `a#${join(d, 'kube/a.kubeconfig')}+a1`,
      `a#${join(d, 'kube/a.kubeconfig')}+a2`,
      `b#${join(d, 'kube/b.kubeconfig')}+b1`,
    ]);
    assert.deepEqual(
      (await all.list()).map((r) => r.provider),
      ['a', 'a', 'b'],
    );
    // --provider: just that one, with its own (unprefixed) names.
    assert.deepEqual(
      await names(
        await buildProvider({
          env,
          cwd,
          connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
          fleetConfig,
          provider: 'b',
        }),
      ),
      [`${join(d, 'kube/b.kubeconfig')}+b1`],
    );
    // --provider with --kubeconfig: the provider's files replaced.
    assert.deepEqual(
      await names(
        await buildProvider({
          env,
          cwd,
          connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
          fleetConfig,
          provider: 'b',
          kubeconfig: [join(d, 'kube/a.kubeconfig')],
        }),
      ),
      [`${join(d, 'kube/a.kubeconfig')}+a1`, `${join(d, 'kube/a.kubeconfig')}+a2`],
    );
  });

  it('one provider in the configuration keeps its names unprefixed', async () => {
    const { d, env, cwd } = await project('providers:\n  - {type: file, kubeconfig: kube/b.kubeconfig}\n');
    assert.deepEqual(
      await names(
        await buildProvider({
          env,
          cwd,
          fleetConfig: join(cwd, 'fleet.yaml'),
          connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
        }),
      ),
      [`${join(d, 'kube/b.kubeconfig')}+b1`],
    );
  });

  it("--kubeconfig means kubectl's view: a fleet.yaml in the directory does not change it", async () => {
    const { d, env, cwd } = await project('providers:\n  - {type: kind}\n');
    const p = await buildProvider({
      env,
      cwd,
      connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
      kubeconfig: [join(d, 'kube/b.kubeconfig')],
    });
    assert.deepEqual(await names(p), [`${join(d, 'kube/b.kubeconfig')}+b1`]);
    await assert.rejects(
      buildProvider({
        env,
        cwd,
        connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
        kubeconfig: ['x'],
        fleetConfig: 'fleet.yaml',
      }),
      (e: unknown) => e instanceof UsageError,
    );
  });

  it('--provider names a configured provider or a type; anything else lists what exists', async () => {
    const { env, cwd } = await project('providers:\n  - {name: local, type: file}\n  - {name: lab, type: kind}\n');
    assert.equal(
      (
        await buildProvider({
          env,
          cwd,
          connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
          provider: 'kind',
        })
      ).name,
      'kind',
    );
    await assert.rejects(
      buildProvider({
        env,
        cwd,
        connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }),
        provider: 'capi',
      }),
      {
        message: `--provider: no provider "capi"; ${join(cwd, 'fleet.yaml')} names "local", "lab"; provider types: file, kubeconfig, cluster-api, cluster-inventory, namespace, kind, kcp, exec, argocd`,
      },
    );
  });

  it('a broken fleet configuration fails on first use, not before', async () => {
    const { env, cwd } = await project('providers: {}\n');
    const deferred = new DeferredProvider(() =>
      buildProvider({ env, cwd, connector: new Connector({ timeoutMs: 10_000, exec: new ExecCredentialRunner() }) }),
    );
    await assert.rejects(deferred.list(), {
      message: `${join(cwd, 'fleet.yaml')}: providers: must be a list, got a mapping`,
    });
  });

  it('hub settings: per provider over file-wide; a kubeconfig brings its own current-context', () => {
    assert.deepEqual(mergeHub({ kubeconfig: ['/h.yaml'], context: 'admin' }, { context: 'other' }), {
      kubeconfig: ['/h.yaml'],
      context: 'other',
    });
    assert.deepEqual(mergeHub({ kubeconfig: ['/h.yaml'], context: 'admin' }, { kubeconfig: ['/x.yaml'] }), {
      kubeconfig: ['/x.yaml'],
    });
    assert.deepEqual(mergeHub({ context: 'admin' }, {}), { context: 'admin' });
    assert.equal(mergeHub(undefined, undefined), undefined);
  });
});
