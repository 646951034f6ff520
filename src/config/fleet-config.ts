import { dirname, isAbsolute, join } from 'node:path';

import { parseTimeLimit } from '../base/duration.js';
import { ConfigError, UsageError } from '../base/errors.js';
import { readOptional } from '../base/files.js';
import { loadYaml } from '../base/yaml.js';
import { expandHome, homeDir, kernelPath } from '../base/paths.js';
import { dataEnvProblem } from '../base/env-names.js';
import type { DataAllowances, PluginAllowance } from '../kubeconfig/trust.js';
import { Fields } from './fields.js';

/**
 * The fleet configuration file: which providers make up the fleet and their settings, so that `fleet clusters list`
 * with no flags shows the whole fleet. Format documented in docs/providers.md.
 */
export const CAPI_VERSIONS = ['v1beta2', 'v1beta1'] as const;
/** Where a kcp workspace's URL comes from: the Workspace's spec.URL, or the context's server + /clusters/<path>. */
export const KCP_SERVER_SOURCES = ['workspace', 'context'] as const;
/** A kcp workspace path: `root`, `root:org:team` (each segment a workspace name). */
export const KCP_PATH = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/**
 * Upstream's default for -clusterprofile-provider-file. fleet does not fall back to it: a file found in the working
 * directory names programs that would run as the user's, the hazard a found ./fleet.yaml is refused for (issue 38).
 */
export const DEFAULT_ACCESS_PROVIDER_FILE = 'clusterprofile-provider-file.json';

/** The cluster a hub-backed provider reads (for `namespace`, the cluster whose namespaces are listed). */
export interface HubSpec {
  /** Kubeconfig files (merged like KUBECONFIG); the loading rules when absent. */
  kubeconfig?: string[];
  /** Context in those files; their current-context when absent. */
  context?: string;
}

interface Common {
  name: string;
  /** Where the entry is written, for error messages: `fleet.yaml: providers[2]`. */
  origin?: string;
  /** What this provider's hub data may use (credentialPluginAllowlist, localFileAllowlist; docs/security.md). */
  allow?: DataAllowances;
}

export interface FileProviderConfig extends Common {
  type: 'file';
  kubeconfig?: string[];
  /** Labels per file or context pattern, in order (a later rule overrides an earlier one's value). */
  labels?: Array<{ file?: string; context?: string; labels: Record<string, string> }>;
}
export interface KubeconfigSecretProviderConfig extends Common {
  type: 'kubeconfig';
  hub?: HubSpec;
  namespace?: string;
  label?: string;
  key?: string;
}
export interface ArgocdProviderConfig extends Common {
  type: 'argocd';
  hub?: HubSpec;
  /** Argo CD's namespace, where its cluster Secrets are; default `argocd`. */
  namespace?: string;
  /**
   * Reach Argo CD's in-cluster entry (`https://kubernetes.default.svc`: the one Argo CD adds, or a Secret for that
   * address without a credential of its own) with the hub's own credential. Off by default: without it that entry is
   * listed not ready, saying this.
   */
  inCluster?: boolean;
}
export interface ClusterApiProviderConfig extends Common {
  type: 'cluster-api';
  hub?: HubSpec;
  namespace?: string;
  apiVersion?: (typeof CAPI_VERSIONS)[number];
}
export interface ClusterInventoryProviderConfig extends Common {
  type: 'cluster-inventory';
  hub?: HubSpec;
  namespace?: string;
  providerFile?: string;
  consumer?: string;
}
export interface NamespaceProviderConfig extends Common {
  type: 'namespace';
  hub?: HubSpec;
  selector?: string;
}
export interface KcpProviderConfig extends Common {
  type: 'kcp';
  /** The kcp context (any workspace of the server); its server path picks the default root. */
  hub?: HubSpec;
  /** Workspace path the tree starts at; default the context's workspace (`/clusters/<path>` of its server), else root. */
  root?: string;
  /** How many levels below the root are listed; unlimited when absent (0: the root alone). */
  depth?: number;
  server?: (typeof KCP_SERVER_SOURCES)[number];
  /** Whether the URLs reach the shards through a kcp front proxy; found from the root's Shards when absent and readable. */
  frontProxy?: boolean;
}
export interface KindProviderConfig extends Common {
  type: 'kind';
  prefix?: string;
  command?: string;
}

export interface ExecProviderConfig extends Common {
  type: 'exec';
  /** The program that prints the clusters as a ClusterList (docs/providers.md); a path is relative to the config file. */
  command?: string;
  args?: string[];
  /** How long the program may take, in ms (`timeout: 30s`); DEFAULT_EXEC_PROVIDER_TIMEOUT_MS when absent. */
  timeoutMs?: number;
}

/** What an entry's parser gets besides its fields: the file's rules for paths and for `hub:`. */
export interface EntryContext {
  /** A path as written in the file: `~` is the home directory, anything else relative to the file. */
  path(p: string | undefined): string | undefined;
  /** The entry's own `hub:` (its kubeconfig paths resolved like `path`). */
  hub(): HubSpec | undefined;
}

/** An entry's own settings: everything but what every entry has. */
export type Settings<E extends Common & { type: string }> = Omit<E, 'type' | 'name' | 'origin'>;

/**
 * One provider type as fleet.yaml spells it: its name, the fields an entry may have (besides name and type), how they
 * are read (each check's one-line error names the field), an example entry, and the settings `--provider TYPE` gets
 * with nothing configured. The constructor is in src/providers/registry.ts (a floor above), keyed by the same type.
 */
export interface ProviderSpec<E extends Common & { type: string }> {
  type: E['type'];
  /** Other spellings accepted for `type:` (upstream's names). */
  aliases?: readonly string[];
  fields: readonly string[];
  /** Reads the entry's fields; called after unknown fields and the name were checked. */
  parse(f: Fields, at: EntryContext): Settings<E>;
  /** An entry as written in fleet.yaml (a YAML flow mapping), for docs and the unit test that parses every one. */
  example: string;
  /** Settings when `--provider TYPE` names a type nothing in the configuration is called. */
  defaults?(cwd: string): Partial<Settings<E>>;
  /**
   * Its clusters come from the user's own files or programs (kubeconfig files, kind), never from data read from a
   * cluster: the entry has no allow fields (ALLOW_FIELDS), which only mean something for hub data.
   */
  userSourced?: true;
  /**
   * The fields that choose a program fleet runs or a local file it reads as the user's own (a command, kubeconfig
   * files, an access-provider file, whose commands run as the user's): a fleet.yaml fleet found by itself in the working
   * directory may not set them (WORKING_DIR_REFUSED). Required, so that a new provider type decides it.
   */
  local: readonly string[];
}

const provider = <E extends Common & { type: string }>(spec: ProviderSpec<E>) => spec;

/**
 * Every provider type, in the order error messages and `--provider`'s help list them. Adding a provider type is one
 * line here (and its constructor in src/providers/registry.ts, which the compiler asks for): docs/architecture.md.
 */
export const PROVIDERS = [
  provider<FileProviderConfig>({
    type: 'file',
    userSourced: true,
    fields: ['kubeconfig', 'labels'],
    local: ['kubeconfig'],
    example: '{name: local, type: file, kubeconfig: [~/.kube/config], labels: {env: dev}}',
    parse: (f, at) => {
      const labels = readLabelRules(f);
      return { kubeconfig: f.strings('kubeconfig')?.map((p) => at.path(p)!), ...(labels ? { labels } : {}) };
    },
  }),
  provider<KubeconfigSecretProviderConfig>({
    type: 'kubeconfig',
    fields: ['hub', 'namespace', 'label', 'key'],
    local: [],
    example: '{name: secrets, type: kubeconfig, namespace: fleet-system}',
    parse: (f, at) => ({
      hub: at.hub(),
      namespace: f.string('namespace'),
      label: f.string('label'),
      key: f.string('key'),
    }),
  }),
  provider<ClusterApiProviderConfig>({
    type: 'cluster-api',
    fields: ['hub', 'namespace', 'apiVersion'],
    local: [],
    example: '{name: capi, type: cluster-api, apiVersion: v1beta2}',
    parse: (f, at) => ({
      hub: at.hub(),
      namespace: f.string('namespace'),
      apiVersion: f.oneOf('apiVersion', CAPI_VERSIONS),
    }),
  }),
  provider<ClusterInventoryProviderConfig>({
    type: 'cluster-inventory',
    aliases: ['cluster-inventory-api'],
    fields: ['hub', 'namespace', 'providerFile', 'consumer'],
    local: ['providerFile'],
    example: '{name: inventory, type: cluster-inventory, providerFile: access-providers.json}',
    parse: (f, at) => {
      const providerFile = at.path(f.string('providerFile'));
      const consumer = f.string('consumer');
      // Upstream takes exactly one strategy: access providers (the current API) or the deprecated Secret strategy.
      if (providerFile && consumer)
        throw f.error('consumer', 'set providerFile (access providers) or consumer (Secret strategy), not both');
      if (!providerFile && !consumer)
        throw f.error(undefined, 'set providerFile (access providers) or consumer (Secret strategy)');
      return { hub: at.hub(), namespace: f.string('namespace'), providerFile, consumer };
    },
    defaults: () => {
      throw new UsageError(
        `--provider cluster-inventory: nothing configures it; add an entry with providerFile (its access-provider file) or consumer to your fleet.yaml (fleet does not take ./${DEFAULT_ACCESS_PROVIDER_FILE} from the working directory: the commands it names would run as yours)`,
      );
    },
  }),
  provider<NamespaceProviderConfig>({
    type: 'namespace',
    fields: ['hub', 'selector'],
    local: [],
    example: '{name: tenants, type: namespace, selector: tenant}',
    parse: (f, at) => ({ hub: at.hub(), selector: f.string('selector') }),
  }),
  provider<KindProviderConfig>({
    type: 'kind',
    userSourced: true,
    fields: ['prefix', 'command'],
    local: ['command'],
    example: '{name: dev, type: kind, prefix: dev-}',
    parse: (f, at) => {
      // A command with a path separator is a file relative to the config; a bare name is looked up on PATH.
      const command = f.string('command');
      return { prefix: f.string('prefix'), command: command?.includes('/') ? at.path(command) : command };
    },
  }),
  provider<KcpProviderConfig>({
    type: 'kcp',
    fields: ['hub', 'root', 'depth', 'server', 'frontProxy'],
    local: [],
    example: '{name: kcp, type: kcp, root: root:org, depth: 1}',
    parse: (f, at) => {
      const root = f.string('root');
      if (root !== undefined && !KCP_PATH.test(root))
        throw f.error('root', `"${root}" is not a workspace path (like root:org:team)`);
      const depth = f.value.depth;
      if (
        depth !== undefined &&
        depth !== null &&
        (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 0)
      ) {
        throw f.error('depth', 'must be a whole number, 0 or more (levels below the root)');
      }
      return {
        hub: at.hub(),
        root,
        depth: typeof depth === 'number' ? depth : undefined,
        server: f.oneOf('server', KCP_SERVER_SOURCES),
        frontProxy: f.boolean('frontProxy'),
      };
    },
  }),
  provider<ExecProviderConfig>({
    type: 'exec',
    fields: ['command', 'args', 'timeout'],
    // The program is the user's word; what it prints is data (its exec credentials need the allow fields to run).
    local: ['command', 'args'],
    example: '{name: eks, type: exec, command: ~/bin/eks-clusters.py, args: [--region, eu-west-1], timeout: 2m}',
    parse: (f, at) => {
      const command = f.requiredString('command');
      const args = f.value.args;
      if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
        throw f.error('args', 'must be a list of strings');
      const timeout = f.string('timeout');
      const timeoutMs =
        timeout === undefined ? undefined : parseTimeLimit(timeout, `${f.file}: ${f.fieldPath('timeout')}`);
      if (timeoutMs === 0) throw f.error('timeout', 'must be more than 0 (the program must answer within it)');
      return {
        command: command.includes('/') ? at.path(command) : command,
        ...(args !== undefined ? { args: args as string[] } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      };
    },
  }),
  provider<ArgocdProviderConfig>({
    type: 'argocd',
    fields: ['hub', 'namespace', 'inCluster'],
    // inCluster lends the user's own hub credential to an entry hub data describes: an allowance for hub data, which a
    // ./fleet.yaml found in the working directory may not give.
    local: ['inCluster'],
    example: '{name: argo, type: argocd, namespace: argocd, inCluster: true}',
    parse: (f, at) => ({ hub: at.hub(), namespace: f.string('namespace'), inCluster: f.boolean('inCluster') }),
  }),
] as const;

type EntryOf<S> = S extends ProviderSpec<infer E> ? E : never;
/** One entry of `providers:`, as parsed: the union of every table line's entry type. */
export type ProviderConfig = EntryOf<(typeof PROVIDERS)[number]>;
export type ProviderType = ProviderConfig['type'];
export const PROVIDER_TYPES: readonly ProviderType[] = PROVIDERS.map((p) => p.type);

export interface FleetConfig {
  /** The file as the user named it (or as found). */
  path: string;
  /** Found by fleet itself as ./fleet.yaml (not named by --fleet-config or FLEET_CONFIG): not the user's word. */
  foundInWorkingDir?: true;
  hub?: HubSpec;
  providers: ProviderConfig[];
  /** What hub data may use wherever fleet reads it (every provider, creds and wi commands). */
  allow?: DataAllowances;
}

/** The fields that allow hub data a plugin or a file, top-level and in the entry of a provider that reads a hub. */
export const ALLOW_FIELDS = ['credentialPluginAllowlist', 'localFileAllowlist'] as const;

/**
 * `credentialPluginAllowlist: [{command: kubelogin, env: [AZURE_CONFIG_DIR], args: [get-token]}]` (kuberc's shape, and
 * what kuberc cannot say) and `localFileAllowlist: [/var/run/secrets/tokens/]` (absolute paths; a directory ends in /).
 * Commands are written as kubectl's allowlist wants them: a bare name, or a clean path. `env` names the variables data
 * may set for that command (none otherwise: there is no default list); `args`, when given, the one argument list data
 * may give it, word for word (an interpreter runs for data only so). A variable that chooses what runs (dataEnvProblem)
 * cannot be allowed at all: that is refused here, naming the entry.
 */
function readAllowances(f: Fields, file: string, env: NodeJS.ProcessEnv): DataAllowances | undefined {
  if (!f.has('credentialPluginAllowlist') && !f.has('localFileAllowlist')) return undefined;
  const commands = f.list('credentialPluginAllowlist').map((entry): PluginAllowance => {
    entry.only(['command', 'env', 'args']);
    const command = entry.requiredString('command');
    const names = entry.strings('env') ?? [];
    for (const [i, name] of names.entries()) {
      const problem = dataEnvProblem(name);
      if (problem)
        throw entry.error(
          `env[${i}]`,
          `${JSON.stringify(name)} ${problem}, so fleet never passes it from hub data, whatever the allowlist says`,
        );
    }
    const raw = entry.value.args;
    let args: string[] | undefined;
    if (raw !== undefined && raw !== null) {
      // Not strings(): an empty argument is an argument, and a single string is not a list here.
      if (!Array.isArray(raw) || raw.some((a) => typeof a !== 'string'))
        throw entry.error('args', 'must be a list of strings (the exact arguments data may give, [] for none)');
      args = raw as string[];
    }
    return { command, env: names, ...(args ? { args } : {}) };
  });
  const files = (f.strings('localFileAllowlist') ?? []).map((p, i) => {
    const path = expandHome(p, env) ?? p;
    if (!isAbsolute(path))
      throw f.error(`localFileAllowlist[${i}]`, `"${p}" must be an absolute path (a directory ends in /)`);
    return path;
  });
  return { credentialPluginAllowlist: commands, localFileAllowlist: files, where: `${file}: ${f.path || 'top level'}` };
}

export const FLEET_CONFIG_API_VERSION = 'fleet/v1alpha1';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The table line for a type as written (its name or an alias), if any. */
export function providerSpec(value: string): ProviderSpec<ProviderConfig> | undefined {
  return (PROVIDERS as readonly ProviderSpec<ProviderConfig>[]).find(
    (p) => p.type === value || p.aliases?.includes(value),
  );
}

export function isProviderType(value: string): value is ProviderType {
  return providerSpec(value) !== undefined;
}

export function normaliseType(value: string): ProviderType {
  return providerSpec(value)?.type ?? (value as ProviderType);
}

/** Where fleet looks when --fleet-config is not given: ./fleet.yaml, then the user's config directory. */
export function defaultConfigPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  const home = homeDir(env);
  const configHome =
    env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config');
  return [join(cwd, 'fleet.yaml'), join(configHome, 'fleet', 'config.yaml')];
}

/**
 * `~/x` is the home directory; other relative paths are relative to the file that names them, and name the file the
 * kernel opens from that directory (`link/..` follows the link, as for a path on the command line: base/paths.ts).
 */
export function expandPath(value: string, baseFile: string, env: NodeJS.ProcessEnv = process.env): string {
  return expandHome(value, env) ?? kernelPath(value, dirname(kernelPath(baseFile)));
}

const readText = (path: string) => readOptional(path, 'a fleet configuration file');

/**
 * Finds and reads the fleet configuration. An explicit path (--fleet-config, FLEET_CONFIG) must exist; otherwise the
 * first default path that exists is used, and none is not an error (fleet then works over kubeconfig files as kubectl
 * does). The working directory is not the user's word: it may be a checkout of someone else's pull request. So a
 * ./fleet.yaml found there is read only as far as it names no program and no file (WORKING_DIR_REFUSED), and one
 * that cannot be read as YAML is an error rather than skipped (skipping it would quietly choose other clusters).
 */
export async function loadFleetConfig(
  options: { path?: string; env?: NodeJS.ProcessEnv; cwd?: string; note?: (message: string) => void } = {},
): Promise<FleetConfig | undefined> {
  const env = options.env ?? process.env;
  if (options.path !== undefined) {
    const text = await readText(kernelPath(options.path, options.cwd ?? process.cwd()));
    if (text === undefined) throw new ConfigError(`--fleet-config: ${options.path}: no such file`);
    return parseFleetConfig(text, options.path, env, options.cwd);
  }
  const [inWorkingDir, ...others] = defaultConfigPaths(env, options.cwd);
  const local = await readText(inWorkingDir);
  if (local !== undefined) {
    // ./fleet.yaml is also Rancher Fleet's bundle file: only one that says it is ours is read.
    if (workingDirFileIsOurs(local, inWorkingDir))
      return parseFleetConfig(local, inWorkingDir, env, options.cwd, { foundInWorkingDir: true });
    options.note?.(`ignoring ${inWorkingDir}: it does not say "kind: FleetConfig" (a Rancher Fleet bundle file?)`);
  }
  for (const candidate of others) {
    const text = await readText(candidate);
    if (text !== undefined) return parseFleetConfig(text, candidate, env, options.cwd);
  }
  return undefined;
}

/** How to use a ./fleet.yaml the working directory holds for what it may not do by being found there. */
const nameItExplicitly = (path: string) => `if you trust it, name it: --fleet-config ${path} (or FLEET_CONFIG=${path})`;

/**
 * Whether a ./fleet.yaml found in the working directory is a fleet configuration (its first document a mapping with
 * `kind: FleetConfig`), or may be Rancher Fleet's bundle file (a mapping without it, or an empty file), which fleet
 * ignores. Anything else cannot be known to be Rancher's: text that is not YAML, or whose first document is not a
 * mapping, is an error naming the file and where it was found, never a silent fallback to other clusters.
 */
function workingDirFileIsOurs(text: string, path: string): boolean {
  let first: unknown;
  try {
    first = loadYaml(text, path, { firstDocument: true });
  } catch (error) {
    throw new ConfigError(
      `${(error as Error).message} (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)`,
      { cause: error },
    );
  }
  if (first === null || first === undefined) return false;
  if (typeof first !== 'object' || Array.isArray(first)) {
    throw new ConfigError(
      `${path}: found in the working directory, and neither a fleet configuration (kind: FleetConfig) nor a Rancher Fleet bundle file: its first document is ${Array.isArray(first) ? 'a list' : `a ${typeof first}`}, not a mapping`,
    );
  }
  return (first as { kind?: unknown }).kind === 'FleetConfig';
}

/**
 * What a ./fleet.yaml found in the working directory may not set, besides each provider type's `local` fields: the
 * allowances for hub data (they let data run programs and name files) and a hub's kubeconfig files (read as the user's
 * own: their exec plugins run, the files they name are read). What is left chooses only among the user's own
 * settings: provider types and names, namespaces, selectors, labels, the hub's context in the user's kubeconfig.
 */
export const WORKING_DIR_REFUSED = {
  topLevel: [...ALLOW_FIELDS],
  hub: ['kubeconfig'],
  provider: [...ALLOW_FIELDS],
} as const;

/** Refuses, in a file found in the working directory, a field that names a program or a file to run or read. */
function refuseInWorkingDir(f: Fields, keys: readonly string[]): void {
  for (const key of keys) {
    if (!f.has(key)) continue;
    throw f.error(
      key,
      `a fleet.yaml found in the working directory may not name programs or files (it may come from a checkout of someone else's code); ${nameItExplicitly(f.file)}`,
    );
  }
}

/**
 * `foundInWorkingDir`: fleet found the file by itself as ./fleet.yaml (loadFleetConfig), so it may not name programs
 * or files (WORKING_DIR_REFUSED); checked on the fields as written, before anything is resolved or run.
 */
export function parseFleetConfig(
  text: string,
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
  options: { foundInWorkingDir?: boolean } = {},
): FleetConfig {
  const loaded = loadYaml(text, path);
  const root = Fields.root(path, loaded, 'a fleet configuration');
  root.only(['apiVersion', 'kind', 'hub', 'providers', ...ALLOW_FIELDS]);
  const found = options.foundInWorkingDir === true;
  if (found) refuseInWorkingDir(root, WORKING_DIR_REFUSED.topLevel);
  const apiVersion = root.string('apiVersion');
  if (apiVersion !== undefined && apiVersion !== FLEET_CONFIG_API_VERSION) {
    throw root.error('apiVersion', `must be ${FLEET_CONFIG_API_VERSION}; got "${apiVersion}"`);
  }
  const kind = root.string('kind');
  if (kind !== undefined && kind !== 'FleetConfig') throw root.error('kind', `must be FleetConfig; got "${kind}"`);
  const absFile = kernelPath(path, cwd);
  const hub = readHub(root, absFile, env, found);
  const entries = root.list('providers');
  if (entries.length === 0) throw root.error('providers', 'name at least one provider');
  const providers: ProviderConfig[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const provider = readProvider(entry, absFile, env, found);
    if (seen.has(provider.name))
      throw entry.error('name', `duplicate provider name "${provider.name}" (give each entry its own name)`);
    seen.add(provider.name);
    providers.push(provider);
  }
  const allow = readAllowances(root, path, env);
  return { path, hub, providers, ...(allow ? { allow } : {}), ...(found ? { foundInWorkingDir: true as const } : {}) };
}

function readHub(f: Fields, file: string, env: NodeJS.ProcessEnv, found: boolean): HubSpec | undefined {
  const hub = f.mapping('hub');
  if (!hub) return undefined;
  hub.only(['kubeconfig', 'context']);
  if (found) refuseInWorkingDir(hub, WORKING_DIR_REFUSED.hub);
  return {
    kubeconfig: hub.strings('kubeconfig')?.map((p) => expandPath(p, file, env)),
    context: hub.string('context'),
  };
}

/**
 * `labels:` of a file provider: a mapping (labels for every cluster) or a list of rules
 * `{file: GLOB, context: GLOB, labels: {k: v}}` (either glob may be left out).
 */
function readLabelRules(f: Fields): FileProviderConfig['labels'] {
  if (!f.has('labels')) return undefined;
  if (!Array.isArray(f.value.labels)) return [{ labels: readLabelMap(f, 'labels') }];
  return f.list('labels').map((rule) => {
    rule.only(['file', 'context', 'labels']);
    if (!rule.has('labels')) throw rule.error('labels', 'is required (the labels this rule gives)');
    return { file: rule.string('file'), context: rule.string('context'), labels: readLabelMap(rule, 'labels') };
  });
}

/** A Kubernetes label key (optional DNS prefix and `/`, then a name): fleet.yaml's labels, an exec provider's. */
export const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function readLabelMap(f: Fields, key: string): Record<string, string> {
  const m = f.mapping(key)!;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.value)) {
    if (!LABEL_KEY.test(k)) throw m.error(k, 'is not a valid label key');
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw m.error(k, 'label values must be strings');
    out[k] = String(v);
  }
  return out;
}

function readProvider(f: Fields, file: string, env: NodeJS.ProcessEnv, found: boolean): ProviderConfig {
  const rawType = f.requiredString('type');
  const spec = providerSpec(rawType);
  if (!spec) throw f.error('type', `must be one of ${PROVIDER_TYPES.join(', ')}; got "${rawType}"`);
  const type = spec.type;
  const hubData = !spec.userSourced;
  f.only(['name', 'type', ...spec.fields, ...(hubData ? ALLOW_FIELDS : [])]);
  if (found) refuseInWorkingDir(f, [...spec.local, ...WORKING_DIR_REFUSED.provider]);
  const name = f.string('name') ?? type;
  if (!NAME.test(name)) {
    throw f.error(
      'name',
      `"${name}" is not a valid provider name (letters, digits, ".", "_" and "-"; it prefixes cluster names as <provider>#<cluster>)`,
    );
  }
  const origin = `${f.file}: ${f.path}`;
  const path = (p: string | undefined) => (p === undefined ? undefined : expandPath(p, file, env));
  const allow = hubData ? readAllowances(f, f.file, env) : undefined;
  return {
    type,
    name,
    origin,
    ...(allow ? { allow } : {}),
    ...spec.parse(f, { path, hub: () => readHub(f, file, env, found) }),
  };
}
