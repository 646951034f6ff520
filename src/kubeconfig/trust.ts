import { realpath } from 'node:fs/promises';
import { isAbsolute, normalize, sep } from 'node:path';

import { DATA_ENV_NAME, dataEnvProblem } from '../base/env-names.js';
import { interpreterKind } from '../base/interpreter.js';
import { type Invocation, approveInvocation } from '../base/invocation.js';
import { type Kuberc, type Resolved, goClean, loadKuberc, pluginAllowed, resolveProgram } from './kuberc.js';
import type { ResolvedContext } from './loading-rules.js';
import type { ContextOrigin, ExecConfig, UserEntry } from './types.js';

export type { ContextOrigin } from './types.js';
export { dataEnvProblem } from '../base/env-names.js';

/**
 * One entry of fleet.yaml's credentialPluginAllowlist: a command data may name (matched as kubectl matches its
 * allowlist), the variables data may set for it (by name; none unless listed), and, when given, the one argument list
 * data may give it, word for word. An entry without `args` allows any arguments, except for an interpreter
 * (src/base/interpreter.ts), which then runs for data only with none.
 */
export interface PluginAllowance {
  command: string;
  env: string[];
  args?: string[];
}

/** What the operator allows hub data to use, from the fleet configuration (one list for the file, one per provider). */
export interface DataAllowances {
  /** Exec commands, matched as kubectl matches its credentialPluginAllowlist (a bare name through PATH, or a path). */
  credentialPluginAllowlist: PluginAllowance[];
  /** Absolute paths of files, or directories (ending in /) whose files, hub data may name. */
  localFileAllowlist: string[];
  /** Where the lists are written, for messages: `/etc/fleet.yaml: providers[1]`. */
  where: string;
}

/** The fields of a kubeconfig entry that name a local file (an exec command is a program: the plugin rules decide). */
function namedFiles(ctx: ResolvedContext): Array<{ field: string; path: string }> {
  const out: Array<{ field: string; path: string }> = [];
  const add = (field: string, value: unknown) => {
    if (typeof value === 'string' && value !== '') out.push({ field, path: value });
  };
  add('certificate-authority', ctx.cluster['certificate-authority']);
  add('client-certificate', ctx.user['client-certificate']);
  add('client-key', ctx.user['client-key']);
  add('tokenFile', ctx.user.tokenFile);
  return out;
}

/** Why a context may not be used: a plugin refused (kind `plugin`) or a file or variable hub data may not name (`config`). */
export interface Refusal {
  kind: 'plugin' | 'config';
  message: string;
}

/** A context's exec plugin as approved: the Invocation that runs, or why it cannot be found (said when it is asked for). */
export interface ApprovedExec {
  exec: ExecConfig;
  invocation?: Invocation;
  unresolved?: string;
}

/** TrustPolicy.approve's answer: a refusal, or the context to use and its approved plugin (if it has one). */
export type Approval =
  | { refusal: Refusal; context?: undefined; plugin?: undefined }
  | { refusal?: undefined; context: ResolvedContext; plugin?: ApprovedExec };

/** How a plugin's use is judged, for `fleet auth plugins` and for messages. */
export interface PluginVerdict {
  allowed: boolean;
  /** Why it is refused (one line), or what allowed it when the policy had to be consulted. */
  reason?: string;
  /** The line the operator would add to allow it (data-sourced commands only). */
  allowWith?: string;
}

/**
 * The one place that decides whether a context may be used: providers mark a cluster not ready with its answer before
 * anything runs, and the connector refuses to connect with it (so no path around the providers runs a plugin or reads a
 * file it refused). Made once per command; the kuberc is read on first use.
 */
export class TrustPolicy {
  private kurcPromise?: Promise<Kuberc | undefined>;
  private global?: DataAllowances;
  private readonly perProvider = new Map<string, DataAllowances>();
  // pluginAllowed looks commands up on PATH: once per command and list, not per cluster.
  private readonly verdicts = new Map<string, { allowed: boolean; reason?: string }>();

  constructor(
    private readonly options: {
      kuberc?: string;
      env?: NodeJS.ProcessEnv;
      loadKuberc?: () => Promise<Kuberc | undefined>;
    } = {},
  ) {}

  /** A policy that reads no kuberc: for code that connects outside a command (tests, the bench's reference checks). */
  static strict(): TrustPolicy {
    return new TrustPolicy({ loadKuberc: async () => undefined });
  }

  private get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  /** The user's kuberc (kubectl's rules: --kuberc, KUBERC, ~/.kube/kuberc, KUBECTL_KUBERC=false), read once. */
  kuberc(): Promise<Kuberc | undefined> {
    this.kurcPromise ??= this.options.loadKuberc
      ? this.options.loadKuberc()
      : loadKuberc({ flag: this.options.kuberc, env: this.env });
    return this.kurcPromise;
  }

  /** The fleet configuration the run read, if any: refusals say which file to add an allowance to. */
  configPath?: string;
  /** Whether that file was found in the working directory rather than named (--fleet-config, FLEET_CONFIG). */
  configFound?: boolean;

  /** The fleet configuration's allowances: for every hub (provider undefined) or for one provider. */
  allow(provider: string | undefined, allowances: DataAllowances): void {
    if (provider === undefined) this.global = allowances;
    else this.perProvider.set(provider, allowances);
  }

  private allowancesFor(provider: string | undefined): DataAllowances[] {
    const own = provider === undefined ? undefined : this.perProvider.get(provider);
    return [own, this.global].filter((a): a is DataAllowances => a !== undefined);
  }

  private verdict(
    key: string,
    decide: () => { allowed: boolean; reason?: string },
  ): { allowed: boolean; reason?: string } {
    let v = this.verdicts.get(key);
    if (!v) this.verdicts.set(key, (v = decide()));
    return v;
  }

  // One verdict object per command, made once: a fleet of a thousand exec users asks about the same few commands.
  private readonly kubercVerdicts = new Map<string, { allowed: boolean; reason?: string; listed: boolean }>();

  /** Whether the kuberc allows a command (kubectl's semantics; no kuberc or AllowAll allows everything). */
  private async kurcVerdict(command: string): Promise<{ allowed: boolean; reason?: string; listed: boolean }> {
    const kuberc = await this.kuberc();
    let v = this.kubercVerdicts.get(command);
    if (!v) {
      const d = pluginAllowed(kuberc, command, this.env);
      this.kubercVerdicts.set(command, (v = { ...d, listed: kuberc?.policy === 'Allowlist' && d.allowed }));
    }
    return v;
  }

  /**
   * The fleet configuration's entries that name a command (for the provider, then file-wide), each matched as kubectl
   * matches one allowlist entry, with where it is written.
   */
  private entriesFor(command: string, provider: string | undefined): Array<PluginAllowance & { where: string }> {
    const out: Array<PluginAllowance & { where: string }> = [];
    for (const a of this.allowancesFor(provider)) {
      for (const [i, entry] of a.credentialPluginAllowlist.entries()) {
        const list: Kuberc = { path: a.where, policy: 'Allowlist', allowlist: [entry.command] };
        const key = `${a.where}\u0000${i}\u0000${command}`;
        if (this.verdict(key, () => pluginAllowed(list, command, this.env)).allowed)
          out.push({ ...entry, where: a.where });
      }
    }
    return out;
  }

  /** Where a line to allow something for data goes: in the provider's entry when there is one, else file-wide. */
  private allowPlace(origin: ContextOrigin): string {
    const file = this.configPath ?? 'the fleet configuration';
    return origin.provider ? `to provider "${origin.provider}" in ${file}` : `at the top of ${file}`;
  }

  /**
   * The line that would allow a data-sourced command with what the data gives it: the variables it sets by name, and
   * (for an interpreter, or where entries fix them) its arguments, which are never shown (an argument may be a secret:
   * `--client-secret=...`): the line says how many to copy from the object, word for word.
   */
  private allowLine(command: string, origin: ContextOrigin, o: { env?: string[]; args?: number } = {}): string {
    const parts = [`command: ${yamlWord(command)}`];
    if (o.env && o.env.length > 0) parts.push(`env: [${o.env.join(', ')}]`);
    if (o.args !== undefined)
      parts.push(
        `args: [${o.args === 0 ? '' : `its ${o.args} argument${o.args === 1 ? '' : 's'} as ${origin.object} writes them`}]`,
      );
    return `credentialPluginAllowlist: [{${parts.join(', ')}}] ${this.allowPlace(origin)}`;
  }

  /**
   * Whether the exec plugin of a context may run, and why (for `fleet auth plugins` and for the refusal). `args`: what
   * the context gives it, so that the line to allow an interpreter names its arguments at once (it runs for data only
   * with exact ones: a line without them would only lead to the next refusal).
   */
  async plugin(command: string, origin: ContextOrigin | undefined, args: string[] = []): Promise<PluginVerdict> {
    const kuberc = await this.kurcVerdict(command);
    if (origin && !origin.commandFromUser) {
      const entries = this.entriesFor(command, origin.provider);
      const by = entries[0];
      if (!by && !kuberc.listed) {
        return {
          allowed: false,
          reason: `exec plugin "${command}" is named by hub data, and hub data may not run programs`,
          allowWith: this.allowLine(
            command,
            origin,
            args.length > 0 && interpreterKind(command) ? { args: args.length } : {},
          ),
        };
      }
      // Allowed for data; the kuberc (if any) must still let it run, as for any plugin.
      if (!kuberc.allowed) return { allowed: false, reason: kuberc.reason };
      return {
        allowed: true,
        reason: by
          ? `credentialPluginAllowlist of ${by.where}`
          : `credentialPluginAllowlist of ${(await this.kuberc())!.path}`,
      };
    }
    if (!kuberc.allowed) return { allowed: false, reason: kuberc.reason };
    const k = await this.kuberc();
    return {
      allowed: true,
      reason: k && k.policy === 'Allowlist' ? `credentialPluginAllowlist of ${k.path}` : undefined,
    };
  }

  /**
   * Why this context may not be used, in one line naming where it came from, what it asked for, and how to allow it;
   * undefined when it may. Nothing is read or run to decide (a command may be looked up on PATH).
   */
  async problem(ctx: ResolvedContext): Promise<Refusal | undefined> {
    return (await this.approve(ctx)).refusal;
  }

  /**
   * The one approval of a context (issue 38, "one approval, one invocation"): a refusal, or the context to use, with the
   * files hub data names replaced by the paths approved (resolved once, links included), and its exec plugin as the
   * exact Invocation that will run (absolute program, arguments, environment). The runner starts that and nothing else.
   * `cwd` is where a relative command of the user's own configuration is resolved, as the kernel would.
   */
  async approve(ctx: ResolvedContext, cwd: string = process.cwd()): Promise<Approval> {
    const origin = ctx.origin;
    const exec = ctx.user.exec;
    let context = ctx;
    const who = origin ? origin.object : `context "${ctx.contextName}"${ctx.userFile ? ` (${ctx.userFile})` : ''}`;
    if (origin) {
      const files = await this.approvedFiles(ctx, origin);
      if (typeof files === 'string') return { refusal: { kind: 'config', message: `${who}: ${files}` } };
      context = files;
      const env = this.refusedEnv(ctx.user, origin);
      if (env) return { refusal: { kind: 'config', message: `${who}: ${env}` } };
    }
    if (!exec || typeof exec.command !== 'string' || exec.command === '') return { context };
    const command = exec.command;
    const fromData = origin !== undefined && !origin.commandFromUser;
    // A relative path (`./mytok`, `x/../mytok`) or one with `..` names a file by where fleet runs, not by what it is:
    // the allowlist would judge the clean name and the kernel would run the working directory's file.
    if (fromData && command.includes('/') && (!isAbsolute(command) || command.split('/').includes('..'))) {
      return {
        refusal: {
          kind: 'plugin',
          message: `${who}: exec plugin ${JSON.stringify(command)} is named by hub data with a relative path or "..", which would run a file of fleet's working directory; hub data may name a plugin only by absolute path or bare name`,
        },
      };
    }
    const v = await this.plugin(command, origin, (exec.args ?? []).map(String));
    if (!v.allowed)
      return {
        refusal: {
          kind: 'plugin',
          message: `${who}: ${v.reason}${v.allowWith ? `; to allow it, add ${v.allowWith}` : ''}`,
        },
      };
    // client-go runs exec.Command(filepath.Clean(command)): the clean spelling is what is looked up and run.
    const resolved = this.resolve(goClean(command), cwd);
    if (resolved.error !== undefined) {
      if (fromData && resolved.dot)
        return {
          refusal: {
            kind: 'plugin',
            message: `${who}: exec plugin ${JSON.stringify(command)}: ${resolved.error} (ErrDot); hub data's plugins run only from absolute PATH directories`,
          },
        };
      // As client-go: a plugin that cannot be found fails when it is asked for a credential, with its installHint.
      // Worded as the spawn's failure was (`executable not found`, `permission denied`), ErrDot as itself.
      const why = resolved.dot
        ? `${resolved.error} (ErrDot)`
        : /not found/.test(resolved.error)
          ? 'executable not found'
          : /not executable/.test(resolved.error)
            ? 'permission denied'
            : resolved.error;
      return { context, plugin: { exec, unresolved: why } };
    }
    const args = (exec.args ?? []).map(String);
    if (origin) {
      const why = this.refusedUse(ctx.user, origin, command, args, resolved.program);
      if (why) return { refusal: { kind: 'config', message: `${who}: ${why}` } };
    }
    const env: Record<string, string | undefined> = { ...this.env };
    for (const e of Array.isArray(exec.env) ? exec.env : [])
      if (typeof e?.name === 'string' && typeof e.value === 'string') env[e.name] = e.value;
    return {
      context,
      plugin: { exec, invocation: approveInvocation(resolved.program, { argv0: command, args, env }) },
    };
  }

  // Resolving looks at PATH's directories: once per command, PATH and working directory, not per cluster.
  private readonly resolutions = new Map<string, Resolved>();

  private resolve(command: string, cwd: string): Resolved {
    const key = [command, this.env.PATH ?? '', this.env.GODEBUG ?? '', cwd].join('\u0000');
    let r = this.resolutions.get(key);
    if (!r) this.resolutions.set(key, (r = resolveProgram(command, this.env, cwd)));
    return r;
  }

  /**
   * The files hub data names, each resolved once to the file it is (links followed) and checked against the
   * localFileAllowlist both as written and as resolved, so that a link in an allowed directory cannot lead out of it:
   * the context with those resolved paths (read from then on through readNamedFile), or why one is refused.
   */
  private async approvedFiles(ctx: ResolvedContext, origin: ContextOrigin): Promise<ResolvedContext | string> {
    const named = namedFiles(ctx);
    if (named.length === 0) return ctx;
    const refused = this.refusedFiles(ctx, origin);
    if (refused) return refused;
    const lists = this.allowancesFor(origin.provider).flatMap((a) => a.localFileAllowlist);
    const real = async (p: string): Promise<string | undefined> => realpath(p).catch(() => undefined);
    const allowedReal = await Promise.all(
      lists.map(async (a) => {
        const r = await real(a);
        return r === undefined ? a : a.endsWith('/') ? `${r.replace(/\/$/, '')}/` : r;
      }),
    );
    const cluster = { ...ctx.cluster };
    const user = { ...ctx.user };
    for (const { field, path } of named) {
      // A file that is not there cannot be read either: it is left as named, and reading it says so.
      const resolved = await real(path);
      if (resolved === undefined) continue;
      if (!lists.some((a) => fileAllowed(resolved, a)) && !allowedReal.some((a) => fileAllowed(resolved, a))) {
        return `${field} names the local file ${JSON.stringify(path)}, which resolves to ${JSON.stringify(resolved)}, outside every localFileAllowlist entry (a link out of an allowed directory)`;
      }
      if (field === 'certificate-authority') cluster[field] = resolved;
      else user[field] = resolved;
    }
    return { ...ctx, cluster, user };
  }

  /** A file named by hub data that no allowlist covers. */
  private refusedFiles(ctx: ResolvedContext, origin: ContextOrigin): string | undefined {
    const lists = this.allowancesFor(origin.provider).flatMap((a) => a.localFileAllowlist);
    for (const { field, path } of namedFiles(ctx)) {
      if (lists.some((allowed) => fileAllowed(path, allowed))) continue;
      const file = this.configPath ?? 'the fleet configuration';
      const where = origin.provider ? `to provider "${origin.provider}" in ${file}` : `at the top of ${file}`;
      return `${field} names the local file ${path}, and hub data may not read local files; to allow it, add localFileAllowlist: [${path}] ${where}`;
    }
    return undefined;
  }

  /**
   * What data gives an allowed plugin, judged against the entries that allowed it (issue 46): the arguments, when the
   * program is an interpreter or an entry fixes them, and every variable data sets, which must be named in the `env` of
   * an entry whose arguments fit. A kuberc Allowlist entry allows the command with no variables (kuberc cannot name
   * any). One line naming what is refused and the line to add, or undefined.
   */
  private refusedUse(
    user: UserEntry,
    origin: ContextOrigin,
    command: string,
    args: string[],
    program: string,
  ): string | undefined {
    const plugin = JSON.stringify(command);
    const entries: Array<{ env: string[]; args?: string[]; where: string }> = this.entriesFor(command, origin.provider);
    const fromData = !origin.commandFromUser;
    let fitting = entries;
    if (fromData) {
      const kind = interpreterKind(command, program);
      const kuberc = this.kubercVerdicts.get(command);
      if (kuberc?.listed) entries.push({ env: [], where: 'kuberc' });
      fitting = entries.filter((e) =>
        e.args ? e.args.length === args.length && e.args.every((a, i) => a === args[i]) : !kind || args.length === 0,
      );
      if (fitting.length === 0) {
        const n = `${args.length} argument${args.length === 1 ? '' : 's'}`;
        const line = this.allowLine(command, origin, { args: args.length });
        return kind
          ? `exec plugin ${plugin} is an interpreter (${kind}: it runs whatever its arguments say), and hub data gives it ${n} of its own; an interpreter runs for hub data only with the exact arguments the operator allowed; to allow these, add ${line} (or allow the wrapper script they run instead)`
          : `hub data gives exec plugin ${plugin} ${n} that no credentialPluginAllowlist entry with args allows (such an entry allows only its exact arguments); to allow them, add ${line}`;
      }
    }
    const names = fromData
      ? (Array.isArray(user.exec?.env) ? user.exec.env : []).map((e) => String(e?.name))
      : (origin.dataEnv ?? []);
    const missing = [...new Set(names)].filter((name) => !fitting.some((e) => e.env.includes(name)));
    if (missing.length === 0) return undefined;
    const listed = missing.map((m) => (DATA_ENV_NAME.test(m) ? m : JSON.stringify(m))).join(', ');
    const one = missing.length === 1;
    const entry = fitting.find((e) => e.where !== 'kuberc');
    const add = entry
      ? `env: [${listed}] to the entry for ${yamlWord(command)} in ${entry.where}`
      : this.allowLine(command, origin, { env: missing });
    return `hub data sets ${listed} for exec plugin ${plugin}, and no credentialPluginAllowlist entry for that command allows ${one ? 'it' : 'them'} (variables reach a plugin from hub data only by name, per command; a kuberc cannot allow any); to allow ${one ? 'it' : 'them'}, add ${add}`;
  }

  /**
   * The first variable hub data set for an exec plugin that it may not set (dataEnvProblem), or a value holding a NUL
   * (no environment can carry one, and a truncated value is not the value given), as one line naming it as data.
   */
  private refusedEnv(user: UserEntry, origin: ContextOrigin): string | undefined {
    const all = Array.isArray(user.exec?.env) ? user.exec.env : [];
    const fromData = origin.commandFromUser ? new Set(origin.dataEnv ?? []) : undefined;
    const plugin = JSON.stringify(user.exec?.command ?? '');
    for (const e of all) {
      const name = typeof e?.name === 'string' ? e.name : String(e?.name);
      if (fromData && !fromData.has(name)) continue;
      const problem = dataEnvProblem(name);
      if (problem) return refusedName(name, plugin, problem);
      if (typeof e.value === 'string' && e.value.includes('\u0000'))
        return `hub data sets ${name} for exec plugin ${plugin} to a value holding a NUL byte, which no environment can carry`;
    }
    // Names the profile set that the exec entry does not carry (a replaced variable) are judged all the same.
    for (const name of fromData ?? []) {
      const problem = dataEnvProblem(name);
      if (problem) return refusedName(name, plugin, problem);
    }
    return undefined;
  }
}

/** A command as one YAML flow word: as written when plain, else quoted (JSON is YAML). */
function yamlWord(s: string): string {
  return /^[A-Za-z0-9_/.][A-Za-z0-9_/.+-]*$/.test(s) ? s : JSON.stringify(s);
}

/** The one line for a variable hub data may not set; a name that is not an identifier is quoted as data (JSON). */
function refusedName(name: string, plugin: string, problem: string): string {
  const shown = DATA_ENV_NAME.test(name) ? name : `the variable ${JSON.stringify(name)}`;
  return `hub data sets ${shown} for exec plugin ${plugin}, which hub data may never set (it ${problem})`;
}

/**
 * A program the user's own fleet configuration names (a kind provider's `command`, an exec provider's), approved as the
 * user's word: resolved once as Go's exec would (a bare name through PATH, ErrDot included; a path as written, against
 * `cwd`) and run by that absolute path. Never for a program data names: TrustPolicy.approve judges those.
 */
export function approveUserProgram(
  command: string,
  o: { args: readonly string[]; env: NodeJS.ProcessEnv; cwd: string },
): { invocation: Invocation; error?: undefined } | { invocation?: undefined; error: string; dot?: boolean } {
  const resolved = resolveProgram(command, o.env, o.cwd);
  if (resolved.error !== undefined) return { error: resolved.error, dot: resolved.dot };
  return { invocation: approveInvocation(resolved.program, { argv0: command, args: o.args, env: o.env }) };
}

/** A path is allowed by an entry naming it, or by a directory entry (ending in /) it lies under. Both normalised, absolute. */
function fileAllowed(path: string, allowed: string): boolean {
  if (!isAbsolute(path) || !isAbsolute(allowed)) return false;
  const p = normalize(path);
  if (allowed.endsWith('/')) return p.startsWith(normalize(allowed).replace(/\/?$/, sep));
  return p === normalize(allowed);
}
