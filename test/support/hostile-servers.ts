// Small local HTTPS servers that misbehave as an API server (or something posing as one) can, for what the real
// control plane cannot be made to do: stream an endless body, nest JSON 200,000 deep, answer with the wrong shape,
// answer late, redirect, present a certificate for another host. Each listens on 127.0.0.1 (port 0), over HTTP/1.1
// only or HTTP/2 (with HTTP/1.1 allowed), records what it was asked, and close() ends it and every connection it holds.
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type KeyPair, makeCa, makeLeaf } from './pki.js';

/** A CA and a server certificate it signed, for the names given (default: 127.0.0.1 and localhost). */
export interface ServerPki {
  ca: KeyPair;
  server: KeyPair;
  /** The CA certificate's PEM, base64 (certificate-authority-data). */
  caData: string;
}

export async function serverPki(
  names: { ips?: string[]; dnsNames?: string[] } = { ips: ['127.0.0.1'], dnsNames: ['localhost'] },
): Promise<ServerPki> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-hostile-'));
  const ca = await makeCa(dir, 'ca', 'hostile-ca');
  const server = await makeLeaf({ ca, dir, base: 'server', cn: 'hostile', usage: 'server', ...names });
  return { ca, server, caData: readFileSync(ca.certFile).toString('base64') };
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** Answers one request. Over HTTP/2 `res` is Node's compatibility response, which has the same API (typed as HTTP/1.1's). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface HostileServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * An HTTPS server with `handler`. `protocol: 'h2'` serves HTTP/2 (what fleet picks by ALPN), 'http/1.1' offers no ALPN
 * so the client talks HTTP/1.1.
 */
export async function hostileServer(
  pki: ServerPki,
  handler: Handler,
  protocol: 'h2' | 'http/1.1' = 'h2',
): Promise<HostileServer> {
  const tls = { cert: readFileSync(pki.server.certFile), key: readFileSync(pki.server.keyFile) };
  const requests: SeenRequest[] = [];
  const wrapped = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    // Consume the request body before answering, as an API server would.
    req.resume();
    req.on('end', () => handler(req as http.IncomingMessage, res as http.ServerResponse));
  };
  const server =
    protocol === 'h2'
      ? http2.createSecureServer({ ...tls, allowHTTP1: true }, wrapped)
      : https.createServer(tls, wrapped);
  const sockets = new Set<Socket>();
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  server.on('sessionError', () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What an endlessBody handler has written, and how many of its answers the client ended (closed before the end). */
export interface Streamed {
  bytes: number;
  closedEarly: number;
}

/**
 * Writes `chunkBytes` at a time, forever (or up to `totalBytes`), as fast as the client reads: a 2 GB answer. With
 * `contentLength`, it declares totalBytes first.
 */
export function endlessBody(
  o: { totalBytes?: number; chunkBytes?: number; contentLength?: boolean } = {},
): Handler & { sent: Streamed } {
  const sent: Streamed = { bytes: 0, closedEarly: 0 };
  const chunk = Buffer.alloc(o.chunkBytes ?? 64 * 1024, 'a');
  chunk.write('{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"');
  const handler: Handler = (_req, res) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.contentLength && o.totalBytes) headers['content-length'] = String(o.totalBytes);
    res.writeHead(200, headers);
    let closed = false;
    let ended = false;
    res.on('close', () => {
      closed = true;
      if (!ended) sent.closedEarly++;
    });
    const pump = () => {
      while (!closed && (o.totalBytes === undefined || sent.bytes < o.totalBytes)) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!closed) {
        ended = true;
        res.end();
      }
    };
    pump();
  };
  return Object.assign(handler, { sent });
}

/** Answers `body` (a string, written as is, or an object as JSON) with `status`, after `delayMs` when given. */
export function answer(
  body: unknown,
  o: { status?: number; delayMs?: number; headers?: Record<string, string> } = {},
): Handler {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return (_req, res) => {
    const send = () => {
      res.writeHead(o.status ?? 200, { 'content-type': 'application/json', ...o.headers });
      res.end(text);
    };
    if (o.delayMs) setTimeout(send, o.delayMs);
    else send();
  };
}

/** A JSON text nesting `depth` arrays (`[[[...]]]`) or objects (`{"a":{"a":...}}`) around `inner`. */
export function nestedJson(depth: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array'
    ? '['.repeat(depth) + inner + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

/** A SelfSubjectReview answer (v1) for `status`, which may be any JSON text. */
export function selfSubjectReviewText(statusJson: string): string {
  return `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{},"status":${statusJson}}`;
}

/** A well-formed SelfSubjectReview answer for `username`. */
export function selfSubjectReview(username: string, groups: string[] = ['system:authenticated']): unknown {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: {},
    status: { userInfo: { username, groups } },
  };
}
