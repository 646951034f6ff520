import {ConfigError, FleetError} from '../cli/errors.js'
import type {HubSpec} from '../config/fleet-config.js'
import {KubeClient} from '../kube/client.js'
import {ExecCredentialRunner} from '../kube/exec-credential.js'
import {authKind} from '../kubeconfig/credentials.js'
import {type ResolvedContext, loadMerged, mergeKubeconfigs, precedence, resolveContext} from '../kubeconfig/loading-rules.js'
import {parseKubeconfig} from '../kubeconfig/parse.js'
import {registerSecret} from '../kubeconfig/redact.js'
import type {ClusterRef} from './types.js'

/**
 * What hub-backed providers share: the hub is a kubeconfig context, read through fleet's own KubeClient; objects are
 * listed page by page; kubeconfigs found in Secrets are parsed so that errors name the Secret.
 */
export interface HubOptions {
  requestTimeoutMs: number
  env?: NodeJS.ProcessEnv
  exec?: ExecCredentialRunner
}

export interface ObjectMeta {
  name: string
  namespace?: string
  uid?: string
  labels?: Record<string, string>
  deletionTimestamp?: string
}

export interface Secret {
  metadata: ObjectMeta
  type?: string
  data?: Record<string, string>
}

interface ListPage<T> {
  items?: T[]
  metadata?: {continue?: string}
}

const PAGE_SIZE = 500

/** Resolves the hub's kubeconfig context: the given files (or the loading rules) and context (or their current one). */
export async function resolveHubContext(spec: HubSpec = {}, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedContext> {
  const merged = spec.kubeconfig ? await loadMerged(spec.kubeconfig, {explicit: true}) : await loadMerged(precedence(env).paths)
  const name = spec.context ?? merged.currentContext
  if (!name) {
    const where = spec.kubeconfig?.join(':') ?? (env.KUBECONFIG ? `KUBECONFIG=${env.KUBECONFIG}` : precedence(env).paths[0])
    throw new ConfigError(`no hub context: ${where} sets no current-context; set hub.context in the fleet config or pass --context`)
  }
  return resolveContext(merged, name)
}

export class Hub {
  private contextPromise?: Promise<ResolvedContext>
  private clientPromise?: Promise<KubeClient>

  constructor(
    private readonly spec: HubSpec | undefined,
    private readonly options: HubOptions,
    /** Names the provider in errors. */
    private readonly owner: string,
  ) {}

  context(): Promise<ResolvedContext> {
    this.contextPromise ??= resolveHubContext(this.spec, this.options.env).catch((error) => {
      throw this.wrap(error)
    })
    return this.contextPromise
  }

  /** The hub's context name, for `source.hub`. */
  async name(): Promise<string> {
    return (await this.context()).contextName
  }

  private client(): Promise<KubeClient> {
    this.clientPromise ??= this.context().then((ctx) =>
      KubeClient.connect(ctx, {
        timeoutMs: this.options.requestTimeoutMs,
        clusterName: `hub ${ctx.contextName}`,
        exec: this.options.exec ?? new ExecCredentialRunner({env: this.options.env}),
      }).catch((error) => {
        throw this.wrap(error)
      }),
    )
    return this.clientPromise
  }

  private wrap(error: unknown): FleetError {
    const e = error instanceof FleetError ? error : new FleetError('internal', (error as Error).message)
    const prefix = `${this.owner}: `
    if (e.message.startsWith(prefix)) return e
    return new FleetError(e.kind, prefix + e.message, {cause: error, exitCode: e.exitCode})
  }

  /** GET returning the parsed object, or undefined for 404. */
  async get<T>(path: string, what: string): Promise<T | undefined> {
    const client = await this.client()
    try {
      return await client.json<T>('GET', path, undefined, `${what} on hub ${client.context.contextName}`)
    } catch (error) {
      if (error instanceof FleetError && error.kind === 'not-found') return undefined
      throw this.wrap(error)
    }
  }

  /** Every item of a list, following `continue` tokens so a big fleet is read in bounded pages. */
  async list<T>(path: string, what: string, query: Record<string, string | undefined> = {}): Promise<T[]> {
    const client = await this.client()
    const items: T[] = []
    let cont: string | undefined
    do {
      const params = new URLSearchParams({limit: String(PAGE_SIZE)})
      for (const [k, v] of Object.entries(query)) if (v) params.set(k, v)
      if (cont) params.set('continue', cont)
      let page: ListPage<T>
      try {
        page = await client.json<ListPage<T>>('GET', `${path}?${params}`, undefined, `${what} on hub ${client.context.contextName}`)
      } catch (error) {
        // A list never 404s for lack of objects: the API itself is missing.
        if (error instanceof FleetError && error.kind === 'not-found') {
          throw this.wrap(new FleetError('api-missing', `${what}: hub ${client.context.contextName} does not serve ${path} (is the API installed?)`))
        }
        throw this.wrap(error)
      }
      items.push(...(page.items ?? []))
      cont = page.metadata?.continue || undefined
    } while (cont)
    return items
  }

  /** The versions of an API group the hub serves (empty when it serves none). */
  async groupVersions(group: string): Promise<string[]> {
    const found = await this.get<{versions?: {version: string}[]}>(`/apis/${group}`, `discover ${group}`)
    return found?.versions?.map((v) => v.version) ?? []
  }
}

/** `/api/v1/namespaces/{ns}/secrets` or `/api/v1/secrets` for every namespace. */
export function collectionPath(prefix: string, resource: string, namespace?: string): string {
  return namespace ? `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource}` : `${prefix}/${resource}`
}

/** The text of one data key of a Secret, or undefined when the key is absent or empty (as upstream treats both). */
export function secretText(secret: Secret, key: string): string | undefined {
  const value = secret.data?.[key]
  if (!value) return undefined
  return Buffer.from(value, 'base64').toString('utf8')
}

/**
 * Parses a kubeconfig held somewhere other than a file (a Secret, kind's output) and resolves its current-context.
 * `where` names the source in errors. File paths inside are kept as written: relative paths have no meaningful base.
 */
export function contextFromKubeconfigText(text: string, where: string, context?: string): ResolvedContext {
  const file = parseKubeconfig(text, where)
  for (const user of file.users.values()) {
    registerSecret(user.token)
    registerSecret(user['client-key-data'])
    registerSecret(user.password)
  }
  const merged = mergeKubeconfigs([file])
  const name = context ?? merged.currentContext
  if (!name) throw new ConfigError(`${where}: the kubeconfig sets no current-context`)
  const resolved = resolveContext(merged, name)
  // resolveContext makes paths absolute against the file's directory; a Secret has none, so use the entries verbatim.
  return {
    ...resolved,
    cluster: merged.clusters.get(resolved.clusterName)!.entry,
    user: resolved.userName ? merged.users.get(resolved.userName)!.entry : {},
  }
}

/** The kubeconfig in one data key of a Secret, resolved at its current-context; or why there is none usable. */
export function kubeconfigInSecret(secret: Secret, key: string): ResolvedContext | Error {
  const {name, namespace} = secret.metadata
  const text = secretText(secret, key)
  if (text === undefined) return new Error(`Secret ${namespace}/${name} has no data key "${key}"`)
  try {
    return contextFromKubeconfigText(text, `secret ${namespace}/${name} key ${key}`)
  } catch (error) {
    return asError(error)
  }
}

/** The parts of a ClusterRef a provider decides; the rest follows from the resolved context (or the failure). */
export type RefFields = Pick<ClusterRef, 'name' | 'provider' | 'source' | 'labels'> & Partial<Pick<ClusterRef, 'aliases' | 'clusterId' | 'clusterIdSource'>>

/**
 * Builds a ref from what the provider found: a context to connect with (ready unless `notReady` says why not), or the
 * error that prevented one (not ready, with the error as the reason; resolve() fails with it).
 */
export function makeRef(fields: RefFields, found: ResolvedContext | Error, notReady?: string): ClusterRef {
  const base = {aliases: [], ...fields}
  if (found instanceof Error) {
    return {
      ...base,
      auth: 'none',
      ready: false,
      reason: found.message,
      resolve: async () => {
        throw found instanceof FleetError ? found : new ConfigError(found.message)
      },
    }
  }
  const server = found.cluster.server
  const reason = server ? notReady : `${found.clusterFile}: cluster "${found.clusterName}" has no server`
  return {...base, server, auth: authKind(found.user), ready: !reason, reason, resolve: async () => found}
}

/** Runs `fn` over items with at most `limit` at once, keeping order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker))
  return out
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}
