// A TLS-terminating proxy in front of a real API server (the hub, or kcp) for the provider conformance suite. It records
// every request it forwards (path, query, whether the answer was a List), and, when told, makes the hub go away in the
// middle of a list: the chosen request's answer is forwarded up to half of its body, then the connection is destroyed
// and the proxy stops listening, so every later request, retries included, is refused. Every byte a client receives is
// the real server's. Credentials must be bearer tokens (a client certificate ends at the proxy).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer, request } from 'node:https';
import type { Socket } from 'node:net';

import { makeCa, makeLeaf } from './pki.js';
import { scratchDir, uniqueName } from './fixture.js';

export interface ProxiedRequest {
  method: string;
  path: string;
  /** The query string without `?` ('' when none). */
  query: string;
  /** The upstream status; undefined when the request was cut or failed. */
  status?: number;
  /** The answer was a Kubernetes List (`kind` ending in `List`, with `items`). */
  list?: boolean;
  /** How many items the List held. */
  items?: number;
}

export interface HubProxy {
  url: string;
  caFile: string;
  /** Every request, in the order they arrived. */
  requests: ProxiedRequest[];
  /** The request whose answer was cut, once one was. */
  cut?: ProxiedRequest;
  close(): Promise<void>;
}

export interface HubProxyOptions {
  /** The request to cut mid-answer (the first one it matches); the proxy is gone from then on. */
  cutWhen?: (r: ProxiedRequest) => boolean;
}

export async function startHubProxy(
  upstream: { url: string; caFile: string },
  options: HubProxyOptions = {},
): Promise<HubProxy> {
  const dir = scratchDir();
  const ca = await makeCa(dir, uniqueName('hub-proxy-ca'), 'conformance-hub-proxy-ca');
  const leaf = await makeLeaf({
    ca,
    dir,
    base: uniqueName('hub-proxy'),
    cn: '127.0.0.1',
    usage: 'server',
    ips: ['127.0.0.1'],
  });
  const upstreamCa = readFileSync(upstream.caFile);
  const sockets = new Set<Socket>();
  const proxy: HubProxy = {
    url: '',
    caFile: ca.certFile,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };

  const goAway = (res: ServerResponse) => {
    // The hub goes away: this connection, every other one, and the listener.
    res.socket?.destroy();
    for (const s of sockets) s.destroy();
    if (server.listening) server.close();
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const [path, query = ''] = (req.url ?? '/').split('?');
    const record: ProxiedRequest = { method: req.method ?? 'GET', path, query };
    proxy.requests.push(record);
    const cut = !proxy.cut && options.cutWhen?.(record) === true;
    if (cut) proxy.cut = record;
    const target = new URL(req.url ?? '/', upstream.url);
    // Plain bodies, so that the proxy can read the List it forwards.
    const headers = { ...req.headers, host: target.host };
    delete headers['accept-encoding'];
    const out = request(target, { method: req.method, headers, ca: upstreamCa }, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => {
        const body = Buffer.concat(chunks);
        record.status = up.statusCode;
        try {
          const parsed = JSON.parse(body.toString('utf8')) as { kind?: unknown; items?: unknown };
          if (typeof parsed.kind === 'string' && parsed.kind.endsWith('List') && Array.isArray(parsed.items)) {
            record.list = true;
            record.items = parsed.items.length;
          }
        } catch {
          // not JSON: recorded without a kind
        }
        const head = { ...up.headers };
        if (!cut) {
          res.writeHead(up.statusCode ?? 502, head);
          res.end(body);
          return;
        }
        // The answer as the hub sent it, up to half of its body, then nothing: the length the headers promise (or the
        // chunked encoding's end) never comes.
        record.status = undefined;
        delete head['content-length'];
        res.writeHead(up.statusCode ?? 502, head);
        res.write(body.subarray(0, Math.max(1, Math.floor(body.length / 2))), () => goAway(res));
      });
    });
    out.on('error', (e) => res.writeHead(502).end(e.message));
    req.pipe(out);
  };

  const server: Server = createServer(
    { cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) },
    (req, res) => {
      if (proxy.cut) {
        // Gone: nothing more is answered (the listener is closing; a connection already open is dropped).
        req.socket.destroy();
        return;
      }
      handle(req, res);
    },
  );
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  return proxy;
}
