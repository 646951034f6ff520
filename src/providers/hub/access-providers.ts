import { readRequired } from '../../base/files.js';
import { ConfigError } from '../../base/errors.js';
import { Fields, isMapping } from '../../config/fields.js';
import { expandPath } from '../../config/fleet-config.js';
import type { ClusterEntry, ExecConfig, ExecEnvVar, NamedExtension } from '../../kubeconfig/types.js';
import { jsonProblem, parseJson } from '../../base/json.js';

/**
 * The access-provider configuration of sigs.k8s.io/cluster-inventory-api (`-clusterprofile-provider-file`): which exec
 * plugin provides credentials for each access provider a ClusterProfile may name, and whether a profile may add
 * arguments and environment variables to it. Read the way upstream's `pkg/access` reads it, so fleet connects to a
 * profile exactly as a controller using that library would.
 */
export const ADDITIONAL_ARGS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args';
export const ADDITIONAL_ENVS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs';
export const ARGS_POLICIES = ['Append', 'Ignore'] as const;
export const ENV_POLICIES = ['AppendIfNotExists', 'Replace', 'Ignore'] as const;
export type ArgsPolicy = (typeof ARGS_POLICIES)[number];
export type EnvPolicy = (typeof ENV_POLICIES)[number];

export interface AccessProviderEntry {
  name: string;
  execConfig?: ExecConfig;
  argsPolicy: ArgsPolicy;
  envPolicy: EnvPolicy;
}

export interface AccessConfig {
  path: string;
  providers: AccessProviderEntry[];
}

/** One entry of a profile's `status.accessProviders` (or the deprecated `credentialProviders`). */
export interface ProfileAccessProvider {
  name: string;
  cluster?: ClusterEntry;
}

export async function loadAccessConfig(path: string, env: NodeJS.ProcessEnv = process.env): Promise<AccessConfig> {
  const text = (await readRequired(path, `access-provider file ${path}`)).toString('utf8');
  return parseAccessConfig(text, path, env);
}

/**
 * Unknown fields are ignored, as Go's JSON decoding ignores them (the file is shared with controllers); known fields
 * must have the right types. A command with a path separator is relative to the file, as in a kubeconfig.
 */
export function parseAccessConfig(text: string, path: string, env: NodeJS.ProcessEnv = process.env): AccessConfig {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new ConfigError(`${path}: ${jsonProblem(error, `not valid JSON: ${(error as Error).message}`)}`);
  }
  const root = Fields.root(path, value, 'an access-provider configuration');
  const providers = root.list('providers').map((p): AccessProviderEntry => {
    const exec = p.mapping('execConfig');
    return {
      name: p.requiredString('name'),
      execConfig: exec ? readExec(exec, path, env) : undefined,
      argsPolicy: p.oneOf('profileSourcedCLIArgsPolicy', ARGS_POLICIES) ?? 'Ignore',
      envPolicy: p.oneOf('profileSourcedEnvVarsPolicy', ENV_POLICIES) ?? 'Ignore',
    };
  });
  return { path, providers };
}

function readExec(f: Fields, file: string, env: NodeJS.ProcessEnv): ExecConfig {
  const command = f.requiredString('command');
  const args = f.value.args;
  if (args !== undefined && args !== null && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) {
    throw f.error('args', 'must be a list of strings');
  }
  const envList = f.value.env;
  if (envList !== undefined && envList !== null) {
    if (!Array.isArray(envList)) throw f.error('env', 'must be a list of {name, value}');
    envList.forEach((e, i) => {
      if (!isMapping(e) || typeof e.name !== 'string' || typeof e.value !== 'string') {
        throw f.error(`env[${i}]`, 'must be {name: string, value: string}');
      }
    });
  }
  return {
    apiVersion: f.string('apiVersion'),
    command: command.includes('/') ? expandPath(command, file, env) : command,
    args: (args as string[] | undefined) ?? [],
    env: ((envList as ExecEnvVar[] | undefined) ?? []).map((e) => ({ name: e.name, value: e.value })),
    installHint: f.string('installHint'),
    provideClusterInfo: f.boolean('provideClusterInfo') ?? false,
  };
}

/**
 * Why a profile's access fields cannot be read, or undefined. The status is hub data whose access fields were renamed
 * across releases (the CRDs leave them open), so a list may hold anything: a profile of the wrong shape is its own
 * not-ready row with this reason, and never ends the listing of the others.
 */
export function accessShapeProblem(status: unknown): string | undefined {
  if (status === undefined || status === null) return undefined;
  if (!isMapping(status)) return `status must be a mapping, got ${shapeOf(status)}`;
  for (const field of ['accessProviders', 'credentialProviders']) {
    const list = status[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) return `status.${field} must be a list, got ${shapeOf(list)}`;
    for (const [i, entry] of list.entries()) {
      const at = `status.${field}[${i}]`;
      if (!isMapping(entry) || typeof entry.name !== 'string') return `${at} must be a mapping with a string name`;
      const cluster = entry.cluster;
      if (cluster === undefined || cluster === null) continue;
      if (!isMapping(cluster)) return `${at}.cluster must be a mapping, got ${shapeOf(cluster)}`;
      const extensions = cluster.extensions;
      if (
        extensions !== undefined &&
        extensions !== null &&
        !(Array.isArray(extensions) && extensions.every((e) => isMapping(e) && typeof e.name === 'string'))
      )
        return `${at}.cluster.extensions must be a list of {name, extension}`;
    }
  }
  return undefined;
}

const shapeOf = (v: unknown) => (Array.isArray(v) ? 'a list' : isMapping(v) ? 'a mapping' : typeof v);

/**
 * The access provider to use for a profile: the deprecated `credentialProviders` and `accessProviders` merged
 * (accessProviders wins on a name clash), then the FIRST provider of the file, in file order, that the profile names.
 */
export function chooseAccessProvider(
  config: AccessConfig,
  profile: { accessProviders?: ProfileAccessProvider[]; credentialProviders?: ProfileAccessProvider[] },
): { entry: AccessProviderEntry; access: ProfileAccessProvider } | Error {
  const offered = new Map<string, ProfileAccessProvider>();
  for (const p of profile.credentialProviders ?? []) offered.set(p.name, p);
  for (const p of profile.accessProviders ?? []) offered.set(p.name, p);
  for (const entry of config.providers) {
    const access = offered.get(entry.name);
    if (access) return { entry, access };
  }
  const names = (list: Iterable<string>) => [...list].map((n) => `"${n}"`).join(', ');
  if (offered.size === 0) return new Error('the profile lists no access providers (status.accessProviders is empty)');
  return new Error(
    `no access provider matches: the profile offers ${names(offered.keys())}, ${config.path} configures ${names(config.providers.map((p) => p.name)) || 'none'}`,
  );
}

/**
 * The kubeconfig cluster and exec user a controller would build for this access provider. Like upstream's
 * BuildConfigFromCP: only server, certificate-authority-data, proxy-url and the extensions are carried over (its
 * rest.Config has no TLS server name and never skips verification), interactiveMode is Never, and the profile's
 * additional args and envs apply only as the file's policies allow.
 */
export function execContext(
  entry: AccessProviderEntry,
  access: ProfileAccessProvider,
): { cluster: ClusterEntry; exec: ExecConfig; dataEnv: string[] } | Error {
  if (!entry.execConfig) return new Error(`access provider "${entry.name}" has no execConfig`);
  const src = access.cluster ?? {};
  const cluster: ClusterEntry = { server: src.server };
  if (src['certificate-authority-data']) cluster['certificate-authority-data'] = src['certificate-authority-data'];
  if (src['proxy-url']) cluster['proxy-url'] = src['proxy-url'];
  if (src.extensions?.length) cluster.extensions = src.extensions;
  const exec: ExecConfig = {
    ...entry.execConfig,
    args: [...(entry.execConfig.args ?? [])],
    env: [...(entry.execConfig.env ?? [])],
    interactiveMode: 'Never',
  };
  const dataEnv: string[] = [];
  for (const ext of src.extensions ?? []) {
    const problem = applyExtension(exec, ext, entry, dataEnv);
    if (problem) return new Error(`access provider "${entry.name}": extension ${ext.name}: ${problem}`);
  }
  return { cluster, exec, dataEnv };
}

/** Applies one extension of the profile; `dataEnv` collects the variables the profile set (TrustPolicy judges them). */
function applyExtension(
  exec: ExecConfig,
  ext: NamedExtension,
  entry: AccessProviderEntry,
  dataEnv: string[],
): string | undefined {
  if (ext.name === ADDITIONAL_ARGS_EXTENSION && entry.argsPolicy === 'Append') {
    const value = ext.extension;
    if (!Array.isArray(value) || !value.every(isScalar)) return 'must be a list of strings';
    exec.args!.push(...value.map(String));
  }
  if (ext.name === ADDITIONAL_ENVS_EXTENSION && entry.envPolicy !== 'Ignore') {
    const value = ext.extension;
    if (!isMapping(value) || !Object.values(value).every(isScalar)) return 'must be a mapping of names to strings';
    const fromProfile = new Map(Object.entries(value).map(([k, v]) => [k, String(v)]));
    const replace = entry.envPolicy === 'Replace';
    for (const name of fromProfile.keys()) if (replace || !exec.env!.some((e) => e.name === name)) dataEnv.push(name);
    // The file's variables keep their order; the profile's new ones follow. Which value wins depends on the policy.
    const merged: ExecEnvVar[] = exec.env!.map((e) =>
      replace && fromProfile.has(e.name) ? { name: e.name, value: fromProfile.get(e.name)! } : e,
    );
    for (const [name, v] of fromProfile) if (!merged.some((e) => e.name === name)) merged.push({ name, value: v });
    exec.env = merged;
  }
  return undefined;
}

const isScalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
