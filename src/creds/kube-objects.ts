import {FleetError} from '../base/errors.js'
import type {KubeClient} from '../kube/client.js'
import {httpError} from '../kube/errors.js'
import type {KubeObject} from '../kube/objects.js'
import {FIELD_MANAGER} from './labels.js'

/** A Kubernetes object as fleet sends it (plain JSON; metadata typed by client-node's V1ObjectMeta, see kube/objects.ts). */
export type {KubeObject} from '../kube/objects.js'

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
  return client.json<T>('GET', objectPath(kind, name, namespace), undefined, `get ${kind} ${namespace ? `${namespace}/` : ''}${name} on ${client.context.contextName}`, {absent: true})
}

/** Server-side apply as field manager `fleet`; force takes over fields another manager set (fleet owns these objects). */
export async function applyObject<T = KubeObject>(client: KubeClient, obj: KubeObject, options: {subresource?: string} = {}): Promise<T> {
  const path = objectPath(obj.kind, obj.metadata.name, obj.metadata.namespace) + (options.subresource ? `/${options.subresource}` : '')
  return client.json<T>('PATCH', `${path}?fieldManager=${FIELD_MANAGER}&force=true`, obj, `apply ${describeObject(obj)}`, {contentType: 'application/apply-patch+yaml'})
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

/** One step of undoing a run: delete what it created, or put back what it changed. */
type Undo =
  | {op: 'delete'; client: KubeClient; kind: string; name: string; namespace?: string}
  | {op: 'restore'; client: KubeClient; before: KubeObject; afterVersion: string}

/**
 * Applies objects and remembers what this run did to each, so that a failure later (verification, writing the
 * destination) can undo it: objects it created are deleted, objects it changed are put back as they were (a snapshot
 * taken just before the apply, written back with the resourceVersion the apply produced, so a change someone else made
 * in between is not overwritten but reported). Nothing half-made is left behind, and an existing consumer Secret keeps
 * the credential that worked before the run.
 */
export class ApplyLog {
  readonly applied: AppliedObject[] = []
  private readonly undo: Undo[] = []

  async apply<T = KubeObject>(client: KubeClient, obj: KubeObject, on: 'cluster' | 'hub'): Promise<T> {
    const before = await getObject(client, obj.kind, obj.metadata.name, obj.metadata.namespace)
    const after = await applyObject<T & KubeObject>(client, obj)
    const action: ObjectAction = !before ? 'created' : before.metadata.resourceVersion === after.metadata.resourceVersion ? 'unchanged' : 'configured'
    if (action === 'created') this.undo.push({op: 'delete', client, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace})
    if (action === 'configured') this.undo.push({op: 'restore', client, before: before!, afterVersion: after.metadata.resourceVersion!})
    this.applied.push({kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, on, action})
    return after
  }

  /** Records an object created some other way (a CSR, which is created with POST). */
  recordCreated(client: KubeClient, kind: string, name: string, on: 'cluster' | 'hub', namespace?: string): void {
    this.undo.push({op: 'delete', client, kind, name, namespace})
    this.applied.push({kind, name, namespace, on, action: 'created'})
  }

  /** Undoes the run, newest first; returns what could not be undone (reported, never thrown). */
  async rollback(): Promise<string[]> {
    const failed: string[] = []
    // Taken off one at a time, so that `pending` says what is left if the process is ended in the middle.
    for (let u = this.undo.at(-1); u !== undefined; u = this.undo.at(-1)) {
      if (u.op === 'delete') {
        await deleteObject(u.client, u.kind, u.name, u.namespace).catch((error) => failed.push(`${u.kind} ${u.namespace ? `${u.namespace}/` : ''}${u.name}: ${(error as Error).message}`))
      } else {
        await restoreObject(u.client, u.before, u.afterVersion).catch((error) => failed.push(`${describeObject(u.before)} (not restored): ${(error as Error).message}`))
      }
      this.undo.pop()
    }
    return failed
  }

  /** What rollback has not undone yet, newest first, each with the cluster (context) it is on. */
  pending(): string[] {
    return [...this.undo].reverse().map((u) =>
      u.op === 'delete'
        ? `${u.kind} ${u.namespace ? `${u.namespace}/` : ''}${u.name} on ${u.client.context.contextName}`
        : `${describeObject(u.before)} on ${u.client.context.contextName} (changed, not put back)`,
    )
  }
}

/**
 * Puts an object back as it was (its managed fields too, so field ownership is as before), with a precondition on the
 * version fleet's own apply produced: if anyone changed it since, the server answers 409 and it is left alone.
 */
async function restoreObject(client: KubeClient, before: KubeObject, afterVersion: string): Promise<void> {
  const path = objectPath(before.kind, before.metadata.name, before.metadata.namespace)
  const put = async (resourceVersion: string) => {
    const res = await client.request('PUT', path, {...before, metadata: {...before.metadata, resourceVersion}})
    if (res.status < 200 || res.status >= 300) {
      throw httpError(res.status, res.body, `restore ${describeObject(before)}${res.status === 409 ? ' (changed by someone else since fleet applied it)' : ''}`)
    }
    return JSON.parse(res.body) as KubeObject
  }
  // The first write puts the content back, but the API server credits the fields it changed to this update's manager;
  // the second, changing no content, sets the managed fields as they were (so fleet's next apply finds its own fields).
  const restored = await put(afterVersion)
  await put(restored.metadata.resourceVersion!)
}
