import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';

import yaml from 'js-yaml';

import { ConfigError } from '../base/errors.js';
import { fileProblem, readOptional } from '../base/files.js';
import { interpreterKind } from '../base/interpreter.js';
import { loadYaml } from '../base/yaml.js';
import { warnOnce } from '../base/warnings.js';
import { type WriteGate, withKubeconfigLock, writeFileAtomic, writeTarget } from './atomic-write.js';

/**
 * The user's kuberc, read as kubectl 1.35 reads it (k8s.io/kubectl pkg/kuberc), and its credential plugin policy,
 * applied as client-go 1.35 applies it (plugin/pkg/client/auth/exec). docs/kubeconfig.md "kuberc" lists the rules and the
 * upstream files; test/e2e/kuberc-kubectl.test.ts runs a kubectl built from the 1.35 modules on the same files.
 */

const KUBERC_GROUP = 'kubectl.config.k8s.io';
export const KUBERC_V1BETA1 = `${KUBERC_GROUP}/v1beta1`;
const KUBERC_V1ALPHA1 = `${KUBERC_GROUP}/v1alpha1`;

export type PluginPolicy = 'AllowAll' | 'DenyAll' | 'Allowlist';
const POLICIES: readonly string[] = ['AllowAll', 'DenyAll', 'Allowlist'];

export interface Kuberc {
  /** The file the policy came from, as named (flag, KUBERC or the default): every refusal names it. */
  path: string;
  /** An unset policy is AllowAll (kubectl keeps kuberc files without one working as before). */
  policy: PluginPolicy;
  /** The allowlist entries, exactly as written (kubectl refuses the file when one is not a clean path). */
  allowlist: string[];
}

export interface KubercSource {
  /** --kuberc's value when given. */
  flag?: string;
  env: NodeJS.ProcessEnv;
}

export type PluginDecision = { allowed: true } | { allowed: false; reason: string };

/**
 * kubectl's default kuberc: $HOME/.kube/kuberc. client-go's homedir on Linux and macOS is $HOME alone (no fallback to
 * the account's home), so with HOME unset kubectl looks for .kube/kuberc under the current directory; so does fleet.
 */
export function defaultKubercPath(env: NodeJS.ProcessEnv): string {
  return join(env.HOME ?? '', '.kube', 'kuberc');
}

/**
 * Where kubectl 1.35 looks, and whether it was asked to: --kuberc, else KUBERC, else the default. `KUBECTL_KUBERC=false`
 * (any case) turns kuberc off before anything else (kubectl then has no --kuberc flag at all); `KUBERC=off` turns it off
 * too, and then --kuberc is an error. kubectl quirk kept: a --kuberc naming the default path itself still loses to KUBERC.
 */
export function kubercLocation(source: KubercSource): { path: string; label: string; explicit: boolean } | undefined {
  const { flag, env } = source;
  if (env.KUBECTL_KUBERC?.toLowerCase() === 'false') {
    if (flag !== undefined)
      throw new ConfigError(
        `--kuberc ${flag}: kuberc is turned off by KUBECTL_KUBERC=false (kubectl has no --kuberc flag then)`,
      );
    return undefined;
  }
  if (flag === '') throw new ConfigError('--kuberc: empty path');
  if (env.KUBERC === 'off') {
    if (flag !== undefined)
      throw new ConfigError(`--kuberc ${flag}: KUBERC=off turns kuberc off; the two cannot be used together`);
    return undefined;
  }
  const fallback = defaultKubercPath(env);
  if (flag !== undefined && flag !== fallback) return { path: flag, label: `--kuberc ${flag}`, explicit: true };
  if (env.KUBERC) return { path: env.KUBERC, label: `KUBERC ${env.KUBERC}`, explicit: true };
  if (flag !== undefined) return { path: flag, label: `--kuberc ${flag}`, explicit: true };
  return { path: fallback, label: fallback, explicit: false };
}

/**
 * The kuberc in effect, or undefined when kuberc is turned off, the default file is absent or empty, or kubectl would
 * ignore it. kubectl's rules for a file it cannot use: a file named by --kuberc or KUBERC that is missing, unreadable or
 * holds no usable Preference is an error; the default file in that state is skipped with a warning (kubectl prints
 * "kuberc: no preferences loaded from ..." and runs every plugin); unknown fields are warned about and ignored. A usable
 * Preference whose policy kubectl refuses (unknown policy, a list beside AllowAll or DenyAll, Allowlist with no list or
 * an empty one, an empty or unclean entry) ends every kubectl command, so it is a ConfigError here, naming file and field.
 */
export async function loadKuberc(source: KubercSource): Promise<Kuberc | undefined> {
  const where = kubercLocation(source);
  if (!where) return undefined;
  const { path, label, explicit } = where;
  const unusable = (problem: string, cause?: unknown): undefined => {
    if (explicit) throw new ConfigError(`${label}: ${problem}`, { cause });
    warnOnce(`kuberc: no preferences loaded from ${path}: ${problem} (kubectl 1.35 ignores this file too)`);
    return undefined;
  };
  let text: string | undefined;
  try {
    text = await readOptional(path, 'a kuberc file', label);
  } catch (error) {
    return unusable(fileProblem((error as ConfigError).cause ?? error, 'a kuberc file'), error);
  }
  if (text === undefined) return explicit ? unusable('file not found') : undefined;
  let found: Found | undefined;
  try {
    found = findPreference(text, path);
  } catch (error) {
    if (error instanceof KubercProblem) return unusable(error.message);
    throw error;
  }
  if (!found) return undefined;
  return toKuberc(found, path);
}

/** A file-level problem that makes kubectl drop the whole file (a ConfigError or a warning, by how it was named). */
class KubercProblem extends Error {}

interface Found {
  doc: Record<string, unknown>;
  apiVersion: string;
  /** Where the document sits among the file's documents (to merge into it). */
  index: number;
  documents: string[];
}

/**
 * The documents of a file as apimachinery's YAML reader splits them: at lines starting with `---`, where only spaces or
 * a comment may follow the dashes (anything else makes the whole file unreadable for kubectl); blank documents skipped.
 */
export function splitYamlDocuments(text: string, starts: number[] = []): string[] {
  const docs: string[] = [];
  let current: string[] = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.startsWith('---')) {
      const rest = line.slice(3).trim();
      if (rest !== '' && !rest.startsWith('#')) throw new KubercProblem(`invalid YAML document separator: ${rest}`);
      if (current.length > 0) docs.push(current.join('\n') + '\n');
      current = [];
      continue;
    }
    if (current.length === 0) starts[docs.length] = i;
    current.push(line);
  }
  if (current.length > 0) docs.push(current.join('\n'));
  return docs;
}

/**
 * The first document kubectl can use: a `kubectl.config.k8s.io` Preference (v1beta1, or v1alpha1 which has no
 * credential plugin fields) whose fields have the right types. Documents that are not YAML, not a Preference or of the
 * wrong shape are skipped as kubectl skips them; when every document was skipped the file has no usable preferences.
 */
function findPreference(text: string, path: string): Found | undefined {
  const starts: number[] = [];
  const documents = splitYamlDocuments(text, starts);
  let attempted = 0;
  for (const [index, source] of documents.entries()) {
    if (source.trim() === '') continue;
    attempted++;
    let doc: unknown;
    try {
      // Padded to its place in the file, so that a YAML error names the file's line.
      doc = loadYaml('\n'.repeat(starts[index]) + source, path);
    } catch (error) {
      // kubectl reads a key given twice with a warning and keeps the last value; js-yaml will not read the document at
      // all, and skipping it could drop a DenyAll, so fleet refuses the file rather than guess.
      if (/duplicated mapping key/.test((error as Error).message)) {
        throw new ConfigError(
          `${(error as Error).message} (kubectl 1.35 warns and uses the last value; fleet refuses the file)`,
        );
      }
      continue;
    }
    if (!isMapping(doc)) continue;
    const apiVersion = doc.apiVersion;
    if ((apiVersion !== KUBERC_V1BETA1 && apiVersion !== KUBERC_V1ALPHA1) || doc.kind !== 'Preference') continue;
    const unknown = shapeProblems(doc, apiVersion);
    if (unknown === undefined) continue;
    if (unknown.length > 0) {
      const credential = apiVersion === KUBERC_V1ALPHA1 && unknown.some((f) => f.startsWith('credentialPlugin'));
      warnOnce(
        credential
          ? `kuberc ${path}: ${KUBERC_V1ALPHA1} has no credentialPluginPolicy; kubectl 1.35 ignores it and runs every plugin (use apiVersion ${KUBERC_V1BETA1})`
          : `kuberc ${path}: ignoring unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (as kubectl 1.35 does)`,
      );
    }
    return { doc, apiVersion, index, documents };
  }
  if (attempted > 0)
    throw new KubercProblem(`no usable Preference (apiVersion ${KUBERC_V1BETA1}, kind Preference) in the file`);
  return undefined;
}

type Shape = 'string' | { list: Shape } | { fields: Record<string, Shape> };
const OPTION: Shape = { fields: { name: 'string', default: 'string' } };
const strings: Shape = { list: 'string' };
const SHAPES: Record<string, Record<string, Shape>> = {
  [KUBERC_V1BETA1]: {
    defaults: { list: { fields: { command: 'string', options: { list: OPTION } } } },
    aliases: {
      list: {
        fields: {
          name: 'string',
          command: 'string',
          prependArgs: strings,
          appendArgs: strings,
          options: { list: OPTION },
        },
      },
    },
    credentialPluginPolicy: 'string',
    // `command` is kubectl 1.36's spelling of `name` (1.35 does not know it); see allowlistEntry.
    credentialPluginAllowlist: { list: { fields: { name: 'string', command: 'string' } } },
  },
  [KUBERC_V1ALPHA1]: {
    overrides: { list: { fields: { command: 'string', flags: { list: OPTION } } } },
    aliases: {
      list: {
        fields: {
          name: 'string',
          command: 'string',
          prependArgs: strings,
          appendArgs: strings,
          flags: { list: OPTION },
        },
      },
    },
  },
};

/**
 * kubectl decodes strictly, then leniently: a value of the wrong type fails both (the document is skipped: undefined),
 * an unknown field only the strict one (kubectl warns and goes on: the unknown fields are returned). null is a zero value.
 */
function shapeProblems(doc: Record<string, unknown>, apiVersion: string): string[] | undefined {
  const unknown: string[] = [];
  const check = (value: unknown, shape: Shape, at: string): boolean => {
    if (value === null || value === undefined) return true;
    if (shape === 'string') return typeof value === 'string';
    if ('list' in shape)
      return Array.isArray(value) && value.every((item, i) => check(item, shape.list, `${at}[${i}]`));
    if (!isMapping(value)) return false;
    for (const [key, item] of Object.entries(value)) {
      const field = shape.fields[key];
      if (field === undefined) unknown.push(`${at}${at ? '.' : ''}${key}`);
      else if (!check(item, field, `${at}${at ? '.' : ''}${key}`)) return false;
    }
    return true;
  };
  const fields = { ...SHAPES[apiVersion], apiVersion: 'string', kind: 'string' } as Record<string, Shape>;
  return check(doc, { fields }, '') ? unknown : undefined;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An allowlist entry's command: `name` (kubectl 1.35's only spelling, deprecated from 1.36) or `command` (1.36 on). 1.35
 * reads `{command: x}` as an empty entry and refuses the whole file; fleet reads it as 1.36 does, since the same file
 * is read by whichever kubectl the user has. Both spelled differently is refused by 1.36 and refused here.
 */
function allowlistEntry(entry: unknown, at: string): string {
  const e = isMapping(entry) ? entry : {};
  const name = typeof e.name === 'string' ? e.name : '';
  const command = typeof e.command === 'string' ? e.command : '';
  if (name && command && name !== command)
    throw new ConfigError(
      `${at}: name "${name}" and command "${command}" differ (command replaces the deprecated name; give one)`,
    );
  return command || name;
}

/** kubectl's checks of a usable Preference, run before any command: failing one ends every kubectl command. */
function toKuberc(found: Found, path: string): Kuberc {
  const { doc, apiVersion } = found;
  const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);
  const options = apiVersion === KUBERC_V1BETA1 ? 'options' : 'flags';
  const defaults = apiVersion === KUBERC_V1BETA1 ? 'defaults' : 'overrides';
  const seen = new Set<string>();
  const checkOptions = (items: unknown, at: string): void => {
    for (const [i, option] of list<Record<string, unknown>>(items).entries()) {
      const name = option?.name;
      if (typeof name === 'string' && name.startsWith('-'))
        throw new ConfigError(
          `${path}: ${at}.${options}[${i}].name: flag name ${name} should be in long form without dashes`,
        );
    }
  };
  for (const [i, alias] of list<Record<string, unknown>>(doc.aliases).entries()) {
    const name = typeof alias?.name === 'string' ? alias.name : '';
    if (!/^[a-zA-Z]+$/.test(name))
      throw new ConfigError(`${path}: aliases[${i}].name: "${name}" is not a valid alias name (letters only)`);
    checkOptions(alias[options], `aliases[${i}]`);
    if (seen.has(name)) throw new ConfigError(`${path}: aliases[${i}].name: duplicate alias name ${name}`);
    seen.add(name);
  }
  for (const [i, entry] of list<Record<string, unknown>>(doc[defaults]).entries())
    checkOptions(entry?.[options], `${defaults}[${i}]`);

  if (apiVersion !== KUBERC_V1BETA1) return { path, policy: 'AllowAll', allowlist: [] };
  const raw = doc.credentialPluginPolicy;
  const policy = typeof raw === 'string' ? raw : '';
  const listValue = doc.credentialPluginAllowlist;
  // A list that is there but empty (`[]`) is not an absent one (`null`, or no field): kubectl tells them apart.
  const hasList = Array.isArray(listValue);
  if (policy !== '' && !POLICIES.includes(policy)) {
    throw new ConfigError(
      `${path}: credentialPluginPolicy: unknown policy "${policy}" (AllowAll, DenyAll or Allowlist)`,
    );
  }
  if (policy !== 'Allowlist') {
    if (hasList)
      throw new ConfigError(
        `${path}: credentialPluginAllowlist is set but credentialPluginPolicy is ${policy || 'unset (AllowAll)'}; kubectl refuses this (use Allowlist or remove the list)`,
      );
    return { path, policy: (policy || 'AllowAll') as PluginPolicy, allowlist: [] };
  }
  if (!hasList)
    throw new ConfigError(`${path}: credentialPluginPolicy is Allowlist but credentialPluginAllowlist is missing`);
  if (listValue.length === 0)
    throw new ConfigError(
      `${path}: credentialPluginPolicy is Allowlist but credentialPluginAllowlist is empty (use DenyAll to allow no plugin)`,
    );
  if (listValue.some((entry) => isMapping(entry) && entry.command !== undefined && entry.command !== null)) {
    warnOnce(
      `kuberc ${path}: credentialPluginAllowlist entries spelled command: are kubectl 1.36's; kubectl 1.35 ignores that field (and refuses an entry with no name:); fleet reads them as 1.36 does`,
    );
  }
  const allowlist = listValue.map((entry, i) => {
    const at = `${path}: credentialPluginAllowlist[${i}]`;
    const command = allowlistEntry(entry, at);
    if (command === '') throw new ConfigError(`${at}: empty entry (no name)`);
    if (goClean(command) !== command)
      throw new ConfigError(`${at}: "${command}" is not a clean path (kubectl requires "${goClean(command)}")`);
    return command;
  });
  return { path, policy: 'Allowlist', allowlist };
}

/** Go's filepath.Clean on Unix: no `.`, no `x/..`, no doubled or trailing slash; "" is ".". */
export function goClean(path: string): string {
  const cleaned = posix.normalize(path === '' ? '.' : path);
  return cleaned.length > 1 && cleaned.endsWith('/') ? cleaned.slice(0, -1) : cleaned;
}

/** Go's filepath.Base on Unix (Node's basename of "/" is "", Go's is "/"). */
function goBase(path: string): string {
  if (path === '') return '.';
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

export type Looked = { path: string; error?: undefined } | { path: string; error: string };

/**
 * Go's exec.LookPath on Unix over `env.PATH`: a name with a slash is used as is and must be an executable file; a bare
 * name is tried in each PATH directory in order (an empty entry is "."), and a hit in a relative directory is an error
 * (ErrDot) unless GODEBUG has execerrdot=0. Symlinks are followed to test the file, never to rename it.
 */
export function lookPath(file: string, env: NodeJS.ProcessEnv): Looked {
  if (file.includes('/')) {
    const problem = notExecutable(file);
    return problem ? { path: '', error: `${file} ${problem}` } : { path: file };
  }
  const dirs = env.PATH ? env.PATH.split(':') : [];
  for (const entry of dirs) {
    const candidate = goClean(join(entry === '' ? '.' : entry, file));
    if (notExecutable(candidate)) continue;
    if (!isAbsolute(candidate) && !dotAllowed(env)) {
      return {
        path: candidate,
        error: `${file} was found as ${candidate} in a relative PATH directory, which Go refuses`,
      };
    }
    return { path: candidate };
  }
  return { path: '', error: `${file} not found in PATH` };
}

/** GODEBUG's execerrdot as Go reads it: comma-separated key=value pairs, the last setting of a key wins. */
function dotAllowed(env: NodeJS.ProcessEnv): boolean {
  let value: string | undefined;
  for (const pair of (env.GODEBUG ?? '').split(','))
    if (pair.startsWith('execerrdot=')) value = pair.slice('execerrdot='.length);
  return value === '0';
}

/** What a command resolves to once: the absolute file that will run, or why there is none (`dot`: Go's ErrDot). */
export type Resolved = { program: string; error?: undefined } | { program?: undefined; error: string; dot?: boolean };

/**
 * The file a command runs, resolved once, by the rules of Go's exec.Command (what client-go uses for exec plugins): a
 * name with a slash is that path (a relative one against `cwd`, as the kernel would take it; the loader has already
 * made a kubeconfig's relative command absolute against its file, as client-go does), and must be an executable file;
 * a bare name is looked up by lookPath, ErrDot included. The path is made absolute without cleaning it (`x/../y`
 * stays, for the kernel to follow as Go's exec would) and symlinks are not resolved: the file run is the one named.
 */
export function resolveProgram(command: string, env: NodeJS.ProcessEnv, cwd: string): Resolved {
  if (command === '') return { error: 'empty command' };
  const absolute = (p: string) => (isAbsolute(p) ? p : `${cwd.replace(/\/+$/, '')}/${p}`);
  const looked = lookPath(command, env);
  if (looked.error !== undefined) return { error: looked.error, dot: looked.path !== '' };
  return { program: absolute(command.includes('/') ? command : looked.path) };
}

/** Why a path is not something exec can run (Go's findExecutable: it exists, is not a directory, may be executed). */
function notExecutable(path: string): string | undefined {
  try {
    if (statSync(path).isDirectory()) return 'is a directory';
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? 'not found'
      : code === 'EACCES'
        ? 'is not executable'
        : `cannot be run: ${(error as Error).message}`;
  }
}

/**
 * May this exec credential plugin run under the kuberc policy, as client-go 1.35 decides. `command` is the kubeconfig's
 * exec command after the loader made a relative path with a slash absolute against its file (as client-go does).
 * Allowlist: the cleaned command, or what exec would run (a bare name looked up in PATH), is an entry verbatim; else
 * the command must resolve and equal an entry resolved the same way (LookPath). Symlinks are not resolved: a link on
 * PATH to an allowed binary is allowed only when the link's own path (or its name, found first on PATH) is listed.
 */
export function pluginAllowed(kuberc: Kuberc | undefined, command: string, env: NodeJS.ProcessEnv): PluginDecision {
  if (!kuberc || kuberc.policy === 'AllowAll') return { allowed: true };
  const refuse = (why?: string): PluginDecision => ({
    allowed: false,
    reason: `plugin "${command}" not allowed by credentialPluginPolicy ${kuberc.policy} in ${kuberc.path}${why ? `: ${why}` : ''}`,
  });
  if (kuberc.policy === 'DenyAll') return refuse();
  const cmd = goClean(command);
  const entries = new Set(kuberc.allowlist);
  // exec.Command looks a bare name up at once and keeps the result (and its error) for later.
  let runs = cmd;
  let early: Looked | undefined;
  if (goBase(cmd) === cmd) {
    early = lookPath(cmd, env);
    if (early.path) runs = early.path;
  }
  if (entries.has(cmd) || entries.has(runs)) return { allowed: true };
  const resolved = runs !== cmd && early ? early : lookPath(runs, env);
  if (resolved.error !== undefined)
    return refuse(`${resolved.error}, so it cannot be checked against credentialPluginAllowlist`);
  if (entries.has(resolved.path)) return { allowed: true };
  const name = goBase(resolved.path);
  for (const entry of kuberc.allowlist) {
    if (goBase(entry) !== name) continue;
    const looked = lookPath(entry, env);
    if (looked.error === undefined && looked.path === resolved.path) return { allowed: true };
  }
  return refuse(`no credentialPluginAllowlist entry matches ${resolved.path}`);
}

/**
 * Why fleet does not add a command to a kuberc allowlist because it is an interpreter (src/base/interpreter.ts), with
 * what to allow instead: the wrapper script its arguments run, when they name one (`wrapper`, base/interpreter.ts's
 * wrapperIn), as the line to add.
 * Undefined for any other program. The one wording, for `auth plugins --write-kuberc` and every other writer.
 */
export function interpreterRefusal(
  command: string,
  path: string,
  o: { wrapper?: string; key?: EntryKey; env?: NodeJS.ProcessEnv } = {},
): string | undefined {
  const looked = lookPath(goClean(command), o.env ?? process.env);
  const kind = interpreterKind(command, looked.path);
  if (!kind) return undefined;
  const wrapper = o.wrapper;
  const instead = wrapper
    ? `make the kubeconfig run the script itself (command: ${wrapper}, with its #! line) and add \`- ${allowlistEntryText(wrapper, o.key ?? 'name')}\``
    : `make the kubeconfig run your wrapper script itself (command: /path/to/script, with its #! line) and add \`- ${allowlistEntryText('/path/to/script', o.key ?? 'name')}\``;
  return `${path}: not adding "${command}": it is an interpreter (${kind}), and an allowlist entry for it would let any kubeconfig run any program through its arguments; ${instead}`;
}

/** The field an allowlist entry is written with: kubectl 1.35's `name`, or 1.36's `command` when the list uses it. */
export type EntryKey = 'name' | 'command';

/** What mergeKubercAllowlist makes of a kuberc (or would: the text is not written). */
export interface KubercMerge {
  text: string;
  /** The commands the merge adds, clean, in order. */
  added: string[];
  /** Whether the text differs from the file's (false: nothing to write). */
  changed: boolean;
  policyWas: PluginPolicy | undefined;
  /** The field the entries are written with. */
  entryKey: EntryKey;
  /** The allowlist once merged (clean paths), or the file's when nothing is added. */
  allowlist: string[];
}

/**
 * An allowlist entry spelled as fleet writes it in a block list, `name: /bin/sh` (quoted where YAML needs it): the
 * messages say this, so that what the user reads is what the file holds, and a line to add by hand is `- ` and this.
 */
export function allowlistEntryText(command: string, key: EntryKey): string {
  return yaml.dump({ [key]: command }, { lineWidth: -1 }).trimEnd();
}

/**
 * `fleet auth plugins --write-kuberc FILE`: the kuberc text with `commands` allowed, everything else kept (other
 * documents verbatim; the Preference's other fields and entries, though its comments and layout are not kept). An absent
 * policy or AllowAll becomes Allowlist (only what is listed runs from then on); Allowlist gets the missing entries;
 * DenyAll is refused (fleet does not loosen a policy that forbids every plugin: the user edits it). Entries are written
 * in kubectl 1.35's spelling `name:` (1.36 and later read it too), or `command:` when the list already uses that one.
 * A file kubectl could not use (no usable Preference, v1alpha1, a policy it refuses) is refused rather than rewritten.
 * With nothing to add, the text is the file's, unchanged (an empty Allowlist would forbid every plugin).
 */
export async function mergeKubercAllowlist(
  path: string,
  commands: string[],
  read: string = path,
): Promise<KubercMerge> {
  const text = (await readOptional(read, 'a kuberc file', path)) ?? '';
  return mergeKubercText(text, path, commands);
}

function mergeKubercText(text: string, path: string, commands: string[]): KubercMerge {
  const wanted = [
    ...new Set(
      commands.map((c) => {
        if (c === '') throw new ConfigError(`${path}: an exec plugin with an empty command cannot be allowed`);
        const refused = interpreterRefusal(c, path);
        if (refused) throw new ConfigError(refused);
        return goClean(c);
      }),
    ),
  ];
  let found: Found | undefined;
  try {
    found = findPreference(text, path);
  } catch (error) {
    if (error instanceof KubercProblem) throw new ConfigError(`${path}: ${error.message}; not rewriting it`);
    throw error;
  }
  if (found && found.apiVersion !== KUBERC_V1BETA1) {
    throw new ConfigError(
      `${path}: ${found.apiVersion} has no credentialPluginPolicy; move the file to apiVersion ${KUBERC_V1BETA1} first`,
    );
  }
  const doc: Record<string, unknown> = found ? { ...found.doc } : { apiVersion: KUBERC_V1BETA1, kind: 'Preference' };
  const before = found ? toKuberc(found, path) : undefined;
  // The policy as the file wrote it (undefined when unset, which kubectl reads as AllowAll).
  const policyWas = doc.credentialPluginPolicy ? before?.policy : undefined;
  if (before?.policy === 'DenyAll') {
    throw new ConfigError(
      `${path}: credentialPluginPolicy is DenyAll; fleet does not loosen it (set it to Allowlist yourself to allow ${wanted.join(', ') || 'a plugin'})`,
    );
  }
  const existing = before?.policy === 'Allowlist' ? (doc.credentialPluginAllowlist as unknown[]) : [];
  const useCommand = existing.some((e) => isMapping(e) && typeof e.command === 'string' && e.command !== '' && !e.name);
  const entryKey: EntryKey = useCommand ? 'command' : 'name';
  const have = before?.policy === 'Allowlist' ? before.allowlist : [];
  const added = wanted.filter((c) => !have.includes(c));
  if (added.length === 0) return { text, added, changed: false, policyWas, entryKey, allowlist: have };
  doc.credentialPluginPolicy = 'Allowlist';
  doc.credentialPluginAllowlist = [...existing, ...added.map((c) => ({ [entryKey]: c }))];
  const body = yaml.dump(doc, { noRefs: true, lineWidth: -1 });
  // What fleet wrote must be what kubectl reads: checked with the same rules before anyone writes it.
  const after = toKuberc({ doc, apiVersion: KUBERC_V1BETA1, index: 0, documents: [] }, path);
  const merged = { added, changed: true, policyWas, entryKey, allowlist: after.allowlist };
  if (!found) return { ...merged, text: text.trim() === '' ? body : `${text.replace(/\n*$/, '\n')}---\n${body}` };
  const documents = [...found.documents];
  documents[found.index] = body;
  return { ...merged, text: documents.map((d) => d.replace(/\n*$/, '\n')).join('---\n') };
}

/** How long a `--write-kuberc` waits for another fleet writing the same kuberc (each write takes milliseconds). */
const KUBERC_LOCK_WAIT_MS = 10_000;

/**
 * mergeKubercAllowlist, written: under the lock `--merge-into` takes (withKubeconfigLock, FILE.lock beside the file
 * a symlink leads to, so concurrent runs each merge into the other's result and none is lost), atomically with mode
 * 0600 (a kuberc decides which programs run), through symlinks (a linked kuberc stays a link; its target is rewritten).
 * Then read back: every entry it reports added must be in the file, else the run fails (it never says "added" for an
 * entry that is not there).
 */
export async function writeKubercAllowlist(path: string, commands: string[], gate?: WriteGate): Promise<KubercMerge> {
  const target = await writeTarget(path);
  const merged = await withKubeconfigLock(
    target,
    path,
    async () => {
      const result = await mergeKubercAllowlist(path, commands, target);
      if (result.changed) await writeFileAtomic(target, result.text, { mode: 0o600, gate });
      return result;
    },
    { waitMs: KUBERC_LOCK_WAIT_MS },
  );
  if (merged.added.length > 0)
    checkKubercHolds((await readOptional(target, 'a kuberc file', path)) ?? '', path, merged.added);
  return merged;
}

/**
 * The read-back check of a written kuberc: its Preference is an Allowlist holding each of `added` (clean paths), or a
 * ConfigError naming the missing entries (another program rewrote the file meanwhile, without the lock).
 */
export function checkKubercHolds(text: string, path: string, added: string[]): void {
  let allowlist: string[] = [];
  try {
    const found = findPreference(text, path);
    const k = found && found.apiVersion === KUBERC_V1BETA1 ? toKuberc(found, path) : undefined;
    if (k?.policy === 'Allowlist') allowlist = k.allowlist;
  } catch (error) {
    if (!(error instanceof KubercProblem || error instanceof ConfigError)) throw error;
  }
  const missing = added.filter((c) => !allowlist.includes(c));
  if (missing.length > 0) {
    throw new ConfigError(
      `${path}: read back after writing, credentialPluginAllowlist lacks ${missing.join(', ')} (another program rewrote the file meanwhile?); nothing is reported added, run again`,
    );
  }
}
