// Servers that hold a client forever at one stage of an exchange, for the time limits (--request-timeout,
// --cluster-timeout): a real API server cannot be made to hang on demand. Each accepts connections on 127.0.0.1 and
// never finishes; close() ends them and every connection they hold.
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

import { makeCa, makeLeaf } from './pki.js';

export interface StallServer {
  url: string;
  close(): Promise<void>;
}

function track(server: net.Server): StallServer & { sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  return {
    sockets,
    url: '',
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function listen(server: net.Server, scheme: string): Promise<StallServer> {
  const t = track(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`, close: t.close };
}

/** Accepts TCP and never says a word: a client waits in its TLS handshake (https) or for response headers (http). */
export function blackhole(): Promise<StallServer> {
  return listen(
    net.createServer(() => {}),
    'https',
  );
}

let pair: { cert: Buffer; key: Buffer } | undefined;
async function serverPair(): Promise<{ cert: Buffer; key: Buffer }> {
  if (!pair) {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-stall-'));
    const ca = await makeCa(dir, 'ca', 'stall-ca');
    const leaf = await makeLeaf({ ca, dir, base: 'server', cn: 'stall', usage: 'server', ips: ['127.0.0.1'] });
    pair = { cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) };
  }
  return pair;
}

/** Completes the TLS handshake, reads the request, never answers: the client waits for response headers. */
export async function silentTls(): Promise<StallServer> {
  return listen(
    https.createServer(await serverPair(), () => {}),
    'https',
  );
}

/** Sends 200 and the headers, then a few bytes of body and nothing more: the client waits for the rest of the body. */
export async function stalledBody(): Promise<StallServer> {
  return listen(
    https.createServer(await serverPair(), (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"kind":');
    }),
    'https',
  );
}

/** The same over plain http (headers, then a stalled body). */
export function stalledBodyHttp(): Promise<StallServer> {
  return listen(
    http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"kind":');
    }),
    'http',
  );
}
