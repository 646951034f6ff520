import yaml from 'js-yaml';

import { ConfigError } from './errors.js';
import { MAX_ALIAS_EXPANSION, MAX_DOCUMENT_DEPTH } from './limits.js';

/** The one wording of a document fleet refuses for its shape: `<where>: not valid YAML[ (line N)]: <problem>`. */
const notValid = (where: string, problem: string, line?: number) =>
  new ConfigError(`${where}: not valid YAML${line === undefined ? '' : ` (line ${line})`}: ${problem}`);

const TOO_DEEP = `nesting deeper than ${MAX_DOCUMENT_DEPTH} levels`;

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
  if (typeof doc !== 'object' || doc === null) return;
  const budget = textLength + MAX_ALIAS_EXPANSION;
  let nodes = 0;
  const stack: object[] = [doc];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const value = stack.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > MAX_DOCUMENT_DEPTH) throw notValid(where, TOO_DEEP);
    nodes++;
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    const length = keys ? keys.length : (value as unknown as unknown[]).length;
    for (let i = 0; i < length; i++) {
      const child = keys ? value[keys[i]] : (value as unknown as unknown[])[i];
      nodes += keys ? 1 + (keys[i].length >>> 6) : 1;
      if (typeof child === 'string') nodes += child.length >>> 6;
      else if (typeof child === 'object' && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
    if (nodes > budget) throw notValid(where, 'excessive aliasing');
  }
}

/**
 * YAML text parsed with one error wording for every file fleet reads: `<where>: not valid YAML (line N): <reason>`,
 * where `where` is a path, or a Secret and its key. Nesting and alias expansion are bounded (checkDocumentBounds), so
 * no document fleet accepts can make a later walk or output run out of memory or stack.
 */
export function loadYaml(text: string, where: string, options: { firstDocument?: boolean } = {}): unknown {
  // firstDocument: a multi-document stream is read up to its first document (client-go's rule for kubeconfig files).
  const doc = parseWith(text, where, (parse) =>
    options.firstDocument ? yaml.loadAll(text, undefined, parse)[0] : yaml.load(text, parse),
  );
  checkDocumentBounds(doc, where, text.length);
  return doc;
}

/** One parse with js-yaml, its failure worded the one way (`<where>: not valid YAML (line N): <reason>`). */
function parseWith<T>(
  text: string,
  where: string,
  parse: (options: yaml.LoadOptions) => T,
  extra: Partial<yaml.LoadOptions> = {},
): T {
  // js-yaml's own depth limit, set to ours (one more: it counts the scalar inside the deepest collection too).
  const options = { filename: where, maxDepth: MAX_DOCUMENT_DEPTH + 1, ...extra } as yaml.LoadOptions;
  try {
    return parse(options);
  } catch (error) {
    const e = error instanceof yaml.YAMLException ? error : undefined;
    const line = e?.mark ? e.mark.line + 1 : undefined;
    const reason = e ? (/^nesting exceeded maxDepth/.test(e.reason) ? TOO_DEEP : e.reason) : String(error);
    throw Object.assign(notValid(where, reason, line), { cause: error });
  }
}

/**
 * YAML text that may not be YAML at all, where that is an answer rather than an error: the document, or undefined when
 * the text does not parse or is out of bounds (a file at an --out path checked for fleet's extension before it is
 * replaced).
 */
export function loadYamlIfValid(text: string): unknown {
  try {
    const doc = yaml.load(text, { maxDepth: MAX_DOCUMENT_DEPTH + 1 } as yaml.LoadOptions);
    checkDocumentBounds(doc, 'text', text.length);
    return doc;
  } catch {
    return undefined;
  }
}

/**
 * A node of a YAML document with where its text lies, for edits that must leave every other byte of a file alone
 * (kubeconfig/edit.ts): js-yaml has no syntax tree, so its listener's open and close events are recorded. `start` is
 * where the node's own text begins (past the spaces, line breaks and comments before it); `end` is just past its last
 * character: exact for scalars and flow collections, the end of the last descendant for a block collection (whose
 * close event comes only after the blank lines and comments that follow it). An empty node (`key:` with no value) has
 * `start` = `end` where the parser looked for it. Mappings list their children as key, value, key, value.
 */
export interface YamlNode {
  kind: 'mapping' | 'sequence' | 'scalar' | 'empty' | 'alias';
  /** A `{...}` or `[...]` collection. */
  flow: boolean;
  start: number;
  end: number;
  value: unknown;
  children: YamlNode[];
}

/**
 * Where a node's text begins: past the spaces, line breaks and comments js-yaml had not read yet when its listener
 * reported the node open at `from`.
 */
export function skipToYamlContent(text: string, from: number): number {
  let p = from;
  while (p < text.length) {
    const c = text[p];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') p++;
    else if (c === '#') while (p < text.length && text[p] !== '\n') p++;
    else break;
  }
  return p;
}

/**
 * The nodes of the first document of `text` (undefined when it has none), with `loadYaml`'s wording and bounds for a
 * text that does not parse. Positions are offsets into `text`.
 */
export function loadYamlNodes(text: string, where: string): YamlNode | undefined {
  const open: Array<{ node: YamlNode; from: number }> = [];
  const roots: YamlNode[] = [];
  const trimBack = (p: number, floor: number) => {
    while (p > floor && /[ \t\r\n]/.test(text[p - 1])) p--;
    return p;
  };
  const listener = (event: 'open' | 'close', state: { position: number; result: unknown; kind: string | null }) => {
    if (event === 'open') {
      const node: YamlNode = {
        kind: 'empty',
        flow: false,
        start: state.position,
        end: state.position,
        value: undefined,
        children: [],
      };
      const parent = open.at(-1);
      if (parent) parent.node.children.push(node);
      else roots.push(node);
      open.push({ node, from: state.position });
      return;
    }
    const { node, from } = open.pop()!;
    // Some nodes (a flow collection where a block one may stand, a list's scalar item) are composed twice, one frame
    // inside the other: one node.
    const only = node.children.length === 1 ? node.children[0] : undefined;
    if (only && only.kind !== 'empty' && Object.is(only.value, state.result)) {
      Object.assign(node, only);
      return;
    }
    // A mapping ends where the parser tried to read one more key and found none: that attempt is not a node.
    if (state.kind === 'mapping' && node.children.length % 2 === 1 && node.children.at(-1)!.kind === 'empty')
      node.children.pop();
    node.value = state.result;
    const kind = state.kind;
    if (kind === 'mapping' || kind === 'sequence' || kind === 'scalar') node.kind = kind;
    else node.kind = state.result === null || state.result === undefined ? 'empty' : 'alias';
    if (node.kind === 'empty') return;
    node.start = skipToYamlContent(text, from);
    node.flow = (kind === 'mapping' || kind === 'sequence') && (text[node.start] === '{' || text[node.start] === '[');
    const block = (kind === 'mapping' || kind === 'sequence') && !node.flow;
    node.end = block ? Math.max(...node.children.map((c) => c.end)) : trimBack(state.position, node.start);
  };
  // One parse, as loadYaml's firstDocument reads it (a later document that does not parse fails it too).
  const docs = parseWith(text, where, (parse) => yaml.loadAll(text, undefined, parse), {
    listener,
  });
  checkDocumentBounds(docs[0], where, text.length);
  return roots[0];
}
