import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ConfigError, FleetError } from '../../src/base/errors.js';
import { KindProvider, parseKindClusters } from '../../src/providers/kind.js';

// kind needs a container runtime, which this machine does not have: a script stands in for the kind CLI and answers
// `kind get clusters` / `kind get kubeconfig --name N` from files, so that what fleet does with the output is tested.
const FAKE_KIND = fileURLToPath(new URL('../fixtures/providers/fake-kind', import.meta.url));

const kubeconfig = (name: string, port: number) => `apiVersion: v1
kind: Config
clusters:
- name: kind-${name}
  cluster: {server: https://127.0.0.1:${port}, certificate-authority-data: Zml4dHVyZS1jYQ==}
users:
- name: kind-${name}
  user: {token: fixture-kind-token-${name}}
contexts:
- name: kind-${name}
  context: {cluster: kind-${name}, user: kind-${name}}
current-context: kind-${name}
`;

async function fakeKind(clusters: Record<string, string | null>): Promise<NodeJS.ProcessEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-kind-'));
  await writeFile(
    join(dir, 'clusters'),
    Object.keys(clusters)
      .map((c) => c + '\n')
      .join(''),
  );
  for (const [name, text] of Object.entries(clusters))
    if (text !== null) await writeFile(join(dir, `${name}.kubeconfig`), text);
  return { ...process.env, PATH: `${FAKE_KIND}:${process.env.PATH}`, FAKE_KIND_DIR: dir };
}

describe('kind provider (kind CLI stand-in)', () => {
  it('parses kind get clusters', () => {
    assert.deepEqual(parseKindClusters('dev\nprod\n\n'), ['dev', 'prod']);
    assert.deepEqual(parseKindClusters('No kind clusters found.\n'), []);
  });

  it('names clusters as kind does and reaches each through kind get kubeconfig', async () => {
    const env = await fakeKind({
      dev: kubeconfig('dev', 40001),
      'dev-2': kubeconfig('dev-2', 40002),
      prod: kubeconfig('prod', 40003),
    });
    const refs = await new KindProvider('kind', { env }).list();
    assert.deepEqual(
      refs.map((r) => [r.name, r.server, r.auth, r.ready, r.source.context]),
      [
        ['dev', 'https://127.0.0.1:40001', 'token', true, 'kind-dev'],
        ['dev-2', 'https://127.0.0.1:40002', 'token', true, 'kind-dev-2'],
        ['prod', 'https://127.0.0.1:40003', 'token', true, 'kind-prod'],
      ],
    );
    assert.equal((await refs[0].resolve()).contextName, 'kind-dev');
    // The prefix only filters; names stay whole.
    assert.deepEqual(
      (await new KindProvider('kind', { env, prefix: 'dev' }).list()).map((r) => r.name),
      ['dev', 'dev-2'],
    );
  });

  it("a cluster kind cannot give a kubeconfig for is listed, not ready, with kind's own message", async () => {
    const env = await fakeKind({ ok: kubeconfig('ok', 40004), broken: null });
    const [ok, broken] = await new KindProvider('kind', { env }).list();
    assert.equal(ok.ready, true);
    assert.equal(broken.name, 'broken');
    assert.equal(broken.ready, false);
    assert.equal(
      broken.reason,
      "kind get kubeconfig --name broken exited with 1: ERROR: could not locate any control plane nodes for cluster named 'broken'",
    );
  });

  it('no kind on PATH is a clear configuration error', async () => {
    const p = new KindProvider('local-kind', { env: { ...process.env, PATH: '/nonexistent' } });
    await assert.rejects(p.list(), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        'kind provider "local-kind": the "kind" command was not found on PATH; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or set "command" for this provider in the fleet config',
      );
      return true;
    });
  });

  it('kind failing to list is a plugin error with its message', async () => {
    const env = { ...(await fakeKind({})), FAKE_KIND_DIR: '' };
    await assert.rejects(new KindProvider('kind', { env }).list(), (error: unknown) => {
      assert.ok(error instanceof FleetError && error.kind === 'plugin');
      assert.match(
        error.message,
        /^kind provider "kind": kind get clusters exited with 1: .*FAKE_KIND_DIR is not set$/,
      );
      return true;
    });
  });
});
