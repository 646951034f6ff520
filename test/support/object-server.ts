// The API double (api-double.ts) answering as a store of objects by REST path, for unit tests of code that reads and
// writes a few objects (the rotation's Secret store, its steps' anchor deletes) where the behaviour under test is the
// caller's, not the API server's: GET, PUT with the resourceVersion precondition (409 on a stale one, as the API server
// answers), DELETE, and server-side apply as a create-or-merge. fleet's own KubeClient talks to it over TLS.
import type { KubeClient } from '../../src/kube/client.js';
import { type DoubleAnswer, startApiDouble } from './api-double.js';

type Obj = {
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string; [k: string]: unknown };
  [k: string]: unknown;
};

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason,
  message,
  code,
});

export interface ObjectServer {
  client: KubeClient;
  /** Objects by REST path (no query). Tests put, read and change them directly (a concurrent writer). */
  objects: Map<string, Obj>;
  /** `METHOD path` of every request, in order (clear with `requests.length = 0`). */
  requests: string[];
  close(): void;
}

export async function startObjectServer(): Promise<ObjectServer> {
  const double = await startApiDouble('object-server');
  const objects = new Map<string, Obj>();
  const requests: string[] = [];
  let version = 100;
  double.handler = ({ method, url, body }): DoubleAnswer => {
    const path = url.split('?')[0];
    requests.push(`${method} ${path}`);
    const have = objects.get(path);
    const stored = (o: Obj, uid?: string) => {
      const next = {
        ...o,
        metadata: { ...o.metadata, resourceVersion: String(++version), uid: uid ?? `uid-${version}` },
      };
      objects.set(path, next);
      return next;
    };
    const missing = { status: 404, body: status(404, 'NotFound', `${path} not found`) };
    if (method === 'GET') return have ? { status: 200, body: have } : missing;
    if (method === 'DELETE') {
      if (!have) return missing;
      objects.delete(path);
      return { status: 200, body: have };
    }
    if (method === 'PUT') {
      if (!have) return missing;
      const rv = (body as Obj).metadata.resourceVersion;
      if (rv && rv !== have.metadata.resourceVersion)
        return {
          status: 409,
          body: status(
            409,
            'Conflict',
            'the object has been modified; please apply your changes to the latest version and try again',
          ),
        };
      return { status: 200, body: stored(body as Obj, have.metadata.uid) };
    }
    if (method === 'PATCH') {
      const merged = have
        ? { ...have, ...(body as Obj), metadata: { ...have.metadata, ...(body as Obj).metadata } }
        : (body as Obj);
      return { status: have ? 200 : 201, body: stored(merged, have?.metadata.uid) };
    }
    return { status: 405, body: status(405, 'MethodNotAllowed', `${method} not served here`) };
  };
  return { client: double.client, objects, requests, close: () => double.close() };
}
