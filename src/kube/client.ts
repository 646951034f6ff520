import https from 'node:https'
import {type TLSSocket, checkServerIdentity} from 'node:tls'

import {fileError, readRequired} from '../base/files.js'
import {ConfigError, FleetError} from '../base/errors.js'
import {bearerToken} from '../kubeconfig/credentials.js'
import type {ResolvedContext} from '../kubeconfig/loading-rules.js'
import {registerUserSecrets} from '../kubeconfig/redact.js'
import {agentFor} from './agents.js'
import {classifyTransportError, httpError} from './errors.js'
import type {ExecCredential, ExecCredentialRunner} from './exec-credential.js'

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
}

export interface ClientOptions {
  timeoutMs: number
  /** Names the cluster in error messages. */
  clusterName: string
  /** The command's one exec credential runner (its cache and its one-run-per-credential rule are per command). */
  exec: ExecCredentialRunner
  /** Ends every request of this client (the fleet runner aborts a cluster's work when its time limit passes). */
  signal?: AbortSignal
}

export interface RequestOptions {
  accept?: string
  /** The body is always sent as JSON; server-side apply reads it as `application/apply-patch+yaml` (JSON is YAML). */
  contentType?: string
}

interface Credentials {
  headers: Record<string, string>
  cert?: string | Buffer
  key?: string | Buffer
  /** The exec plugin's credential behind these headers, so a 401 can say which one the server rejected. */
  exec?: ExecCredential
}

async function fileOrData(file: string | undefined, data: string | undefined, what: string): Promise<Buffer | undefined> {
  if (data) return Buffer.from(data, 'base64')
  return file ? readRequired(file, `${what} ${file}`) : undefined
}

export class KubeClient {
  private constructor(
    readonly context: ResolvedContext,
    private readonly options: ClientOptions,
    private readonly server: URL,
    private readonly ca: Buffer | undefined,
  ) {}

  static async connect(context: ResolvedContext, options: ClientOptions): Promise<KubeClient> {
    const where = `cluster "${options.clusterName}"`
    const server = context.cluster.server
    if (!server) throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}" has no server`)
    let url: URL
    try {
      url = new URL(server)
    } catch {
      throw new ConfigError(`${context.clusterFile}: cluster "${context.clusterName}" has an invalid server URL "${server}"`)
    }
    if (url.protocol !== 'https:') throw new ConfigError(`${where}: only https servers are supported (got ${server})`)
    if (context.cluster['proxy-url']) throw new ConfigError(`${where}: proxy-url is not supported yet`)
    const ca = await fileOrData(context.cluster['certificate-authority'], context.cluster['certificate-authority-data'], 'certificate-authority')
    return new KubeClient(context, options, url, ca)
  }

  get serverUrl(): string {
    return this.context.cluster.server!
  }

  private async credentials(rejected?: ExecCredential): Promise<Credentials> {
    const user = this.context.user
    // Whatever this user holds inline is scrubbed from output before any of it is sent.
    registerUserSecrets(user)
    const headers: Record<string, string> = {}
    let cert: string | Buffer | undefined
    let key: string | Buffer | undefined
    let cred: ExecCredential | undefined
    if (user.exec) {
      cred = await this.options.exec.get(user.exec, this.context.cluster, {rejected})
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
    }
    if (!headers.authorization) {
      const token = await bearerToken(user).catch((error) => {
        throw fileError(`tokenFile ${user.tokenFile}`, error)
      })
      if (token) headers.authorization = `Bearer ${token}`
      else if (user.username && user.password) {
        headers.authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`
      }
    }
    if (user.as) headers['impersonate-user'] = user.as
    return {headers, cert, key, exec: cred}
  }

  /** One HTTP exchange. Transport failures throw classified errors; any HTTP status is returned. */
  async request(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<KubeResponse> {
    const creds = await this.credentials()
    const response = await this.once(method, path, body, options, creds)
    // Like client-go: an exec credential the server rejects is refreshed once (shared with concurrent requests).
    if (response.status === 401 && creds.exec) return this.once(method, path, body, options, await this.credentials(creds.exec))
    return response
  }

  private async once(method: string, path: string, body: unknown, options: RequestOptions, creds: Credentials): Promise<KubeResponse> {
    const insecure = this.context.cluster['insecure-skip-tls-verify'] === true
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const base = this.server.pathname.replace(/\/$/, '')
    const started = performance.now()
    const signals = [this.options.timeoutMs > 0 ? AbortSignal.timeout(this.options.timeoutMs) : undefined, this.options.signal]
    const active = signals.filter((s): s is AbortSignal => s !== undefined)
    const signal = active.length > 1 ? AbortSignal.any(active) : active[0]
    return new Promise<KubeResponse>((resolve, reject) => {
      const req = https.request(
        {
          protocol: 'https:',
          hostname: this.server.hostname.replace(/^\[|\]$/g, ''),
          port: this.server.port || 443,
          path: base + path,
          method,
          ca: this.ca,
          cert: creds.cert,
          key: creds.key,
          servername: this.context.cluster['tls-server-name'] || undefined,
          // Verification happens by hand below so that the outcome can be reported even when it is skipped.
          rejectUnauthorized: false,
          // Clusters on the same server share its keep-alive connections; checkTls runs on reused sockets too.
          agent: agentFor(this.server),
          signal,
          headers: {
            accept: options.accept ?? 'application/json',
            'user-agent': 'fleet',
            ...creds.headers,
            ...(payload ? {'content-type': options.contentType ?? 'application/json', 'content-length': String(payload.length)} : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', (error) => reject(classifyTransportError(abortReason(error), this.serverUrl)))
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              headers: res.headers,
              elapsedMs: performance.now() - started,
              tlsAuthorized: tlsState.authorized,
              tlsError: tlsState.error,
            })
          })
        },
      )
      const tlsState: {authorized: boolean; error?: string} = {authorized: false}
      const checkTls = (tls: TLSSocket) => {
        tlsState.authorized = tls.authorized
        const verifyError = tls.authorizationError ? String((tls.authorizationError as any).code ?? tls.authorizationError) : undefined
        tlsState.error = verifyError
        if (!tls.authorized && !insecure) {
          const err = Object.assign(new Error(String(tls.authorizationError)), {code: verifyError})
          req.destroy(err)
        } else if (!insecure) {
          // The chain verified; check the name as Node would (rejectUnauthorized=false skips it).
          const nameError = checkServerName(tls, this.context.cluster['tls-server-name'] || this.server.hostname)
          if (nameError) req.destroy(nameError)
        }
      }
      req.on('socket', (socket) => {
        // A kept-alive socket was verified for whoever opened it (perhaps a cluster that skips verification): check again.
        if (req.reusedSocket) checkTls(socket as TLSSocket)
        else socket.once('secureConnect', () => checkTls(socket as TLSSocket))
      })
      req.on('error', (error) => reject(classifyTransportError(abortReason(error), this.serverUrl)))
      if (payload) req.write(payload)
      req.end()
    })
  }

  /** Sends a request and parses the JSON answer; an HTTP error becomes a classified error naming `what`. */
  async json<T>(method: string, path: string, body?: unknown, what = `${method} ${path}`): Promise<T> {
    const res = await this.request(method, path, body)
    if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, what)
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
