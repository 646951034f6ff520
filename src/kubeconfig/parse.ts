import yaml from 'js-yaml'

import {readOptional} from '../base/files.js'
import {loadYaml} from '../base/yaml.js'
import {ConfigError} from '../base/errors.js'
import type {ClusterEntry, ContextEntry, KubeconfigDoc, UserEntry} from './types.js'

/** One kubeconfig file, parsed: the document as written plus indexes by name. */
export interface KubeconfigFile {
  /** Absolute path (or a label such as `<secret ns/name>` for documents that do not come from disk). */
  path: string
  doc: KubeconfigDoc
  clusters: Map<string, ClusterEntry>
  users: Map<string, UserEntry>
  contexts: Map<string, ContextEntry>
  currentContext?: string
}

type Section = 'clusters' | 'users' | 'contexts'
const ENTRY_KEY: Record<Section, string> = {clusters: 'cluster', users: 'user', contexts: 'context'}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function index<T>(doc: KubeconfigDoc, section: Section, where: string): Map<string, T> {
  const out = new Map<string, T>()
  const list = doc[section]
  if (list === undefined || list === null) return out
  if (!Array.isArray(list)) throw new ConfigError(`${where}: "${section}" must be a list`)
  for (const [i, item] of list.entries()) {
    if (!isMapping(item)) throw new ConfigError(`${where}: ${section}[${i}] must be a mapping`)
    const name = item.name
    if (typeof name !== 'string' || name === '') throw new ConfigError(`${where}: ${section}[${i}] has no name`)
    // client-go refuses a file that names the same entry twice; so do we, naming the entry.
    if (out.has(name)) throw new ConfigError(`${where}: duplicate name "${name}" in ${section}`)
    const entry = (item as Record<string, unknown>)[ENTRY_KEY[section]] ?? {}
    if (!isMapping(entry)) throw new ConfigError(`${where}: ${section} entry "${name}" must be a mapping`)
    out.set(name, entry as T)
  }
  return out
}

// Every string of a JSON text, and whether a colon follows it (then it is a key). Outside strings JSON has no quotes, so
// matching strings one after another from the start tokenises them exactly.
const JSON_STRING = /"(?:[^"\\]|\\.)*"(\s*:)?/g

function countKeys(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countKeys(v), 0)
  if (typeof value !== 'object' || value === null) return 0
  let n = 0
  for (const key in value) n += 1 + countKeys((value as Record<string, unknown>)[key])
  return n
}

function hasYamlOnlyKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasYamlOnlyKey)
  if (typeof value !== 'object' || value === null) return false
  return Object.keys(value).some((k) => k === '<<' || k === '__proto__' || hasYamlOnlyKey((value as Record<string, unknown>)[k]))
}

/**
 * A kubeconfig written as JSON (tools generate them so) read by JSON.parse, ten times faster than the YAML parser
 * over 2,000 contexts: `undefined` whenever the YAML parser could read the text differently, so that it decides.
 * Those cases: not a JSON object, characters YAML treats specially that JSON allows (tabs, Unicode line breaks),
 * a key that appears twice in one mapping (YAML refuses it, JSON.parse keeps the last: told by counting the keys of
 * the text against those of the result), and the YAML-only keys `<<` (a merge) and `__proto__`.
 */
function jsonDocument(text: string): Record<string, unknown> | undefined {
  if (!/^\s*\{/.test(text) || /[\t\u0085\u2028\u2029]/.test(text)) return undefined
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isMapping(doc) || hasYamlOnlyKey(doc)) return undefined
  let keys = 0
  for (const m of text.matchAll(JSON_STRING)) if (m[1] !== undefined) keys++
  return keys === countKeys(doc) ? doc : undefined
}

/** Parses kubeconfig text. `where` names the source in errors (a path, or a Secret). An empty document is an empty config. */
export function parseKubeconfig(text: string, where: string): KubeconfigFile {
  // client-go reads the first document of a multi-document file and ignores the rest.
  let loaded = jsonDocument(text) ?? loadYaml(text, where, {firstDocument: true})
  if (loaded === undefined || loaded === null) loaded = {}
  if (!isMapping(loaded)) throw new ConfigError(`${where}: a kubeconfig must be a YAML mapping`)
  const doc = loaded as KubeconfigDoc
  const current = doc['current-context']
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new ConfigError(`${where}: "current-context" must be a string`)
  }
  return {
    path: where,
    doc,
    clusters: index<ClusterEntry>(doc, 'clusters', where),
    users: index<UserEntry>(doc, 'users', where),
    contexts: index<ContextEntry>(doc, 'contexts', where),
    currentContext: current || undefined,
  }
}

/** Reads and parses one file; a missing file is reported as `undefined` so callers decide whether that is an error. */
export async function readKubeconfig(path: string): Promise<KubeconfigFile | undefined> {
  const text = await readOptional(path, 'a kubeconfig file')
  return text === undefined ? undefined : parseKubeconfig(text, path)
}

/** Serialises a document back to YAML: the same structure that was loaded, unknown fields included. */
export function dumpKubeconfig(doc: KubeconfigDoc): string {
  return yaml.dump(doc, {lineWidth: -1, noRefs: true, sortKeys: false})
}
