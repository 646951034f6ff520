// Argo CD cluster Secrets on the real control plane, for the argocd provider's tests and the provider conformance
// table: written by Argo CD's own code (test/argocd-consumer -mode add: `argocd cluster add`'s RBAC on the member and
// the database layer's Secret on the hub), read back by it (-mode list, and the default mode, which connects), and
// small hand-made fixtures (create one, remove one, break one's shape, make many) for the cases Argo CD's CLI does not
// write (an awsAuthConfig, a `config` that is not JSON, hundreds at once).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { buildScriptOutput } from './binaries.js';
import { type ServerRef, applyYaml, kubectl, server } from './fixture.js';

export const ARGOCD_CONSUMER_BUILD = fileURLToPath(new URL('../argocd-consumer/build.sh', import.meta.url));
export const ARGOCD_SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';

let consumer: string | undefined;
/** The argocd-consumer binary (built on first use, cached across runs by its build script). */
export function argocdConsumer(): string {
  consumer ??= buildScriptOutput(ARGOCD_CONSUMER_BUILD);
  return consumer;
}

function runConsumer(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(argocdConsumer(), args, { timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`argocd-consumer ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** An Argo CD namespace on the hub; `inClusterEnabled: false` writes argocd-cm turning the in-cluster entry off. */
export async function argocdNamespace(hub: ServerRef, ns: string, o: { inClusterEnabled?: boolean } = {}) {
  await kubectl(hub, ['create', 'namespace', ns]);
  if (o.inClusterEnabled === false)
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'argocd-cm', namespace: ns, labels: { 'app.kubernetes.io/part-of': 'argocd' } },
        data: { 'cluster.inClusterEnabled': 'false' },
      }),
    );
}

export interface ArgocdAddOptions {
  /** Argo CD's namespace on the hub. */
  namespace: string;
  /** The member whose admin kubeconfig `argocd cluster add` is given (its current context). */
  member: ServerRef;
  /** Where argocd-manager is made on the member (--system-namespace; must exist). */
  systemNamespace: string;
  clusterName: string;
  /** --namespace (repeated): argocd-manager gets a Role in each instead of the cluster-wide ClusterRole. */
  namespaces?: string[];
  clusterResources?: boolean;
  project?: string;
  shard?: number;
  labels?: Record<string, string>;
  /** The member's client certificate left out of the config Argo CD's CLI reads, so the bearer token is stored. */
  tokenOnly?: boolean;
  /** --exec-command instead of RBAC (then no ServiceAccount is made). */
  exec?: { command: string; args?: string[]; env?: Record<string, string> };
}

export interface ArgocdAdded {
  /** The cluster Secret's name in the Argo CD namespace (Argo CD's `cluster-<host>-<hash>`). */
  secret: string;
  server: string;
  name: string;
  /** `<ns>/argocd-manager` on the member, and its never-expiring token Secret. */
  serviceAccount: string;
  tokenSecret: string;
}

const pairs = (m: Record<string, string> | undefined) =>
  Object.entries(m ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** `argocd cluster add` through Argo CD's own code: RBAC on the member, the cluster Secret on the hub. */
export async function argocdClusterAdd(hub: ServerRef, o: ArgocdAddOptions): Promise<ArgocdAdded> {
  const args = [
    '-mode',
    'add',
    '-hub-kubeconfig',
    server(hub).kubeconfig,
    '-namespace',
    o.namespace,
    '-member-kubeconfig',
    server(o.member).kubeconfig,
    '-system-namespace',
    o.systemNamespace,
    '-cluster-name',
    o.clusterName,
  ];
  if (o.namespaces?.length) args.push('-namespaces', o.namespaces.join(','));
  if (o.clusterResources) args.push('-cluster-resources');
  if (o.project) args.push('-project', o.project);
  if (o.shard !== undefined) args.push('-shard', String(o.shard));
  if (o.labels) args.push('-labels', pairs(o.labels));
  if (o.tokenOnly) args.push('-token-only');
  if (o.exec) {
    args.push('-exec-command', o.exec.command);
    if (o.exec.args?.length) args.push('-exec-args', o.exec.args.join(','));
    if (o.exec.env) args.push('-exec-env', pairs(o.exec.env));
  }
  return JSON.parse(await runConsumer(args)) as ArgocdAdded;
}

export interface ArgocdViewCluster {
  secret: string;
  name: string;
  server: string;
  project: string;
  namespaces: string[] | null;
  clusterResources: boolean;
  shard?: number;
  labels: Record<string, string>;
  /** The credential Argo CD's RawRestConfig uses: token, client-cert, exec:<command>, none (in-cluster: empty). */
  auth: string;
  error?: string;
}

/** Argo CD's view of a namespace: every cluster Secret through its database layer, and what a cluster generator selects. */
export async function argocdView(
  hub: ServerRef,
  namespace: string,
  selector?: Record<string, string>,
): Promise<{ clusters: ArgocdViewCluster[]; generator: string[] }> {
  const args = ['-mode', 'list', '-hub-kubeconfig', server(hub).kubeconfig, '-namespace', namespace];
  if (selector) args.push('-selector', pairs(selector));
  return JSON.parse(await runConsumer(args)) as { clusters: ArgocdViewCluster[]; generator: string[] };
}

/** Who the cluster says Argo CD is, connecting with the Secret through Argo CD's own rest.Config. */
export async function argocdConnect(
  hub: ServerRef,
  namespace: string,
  secret: string,
): Promise<{ username: string; server: string }> {
  const out = await runConsumer(['-hub-kubeconfig', server(hub).kubeconfig, '-namespace', namespace, '-name', secret]);
  return JSON.parse(out) as { username: string; server: string };
}

// ---- hand-made cluster Secrets (the shape Argo CD's database layer writes, checked against it by the tests) ----

/** Argo CD's cluster `config` (the JSON fields fleet reads). */
export interface ArgocdConfigJson {
  bearerToken?: string;
  username?: string;
  password?: string;
  tlsClientConfig?: { insecure?: boolean; caData?: string; certData?: string; keyData?: string; serverName?: string };
  execProviderConfig?: { command: string; args?: string[]; env?: Record<string, string>; apiVersion?: string };
  awsAuthConfig?: { clusterName: string; roleARN?: string; profile?: string };
}

export interface ArgocdSecretSpec {
  /** The Secret's name. */
  id: string;
  /** Argo CD's name (`name` key); absent: no `name` key. */
  name?: string;
  server: string;
  config: ArgocdConfigJson | string;
  labels?: Record<string, string>;
  project?: string;
  namespaces?: string[];
  clusterResources?: boolean;
  shard?: number;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The Secret object (labelled as Argo CD's cluster Secrets are). */
export function argocdSecretObject(ns: string, s: ArgocdSecretSpec): Record<string, unknown> {
  const data: Record<string, string> = {
    server: b64(s.server),
    config: b64(typeof s.config === 'string' ? s.config : JSON.stringify(s.config)),
  };
  if (s.name !== undefined) data.name = b64(s.name);
  if (s.project) data.project = b64(s.project);
  if (s.namespaces?.length) data.namespaces = b64(s.namespaces.join(','));
  if (s.clusterResources) data.clusterResources = b64('true');
  if (s.shard !== undefined) data.shard = b64(String(s.shard));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: s.id, namespace: ns, labels: { ...s.labels, [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' } },
    data,
  };
}

/** Creates one cluster Secret. */
export async function createArgocdCluster(hub: ServerRef, ns: string, s: ArgocdSecretSpec): Promise<void> {
  await applyYaml(hub, JSON.stringify(argocdSecretObject(ns, s)));
}

/** Removes one (by the Secret's name). */
export async function removeArgocdCluster(hub: ServerRef, ns: string, secret: string): Promise<void> {
  await kubectl(hub, ['delete', 'secret', secret, '-n', ns]);
}

/**
 * Breaks one's shape the way Argo CD then skips it: `config` that is not JSON, or of the wrong type (`bearerToken` a
 * number). Returns the phrase fleet's reason must contain.
 */
export async function breakArgocdCluster(
  hub: ServerRef,
  ns: string,
  secret: string,
  how: 'not-json' | 'wrong-type' = 'not-json',
): Promise<RegExp> {
  const config = how === 'not-json' ? '{"bearerToken": ' : JSON.stringify({ bearerToken: 5 });
  await kubectl(hub, [
    'patch',
    'secret',
    secret,
    '-n',
    ns,
    '--type=merge',
    '-p',
    JSON.stringify({ data: { config: b64(config) } }),
  ]);
  return how === 'not-json'
    ? new RegExp(`^Secret ${ns}/${secret} key config: not valid JSON`)
    : new RegExp(`^Secret ${ns}/${secret} key config: bearerToken must be a string`);
}

/** n cluster Secrets at once (one apply), all for `server` with `config`; their Argo CD names, in order. */
export async function createManyArgocdClusters(
  hub: ServerRef,
  ns: string,
  n: number,
  o: { server: string; config: ArgocdConfigJson; prefix?: string },
): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `${o.prefix ?? 'c'}-${String(i).padStart(4, '0')}`);
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: names.map((name) => argocdSecretObject(ns, { id: name, name, server: o.server, config: o.config })),
  };
  await applyYaml(hub, JSON.stringify(list));
  return names;
}

/**
 * What `argocd cluster add` installs on a member, made by hand where Argo CD's CLI cannot be pointed (an extra API
 * server, a test that needs the objects' names): ServiceAccount kube-system/SA, a ClusterRole with `*` on `*` and every
 * non-resource URL, its binding, and the legacy `SA-long-lived-token` Secret, which the member's token controller fills.
 * Returns the legacy token once it is there (up to about 30 s).
 */
export async function argocdManagerByHand(member: ServerRef, sa: string): Promise<string> {
  await applyYaml(
    member,
    [
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${sa}, namespace: kube-system}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${sa}-role}\nrules:\n- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n- {nonResourceURLs: ['*'], verbs: ['*']}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${sa}-role-binding}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${sa}-role}\nsubjects:\n- {kind: ServiceAccount, name: ${sa}, namespace: kube-system}`,
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${sa}-long-lived-token\n  namespace: kube-system\n  annotations: {kubernetes.io/service-account.name: ${sa}}\ntype: kubernetes.io/service-account-token`,
    ].join('\n---\n'),
  );
  const secretName = `${sa}-long-lived-token`;
  for (let i = 0; i < 150; i++) {
    const data = await kubectl(member, [
      'get',
      'secret',
      secretName,
      '-n',
      'kube-system',
      '-o',
      'jsonpath={.data.token}',
    ]);
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the token controller of ${server(member).name} did not fill kube-system/${secretName}`);
}
