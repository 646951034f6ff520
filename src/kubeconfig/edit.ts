import { isDeepStrictEqual } from 'node:util';

import { ConfigError } from '../base/errors.js';
import { type YamlNode, loadYamlNodes } from '../base/yaml.js';
import { type KubeconfigFile, dumpKubeconfig, parseKubeconfig } from './parse.js';
import type { KubeconfigDoc } from './types.js';

/**
 * Edits of a kubeconfig file that leave every byte fleet did not mean to change as it was: comments, quoting, flow or
 * block style, key order, line endings. A load-and-dump round trip through js-yaml (the project's one YAML library,
 * which has no syntax tree) would rewrite all of them, so the edits are splices of text ranges found by
 * `loadYamlNodes`: an entry is replaced or removed where its text lies, a new one is appended after the last entry of
 * its list in that list's style. After splicing, the new text is parsed again and every entry and top-level field fleet
 * did not edit must be deep-equal to what it was, and every edited one what fleet meant; if not (a layout these rules
 * do not cover), the edit is refused and the file is left alone, so the worst outcome is a one-line error, never a
 * changed entry that is not fleet's.
 */

export type Section = 'clusters' | 'users' | 'contexts';
export const SECTIONS: readonly Section[] = ['clusters', 'users', 'contexts'];
/** The key of an entry's body in each list: `{name, cluster: {...}}`. */
export const ENTRY_KEY: Record<Section, 'cluster' | 'user' | 'context'> = {
  clusters: 'cluster',
  users: 'user',
  contexts: 'context',
};

/** One named item of a list as written: `{name: x, cluster: {...}}` (fields beside name and the body survive). */
export type NamedItem = { name: string } & Record<string, unknown>;

interface Splice {
  start: number;
  end: number;
  text: string;
  /** A new key of the root mapping, inserted after its last line. */
  newKey?: boolean;
}

interface ItemNode {
  name: string;
  node: YamlNode;
}

interface SectionNodes {
  key?: YamlNode;
  value?: YamlNode;
  items: ItemNode[];
}

export class KubeconfigEdit {
  /** The file as parsed (client-go's rules and fleet's shape checks): an edit starts from a file fleet can read. */
  readonly file: KubeconfigFile;
  private readonly root?: YamlNode;
  private readonly nodes: Record<Section, SectionNodes>;
  private readonly eol: string;
  /** The UTF-8 byte order mark the file starts with, if any: read past (as kubectl reads it), written back as it was. */
  private readonly bom: string;
  /** The file's text after the BOM: every offset below is into this. */
  private readonly text: string;
  private readonly set = new Map<string, NamedItem>();
  private readonly removed = new Set<string>();
  private readonly appended: Record<Section, NamedItem[]> = { clusters: [], users: [], contexts: [] };
  private currentContext?: { name: string };

  constructor(
    original: string,
    private readonly where: string,
  ) {
    // client-go's YAML reader (go-yaml) skips a leading UTF-8 BOM, and so does js-yaml's load, but js-yaml's listener
    // positions count from after it: the splices work on the text past the BOM and put it back in front.
    this.bom = original.startsWith('\uFEFF') ? '\uFEFF' : '';
    const text = original.slice(this.bom.length);
    this.text = text;
    this.file = parseKubeconfig(text, where);
    this.eol = /\r\n/.test(text.slice(0, text.indexOf('\n') + 1)) ? '\r\n' : '\n';
    const root = text.trim() === '' ? undefined : loadYamlNodes(text, where);
    this.root = root?.kind === 'mapping' ? root : undefined;
    this.nodes = {
      clusters: this.sectionNodes('clusters'),
      users: this.sectionNodes('users'),
      contexts: this.sectionNodes('contexts'),
    };
  }

  private sectionNodes(section: Section): SectionNodes {
    const pair = this.rootPair(section);
    if (!pair) return { items: [] };
    const items =
      pair.value.kind === 'sequence' ? pair.value.children.map((node) => ({ name: itemName(node), node })) : [];
    return { key: pair.key, value: pair.value, items };
  }

  private rootPair(key: string): { key: YamlNode; value: YamlNode } | undefined {
    const children = this.root?.children ?? [];
    for (let i = 0; i + 1 < children.length; i += 2)
      if (children[i].value === key) return { key: children[i], value: children[i + 1] };
    return undefined;
  }

  /** The item named `name` in a list as written, or undefined. */
  item(section: Section, name: string): NamedItem | undefined {
    const list = this.file.doc[section];
    return list?.find((i) => i.name === name);
  }

  /** Replaces the item of that name, or appends it at the end of its list. */
  put(section: Section, item: NamedItem): void {
    const key = `${section}\u0000${item.name}`;
    if (this.set.has(key) || this.removed.has(key)) throw new Error(`internal: ${section} "${item.name}" edited twice`);
    item = plain(item) as NamedItem;
    this.set.set(key, item);
    if (!this.item(section, item.name)) this.appended[section].push(item);
  }

  remove(section: Section, name: string): void {
    if (!this.item(section, name)) return;
    this.removed.add(`${section}\u0000${name}`);
  }

  setCurrentContext(name: string): void {
    this.currentContext = { name };
  }

  /** The edited text, checked (see the module comment); the text itself when nothing changes. */
  result(): string {
    const splices: Splice[] = this.root ? this.splices() : this.newDocument();
    if (splices.length === 0) return this.bom + this.text;
    // Last first, so earlier offsets stay true; two inserts at one place keep the order they were made in.
    const order = splices.map((s, i) => ({ ...s, i })).sort((a, b) => b.start - a.start || b.i - a.i);
    let out = this.text;
    let last = Infinity;
    for (const s of order) {
      if (s.end > last) throw this.refused('two edits overlap');
      out = out.slice(0, s.start) + s.text + out.slice(s.end);
      last = s.start;
    }
    this.verify(out);
    return this.bom + out;
  }

  // ---- splices ---------------------------------------------------------------------------------------------------

  private splices(): Splice[] {
    const out: Splice[] = [];
    for (const section of SECTIONS) out.push(...this.sectionSplices(section));
    if (this.currentContext) out.push(...this.currentContextSplices(this.currentContext.name));
    // New top-level keys go after the root's last line, which may also be where its last list gets new items: the
    // items first, so they stay in their list.
    return [...out.filter((s) => !s.newKey), ...out.filter((s) => s.newKey)];
  }

  /** What goes before a new key of a flow root: a comma unless it is the first thing in `{}`. */
  private flowRootSeparator(): string {
    return this.root!.children.length > 0 || this.newFlowKeys++ > 0 ? ', ' : '';
  }

  private newFlowKeys = 0;

  /**
   * No document yet (an empty file, or only comments): a whole one after whatever the file held, with the header a
   * kubeconfig has (verify allows those two fields to appear).
   */
  private newDocument(): Splice[] {
    const doc: KubeconfigDoc = { apiVersion: 'v1', kind: 'Config' };
    for (const section of SECTIONS)
      if (this.appended[section].length > 0) (doc as Record<string, unknown>)[section] = this.appended[section];
    if (this.currentContext) doc['current-context'] = this.currentContext.name;
    if (Object.keys(doc).length === 2) return [];
    const start = this.text.length;
    const sep = this.text === '' || this.text.endsWith('\n') ? '' : this.eol;
    return [{ start, end: start, text: sep + this.lines(dumpKubeconfig(doc)) }];
  }

  private sectionSplices(section: Section): Splice[] {
    const { value, items } = this.nodes[section];
    const out: Splice[] = [];
    const flow = this.root?.flow === true || value?.flow === true;
    for (const { name, node } of items) {
      const key = `${section}\u0000${name}`;
      const replacement = this.set.get(key);
      if (replacement)
        out.push({
          start: node.start,
          end: node.end,
          text: flow ? JSON.stringify(replacement) : this.block(replacement, this.column(node.start)),
        });
      else if (this.removed.has(key)) out.push(this.removal(value!, node));
    }
    const added = this.appended[section];
    if (added.length > 0) out.push(...this.appendSplices(section, added));
    return out;
  }

  /** New items after the last of their list, in the list's style; a list that is absent, null or `[]` is written. */
  private appendSplices(section: Section, added: NamedItem[]): Splice[] {
    const { key, value, items } = this.nodes[section];
    const root = this.root!;
    if (root.flow) {
      const json = added.map((i) => JSON.stringify(i)).join(', ');
      if (!key)
        return [
          {
            start: root.end - 1,
            end: root.end - 1,
            text: `${this.flowRootSeparator()}${JSON.stringify(section)}: [${json}]`,
            newKey: true,
          },
        ];
      if (value!.kind === 'sequence')
        return [{ start: value!.end - 1, end: value!.end - 1, text: `${items.length > 0 ? ', ' : ''}${json}` }];
      return [{ start: value!.start, end: value!.end, text: `[${json}]` }];
    }
    const rootColumn = this.column(root.start);
    const blockItems = (dash: number) =>
      added.map((i) => this.eol + ' '.repeat(dash) + '- ' + this.block(i, dash + 2)).join('');
    if (!key) {
      const at = this.lineEnd(root.end);
      return [
        {
          start: at,
          end: at,
          text: this.eol + ' '.repeat(rootColumn) + `${section}:` + blockItems(rootColumn),
          newKey: true,
        },
      ];
    }
    if (value!.kind === 'sequence' && !value!.flow) {
      // After the last entry that stays: the end of a removed one is gone with it (after the key when none stays).
      const kept = items.filter(({ name }) => !this.removed.has(`${section}\u0000${name}`));
      const at = kept.length > 0 ? this.lineEnd(kept.at(-1)!.node.end) : this.lineEnd(this.colonAfter(key));
      return [{ start: at, end: at, text: blockItems(this.column(value!.start)) }];
    }
    if (value!.kind === 'sequence' && items.length > 0) {
      return [
        { start: value!.end - 1, end: value!.end - 1, text: ', ' + added.map((i) => JSON.stringify(i)).join(', ') },
      ];
    }
    // `key:`, `key: null`, `key: []`: the value goes, the key's line (and its comment) stays, the items follow it.
    if (value!.kind !== 'empty' && value!.kind !== 'sequence' && !(value!.kind === 'scalar' && value!.value === null)) {
      throw this.refused(`"${section}" is not a list`);
    }
    const colon = this.colonAfter(key);
    const at = this.lineEnd(colon);
    const splices: Splice[] = [{ start: at, end: at, text: blockItems(this.column(key.start)) }];
    if (value!.kind !== 'empty') splices.push({ start: colon + 1, end: value!.end, text: '' });
    return splices;
  }

  /** An item's text removed: its whole lines in a block list, the item and one comma in a flow list. */
  private removal(list: YamlNode, node: YamlNode): Splice {
    if (list.flow) {
      const siblings = list.children;
      const i = siblings.indexOf(node);
      if (i + 1 < siblings.length) return { start: node.start, end: siblings[i + 1].start, text: '' };
      if (i > 0) return { start: siblings[i - 1].end, end: node.end, text: '' };
      return { start: node.start, end: node.end, text: '' };
    }
    const dash = this.text.lastIndexOf('-', node.start);
    const lineStart = this.text.lastIndexOf('\n', dash) + 1;
    if (dash < 0 || this.text.slice(lineStart, dash).trim() !== '')
      throw this.refused('an entry does not start its own line');
    // The whole last line, its line break included: `\r\n` in a CRLF file (leaving the `\n` would leave a bare-LF line).
    const end = this.lineEnd(node.end);
    const past = this.text.startsWith('\r\n', end) ? end + 2 : end + 1;
    return { start: lineStart, end: Math.min(this.text.length, past), text: '' };
  }

  private currentContextSplices(name: string): Splice[] {
    const pair = this.rootPair('current-context');
    const root = this.root!;
    if (root.flow) {
      if (!pair)
        return [
          {
            start: root.end - 1,
            end: root.end - 1,
            text: `${this.flowRootSeparator()}"current-context": ${JSON.stringify(name)}`,
            newKey: true,
          },
        ];
      if (pair.value.kind === 'empty')
        return [{ start: pair.value.start, end: pair.value.end, text: ` ${JSON.stringify(name)}` }];
      return [{ start: pair.value.start, end: pair.value.end, text: JSON.stringify(name) }];
    }
    const scalar = dumpKubeconfig({ v: name }).trim().slice(3);
    if (!pair) {
      const at = this.lineEnd(root.end);
      return [
        {
          start: at,
          end: at,
          text: this.eol + ' '.repeat(this.column(root.start)) + `current-context: ${scalar}`,
          newKey: true,
        },
      ];
    }
    if (pair.value.kind === 'empty') {
      const colon = this.colonAfter(pair.key);
      return [{ start: colon + 1, end: colon + 1, text: ` ${scalar}` }];
    }
    return [{ start: pair.value.start, end: pair.value.end, text: scalar }];
  }

  // ---- text helpers ----------------------------------------------------------------------------------------------

  /** An item as block YAML whose first line starts at `column` (the lines after it are indented to match). */
  private block(item: NamedItem, column: number): string {
    const lines = dumpKubeconfig(item).replace(/\n$/, '').split('\n');
    return lines.map((l, i) => (i === 0 || l === '' ? l : ' '.repeat(column) + l)).join(this.eol);
  }

  /** A dumped document in the file's line endings. */
  private lines(text: string): string {
    return this.eol === '\n' ? text : text.replace(/\n/g, this.eol);
  }

  private column(offset: number): number {
    return offset - (this.text.lastIndexOf('\n', offset - 1) + 1);
  }

  /** The end of the line that holds `offset` (before its line break), a trailing comment included. */
  private lineEnd(offset: number): number {
    const nl = this.text.indexOf('\n', offset);
    if (nl < 0) return this.text.length;
    return this.text[nl - 1] === '\r' ? nl - 1 : nl;
  }

  /** The `:` after a block mapping key. */
  private colonAfter(key: YamlNode): number {
    let p = key.end;
    while (this.text[p] === ' ' || this.text[p] === '\t') p++;
    if (this.text[p] !== ':') throw this.refused('a key is not followed by ":"');
    return p;
  }

  private refused(why: string): ConfigError {
    return new ConfigError(
      `${this.where}: cannot edit this file without touching entries fleet did not write (${why}); edit it by hand`,
    );
  }

  // ---- the check -------------------------------------------------------------------------------------------------

  /** Every field and entry not edited is deep-equal to what it was; every edited one is what was meant. */
  private verify(out: string): void {
    let after: KubeconfigFile;
    try {
      after = parseKubeconfig(out, this.where);
    } catch {
      throw this.refused('the spliced text does not parse');
    }
    const before = this.file.doc;
    const keys = new Set([...Object.keys(before), ...Object.keys(after.doc)]);
    for (const key of keys) {
      if ((SECTIONS as readonly string[]).includes(key)) continue;
      if (!this.root && (key === 'apiVersion' || key === 'kind') && before[key] === undefined) continue;
      if (key === 'current-context' && this.currentContext) {
        if (after.doc['current-context'] !== this.currentContext.name)
          throw this.refused('current-context was not set');
        continue;
      }
      if (!isDeepStrictEqual(before[key], after.doc[key])) throw this.refused(`"${key}" changed`);
    }
    for (const section of SECTIONS) {
      const expected: NamedItem[] = [];
      for (const item of (before[section] ?? []) as NamedItem[]) {
        const key = `${section}\u0000${item.name}`;
        if (this.removed.has(key)) continue;
        expected.push(this.set.get(key) ?? item);
      }
      expected.push(...this.appended[section]);
      const got = (after.doc[section] ?? []) as KubeconfigDoc[];
      // A list that was null or absent and stays empty reads the same either way.
      if (!isDeepStrictEqual(plain(got), plain(expected)))
        throw this.refused(`the ${section} list did not come out as meant`);
    }
  }
}

/**
 * A value as a kubeconfig reader sees it: undefined fields dropped (YAML has none; an exported object may). Key order is
 * kept for writing; isDeepStrictEqual does not count it.
 */
export function plain(value: unknown, options: { dropNull?: boolean } = {}): unknown {
  if (Array.isArray(value)) return value.map((v) => plain(v, options));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined && !(options.dropNull && v === null)) out[key] = plain(v, options);
  }
  return out;
}

/**
 * Whether two items are the same as a kubeconfig reader sees them: key order aside, and a field that is null the same
 * as one that is absent (client-go decodes them alike, and kubectl writes `env: null` when it rewrites the file).
 */
export function sameItem(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(plain(a, { dropNull: true }), plain(b, { dropNull: true }));
}

function itemName(node: YamlNode): string {
  const v = node.value as { name?: unknown } | null;
  return typeof v?.name === 'string' ? v.name : '';
}
