// Clusters that point at the same API server share its keep-alive connections (src/kube/agents.ts), against a real
// apiserver: many requests from many cluster entries open one connection, and a connection opened for a cluster that
// skips TLS verification is checked again before a cluster that verifies uses it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { connectionsOpened } from '../../src/kube/agents.js';
import { KubeClient } from '../../src/kube/client.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { loadControlPlane, tokenUser } from '../support/fixture.js';

const cp = loadControlPlane();

function context(name: string, server: string, cluster: Record<string, unknown>, token: string): ResolvedContext {
  return {
    contextName: name,
    clusterName: name,
    userName: name,
    cluster: { server, ...cluster },
    user: { token },
    contextFile: 'test',
    clusterFile: 'test',
  };
}

async function client(ctx: ResolvedContext): Promise<KubeClient> {
  return KubeClient.connect(ctx, { timeoutMs: 10_000, clusterName: ctx.contextName, exec: new ExecCredentialRunner() });
}

describe('connections shared per API server', () => {
  it('twenty requests from ten cluster entries on one server open one connection; another server opens its own', async () => {
    const member = cp.members[0];
    const ca = readFileSync(member.caFile).toString('base64');
    // A host spelling of its own ("localhost") so that no other test in this process has a pool for it already.
    const url = new URL(member.url);
    const server = `https://localhost:${url.port}`;
    const token = tokenUser(member, 'dave').token;
    const clients = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client(context(`c${i}`, server, { 'certificate-authority-data': ca, 'tls-server-name': '127.0.0.1' }, token)),
      ),
    );
    for (const c of clients) {
      for (let k = 0; k < 2; k++) {
        const res = await c.request('GET', '/version');
        assert.equal(res.status, 200);
        assert.equal(res.tlsAuthorized, true, 'a reused connection still reports its verification');
      }
    }
    assert.equal(connectionsOpened(new URL(server)), 1);
    const other = new URL(cp.members[1].url);
    const otherServer = `https://localhost:${other.port}`;
    const c2 = await client(
      context(
        'o',
        otherServer,
        { 'certificate-authority-data': ca, 'tls-server-name': '127.0.0.1' },
        tokenUser(cp.members[1], 'dave').token,
      ),
    );
    assert.equal((await c2.request('GET', '/version')).status, 200);
    assert.equal(connectionsOpened(new URL(otherServer)), 1);
  });

  it('a connection a skip-verify cluster opened does not let a verifying cluster past a CA that does not match', async () => {
    const hub = cp.hub;
    const url = new URL(hub.url);
    const server = `https://localhost:${url.port}`;
    // The client CA did not sign the serving certificate: verification fails for both, only the first ignores it.
    const wrongCa = readFileSync(cp.clientCa.certFile).toString('base64');
    const token = tokenUser(hub, 'dave').token;
    const skip = await client(
      context('skip', server, { 'certificate-authority-data': wrongCa, 'insecure-skip-tls-verify': true }, token),
    );
    const strict = await client(context('strict', server, { 'certificate-authority-data': wrongCa }, token));
    const first = await skip.request('GET', '/version');
    assert.equal(first.status, 200);
    assert.equal(first.tlsAuthorized, false);
    await assert.rejects(strict.request('GET', '/version'), (error: Error) =>
      /certificate|verify|issuer/i.test(error.message),
    );
    assert.equal(
      connectionsOpened(new URL(server)),
      1,
      'the verifying cluster was offered the kept-alive connection and refused it',
    );
  });
});
