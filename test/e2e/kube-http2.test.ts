// HTTP/2 to API servers (src/kube/h2.ts), against the real apiserver and against small local servers that behave as a
// load balancer in front of one might: one that speaks only HTTP/1.1, one that closes its connection after each answer
// with GOAWAY. Also: DISABLE_HTTP2 turns it off as in client-go, client certificates never share a connection, and a
// fleet command over many clusters on one server opens one connection to it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { connectionsOpened } from '../../src/kube/agents.js';
import { KubeClient } from '../../src/kube/client.js';
import { CONFIG_MAP, NAMESPACE } from '../../src/kube/resources.js';
import { createObject, deleteObject, listVersioned, watchSince } from '../../src/kube/typed.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { createCertUser, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';
import { makeCa, makeLeaf } from '../support/pki.js';

const cp = loadControlPlane();
const hub = cp.servers.find((s) => s.role === 'hub')!;

function context(
  name: string,
  server: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
): ResolvedContext {
  return {
    contextName: name,
    clusterName: name,
    userName: name,
    cluster: { server, ...cluster },
    user,
    contextFile: 'test',
    clusterFile: 'test',
  };
}

const client = (ctx: ResolvedContext) =>
  KubeClient.connect(ctx, { timeoutMs: 10_000, clusterName: ctx.contextName, exec: new ExecCredentialRunner() });

/** A spelling of the hub's URL no other test in this process uses, so that its connection count starts at 0. */
function freshSpelling(host: string): string {
  return `https://${host}:${new URL(hub.url).port}`;
}

describe('HTTP/2 to API servers', () => {
  let ca: { certFile: string; keyFile: string };
  let serverPair: { certFile: string; keyFile: string };
  const servers: Array<{ close: () => void }> = [];

  before(async () => {
    const dir = join(scratchDir(), uniqueName('h2'));
    spawnSync('mkdir', ['-p', dir]);
    ca = await makeCa(dir, 'ca', 'fleet-h2-test-ca');
    serverPair = await makeLeaf({
      ca,
      dir,
      base: 'server',
      cn: 'localhost',
      usage: 'server',
      ips: ['127.0.0.1'],
      dnsNames: ['localhost'],
    });
  });
  after(() => {
    for (const s of servers) s.close();
  });

  /** Starts a local test server on a free port of 127.0.0.1 (closed after the suite) and returns its https URL. */
  async function listen(srv: https.Server | http2.Http2SecureServer): Promise<string> {
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    servers.push(srv);
    return `https://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  }
  const trustTestCa = () => ({ 'certificate-authority-data': readFileSync(ca.certFile).toString('base64') });

  it('the apiserver answers over HTTP/2 on one connection for concurrent requests of many cluster entries; DISABLE_HTTP2 gives HTTP/1.1', async () => {
    const server = freshSpelling('localhost');
    const caData = readFileSync(hub.caFile).toString('base64');
    const token = tokenUser(hub, 'alice').token;
    const clients = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client(
          context(
            `h2-${i}`,
            server,
            { 'certificate-authority-data': caData, 'tls-server-name': '127.0.0.1' },
            { token },
          ),
        ),
      ),
    );
    const answers = await Promise.all(
      clients.flatMap((c) => [c.request('GET', '/version'), c.request('GET', '/version')]),
    );
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.protocol, 'h2');
      assert.equal(a.tlsAuthorized, true);
      assert.match(a.body, /gitVersion/);
    }
    assert.equal(connectionsOpened(new URL(server)), 1);

    process.env.DISABLE_HTTP2 = '1';
    try {
      const plain = await client(
        context('h1', freshSpelling('127.0.0.1'), { 'certificate-authority-data': caData }, { token }),
      );
      const res = await plain.request('GET', '/version');
      assert.equal(res.status, 200);
      assert.equal(res.protocol, 'http/1.1');
    } finally {
      delete process.env.DISABLE_HTTP2;
    }
  });

  it('client certificates never share a connection; bearer tokens on the same server do', async () => {
    const server = freshSpelling('127.0.0.1');
    const opened = connectionsOpened(new URL(server));
    const caData = readFileSync(hub.caFile).toString('base64');
    const [u1, u2] = await Promise.all([
      createCertUser(hub, { user: uniqueName('h2-cert-a') }),
      createCertUser(hub, { user: uniqueName('h2-cert-b') }),
    ]);
    const tls = { 'certificate-authority-data': caData, 'tls-server-name': '127.0.0.1' };
    const a = await client(
      context('cert-a', server, tls, { 'client-certificate': u1.certFile, 'client-key': u1.keyFile }),
    );
    const b = await client(
      context('cert-b', server, tls, { 'client-certificate': u2.certFile, 'client-key': u2.keyFile }),
    );
    const who = async (c: KubeClient) =>
      JSON.parse(
        (
          await c.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'SelfSubjectReview',
          })
        ).body,
      ).status.userInfo.username;
    assert.match(await who(a), /h2-cert-a/);
    assert.match(await who(b), /h2-cert-b/);
    assert.match(await who(a), /h2-cert-a/);
    assert.equal(connectionsOpened(new URL(server)) - opened, 2, 'each certificate its own connection');
  });

  it('a server that speaks only HTTP/1.1 (ALPN) is answered over HTTP/1.1, and remembered', async () => {
    const srv = https.createServer(
      { cert: readFileSync(serverPair.certFile), key: readFileSync(serverPair.keyFile), ALPNProtocols: ['http/1.1'] },
      (req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ kind: 'Status', path: req.url, version: req.httpVersion }));
      },
    );
    const server = await listen(srv);
    const c = await client(context('h1-only', server, trustTestCa(), { token: 'not-a-real-token-h1' }));
    for (let i = 0; i < 3; i++) {
      const res = await c.request('GET', `/version-${i}`);
      assert.equal(res.status, 200);
      assert.equal(res.protocol, 'http/1.1');
      assert.deepEqual(JSON.parse(res.body), { kind: 'Status', path: `/version-${i}`, version: '1.1' });
      assert.equal(res.tlsAuthorized, true);
    }
    // One handshake that offered h2 and got HTTP/1.1, then one kept-alive HTTP/1.1 connection for all three requests.
    assert.equal(connectionsOpened(new URL(server)), 2);
  });

  it('a server that sends GOAWAY after every answer: the next request opens a new connection and succeeds', async () => {
    const srv = http2.createSecureServer({
      cert: readFileSync(serverPair.certFile),
      key: readFileSync(serverPair.keyFile),
    });
    srv.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ kind: 'Status', path: headers[':path'] }));
      stream.session?.goaway();
    });
    const server = await listen(srv);
    const c = await client(context('goaway', server, trustTestCa(), { token: 'not-a-real-token-goaway' }));
    for (let i = 0; i < 4; i++) {
      const res = await c.request('GET', `/x-${i}`);
      assert.equal(res.status, 200);
      assert.equal(res.protocol, 'h2');
      assert.equal(JSON.parse(res.body).path, `/x-${i}`);
    }
    assert.ok(connectionsOpened(new URL(server)) >= 2, `connections: ${connectionsOpened(new URL(server))}`);
  });

  it('a stream the server ends before it answers (an API server going away mid-request) is a connection reset, not "HTTP 0"', async () => {
    const srv = http2.createSecureServer({
      cert: readFileSync(serverPair.certFile),
      key: readFileSync(serverPair.keyFile),
    });
    // RST_STREAM with NO_ERROR and no headers: Node's client stream ends ('end') without a response.
    srv.on('stream', (stream) => stream.close(http2.constants.NGHTTP2_NO_ERROR));
    const server = await listen(srv);
    const c = await client(context('ended', server, trustTestCa(), { token: 'not-a-real-token-ended' }));
    await assert.rejects(c.request('GET', '/api/v1/namespaces/x/leases/y'), (e: Error & { kind?: string }) => {
      assert.equal(e.kind, 'unreachable');
      assert.equal(e.message, `${server}: connection reset`);
      return true;
    });
  });

  it('a server whose certificate does not match the CA fails over HTTP/2 as over HTTP/1.1: TLS verification, one line', async () => {
    const srv = http2.createSecureServer(
      { cert: readFileSync(serverPair.certFile), key: readFileSync(serverPair.keyFile) },
      (_req, res) => res.end('{}'),
    );
    const server = await listen(srv);
    const wrong = readFileSync(hub.caFile).toString('base64');
    const c = await client(
      context('wrong-ca', server, { 'certificate-authority-data': wrong }, { token: 'not-a-real-token-wrong' }),
    );
    await assert.rejects(c.request('GET', '/version'), (error: Error & { kind?: string }) => {
      assert.equal(error.kind, 'tls');
      assert.match(error.message, /TLS verification failed/);
      assert.ok(!error.message.includes('\n'));
      return true;
    });
    const skip = await client(
      context('skip', server, { 'insecure-skip-tls-verify': true }, { token: 'not-a-real-token-skip' }),
    );
    const res = await skip.request('GET', '/version');
    assert.equal(res.status, 200);
    assert.equal(res.tlsAuthorized, false);
  });

  it('a request whose time limit passes mid-answer fails with the timeout, and the connection serves the next request', async () => {
    let slow = true;
    const srv = http2.createSecureServer({
      cert: readFileSync(serverPair.certFile),
      key: readFileSync(serverPair.keyFile),
    });
    srv.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      if (slow) {
        stream.write('{"kind":');
        slow = false;
        return; // never finished
      }
      stream.end('{"kind":"Status"}');
    });
    const server = await listen(srv);
    const ctx = context('slow', server, trustTestCa(), { token: 'not-a-real-token-slow' });
    const c = await KubeClient.connect(ctx, { timeoutMs: 500, clusterName: 'slow', exec: new ExecCredentialRunner() });
    const t0 = performance.now();
    await assert.rejects(c.request('GET', '/a'), (error: Error & { kind?: string }) => error.kind === 'timeout');
    assert.ok(performance.now() - t0 < 3000);
    const res = await c.request('GET', '/b');
    assert.equal(res.status, 200);
    assert.equal(connectionsOpened(new URL(server)), 1);
  });

  // A watch's backlog comes at once, then the server waits for news until its timeoutSeconds: watchSince takes the
  // pause as the end (quietMs), cancels the stream, and drops a line the pause cut in two (the next watch replays it).
  const ADDED = (name: string, rv: string) =>
    JSON.stringify({ type: 'ADDED', object: { metadata: { namespace: 'w', name, resourceVersion: rv } } }) + '\n';

  it(
    'a watch ends at the pause after its backlog, over HTTP/2: the events that came, the cut line dropped, the stream cancelled',
    { timeout: 20_000 },
    async () => {
      let cancelled!: () => void;
      const closed = new Promise<void>((r) => (cancelled = r));
      const srv = http2.createSecureServer({
        cert: readFileSync(serverPair.certFile),
        key: readFileSync(serverPair.keyFile),
      });
      srv.on('stream', (stream, headers) => {
        assert.match(String(headers[':path']), /watch=1.*resourceVersion=7/);
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.write(ADDED('a', '8') + ADDED('b', '9') + '{"type":"ADDED","obj');
        stream.on('close', cancelled); // the server never ends it: a 300 s watch
      });
      const server = await listen(srv);
      const c = await client(context('watch-h2', server, trustTestCa(), { token: 'not-a-real-token-watch' }));
      const got = await watchSince<{ metadata: { name: string } }>(c, CONFIG_MAP, {
        namespace: 'w',
        resourceVersion: '7',
        timeoutSeconds: 300,
      });
      assert.deepEqual(
        got.events.map((e) => [e.type, e.object.metadata.name]),
        [
          ['ADDED', 'a'],
          ['ADDED', 'b'],
        ],
      );
      assert.equal(got.gone, false);
      await closed;
    },
  );

  it(
    'a watch ends at the pause after its backlog over HTTP/1.1 too; a 410 is still "gone"',
    { timeout: 20_000 },
    async () => {
      const srv = https.createServer(
        { cert: readFileSync(serverPair.certFile), key: readFileSync(serverPair.keyFile) },
        (req, res) => {
          if (req.url!.includes('resourceVersion=1&')) {
            res.writeHead(410, { 'content-type': 'application/json' });
            return res.end('{"kind":"Status","code":410,"reason":"Expired"}');
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(ADDED('c', '12'));
        },
      );
      const server = await listen(srv);
      process.env.DISABLE_HTTP2 = '1';
      try {
        const c = await client(context('watch-h1', server, trustTestCa(), { token: 'not-a-real-token-watch1' }));
        const got = await watchSince<{ metadata: { name: string } }>(c, CONFIG_MAP, {
          namespace: 'w',
          resourceVersion: '11',
          timeoutSeconds: 300,
        });
        assert.deepEqual(
          got.events.map((e) => e.object.metadata.name),
          ['c'],
        );
        const old = await watchSince(c, CONFIG_MAP, { namespace: 'w', resourceVersion: '1', timeoutSeconds: 300 });
        assert.deepEqual(old, { events: [], gone: true });
      } finally {
        delete process.env.DISABLE_HTTP2;
      }
    },
  );

  it(
    'the apiserver replays the changes since a list at once: a watch of 60 s answers with them without waiting it out',
    { timeout: 20_000 },
    async () => {
      const ctx = {
        contextName: 'hub-admin',
        clusterName: 'hub',
        userName: 'admin',
        cluster: { server: hub.url, 'certificate-authority': hub.caFile },
        user: { 'client-certificate': cp.admin.certFile, 'client-key': cp.admin.keyFile },
        contextFile: 'test',
        clusterFile: 'test',
      } as unknown as ResolvedContext;
      const c = await client(ctx);
      const ns = uniqueName('watch-replay');
      await createObject(c, NAMESPACE, { metadata: { name: ns } });
      try {
        const listed = await listVersioned(c, CONFIG_MAP, { namespace: ns });
        for (const name of ['one', 'two', 'three'])
          await createObject(c, CONFIG_MAP, { metadata: { name, namespace: ns }, data: { k: name } });
        await deleteObject(c, CONFIG_MAP, 'two', { namespace: ns });
        const t0 = performance.now();
        const got = await watchSince<{ metadata: { name: string } }>(c, CONFIG_MAP, {
          namespace: ns,
          resourceVersion: listed.resourceVersion,
          timeoutSeconds: 60,
        });
        const ms = performance.now() - t0;
        assert.deepEqual(
          got.events.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object.metadata.name]),
          [
            ['ADDED', 'one'],
            ['ADDED', 'two'],
            ['ADDED', 'three'],
            ['DELETED', 'two'],
          ],
        );
        // Not a timing goal: the server would have held this watch for a minute (the test's own limit is 20 s).
        assert.ok(ms < 20_000, `${ms} ms`);
      } finally {
        await deleteObject(c, NAMESPACE, ns);
      }
    },
  );
});
