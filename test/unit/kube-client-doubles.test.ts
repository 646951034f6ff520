// KubeClient against small local HTTP doubles, for what a real API server cannot be made to do on demand: answer 429
// with Retry-After, answer 200 with the wrong kind, or not speak TLS at all.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { after, before, describe, it } from 'node:test';

import { accessReview } from '../../src/access/access-review.js';
import { setWarningSink } from '../../src/base/warnings.js';
import { KubeClient } from '../../src/kube/client.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { classifyOpenSslError } from '../../src/kube/errors.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import type { UserEntry } from '../../src/kubeconfig/types.js';
import { fleetFailure } from '../support/failure.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
let server: http.Server;
let port: number;
let hits = 0;
const warnings: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  setWarningSink((line) => warnings.push(line));
});
after(() => server.close());

function ctx(scheme: 'http' | 'https', user: UserEntry = { token: 'tok-double-aaaaaaaa' }): ResolvedContext {
  return {
    contextName: 'c',
    clusterName: 'double',
    userName: 'u',
    cluster: { server: `${scheme}://127.0.0.1:${port}`, 'insecure-skip-tls-verify': scheme === 'https' },
    user,
    contextFile: '/k',
    clusterFile: '/k',
  };
}

const connect = (scheme: 'http' | 'https', timeoutMs = 10_000, user?: UserEntry) =>
  KubeClient.connect(ctx(scheme, user), { timeoutMs, clusterName: 'double', exec: new ExecCredentialRunner() });

const failure = fleetFailure;

describe('KubeClient against HTTP doubles', () => {
  it('an http server is allowed, with a warning that the credential goes in clear', async () => {
    handler = (_req, res) => res.end('{"gitVersion":"v1.34.0"}');
    const client = await connect('http');
    const res = await client.request('GET', '/version');
    assert.equal(res.status, 200);
    assert.deepEqual(warnings, [
      `warning: cluster "double": server http://127.0.0.1:${port} is plain http: the credential is sent in clear`,
    ]);
  });

  it('429 with Retry-After is retried after the wait the server names', async () => {
    hits = 0;
    handler = (_req, res) => {
      if (hits <= 2) {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
        res.end('{"kind":"Status","message":"too many requests"}');
      } else res.end('{"ok":true}');
    };
    const client = await connect('http');
    const started = Date.now();
    const res = await client.request('GET', '/api');
    assert.equal(res.status, 200);
    assert.equal(hits, 3);
    assert.ok(Date.now() - started >= 1900, `retried after ${Date.now() - started} ms, not the 2 s asked for`);
  });

  it('a Retry-After beyond the request time limit is not waited for: the 429 is the answer', async () => {
    hits = 0;
    handler = (_req, res) => {
      res.writeHead(429, { 'retry-after': '30' });
      res.end('{"kind":"Status","message":"slow down"}');
    };
    const client = await connect('http', 2000);
    const started = Date.now();
    const error = await failure(client.json('GET', '/api'));
    assert.equal(hits, 1);
    assert.ok(Date.now() - started < 1500);
    assert.equal(error.kind, 'server');
    assert.equal(error.message, 'GET /api: slow down');
  });

  it('a 200 that is not the review asked for is an error, never an answer', async () => {
    handler = (_req, res) => res.end('{"kind":"Foo","status":{"allowed":true}}');
    const client = await connect('http');
    const error = await failure(
      accessReview(client, { resource: { namespace: 'default', verb: 'get', group: '', resource: 'pods' } }),
    );
    assert.equal(error.kind, 'server');
    assert.equal(
      error.message,
      'create selfsubjectaccessreviews.authorization.k8s.io: the server answered 200 with a Foo, not a SelfSubjectAccessReview',
    );
  });

  it('a server that does not speak TLS is one plain line', async () => {
    handler = (_req, res) => res.end('hello');
    const client = await connect('https');
    const error = await failure(client.request('GET', '/version'));
    assert.equal(error.kind, 'tls');
    assert.equal(
      error.message,
      `https://127.0.0.1:${port}: this port speaks plain HTTP, not HTTPS (it answered the TLS handshake in HTTP)`,
    );
  });

  it('a tokenFile is read once per client, and again after a minute as client-go reads it (a rotated projected token)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-tokenfile-'));
    const file = join(dir, 'token');
    await writeFile(file, 'tok-file-first-aaaaaaaa\n');
    const seen: string[] = [];
    handler = (req, res) => {
      seen.push(String(req.headers.authorization));
      res.end('{}');
    };
    const client = await connect('http', 10_000, { tokenFile: file });
    await client.request('GET', '/a');
    await writeFile(file, 'tok-file-second-bbbbbbbb\n');
    await client.request('GET', '/b');
    // A minute later by the client's clock (performance.now), the file is read again.
    const now = performance.now.bind(performance);
    performance.now = () => now() + 61_000;
    try {
      await client.request('GET', '/c');
    } finally {
      performance.now = now;
    }
    assert.deepEqual(seen, [
      'Bearer tok-file-first-aaaaaaaa',
      'Bearer tok-file-first-aaaaaaaa',
      'Bearer tok-file-second-bbbbbbbb',
    ]);
    // A new client (the next command) reads it at once.
    seen.length = 0;
    await (await connect('http', 10_000, { tokenFile: file })).request('GET', '/d');
    assert.deepEqual(seen, ['Bearer tok-file-second-bbbbbbbb']);
  });
});

describe('TLS configuration errors are config errors in plain words', () => {
  let dir: string;
  const pair = (name: string) => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, `${name}.key`),
        '-out',
        join(dir, `${name}.crt`),
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
      ],
      { stdio: 'ignore' },
    );
    return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  };

  it('a key that does not match its certificate, and what OpenSSL says when it meets one', async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-tls-config-'));
    const a = pair('a');
    const b = pair('b');
    const client = await connect('https', 10_000, { 'client-certificate': a.cert, 'client-key': b.key });
    const error = await failure(client.request('GET', '/version'));
    assert.deepEqual([error.kind, error.message], ['config', 'user "u": client-key does not match client-certificate']);

    let openssl: unknown;
    try {
      createSecureContext({ cert: await readFile(a.cert), key: await readFile(b.key) });
    } catch (e) {
      openssl = e;
    }
    const classified = classifyOpenSslError(openssl, 'cluster "x"');
    assert.deepEqual(
      [classified.kind, classified.message],
      ['config', 'cluster "x": client-key does not match client-certificate'],
    );
  });

  it("json: the statuses that answer, a 404 that is absent, and httpError's classified error for anything else", async () => {
    handler = (req, res) => {
      const status = Number(req.url?.slice(1));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        status === 299
          ? 'not json'
          : status >= 400
            ? `{"kind":"Status","message":"said ${status}"}`
            : `{"status":${status}}`,
      );
    };
    const client = await connect('http');
    assert.deepEqual(await client.json('GET', '/201', undefined, 'get it'), { status: 201 });
    assert.deepEqual(await client.json('GET', '/201', undefined, 'get it', { ok: [200, 201] }), { status: 201 });
    assert.equal(await client.json('GET', '/404', undefined, 'get it', { absent: true }), undefined);
    const notOk = await failure(client.json('GET', '/201', undefined, 'get it', { ok: [200] }));
    assert.equal(notOk.kind, 'server');
    assert.equal(notOk.message, 'get it: {"status":201}');
    const missing = await failure(client.json('GET', '/404', undefined, 'get it'));
    assert.deepEqual([missing.kind, missing.message], ['not-found', 'get it: said 404']);
    const refused = await failure(client.json('GET', '/403', undefined, 'get it', { absent: true }));
    assert.deepEqual([refused.kind, refused.message], ['forbidden', 'get it: said 403']);
    const garbled = await failure(client.json('GET', '/299', undefined, 'get it'));
    assert.deepEqual([garbled.kind, garbled.message], ['server', 'get it: the answer is not JSON']);
  });
});

describe('failure kinds', () => {
  it('every kind fleet can print is one the README lists', async () => {
    const { ERROR_KINDS } = await import('../../src/base/errors.js');
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const sentence = /Failure kinds:([^.]*(?:\([^)]*\)[^.]*)*)\./.exec(readme.replace(/\n/g, ' '));
    assert.ok(sentence, 'README names the failure kinds');
    const listed = [...sentence[1].replace(/\([^)]*\)/g, '').matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    assert.deepEqual([...listed].sort(), [...ERROR_KINDS].sort());
  });
});
