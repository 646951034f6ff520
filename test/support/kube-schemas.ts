// JSON schemas for kubeconform, made offline from the API server itself: kubeconform's default schemas are downloaded
// from GitHub, which this machine (and a CI runner without internet) cannot reach. Every group-version's OpenAPI v3
// document (`/openapi/v3/...`, what `kubectl explain` reads) is turned into one file per kind, named as kubeconform's
// schema-location template asks ({{ .ResourceKind }}{{ .KindSuffix }}.json), each standalone (the definitions it refers
// to copied into it) and strict (no property the API does not define), as the published -standalone-strict schemas
// are. The schemas are the control plane's own, so they are those of the Kubernetes version the tests run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { apiRequest, loadControlPlane, server, type ServerRef } from './fixture.js';

type Schema = Record<string, unknown>;
interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const REF = '#/components/schemas/';

/** kubeconform's file name for a kind: the lowercase kind, the group's first label (or the version for core), version. */
export function schemaFileName({ group, version, kind }: Gvk): string {
  const suffix = group ? `-${group.split('.')[0]}-${version}` : `-${version}`;
  return `${kind.toLowerCase()}${suffix.toLowerCase()}.json`;
}

function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) refsOf(n, into);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(REF)) into.add(v.slice(REF.length));
      else refsOf(v, into);
    }
  }
}

/** One OpenAPI v3 schema node as JSON Schema draft 4 (what kubeconform compiles them as), strict. */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node as Schema)) {
    if (k === '$ref' && typeof v === 'string') out.$ref = `#/definitions/${v.slice(REF.length)}`;
    else if (k === 'properties' || k === 'definitions')
      out[k] = Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, convert(s)]));
    else if (k.startsWith('x-kubernetes-') || k === 'nullable' || k === 'default') continue;
    else out[k] = convert(v);
  }
  const src = node as Schema;
  // null is how a client says "unset" for a nullable field.
  if (src.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  // int-or-string (a Service's targetPort, a resource quantity): the API accepts either.
  if (src['x-kubernetes-int-or-string'] === true) out.anyOf = [{ type: 'string' }, { type: 'integer' }];
  // Strict: an object with defined properties takes no others, unless the API says it keeps unknown fields.
  if (
    out.type === 'object' &&
    out.properties &&
    !('additionalProperties' in out) &&
    src['x-kubernetes-preserve-unknown-fields'] !== true
  )
    out.additionalProperties = false;
  return out;
}

/**
 * Writes a schema file per kind of every group-version `ref`'s API server serves into `dir` and returns kubeconform's
 * -schema-location for it and the number of files.
 */
export async function writeKubeconformSchemas(
  ref: ServerRef,
  dir: string,
): Promise<{ location: string; files: number }> {
  const s = server(ref);
  const { admin } = loadControlPlane();
  const get = async (path: string) => {
    const res = await apiRequest({
      url: s.url,
      path,
      caFile: s.caFile,
      certFile: admin.certFile,
      keyFile: admin.keyFile,
      timeoutMs: 60_000,
    });
    if (res.status !== 200) throw new Error(`GET ${path} on ${s.name}: ${res.status} ${res.body.slice(0, 200)}`);
    return JSON.parse(res.body) as unknown;
  };
  const index = (await get('/openapi/v3')) as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  const schemas: Record<string, Schema> = {};
  const groupVersions = Object.entries(index.paths).filter(([path]) => /^apis?\/[^/]+(\/[^/]+)?$/.test(path));
  const docs = await Promise.all(
    groupVersions.map(
      async ([, { serverRelativeURL }]) =>
        (await get(serverRelativeURL)) as {
          components?: { schemas?: Record<string, Schema> };
        },
    ),
  );
  // The same definition (ObjectMeta, ...) is in every document that refers to it, identical in each.
  for (const doc of docs) Object.assign(schemas, doc.components?.schemas ?? {});
  mkdirSync(dir, { recursive: true });
  let files = 0;
  for (const [name, schema] of Object.entries(schemas)) {
    const gvks = (schema['x-kubernetes-group-version-kind'] ?? []) as Gvk[];
    // A kind served in one group-version only: the list and option types name several (e.g. DeleteOptions).
    if (gvks.length !== 1 || !(schema.properties as Schema | undefined)?.metadata) continue;
    const gvk = gvks[0];
    const needed = new Set<string>();
    const queue = [name];
    while (queue.length > 0) {
      const next = new Set<string>();
      refsOf(schemas[queue.pop()!], next);
      for (const n of next)
        if (!needed.has(n) && n !== name) {
          needed.add(n);
          queue.push(n);
        }
    }
    const root = convert(schema) as Schema;
    const props = root.properties as Record<string, Schema>;
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    props.apiVersion = { type: 'string', enum: [apiVersion] };
    props.kind = { type: 'string', enum: [gvk.kind] };
    root.definitions = Object.fromEntries([...needed].sort().map((n) => [n, convert(schemas[n])]));
    // A self-reference (none among the kinds fleet's charts render, but JSONSchemaProps has one) resolves to the root.
    const text = JSON.stringify(root).replaceAll(`"#/definitions/${name}"`, '"#"');
    writeFileSync(join(dir, schemaFileName(gvk)), text);
    files++;
  }
  return { location: `${dir}/{{ .ResourceKind }}{{ .KindSuffix }}.json`, files };
}
