// The Connector (src/kube/connector.ts): the one way fleet connects. Nothing here contacts a server: KubeClient.connect
// only reads the context, so what each client was given can be read back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { setWarningSink } from '../../src/base/warnings.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';

const ctx: ResolvedContext = {
  contextName: 'hub-context',
  clusterName: 'hub',
  cluster: { server: 'https://127.0.0.1:6443/base' },
  user: { token: 'connector-test-token' },
  contextFile: '/k',
  clusterFile: '/k',
};

describe('Connector', () => {
  const as = { user: 'jane', groups: ['dev'] };
  const connector = new Connector({ timeoutMs: 1000, exec: new ExecCredentialRunner() });

  it("connects a context and a provider's cluster, impersonating only when told", async () => {
    assert.equal((await connector.context(ctx, 'c')).impersonation, undefined);
    const ref = { name: 'member', resolve: async () => ctx };
    assert.deepEqual((await connector.with({ impersonate: as }).cluster(ref)).impersonation, as);
  });

  it('never impersonates on the hub, and rewrites the hub server only when asked (kcp)', async () => {
    const hub = await connector.with({ impersonate: as }).hubClient(ctx);
    assert.equal(hub.impersonation, undefined);
    assert.equal(hub.serverUrl, 'https://127.0.0.1:6443/base');
    const kcp = await connector.hubClient(ctx, (server) => new URL(server).origin);
    assert.equal(kcp.serverUrl, 'https://127.0.0.1:6443');
  });

  it('names the hub "hub <context>" and a cluster by its name in what it says', async () => {
    const said: string[] = [];
    setWarningSink((line) => said.push(line));
    await connector.hubClient({ ...ctx, cluster: { server: 'http://127.0.0.1:6441' } });
    await connector.context({ ...ctx, cluster: { server: 'http://127.0.0.1:6442' } }, 'member-1');
    assert.deepEqual(said, [
      'warning: cluster "hub hub-context": server http://127.0.0.1:6441 is plain http: the credential is sent in clear',
      'warning: cluster "member-1": server http://127.0.0.1:6442 is plain http: the credential is sent in clear',
    ]);
  });

  it('finds the hub by the one hub rule: a missing hub kubeconfig is named', async () => {
    await assert.rejects(
      connector.hub({ kubeconfig: ['/nonexistent/hub.kubeconfig'] }, { HOME: '/nonexistent' }),
      /\/nonexistent\/hub\.kubeconfig/,
    );
  });
});
