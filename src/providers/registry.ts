import { ConfigError, UsageError } from '../base/errors.js';
import {
  type FleetConfig,
  type HubSpec,
  PROVIDER_TYPES,
  type ProviderConfig,
  isProviderType,
  loadFleetConfig,
  providerSpec,
} from '../config/fleet-config.js';
import type { Connector } from '../kube/connector.js';
import type { TrustPolicy } from '../kubeconfig/trust.js';
import { FileProvider } from './file.js';
import type { HubOptions } from './hub/client.js';
import { guardRef } from './ref.js';
import type { ClusterProvider, ClusterRef, ProviderFailure } from './types.js';

export interface ProviderFlags {
  kubeconfig?: string[];
  context?: string;
  /** --provider: a provider named in the fleet config, or a provider type with default settings. */
  provider?: string;
  /** --fleet-config: an explicit fleet configuration file. */
  fleetConfig?: string;
  /**
   * false: no fleet configuration but the one fleetConfig names (ignoring ./fleet.yaml and the user's config dir), for
   * a command whose arguments already say everything (kubeconfig credential, run by kubectl from anywhere).
   */
  findFleetConfig?: boolean;
  /** The command's connector (required: one exec runner per command), so a plugin shared by a hub and its members runs once. */
  connector: Connector;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where to say things only --verbose shows (a ./fleet.yaml that is not ours, ignored). */
  note?: (message: string) => void;
}

/** Per-provider hub settings override the file-wide ones; a kubeconfig given anywhere brings its own current-context. */
export function mergeHub(base: HubSpec | undefined, over: HubSpec | undefined): HubSpec | undefined {
  if (!over || (!over.kubeconfig && !over.context)) return base;
  if (over.kubeconfig) return over;
  return { kubeconfig: base?.kubeconfig, context: over.context };
}

/** How a provider of one type is built from its entry (the hub already merged) and the run's hub options. */
type Constructors = {
  [E in ProviderConfig as E['type']]: (
    entry: E,
    hub: HubSpec | undefined,
    options: HubOptions,
  ) => Promise<ClusterProvider>;
};

// One line per line of PROVIDERS (src/config/fleet-config.ts, a floor below, where fleet.yaml is parsed); the type
// makes a missing one a compile error. Each provider but the file provider is imported when a run uses it: listing
// kubeconfig contexts, the common case, does not load the hub providers, kcp's or kind's (docs/decisions.md, "What is
// left at start-up").
export const CONSTRUCTORS: Constructors = {
  file: async (entry, _hub, options) =>
    new FileProvider({ name: entry.name, paths: entry.kubeconfig, env: options.env, labels: entry.labels }),
  kubeconfig: async (entry, hub, options) =>
    new (await import('./hub/kubeconfig-secret.js')).KubeconfigSecretProvider({ ...entry, hub }, options),
  'cluster-api': async (entry, hub, options) =>
    new (await import('./hub/cluster-api.js')).ClusterApiProvider({ ...entry, hub }, options),
  'cluster-inventory': async (entry, hub, options) =>
    new (await import('./hub/cluster-inventory.js')).ClusterInventoryProvider({ ...entry, hub }, options),
  namespace: async (entry, hub, options) =>
    new (await import('./hub/namespace.js')).NamespaceProvider({ ...entry, hub }, options),
  kind: async (entry, _hub, options) =>
    new (await import('./kind.js')).KindProvider(entry.name, {
      command: entry.command,
      prefix: entry.prefix,
      env: options.env,
    }),
  kcp: async (entry, hub, options) => new (await import('./kcp.js')).KcpProvider({ ...entry, hub }, options),
  exec: async (entry, _hub, options) => {
    if (entry.command === undefined)
      throw new ConfigError(
        `provider "${entry.name}" (type exec) names no program: add one to your fleet configuration, e.g. {name: ${entry.name}, type: exec, command: /path/to/list-clusters} (docs/providers.md)`,
      );
    return new (await import('./exec.js')).ExecProvider({
      name: entry.name,
      command: entry.command,
      args: entry.args,
      timeoutMs: entry.timeoutMs,
      env: options.env,
    });
  },
  argocd: async (entry, hub, options) =>
    new (await import('./hub/argocd.js')).ArgocdProvider({ ...entry, hub }, options),
};

export async function createProvider(
  entry: ProviderConfig,
  hub: HubSpec | undefined,
  options: HubOptions,
): Promise<ClusterProvider> {
  const create = CONSTRUCTORS[entry.type] as (
    entry: ProviderConfig,
    hub: HubSpec | undefined,
    options: HubOptions,
  ) => Promise<ClusterProvider>;
  return create(entry, hub, options);
}

/** A provider type named on the command line with nothing configured: upstream's defaults (its table line's). */
function defaultEntry(type: string, cwd: string): ProviderConfig {
  const spec = providerSpec(type)!;
  return { type: spec.type, name: spec.type, ...spec.defaults?.(cwd) };
}

/**
 * Which providers a run looks at:
 * - `--provider NAME`: that provider of the fleet config (or, if none is called so, a provider of that type with
 *   default settings); `--kubeconfig` / `--context` then name its hub (or, for a file provider, its files);
 * - else `--kubeconfig`: the file provider over those files, as kubectl;
 * - else a fleet config (`--fleet-config`, ./fleet.yaml, the user's config dir): all its providers, names prefixed
 *   `<provider>#` when there are several;
 * - else the file provider over the loading rules.
 */
export async function buildProvider(flags: ProviderFlags): Promise<ClusterProvider> {
  const env = flags.env ?? process.env;
  const cwd = flags.cwd ?? process.cwd();
  const options: HubOptions = { connector: flags.connector, env };
  // An explicit --kubeconfig without --provider means kubectl's view; a default fleet.yaml lying around must not change it.
  const kubectlView = flags.kubeconfig !== undefined && !flags.provider;
  if (kubectlView && flags.fleetConfig !== undefined) {
    throw new UsageError(
      '--kubeconfig and --fleet-config select different clusters; use one, or name a provider with --provider',
    );
  }
  if (kubectlView) return new FileProvider({ paths: flags.kubeconfig, env, cwd, flag: '--kubeconfig' });
  const config =
    flags.fleetConfig === undefined && flags.findFleetConfig === false
      ? undefined
      : await loadFleetConfig({ path: flags.fleetConfig, env, cwd, note: flags.note });
  const flagHub: HubSpec = { kubeconfig: flags.kubeconfig, context: flags.context };
  // What the operator lets hub data use, file-wide and per provider: the connector's policy judges every cluster with it.
  if (config) flags.connector.trust.configPath = config.path;
  if (config?.foundInWorkingDir) flags.connector.trust.configFound = true;
  if (config?.allow) flags.connector.trust.allow(undefined, config.allow);
  for (const p of config?.providers ?? []) if (p.allow) flags.connector.trust.allow(p.name, p.allow);

  if (flags.provider) {
    const entry =
      config?.providers.find((p) => p.name === flags.provider) ??
      (isProviderType(flags.provider) ? defaultEntry(flags.provider, cwd) : undefined);
    if (!entry) throw unknownProvider(flags.provider, config);
    const withFlags: ProviderConfig =
      entry.type === 'file' && flags.kubeconfig ? { ...entry, kubeconfig: flags.kubeconfig } : entry;
    return createProvider(
      withFlags,
      mergeHub(mergeHub(config?.hub, 'hub' in entry ? entry.hub : undefined), flagHub),
      options,
    );
  }
  if (!config) return new FileProvider({ env, cwd });
  // One after another, as before: with several misconfigured providers, the first one's error is the one reported.
  const providers: ClusterProvider[] = [];
  for (const p of config.providers)
    providers.push(await createProvider(p, mergeHub(config.hub, 'hub' in p ? p.hub : undefined), options));
  return providers.length === 1 ? providers[0] : new (await import('./multi.js')).MultiProvider(providers);
}

function unknownProvider(name: string, config: FleetConfig | undefined): ConfigError {
  const configured = config ? `; ${config.path} names ${config.providers.map((p) => `"${p.name}"`).join(', ')}` : '';
  return new ConfigError(
    `--provider: no provider "${name}"${configured}; provider types: ${PROVIDER_TYPES.join(', ')}`,
  );
}

/**
 * The providers of a run, built on first use: commands get a provider synchronously, and the fleet configuration is
 * read (and its errors reported) only by commands that look at clusters.
 */
export class DeferredProvider implements ClusterProvider {
  readonly name = 'fleet';
  private inner?: Promise<ClusterProvider>;
  // One judged ref per ref a provider hands out, so list() and get() give the same object for a cluster.
  private readonly guarded = new WeakMap<ClusterRef, Promise<ClusterRef>>();

  constructor(
    private readonly load: () => Promise<ClusterProvider>,
    /** The run's trust policy: every ref is judged by it before a command sees it (guardRef). */
    private readonly trust?: TrustPolicy,
  ) {}

  private guard(ref: ClusterRef): Promise<ClusterRef> {
    if (!this.trust) return Promise.resolve(ref);
    let g = this.guarded.get(ref);
    if (!g) this.guarded.set(ref, (g = guardRef(ref, this.trust)));
    return g;
  }

  private loaded?: ClusterProvider;

  provider(): Promise<ClusterProvider> {
    this.inner ??= this.load().then((p) => (this.loaded = p));
    return this.inner;
  }

  /** Where the clusters come from, once known (messages are written after a first look). */
  describe(): string {
    if (!this.loaded) return 'the fleet';
    return this.loaded.describe?.() ?? `provider "${this.loaded.name}"`;
  }

  async list(): Promise<ClusterRef[]> {
    return Promise.all((await (await this.provider()).list()).map((r) => this.guard(r)));
  }

  async get(name: string): Promise<ClusterRef> {
    return this.guard(await (await this.provider()).get(name));
  }

  async failures(): Promise<ProviderFailure[]> {
    return (await (await this.provider()).failures?.()) ?? [];
  }

  async providerNames(): Promise<string[]> {
    const inner = await this.provider();
    return (await inner.providerNames?.()) ?? [inner.name];
  }

  /** The short names of the clusters listed so far (ClusterProvider.shortNames); none before the providers are built. */
  async shortNames(): Promise<Map<string, string>> {
    if (!this.inner) return new Map();
    try {
      return (await (await this.inner).shortNames?.()) ?? new Map<string, string>();
    } catch {
      return new Map();
    }
  }

  async current(context?: string): Promise<ClusterRef> {
    const p = await this.provider();
    if (!p.current)
      throw new UsageError(
        `${p.describe?.() ?? p.name} has no current cluster: name one with --cluster, or use --all or --selector`,
      );
    return this.guard(await p.current(context));
  }
}

export function fleetProvider(flags: ProviderFlags): DeferredProvider {
  return new DeferredProvider(() => buildProvider(flags), flags.connector.trust);
}

export type { ClusterProvider };
