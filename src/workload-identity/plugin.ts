import { ConfigError } from '../base/errors.js';
import { MIN_TOKEN_SECONDS } from '../base/limits.js';
import {
  EXEC_API_VERSION,
  EXEC_API_VERSIONS,
  EXEC_CLUSTER_CONFIG_EXTENSION,
  type ExecConfig,
} from '../kubeconfig/types.js';
import {
  ACCESS_PROVIDER_NAME,
  PLUGIN_ARGS,
  type PluginClusterConfig,
  type WiTokenExec,
  wiTokenExec,
} from '../kubeconfig/wi-token-exec.js';
import { type ServiceAccountRef, parseServiceAccount } from './service-account.js';
import { jsonProblem, parseJson } from '../base/json.js';

export { ACCESS_PROVIDER_NAME, PLUGIN_ARGS, type PluginClusterConfig, type WiTokenExec, wiTokenExec };

/**
 * `fleet wi token` as an exec credential plugin (client.authentication.k8s.io): what it reads from KUBERNETES_EXEC_INFO
 * and its flags, what it prints, and how fleet recognises an exec user that runs it (creds list, wi doctor, wi setup).
 * Kept free of network and heavy imports: the plugin runs on every credential refresh of every consumer.
 */
/** TokenRequest's default lifetime, and what the plugin asks for unless told otherwise. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;

export interface ExecInfo {
  apiVersion: string;
  server?: string;
  config?: PluginClusterConfig;
}

/** What the plugin was asked for: from KUBERNETES_EXEC_INFO and the flags (the exec config's args). */
export interface TokenRequestPlan {
  apiVersion: string;
  serviceAccount: ServiceAccountRef;
  audience: string;
  expirationSeconds: number;
}

const WHERE = 'KUBERNETES_EXEC_INFO';

/** Reads KUBERNETES_EXEC_INFO as client-go writes it; absent (run by hand): v1 and no cluster. */
export function parseExecInfo(raw: string | undefined): ExecInfo {
  if (raw === undefined || raw.trim() === '') return { apiVersion: EXEC_API_VERSION };
  let value: unknown;
  try {
    value = parseJson(raw);
  } catch (error) {
    throw new ConfigError(`${WHERE}: ${jsonProblem(error, 'not valid JSON')}`);
  }
  const o = value as {
    apiVersion?: unknown;
    kind?: unknown;
    spec?: { cluster?: { server?: unknown; config?: unknown } };
  };
  if (!o || typeof o !== 'object' || o.kind !== 'ExecCredential')
    throw new ConfigError(`${WHERE}: not an ExecCredential`);
  if (typeof o.apiVersion !== 'string' || !EXEC_API_VERSIONS.includes(o.apiVersion)) {
    throw new ConfigError(
      `${WHERE}: apiVersion ${JSON.stringify(o.apiVersion ?? '')} is not one fleet answers (${EXEC_API_VERSIONS.join(', ')})`,
    );
  }
  const cluster = o.spec?.cluster;
  const info: ExecInfo = { apiVersion: o.apiVersion };
  if (cluster && typeof cluster.server === 'string' && cluster.server !== '') info.server = cluster.server;
  if (cluster?.config !== undefined && cluster.config !== null)
    info.config = clusterConfig(cluster.config, `${WHERE} spec.cluster.config`);
  return info;
}

/** The exec extension's config; unknown keys are refused, so a misspelt key is not silently ignored. */
export function clusterConfig(value: unknown, where: string): PluginClusterConfig {
  if (typeof value !== 'object' || Array.isArray(value) || value === null)
    throw new ConfigError(`${where}: expected a mapping with serviceAccount (and audience, expirationSeconds)`);
  const c = value as Record<string, unknown>;
  const known = ['serviceAccount', 'audience', 'expirationSeconds'];
  const unknown = Object.keys(c).filter((k) => !known.includes(k));
  if (unknown.length > 0)
    throw new ConfigError(
      `${where}: unknown key ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${known.join(', ')})`,
    );
  const out: PluginClusterConfig = {};
  for (const k of ['serviceAccount', 'audience'] as const) {
    if (c[k] === undefined) continue;
    if (typeof c[k] !== 'string' || c[k] === '') throw new ConfigError(`${where}: ${k} must be a non-empty string`);
    out[k] = c[k];
  }
  if (c.expirationSeconds !== undefined) {
    if (
      typeof c.expirationSeconds !== 'number' ||
      !Number.isInteger(c.expirationSeconds) ||
      c.expirationSeconds < MIN_TOKEN_SECONDS
    ) {
      throw new ConfigError(
        `${where}: expirationSeconds must be a whole number of at least ${MIN_TOKEN_SECONDS} (the API server's minimum)`,
      );
    }
    out.expirationSeconds = c.expirationSeconds;
  }
  return out;
}

/**
 * Flags (the consumer's exec config) and the cluster's config (per cluster) together. Where both name a setting they
 * must agree: a profile cannot quietly redirect a consumer to another ServiceAccount, nor a flag override a cluster.
 */
export function planTokenRequest(
  info: ExecInfo,
  flags: { serviceAccount?: string; audience?: string; expirationSeconds?: number },
): TokenRequestPlan {
  const c = info.config ?? {};
  const both = (
    what: string,
    flag: string | undefined,
    config: string | undefined,
    flagName: string,
  ): string | undefined => {
    if (flag !== undefined && config !== undefined && flag !== config) {
      throw new ConfigError(
        `${flagName} ${flag} and the cluster's exec config (${WHERE} spec.cluster.config.${what}) ${config} disagree: set it in one place`,
      );
    }
    return flag ?? config;
  };
  const sa = both('serviceAccount', flags.serviceAccount, c.serviceAccount, '--service-account');
  if (!sa)
    throw new ConfigError(
      `no ServiceAccount: pass --service-account NS/NAME or set serviceAccount in the cluster's exec config (${WHERE} spec.cluster.config, with provideClusterInfo: true)`,
    );
  const serviceAccount = parseServiceAccount(
    sa,
    flags.serviceAccount ? '--service-account' : `${WHERE} spec.cluster.config.serviceAccount`,
  );
  const audience = both('audience', flags.audience, c.audience, '--audience') ?? info.server;
  if (!audience)
    throw new ConfigError(
      `no audience: ${WHERE} carries no spec.cluster.server (set provideClusterInfo: true in the exec config) and no --audience was given`,
    );
  return {
    apiVersion: info.apiVersion,
    serviceAccount,
    audience,
    expirationSeconds: flags.expirationSeconds ?? c.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS,
  };
}

/** The one thing the plugin prints: the ExecCredential client-go reads. */
export function execCredential(apiVersion: string, token: string, expirationTimestamp: string | undefined): string {
  const status: Record<string, string> = { token };
  if (expirationTimestamp) status.expirationTimestamp = expirationTimestamp;
  return `${JSON.stringify({ apiVersion, kind: 'ExecCredential', status })}\n`;
}

/**
 * `wi doctor --target T` without --hub and --service-account: when T's user runs `fleet wi token`, what the plugin would
 * do, read from its exec config and the cluster's exec extension: the ServiceAccount, the audience, and the hub it finds
 * (its --hub-kubeconfig/--hub-context, its environment for the one hub rule).
 */
export interface PluginTarget extends WiTokenExec {
  serviceAccountRef: ServiceAccountRef;
  audience: string;
  /** The process environment with the exec config's env on top: what the plugin's hub rule reads. */
  env: NodeJS.ProcessEnv;
}

export function pluginTarget(
  target: string,
  ctx: {
    user: { exec?: ExecConfig };
    cluster: { server?: string; extensions?: Array<{ name: string; extension: unknown }> };
  },
  env: NodeJS.ProcessEnv = process.env,
): PluginTarget {
  const ext = ctx.cluster.extensions?.find((e) => e.name === EXEC_CLUSTER_CONFIG_EXTENSION)?.extension;
  const wi = wiTokenExec(ctx.user.exec, ctx.user.exec?.provideClusterInfo ? ext : undefined);
  if (!wi)
    throw new ConfigError(
      `--target ${target}: its user does not run fleet wi token; name the hub and the ServiceAccount with --hub and --service-account`,
    );
  if (!wi.serviceAccount)
    throw new ConfigError(
      `--target ${target}: its fleet wi token user names no ServiceAccount (no --service-account in its args, no serviceAccount in the cluster's exec config)`,
    );
  const serviceAccountRef = parseServiceAccount(wi.serviceAccount, `--target ${target}: the plugin's ServiceAccount`);
  const audience = wi.audience ?? ctx.cluster.server ?? '';
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const e of ctx.user.exec?.env ?? []) merged[e.name] = e.value;
  return { ...wi, serviceAccountRef, audience, env: merged };
}
