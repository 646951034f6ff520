import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {readFile} from 'node:fs/promises'

import {FleetError} from '../cli/errors.js'
import {registerSecret, scrub} from '../kubeconfig/redact.js'
import type {ClusterEntry, ExecConfig} from '../kubeconfig/types.js'

/**
 * Runs client-go exec credential plugins the way client-go does, which @kubernetes/client-node does not:
 * KUBERNETES_EXEC_INFO with spec.cluster when provideClusterInfo, interactiveMode honoured (never interactive without a
 * TTY), a timeout, one run shared by concurrent callers, a cache per (exec config, cluster) until expirationTimestamp,
 * and a forced refresh after a 401.
 */
export interface ExecCredential {
  token?: string
  clientCertificateData?: string
  clientKeyData?: string
  expirationTimestamp?: string
}

export const EXEC_CLUSTER_CONFIG_EXTENSION = 'client.authentication.k8s.io/exec'
const SUPPORTED = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']
// Refresh a little before expiry so a credential does not lapse between the check and the request.
const EXPIRY_SKEW_MS = 10_000

export interface ExecRunnerOptions {
  timeoutMs?: number
  /** Whether a terminal is available for interactive plugins (stdin and stdout TTYs, not CI, not machine output). */
  interactiveAvailable?: boolean
  /** Where the plugin's stderr goes (client-go passes it through). */
  stderr?: NodeJS.WritableStream
  env?: NodeJS.ProcessEnv
}

interface CacheEntry {
  promise: Promise<ExecCredential>
  credential?: ExecCredential
}

export class ExecCredentialRunner {
  private readonly cache = new Map<string, CacheEntry>()
  /** How many times a plugin process was started, by cache key (visible for tests and verbose output). */
  runs = 0

  constructor(private readonly options: ExecRunnerOptions = {}) {}

  static key(exec: ExecConfig, cluster: ClusterEntry): string {
    return createHash('sha256').update(JSON.stringify([exec, cluster])).digest('hex')
  }

  async get(exec: ExecConfig, cluster: ClusterEntry, options: {refresh?: boolean} = {}): Promise<ExecCredential> {
    const key = ExecCredentialRunner.key(exec, cluster)
    const cached = this.cache.get(key)
    if (cached && !options.refresh) {
      if (!cached.credential) return cached.promise
      const exp = cached.credential.expirationTimestamp
      if (!exp || Date.parse(exp) - EXPIRY_SKEW_MS > Date.now()) return cached.credential
    }
    const entry: CacheEntry = {promise: this.run(exec, cluster)}
    this.cache.set(key, entry)
    try {
      entry.credential = await entry.promise
      return entry.credential
    } catch (error) {
      // A failure is not cached: the next caller tries again.
      if (this.cache.get(key) === entry) this.cache.delete(key)
      throw error
    }
  }

  private interactive(exec: ExecConfig): boolean {
    const mode = exec.interactiveMode ?? (exec.apiVersion === 'client.authentication.k8s.io/v1' ? undefined : 'IfAvailable')
    const available = this.options.interactiveAvailable ?? false
    if (mode === 'Always' && !available) {
      throw new FleetError('plugin', `exec plugin ${exec.command}: interactiveMode is Always but no terminal is available`)
    }
    return mode !== 'Never' && available
  }

  private async execInfo(exec: ExecConfig, cluster: ClusterEntry, interactive: boolean): Promise<string> {
    const spec: Record<string, unknown> = {interactive}
    if (exec.provideClusterInfo) {
      let caData = cluster['certificate-authority-data']
      if (!caData && cluster['certificate-authority']) {
        caData = (await readFile(cluster['certificate-authority'])).toString('base64')
      }
      const ext = cluster.extensions?.find((e) => e.name === EXEC_CLUSTER_CONFIG_EXTENSION)
      spec.cluster = {
        server: cluster.server,
        'tls-server-name': cluster['tls-server-name'],
        'insecure-skip-tls-verify': cluster['insecure-skip-tls-verify'],
        'certificate-authority-data': caData,
        'proxy-url': cluster['proxy-url'],
        'disable-compression': cluster['disable-compression'],
        config: ext?.extension,
      }
    }
    return JSON.stringify({apiVersion: exec.apiVersion, kind: 'ExecCredential', spec})
  }

  private async run(exec: ExecConfig, cluster: ClusterEntry): Promise<ExecCredential> {
    const command = exec.command
    if (!command) throw new FleetError('plugin', 'exec plugin: no command configured')
    if (!exec.apiVersion || !SUPPORTED.includes(exec.apiVersion)) {
      throw new FleetError('plugin', `exec plugin ${command}: unsupported apiVersion "${exec.apiVersion ?? ''}"`)
    }
    const interactive = this.interactive(exec)
    const env = {...(this.options.env ?? process.env)}
    for (const e of exec.env ?? []) env[e.name] = e.value
    env.KUBERNETES_EXEC_INFO = await this.execInfo(exec, cluster, interactive)
    const timeoutMs = this.options.timeoutMs ?? 60_000
    this.runs++

    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(command, exec.args ?? [], {
        env,
        stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
      })
      const out: Buffer[] = []
      let errText = ''
      child.stdout.on('data', (d: Buffer) => out.push(d))
      child.stderr.on('data', (d: Buffer) => {
        errText += d.toString()
        ;(this.options.stderr ?? process.stderr).write(scrub(d.toString()))
      })
      child.on('error', (error: NodeJS.ErrnoException) => {
        const hint = exec.installHint ? `; ${exec.installHint.trim().split('\n')[0]}` : ''
        const why = error.code === 'ENOENT' ? 'executable not found' : error.message
        reject(new FleetError('plugin', `exec plugin ${command}: ${why}${hint}`))
      })
      child.on('close', (code, signal) => {
        if (signal === 'SIGKILL' && code === null) {
          reject(new FleetError('plugin', `exec plugin ${command}: no answer within ${Math.round(timeoutMs / 1000)}s`))
        } else if (code !== 0) {
          const last = errText.trim().split('\n').pop()
          reject(new FleetError('plugin', `exec plugin ${command} exited with ${code ?? signal}${last ? `: ${scrub(last)}` : ''}`))
        } else resolve(Buffer.concat(out).toString('utf8'))
      })
    })
    return parseExecOutput(stdout, exec.apiVersion, command)
  }
}

export function parseExecOutput(stdout: string, apiVersion: string, command: string): ExecCredential {
  let value: any
  try {
    value = JSON.parse(stdout)
  } catch {
    throw new FleetError('plugin', `exec plugin ${command}: output is not valid JSON`)
  }
  if (!value || value.kind !== 'ExecCredential') throw new FleetError('plugin', `exec plugin ${command}: output is not an ExecCredential`)
  if (value.apiVersion !== apiVersion) {
    throw new FleetError('plugin', `exec plugin ${command}: returned apiVersion "${value.apiVersion}", expected "${apiVersion}"`)
  }
  const status = value.status
  if (!status || typeof status !== 'object') throw new FleetError('plugin', `exec plugin ${command}: output has no status`)
  const cred: ExecCredential = {
    token: typeof status.token === 'string' && status.token !== '' ? status.token : undefined,
    clientCertificateData: status.clientCertificateData || undefined,
    clientKeyData: status.clientKeyData || undefined,
    expirationTimestamp: status.expirationTimestamp || undefined,
  }
  if (Boolean(cred.clientCertificateData) !== Boolean(cred.clientKeyData)) {
    throw new FleetError('plugin', `exec plugin ${command}: clientCertificateData and clientKeyData must be given together`)
  }
  if (!cred.token && !cred.clientCertificateData) {
    throw new FleetError('plugin', `exec plugin ${command}: status has neither a token nor a client certificate`)
  }
  if (cred.expirationTimestamp && Number.isNaN(Date.parse(cred.expirationTimestamp))) {
    throw new FleetError('plugin', `exec plugin ${command}: expirationTimestamp "${cred.expirationTimestamp}" is not a time`)
  }
  registerSecret(cred.token)
  registerSecret(cred.clientKeyData)
  return cred
}
