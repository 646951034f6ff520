import {spawn} from 'node:child_process'

import {ConfigError, FleetError} from '../base/errors.js'
import {mapLimit} from '../base/concurrency.js'
import {asError} from '../base/errors.js'
import {contextFromKubeconfigText} from '../kubeconfig/from-text.js'
import {makeRef} from './ref.js'
import {CachedProvider} from './cached-provider.js'
import type {ClusterRef} from './types.js'

/**
 * multicluster-runtime's kind provider, through the `kind` command: `kind get clusters` names the clusters (a prefix
 * only filters them), `kind get kubeconfig --name N` gives each one's kubeconfig.
 */
export interface KindOptions {
  /** The kind executable (default `kind`, looked up on PATH). */
  command?: string
  prefix?: string
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export class KindProvider extends CachedProvider {
  constructor(
    name: string,
    private readonly options: KindOptions = {},
  ) {
    super(name, 'kind')
  }

  private get command(): string {
    return this.options.command ?? 'kind'
  }

  private run(args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.timeoutMs ?? 60_000
      const child = spawn(this.command, args, {env: this.options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe']})
      // Our own timer: spawn's `timeout` option keeps the process alive until it fires when the command does not exist.
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new FleetError('plugin', `${this.describe()}: ${this.command} ${args.join(' ')}: no answer within ${timeoutMs / 1000}s`))
      }, timeoutMs)
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        if (error.code === 'ENOENT') {
          reject(
            new ConfigError(
              `${this.describe()}: the "${this.command}" command was not found${this.command.includes('/') ? '' : ' on PATH'}; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or set "command" for this provider in the fleet config`,
            ),
          )
        } else reject(new FleetError('plugin', `${this.describe()}: ${this.command}: ${error.message}`))
      })
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({code, stdout, stderr})
      })
    })
  }

  private failure(args: string[], r: Run): Error {
    const last = r.stderr.trim().split('\n').pop()
    return new FleetError('plugin', `${this.command} ${args.join(' ')} exited with ${r.code ?? 'a signal'}${last ? `: ${last}` : ''}`)
  }

  protected async build(): Promise<ClusterRef[]> {
    const args = ['get', 'clusters']
    const r = await this.run(args)
    if (r.code !== 0) throw new FleetError('plugin', `${this.describe()}: ${this.failure(args, r).message}`)
    const names = parseKindClusters(r.stdout).filter((n) => !this.options.prefix || n.startsWith(this.options.prefix))
    return mapLimit(names, 4, (name) => this.ref(name))
  }

  private async ref(name: string): Promise<ClusterRef> {
    const args = ['get', 'kubeconfig', '--name', name]
    const fields = {name, provider: this.name, labels: {}, source: {kind: 'kind' as const, name}}
    let found
    try {
      const r = await this.run(args)
      if (r.code !== 0) throw this.failure(args, r)
      found = contextFromKubeconfigText(r.stdout, `kind cluster ${name}`)
    } catch (error) {
      return makeRef(fields, asError(error))
    }
    return makeRef({...fields, source: {...fields.source, context: found.contextName}}, found)
  }

}

/** One cluster name per line; kind says "No kind clusters found." on stderr, so stdout is simply empty then. */
export function parseKindClusters(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^No kind clusters found/.test(l))
}
