import {X509Certificate, createPrivateKey} from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import http2, {type ClientHttp2Stream} from 'node:http2'
import {type TLSSocket, checkServerIdentity} from 'node:tls'

import {fileError, readRequired} from '../base/files.js'
import {ConfigError, FleetError} from '../base/errors.js'
import {formatDuration} from '../base/duration.js'
import {bearerToken} from '../kubeconfig/credentials.js'
import type {ResolvedContext} from '../kubeconfig/loading-rules.js'
import {decodeBase64, proxyUrl, serverUrl} from '../kubeconfig/readiness.js'
import {maskUrlCredentials, registerSecret, registerUrlSecrets, registerUserSecrets} from '../kubeconfig/redact.js'
import {warnOnce} from '../base/warnings.js'
import {agentFor} from './agents.js'
import {type TlsIdentity, http2Disabled, prefersHttp1, session as h2session, sessionKey, streamEnded, streamStarted} from './h2.js'
import {classifyOpenSslError, classifyTransportError, httpError, parseStatus} from './errors.js'
import type {ExecCredential, ExecCredentialRunner} from './exec-credential.js'
import {proxyAgent} from './proxy.js'
import {type RequestLog, logExchange} from './request-log.js'
import {retryDelayMs} from './retry.js'

/**
 * One cluster's connection: TLS trust, credentials (certificate, token, basic, exec plugin, impersonation), a time limit
 * per request, and failures classified into fleet's error kinds. fleet speaks HTTP itself instead of through
 * @kubernetes/client-node so that every failure can be classified, exec plugins behave like client-go, responses stay
 * lossless, and commands that only list clusters do not pay for importing the client library.
 */
export interface KubeResponse {
  status: number
  body: string
  headers: Record<string, string | string[] | undefined>
  elapsedMs: number
  /** Whether the server's certificate chain verified against the configured trust (also measured when verification is skipped). */
  tlsAuthorized: boolean
  tlsError?: string
  /** The HTTP version the answer came in: HTTP/2 to an https server reached directly (src/kube/h2.ts), else HTTP/1.1. */
  protocol: 'h2' | 'http/1.1'
}

/**
 * kubectl's --as, --as-group, --as-uid: every request of a client carries Impersonate-User, Impersonate-Group (one
 * header per group) and Impersonate-Uid, whatever credential authenticates it (token, certificate, exec plugin). The
 * server authorizes the caller to impersonate, then handles the request as that identity.
 */
export interface Impersonation {
  user: string
  groups: string[]
  uid?: string
}

/** How an identity asked about is written in messages: `user "u"`, with its groups and uid when given. */
export function describeImpersonation(as: Impersonation): string {
  const parts = [`user "${as.user}"`]
  if (as.groups.length > 0) parts.push(`group${as.groups.length === 1 ? '' : 's'} ${as.groups.map((g) => `"${g}"`).join(', ')}`)
  if (as.uid) parts.push(`uid "${as.uid}"`)
  return parts.join(' with ')
}

export interface ClientOptions {
  timeoutMs: number
  /** Names the cluster in error messages. */
  clusterName: string
  /** The command's one exec credential runner (its cache and its one-run-per-credential rule are per command). */
  exec: ExecCredentialRunner
  /** Ends every request of this client (the fleet runner aborts a cluster's work when its time limit passes). */
  signal?: AbortSignal
  /** kubectl-style request logging (-v 6 and up); nothing is logged without it. */
  log?: RequestLog
  /** Act as another identity (--as): replaces the kubeconfig user's own `as`, as kubectl's flags do. */
  impersonate?: Impersonation
}

export interface RequestOptions {
  accept?: string
  /** The body is always sent as JSON; server-side apply reads it as `application/apply-patch+yaml` (JSON is YAML). */
  contentType?: string
}

/** What KubeClient.json accepts as the answer besides the request's own options. */
export interface ExpectOptions extends RequestOptions {
  /** The statuses that are the answer (default: any 2xx). */
  ok?: readonly number[]
  /** A 404 is an answer too: json returns undefined instead of throwing a not-found error. */
  absent?: boolean
}

interface Credentials {
  /** A list is sent as one header line per value (Impersonate-Group). */
  headers: Record<string, string | string[]>
  cert?: string | Buffer
  key?: string | Buffer
  /** The exec plugin's credential behind these headers, so a 401 can say which one the server rejected. */
  exec?: ExecCredential
}

async function fileOrData(file: string | undefined, data: string | undefined, what: string): Promise<Buffer | undefined> {
  if (data) {
    try {
      return decodeBase64(data, `${what}-data`)
    } catch (error) {
      throw new ConfigError((error as Error).message)
    }
  }
  return file ? readRequired(file, `${what} ${file}`) : undefined
}

/** A key that does not belong to its certificate fails deep in OpenSSL; say it plainly before any request. */
function checkKeyPair(cert: string | Buffer, key: string | Buffer, user: string): void {
  let x509: X509Certificate
  try {
    x509 = new X509Certificate(cert)
  } catch {
    throw new ConfigError(`user "${user}": client-certificate is not a valid PEM certificate`)
  }
  let privateKey
  try {
    privateKey = createPrivateKey(key)
  } catch {
    throw new ConfigError(`user "${user}": client-key is not a valid PEM private key`)
  }
  if (!x509.checkPrivateKey(privateKey)) throw new ConfigError(`user "${user}": client-key does not match client-certificate`)
}

export class KubeClient {
  private constructor(
    readonly context: ResolvedContext,
    private readonly options: ClientOptions,
    private readonly server: URL,
    private readonly ca: Buffer | undefined,
    /** Set when the cluster names a proxy-url: every request tunnels through it. */
    private readonly agent: http.Agent | undefined,
  ) {}

  private presented?: string | Buffer
  /** DISABLE_HTTP2, read once per client: reading the environment per request was 1% of a thousand-cluster verify. */
  private readonly http1Only = http2Disabled()

  /** The client certificate sent with the latest request (the kubeconfig's or an exec plugin's), if any. */
  get presentedCertificate(): string | Buffer | undefined {
    return this.presented
  }

  static async connect(context: ResolvedContext, options: ClientOptions): Promise<KubeClient> {
    const where = `cluster "${options.clusterName}"`
    const server = context.cluster.server
    // A password or token in the server URL is a credential like any other: never printed, even inside a Node message.
    registerUrlSecrets(server)
    if (!server) throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}" has no server`)
    let url: URL
    try {
      url = serverUrl(server)
    } catch (error) {
      throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}": ${(error as Error).message}`)
    }
    // client-go talks to an http server too; the credential then crosses the network in clear, which deserves a word.
    // The URL is shown without userinfo or query, which may hold credentials (registered above by registerUrlSecrets).
    if (url.protocol === 'http:') warnOnce(`${where}: server ${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')} is plain http: the credential is sent in clear`)
    const ca = await fileOrData(context.cluster['certificate-authority'], context.cluster['certificate-authority-data'], 'certificate-authority')
    let agent: http.Agent | undefined
    const proxy = context.cluster['proxy-url']
    if (proxy) {
      let proxyTarget: URL
      try {
        proxyTarget = proxyUrl(proxy)
      } catch (error) {
        throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}": ${(error as Error).message}`)
      }
      agent = await proxyAgent(proxyTarget, url, {ca, insecure: context.cluster['insecure-skip-tls-verify'] === true})
    }
    return new KubeClient(context, options, url, ca, agent)
  }

  /** The identity this client acts as (--as), if any: the server answers for it, not for the credential. */
  get impersonation(): Impersonation | undefined {
    return this.options.impersonate
  }

  /** The server as it may be shown: a password or token-like query value in the URL is masked. */
  get serverUrl(): string {
    return maskUrlCredentials(this.context.cluster.server!)
  }

  /** The proxy-url as it may be shown: a user and password in it are masked. */
  get proxyShown(): string | undefined {
    const proxy = this.context.cluster['proxy-url']
    return proxy ? maskUrlCredentials(proxy) : undefined
  }

  private async credentials(rejected?: ExecCredential): Promise<Credentials> {
    const user = this.context.user
    // Whatever this user holds inline is scrubbed from output before any of it is sent.
    registerUserSecrets(user)
    const headers: Record<string, string | string[]> = {}
    let cert: string | Buffer | undefined
    let key: string | Buffer | undefined
    let cred: ExecCredential | undefined
    if (user.exec) {
      cred = await this.options.exec.get(user.exec, this.context.cluster, {rejected, signal: this.options.signal})
      if (cred.token) headers.authorization = `Bearer ${cred.token}`
      if (cred.clientCertificateData) {
        cert = cred.clientCertificateData
        key = cred.clientKeyData
      }
    } else if (user['auth-provider']) {
      const cfg = user['auth-provider'].config ?? {}
      const token = cfg['id-token'] || cfg['access-token']
      if (!token) {
        throw new FleetError('plugin', `auth-provider "${user['auth-provider'].name}" is not supported; use an exec plugin`)
      }
      headers.authorization = `Bearer ${token}`
    }
    if (!cert) {
      cert = await fileOrData(user['client-certificate'], user['client-certificate-data'], 'client-certificate')
      key = await fileOrData(user['client-key'], user['client-key-data'], 'client-key')
      if (Boolean(cert) !== Boolean(key)) {
        throw new ConfigError(`user "${this.context.userName}": a client certificate needs both certificate and key`)
      }
      if (cert && key) checkKeyPair(cert, key, this.context.userName ?? '')
    }
    this.presented = cert
    if (!headers.authorization) {
      const token = await bearerToken(user).catch((error) => {
        throw fileError(`tokenFile ${user.tokenFile}`, error)
      })
      if (token) headers.authorization = `Bearer ${token}`
      else if (user.username && user.password) {
        // The password is registered with the user's other secrets above.
        const basic = Buffer.from(`${user.username}:${user.password}`).toString('base64')
        // The encoded form too: a server that echoes the header back must not print the password in base64.
        registerSecret(basic)
        headers.authorization = `Basic ${basic}`
      }
    }
    const as = this.options.impersonate
    if (as) {
      headers['impersonate-user'] = as.user
      if (as.groups.length > 0) headers['impersonate-group'] = as.groups
      if (as.uid) headers['impersonate-uid'] = as.uid
    } else if (user.as) headers['impersonate-user'] = user.as
    return {headers, cert, key, exec: cred}
  }

  /** One HTTP exchange. Transport failures throw classified errors; any HTTP status is returned. */
  async request(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<KubeResponse> {
    const creds = await this.credentials()
    // One deadline for the request and its retries, as client-go's request timeout covers them all.
    const deadline = this.options.timeoutMs > 0 ? performance.now() + this.options.timeoutMs : Infinity
    let response = await this.once(method, path, body, options, creds, deadline)
    // Like client-go: an exec credential the server rejects is refreshed once (shared with concurrent requests).
    if (response.status === 401 && creds.exec) response = await this.once(method, path, body, options, await this.credentials(creds.exec), deadline)
    // Like client-go: a 429 (or 5xx) with Retry-After is retried after that wait, up to 10 times, within the time limits.
    for (let retries = 0; retries < 10; retries++) {
      const wait = retryDelayMs(response.status, response.headers['retry-after'])
      if (wait === undefined || performance.now() + wait >= deadline) break
      await sleep(wait, this.options.signal)
      response = await this.once(method, path, body, options, creds, deadline)
    }
    if (response.status === 403 && creds.headers['impersonate-user'] !== undefined) response = this.refusedImpersonation(response)
    return response
  }

  /**
   * The API server checks impersonation before anything else: a 403 saying "cannot impersonate" is about the caller,
   * not the identity asked about, and must not read as that identity's "no". Its Status message is reworded to say so
   * (every caller's error then names it), and the response is otherwise returned as it came, so what it proves about
   * the connection (reached, TLS verified) is kept. Any other 403 is left as it is.
   */
  private refusedImpersonation(response: KubeResponse): KubeResponse {
    const status = parseStatus(response.body)
    if (!status || !/cannot impersonate/.test(status.message ?? '')) return response
    const as = this.options.impersonate ?? {user: String(this.context.user.as), groups: []}
    const message = `the caller may not impersonate ${describeImpersonation(as)}: ${status.message}`
    return {...response, body: JSON.stringify({...status, message})}
  }

  private async once(
    method: string,
    path: string,
    body: unknown,
    options: RequestOptions,
    creds: Credentials,
    deadline = Infinity,
  ): Promise<KubeResponse> {
    const insecure = this.context.cluster['insecure-skip-tls-verify'] === true
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const base = this.server.pathname.replace(/\/$/, '')
    const started = performance.now()
    // Rounded up to a tenth of a second: Node keeps one timer list per distinct duration, and a duration to the
    // millisecond made a new list (and a priority-queue insert) for most requests of a large run.
    const left = Number.isFinite(deadline) ? Math.max(100, Math.ceil((deadline - started) / 100) * 100) : 0
    // The time limit is a timer of our own, held until the exchange ends, not AbortSignal.timeout(): inside
    // AbortSignal.any() Node holds a timeout signal only weakly, and once a garbage collection took it the request ran on
    // to the cluster's time limit (nodejs/node#57736: a 10 s --request-timeout ended at 30 s). It covers the whole
    // exchange: connection, TLS handshake, response headers and body. The timer and the run's signal end the request
    // themselves (destroying it with the reason) rather than through a signal given to http.request: an AbortController,
    // AbortSignal.any and Node's listener bookkeeping per request were a tenth of a thousand-cluster verify's CPU.
    let stopped: {reason: unknown} | undefined
    // What ends the request in flight; until there is one, a limit reached is only recorded (and checked before sending).
    let end: ((reason: Error) => void) | undefined
    const stop = (reason: unknown) => {
      if (stopped) return
      stopped = {reason}
      end?.(reason instanceof Error ? reason : new Error(String(reason)))
    }
    const timer = left > 0 ? setTimeout(() => stop(this.timeoutError()), left) : undefined
    const runSignal = this.options.signal
    const onRunAbort = () => stop(runSignal!.reason)
    if (runSignal?.aborted) onRunAbort()
    else runSignal?.addEventListener('abort', onRunAbort, {once: true})
    const done = () => {
      clearTimeout(timer)
      runSignal?.removeEventListener('abort', onRunAbort)
    }
    const secure = this.server.protocol === 'https:'
    const headers: Record<string, string | string[]> = {
      accept: options.accept ?? 'application/json',
      'user-agent': 'fleet',
      ...creds.headers,
      ...(payload ? {'content-type': options.contentType ?? 'application/json', 'content-length': String(payload.length)} : {}),
    }
    const log = this.options.log
    const url = `${this.server.origin}${base}${path}`
    return new Promise<KubeResponse>((resolve, reject) => {
      let settled = false
      const fail = (error: unknown) => {
        if (settled) return
        settled = true
        done()
        // Whichever limit ended the exchange names it, even when Node reports the abort as a reset of the response body.
        const reason = stopped ? stopped.reason : abortReason(error)
        const classified = classifyTransportError(reason, this.serverUrl, this.agent ? this.proxyShown : undefined)
        logExchange(log, {method, url, requestHeaders: headers, elapsedMs: performance.now() - started, error: classified.message})
        reject(classified)
      }
      const succeed = (protocol: KubeResponse['protocol'], status: number, statusText: string | undefined, responseHeaders: KubeResponse['headers'], chunks: Buffer[]) => {
        if (settled) return
        settled = true
        done()
        const elapsedMs = performance.now() - started
        logExchange(log, {method, url, requestHeaders: headers, status, statusText, responseHeaders, elapsedMs})
        resolve({status, body: Buffer.concat(chunks).toString('utf8'), headers: responseHeaders, elapsedMs, tlsAuthorized: tlsState.authorized, tlsError: tlsState.error, protocol})
      }
      const tlsState: {authorized: boolean; error?: string} = {authorized: false}
      /** The server's certificate, checked for this request (a connection may have been opened by another cluster). */
      const checkTls = (tls: TLSSocket): Error | undefined => {
        tlsState.authorized = tls.authorized
        const verifyError = tls.authorizationError ? String((tls.authorizationError as any).code ?? tls.authorizationError) : undefined
        tlsState.error = verifyError
        if (insecure) return undefined
        if (!tls.authorized) return Object.assign(new Error(String(tls.authorizationError)), {code: verifyError})
        // The chain verified; check the name as Node would (rejectUnauthorized=false skips it).
        return checkServerName(tls, this.context.cluster['tls-server-name'] || this.server.hostname)
      }
      if (stopped) {
        fail(stopped.reason)
        return
      }
      // OpenSSL refuses the client certificate or key while building the TLS context (either transport): a configuration
      // problem, not a transport failure.
      const refusedTls = (error: unknown) => {
        settled = true
        done()
        reject(classifyOpenSslError(error, `cluster "${this.options.clusterName}"`))
      }

      const http1 = () => {
        if (stopped) return fail(stopped.reason)
        let req: http.ClientRequest
        try {
          req = (secure ? https : http).request({
            protocol: this.server.protocol,
            hostname: this.server.hostname.replace(/^\[|\]$/g, ''),
            port: this.server.port || (secure ? 443 : 80),
            path: base + path,
            method,
            ca: this.ca,
            cert: creds.cert,
            key: creds.key,
            servername: this.context.cluster['tls-server-name'] || undefined,
            // Verification happens by hand (checkTls) so that the outcome can be reported even when it is skipped.
            rejectUnauthorized: false,
            // Through a proxy its agent; otherwise clusters on the same https server share its keep-alive connections
            // (checkTls runs on reused sockets too). A plain-http server (allowed, with a warning) gets no shared agent.
            agent: this.agent ?? (secure ? agentFor(this.server) : false),
            headers,
          }, (res) => {
            const chunks: Buffer[] = []
            res.on('data', (c: Buffer) => chunks.push(c))
            res.on('error', fail)
            res.on('end', () => succeed('http/1.1', res.statusCode ?? 0, res.statusMessage, res.headers, chunks))
          })
        } catch (error) {
          refusedTls(error)
          return
        }
        req.on('socket', (socket) => {
          if (!secure) return
          const check = () => {
            const problem = checkTls(socket as TLSSocket)
            if (problem) req.destroy(problem)
          }
          // A kept-alive socket was verified for whoever opened it (perhaps a cluster that skips verification): check again.
          if (req.reusedSocket) check()
          else whenSecure(socket as TLSSocket, check)
        })
        req.on('error', fail)
        end = (reason) => req.destroy(reason)
        if (payload) req.write(payload)
        req.end()
      }

      // HTTP/2 (src/kube/h2.ts) to an https server reached directly, unless the server chose HTTP/1.1 before or
      // DISABLE_HTTP2 is set; through a proxy, or to a plain-http server, HTTP/1.1.
      if (!secure || this.agent || this.http1Only) return http1()
      const id: TlsIdentity = {ca: this.ca, cert: creds.cert, key: creds.key, servername: this.context.cluster['tls-server-name'] || undefined}
      const key = sessionKey(this.server, id)
      if (prefersHttp1(key)) return http1()
      const viaH2 = (retried: boolean) => {
        let opening: ReturnType<typeof h2session>
        try {
          opening = h2session(this.server, id, key)
        } catch (error) {
          refusedTls(error)
          return
        }
        end = (reason) => {
          opening.giveUp(reason)
          fail(reason)
        }
        // A session the server is closing (GOAWAY) refuses new streams before it handles them: once, on a new session.
        const again = (error: unknown) => {
          const e = error as {code?: string; message?: string}
          const refused = e?.code === 'ERR_HTTP2_GOAWAY_SESSION' || e?.code === 'ERR_HTTP2_INVALID_SESSION' || /REFUSED_STREAM/.test(e?.message ?? '')
          if (!refused || retried || settled || stopped) return false
          viaH2(true)
          return true
        }
        opening.ready.then(
          (s) => {
            if (settled) return
            if (s === 'http1') return http1()
            if (stopped) return fail(stopped.reason)
            const problem = checkTls(s.socket as TLSSocket)
            if (problem) return fail(problem)
            let stream: ClientHttp2Stream
            try {
              stream = s.request({':method': method, ':path': base + path, ...headers}, {endStream: !payload})
            } catch (error) {
              if (!again(error)) fail(error)
              return
            }
            streamStarted(s)
            let released = false
            const release = () => {
              if (!released) streamEnded(s)
              released = true
            }
            end = (reason) => {
              stream.close(http2.constants.NGHTTP2_CANCEL)
              release()
              fail(reason)
            }
            let status = 0
            let responseHeaders: KubeResponse['headers'] = {}
            const chunks: Buffer[] = []
            stream.on('response', (h) => {
              status = Number(h[':status'] ?? 0)
              responseHeaders = {}
              for (const [name, value] of Object.entries(h)) if (!name.startsWith(':')) responseHeaders[name] = value as string | string[] | undefined
            })
            stream.on('data', (c: Buffer) => chunks.push(c))
            let superseded = false
            stream.on('error', (error) => {
              release()
              if (status === 0 && again(error)) {
                superseded = true
                return
              }
              fail(error)
            })
            stream.on('end', () => {
              release()
              succeed('h2', status, http.STATUS_CODES[status], responseHeaders, chunks)
            })
            // A stream that closed without a complete answer (reset by the server, its session gone) and no error.
            stream.on('close', () => {
              release()
              if (!settled && !stopped && !superseded) fail(Object.assign(new Error('connection reset'), {code: 'ECONNRESET'}))
            })
            if (payload) stream.end(payload)
          },
          (error) => {
            if (!again(error)) fail(error)
          },
        )
      }
      viaH2(false)
    })
  }

  /** What a request that outlived --request-timeout fails with: the server and the limit as the user gave it. */
  private timeoutError(): FleetError {
    return new FleetError('timeout', `${this.serverUrl}: no answer within ${formatDuration(this.options.timeoutMs)} (--request-timeout)`)
  }

  /**
   * The one "expect this answer, else classify the error": sends a request and parses the JSON answer. A status in
   * `ok` (default: any 2xx) is the answer; with `absent`, a 404 returns undefined; any other status throws httpError's
   * classified error, `<what>: <the server's message>`.
   */
  async json<T>(method: string, path: string, body: unknown, what: string, options: ExpectOptions & {absent: true}): Promise<T | undefined>
  async json<T>(method: string, path: string, body?: unknown, what?: string, options?: ExpectOptions): Promise<T>
  async json<T>(method: string, path: string, body?: unknown, what = `${method} ${path}`, options: ExpectOptions = {}): Promise<T | undefined> {
    const res = await this.request(method, path, body, options)
    if (options.absent && res.status === 404) return undefined
    if (options.ok ? !options.ok.includes(res.status) : res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, what)
    try {
      return JSON.parse(res.body) as T
    } catch {
      throw new FleetError('server', `${what}: the answer is not JSON`)
    }
  }
}

/**
 * Node reports an aborted request as a generic AbortError; the reason it was aborted (the request timeout's
 * TimeoutError, or the fleet runner's own error) is what classifies it.
 */
function abortReason(error: unknown): unknown {
  const e = error as {name?: string; cause?: unknown}
  return e?.name === 'AbortError' && e.cause !== undefined ? e.cause : error
}

/** Through a proxy agent the socket may arrive with its handshake already done; otherwise wait for it. */
function whenSecure(socket: TLSSocket, fn: () => void): void {
  if ((socket as TLSSocket & {_secureEstablished?: boolean})._secureEstablished) fn()
  else socket.once('secureConnect', fn)
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, {once: true})
  })
}

// A kept-alive socket carries many requests; its certificate is read and checked once per host name, not per request.
const nameChecks = new WeakMap<TLSSocket, Map<string, Error | undefined>>()

function checkServerName(socket: TLSSocket, host: string): Error | undefined {
  let checks = nameChecks.get(socket)
  if (!checks) nameChecks.set(socket, (checks = new Map()))
  if (checks.has(host)) return checks.get(host)
  const cert = socket.getPeerCertificate()
  const result = !cert || Object.keys(cert).length === 0 ? undefined : (checkServerIdentity(host.replace(/^\[|\]$/g, ''), cert) ?? undefined)
  checks.set(host, result)
  return result
}
