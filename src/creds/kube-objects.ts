import {FleetError} from '../base/errors.js'
import type {KubeClient} from '../kube/client.js'
import {httpError} from '../kube/errors.js'
import {FIELD_MANAGER} from './labels.js'

/** A Kubernetes object as fleet sends it (plain JSON). */
export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: {name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; uid?: string; resourceVersion?: string}
  [key: string]: unknown
}

interface Resource {
  prefix: string
  plural: string
  namespaced: boolean
}

const RESOURCES: Record<string, Resource> = {
  Namespace: {prefix: '/api/v1', plural: 'namespaces', namespaced: false},
  ServiceAccount: {prefix: '/api/v1', plural: 'serviceaccounts', namespaced: true},
  Secret: {prefix: '/api/v1', plural: 'secrets', namespaced: true},
  Role: {prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'roles', namespaced: true},
  RoleBinding: {prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'rolebindings', namespaced: true},
  ClusterRole: {prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'clusterroles', namespaced: false},
  ClusterRoleBinding: {prefix: '/apis/rbac.authorization.k8s.io/v1', plural: 'clusterrolebindings', namespaced: false},
  CertificateSigningRequest: {prefix: '/apis/certificates.k8s.io/v1', plural: 'certificatesigningrequests', namespaced: false},
  ClusterProfile: {prefix: '/apis/multicluster.x-k8s.io/v1alpha1', plural: 'clusterprofiles', namespaced: true},
}

export function objectPath(kind: string, name: string, namespace?: string): string {
  const r = RESOURCES[kind]
  if (!r) throw new FleetError('internal', `no path for kind ${kind}`)
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : ''
  return `${r.prefix}${ns}/${r.plural}/${encodeURIComponent(name)}`
}

export const describeObject = (o: Pick<KubeObject, 'kind' | 'metadata'>) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`

export async function getObject<T = KubeObject>(client: KubeClient, kind: string, name: string, namespace?: string): Promise<T | undefined> {
  const res = await client.request('GET', objectPath(kind, name, namespace))
  if (res.status === 404) return undefined
  if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `get ${kind} ${namespace ? `${namespace}/` : ''}${name} on ${client.context.contextName}`)
  return JSON.parse(res.body) as T
}

/** Server-side apply as field manager `fleet`; force takes over fields another manager set (fleet owns these objects). */
export async function applyObject<T = KubeObject>(client: KubeClient, obj: KubeObject, options: {subresource?: string} = {}): Promise<T> {
  const path = objectPath(obj.kind, obj.metadata.name, obj.metadata.namespace) + (options.subresource ? `/${options.subresource}` : '')
  const res = await client.request('PATCH', `${path}?fieldManager=${FIELD_MANAGER}&force=true`, obj, {contentType: 'application/apply-patch+yaml'})
  if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `apply ${describeObject(obj)}`)
  return JSON.parse(res.body) as T
}

export async function deleteObject(client: KubeClient, kind: string, name: string, namespace?: string): Promise<void> {
  const res = await client.request('DELETE', objectPath(kind, name, namespace))
  if (res.status === 404 || (res.status >= 200 && res.status < 300)) return
  throw httpError(res.status, res.body, `delete ${kind} ${namespace ? `${namespace}/` : ''}${name}`)
}

/** What a run did to an object: created it (rollback deletes it), changed it, or found it as wanted. */
export type ObjectAction = 'created' | 'configured' | 'unchanged'

export interface AppliedObject {
  kind: string
  name: string
  namespace?: string
  /** Which cluster: the target (`cluster`) or the hub. */
  on: 'cluster' | 'hub'
  action: ObjectAction
}

/**
 * Applies objects and remembers which ones this run created, so that a failure later (verification, writing the
 * destination) can remove them again: nothing half-made is left behind. Objects that existed before are left as they are.
 */
export class ApplyLog {
  readonly applied: AppliedObject[] = []
  private readonly created: Array<{client: KubeClient; kind: string; name: string; namespace?: string}> = []

  async apply<T = KubeObject>(client: KubeClient, obj: KubeObject, on: 'cluster' | 'hub'): Promise<T> {
    const before = await getObject(client, obj.kind, obj.metadata.name, obj.metadata.namespace)
    const after = await applyObject<T & KubeObject>(client, obj)
    const action: ObjectAction = !before ? 'created' : before.metadata.resourceVersion === after.metadata.resourceVersion ? 'unchanged' : 'configured'
    if (action === 'created') this.created.push({client, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace})
    this.applied.push({kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, on, action})
    return after
  }

  /** Records an object created some other way (a CSR, which is created with POST). */
  recordCreated(client: KubeClient, kind: string, name: string, on: 'cluster' | 'hub', namespace?: string): void {
    this.created.push({client, kind, name, namespace})
    this.applied.push({kind, name, namespace, on, action: 'created'})
  }

  /** Deletes what this run created, newest first; returns what could not be deleted (reported, never thrown). */
  async rollback(): Promise<string[]> {
    const failed: string[] = []
    for (const o of [...this.created].reverse()) {
      await deleteObject(o.client, o.kind, o.name, o.namespace).catch((error) => failed.push(`${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}: ${(error as Error).message}`))
    }
    this.created.length = 0
    return failed
  }
}
