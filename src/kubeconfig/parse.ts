import yaml from 'js-yaml';

import { readOptional } from '../base/files.js';
import { checkDocumentBounds, loadYaml } from '../base/yaml.js';
import { ConfigError } from '../base/errors.js';
import type { ClusterEntry, ContextEntry, KubeconfigDoc, UserEntry } from './types.js';

/** One kubeconfig file, parsed: the document as written plus indexes by name. */
export interface KubeconfigFile {
  /** Absolute path (or a label such as `<secret ns/name>` for documents that do not come from disk). */
  path: string;
  doc: KubeconfigDoc;
  clusters: Map<string, ClusterEntry>;
  users: Map<string, UserEntry>;
  contexts: Map<string, ContextEntry>;
  currentContext?: string;
}

type Section = 'clusters' | 'users' | 'contexts';
const ENTRY_KEY: Record<Section, string> = { clusters: 'cluster', users: 'user', contexts: 'context' };

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/*
 * The types of the fields fleet reads, checked when a file is parsed, as client-go's decoder checks them: a field of
 * the wrong type is one line naming the file, the entry and the field (`<file>: cluster "x": server must be a
 * string`), exit 2, instead of `t.includes is not a function` later or `server: [1,2]` read as the URL `1,2`. null
 * stays allowed wherever a field may be absent (client-go decodes null as absent), except inside lists and the exec
 * env, where fleet would pass it on as the text "null".
 */
type Shape = 'string' | 'boolean' | 'strings' | 'stringMap' | 'extensions' | 'exec' | 'authProvider';

const SHAPES: Record<Section, Record<string, Shape>> = {
  clusters: {
    server: 'string',
    'certificate-authority': 'string',
    'certificate-authority-data': 'string',
    'tls-server-name': 'string',
    'proxy-url': 'string',
    'insecure-skip-tls-verify': 'boolean',
    'disable-compression': 'boolean',
    extensions: 'extensions',
  },
  users: {
    'client-certificate': 'string',
    'client-certificate-data': 'string',
    'client-key': 'string',
    'client-key-data': 'string',
    token: 'string',
    tokenFile: 'string',
    username: 'string',
    password: 'string',
    as: 'string',
    'as-uid': 'string',
    'as-groups': 'strings',
    exec: 'exec',
    'auth-provider': 'authProvider',
    extensions: 'extensions',
  },
  contexts: { cluster: 'string', user: 'string', namespace: 'string', extensions: 'extensions' },
};

const EXEC_SHAPES: Record<string, Shape> = {
  command: 'string',
  args: 'strings',
  apiVersion: 'string',
  interactiveMode: 'string',
  installHint: 'string',
  provideClusterInfo: 'boolean',
};

const isStrings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** What is wrong with `value` as `field` of this shape (`server must be a string`), or undefined. */
function shapeProblem(value: unknown, shape: Shape, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  switch (shape) {
    case 'string':
      return typeof value === 'string' ? undefined : `${field} must be a string`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${field} must be true or false`;
    case 'strings':
      return isStrings(value) ? undefined : `${field} must be a list of strings`;
    case 'stringMap':
      return isMapping(value) && Object.values(value).every((v) => typeof v === 'string')
        ? undefined
        : `${field} must be a mapping of strings`;
    case 'extensions': {
      if (!Array.isArray(value)) return `${field} must be a list`;
      const bad = value.findIndex((e) => !isMapping(e) || typeof e.name !== 'string');
      return bad < 0 ? undefined : `${field}[${bad}] must be a mapping with a name (a string)`;
    }
    case 'exec': {
      if (!isMapping(value)) return `${field} must be a mapping`;
      for (const [key, inner] of Object.entries(EXEC_SHAPES)) {
        const problem = shapeProblem(value[key], inner, `${field}.${key}`);
        if (problem) return problem;
      }
      const env = value.env;
      if (env === undefined || env === null) return undefined;
      if (!Array.isArray(env)) return `${field}.env must be a list of {name, value}`;
      for (const [i, e] of env.entries()) {
        if (!isMapping(e)) return `${field}.env[${i}] must be a mapping with name and value`;
        if (typeof e.name !== 'string') return `${field}.env[${i}].name must be a string`;
        if (typeof e.value !== 'string') return `${field}.env[${i}].value must be a string`;
      }
      return undefined;
    }
    case 'authProvider': {
      if (!isMapping(value)) return `${field} must be a mapping`;
      return (
        shapeProblem(value.name, 'string', `${field}.name`) ??
        shapeProblem(value.config, 'stringMap', `${field}.config`)
      );
    }
  }
}

function checkShapes(entry: Record<string, unknown>, section: Section, name: string, where: string): void {
  for (const [field, shape] of Object.entries(SHAPES[section])) {
    const problem = shapeProblem(entry[field], shape, field);
    if (problem) throw new ConfigError(`${where}: ${ENTRY_KEY[section]} "${name}": ${problem}`);
  }
}

function index<T>(doc: KubeconfigDoc, section: Section, where: string): Map<string, T> {
  const out = new Map<string, T>();
  const list = doc[section];
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new ConfigError(`${where}: "${section}" must be a list`);
  for (const [i, item] of list.entries()) {
    if (!isMapping(item)) throw new ConfigError(`${where}: ${section}[${i}] must be a mapping`);
    const name = item.name;
    if (name !== undefined && name !== null && typeof name !== 'string')
      throw new ConfigError(`${where}: ${section}[${i}]: name must be a string`);
    if (typeof name !== 'string' || name === '') throw new ConfigError(`${where}: ${section}[${i}] has no name`);
    // client-go refuses a file that names the same entry twice; so do we, naming the entry.
    if (out.has(name)) throw new ConfigError(`${where}: duplicate name "${name}" in ${section}`);
    const entry = (item as Record<string, unknown>)[ENTRY_KEY[section]] ?? {};
    if (!isMapping(entry)) throw new ConfigError(`${where}: ${section} entry "${name}" must be a mapping`);
    checkShapes(entry, section, name, where);
    out.set(name, entry as T);
  }
  return out;
}

/** How many keys a JSON text writes: strings followed by a colon (outside strings JSON has no quotes). */
function keysInText(text: string): number {
  let keys = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 0x22) continue;
    // Past the string: a backslash escapes the next character.
    for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    let j = i + 1;
    while (
      j < text.length &&
      (text.charCodeAt(j) === 0x20 || text.charCodeAt(j) === 0x0a || text.charCodeAt(j) === 0x0d)
    )
      j++;
    if (text.charCodeAt(j) === 0x3a) keys++;
  }
  return keys;
}

/** How many keys a parsed document holds, or -1 when one of them is a key only YAML gives a meaning (`<<`, a merge) or
 * that JSON.parse and the YAML parser store differently (`__proto__`). */
function keysInDocument(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) {
      const k = keysInDocument(v);
      if (k < 0) return -1;
      n += k;
    }
    return n;
  }
  for (const key of Object.keys(value)) {
    if (key === '<<' || key === '__proto__') return -1;
    const k = keysInDocument((value as Record<string, unknown>)[key]);
    if (k < 0) return -1;
    n += 1 + k;
  }
  return n;
}

/**
 * A kubeconfig written as JSON (tools generate them so) read by JSON.parse, ten times faster than the YAML parser
 * over 2,000 contexts: `undefined` whenever the YAML parser could read the text differently, so that it decides.
 * Those cases: not a JSON object, characters YAML treats specially that JSON allows (tabs, Unicode line breaks),
 * a key that appears twice in one mapping (YAML refuses it, JSON.parse keeps the last: told by counting the keys of
 * the text against those of the result), and the YAML-only keys `<<` (a merge) and `__proto__`. Nesting deeper than
 * the YAML parser allows is refused here with its wording (base/yaml.ts checkDocumentBounds).
 */
function jsonDocument(text: string, where: string): Record<string, unknown> | undefined {
  if (!/^\s*\{/.test(text) || /[\t\u0085\u2028\u2029]/.test(text)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isMapping(doc)) return undefined;
  // JSON.parse nests as deep as the text does; bounded before anything here walks it (keysInDocument recurses).
  checkDocumentBounds(doc, where, text.length);
  const keys = keysInDocument(doc);
  return keys >= 0 && keys === keysInText(text) ? doc : undefined;
}

/** Parses kubeconfig text. `where` names the source in errors (a path, or a Secret). An empty document is an empty config. */
export function parseKubeconfig(text: string, where: string): KubeconfigFile {
  // client-go reads the first document of a multi-document file and ignores the rest.
  let loaded = jsonDocument(text, where) ?? loadYaml(text, where, { firstDocument: true });
  if (loaded === undefined || loaded === null) loaded = {};
  if (!isMapping(loaded)) throw new ConfigError(`${where}: a kubeconfig must be a YAML mapping`);
  const doc = loaded as KubeconfigDoc;
  const current = doc['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new ConfigError(`${where}: "current-context" must be a string`);
  }
  const extensions = shapeProblem(doc.extensions, 'extensions', 'extensions');
  if (extensions) throw new ConfigError(`${where}: ${extensions}`);
  return {
    path: where,
    doc,
    clusters: index<ClusterEntry>(doc, 'clusters', where),
    users: index<UserEntry>(doc, 'users', where),
    contexts: index<ContextEntry>(doc, 'contexts', where),
    currentContext: current || undefined,
  };
}

/** Reads and parses one file; a missing file is reported as `undefined` so callers decide whether that is an error. */
export async function readKubeconfig(path: string): Promise<KubeconfigFile | undefined> {
  const text = await readOptional(path, 'a kubeconfig file');
  return text === undefined ? undefined : parseKubeconfig(text, path);
}

/** Serialises a document back to YAML: the same structure that was loaded, unknown fields included. */
export function dumpKubeconfig(doc: KubeconfigDoc): string {
  return yaml.dump(doc, { lineWidth: -1, noRefs: true, sortKeys: false });
}
