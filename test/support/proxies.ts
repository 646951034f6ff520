// Real proxies for tests, started in the test process: an HTTP CONNECT proxy (plain or behind TLS) and a SOCKS5 proxy
// (no authentication, CONNECT only, RFC 1928). They tunnel bytes to the real control plane and count the tunnels they
// opened, so a test can show that fleet went through the proxy and not around it.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';

export interface RunningProxy {
  url: string;
  /** Targets ("host:port") of the tunnels opened so far. */
  tunnels: string[];
  close(): Promise<void>;
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function closer(server: net.Server, sockets: Set<net.Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** An HTTP proxy that only tunnels (CONNECT), as an https server needs; with `tls`, the proxy itself speaks TLS. */
export async function startConnectProxy(
  options: { tls?: { certFile: string; keyFile: string } } = {},
): Promise<RunningProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<net.Socket>();
  const refuse = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(405).end('CONNECT only\n');
  };
  const server = options.tls
    ? https.createServer({ cert: readFileSync(options.tls.certFile), key: readFileSync(options.tls.keyFile) }, refuse)
    : http.createServer(refuse);
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    const m = /^(.+):(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    tunnels.push(target);
    const upstream = net.connect(Number(m[2]), m[1].replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const port = await listen(server);
  return { url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`, tunnels, close: closer(server, sockets) };
}

/** A SOCKS5 proxy: no authentication, CONNECT to IPv4, IPv6 or a domain name. */
export async function startSocks5Proxy(): Promise<RunningProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'open' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting') {
        if (buf.length < 2 || buf.length < 2 + buf[1]) return;
        if (buf[0] !== 5) return client.destroy();
        buf = buf.subarray(2 + buf[1]);
        client.write(Buffer.from([5, 0])); // no authentication
        stage = 'request';
      }
      if (stage === 'request') {
        if (buf.length < 5) return;
        const atyp = buf[3];
        const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? 1 + buf[4] : -1;
        if (addrLen < 0 || buf[1] !== 1) {
          client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0])); // command not supported
          return;
        }
        if (buf.length < 4 + addrLen + 2) return;
        const addr = buf.subarray(4, 4 + addrLen);
        const host =
          atyp === 1
            ? [...addr].join('.')
            : atyp === 3
              ? addr.subarray(1).toString()
              : (addr.toString('hex').match(/.{4}/g) ?? []).join(':');
        const port = buf.readUInt16BE(4 + addrLen);
        const rest = buf.subarray(4 + addrLen + 2);
        stage = 'open';
        client.off('data', onData);
        tunnels.push(`${host}:${port}`);
        const upstream = net.connect(port, host, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          if (rest.length > 0) upstream.write(rest);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
      }
    };
    client.on('data', onData);
  });
  const port = await listen(server);
  return { url: `socks5://127.0.0.1:${port}`, tunnels, close: closer(server, sockets) };
}
