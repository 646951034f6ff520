import type { V1ConfigMap } from '@kubernetes/client-node';

import { FleetError } from '../../base/errors.js';
import type { ArgocdProviderConfig } from '../../config/fleet-config.js';
import { isMapping } from '../../config/fields.js';
import { CONFIG_MAP, SECRET } from '../../kube/resources.js';
import type { Wire } from '../../kube/objects.js';
import type { ResolvedContext } from '../../kubeconfig/loading-rules.js';
import type { ClusterEntry, ExecConfig, UserEntry } from '../../kubeconfig/types.js';
import { EXEC_CLUSTER_CONFIG_EXTENSION } from '../../kubeconfig/types.js';
import { makeRef } from '../ref.js';
import type { ArgocdClusterInfo, ClusterRef } from '../types.js';
import { HubProvider } from './hub-provider.js';
import { ARGOCD_SECRET_TYPE_LABEL, type ObjectMeta, type Secret, secretText } from './objects.js';
import { jsonProblem, parseJson } from '../../base/json.js';

/**
 * Argo CD's clusters: every Secret of one namespace of the hub labelled `argocd.argoproj.io/secret-type: cluster`,
 * read the way Argo CD's database layer reads it (util/db SecretToCluster, then Cluster.RawRestConfig for the
 * connection), named as Argo CD names it (the `name` key), with the Secret's labels as the cluster's labels, so `-l`
 * selects what an ApplicationSet cluster generator with that selector selects. Facts from argo-cd v3.2; see
 * docs/providers.md "Argo CD clusters".
 */
export { ARGOCD_SECRET_TYPE_LABEL };
export const ARGOCD_CLUSTER_SECRET_TYPE = 'cluster';
/** Where Argo CD runs by default (`argocd` namespace of the install manifests). */
export const ARGOCD_DEFAULT_NAMESPACE = 'argocd';
/** The address Argo CD treats as the cluster it runs in (its own ServiceAccount, not the Secret's credential). */
export const ARGOCD_IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';
/** The name Argo CD gives the in-cluster entry when no Secret describes it. */
export const ARGOCD_IN_CLUSTER_NAME = 'in-cluster';
/** argocd-cm's switch for the in-cluster entry (anything but "false" is on). */
export const ARGOCD_CM = 'argocd-cm';
export const ARGOCD_IN_CLUSTER_ENABLED_KEY = 'cluster.inClusterEnabled';
/** The program Argo CD runs for an `awsAuthConfig` (it ships in Argo CD's image), and the exec API version it uses. */
export const ARGOCD_AWS_AUTH_COMMAND = 'argocd-k8s-auth';
const AWS_EXEC_API_VERSION = 'client.authentication.k8s.io/v1beta1';

/** The keys of an Argo CD cluster Secret's `config` fleet reads (Argo CD's ClusterConfig; JSON names). */
export interface ArgocdClusterConfig {
  username?: string;
  password?: string;
  bearerToken?: string;
  tlsClientConfig?: { insecure?: boolean; serverName?: string; certData?: string; keyData?: string; caData?: string };
  awsAuthConfig?: { clusterName?: string; roleARN?: string; profile?: string };
  execProviderConfig?: {
    command?: string;
    args?: string[];
    env?: Record<string, string>;
    apiVersion?: string;
    installHint?: string;
    /** Argo CD 3.5 and later. */
    provideClusterInfo?: boolean;
    config?: unknown;
  };
  proxyUrl?: string;
  disableCompression?: boolean;
}

type ConfigMap = Wire<V1ConfigMap> & { metadata: ObjectMeta };

/**
 * The `config` key as Go's encoding/json would decode it into ClusterConfig: absent or empty is the zero config; any
 * known field of the wrong type fails the whole Secret (Argo CD then skips it); unknown fields are ignored. []byte
 * fields are base64 (std, padded), exactly what a kubeconfig's `*-data` fields hold.
 */
export function parseArgocdConfig(text: string | undefined): ArgocdClusterConfig | Error {
  if (text === undefined || text === '') return {};
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    return new Error(jsonProblem(error, `not valid JSON: ${(error as Error).message}`));
  }
  if (value === null) return {};
  if (!isMapping(value)) return new Error('must be a JSON object');
  const problem = checkShape(value, CONFIG_SHAPE, '');
  return problem ? new Error(problem) : value;
}

type Shape = 'string' | 'boolean' | 'bytes' | 'strings' | 'stringMap' | 'any' | { [k: string]: Shape };
const CONFIG_SHAPE: Record<string, Shape> = {
  username: 'string',
  password: 'string',
  bearerToken: 'string',
  tlsClientConfig: { insecure: 'boolean', serverName: 'string', certData: 'bytes', keyData: 'bytes', caData: 'bytes' },
  awsAuthConfig: { clusterName: 'string', roleARN: 'string', profile: 'string' },
  execProviderConfig: {
    command: 'string',
    args: 'strings',
    env: 'stringMap',
    apiVersion: 'string',
    installHint: 'string',
    provideClusterInfo: 'boolean',
    config: 'any',
  },
  proxyUrl: 'string',
  disableCompression: 'boolean',
};
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The first field whose value Go would refuse to decode (null is the zero value, as in Go). */
function checkShape(value: Record<string, unknown>, shape: Record<string, Shape>, at: string): string | undefined {
  for (const [key, want] of Object.entries(shape)) {
    const v = value[key];
    const field = `${at}${key}`;
    if (v === undefined || v === null || want === 'any') continue;
    if (typeof want === 'object') {
      if (!isMapping(v)) return `${field} must be an object`;
      const inner = checkShape(v, want, `${field}.`);
      if (inner) return inner;
    } else if (want === 'string' && typeof v !== 'string') return `${field} must be a string`;
    else if (want === 'boolean' && typeof v !== 'boolean') return `${field} must be true or false`;
    else if (want === 'bytes' && (typeof v !== 'string' || !BASE64.test(v))) return `${field} must be base64 text`;
    else if (want === 'strings' && !(Array.isArray(v) && v.every((s) => typeof s === 'string')))
      return `${field} must be a list of strings`;
    else if (want === 'stringMap' && !(isMapping(v) && Object.values(v).every((s) => typeof s === 'string')))
      return `${field} must be a mapping of names to strings`;
  }
  return undefined;
}

/**
 * The kubeconfig entries for a cluster that is not the in-cluster address, in Cluster.RawRestConfig's order: the TLS
 * settings always; then awsAuthConfig (Argo CD's argocd-k8s-auth), else execProviderConfig, else the bearer token and
 * basic credentials. Client certificates go with any of them; a token beside an exec config is not used, as upstream.
 */
export function argocdEntries(
  server: string,
  config: ArgocdClusterConfig,
): { cluster: ClusterEntry; user: UserEntry; method: 'aws' | 'exec' | 'static' } {
  const tls = config.tlsClientConfig ?? {};
  const cluster: ClusterEntry = { server };
  if (tls.caData) cluster['certificate-authority-data'] = tls.caData;
  if (tls.serverName) cluster['tls-server-name'] = tls.serverName;
  if (tls.insecure) cluster['insecure-skip-tls-verify'] = true;
  if (config.proxyUrl) cluster['proxy-url'] = config.proxyUrl;
  if (config.disableCompression) cluster['disable-compression'] = true;
  const user: UserEntry = {};
  if (tls.certData) user['client-certificate-data'] = tls.certData;
  if (tls.keyData) user['client-key-data'] = tls.keyData;
  const aws = config.awsAuthConfig;
  const exec = config.execProviderConfig;
  if (aws) {
    const args = ['aws', '--cluster-name', aws.clusterName ?? ''];
    if (aws.roleARN) args.push('--role-arn', aws.roleARN);
    if (aws.profile) args.push('--profile', aws.profile);
    user.exec = { apiVersion: AWS_EXEC_API_VERSION, command: ARGOCD_AWS_AUTH_COMMAND, args, interactiveMode: 'Never' };
    return { cluster, user, method: 'aws' };
  }
  if (exec) {
    const e: ExecConfig = {
      apiVersion: exec.apiVersion ?? '',
      command: exec.command ?? '',
      args: exec.args ?? [],
      // A Go map has no order; by name, so the same Secret gives the same kubeconfig.
      env: Object.entries(exec.env ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => ({ name, value })),
      interactiveMode: 'Never',
    };
    if (exec.installHint) e.installHint = exec.installHint;
    if (exec.provideClusterInfo) e.provideClusterInfo = true;
    if (exec.config !== undefined)
      cluster.extensions = [{ name: EXEC_CLUSTER_CONFIG_EXTENSION, extension: exec.config }];
    user.exec = e;
    return { cluster, user, method: 'exec' };
  }
  if (config.bearerToken) user.token = config.bearerToken;
  if (config.username) user.username = config.username;
  if (config.password) user.password = config.password;
  return { cluster, user, method: 'static' };
}

/** What Argo CD keeps beside the credential (util/db SecretToCluster). */
export function argocdInfo(secret: Secret, server: string): ArgocdClusterInfo {
  const namespaces = (secretText(secret, 'namespaces') ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const shardText = secretText(secret, 'shard');
  // Go's strconv.Atoi: an optional sign and decimal digits; anything else is ignored with a warning upstream.
  const shard = shardText !== undefined && /^[+-]?\d+$/.test(shardText) ? Number(shardText) : undefined;
  const project = secretText(secret, 'project');
  return {
    server,
    ...(project ? { project } : {}),
    namespaces,
    clusterResources: secretText(secret, 'clusterResources') === 'true',
    ...(shard !== undefined && Number.isSafeInteger(shard) ? { shard } : {}),
    ...(server === ARGOCD_IN_CLUSTER_SERVER ? { inCluster: true } : {}),
  };
}

/** The data of the hub's own context the in-cluster entry is reached with (Argo CD uses its pod's ServiceAccount). */
function inClusterContext(
  hub: ResolvedContext,
  name: string,
  config: ArgocdClusterConfig,
  object?: string,
  provider?: string,
): ResolvedContext {
  // Upstream: a Secret's bearer token or basic credentials replace the ServiceAccount's; nothing else of it is used.
  if (borrowsHubCredential(config)) return { ...hub, contextName: name };
  const user: UserEntry = {};
  if (config.bearerToken) user.token = config.bearerToken;
  if (config.username) user.username = config.username;
  if (config.password) user.password = config.password;
  const where = object ? `secret ${object}` : hub.userFile;
  return {
    ...hub,
    contextName: name,
    user,
    userName: name,
    userFile: where,
    origin: object ? { object: `Secret ${object} key config`, provider } : hub.origin,
  };
}

/**
 * Whether the in-cluster entry would be reached with the hub's own credential: Argo CD's Cluster.RawRestConfig uses its
 * pod's ServiceAccount unless the Secret gives a bearer token or basic credentials, and fleet, not in that pod, uses
 * the operator's hub context instead.
 */
function borrowsHubCredential(config: ArgocdClusterConfig): boolean {
  return !config.bearerToken && !config.username && !config.password;
}

/** What the argocd provider needs beside a Secret: whose hub, and what the operator's configuration allows. */
export interface ArgocdRefOptions {
  provider: string;
  hub?: string;
  hubContext: ResolvedContext;
  /** argocd-cm's `cluster.inClusterEnabled` (Argo CD's switch). */
  inClusterEnabled: boolean;
  /** fleet.yaml's `inCluster: true` on this provider: the operator's word that the hub credential may be used. */
  inCluster: boolean;
  /** The fleet configuration to name in the refusal (`the fleet configuration` when none was read). */
  configPath?: string;
}

/**
 * Why an in-cluster entry that would borrow the hub's credential is not ready without the operator's opt-in: anyone
 * who may write a Secret in Argo CD's namespace may write one for `https://kubernetes.default.svc`, and fleet would
 * then reach the hub with the operator's own credential for it.
 */
function inClusterRefusal(o: ArgocdRefOptions, what: string): Error {
  const file = o.configPath ?? 'a fleet configuration (--fleet-config)';
  return new FleetError(
    'config',
    `${what} is reached with the hub's own credential (context ${o.hubContext.contextName}), which fleet uses only when its configuration says so; to allow it, add inCluster: true to provider "${o.provider}" in ${file}`,
    { exitCode: 2 },
  );
}

/**
 * One cluster per Secret. A Secret Argo CD would skip (its `config` not decodable) is listed not ready with why, as the
 * kubeconfig provider lists a Secret without its key: the operator sees why Argo CD ignores it.
 *
 * A Secret for the in-cluster address with no credential of its own borrows the hub's: it is listed as Argo CD's
 * default in-cluster entry (`in-cluster`, no labels), never under the name and labels its author chose (Argo CD's name
 * for it is kept in `source.argocd.argocdName`), and is ready only with the operator's `inCluster: true`.
 */
export function refFromArgocdSecret(secret: Secret, o: ArgocdRefOptions): ClusterRef {
  const { name: secretName, namespace } = secret.metadata;
  const object = `${namespace}/${secretName}`;
  const server = (secretText(secret, 'server') ?? '').replace(/\/+$/, '');
  // Argo CD's name is the `name` key; one written without it gets the server as its name when Argo CD writes it.
  const name = secretText(secret, 'name') || server || secretName;
  const info = argocdInfo(secret, server);
  const fields = {
    name,
    provider: o.provider,
    aliases: name === secretName ? [] : [secretName],
    labels: secret.metadata.labels ?? {},
    source: {
      kind: 'argocd-cluster' as const,
      namespace,
      name: secretName,
      hub: o.hub,
      secret: object,
      key: 'config',
      argocd: info,
    },
  };
  const deleting = secret.metadata.deletionTimestamp ? 'the Secret is being deleted' : undefined;
  const config = parseArgocdConfig(secretText(secret, 'config'));
  if (config instanceof Error)
    return makeRef(fields, new Error(`Secret ${object} key config: ${config.message} (Argo CD skips this cluster)`));
  if (!server) return makeRef(fields, new Error(`Secret ${object} has no data key "server"`));
  if (info.inCluster) {
    // The hub's credential goes only under the operator's name for it: the Secret's author chooses neither the name
    // (-c) nor the labels (-l) the operator's own credential is reached by.
    const borrowed = borrowsHubCredential(config)
      ? {
          ...fields,
          name: ARGOCD_IN_CLUSTER_NAME,
          aliases: [],
          labels: {},
          source: { ...fields.source, argocd: { ...info, argocdName: name } },
        }
      : fields;
    if (!o.inClusterEnabled)
      return makeRef(
        borrowed,
        new Error(
          `Secret ${object} is the in-cluster entry, which ${ARGOCD_CM} turns off (${ARGOCD_IN_CLUSTER_ENABLED_KEY}: "false")`,
        ),
      );
    if (borrowed !== fields && !o.inCluster)
      return makeRef(
        borrowed,
        inClusterRefusal(o, `Secret ${object} (server ${ARGOCD_IN_CLUSTER_SERVER}, no credential of its own)`),
      );
    const ctx = inClusterContext(o.hubContext, borrowed.name, config, object, o.provider);
    return makeRef({ ...borrowed, source: { ...borrowed.source, context: o.hubContext.contextName } }, ctx, deleting);
  }
  const { cluster, user } = argocdEntries(server, config);
  const where = `secret ${object} key config`;
  const ctx: ResolvedContext = {
    contextName: name,
    clusterName: name,
    userName: name,
    cluster,
    user,
    contextFile: where,
    clusterFile: where,
    userFile: where,
    // Hub data: the exec command (and its environment) of execProviderConfig or awsAuthConfig runs only where the
    // trust policy allows it (guardRef, Connector.context).
    origin: { object: `Secret ${object} key config`, provider: o.provider },
  };
  return makeRef(fields, ctx, deleting);
}

/** Several Secrets giving one name: Argo CD refuses a destination by that name, and fleet cannot tell them apart. */
function markDuplicates(refs: ClusterRef[]): ClusterRef[] {
  const byName = new Map<string, ClusterRef[]>();
  for (const r of refs) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  return refs.map((r) => {
    const same = byName.get(r.name)!;
    if (same.length < 2) return r;
    const secrets = same
      .map((x) => x.source.secret ?? ARGOCD_IN_CLUSTER_NAME)
      .sort()
      .join(', ');
    const reason = `${same.length} Argo CD clusters are named "${r.name}" (${secrets}); Argo CD refuses a destination by this name`;
    const error = new FleetError('config', reason, { exitCode: 2 });
    return {
      ...r,
      ready: false,
      reason,
      resolve: async () => {
        throw error;
      },
    };
  });
}

export class ArgocdProvider extends HubProvider<ArgocdProviderConfig> {
  protected async build(): Promise<ClusterRef[]> {
    const hubContext = await this.hub.context();
    const namespace = this.config.namespace ?? ARGOCD_DEFAULT_NAMESPACE;
    const [secrets, inClusterEnabled] = await Promise.all([
      this.hub.listObjects<Secret>(SECRET, `list Argo CD cluster Secrets in ${namespace}`, {
        namespace,
        labelSelector: `${ARGOCD_SECRET_TYPE_LABEL}=${ARGOCD_CLUSTER_SECRET_TYPE}`,
      }),
      this.inClusterEnabled(namespace),
    ]);
    const o: ArgocdRefOptions = {
      provider: this.name,
      hub: hubContext.contextName,
      hubContext,
      inClusterEnabled,
      inCluster: this.config.inCluster === true,
      configPath: this.options.connector.trust.configPath,
    };
    const refs = secrets.map((s) => refFromArgocdSecret(s, o));
    // Argo CD adds the cluster it runs in when no Secret describes it (and argocd-cm does not turn it off).
    if (inClusterEnabled && !refs.some((r) => r.source.argocd?.inCluster)) {
      const fields = {
        name: ARGOCD_IN_CLUSTER_NAME,
        provider: this.name,
        labels: {},
        source: {
          kind: 'argocd-cluster' as const,
          namespace,
          hub: hubContext.contextName,
          context: hubContext.contextName,
          argocd: {
            server: ARGOCD_IN_CLUSTER_SERVER,
            namespaces: [],
            clusterResources: false,
            inCluster: true as const,
          },
        },
      };
      refs.push(
        makeRef(
          fields,
          o.inCluster
            ? inClusterContext(hubContext, ARGOCD_IN_CLUSTER_NAME, {})
            : inClusterRefusal(o, `Argo CD's in-cluster entry (${ARGOCD_IN_CLUSTER_SERVER})`),
        ),
      );
    }
    return markDuplicates(refs).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** argocd-cm's `cluster.inClusterEnabled`; on (Argo CD's default) when the ConfigMap is absent or unreadable to us. */
  private async inClusterEnabled(namespace: string): Promise<boolean> {
    try {
      const cm = await this.hub.getObject<ConfigMap>(CONFIG_MAP, ARGOCD_CM, namespace, `get ConfigMap ${ARGOCD_CM}`);
      return cm?.data?.[ARGOCD_IN_CLUSTER_ENABLED_KEY] !== 'false';
    } catch (error) {
      if (error instanceof FleetError && error.kind === 'forbidden') return true;
      throw error;
    }
  }
}
