import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { type PeerCertificate, checkServerIdentity, connect as tlsConnect } from 'node:tls';

import { requireNamedFile } from '../base/files.js';
import { ConfigError } from '../base/errors.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { decodeBase64 } from '../kubeconfig/readiness.js';
import { tlsDialTarget } from '../kubeconfig/server.js';
import type { ClusterEntry, UserEntry } from '../kubeconfig/types.js';

/**
 * Where a credential fleet mints, adopts, rotates or verifies for a cluster may go (docs/security.md, "Where a
 * credential goes"): that cluster's server, CA (or the system roots when its entry names none), TLS server name and
 * proxy, as the operator's own configuration holds them (the context the provider of the target cluster resolved,
 * approved by the trust policy). Never the cluster entry of the object being written: a hub Secret names a server,
 * but anyone who may write the Secret chose it.
 *
 * Only Connector.destination makes one (from a provider's cluster); the constructor needs a token this module keeps,
 * so nothing else can build one from a Secret's cluster entry. Connector.withCredential connects a credential that was
 * not read from the operator's configuration only through one.
 */
const MINT = Symbol('destination');

export class Destination {
  /** The cluster's name (for messages). */
  readonly name: string;
  /** The cluster entry as the operator's configuration holds it (files resolved and approved by the trust policy). */
  readonly cluster: Readonly<ClusterEntry>;
  /** The context it came from, minus its user (the origin and file names for messages and the trust policy). */
  readonly context: Readonly<Omit<ResolvedContext, 'user' | 'userName' | 'userFile'>>;

  constructor(token: symbol, name: string, context: ResolvedContext) {
    if (token !== MINT)
      throw new TypeError('a Destination is made only by Connector.destination (src/kube/connector.ts)');
    this.name = name;
    this.cluster = Object.freeze({ ...context.cluster });
    const { user: _user, userName: _userName, userFile: _userFile, ...rest } = context;
    this.context = Object.freeze({ ...rest, cluster: this.cluster });
    Object.freeze(this);
  }

  get server(): string {
    return this.cluster.server ?? '';
  }

  /** The context to connect `user` to this destination with: the cluster entry is this one's, whatever else. */
  contextFor(user: UserEntry): ResolvedContext {
    return { ...this.context, cluster: { ...this.cluster }, user: { ...user } };
  }
}

/** Made by the connector only (it passes its approved context): the one way to get a Destination. */
export function makeDestination(name: string, approved: ResolvedContext): Destination {
  return new Destination(MINT, name, approved);
}

/**
 * A credential fleet hands to a destination: inline data only (a token, a client certificate and its key). A file path,
 * an exec plugin or an auth provider in a user from a Secret would be something else to read or run. `userFiles`: the
 * credential is the user's own file (creds adopt --file), whose token and certificate files are the user's to name.
 */
export function credentialUser(user: UserEntry, what: string, userFiles = false): UserEntry {
  if (user.exec || user['auth-provider'])
    throw new ConfigError(`${what}: the credential is a plugin, not a credential fleet holds`);
  if (!userFiles && (user.tokenFile || user['client-certificate'] || user['client-key']))
    throw new ConfigError(
      `${what}: the credential names a file, not inline data; fleet connects only a token or a client certificate held as data`,
    );
  const out: UserEntry = {};
  for (const key of [
    'token',
    'tokenFile',
    'client-certificate-data',
    'client-key-data',
    'client-certificate',
    'client-key',
  ] as const)
    if (user[key]) out[key] = user[key];
  return out;
}

/** The CA certificates the destination trusts (PEM or DER bytes), or undefined for the system roots. */
export async function destinationCa(dest: Destination): Promise<Buffer | undefined> {
  const c = dest.cluster;
  if (c['certificate-authority-data'])
    return decodeBase64(c['certificate-authority-data'], 'certificate-authority-data');
  const file = c['certificate-authority'];
  return file ? requireNamedFile(file, `certificate-authority ${file}`) : undefined;
}

/**
 * Whether the server at `server` presents a certificate that verifies against the destination's CA for the name the
 * consumer will check (`tls-server-name`, else the URL's host): a TLS handshake only, nothing sent over it. Connects
 * directly (no proxy: no credential crosses it). Undefined when it verifies, else why not.
 */
export async function certificateVerifies(
  dest: Destination,
  server: string,
  tlsServerName: string | undefined,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<string | undefined> {
  signal?.throwIfAborted();
  const ca = await destinationCa(dest);
  if (!ca) return `${dest.name}'s entry names no CA (the system roots), so only the same URL is the same server`;
  const target = tlsDialTarget(server);
  if (!target) return `${server} is not an https URL fleet can check`;
  const servername = tlsServerName || target.servername;
  const pem = ca.includes('-----BEGIN') ? ca : Buffer.from(new X509Certificate(ca).toString());
  const ip = isIP(servername) !== 0;
  return new Promise((resolve, reject) => {
    // Node verifies the chain against `ca` and the name (servername, else host) as the HTTP client does.
    const socket = tlsConnect({
      host: target.host,
      port: target.port,
      // SNI carries host names only; an IP address is verified against the certificate's IP SANs.
      ...(ip ? {} : { servername }),
      ...(ip && servername !== target.host
        ? { checkServerIdentity: (_h: string, c: PeerCertificate) => checkServerIdentity(servername, c) }
        : {}),
      ca: pem,
      rejectUnauthorized: true,
      ALPNProtocols: ['http/1.1'],
    });
    // An interrupt ends the handshake at once (the reason, Interrupted, is what the caller throws), not after the
    // time limit: a Ctrl-C during a stalled check was honoured only 10 s later.
    const onAbort = () => {
      clearTimeout(timer);
      socket.destroy();
      reject(signal?.reason);
    };
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(`no TLS handshake with ${server} within ${timeoutMs / 1000}s`), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => done(undefined));
    socket.once('error', (e: Error) =>
      done(`its certificate does not verify against ${dest.name}'s CA for ${servername} (${e.message})`),
    );
  });
}
