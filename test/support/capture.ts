// Capture servers for issue 46 item 7: where hub data may point a credential, a listener on 127.0.0.x that poses as an
// API server and keeps everything it was sent. Each records, per request, the Authorization header, whether (and which)
// client certificate the TLS handshake presented, the path and the body; a CONNECT proxy records its CONNECT line and
// Proxy-Authorization and, instead of reaching the target asked for, tunnels every connection into one capture server
// (a proxy that terminates TLS: what the proxy-url attack did). What a capture answers is an API server's
// shape, as an attacker's would be: the SelfSubjectReview says a ServiceAccount with a cluster-wide grant (so code that
// believes it goes on to mint for it), reviews allow everything, anything else is 404.
import { X509Certificate, createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** One request a capture (or a capture proxy) received. */
export interface Captured {
  /** The capture's own name (which listener). */
  at: string;
  method: string;
  path: string;
  authorization?: string;
  /** The SHA-256 fingerprint (hex) of the client certificate the TLS handshake presented, if any. */
  clientCert?: string;
  body: string;
}

export interface Capture {
  name: string;
  /** host:port it listens on (host as bound: 127.0.0.1 or 127.0.0.2). */
  host: string;
  port: number;
  records: Captured[];
  close(): Promise<void>;
}

/** What a capture says it is: the ServiceAccount an attacker would claim (one with a real cluster-wide grant). */
export interface Pose {
  username: string;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** An API server's answers, as an attacker's server would give them to be believed. */
function poseAsApiServer(pose: Pose, req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
  const path = (req.url ?? '').split('?')[0];
  const user = { username: pose.username, groups: ['system:serviceaccounts', 'system:authenticated'] };
  if (path.endsWith('/selfsubjectreviews'))
    return json(res, 201, {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: {},
      status: { userInfo: user },
    });
  if (path.endsWith('/tokenreviews')) {
    let spec: unknown = {};
    try {
      spec = (JSON.parse(body) as { spec?: unknown }).spec ?? {};
    } catch {
      // not JSON: answered all the same
    }
    return json(res, 201, {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: {},
      spec,
      status: { authenticated: true, user },
    });
  }
  if (path.endsWith('/selfsubjectrulesreviews'))
    return json(res, 201, {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {},
      spec: {},
      status: {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      },
    });
  if (path.endsWith('/selfsubjectaccessreviews') || path.endsWith('/subjectaccessreviews'))
    return json(res, 201, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {},
      spec: {},
      status: { allowed: true },
    });
  if (path === '/version') return json(res, 200, { major: '1', minor: '34', gitVersion: 'v1.34.10' });
  if (path === '/api' || path === '/api/') return json(res, 200, { kind: 'APIVersions', versions: ['v1'] });
  if (path === '/apis' || path === '/apis/') return json(res, 200, { kind: 'APIGroupList', groups: [] });
  return json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
}

function fingerprint(der: Buffer | undefined): string | undefined {
  return der && der.length > 0 ? createHash('sha256').update(der).digest('hex') : undefined;
}

function closer(server: net.Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

function track(server: net.Server, event: string, sockets: Set<Socket>): void {
  server.on(event, (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
}

/**
 * An HTTPS capture with this certificate (or plain HTTP without one) on `host` (default 127.0.0.1). It asks every TLS
 * client for a certificate and accepts whatever comes (or nothing), so a client certificate fleet presents is recorded.
 */
export async function startCapture(o: {
  name: string;
  pose: Pose;
  tls?: { certFile: string; keyFile: string };
  host?: string;
}): Promise<Capture> {
  const records: Captured[] = [];
  const host = o.host ?? '127.0.0.1';
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const socket = req.socket as TLSSocket;
      const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
      records.push({
        at: o.name,
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        clientCert: fingerprint(peer && 'raw' in peer ? peer.raw : undefined),
        body,
      });
      poseAsApiServer(o.pose, req, body, res);
    });
  };
  const server = o.tls
    ? https.createServer(
        {
          cert: readFileSync(o.tls.certFile),
          key: readFileSync(o.tls.keyFile),
          requestCert: true,
          rejectUnauthorized: false,
        },
        handler,
      )
    : http.createServer(handler);
  const sockets = new Set<Socket>();
  track(server, o.tls ? 'secureConnection' : 'connection', sockets);
  server.on('tlsClientError', () => {});
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return { name: o.name, host, port, records, close: closer(server, sockets) };
}

/**
 * An HTTP CONNECT proxy that tunnels every CONNECT, whatever its target, into `into` (a capture): the TLS the client
 * speaks through it ends at the capture, which reads the requests in clear when the client accepts its certificate.
 * The CONNECT itself is recorded (its target as the path, its Proxy-Authorization).
 */
export async function startCaptureProxy(o: { name: string; into: Capture }): Promise<Capture> {
  const records: Captured[] = [];
  const sockets = new Set<Socket>();
  // A request sent to the proxy in absolute form (a plain http:// server through it) carries its headers and body in clear.
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      records.push({
        at: o.name,
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization ?? req.headers['proxy-authorization'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(405).end('CONNECT only\n');
    });
  });
  track(server, 'connection', sockets);
  server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    records.push({
      at: o.name,
      method: 'CONNECT',
      path: req.url ?? '',
      authorization: req.headers['proxy-authorization'],
      body: '',
    });
    const upstream = net.connect(o.into.port, o.into.host, () => {
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { name: o.name, host: '127.0.0.1', port, records, close: closer(server, sockets) };
}

/** The SHA-256 fingerprint (hex) of a PEM certificate file's DER, as a capture records a presented one. */
export function certFingerprint(certFile: string): string {
  return fingerprint(new X509Certificate(readFileSync(certFile)).raw)!;
}

/**
 * Verifies JWTs (RS256) against the ServiceAccount issuer keys of the control plane's servers: a captured token one of
 * them signed is a token minted on that server (a bound token, a legacy token), whether or not it still authenticates
 * (a token whose anchor fleet deleted after a failed verification is refused by the server but was sent all the same).
 */
export class IssuerKeys {
  private readonly keys: Array<{ server: string; key: ReturnType<typeof createPublicKey> }>;
  constructor(servers: Array<{ name: string; serviceAccountPublicKeyFile: string }>) {
    this.keys = servers.map((s) => ({
      server: s.name,
      key: createPublicKey(readFileSync(s.serviceAccountPublicKeyFile)),
    }));
  }

  /** The server whose key signed this JWT, or undefined (not a JWT, or signed by none of them). */
  signer(token: string): string | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const data = Buffer.from(`${parts[0]}.${parts[1]}`);
    const sig = Buffer.from(parts[2], 'base64url');
    for (const k of this.keys) {
      try {
        if (verifySignature('RSA-SHA256', data, k.key, sig)) return k.server;
      } catch {
        // not an RSA signature of this key
      }
    }
    return undefined;
  }
}

/** Every JWT-shaped string in a text (a body may carry a token: a TokenReview's spec.token, a Secret's data). */
export function jwtsIn(text: string): string[] {
  return text.match(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g) ?? [];
}
