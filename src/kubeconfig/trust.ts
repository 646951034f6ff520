import {isAbsolute, normalize, sep} from 'node:path'

import {type Kuberc, loadKuberc, pluginAllowed} from './kuberc.js'
import type {ResolvedContext} from './loading-rules.js'
import type {ContextOrigin, UserEntry} from './types.js'

export type {ContextOrigin} from './types.js'

/** What the operator allows hub data to use, from the fleet configuration (one list for the file, one per provider). */
export interface DataAllowances {
  /** Exec commands, matched as kubectl matches its credentialPluginAllowlist (a bare name through PATH, or a path). */
  credentialPluginAllowlist: string[]
  /** Absolute paths of files, or directories (ending in /) whose files, hub data may name. */
  localFileAllowlist: string[]
  /** Where the lists are written, for messages: `/etc/fleet.yaml: providers[1]`. */
  where: string
}

/**
 * Environment variables data may never set for a program it does not choose either: they choose what actually runs (the
 * dynamic loader's preload and search paths, PATH, interpreters' start-up hooks). Upstream passes a profile's
 * additional-envs to the plugin as given; fleet passes every other variable the same way and refuses the cluster when
 * one of these is among them.
 */
const FORBIDDEN_DATA_ENV = /^(PATH|LD_[A-Z0-9_]*|DYLD_[A-Z0-9_]*|NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PERL5LIB|PERL5OPT|RUBYLIB|RUBYOPT|GCONV_PATH|KUBERNETES_EXEC_INFO)$/

/** The fields of a kubeconfig entry that name a local file (an exec command is a program: the plugin rules decide). */
function namedFiles(ctx: ResolvedContext): Array<{field: string; path: string}> {
  const out: Array<{field: string; path: string}> = []
  const add = (field: string, value: unknown) => {
    if (typeof value === 'string' && value !== '') out.push({field, path: value})
  }
  add('certificate-authority', ctx.cluster['certificate-authority'])
  add('client-certificate', ctx.user['client-certificate'])
  add('client-key', ctx.user['client-key'])
  add('tokenFile', ctx.user.tokenFile)
  return out
}

/** Why a context may not be used: a plugin refused (kind `plugin`) or a file or variable hub data may not name (`config`). */
export interface Refusal {
  kind: 'plugin' | 'config'
  message: string
}

/** How a plugin's use is judged, for `fleet auth plugins` and for messages. */
export interface PluginVerdict {
  allowed: boolean
  /** Why it is refused (one line), or what allowed it when the policy had to be consulted. */
  reason?: string
  /** The line the operator would add to allow it (data-sourced commands only). */
  allowWith?: string
}

/**
 * The one place that decides whether a context may be used: providers mark a cluster not ready with its answer before
 * anything runs, and the connector refuses to connect with it (so no path around the providers runs a plugin or reads a
 * file it refused). Made once per command; the kuberc is read on first use.
 */
export class TrustPolicy {
  private kurcPromise?: Promise<Kuberc | undefined>
  private global?: DataAllowances
  private readonly perProvider = new Map<string, DataAllowances>()
  // pluginAllowed looks commands up on PATH: once per command and list, not per cluster.
  private readonly verdicts = new Map<string, {allowed: boolean; reason?: string}>()

  constructor(private readonly options: {kuberc?: string; env?: NodeJS.ProcessEnv; loadKuberc?: () => Promise<Kuberc | undefined>} = {}) {}

  /** A policy that reads no kuberc: for code that connects outside a command (tests, the bench's reference checks). */
  static strict(): TrustPolicy {
    return new TrustPolicy({loadKuberc: async () => undefined})
  }

  private get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env
  }

  /** The user's kuberc (kubectl's rules: --kuberc, KUBERC, ~/.kube/kuberc, KUBECTL_KUBERC=false), read once. */
  kuberc(): Promise<Kuberc | undefined> {
    this.kurcPromise ??= this.options.loadKuberc ? this.options.loadKuberc() : loadKuberc({flag: this.options.kuberc, env: this.env})
    return this.kurcPromise
  }

  /** The fleet configuration the run read, if any: refusals say which file to add an allowance to. */
  configPath?: string

  /** The fleet configuration's allowances: for every hub (provider undefined) or for one provider. */
  allow(provider: string | undefined, allowances: DataAllowances): void {
    if (provider === undefined) this.global = allowances
    else this.perProvider.set(provider, allowances)
  }

  private allowancesFor(provider: string | undefined): DataAllowances[] {
    const own = provider === undefined ? undefined : this.perProvider.get(provider)
    return [own, this.global].filter((a): a is DataAllowances => a !== undefined)
  }

  private verdict(key: string, decide: () => {allowed: boolean; reason?: string}): {allowed: boolean; reason?: string} {
    let v = this.verdicts.get(key)
    if (!v) this.verdicts.set(key, (v = decide()))
    return v
  }

  // One verdict object per command, made once: a fleet of a thousand exec users asks about the same few commands.
  private readonly kubercVerdicts = new Map<string, {allowed: boolean; reason?: string; listed: boolean}>()

  /** Whether the kuberc allows a command (kubectl's semantics; no kuberc or AllowAll allows everything). */
  private async kurcVerdict(command: string): Promise<{allowed: boolean; reason?: string; listed: boolean}> {
    const kuberc = await this.kuberc()
    let v = this.kubercVerdicts.get(command)
    if (!v) {
      const d = pluginAllowed(kuberc, command, this.env)
      this.kubercVerdicts.set(command, (v = {...d, listed: kuberc?.policy === 'Allowlist' && d.allowed}))
    }
    return v
  }

  /** Whether an allowlist of the fleet configuration names a command, matched as kubectl matches its allowlist. */
  private listed(command: string, a: DataAllowances): boolean {
    if (a.credentialPluginAllowlist.length === 0) return false
    const list: Kuberc = {path: a.where, policy: 'Allowlist', allowlist: a.credentialPluginAllowlist}
    return this.verdict(`${a.where}\u0000${command}`, () => pluginAllowed(list, command, this.env)).allowed
  }

  /** The line that would allow a data-sourced command: in the provider's entry when there is one, else file-wide. */
  private allowLine(command: string, origin: ContextOrigin): string {
    const entry = `credentialPluginAllowlist: [{command: ${command}}]`
    const file = this.configPath ?? 'the fleet configuration'
    return origin.provider ? `${entry} to provider "${origin.provider}" in ${file}` : `${entry} at the top of ${file}`
  }

  /** Whether the exec plugin of a context may run, and why (for `fleet auth plugins` and for the refusal). */
  async plugin(command: string, origin: ContextOrigin | undefined): Promise<PluginVerdict> {
    const kuberc = await this.kurcVerdict(command)
    if (origin && !origin.commandFromUser) {
      const by = this.allowancesFor(origin.provider).find((a) => this.listed(command, a))
      if (!by && !kuberc.listed) {
        return {
          allowed: false,
          reason: `exec plugin "${command}" is named by hub data, and hub data may not run programs`,
          allowWith: this.allowLine(command, origin),
        }
      }
      // Allowed for data; the kuberc (if any) must still let it run, as for any plugin.
      if (!kuberc.allowed) return {allowed: false, reason: kuberc.reason}
      return {allowed: true, reason: by ? `credentialPluginAllowlist of ${by.where}` : `credentialPluginAllowlist of ${(await this.kuberc())!.path}`}
    }
    if (!kuberc.allowed) return {allowed: false, reason: kuberc.reason}
    const k = await this.kuberc()
    return {allowed: true, reason: k && k.policy === 'Allowlist' ? `credentialPluginAllowlist of ${k.path}` : undefined}
  }

  /**
   * Why this context may not be used, in one line naming where it came from, what it asked for, and how to allow it;
   * undefined when it may. Nothing is read or run to decide (a command may be looked up on PATH).
   */
  async problem(ctx: ResolvedContext): Promise<Refusal | undefined> {
    const origin = ctx.origin
    const exec = ctx.user.exec
    if (!origin && !exec) return undefined
    const who = origin ? origin.object : `context "${ctx.contextName}"${ctx.userFile ? ` (${ctx.userFile})` : ''}`
    if (origin) {
      const refused = this.refusedFiles(ctx, origin)
      if (refused) return {kind: 'config', message: `${who}: ${refused}`}
      const env = this.refusedEnv(ctx.user, origin)
      if (env) return {kind: 'config', message: `${who}: ${env}`}
    }
    if (exec && typeof exec.command === 'string' && exec.command !== '') {
      const v = await this.plugin(exec.command, origin)
      if (!v.allowed) return {kind: 'plugin', message: `${who}: ${v.reason}${v.allowWith ? `; to allow it, add ${v.allowWith}` : ''}`}
    }
    return undefined
  }

  /** A file named by hub data that no allowlist covers. */
  private refusedFiles(ctx: ResolvedContext, origin: ContextOrigin): string | undefined {
    const lists = this.allowancesFor(origin.provider).flatMap((a) => a.localFileAllowlist)
    for (const {field, path} of namedFiles(ctx)) {
      if (lists.some((allowed) => fileAllowed(path, allowed))) continue
      const file = this.configPath ?? 'the fleet configuration'
      const where = origin.provider ? `to provider "${origin.provider}" in ${file}` : `at the top of ${file}`
      return `${field} names the local file ${path}, and hub data may not read local files; to allow it, add localFileAllowlist: [${path}] ${where}`
    }
    return undefined
  }

  /** A variable hub data set for an exec plugin that would choose what runs (PATH, the loader's preload, ...). */
  private refusedEnv(user: UserEntry, origin: ContextOrigin): string | undefined {
    const fromData = origin.commandFromUser ? (origin.dataEnv ?? []) : (user.exec?.env ?? []).map((e) => e.name)
    const bad = fromData.filter((name) => FORBIDDEN_DATA_ENV.test(name))
    if (bad.length === 0) return undefined
    return `hub data sets ${bad.join(', ')} for exec plugin "${user.exec?.command ?? ''}", which hub data may never set (it chooses what runs)`
  }
}

/** A path is allowed by an entry naming it, or by a directory entry (ending in /) it lies under. Both normalised, absolute. */
function fileAllowed(path: string, allowed: string): boolean {
  if (!isAbsolute(path) || !isAbsolute(allowed)) return false
  const p = normalize(path)
  if (allowed.endsWith('/')) return p.startsWith(normalize(allowed).replace(/\/?$/, sep))
  return p === normalize(allowed)
}

/** Whether a variable name is one hub data may never set (exported for the docs test and `fleet auth plugins`). */
export function forbiddenDataEnv(name: string): boolean {
  return FORBIDDEN_DATA_ENV.test(name)
}
