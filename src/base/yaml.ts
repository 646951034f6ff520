import yaml from 'js-yaml'

import {ConfigError} from './errors.js'
import {MAX_ALIAS_EXPANSION, MAX_DOCUMENT_DEPTH} from './limits.js'

/** The one wording of a document fleet refuses for its shape: `<where>: not valid YAML[ (line N)]: <problem>`. */
const notValid = (where: string, problem: string, line?: number) =>
  new ConfigError(`${where}: not valid YAML${line === undefined ? '' : ` (line ${line})`}: ${problem}`)

const TOO_DEEP = `nesting deeper than ${MAX_DOCUMENT_DEPTH} levels`

/**
 * Refuses a parsed document that a consumer expanding its aliases would find too deep or too large: more than
 * MAX_DOCUMENT_DEPTH levels of nesting, or more than `textLength` + MAX_ALIAS_EXPANSION nodes. js-yaml shares an
 * aliased node by reference, so "billion laughs" parses in a moment and blows up only later (JSON output, any walk);
 * this walk counts what that later consumer would see, visiting a shared node once per reference, and stops at the
 * budget. Without aliases a document has at most about as many nodes as its text has characters (a string counts one
 * node per 64 characters, so aliasing one long string many times counts too): the text's length is the part of the
 * budget a document earns by itself, and the walk of an ordinary document costs one visit per node. Iterative, so
 * depth cannot exhaust the stack here either. Also for JSON.parse's documents (kubeconfig/parse.ts), whose depth
 * nothing else bounds.
 */
export function checkDocumentBounds(doc: unknown, where: string, textLength: number): void {
  if (typeof doc !== 'object' || doc === null) return
  const budget = textLength + MAX_ALIAS_EXPANSION
  let nodes = 0
  const stack: object[] = [doc]
  const depths: number[] = [1]
  while (stack.length > 0) {
    const value = stack.pop() as Record<string, unknown>
    const depth = depths.pop()!
    if (depth > MAX_DOCUMENT_DEPTH) throw notValid(where, TOO_DEEP)
    nodes++
    const keys = Array.isArray(value) ? undefined : Object.keys(value)
    const length = keys ? keys.length : (value as unknown as unknown[]).length
    for (let i = 0; i < length; i++) {
      const child = keys ? value[keys[i]] : (value as unknown as unknown[])[i]
      nodes += keys ? 1 + (keys[i].length >>> 6) : 1
      if (typeof child === 'string') nodes += child.length >>> 6
      else if (typeof child === 'object' && child !== null) {
        stack.push(child)
        depths.push(depth + 1)
      }
    }
    if (nodes > budget) throw notValid(where, 'excessive aliasing')
  }
}

/**
 * YAML text parsed with one error wording for every file fleet reads: `<where>: not valid YAML (line N): <reason>`,
 * where `where` is a path, or a Secret and its key. Nesting and alias expansion are bounded (checkDocumentBounds), so
 * no document fleet accepts can make a later walk or output run out of memory or stack.
 */
export function loadYaml(text: string, where: string, options: {firstDocument?: boolean} = {}): unknown {
  let doc: unknown
  // js-yaml's own depth limit, set to ours (one more: it counts the scalar inside the deepest collection too).
  const parse = {filename: where, maxDepth: MAX_DOCUMENT_DEPTH + 1} as yaml.LoadOptions
  try {
    // firstDocument: a multi-document stream is read up to its first document (client-go's rule for kubeconfig files).
    doc = options.firstDocument ? yaml.loadAll(text, undefined, parse)[0] : yaml.load(text, parse)
  } catch (error) {
    const e = error instanceof yaml.YAMLException ? error : undefined
    const line = e?.mark ? e.mark.line + 1 : undefined
    const reason = e ? (/^nesting exceeded maxDepth/.test(e.reason) ? TOO_DEEP : e.reason) : String(error)
    throw Object.assign(notValid(where, reason, line), {cause: error})
  }
  checkDocumentBounds(doc, where, text.length)
  return doc
}

/**
 * YAML text that may not be YAML at all, where that is an answer rather than an error: the document, or undefined when
 * the text does not parse or is out of bounds (a file at an --out path checked for fleet's extension before it is
 * replaced).
 */
export function loadYamlIfValid(text: string): unknown {
  try {
    const doc = yaml.load(text, {maxDepth: MAX_DOCUMENT_DEPTH + 1} as yaml.LoadOptions)
    checkDocumentBounds(doc, 'text', text.length)
    return doc
  } catch {
    return undefined
  }
}
