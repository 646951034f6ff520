import { readFile } from 'node:fs/promises';
import type { V1Role, V1RoleBinding, V1Secret } from '@kubernetes/client-node';
import yaml from 'js-yaml';

import { ConfigError, FleetError } from '../base/errors.js';
import { loadYamlIfValid } from '../base/yaml.js';
import { ARGOCD_CLUSTER_LABELS, argocdData, tlsClientConfig } from '../creds/codecs/argocd.js';
import { MANAGED_BY_LABELS } from '../creds/labels.js';
import type { KubeClient } from '../kube/client.js';
import { CLUSTER_PROFILE } from '../kube/resources.js';
import { httpError } from '../kube/errors.js';
import { getObject, sendObject } from '../kube/typed.js';
import type { KubeObject, Wire } from '../kube/objects.js';
import {
  type ClusterEntry,
  EXEC_API_VERSION,
  EXEC_CLUSTER_CONFIG_EXTENSION,
  type ExecConfig,
  type KubeconfigDoc,
} from '../kubeconfig/types.js';
import { type Cluster, caPemOf } from './connect.js';
import { ACCESS_PROVIDER_NAME, PLUGIN_ARGS, type PluginClusterConfig } from './plugin.js';
import type { ServiceAccountRef } from './service-account.js';

/**
 * What each consumer of `fleet wi token` needs (`wi setup --consumer ...`): a ClusterProfile access provider and the
 * provider file of multicluster-runtime / cluster-inventory-api, a kubeconfig, an Argo CD cluster Secret. None of them
 * holds a secret: each names the plugin, the hub ServiceAccount and the audience; the token is minted per refresh.
 */
export const CONSUMERS = ['flux', 'cluster-inventory', 'kubeconfig', 'argocd'] as const;
export type Consumer = (typeof CONSUMERS)[number];
/** Marks a kubeconfig `wi setup --consumer kubeconfig` wrote, so a second run may replace it. */
export const WI_KUBECONFIG_EXTENSION = 'fleet.dev/workload-identity';

/** How the consumer runs the plugin: the command, and the hub kubeconfig it reads (none: the one hub rule, in a Pod its in-cluster configuration). */
export interface PluginInvocation {
  command: string;
  hub?: { kubeconfig: string[]; context?: string };
}

export interface ConsumerInput {
  target: Cluster;
  serviceAccount: ServiceAccountRef;
  /** Only when it differs from the target's server URL (the plugin's default). */
  audience?: string;
  plugin: PluginInvocation;
}

export function pluginArgs(p: PluginInvocation, extra: string[] = []): string[] {
  const hub = p.hub
    ? ['--hub-kubeconfig', p.hub.kubeconfig.join(':'), ...(p.hub.context ? ['--hub-context', p.hub.context] : [])]
    : [];
  return [...PLUGIN_ARGS, ...extra, ...hub];
}

export function pluginExec(p: PluginInvocation, extra: string[] = []): ExecConfig {
  return {
    apiVersion: EXEC_API_VERSION,
    command: p.command,
    args: pluginArgs(p, extra),
    env: [],
    provideClusterInfo: true,
  };
}

/** The per-cluster config the plugin reads from ExecCredential.spec.cluster.config. */
export function clusterConfigFor(i: Pick<ConsumerInput, 'serviceAccount' | 'audience'>): PluginClusterConfig {
  return {
    serviceAccount: `${i.serviceAccount.namespace}/${i.serviceAccount.name}`,
    ...(i.audience ? { audience: i.audience } : {}),
  };
}

/** The target as a consumer reaches it: server, embedded CA, TLS server name, proxy. */
export async function targetCluster(target: Cluster): Promise<ClusterEntry> {
  const c = target.context.cluster;
  const out: ClusterEntry = { server: c.server };
  const ca = await caPemOf(c, `target ${target.name}`);
  if (ca) out['certificate-authority-data'] = Buffer.from(ca).toString('base64');
  if (c['tls-server-name']) out['tls-server-name'] = c['tls-server-name'];
  if (c['proxy-url']) out['proxy-url'] = c['proxy-url'];
  return out;
}

// ---- cluster-inventory: the ClusterProfile's status.accessProviders entry and the provider file ---------------------

export interface AccessProvider {
  name: string;
  cluster: ClusterEntry;
}

export interface ProviderFile {
  providers: Array<{ name: string; execConfig: ExecConfig }>;
}

export async function accessProviderFor(i: ConsumerInput): Promise<AccessProvider> {
  const cluster = await targetCluster(i.target);
  // cluster-inventory-api's access library ignores tls-server-name; the entry carries only what it reads.
  delete cluster['tls-server-name'];
  return {
    name: ACCESS_PROVIDER_NAME,
    cluster: { ...cluster, extensions: [{ name: EXEC_CLUSTER_CONFIG_EXTENSION, extension: clusterConfigFor(i) }] },
  };
}

export function providerFileFor(p: PluginInvocation): ProviderFile {
  return { providers: [{ name: ACCESS_PROVIDER_NAME, execConfig: pluginExec(p) }] };
}

type Profile = KubeObject & { status?: { accessProviders?: AccessProvider[] } };

async function readProfile(hub: KubeClient, p: { namespace: string; name: string }): Promise<Profile> {
  const profile = await getObject<Profile>(hub, CLUSTER_PROFILE, p.name, {
    namespace: p.namespace,
    what: `read ClusterProfile ${p.namespace}/${p.name}`,
    ok: [200],
  });
  if (!profile)
    throw new ConfigError(
      `--profile ${p.namespace}/${p.name}: no such ClusterProfile on hub ${hub.context.contextName}`,
    );
  return profile;
}

const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

/** Whether the profile already carries exactly this entry: `unchanged`, `update` or `create`. */
export async function planProfile(
  hub: KubeClient,
  p: { namespace: string; name: string },
  entry: AccessProvider,
): Promise<'create' | 'update' | 'unchanged'> {
  const have = (await readProfile(hub, p)).status?.accessProviders?.find((a) => a.name === entry.name);
  if (!have) return 'create';
  return canonical(have) === canonical(entry) ? 'unchanged' : 'update';
}

/**
 * Puts the entry into the profile's status.accessProviders (replacing one of the same name, keeping the others) with
 * a resourceVersion precondition: the open status schema of older CRDs makes the list atomic, so a server-side apply
 * would take the whole list from its manager. With dryRun the API server validates without saving.
 */
export async function writeProfile(
  hub: KubeClient,
  p: { namespace: string; name: string },
  entry: AccessProvider,
  dryRun: boolean,
): Promise<void> {
  const profile = await readProfile(hub, p);
  const others = (profile.status?.accessProviders ?? []).filter((a) => a.name !== entry.name);
  profile.status = { ...profile.status, accessProviders: [...others, entry] };
  // The server's dry run (validated, not saved) is a query parameter of the update itself.
  const res = await sendObject(
    hub,
    'PUT',
    CLUSTER_PROFILE,
    { namespace: p.namespace, name: p.name, subresource: 'status' },
    { body: profile, query: { dryRun: dryRun ? 'All' : undefined } },
  );
  if (res.status < 200 || res.status >= 300)
    throw httpError(res.status, res.body, `update ClusterProfile ${p.namespace}/${p.name} status`);
  if (dryRun) return;
  const back = (await readProfile(hub, p)).status?.accessProviders?.find((a) => a.name === entry.name);
  if (!back || canonical(back) !== canonical(entry))
    throw new FleetError(
      'server',
      `ClusterProfile ${p.namespace}/${p.name}: status.accessProviders does not read back as written`,
    );
}

// ---- kubeconfig -------------------------------------------------------------------------------------------------------

/**
 * A one-context kubeconfig whose user runs the plugin: no token in the file. The ServiceAccount (and a non-default
 * audience) are the plugin's arguments, so the file works with any client-go; provideClusterInfo gives it the server.
 */
export async function pluginKubeconfig(i: ConsumerInput, name: string): Promise<string> {
  const sa = `${i.serviceAccount.namespace}/${i.serviceAccount.name}`;
  const exec: ExecConfig = {
    ...pluginExec(i.plugin, ['--service-account', sa, ...(i.audience ? ['--audience', i.audience] : [])]),
    interactiveMode: 'Never',
  };
  const user = `wi:${i.serviceAccount.namespace}:${i.serviceAccount.name}`;
  const doc: KubeconfigDoc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: await targetCluster(i.target) }],
    users: [{ name: user, user: { exec } }],
    contexts: [{ name, context: { cluster: name, user } }],
    'current-context': name,
    extensions: [{ name: WI_KUBECONFIG_EXTENSION, extension: { serviceAccount: sa, target: i.target.name } }],
  };
  return yaml.dump(doc, { noRefs: true, lineWidth: -1 });
}

/** A file fleet did not write is not replaced without --force (it may be someone's only kubeconfig). */
export async function checkKubeconfigOut(path: string, force: boolean): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw new ConfigError(`--out ${path}: ${code === 'EACCES' ? 'permission denied' : (error as Error).message}`);
  }
  if (force) return;
  const ours = Boolean(
    (loadYamlIfValid(text) as KubeconfigDoc | undefined)?.extensions?.some((e) => e?.name === WI_KUBECONFIG_EXTENSION),
  );
  if (!ours)
    throw new ConfigError(
      `--out ${path}: the file exists and was not written by fleet wi setup; pass --force to replace it`,
    );
}

// ---- Argo CD ----------------------------------------------------------------------------------------------------------

/**
 * Argo CD's declarative cluster Secret with execProviderConfig. Argo CD v3.5+ passes provideClusterInfo and config to the
 * plugin; the ServiceAccount and audience are also its arguments (they agree, and the plugin refuses a disagreement),
 * so an older Argo CD, which drops both fields, runs it the same way.
 */
export async function argocdSecret(
  i: ConsumerInput,
  o: { namespace: string; name: string; clusterName: string },
): Promise<KubeObject> {
  const cluster = await targetCluster(i.target);
  const sa = `${i.serviceAccount.namespace}/${i.serviceAccount.name}`;
  const audience = i.audience ?? cluster.server ?? '';
  const config = {
    execProviderConfig: {
      command: i.plugin.command,
      args: pluginArgs(i.plugin, ['--service-account', sa, '--audience', audience]),
      apiVersion: EXEC_API_VERSION,
      provideClusterInfo: true,
      config: clusterConfigFor(i),
    },
    // The target's CA and TLS name; targetCluster never skips verification, so `insecure` is false.
    tlsClientConfig: tlsClientConfig(cluster),
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: o.name, namespace: o.namespace, labels: { ...MANAGED_BY_LABELS, ...ARGOCD_CLUSTER_LABELS } },
    type: 'Opaque',
    data: argocdData(o.clusterName, cluster.server, config),
  } satisfies Wire<V1Secret>;
}

// ---- the plugin's own identity on the hub ----------------------------------------------------------------------------

/**
 * A controller running the plugin in a Pod uses its own ServiceAccount (in-cluster configuration): it needs "create" on
 * serviceaccounts/token for exactly the hub ServiceAccount, and nothing else.
 */
export function tokenRequesterRbac(sa: ServiceAccountRef, requester: ServiceAccountRef): KubeObject[] {
  const name = `fleet-wi-token:${sa.name}`;
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: sa.namespace, labels: { ...MANAGED_BY_LABELS } },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: [sa.name] }],
    } satisfies Wire<V1Role>,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: {
        name: `${name}:${requester.namespace}:${requester.name}`.slice(0, 253),
        namespace: sa.namespace,
        labels: { ...MANAGED_BY_LABELS },
      },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: requester.name, namespace: requester.namespace }],
    } satisfies Wire<V1RoleBinding>,
  ];
}
