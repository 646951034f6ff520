import { createHash } from 'node:crypto';
import http2, { type ClientHttp2Session } from 'node:http2';
import { isIP } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';

import { countConnection } from './agents.js';

/**
 * HTTP/2 to API servers, as client-go speaks it: one connection per API server and TLS identity, every request a stream
 * on it. Over a thousand clusters on a few servers this is a third less CPU than HTTP/1.1's pool of connections (Node's
 * http client machinery per request, a TLS record and a write per request; measured in docs/decisions.md), and it is
 * what the client-go reference in bench/ does.
 *
 * The connection is opened here with ALPN offering h2 and http/1.1: a server (or a load balancer in front of it) that
 * picks http/1.1 is remembered, and its requests go through the HTTP/1.1 path as before. `DISABLE_HTTP2` (any value)
 * turns HTTP/2 off, as it does in client-go. Proxies (proxy-url) and plain-http servers always use HTTP/1.1.
 *
 * Credentials carried in TLS (a client certificate) are part of a session's key, so they never share a connection;
 * bearer tokens travel per request and may, as they do in client-go (one transport per TLS configuration). The server's
 * certificate is checked by the caller on every request (KubeClient.checkTls), also on a session another cluster opened.
 */
export interface TlsIdentity {
  ca?: Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** tls-server-name, when the kubeconfig sets one. */
  servername?: string;
}

export const http2Disabled = () => Boolean(process.env.DISABLE_HTTP2);

interface Entry {
  /** Settles once the TLS handshake is done: a session, or 'http1' when the server did not choose h2. */
  ready: Promise<ClientHttp2Session | 'http1'>;
  socket?: TLSSocket;
  session?: ClientHttp2Session;
  /** Requests waiting for the handshake: the last one to give up closes the attempt. */
  waiting: number;
}

const sessions = new Map<string, Entry>();
// Origins (with their TLS identity) whose server answered ALPN with http/1.1, or had no ALPN: HTTP/1.1 from then on.
const http1Only = new Set<string>();

const digests = new WeakMap<object, string>();
function digest(value: string | Buffer | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return createHash('sha256').update(value).digest('hex').slice(0, 32);
  let d = digests.get(value);
  if (!d) digests.set(value, (d = createHash('sha256').update(value).digest('hex').slice(0, 32)));
  return d;
}

/** The key of a connection: where it goes and the TLS material that shapes it (hashed; the key is never shown). */
export function sessionKey(server: URL, id: TlsIdentity): string {
  return `${server.origin}|${id.servername ?? ''}|${digest(id.ca)}|${digest(id.cert)}|${digest(id.key)}`;
}

export function prefersHttp1(key: string): boolean {
  return http1Only.has(key);
}

/** The session for a key when it is open and usable now (no promise to wait on); undefined otherwise. */
export function established(key: string): ClientHttp2Session | undefined {
  const s = sessions.get(key)?.session;
  return s && !s.closed && !s.destroyed ? s : undefined;
}

/**
 * The open (or opening) session for a key, opening one when there is none. Resolves to 'http1' when the server chose
 * HTTP/1.1. A connection or handshake failure rejects with Node's own error (classified by the caller as for HTTP/1.1).
 * `giveUp` lets a caller whose time limit passed during the handshake abandon it: the attempt is then closed and
 * forgotten, so the next request tries again (as an HTTP/1.1 request would open a new connection).
 */
export function session(
  server: URL,
  id: TlsIdentity,
  key: string,
): { ready: Promise<ClientHttp2Session | 'http1'>; giveUp: (reason: Error) => void } {
  let entry = sessions.get(key);
  if (!entry || entry.session?.closed || entry.session?.destroyed) {
    entry = open(server, id, key);
    sessions.set(key, entry);
  }
  const e = entry;
  e.waiting++;
  let waiting = true;
  void e.ready.then(
    () => {
      if (waiting) e.waiting--;
      waiting = false;
    },
    () => undefined,
  );
  return {
    ready: e.ready,
    giveUp: (reason) => {
      if (!waiting || e.session) return;
      waiting = false;
      if (--e.waiting > 0) return;
      if (sessions.get(key) === e) sessions.delete(key);
      e.socket?.destroy(reason);
    },
  };
}

function open(server: URL, id: TlsIdentity, key: string): Entry {
  const host = server.hostname.replace(/^\[|\]$/g, '');
  const entry = { waiting: 0 } as Entry;
  entry.ready = new Promise((resolve, reject) => {
    let socket: TLSSocket;
    try {
      socket = tls.connect({
        host,
        port: Number(server.port || 443),
        // As Node's https does: SNI is the host name unless it is an IP address, or the kubeconfig's tls-server-name.
        servername: id.servername || (isIP(host) ? undefined : host),
        ca: id.ca,
        cert: id.cert,
        key: id.key,
        ALPNProtocols: ['h2', 'http/1.1'],
        // Verified by the caller on every request, so that the outcome can be reported even when it is skipped.
        rejectUnauthorized: false,
      });
    } catch (error) {
      sessions.delete(key);
      reject(error);
      return;
    }
    countConnection(server);
    entry.socket = socket;
    const failed = (error: Error) => {
      if (sessions.get(key) === entry) sessions.delete(key);
      reject(error);
    };
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      socket.off('error', failed);
      if (socket.alpnProtocol !== 'h2') {
        http1Only.add(key);
        if (sessions.get(key) === entry) sessions.delete(key);
        socket.destroy();
        resolve('http1');
        return;
      }
      const s = http2.connect(server.origin, { createConnection: () => socket });
      entry.session = s;
      s.unref();
      const forget = () => {
        if (sessions.get(key) === entry) sessions.delete(key);
      };
      // A session that ends (the server's GOAWAY, an idle close, a reset) is forgotten; streams on it fail on their own.
      s.on('goaway', forget);
      s.on('close', forget);
      s.on('error', forget);
      resolve(s);
    });
  });
  // A rejection nobody awaits any more (every request gave up) must not end the process.
  entry.ready.catch(() => undefined);
  return entry;
}

const activeStreams = new WeakMap<ClientHttp2Session, number>();

/** While a stream is in flight its session holds the process open, as an HTTP/1.1 socket in use does. */
export function streamStarted(s: ClientHttp2Session): void {
  const n = activeStreams.get(s) ?? 0;
  activeStreams.set(s, n + 1);
  if (n === 0) s.ref();
}

export function streamEnded(s: ClientHttp2Session): void {
  const n = (activeStreams.get(s) ?? 1) - 1;
  activeStreams.set(s, n);
  if (n <= 0 && !s.destroyed) s.unref();
}
