import type { KubeClient, KubeResponse, RequestOptions } from './client.js';
import { FleetError } from '../base/errors.js';
import { httpError } from './errors.js';
import type { KubeObject } from './objects.js';
import { type Query, type Where, groupPath, resourcePath } from './paths.js';
import { type Resource, resourceOf } from './resources.js';

/**
 * Typed object requests over KubeClient: get, list, server-side apply, create, update and delete, each naming a
 * Resource (kube/resources.ts) and where the object is; the path is built and encoded by kube/paths.ts. They go through
 * KubeClient.request/json, so the client's limits (body size, JSON depth, time limit, retries) hold for all of them.
 * Errors are httpError's: `<what>: <the server's message>`, with the status kept (errors.ts statusOf) for a caller that
 * treats a 409 as an answer. `what` defaults to `<verb> <Kind> <namespace>/<name>`; callers whose messages say more
 * pass their own.
 */

/** The field manager fleet's writes are recorded under (server-side apply, and creates and updates that name one). */
export const FIELD_MANAGER = 'fleet';

/** `Kind namespace/name` (or `Kind name` for a cluster-scoped object), as messages name an object. */
export const describeObject = (o: Pick<KubeObject, 'kind' | 'metadata'>): string =>
  describeRef(o.kind, o.metadata.name, o.metadata.namespace);

const describeRef = (kind: string, name: string, namespace?: string): string =>
  `${kind} ${namespace ? `${namespace}/` : ''}${name}`;

export interface CallOptions {
  /** Names the request in errors (default: `<verb> <Kind> <namespace>/<name>`). */
  what?: string;
  /** The statuses that are the answer (default: any 2xx). */
  ok?: readonly number[];
  /** kcp: the workspace the object is in (kube/paths.ts Where.workspace). */
  workspace?: string;
}

/** One request about a resource, answered with whatever status the server sent (for callers that read the status). */
export function sendObject(
  client: KubeClient,
  method: string,
  r: Resource,
  where: Where,
  o: RequestOptions & { body?: unknown; query?: Query } = {},
): Promise<KubeResponse> {
  const { body, query, ...options } = o;
  return client.request(method, resourcePath(r, where, query), body, options);
}

export interface GetOptions extends CallOptions {
  namespace?: string;
  subresource?: string;
}

/** One object, or undefined when the server answers 404. */
export function getObject<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  name: string,
  o: GetOptions = {},
): Promise<T | undefined> {
  const path = resourcePath(r, { namespace: o.namespace, name, subresource: o.subresource, workspace: o.workspace });
  const what =
    o.what ??
    `get ${describeRef(r.kind, name, r.namespaced ? o.namespace : undefined)} on ${client.context.contextName}`;
  return client.json<T>('GET', path, undefined, what, { absent: true, ok: o.ok });
}

export interface ListOptions extends CallOptions {
  /** One namespace; undefined or '' for all of them (a namespaced resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Asks for pages of at most this many items (the server's `limit`). */
  limit?: number;
  /** The token of the page before (`metadata.continue`). */
  continue?: string;
}

export interface ObjectList<T> {
  items: T[];
  metadata: { continue?: string; resourceVersion?: string };
}

/** One page of a list: the items (none when the server sends no `items`) and the token of the next page. */
export async function listPage<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  o: ListOptions = {},
): Promise<ObjectList<T>> {
  const query: Query = {
    limit: o.limit,
    labelSelector: o.labelSelector || undefined,
    fieldSelector: o.fieldSelector || undefined,
    continue: o.continue || undefined,
  };
  const path = resourcePath(r, { namespace: o.namespace, workspace: o.workspace }, query);
  const what =
    o.what ??
    `list ${r.plural}${o.namespace && r.namespaced ? ` in ${o.namespace}` : ''} on ${client.context.contextName}`;
  const page = await client.json<{ items?: T[] | null; metadata?: { continue?: string; resourceVersion?: string } }>(
    'GET',
    path,
    undefined,
    what,
    { ok: o.ok },
  );
  return { items: page.items ?? [], metadata: page.metadata ?? {} };
}

/** Every item of a list. With `limit`, page by page, following `continue` tokens, so a big list is read in bounded pages. */
export async function listObjects<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  o: Omit<ListOptions, 'continue'> = {},
): Promise<T[]> {
  const items: T[] = [];
  let cont: string | undefined;
  do {
    const page = await listPage<T>(client, r, { ...o, continue: cont });
    items.push(...page.items);
    cont = o.limit ? page.metadata.continue || undefined : undefined;
  } while (cont);
  return items;
}

/**
 * Every item of a list and the resourceVersion the list was read at (the first page's: a paged list is one snapshot),
 * from which a watch goes on (watchSince).
 */
export async function listVersioned<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  o: Omit<ListOptions, 'continue'> = {},
): Promise<{ items: T[]; resourceVersion: string }> {
  const items: T[] = [];
  let cont: string | undefined;
  let resourceVersion = '';
  do {
    const page = await listPage<T>(client, r, { ...o, continue: cont });
    items.push(...page.items);
    resourceVersion ||= page.metadata.resourceVersion ?? '';
    cont = o.limit ? page.metadata.continue || undefined : undefined;
  } while (cont);
  return { items, resourceVersion };
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
}

/** How long a watch's backlog may pause before it is taken as replayed whole (watchSince). */
export const WATCH_QUIET_MS = 100;

/**
 * The changes since `resourceVersion`: what an informer applies between two lists, asked for when it is needed (the
 * exporter's next collection) instead of held open. The server replays from its watch cache what changed since then
 * at once, then waits for news: the answer is what came until the stream paused for `quietMs` (WATCH_QUIET_MS), or
 * until the server ended it after `timeoutSeconds` (at least 1). An event still on its way when the pause is taken
 * is not lost: the caller goes on from the last event it applied, and the next watch replays the rest. `gone` when
 * that version is too old to replay (410 Expired, as a status or as an ERROR event): the caller lists again.
 */
export async function watchSince<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  o: Omit<ListOptions, 'continue' | 'limit'> & { resourceVersion: string; timeoutSeconds?: number; quietMs?: number },
): Promise<{ events: WatchEvent<T>[]; gone: boolean }> {
  const query: Query = {
    watch: 1,
    resourceVersion: o.resourceVersion,
    allowWatchBookmarks: true,
    timeoutSeconds: Math.max(1, Math.round(o.timeoutSeconds ?? 1)),
    labelSelector: o.labelSelector || undefined,
    fieldSelector: o.fieldSelector || undefined,
  };
  const path = resourcePath(r, { namespace: o.namespace, workspace: o.workspace }, query);
  const what =
    o.what ??
    `watch ${r.plural}${o.namespace && r.namespaced ? ` in ${o.namespace}` : ''} on ${client.context.contextName}`;
  const res = await client.request('GET', path, undefined, { quietMs: o.quietMs ?? WATCH_QUIET_MS });
  if (res.status === 410) return { events: [], gone: true };
  if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, what);
  const events: WatchEvent<T>[] = [];
  // One event per line of the response body; a last line without its newline was cut by the pause: the next watch
  // replays it.
  const lines = res.body.split('\n');
  lines.pop();
  for (const body of lines) {
    if (!body.trim()) continue;
    let e: { type?: string; object?: { code?: number; message?: string } };
    try {
      e = JSON.parse(body) as typeof e;
    } catch {
      throw new FleetError('server', `${what}: the server sent a watch event that is not JSON`);
    }
    if (e.type === 'ERROR') {
      if (e.object?.code === 410) return { events: [], gone: true };
      throw httpError(e.object?.code ?? 500, JSON.stringify(e.object ?? {}), what);
    }
    if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' || e.type === 'BOOKMARK')
      events.push(e as WatchEvent<T>);
  }
  return { events, gone: false };
}

export interface ApplyOptions extends CallOptions {
  /** Take over fields another manager set (objects fleet owns); without it a conflict is the server's 409. */
  force?: boolean;
  /** The server's dry run: validated and admitted, not stored. */
  dryRun?: boolean;
  fieldManager?: string;
  subresource?: string;
}

/** Server-side apply (field manager `fleet` unless told): the object as the server then holds it. */
export function applyObject<T = KubeObject>(client: KubeClient, obj: KubeObject, o: ApplyOptions = {}): Promise<T> {
  const query: Query = {
    fieldManager: o.fieldManager ?? FIELD_MANAGER,
    force: o.force,
    dryRun: o.dryRun ? 'All' : undefined,
  };
  const path = resourcePath(
    resourceOf(obj),
    { namespace: obj.metadata.namespace, name: obj.metadata.name, subresource: o.subresource, workspace: o.workspace },
    query,
  );
  // JSON is YAML: the body is sent as JSON under apply's content type.
  return client.json<T>('PATCH', path, obj, o.what ?? `apply ${describeObject(obj)}`, {
    contentType: 'application/apply-patch+yaml',
    ok: o.ok,
  });
}

export interface CreateOptions extends CallOptions {
  /** Default: the body's metadata.namespace. */
  namespace?: string;
  /** With a subresource: the object it belongs to (a ServiceAccount's token). */
  name?: string;
  subresource?: string;
  dryRun?: boolean;
  fieldManager?: string;
}

/** POST to a collection, or to a named object's subresource (a TokenRequest); reviews are created this way too. */
export function createObject<T = KubeObject>(
  client: KubeClient,
  r: Resource,
  body: { metadata?: { name?: string; namespace?: string }; [field: string]: unknown },
  o: CreateOptions = {},
): Promise<T> {
  const namespace = o.namespace ?? body.metadata?.namespace;
  const query: Query = { fieldManager: o.fieldManager, dryRun: o.dryRun ? 'All' : undefined };
  const path = resourcePath(r, { namespace, name: o.name, subresource: o.subresource, workspace: o.workspace }, query);
  const name = o.name ?? body.metadata?.name;
  const what =
    o.what ??
    `create ${name ? describeRef(r.kind, name, r.namespaced ? namespace : undefined) : r.kind}${o.subresource ? ` ${o.subresource}` : ''}`;
  return client.json<T>('POST', path, body, what, { ok: o.ok });
}

export interface UpdateOptions extends CallOptions {
  /** The precondition: the server answers 409 unless the object is still at this version (default: the body's own). */
  resourceVersion?: string;
  subresource?: string;
  fieldManager?: string;
}

/** PUT: replaces the object (or its subresource: status, approval), guarded by the resourceVersion it carries. */
export function updateObject<T = KubeObject>(client: KubeClient, obj: KubeObject, o: UpdateOptions = {}): Promise<T> {
  const body =
    o.resourceVersion === undefined
      ? obj
      : { ...obj, metadata: { ...obj.metadata, resourceVersion: o.resourceVersion } };
  const path = resourcePath(
    resourceOf(obj),
    { namespace: obj.metadata.namespace, name: obj.metadata.name, subresource: o.subresource, workspace: o.workspace },
    { fieldManager: o.fieldManager },
  );
  return client.json<T>(
    'PUT',
    path,
    body,
    o.what ?? `update ${describeObject(obj)}${o.subresource ? ` ${o.subresource}` : ''}`,
    { ok: o.ok },
  );
}

export interface DeleteOptions extends Omit<CallOptions, 'ok'> {
  namespace?: string;
  /** Deleted only if the object is still this one (uid) at this version (resourceVersion); otherwise the server's 409. */
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  dryRun?: boolean;
}

/** DELETE: `deleted`, or `absent` when there was nothing to delete (404); any other answer throws. */
export async function deleteObject(
  client: KubeClient,
  r: Resource,
  name: string,
  o: DeleteOptions = {},
): Promise<'deleted' | 'absent'> {
  const { preconditions, propagationPolicy } = o;
  // DeleteOptions only when there is something to say: a plain delete sends no body, as kubectl's does.
  const body =
    preconditions || propagationPolicy
      ? {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          ...(preconditions ? { preconditions } : {}),
          ...(propagationPolicy ? { propagationPolicy } : {}),
        }
      : undefined;
  const res = await sendObject(
    client,
    'DELETE',
    r,
    { namespace: o.namespace, name, workspace: o.workspace },
    { body, query: { dryRun: o.dryRun ? 'All' : undefined } },
  );
  if (res.status === 404) return 'absent';
  if (res.status >= 200 && res.status < 300) return 'deleted';
  throw httpError(
    res.status,
    res.body,
    o.what ?? `delete ${describeRef(r.kind, name, r.namespaced ? o.namespace : undefined)}`,
  );
}

/** The versions of an API group the server serves (`/apis/<group>`): none when it serves the group not at all (404). */
export async function servedVersions(
  client: KubeClient,
  group: string,
  what = `discover ${group} on ${client.context.contextName}`,
): Promise<string[]> {
  const found = await client.json<{ versions?: Array<{ version: string }> }>('GET', groupPath(group), undefined, what, {
    absent: true,
  });
  return found?.versions?.map((v) => v.version) ?? [];
}
