// RBAC for test identities, written as data so each test states exactly the grant it relies on.
import yaml from 'js-yaml';

import { applyYaml, kubectl, type ServerRef } from './fixture.js';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export type Subject =
  { kind: 'User' | 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

const RBAC = 'rbac.authorization.k8s.io/v1';

/**
 * Grants `subject` a role named `name`: with `rules`, a Role (in `namespace`) or ClusterRole (without) holding them; with
 * `clusterRole`, a binding to that existing ClusterRole instead. Bindings are RoleBindings when a namespace is given.
 * `createNamespace` also creates the namespace first.
 */
export async function grant(
  ref: ServerRef,
  o: {
    name: string;
    subject: Subject;
    namespace?: string;
    rules?: Rule[];
    clusterRole?: string;
    createNamespace?: boolean;
  },
): Promise<void> {
  if (!o.rules === !o.clusterRole) throw new Error('grant: give exactly one of rules and clusterRole');
  const ns = o.namespace ? { namespace: o.namespace } : {};
  const docs: object[] = [];
  if (o.createNamespace && o.namespace)
    docs.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } });
  const roleKind = o.clusterRole || !o.namespace ? 'ClusterRole' : 'Role';
  const roleName = o.clusterRole ?? o.name;
  if (o.rules) docs.push({ apiVersion: RBAC, kind: roleKind, metadata: { name: o.name, ...ns }, rules: o.rules });
  const subject =
    o.subject.kind === 'ServiceAccount' ? o.subject : { ...o.subject, apiGroup: 'rbac.authorization.k8s.io' };
  docs.push({
    apiVersion: RBAC,
    kind: o.namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: { name: o.name, ...ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: [subject],
  });
  await applyYaml(ref, docs.map((d) => yaml.dump(d)).join('---\n'));
}

/** The hub Role docs/rotation.md gives the rotation CronJob's ServiceAccount ("Least RBAC on the hub"), and only that. */
export const ROTATOR_HUB_RULES: Rule[] = [
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update', 'delete'] },
];

/**
 * The rotation CronJob's identity on the hub: ServiceAccount `name` in `namespace` with ROTATOR_HUB_RULES in that
 * namespace; returns a token for it, as the kubelet would project it into the Pod.
 */
export async function cronJobRotator(hub: ServerRef, namespace: string, name: string): Promise<string> {
  await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }));
  await grant(hub, { name, namespace, subject: { kind: 'ServiceAccount', name, namespace }, rules: ROTATOR_HUB_RULES });
  return (await kubectl(hub, ['create', 'token', name, '-n', namespace, '--duration', '1h'])).trim();
}
