import { createHash } from 'node:crypto';

import type { V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import type { Wire } from '../kube/objects.js';
import type { KubeObject } from '../kube/objects.js';
import { ANNOTATIONS, CREDENTIAL_LABEL, MANAGED_BY_LABELS } from './labels.js';
import type { PolicyRule } from './rules-file.js';

/** Who the credential is: a ServiceAccount (token methods) or a user and groups (client certificate). */
export type Identity =
  { kind: 'ServiceAccount'; namespace: string; name: string } | { kind: 'User'; name: string; groups: string[] };

/** What it may do: a preset, a rules file, or an existing ClusterRole; `rules` is what is granted, for checks. */
export type Access =
  | { kind: 'preset'; name: string; rules: PolicyRule[] }
  | { kind: 'rules'; file: string; rules: PolicyRule[] }
  | { kind: 'cluster-role'; name: string; rules: PolicyRule[] };

export const RBAC_API = 'rbac.authorization.k8s.io/v1';

export function username(id: Identity): string {
  return id.kind === 'ServiceAccount' ? `system:serviceaccount:${id.namespace}:${id.name}` : id.name;
}

export function describeAccess(a: Access): string {
  return a.kind === 'preset'
    ? `preset ${a.name}`
    : a.kind === 'rules'
      ? `rules from ${a.file}`
      : `ClusterRole ${a.name}`;
}

export function describeScope(namespaces: string[]): string {
  return namespaces.length === 0 ? 'cluster-wide' : `namespaces ${namespaces.join(',')}`;
}

/** An object name fleet derives from free text (user names may hold ":" or "@"). */
export function safeName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 200);
}

export const credentialId = (id: Identity) => createHash('sha256').update(username(id)).digest('hex').slice(0, 16);

export function roleBaseName(id: Identity): string {
  return id.kind === 'ServiceAccount'
    ? safeName(`fleet-creds-${id.namespace}-${id.name}`)
    : safeName(`fleet-creds-user-${id.name}`);
}

export function fleetLabels(id: Identity): Record<string, string> {
  return { ...MANAGED_BY_LABELS, [CREDENTIAL_LABEL]: credentialId(id) };
}

export function describeAnnotations(
  id: Identity,
  access: Access,
  namespaces: string[],
  method: string,
): Record<string, string> {
  return {
    [ANNOTATIONS.method]: method,
    [ANNOTATIONS.identity]: username(id),
    [ANNOTATIONS.scope]: describeScope(namespaces),
    [ANNOTATIONS.access]: describeAccess(access),
  };
}

function subject(id: Identity) {
  return id.kind === 'ServiceAccount'
    ? { kind: 'ServiceAccount', name: id.name, namespace: id.namespace }
    : { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: id.name };
}

/**
 * The RBAC objects of a grant: per namespace a Role and RoleBinding (or only a RoleBinding to the named ClusterRole), or
 * cluster-wide a ClusterRole and ClusterRoleBinding. Names are derived from the identity, so a second run applies the
 * same objects instead of adding new ones. A binding's roleRef cannot change, so a binding to a named ClusterRole carries
 * that name.
 */
export function rbacObjects(id: Identity, access: Access, namespaces: string[], method: string): KubeObject[] {
  const base = roleBaseName(id);
  const meta = (name: string, namespace?: string) => ({
    name,
    ...(namespace ? { namespace } : {}),
    labels: fleetLabels(id),
    annotations: describeAnnotations(id, access, namespaces, method),
  });
  const subjects = [subject(id)];
  const objects: KubeObject[] = [];
  if (access.kind === 'cluster-role') {
    const name = safeName(`${base}-${access.name}`);
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: access.name };
    if (namespaces.length === 0)
      objects.push({
        apiVersion: RBAC_API,
        kind: 'ClusterRoleBinding',
        metadata: meta(name),
        subjects,
        roleRef,
      } satisfies Wire<V1ClusterRoleBinding>);
    for (const ns of namespaces)
      objects.push({
        apiVersion: RBAC_API,
        kind: 'RoleBinding',
        metadata: meta(name, ns),
        subjects,
        roleRef,
      } satisfies Wire<V1RoleBinding>);
    return objects;
  }
  if (namespaces.length === 0) {
    objects.push({
      apiVersion: RBAC_API,
      kind: 'ClusterRole',
      metadata: meta(base),
      rules: access.rules,
    } satisfies Wire<V1ClusterRole>);
    objects.push({
      apiVersion: RBAC_API,
      kind: 'ClusterRoleBinding',
      metadata: meta(base),
      subjects,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: base },
    } satisfies Wire<V1ClusterRoleBinding>);
  }
  for (const ns of namespaces) {
    objects.push({
      apiVersion: RBAC_API,
      kind: 'Role',
      metadata: meta(base, ns),
      rules: access.rules,
    } satisfies Wire<V1Role>);
    objects.push({
      apiVersion: RBAC_API,
      kind: 'RoleBinding',
      metadata: meta(base, ns),
      subjects,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: base },
    } satisfies Wire<V1RoleBinding>);
  }
  return objects;
}
