import {ConfigError, FleetError} from '../../base/errors.js'
import type {HubSpec} from '../../config/fleet-config.js'
import type {KubeClient} from '../../kube/client.js'
import type {ExecCredentialRunner} from '../../kube/exec-credential.js'
import type {RequestLog} from '../../kube/request-log.js'
import {inClusterAvailable, inClusterContext, useInCluster} from '../../kubeconfig/in-cluster.js'
import {type ResolvedContext, loadMerged, precedence, resolveContext} from '../../kubeconfig/loading-rules.js'

/**
 * What hub-backed providers share: the hub is a kubeconfig context, read through fleet's own KubeClient; objects are
 * listed page by page; kubeconfigs found in Secrets are parsed so that errors name the Secret.
 */
export interface HubOptions {
  requestTimeoutMs: number
  env?: NodeJS.ProcessEnv
  /** The command's one exec credential runner: a plugin shared by the hub and its members runs once. */
  exec: ExecCredentialRunner
  /** Request logging (-v 6 and up) for the hub's client. */
  log?: RequestLog
}

interface ListPage<T> {
  items?: T[]
  metadata?: {continue?: string}
}

const PAGE_SIZE = 500

/**
 * The one hub rule's last step, shared by every hub fleet reads or writes (providers, creds generate/list/rotate):
 * the given files (they must exist, as with --kubeconfig) and context, or else the loading rules (KUBECONFIG, else
 * ~/.kube/config) and their current context, or else, when those find nothing at all, the in-cluster configuration of a
 * Pod (client-go's order). With nothing found the message says what was looked for.
 */
export async function resolveHubContext(spec: HubSpec = {}, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedContext> {
  if (spec.kubeconfig?.length) {
    const merged = await loadMerged(spec.kubeconfig, {explicit: true})
    const name = spec.context ?? merged.currentContext
    if (!name) throw new ConfigError(`no hub context: ${spec.kubeconfig.join(':')} sets no current-context; name one with --hub-context (or --context), or hub.context in the fleet configuration`)
    return resolveContext(merged, name)
  }
  const {paths} = precedence(env)
  const merged = await loadMerged(paths)
  if (!spec.context && (await useInCluster(env))) return inClusterContext(env)
  if (merged.files.length === 0) {
    const looked = env.KUBECONFIG ? `none of the files in KUBECONFIG=${env.KUBECONFIG} exists` : `KUBECONFIG is unset and ${paths[0]} does not exist`
    const pod = inClusterAvailable(env) ? '' : ', and this is not a Pod (KUBERNETES_SERVICE_HOST is unset)'
    throw new ConfigError(`no kubeconfig found: ${looked}${pod}; pass --kubeconfig or --hub-kubeconfig`)
  }
  const name = spec.context ?? merged.currentContext
  if (!name) {
    const where = merged.files.map((f) => f.path).join(':')
    throw new ConfigError(`no hub context: ${where} sets no current-context; name one with --hub-context (or --context), or hub.context in the fleet configuration`)
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
    /** The server the client talks to, from the context's (kcp: the server's base, paths then name the workspace). */
    private readonly serverOf: (server: string) => string = (server) => server,
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
    // The HTTP client (and with it node:https and node:tls) is loaded only when a hub is contacted: commands that list
    // file clusters never pay for it (docs/decisions.md, "What is left at start-up").
    this.clientPromise ??= this.context().then((ctx) =>
      import('../../kube/client.js')
        .then(({KubeClient}) =>
          KubeClient.connect(ctx.cluster.server ? {...ctx, cluster: {...ctx.cluster, server: this.serverOf(ctx.cluster.server)}} : ctx, {
            timeoutMs: this.options.requestTimeoutMs,
            clusterName: `hub ${ctx.contextName}`,
            exec: this.options.exec,
            log: this.options.log,
          }),
        )
        .catch((error) => {
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

