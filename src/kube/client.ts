import { X509Certificate, createPrivateKey } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { type TLSSocket, checkServerIdentity } from 'node:tls';

import { fileError, requireNamedFile } from '../base/files.js';
import { ConfigError, FleetError } from '../base/errors.js';
import { formatDuration } from '../base/duration.js';
import { nestedDeeperThan } from '../base/json.js';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_JSON_DEPTH, MAX_RESPONSE_BYTES_ENV } from '../base/limits.js';
import { bearerToken } from '../kubeconfig/credentials.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { decodeBase64, proxyUrl, serverUrl } from '../kubeconfig/readiness.js';
import { maskUrlCredentials, registerSecret, registerUrlSecrets, registerUserSecrets } from '../kubeconfig/redact.js';
import { warnOnce } from '../base/warnings.js';
import { agentFor } from './agents.js';
import {
  type TlsIdentity,
  established,
  http2Disabled,
  prefersHttp1,
  session as h2session,
  sessionKey,
  streamEnded,
  streamStarted,
} from './h2.js';
import { classifyOpenSslError, classifyTransportError, httpError, nameMismatch, parseStatus } from './errors.js';
import type { ExecCredential, ExecCredentialRunner } from './exec-credential.js';
import type { ApprovedExec } from '../kubeconfig/trust.js';
import { proxyAgent } from './proxy.js';
import { type RequestLog, logExchange } from './request-log.js';
import { retryDelayMs } from './retry.js';

/**
 * One cluster's connection: TLS trust, credentials (certificate, token, basic, exec plugin, impersonation), a time limit
 * per request, and failures classified into fleet's error kinds. fleet speaks HTTP itself instead of through
 * @kubernetes/client-node so that every failure can be classified, exec plugins behave like client-go, responses stay
 * lossless, and commands that only list clusters do not pay for importing the client library.
 */
export interface KubeResponse {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  elapsedMs: number;
  /** Whether the server's certificate chain verified against the configured trust (also measured when verification is skipped). */
  tlsAuthorized: boolean;
  tlsError?: string;
  /** The HTTP version the answer came in: HTTP/2 to an https server reached directly (src/kube/h2.ts), else HTTP/1.1. */
  protocol: 'h2' | 'http/1.1';
}

/**
 * kubectl's --as, --as-group, --as-uid: every request of a client carries Impersonate-User, Impersonate-Group (one
 * header per group) and Impersonate-Uid, whatever credential authenticates it (token, certificate, exec plugin). The
 * server authorizes the caller to impersonate, then handles the request as that identity.
 */
export interface Impersonation {
  user: string;
  groups: string[];
  uid?: string;
}

/** How an identity asked about is written in messages: `user "u"`, with its groups and uid when given. */
export function describeImpersonation(as: Impersonation): string {
  const parts = [`user "${as.user}"`];
  if (as.groups.length > 0)
    parts.push(`group${as.groups.length === 1 ? '' : 's'} ${as.groups.map((g) => `"${g}"`).join(', ')}`);
  if (as.uid) parts.push(`uid "${as.uid}"`);
  return parts.join(' with ');
}

export interface ClientOptions {
  timeoutMs: number;
  /** Names the cluster in error messages. */
  clusterName: string;
  /** The command's one exec credential runner (its cache and its one-run-per-credential rule are per command). */
  exec: ExecCredentialRunner;
  /**
   * The context's exec plugin as the trust policy approved it (TrustPolicy.approve): the only way a client runs one. A
   * context with an exec user and no approved plugin fails at its first request, before anything runs.
   */
  plugin?: ApprovedExec;
  /** Ends every request of this client (the fleet runner aborts a cluster's work when its time limit passes). */
  signal?: AbortSignal;
  /** kubectl-style request logging (-v 6 and up); nothing is logged without it. */
  log?: RequestLog;
  /** Act as another identity (--as): replaces the kubeconfig user's own `as`, as kubectl's flags do. */
  impersonate?: Impersonation;
  /**
   * The command reports skipped TLS verification itself (clusters inspect's TLS row, clusters verify's tls-verified
   * check): no warning about insecure-skip-tls-verify from the client then.
   */
  reportsSkippedTls?: boolean;
}

export interface RequestOptions {
  accept?: string;
  /** The body is always sent as JSON; server-side apply reads it as `application/apply-patch+yaml` (JSON is YAML). */
  contentType?: string;
  /**
   * A streamed answer (a watch) is complete once nothing more arrived for this long after a 2xx status: what came is
   * the answer, and the stream is cancelled. A watch's backlog comes at once, then the server waits for news; without
   * this the caller waits for the server's own end (timeoutSeconds, at least a second).
   */
  quietMs?: number;
}

/** What KubeClient.json accepts as the answer besides the request's own options. */
export interface ExpectOptions extends RequestOptions {
  /** The statuses that are the answer (default: any 2xx). */
  ok?: readonly number[];
  /** A 404 is an answer too: json returns undefined instead of throwing a not-found error. */
  absent?: boolean;
}

/** client-go's file token source reads a tokenFile again after a minute: a projected token the kubelet rotates is picked up. */
const TOKEN_FILE_REREAD_MS = 60_000;

interface Credentials {
  /** A list is sent as one header line per value (Impersonate-Group). */
  headers: Record<string, string | string[]>;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The exec plugin's credential behind these headers, so a 401 can say which one the server rejected. */
  exec?: ExecCredential;
}

async function fileOrData(
  file: string | undefined,
  data: string | undefined,
  what: string,
): Promise<Buffer | undefined> {
  if (data) {
    try {
      return decodeBase64(data, `${what}-data`);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }
  return file ? requireNamedFile(file, `${what} ${file}`) : undefined;
}

/** A key that does not belong to its certificate fails deep in OpenSSL; say it plainly before any request. */
function checkKeyPair(cert: string | Buffer, key: string | Buffer, user: string): void {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`user "${user}": client-certificate is not a valid PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`user "${user}": client-key is not a valid PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new ConfigError(`user "${user}": client-key does not match client-certificate`);
}

/**
 * A header value as the UTF-8 bytes Go's client sends: Node writes header strings one byte per character (latin1), so
 * `--as Jürgen` reached the server as `J\ufffdrgen`. The string handed to Node holds one character per UTF-8 byte.
 */
function utf8Header(value: string): string {
  return /^[\x00-\x7f]*$/.test(value) ? value : Buffer.from(value, 'utf8').toString('latin1');
}

export class KubeClient {
  private constructor(
    readonly context: ResolvedContext,
    private readonly options: ClientOptions,
    private readonly server: URL,
    private readonly ca: Buffer | undefined,
    /** Set when the cluster names a proxy-url: every request tunnels through it. */
    private readonly agent: http.Agent | undefined,
  ) {
    this.target = this.exchangeTarget();
  }

  /** The exec plugin this client runs, as approved (for the checks that read its cached credential). */
  get plugin(): ApprovedExec | undefined {
    return this.options.plugin;
  }

  private presented?: string | Buffer;
  /** What every request of this client shares, worked out once (see Exchange). */
  private readonly target: ExchangeTarget;

  /** The client certificate sent with the latest request (the kubeconfig's or an exec plugin's), if any. */
  get presentedCertificate(): string | Buffer | undefined {
    return this.presented;
  }

  static async connect(context: ResolvedContext, options: ClientOptions): Promise<KubeClient> {
    const where = `cluster "${options.clusterName}"`;
    const server = context.cluster.server;
    // A password or token in the server URL is a credential like any other: never printed, even inside a Node message.
    registerUrlSecrets(server);
    if (!server) throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}" has no server`);
    let url: URL;
    try {
      url = serverUrl(server);
    } catch (error) {
      throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}": ${(error as Error).message}`);
    }
    // client-go talks to an http server too; the credential then crosses the network in clear, which deserves a word.
    // The URL is shown without userinfo or query, which may hold credentials (registered above by registerUrlSecrets).
    if (url.protocol === 'http:')
      warnOnce(
        `${where}: server ${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')} is plain http: the credential is sent in clear`,
      );
    // Read here, once per process, so that a bad value is a configuration error before any request is sent.
    maxResponseBytes();
    const ca = await fileOrData(
      context.cluster['certificate-authority'],
      context.cluster['certificate-authority-data'],
      'certificate-authority',
    );
    let agent: http.Agent | undefined;
    const proxy = context.cluster['proxy-url'];
    if (proxy) {
      let proxyTarget: URL;
      try {
        proxyTarget = proxyUrl(proxy);
      } catch (error) {
        throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}": ${(error as Error).message}`);
      }
      agent = await proxyAgent(proxyTarget, url, {
        ca,
        insecure: context.cluster['insecure-skip-tls-verify'] === true,
      });
    }
    return new KubeClient(context, options, url, ca, agent);
  }

  /** The identity this client acts as (--as), if any: the server answers for it, not for the credential. */
  get impersonation(): Impersonation | undefined {
    return this.options.impersonate;
  }

  /** The server as it may be shown: a password or token-like query value in the URL is masked. */
  get serverUrl(): string {
    return maskUrlCredentials(this.context.cluster.server!);
  }

  /** The proxy-url as it may be shown: a user and password in it are masked. */
  get proxyShown(): string | undefined {
    const proxy = this.context.cluster['proxy-url'];
    return proxy ? maskUrlCredentials(proxy) : undefined;
  }

  /** The credentials of a user without an exec plugin, read once (a tokenFile again after a minute, as client-go does). */
  private fixed?: { credentials: Promise<Credentials>; at: number };

  private credentials(rejected?: ExecCredential): Promise<Credentials> {
    const user = this.context.user;
    if (user.exec) return this.readCredentials(rejected);
    // Not per request: registering the user's secrets, decoding certificate data and checking a key pair (an X509 parse)
    // are the same for every request of the client.
    const now = performance.now();
    if (!this.fixed || (user.tokenFile !== undefined && now - this.fixed.at > TOKEN_FILE_REREAD_MS))
      this.fixed = { credentials: this.readCredentials(), at: now };
    return this.fixed.credentials;
  }

  private async readCredentials(rejected?: ExecCredential): Promise<Credentials> {
    const user = this.context.user;
    // Whatever this user holds inline is scrubbed from output before any of it is sent.
    registerUserSecrets(user);
    const headers: Record<string, string | string[]> = {};
    let cert: string | Buffer | undefined;
    let key: string | Buffer | undefined;
    let cred: ExecCredential | undefined;
    if (user.exec) {
      const plugin = this.options.plugin;
      if (!plugin || plugin.exec !== user.exec)
        throw new FleetError(
          'plugin',
          `exec plugin ${user.exec.command ?? ''}: not approved by the trust policy (connect through the Connector)`,
        );
      cred = await this.options.exec.get(plugin, this.context.cluster, { rejected, signal: this.options.signal });
      if (cred.token) headers.authorization = `Bearer ${cred.token}`;
      if (cred.clientCertificateData) {
        cert = cred.clientCertificateData;
        key = cred.clientKeyData;
      }
    } else if (user['auth-provider']) {
      const cfg = user['auth-provider'].config ?? {};
      const token = cfg['id-token'] || cfg['access-token'];
      if (!token) {
        throw new FleetError(
          'plugin',
          `auth-provider "${user['auth-provider'].name}" is not supported; use an exec plugin`,
        );
      }
      headers.authorization = `Bearer ${token}`;
    }
    if (!cert) {
      cert = await fileOrData(user['client-certificate'], user['client-certificate-data'], 'client-certificate');
      key = await fileOrData(user['client-key'], user['client-key-data'], 'client-key');
      if (Boolean(cert) !== Boolean(key)) {
        throw new ConfigError(`user "${this.context.userName}": a client certificate needs both certificate and key`);
      }
      if (cert && key) checkKeyPair(cert, key, this.context.userName ?? '');
    }
    this.presented = cert;
    if (!headers.authorization) {
      const token = await bearerToken(user).catch((error) => {
        throw fileError(`tokenFile ${user.tokenFile}`, error);
      });
      if (token) headers.authorization = `Bearer ${token}`;
      else if (user.username && user.password) {
        // The password is registered with the user's other secrets above.
        const basic = Buffer.from(`${user.username}:${user.password}`).toString('base64');
        // The encoded form too: a server that echoes the header back must not print the password in base64.
        registerSecret(basic);
        headers.authorization = `Basic ${basic}`;
      }
    }
    const as = this.options.impersonate;
    if (as) {
      headers['impersonate-user'] = utf8Header(as.user);
      if (as.groups.length > 0) headers['impersonate-group'] = as.groups.map(utf8Header);
      if (as.uid) headers['impersonate-uid'] = utf8Header(as.uid);
    } else if (user.as) headers['impersonate-user'] = utf8Header(user.as);
    return { headers, cert, key, exec: cred };
  }

  /** One HTTP exchange. Transport failures throw classified errors; any HTTP status is returned. */
  async request(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<KubeResponse> {
    let creds = await this.credentials();
    // One deadline for the request and its retries, as client-go's request timeout covers them all.
    const deadline = this.options.timeoutMs > 0 ? performance.now() + this.options.timeoutMs : Infinity;
    let response = await this.once(method, path, body, options, creds, deadline);
    // Like client-go: an exec credential the server rejects is refreshed once (shared with concurrent requests), so a
    // server that answers 401 to everything runs the plugin at most twice per request. Retries below use the new one.
    if (response.status === 401 && creds.exec) {
      creds = await this.credentials(creds.exec);
      response = await this.once(method, path, body, options, creds, deadline);
    }
    // Like client-go: a 429 (or 5xx) with Retry-After is retried after that wait, up to 10 times, within the time limits.
    for (let retries = 0; retries < 10; retries++) {
      const wait = retryDelayMs(response.status, response.headers['retry-after']);
      if (wait === undefined || performance.now() + wait >= deadline) break;
      await sleep(wait, this.options.signal);
      response = await this.once(method, path, body, options, creds, deadline);
    }
    if (response.status === 403 && creds.headers['impersonate-user'] !== undefined)
      response = this.refusedImpersonation(response);
    return response;
  }

  /**
   * The API server checks impersonation before anything else: a 403 saying "cannot impersonate" is about the caller,
   * not the identity asked about, and must not read as that identity's "no". Its Status message is reworded to say so
   * (every caller's error then names it), and the response is otherwise returned as it came, so what it proves about
   * the connection (reached, TLS verified) is kept. Any other 403 is left as it is.
   */
  private refusedImpersonation(response: KubeResponse): KubeResponse {
    const status = parseStatus(response.body);
    if (!status || !/cannot impersonate/.test(status.message ?? '')) return response;
    const as = this.options.impersonate ?? { user: String(this.context.user.as), groups: [] };
    const message = `the caller may not impersonate ${describeImpersonation(as)}: ${status.message}`;
    return { ...response, body: JSON.stringify({ ...status, message }) };
  }

  private once(
    method: string,
    path: string,
    body: unknown,
    options: RequestOptions,
    creds: Credentials,
    deadline = Infinity,
  ): Promise<KubeResponse> {
    const x = new Exchange(this.target, method, path, body, options, creds, deadline);
    x.start();
    return x.promise;
  }

  private exchangeTarget(): ExchangeTarget {
    const server = this.server;
    const servername = this.context.cluster['tls-server-name'] || undefined;
    const t: ExchangeTarget = {
      server,
      base: server.pathname.replace(/\/$/, ''),
      secure: server.protocol === 'https:',
      insecure: this.context.cluster['insecure-skip-tls-verify'] === true,
      ca: this.ca,
      agent: this.agent,
      servername,
      checkedName: servername || server.hostname,
      // DISABLE_HTTP2 is read once per client: reading the environment per request was 1% of a thousand-cluster verify.
      h2: server.protocol === 'https:' && !this.agent && !http2Disabled(),
      log: this.options.log,
      insecureWarning: this.insecureWarning(),
      maxBytes: maxResponseBytes(),
      tooLarge: () =>
        new FleetError(
          'server',
          `${this.serverUrl}: response larger than ${formatBytes(maxResponseBytes())} (${MAX_RESPONSE_BYTES_ENV})`,
        ),
      tooDeep: () =>
        new FleetError('server', `${this.serverUrl}: response nested deeper than ${MAX_JSON_DEPTH} levels`),
      inFlight: new Set(),
      classify: (reason) => classifyTransportError(reason, this.serverUrl, this.agent ? this.proxyShown : undefined),
      timeoutError: () => this.timeoutError(),
      refusedTls: (error) => classifyOpenSslError(error, `cluster "${this.options.clusterName}"`),
    };
    // The run's signal ends every request in flight: one listener for the client, not one per request (an
    // AbortSignal listener added and removed per request was measurable over a thousand clusters).
    const signal = this.options.signal;
    if (signal?.aborted) t.aborted = { reason: signal.reason };
    else
      signal?.addEventListener(
        'abort',
        () => {
          t.aborted = { reason: signal.reason };
          for (const x of t.inFlight) x.stop(signal.reason);
        },
        { once: true },
      );
    return t;
  }

  /**
   * Skipped verification with a credential is the same exposure as plain http, to whoever answers at that address: said
   * once per cluster, when a handshake completes and the credential goes out (Exchange.checkTls). Commands that report
   * the TLS outcome themselves (clusters inspect's TLS row, verify's tls-verified check) say it there instead.
   */
  private insecureWarning(): string | undefined {
    const { cluster, user } = this.context;
    if (
      cluster['insecure-skip-tls-verify'] !== true ||
      this.options.reportsSkippedTls ||
      this.server.protocol !== 'https:' ||
      !sendsCredential(user)
    )
      return undefined;
    return `cluster "${this.options.clusterName}": insecure-skip-tls-verify is set: the server's certificate is not checked, and the credential is sent to whoever answers`;
  }

  /** What a request that outlived --request-timeout fails with: the server and the limit as the user gave it. */
  private timeoutError(): FleetError {
    return new FleetError(
      'timeout',
      `${this.serverUrl}: no answer within ${formatDuration(this.options.timeoutMs)} (--request-timeout)`,
    );
  }

  /**
   * The one "expect this answer, else classify the error": sends a request and parses the JSON answer. A status in
   * `ok` (default: any 2xx) is the answer; with `absent`, a 404 returns undefined; any other status throws httpError's
   * classified error, `<what>: <the server's message>`.
   */
  async json<T>(
    method: string,
    path: string,
    body: unknown,
    what: string,
    options: ExpectOptions & { absent: true },
  ): Promise<T | undefined>;
  async json<T>(method: string, path: string, body?: unknown, what?: string, options?: ExpectOptions): Promise<T>;
  async json<T>(
    method: string,
    path: string,
    body?: unknown,
    what = `${method} ${path}`,
    options: ExpectOptions = {},
  ): Promise<T | undefined> {
    const res = await this.request(method, path, body, options);
    if (options.absent && res.status === 404) return undefined;
    if (options.ok ? !options.ok.includes(res.status) : res.status < 200 || res.status >= 300)
      throw httpError(res.status, res.body, what);
    try {
      return JSON.parse(res.body) as T;
    } catch {
      throw new FleetError('server', `${what}: the answer is not JSON`);
    }
  }
}

/**
 * Node reports an aborted request as a generic AbortError; the reason it was aborted (the request timeout's
 * TimeoutError, or the fleet runner's own error) is what classifies it.
 */
function abortReason(error: unknown): unknown {
  const e = error as { name?: string; cause?: unknown };
  return e?.name === 'AbortError' && e.cause !== undefined ? e.cause : error;
}

/** Through a proxy agent the socket may arrive with its handshake already done; otherwise wait for it. */
function whenSecure(socket: TLSSocket, fn: () => void): void {
  if ((socket as TLSSocket & { _secureEstablished?: boolean })._secureEstablished) fn();
  else socket.once('secureConnect', fn);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// A kept-alive socket carries many requests; its certificate is read and checked once per host name, not per request.
const nameChecks = new WeakMap<TLSSocket, Map<string, Error | undefined>>();

function checkServerName(socket: TLSSocket, host: string): Error | undefined {
  let checks = nameChecks.get(socket);
  if (!checks) nameChecks.set(socket, (checks = new Map<string, Error | undefined>()));
  if (checks.has(host)) return checks.get(host);
  const cert = socket.getPeerCertificate();
  const result =
    !cert || Object.keys(cert).length === 0
      ? undefined
      : (checkServerIdentity(host.replace(/^\[|\]$/g, ''), cert) ?? undefined);
  checks.set(host, result);
  return result;
}

/** What the requests of one client share (KubeClient.exchangeTarget): where they go, how, and how failures are worded. */
interface ExchangeTarget {
  server: URL;
  /** The server URL's path without its trailing slash, put before every request's path. */
  base: string;
  secure: boolean;
  insecure: boolean;
  ca: Buffer | undefined;
  agent: http.Agent | undefined;
  servername: string | undefined;
  /** The name the server's certificate must carry: tls-server-name, else the server's host. */
  checkedName: string;
  /** HTTP/2 is tried: https, reached directly (no proxy), DISABLE_HTTP2 not set. */
  h2: boolean;
  log: RequestLog | undefined;
  /** Said (warnOnce) when the first handshake completes, then cleared: see KubeClient.insecureWarning. */
  insecureWarning: string | undefined;
  /** The largest response body read (maxResponseBytes()); a larger one ends its request with tooLarge(). */
  maxBytes: number;
  tooLarge: () => FleetError;
  /** A body nested deeper than MAX_JSON_DEPTH: the request fails, so no caller parses or prints it. */
  tooDeep: () => FleetError;
  /** Requests in flight, ended together when the run's signal aborts. */
  inFlight: Set<Exchange>;
  /** Set once the run's signal has aborted: a request after that fails at once. */
  aborted?: { reason: unknown };
  classify: (reason: unknown) => FleetError;
  timeoutError: () => FleetError;
  refusedTls: (error: unknown) => FleetError;
}

/** The TLS identity and session key of a set of credentials, computed once per Credentials object. */
const h2Keys = new WeakMap<Credentials, { id: TlsIdentity; key: string }>();

// The exchange an HTTP/2 stream carries, so that the stream's listeners can be shared functions (`this` is the stream)
// instead of closures made for every request.
const EXCHANGE = Symbol('fleet.exchange');
type CarriedStream = ClientHttp2Stream & { [EXCHANGE]: Exchange };

/**
 * One HTTP exchange, connection to body, under one time limit. Its state lives on the object and its handlers are
 * methods or shared functions: made as closures per request (some fifteen, each named by the bundle's keepNames),
 * they were a sizeable share of fleet's own CPU per request over a thousand clusters.
 *
 * The time limit is a timer of our own, held until the exchange ends, not AbortSignal.timeout(): inside
 * AbortSignal.any() Node holds a timeout signal only weakly, and once a garbage collection took it the request ran on to
 * the cluster's time limit (nodejs/node#57736: a 10 s --request-timeout ended at 30 s). It covers the whole exchange:
 * connection, TLS handshake, response headers and body. The timer and the run's signal end the request themselves
 * (destroying it with the reason) rather than through a signal given to http.request: an AbortController,
 * AbortSignal.any and Node's listener bookkeeping per request were a tenth of a thousand-cluster verify's CPU.
 */
class Exchange {
  readonly promise: Promise<KubeResponse>;
  private resolve!: (response: KubeResponse) => void;
  private reject!: (error: unknown) => void;
  private settled = false;
  /** Why the exchange was ended early (time limit, run aborted); checked before anything is sent. */
  private stopped: { reason: unknown } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  /** When the time limit passes (performance.now()); Infinity without one. */
  readonly deadline: number;
  /** Body bytes received so far (chunks holds them until the limit, t.maxBytes, is passed). */
  private received = 0;
  private readonly payload: Buffer | undefined;
  private readonly headers: Record<string, string | string[]>;
  private readonly fullPath: string;
  // What is in flight now, so that stop() can end it: an HTTP/1.1 request, a session being opened, or a stream.
  private req?: http.ClientRequest;
  private opening?: ReturnType<typeof h2session>;
  /** The stream now carrying the request (a stream that failed before any answer may be replaced once, see again()). */
  stream?: ClientHttp2Stream;
  private session?: ClientHttp2Session;
  /** The HTTP/2 session's TLS identity and key (h2Keys). */
  private h2?: { id: TlsIdentity; key: string };
  private released = true;
  private retried = false;
  status = 0;
  responseHeaders: KubeResponse['headers'] = {};
  readonly chunks: Buffer[] = [];
  private tlsAuthorized = false;
  private tlsError: string | undefined;
  /** RequestOptions.quietMs, and its timer: armed at a 2xx status, again at each chunk of the body. */
  private readonly quietMs: number | undefined;
  private quiet: NodeJS.Timeout | undefined;
  /** The answer's protocol and status text, kept for an end by quiet (quietEnd). */
  private answer: { protocol: KubeResponse['protocol']; statusText: string | undefined } | undefined;

  constructor(
    private readonly t: ExchangeTarget,
    private readonly method: string,
    path: string,
    body: unknown,
    options: RequestOptions,
    private readonly creds: Credentials,
    deadline: number,
  ) {
    this.promise = new Promise<KubeResponse>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    this.fullPath = t.base + path;
    this.headers = { accept: options.accept ?? 'application/json', 'user-agent': 'fleet', ...creds.headers };
    if (this.payload) {
      this.headers['content-type'] = options.contentType ?? 'application/json';
      this.headers['content-length'] = String(this.payload.length);
    }
    this.deadline = deadline;
    this.timer = Number.isFinite(deadline) ? armTimer(this) : undefined;
    this.quietMs = options.quietMs;
  }

  /** The status is known: a 2xx answer of a request with quietMs ends once its body pauses that long. */
  answered(protocol: KubeResponse['protocol'], status: number, statusText: string | undefined): void {
    if (this.quietMs === undefined || status < 200 || status >= 300) return;
    this.answer = { protocol, statusText };
    this.armQuiet();
  }

  private armQuiet(): void {
    clearTimeout(this.quiet);
    this.quiet = setTimeout(onQuiet, this.quietMs, this);
  }

  /** Nothing arrived for quietMs: the body so far is the answer; the stream (or HTTP/1.1 connection) is given up. */
  quietEnd(): void {
    if (this.settled || this.stopped || !this.answer) return;
    this.succeed(this.answer.protocol, this.status, this.answer.statusText, this.responseHeaders);
    // Settled first, so that the cancellation's own events (an aborted response, a closed stream) are not a failure.
    if (this.req) this.req.destroy();
    else {
      this.stream?.close(http2.constants.NGHTTP2_CANCEL);
      this.release();
    }
  }

  /** The time-limit timer fired: the exchange ends, unless the timer fired early (see armTimer) and time is left. */
  timerFired(): void {
    if (this.settled || this.stopped) return;
    if (this.deadline - performance.now() > 1) this.timer = armTimer(this);
    else this.stop(this.t.timeoutError());
  }

  /** A chunk of the body: kept until the size limit is passed, when the exchange ends at once (never buffered whole). */
  body(chunk: Buffer): void {
    if (this.settled || this.stopped) return;
    this.received += chunk.length;
    if (this.received > this.t.maxBytes) return this.tooLarge();
    this.chunks.push(chunk);
    if (this.answer) this.armQuiet();
  }

  /** A Content-Length over the limit is refused before its body arrives. */
  declared(length: string | string[] | undefined): void {
    if (typeof length === 'string' && Number(length) > this.t.maxBytes) this.tooLarge();
  }

  private tooLarge(): void {
    const error = this.t.tooLarge();
    this.chunks.length = 0;
    this.stop(error);
    this.fail(error);
  }

  start(): void {
    if (this.t.aborted) return this.fail(this.t.aborted.reason);
    this.t.inFlight.add(this);
    // HTTP/2 (src/kube/h2.ts) to an https server reached directly, unless the server chose HTTP/1.1 before or
    // DISABLE_HTTP2 is set; through a proxy, or to a plain-http server, HTTP/1.1.
    if (!this.t.h2) return this.http1();
    let k = h2Keys.get(this.creds);
    if (!k) {
      const id: TlsIdentity = {
        ca: this.t.ca,
        cert: this.creds.cert,
        key: this.creds.key,
        servername: this.t.servername,
      };
      h2Keys.set(this.creds, (k = { id, key: sessionKey(this.t.server, id) }));
    }
    if (prefersHttp1(k.key)) return this.http1();
    this.h2 = k;
    this.viaH2();
  }

  /** Ends the exchange early (its time limit, the run aborted): what is in flight is cancelled, the reason reported. */
  stop(reason: unknown): void {
    if (this.stopped || this.settled) return;
    this.stopped = { reason };
    const error = reason instanceof Error ? reason : new Error(String(reason));
    // An HTTP/1.1 request fails through its 'error' event (with the reason recorded above); a stream or a session being
    // opened is given up here.
    if (this.req) return void this.req.destroy(error);
    this.stream?.close(http2.constants.NGHTTP2_CANCEL);
    this.release();
    this.opening?.giveUp(error);
    this.fail(error);
  }

  private done(): void {
    this.settled = true;
    clearTimeout(this.timer);
    clearTimeout(this.quiet);
    this.t.inFlight.delete(this);
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.done();
    // Whichever limit ended the exchange names it, even when Node reports the abort as a reset of the response body.
    const reason = this.stopped ? this.stopped.reason : abortReason(error);
    const classified = this.t.classify(reason);
    logExchange(this.t.log, {
      method: this.method,
      url: this.url(),
      requestHeaders: this.headers,
      elapsedMs: performance.now() - this.started,
      error: classified.message,
    });
    this.reject(classified);
  }

  succeed(
    protocol: KubeResponse['protocol'],
    status: number,
    statusText: string | undefined,
    responseHeaders: KubeResponse['headers'],
  ): void {
    if (this.settled) return;
    this.done();
    const elapsedMs = performance.now() - this.started;
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    // One place for every caller: a body nested too deep never reaches JSON.parse, an output format or a message.
    const error = nestedDeeperThan(bytes, MAX_JSON_DEPTH) ? this.t.tooDeep() : undefined;
    logExchange(this.t.log, {
      method: this.method,
      url: this.url(),
      requestHeaders: this.headers,
      status,
      statusText,
      responseHeaders,
      elapsedMs,
      error: error?.message,
    });
    if (error) return this.reject(error);
    const body = bytes.toString('utf8');
    this.resolve({
      status,
      body,
      headers: responseHeaders,
      elapsedMs,
      tlsAuthorized: this.tlsAuthorized,
      tlsError: this.tlsError,
      protocol,
    });
  }

  private url(): string {
    return `${this.t.server.origin}${this.fullPath}`;
  }

  /** OpenSSL refused the client certificate or key while building the TLS context: a configuration problem. */
  private refusedTls(error: unknown): void {
    if (this.settled) return;
    this.done();
    this.reject(this.t.refusedTls(error));
  }

  /** The server's certificate, checked for this request (a connection may have been opened by another cluster). */
  private checkTls(tls: TLSSocket): Error | undefined {
    this.tlsAuthorized = tls.authorized;
    const verifyError = tls.authorizationError
      ? String((tls.authorizationError as NodeJS.ErrnoException).code ?? tls.authorizationError)
      : undefined;
    this.tlsError = verifyError;
    if (this.t.insecure) {
      if (this.t.insecureWarning) warnOnce(this.t.insecureWarning);
      this.t.insecureWarning = undefined;
      return undefined;
    }
    // The chain verified but the name did not: Node keeps only the code; checkServerName's error names the hosts.
    if (!tls.authorized && verifyError === 'ERR_TLS_CERT_ALTNAME_INVALID')
      return checkServerName(tls, this.t.checkedName) ?? nameMismatch(this.t.checkedName);
    if (!tls.authorized) return Object.assign(new Error(String(tls.authorizationError)), { code: verifyError });
    // The chain verified; check the name as Node would (rejectUnauthorized=false skips it).
    return checkServerName(tls, this.t.checkedName);
  }

  private http1(): void {
    if (this.stopped) return this.fail(this.stopped.reason);
    const { server, secure } = this.t;
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(
        {
          protocol: server.protocol,
          hostname: server.hostname.replace(/^\[|\]$/g, ''),
          port: server.port || (secure ? 443 : 80),
          path: this.fullPath,
          method: this.method,
          ca: this.t.ca,
          cert: this.creds.cert,
          key: this.creds.key,
          servername: this.t.servername,
          // Verification happens by hand (checkTls) so that the outcome can be reported even when it is skipped.
          rejectUnauthorized: false,
          // Through a proxy its agent; otherwise clusters on the same https server share its keep-alive connections
          // (checkTls runs on reused sockets too). A plain-http server (allowed, with a warning) gets no shared agent.
          agent: this.t.agent ?? (secure ? agentFor(server) : false),
          headers: this.headers,
        },
        (res) => {
          this.status = res.statusCode ?? 0;
          this.responseHeaders = res.headers;
          this.declared(res.headers['content-length']);
          this.answered('http/1.1', this.status, res.statusMessage);
          res.on('data', (c: Buffer) => this.body(c));
          res.on('error', (error) => this.fail(error));
          res.on('end', () => this.succeed('http/1.1', res.statusCode ?? 0, res.statusMessage, res.headers));
        },
      );
    } catch (error) {
      this.refusedTls(error);
      return;
    }
    this.req = req;
    req.on('socket', (socket) => {
      if (!secure) return;
      const check = () => {
        const problem = this.checkTls(socket as TLSSocket);
        if (problem) req.destroy(problem);
      };
      // A kept-alive socket was verified for whoever opened it (perhaps a cluster that skips verification): check again.
      if (req.reusedSocket) check();
      else whenSecure(socket as TLSSocket, check);
    });
    req.on('error', (error) => this.fail(error));
    if (this.payload) req.write(this.payload);
    req.end();
  }

  private viaH2(): void {
    const k = this.h2!;
    // An open session is used at once; one being opened (or none yet) is waited for.
    const open = established(k.key);
    if (open) return this.onSession(open);
    let opening: ReturnType<typeof h2session>;
    try {
      opening = h2session(this.t.server, k.id, k.key);
    } catch (error) {
      this.refusedTls(error);
      return;
    }
    this.opening = opening;
    opening.ready.then(
      (s) => this.onSession(s),
      (error) => this.again(error) || this.fail(error),
    );
  }

  /** A session the server is closing (GOAWAY) refuses new streams before it handles them: once, on a new session. */
  again(error: unknown): boolean {
    const e = error as { code?: string; message?: string };
    const refused =
      e?.code === 'ERR_HTTP2_GOAWAY_SESSION' ||
      e?.code === 'ERR_HTTP2_INVALID_SESSION' ||
      /REFUSED_STREAM/.test(e?.message ?? '');
    if (!refused || this.retried || this.settled || this.stopped) return false;
    this.retried = true;
    this.stream = undefined;
    this.viaH2();
    return true;
  }

  private onSession(s: ClientHttp2Session | 'http1'): void {
    this.opening = undefined;
    if (this.settled) return;
    if (s === 'http1') return this.http1();
    if (this.stopped) return this.fail(this.stopped.reason);
    const problem = this.checkTls(s.socket as TLSSocket);
    if (problem) return this.fail(problem);
    let stream: ClientHttp2Stream;
    try {
      stream = s.request(
        { ':method': this.method, ':path': this.fullPath, ...this.headers },
        { endStream: !this.payload },
      );
    } catch (error) {
      if (!this.again(error)) this.fail(error);
      return;
    }
    streamStarted(s);
    this.session = s;
    this.released = false;
    this.stream = stream;
    (stream as CarriedStream)[EXCHANGE] = this;
    stream.on('response', onH2Response);
    stream.on('data', onH2Data);
    stream.on('error', onH2Error);
    stream.on('end', onH2End);
    stream.on('close', onH2Close);
    if (this.payload) stream.end(this.payload);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    streamEnded(this.session!);
  }

  /** A stream that closed without a complete answer (reset by the server, its session gone) and no error. */
  closed(stream: ClientHttp2Stream): void {
    if (stream !== this.stream) return;
    this.release();
    if (!this.settled && !this.stopped) this.fail(Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }));
  }
}

/**
 * The time limit's timer, for exactly what is left. It was rounded up to a tenth of a second so that requests would
 * share Node's timer lists (one per distinct duration), which made a 1 ms limit 100 ms; measured again, sharing saves
 * about 0.1 us per request (200,000 timers, 1,000 live: 14 ms CPU shared, 36 ms distinct), under 1% of fleet's own cost
 * per request, so the limit is exact. Node starts a timer from the event loop's cached time, which lags when the loop
 * is busy, so a timer can fire early: timerFired checks the clock and arms another for the rest.
 */
function armTimer(x: Exchange): NodeJS.Timeout {
  return setTimeout(onTimeout, Math.max(1, Math.ceil(x.deadline - performance.now())), x);
}

function onTimeout(x: Exchange): void {
  x.timerFired();
}

function onQuiet(x: Exchange): void {
  x.quietEnd();
}

function onH2Response(this: CarriedStream, h: http2.IncomingHttpHeaders): void {
  const x = this[EXCHANGE];
  x.status = Number(h[':status'] ?? 0);
  // Node's own object (with its pseudo-headers, which the request log leaves out), not a copy per response.
  x.responseHeaders = h;
  x.declared(h['content-length']);
  x.answered('h2', x.status, http.STATUS_CODES[x.status]);
}

function onH2Data(this: CarriedStream, chunk: Buffer): void {
  this[EXCHANGE].body(chunk);
}

function onH2Error(this: CarriedStream, error: Error): void {
  const x = this[EXCHANGE];
  // A stream replaced after a refusal (again()) is no longer this exchange's: its later events are not.
  if (this !== x.stream) return;
  x.release();
  if (x.status === 0 && x.again(error)) return;
  x.fail(error);
}

function onH2End(this: CarriedStream): void {
  const x = this[EXCHANGE];
  if (this !== x.stream) return;
  x.release();
  // A stream that ends before any response headers (the server went away mid-request: its session closed the stream)
  // is no answer, not an answer with status 0 ("HTTP 0"): it fails as the connection reset it is.
  if (x.status === 0) {
    return x.fail(Object.assign(new Error('the stream ended before the server answered'), { code: 'ECONNRESET' }));
  }
  x.succeed('h2', x.status, http.STATUS_CODES[x.status], x.responseHeaders);
}

function onH2Close(this: CarriedStream): void {
  this[EXCHANGE].closed(this);
}

/** FLEET_MAX_RESPONSE_BYTES as a number of bytes: digits, or digits with Ki, Mi or Gi (as Kubernetes quantities). */
export function parseResponseLimit(value: string): number {
  const m = /^\s*(\d+)\s*(Ki|Mi|Gi)?\s*$/.exec(value);
  const n = m ? Number(m[1]) * (m[2] === 'Ki' ? 1024 : m[2] === 'Mi' ? 1024 ** 2 : m[2] === 'Gi' ? 1024 ** 3 : 1) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new ConfigError(
      `${MAX_RESPONSE_BYTES_ENV}: expected a positive number of bytes (e.g. 67108864 or 64Mi), got "${value}"`,
    );
  }
  return n;
}

let responseLimit: number | undefined;

/** The response size limit, read once per process: DEFAULT_MAX_RESPONSE_BYTES unless FLEET_MAX_RESPONSE_BYTES is set. */
export function maxResponseBytes(): number {
  if (responseLimit === undefined) {
    const value = process.env[MAX_RESPONSE_BYTES_ENV];
    responseLimit = value === undefined || value === '' ? DEFAULT_MAX_RESPONSE_BYTES : parseResponseLimit(value);
  }
  return responseLimit;
}

/** 64 MiB, 512 KiB, or bytes when neither divides it. */
function formatBytes(n: number): string {
  if (n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** The depth check of every response body, base's (base/json.ts), exported here for the tests that know it so. */
export { nestedDeeperThan };

/** Whether a kubeconfig user sends a credential (a token, a password, a client certificate, a plugin's answer). */
function sendsCredential(user: ResolvedContext['user']): boolean {
  return Boolean(
    user.token ||
    user.tokenFile ||
    user.password ||
    user['client-certificate'] ||
    user['client-certificate-data'] ||
    user.exec ||
    user['auth-provider'],
  );
}
