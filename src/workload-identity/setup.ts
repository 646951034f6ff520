import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Namespace,
  V1RoleBinding,
  V1ServiceAccount,
} from '@kubernetes/client-node';

import { type RiskFinding, assessRules } from '../access/risk.js';
import { ConfigError, FleetError } from '../base/errors.js';
import { MANAGED_BY_LABELS } from '../creds/labels.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import type { KubeObject, Wire } from '../kube/objects.js';
import { OIDC_CONFIGURATION_PATH } from '../kube/paths.js';
import { CLUSTER_ROLE, NAMESPACE, resourceOf } from '../kube/resources.js';
import { applyObject, describeObject, getObject, sendObject } from '../kube/typed.js';
import {
  type AuthenticationConfiguration,
  authenticationConfigApiVersion,
  authenticationConfiguration,
  jwtEntry,
  parseVersion,
  toYaml,
} from './auth-config.js';
import { type Cluster, caPemOf, originOf } from './connect.js';
import { type ServiceAccountRef, mappedUsername } from './service-account.js';
import { serverVersion } from './target.js';

/**
 * `wi setup`: what makes a hub ServiceAccount's token work on a target, as a plan of objects (applied with server-side
 * apply, field manager `fleet`, where fleet has access) plus the target's AuthenticationConfiguration, which only the
 * target's operator can install (it is a file read by the API server, not an object).
 */
export const DISCOVERY_BINDING = 'fleet:service-account-issuer-discovery';
export const ROLE_PRESETS = ['view', 'edit', 'admin'] as const;

export type { KubeObject } from '../kube/objects.js';

export type Action = 'create' | 'update' | 'unchanged';

export interface PlannedObject {
  /** `hub` or `target`, and the cluster's name. */
  side: 'hub' | 'target';
  cluster: string;
  object: KubeObject;
  action: Action;
  /** After --apply: what the API server did (dry-run: what it would do). */
  result?: 'created' | 'configured' | 'unchanged' | 'dry-run';
}

export interface SetupInput {
  hub: Cluster;
  target: Cluster;
  /** A short name for the target, for the Flux ConfigMap's name. */
  targetShortName: string;
  serviceAccount: ServiceAccountRef;
  prefix: string;
  audience?: string;
  /** ClusterRole to bind to the mapped user on the target; none: identity only. */
  clusterRole?: string;
  /** RoleBindings in these namespaces; none: one ClusterRoleBinding. */
  namespaces: string[];
  /** Name of the Flux ConfigMap on the hub; undefined: none. */
  fluxConfigMap?: string;
  allowRisky: boolean;
  options: Connector;
  /** More hub objects a consumer needs (wi setup --consumer: an Argo CD cluster Secret, the plugin's token RBAC). */
  consumerHubObjects?: KubeObject[];
  /** The namespaces the objects go to that do not exist are created first (--create-namespace), as creds generate does. */
  createNamespace?: boolean;
  /** Refuse a namespace that does not exist (without createNamespace), before anything is applied: set for --apply. */
  refuseMissingNamespaces?: boolean;
}

export interface SetupPlan {
  hub: string;
  target: string;
  serviceAccount: string;
  /** The user the target will see: prefix + system:serviceaccount:NS:NAME. */
  username: string;
  issuer: string;
  audience: string;
  targetVersion: string;
  objects: PlannedObject[];
  /** What the bound role may do that is dangerous (rules of the ClusterRole on the target). */
  risks: RiskFinding[];
  authenticationConfiguration: AuthenticationConfiguration;
}

const RBAC = 'rbac.authorization.k8s.io/v1';

export { describeObject } from '../kube/typed.js';

/** The fields fleet sets, compared with what is there (labels and server-set fields do not matter). */
function sameContent(want: KubeObject, have: Record<string, unknown>): boolean {
  const pick = (o: Record<string, unknown>) =>
    canonical({ roleRef: o.roleRef, subjects: o.subjects, data: o.data, rules: o.rules });
  return pick(want) === pick(have);
}

/** JSON with object keys sorted: the API server does not keep the order fields were sent in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function slug(value: string, max = 40): string {
  const s = value
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s.slice(Math.max(0, s.length - max)).replace(/^-+/, '') || 'target';
}

export function defaultFluxConfigMapName(targetShortName: string): string {
  return `fleet-wi-${slug(targetShortName)}`;
}

/** The hub's --service-account-issuer, from its discovery document (with the user's credentials, then without). */
async function hubIssuer(hub: KubeClient): Promise<string> {
  const doc = await hub.json<{ issuer?: unknown }>(
    'GET',
    OIDC_CONFIGURATION_PATH,
    undefined,
    `read the hub's ${OIDC_CONFIGURATION_PATH}`,
    { ok: [200] },
  );
  if (typeof doc.issuer !== 'string' || doc.issuer === '')
    throw new FleetError('server', "the hub's discovery document has no issuer");
  return doc.issuer;
}

export async function planSetup(i: SetupInput): Promise<SetupPlan> {
  const sa = i.serviceAccount;
  const username = mappedUsername(sa, i.prefix);
  const audience = i.audience ?? i.target.context.cluster.server ?? '';
  const [issuer, version] = await Promise.all([
    hubIssuer(i.hub.client),
    serverVersion(i.target.client).then(parseVersion),
  ]);
  const apiVersion = authenticationConfigApiVersion(version);
  const hubCa = await caPemOf(i.hub.context.cluster, `hub ${i.hub.name}`);
  const targetCa = await caPemOf(i.target.context.cluster, `target ${i.target.name}`);
  // The hub kubeconfig's CA is the right one only when the hub's API server serves its own issuer URL.
  const issuerCa = originOf(issuer) === originOf(i.hub.context.cluster.server ?? '') ? hubCa : undefined;
  const config = authenticationConfiguration(apiVersion, [
    jwtEntry({ issuer, audiences: [audience], caPem: issuerCa, prefix: i.prefix }),
  ]);

  const hubObjects: KubeObject[] = [
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: { name: DISCOVERY_BINDING, labels: { ...MANAGED_BY_LABELS } },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:service-account-issuer-discovery',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
    } satisfies Wire<V1ClusterRoleBinding>,
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: sa.name, namespace: sa.namespace, labels: { ...MANAGED_BY_LABELS } },
    } satisfies Wire<V1ServiceAccount>,
  ];
  if (i.fluxConfigMap) {
    hubObjects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: i.fluxConfigMap, namespace: sa.namespace, labels: { ...MANAGED_BY_LABELS } },
      // Flux's generic provider (spec.kubeConfig.configMapRef): audiences is spelled out, so it cannot drift from address.
      data: {
        provider: 'generic',
        address: i.target.context.cluster.server ?? '',
        audiences: audience,
        serviceAccountName: sa.name,
        ...(targetCa ? { 'ca.crt': targetCa } : {}),
      },
    } satisfies Wire<V1ConfigMap>);
  }
  hubObjects.push(...(i.consumerHubObjects ?? []));
  const targetObjects: KubeObject[] = [];
  let risks: RiskFinding[] = [];
  if (i.clusterRole) {
    risks = await roleRisks(i.target, i.clusterRole);
    const critical = risks.filter((r) => r.severity === 'critical');
    if (critical.length > 0 && !i.allowRisky) {
      throw new ConfigError(
        `ClusterRole ${i.clusterRole} on ${i.target.name} is too powerful for a cross-cluster identity (${critical.map((r) => r.code).join(', ')}); pass --allow-risky to bind it anyway`,
      );
    }
    const subject = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: username };
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: i.clusterRole };
    const name = `fleet-wi:${i.prefix}${sa.namespace}:${sa.name}`;
    if (i.namespaces.length === 0)
      targetObjects.push({
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name, labels: { ...MANAGED_BY_LABELS } },
        roleRef,
        subjects: [subject],
      } satisfies Wire<V1ClusterRoleBinding>);
    for (const ns of i.namespaces)
      targetObjects.push({
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name, namespace: ns, labels: { ...MANAGED_BY_LABELS } },
        roleRef,
        subjects: [subject],
      } satisfies Wire<V1RoleBinding>);
  }

  const [hubMissing, targetMissing] = await Promise.all([
    missingNamespaces(i.hub, hubObjects),
    missingNamespaces(i.target, targetObjects),
  ]);
  if (!i.createNamespace && i.refuseMissingNamespaces) {
    for (const [side, cluster, missing] of [
      ['hub', i.hub, hubMissing],
      ['target', i.target, targetMissing],
    ] as const) {
      if (missing.length === 0) continue;
      const many = missing.length > 1;
      throw new ConfigError(
        `${side} ${cluster.name}: namespace${many ? 's' : ''} ${missing.join(', ')} do${many ? '' : 'es'} not exist; pass --create-namespace to create ${many ? 'them' : 'it'}`,
      );
    }
  }
  const namespaceObjects = (cluster: Cluster, side: 'hub' | 'target', missing: string[]): PlannedObject[] =>
    i.createNamespace
      ? missing.map((name) => ({
          side,
          cluster: cluster.name,
          object: {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name, labels: { ...MANAGED_BY_LABELS } },
          } satisfies Wire<V1Namespace>,
          action: 'create',
        }))
      : [];
  const hubNamespaces = namespaceObjects(i.hub, 'hub', hubMissing);
  const targetNamespaces = namespaceObjects(i.target, 'target', targetMissing);
  const objects: PlannedObject[] = [
    ...hubNamespaces,
    ...(await Promise.all(hubObjects.map((o) => planned(i.hub, 'hub', o)))),
    ...targetNamespaces,
    ...(await Promise.all(targetObjects.map((o) => planned(i.target, 'target', o)))),
  ];
  return {
    hub: i.hub.name,
    target: i.target.name,
    serviceAccount: `${sa.namespace}/${sa.name}`,
    username,
    issuer,
    audience,
    targetVersion: version.gitVersion,
    objects,
    risks,
    authenticationConfiguration: config,
  };
}

/**
 * The namespaces of a side's objects that do not exist: Namespaces to create first with --create-namespace; without it,
 * with --apply, the one line that names them and the flag before anything is applied (the dry run would otherwise fail
 * on the first of them). For a caller who may not read Namespaces the apply itself tells.
 */
async function missingNamespaces(cluster: Cluster, objects: KubeObject[]): Promise<string[]> {
  const names = [...new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => Boolean(n)))];
  const missing: string[] = [];
  for (const name of names) {
    const found = await getObject(cluster.client, NAMESPACE, name, {
      what: `read Namespace ${name} on ${cluster.name}`,
      ok: [200],
    }).catch((error: unknown) => {
      if (error instanceof FleetError && error.kind === 'forbidden') return true;
      throw error;
    });
    if (!found) missing.push(name);
  }
  return missing;
}

async function roleRisks(target: Cluster, role: string): Promise<RiskFinding[]> {
  const found = await getObject<Wire<V1ClusterRole>>(target.client, CLUSTER_ROLE, role, {
    what: `read ClusterRole ${role} on ${target.name}`,
    ok: [200],
  });
  if (!found) throw new ConfigError(`ClusterRole ${role} not found on ${target.name}`);
  const rules = (found.rules ?? []).map((r) => ({
    verbs: r.verbs ?? [],
    apiGroups: r.apiGroups ?? [],
    resources: r.resources ?? [],
    resourceNames: r.resourceNames ?? [],
  }));
  return assessRules(rules);
}

async function planned(cluster: Cluster, side: 'hub' | 'target', object: KubeObject): Promise<PlannedObject> {
  const { name, namespace } = object.metadata;
  const have = await getObject<Record<string, unknown>>(cluster.client, resourceOf(object), name, {
    namespace,
    what: `read ${describeObject(object)} on ${cluster.name}`,
    ok: [200],
  });
  if (!have) return { side, cluster: cluster.name, object, action: 'create' };
  const roleRef = (have as { roleRef?: unknown }).roleRef;
  if (
    (object as { roleRef?: unknown }).roleRef &&
    roleRef &&
    canonical(roleRef) !== canonical((object as { roleRef?: unknown }).roleRef)
  ) {
    throw new ConfigError(
      `${describeObject(object)} on ${cluster.name} already grants ${(roleRef as { name?: string }).name}; its roleRef cannot change: delete it or choose that role`,
    );
  }
  return { side, cluster: cluster.name, object, action: sameContent(object, have) ? 'unchanged' : 'update' };
}

/** Server-side apply of one object (field manager fleet; conflicts with other managers are reported, not forced). */
async function apply(client: KubeClient, o: KubeObject, dryRun: boolean): Promise<Record<string, unknown>> {
  return applyObject<Record<string, unknown>>(client, o, { dryRun, ok: [200, 201] });
}

/**
 * Applies the plan. Every object is first applied as a server-side dry run on its cluster, so a missing permission or
 * a conflict stops the run before anything changed; then for real, hub first; then each is read back and compared.
 */
export async function applySetup(
  plan: SetupPlan,
  hub: Cluster,
  target: Cluster,
  o: { dryRun: boolean },
): Promise<SetupPlan> {
  const clientOf = (p: PlannedObject) => (p.side === 'hub' ? hub : target);
  const todo = plan.objects.filter((p) => p.action !== 'unchanged');
  // An object in a namespace this plan creates cannot be validated before that namespace exists: the server's dry run
  // of it would say "namespace not found". It is checked when applied, after its Namespace.
  const creating = new Set(
    todo.filter((p) => p.object.kind === 'Namespace').map((p) => `${p.side}/${p.object.metadata.name}`),
  );
  for (const p of todo) {
    if (p.object.metadata.namespace && creating.has(`${p.side}/${p.object.metadata.namespace}`)) continue;
    try {
      await apply(clientOf(p).client, p.object, true);
    } catch (error) {
      throw new FleetError(
        (error as FleetError).kind ?? 'server',
        `${p.cluster}: ${(error as Error).message} (nothing was changed)`,
      );
    }
  }
  const objects: PlannedObject[] = plan.objects.map((p) => ({
    ...p,
    result: p.action === 'unchanged' ? 'unchanged' : o.dryRun ? 'dry-run' : undefined,
  }));
  if (o.dryRun) return { ...plan, objects };
  for (const p of objects.filter((x) => x.action !== 'unchanged')) {
    await apply(clientOf(p).client, p.object, false);
    const res = await sendObject(clientOf(p).client, 'GET', resourceOf(p.object), {
      namespace: p.object.metadata.namespace,
      name: p.object.metadata.name,
    });
    if (res.status !== 200 || !sameContent(p.object, JSON.parse(res.body) as Record<string, unknown>)) {
      throw new FleetError(
        'server',
        `${p.cluster}: ${describeObject(p.object)} does not read back as applied (HTTP ${res.status})`,
      );
    }
    p.result = p.action === 'create' ? 'created' : 'configured';
  }
  return { ...plan, objects };
}

export { toYaml };
