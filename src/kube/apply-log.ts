import type { KubeClient } from './client.js';
import { httpError } from './errors.js';
import type { KubeObject } from './objects.js';
import { type Resource, resourceOf } from './resources.js';
import { applyObject, deleteObject, describeObject, getObject, sendObject } from './typed.js';

/** What a run did to an object: created it (rollback deletes it), changed it, or found it as wanted. */
export type ObjectAction = 'created' | 'configured' | 'unchanged';

export interface AppliedObject<On extends string = string> {
  kind: string;
  name: string;
  namespace?: string;
  /** Which cluster, in the caller's words (creds: the target, `cluster`, or the `hub`). */
  on: On;
  action: ObjectAction;
}

/** One step of undoing a run: delete what it created, or put back what it changed. */
type Undo =
  | { op: 'delete'; client: KubeClient; resource: Resource; name: string; namespace?: string }
  | { op: 'restore'; client: KubeClient; before: KubeObject; afterVersion: string };

const describeUndo = (r: Resource, name: string, namespace?: string) =>
  `${r.kind} ${namespace ? `${namespace}/` : ''}${name}`;

/**
 * Applies objects (server-side apply, forced: fleet owns them) and remembers what this run did to each, so that a
 * failure later can undo it: objects it created are deleted, objects it changed are put back as they were (a snapshot
 * taken just before the apply, written back with the resourceVersion the apply produced, so a change someone else made
 * in between is not overwritten but reported). Nothing half-made is left behind.
 */
export class ApplyLog<On extends string = string> {
  readonly applied: Array<AppliedObject<On>> = [];
  private readonly undo: Undo[] = [];
  /** Applies sent and not answered yet: if the process is ended now, each may or may not exist. */
  private readonly inFlight = new Set<string>();

  async apply<T = KubeObject>(client: KubeClient, obj: KubeObject, on: On): Promise<T> {
    const resource = resourceOf(obj);
    const { name, namespace } = obj.metadata;
    const before = await getObject(client, resource, name, { namespace });
    const sent = `${describeUndo(resource, name, namespace)} on ${client.context.contextName} (its apply had been sent: it may exist)`;
    this.inFlight.add(sent);
    const after = await applyObject<T & KubeObject>(client, obj, { force: true }).finally(() =>
      this.inFlight.delete(sent),
    );
    const action: ObjectAction = !before
      ? 'created'
      : before.metadata.resourceVersion === after.metadata.resourceVersion
        ? 'unchanged'
        : 'configured';
    if (action === 'created') this.undo.push({ op: 'delete', client, resource, name, namespace });
    if (action === 'configured')
      this.undo.push({ op: 'restore', client, before: before!, afterVersion: after.metadata.resourceVersion! });
    this.applied.push({ kind: obj.kind, name, namespace, on, action });
    return after;
  }

  /** Records an object created some other way (a CSR, which is created with POST). */
  recordCreated(client: KubeClient, resource: Resource, name: string, on: On, namespace?: string): void {
    this.undo.push({ op: 'delete', client, resource, name, namespace });
    this.applied.push({ kind: resource.kind, name, namespace, on, action: 'created' });
  }

  /** Undoes the run, newest first; returns what could not be undone (reported, never thrown). */
  async rollback(): Promise<string[]> {
    const failed: string[] = [];
    // Taken off one at a time, so that `pending` says what is left if the process is ended in the middle.
    for (let u = this.undo.at(-1); u !== undefined; u = this.undo.at(-1)) {
      if (u.op === 'delete') {
        await deleteObject(u.client, u.resource, u.name, { namespace: u.namespace }).catch((error) =>
          failed.push(`${describeUndo(u.resource, u.name, u.namespace)}: ${(error as Error).message}`),
        );
      } else {
        await restoreObject(u.client, u.before, u.afterVersion).catch((error) =>
          failed.push(`${describeObject(u.before)} (not restored): ${(error as Error).message}`),
        );
      }
      this.undo.pop();
    }
    return failed;
  }

  /** What rollback has not undone yet, newest first, each with the cluster (context) it is on. */
  pending(): string[] {
    return [
      ...this.inFlight,
      ...[...this.undo]
        .reverse()
        .map((u) =>
          u.op === 'delete'
            ? `${describeUndo(u.resource, u.name, u.namespace)} on ${u.client.context.contextName}`
            : `${describeObject(u.before)} on ${u.client.context.contextName} (changed, not put back)`,
        ),
    ];
  }
}

/**
 * Puts an object back as it was (its managed fields too, so field ownership is as before), with a precondition on the
 * version fleet's own apply produced: if anyone changed it since, the server answers 409 and it is left alone.
 */
async function restoreObject(client: KubeClient, before: KubeObject, afterVersion: string): Promise<void> {
  const where = { namespace: before.metadata.namespace, name: before.metadata.name };
  const put = async (resourceVersion: string) => {
    const res = await sendObject(client, 'PUT', resourceOf(before), where, {
      body: { ...before, metadata: { ...before.metadata, resourceVersion } },
    });
    if (res.status < 200 || res.status >= 300) {
      throw httpError(
        res.status,
        res.body,
        `restore ${describeObject(before)}${res.status === 409 ? ' (changed by someone else since fleet applied it)' : ''}`,
      );
    }
    return JSON.parse(res.body) as KubeObject;
  };
  // The first write puts the content back, but the API server credits the fields it changed to this update's manager;
  // the second, changing no content, sets the managed fields as they were (so fleet's next apply finds its own fields).
  const restored = await put(afterVersion);
  await put(restored.metadata.resourceVersion!);
}
