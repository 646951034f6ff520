// Generated kubeconfig files through fleet's text edits (src/kubeconfig/edit.ts, which `export --merge-into` and
// `kubeconfig prune` use), checked against client-go's own loader (clientcmd.Load at kubectl 1.35's version,
// test/kubeconfig-oracle) and against the bytes: files in LF or CRLF, with or without a UTF-8 BOM, lists indented or
// not, entries in block, flow or kubectl's sorted layout, comments between and after entries, some entries removed,
// some replaced, new ones appended. Every case must come out as client-go reads the input with exactly those changes,
// keep its line ends (no bare LF in a CRLF file) and its BOM, and, when entries are only removed, be the input with
// exactly those entries' lines taken out. Issue 38, item 6 and 7: the class "a prune or merge changes bytes it did not
// mean to" generated instead of spelled. One oracle process answers every case (JSON lines on stdin).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { KubeconfigEdit, type NamedItem, type Section } from '../../src/kubeconfig/edit.js';
import { buildScriptOutput } from '../support/binaries.js';

const ORACLE = buildScriptOutput(fileURLToPath(new URL('../kubeconfig-oracle/build.sh', import.meta.url)));
const RUNS = 10_000;

interface Entry {
  section: Section;
  name: string;
  /** The value client-go reads: a cluster's server, a user's token, a context's cluster. */
  value: string;
  namespace?: string;
}
interface Chunk {
  lines: string[];
  entry?: Entry;
}
interface Case {
  eol: '\n' | '\r\n';
  bom: boolean;
  finalNewline: boolean;
  chunks: Chunk[];
  remove: Entry[];
  replace: Entry[];
  append: Entry[];
}

const KEY: Record<Section, string> = { clusters: 'cluster', users: 'user', contexts: 'context' };
const FIELD: Record<Section, string> = { clusters: 'server', users: 'token', contexts: 'cluster' };

/** An entry as a list item's lines, in one of the layouts people and tools write. */
function entryLines(e: Entry, indent: number, layout: 'block' | 'flow' | 'sorted', comment: string): string[] {
  const sp = ' '.repeat(indent);
  const ns = e.namespace ? `, namespace: ${e.namespace}` : '';
  if (layout === 'flow')
    return [`${sp}- {name: ${e.name}, ${KEY[e.section]}: {${FIELD[e.section]}: "${e.value}"${ns}}}${comment}`];
  const body = [`${FIELD[e.section]}: ${e.value}`, ...(e.namespace ? [`namespace: ${e.namespace}`] : [])];
  if (layout === 'sorted')
    return [`${sp}- ${KEY[e.section]}:`, ...body.map((l) => `${sp}    ${l}`), `${sp}  name: ${e.name}${comment}`];
  return [
    `${sp}- name: ${e.name}${comment}`,
    `${sp}  ${KEY[e.section]}:`,
    ...body.map((l, i, all) => `${sp}    ${l}${i === all.length - 1 ? comment : ''}`),
  ];
}

const SECTIONS: Section[] = ['clusters', 'users', 'contexts'];
// Names and values YAML 1.1 (client-go) and 1.2 (js-yaml) read alike: a letter prefix, never y/n/on/off.
const word = fc.stringMatching(/^[a-z0-9]{1,5}$/);

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    eol: fc.constantFrom('\n' as const, '\r\n' as const),
    bom: fc.boolean(),
    finalNewline: fc.boolean(),
    header: fc.boolean(),
    indent: fc.constantFrom(0, 2),
    order: fc.shuffledSubarray(SECTIONS, { minLength: 3, maxLength: 3 }),
    lists: fc.tuple(
      ...SECTIONS.map(() =>
        fc.uniqueArray(
          fc.record({
            name: word,
            value: word,
            ns: fc.option(word, { nil: undefined }),
            layout: fc.constantFrom('block' as const, 'flow' as const, 'sorted' as const),
            comment: fc.boolean(),
            between: fc.boolean(),
          }),
          {
            maxLength: 5,
            selector: (r) => r.name,
          },
        ),
      ),
    ),
    current: fc.boolean(),
    picks: fc.array(fc.tuple(fc.nat(), fc.constantFrom('remove' as const, 'replace' as const, 'keep' as const)), {
      maxLength: 15,
    }),
    appended: fc.tuple(fc.nat(2), fc.nat(2), fc.nat(2)),
  })
  .map((g) => {
    const chunks: Chunk[] = [];
    if (g.header) chunks.push({ lines: ['apiVersion: v1', 'kind: Config'] });
    for (const section of g.order) {
      const i = SECTIONS.indexOf(section);
      const list = g.lists[i];
      if (list.length === 0) {
        chunks.push({ lines: [`${section}: []`] });
        continue;
      }
      chunks.push({ lines: [`${section}:`] });
      for (const r of list) {
        const entry: Entry = {
          section,
          name: `${section[0]}-${r.name}`,
          value: `v-${r.value}`,
          ...(section === 'contexts' && r.ns ? { namespace: `ns-${r.ns}` } : {}),
        };
        if (r.between) chunks.push({ lines: [`${' '.repeat(g.indent)}# between`] });
        chunks.push({ lines: entryLines(entry, g.indent, r.layout, r.comment ? '   # mine' : ''), entry });
      }
    }
    // Never an entry at the end of the text: the removal of a last line without a line break is its own rule.
    chunks.push({ lines: [g.current ? 'current-context: c-x   # kept' : '# the end'] });
    const entries = chunks.flatMap((c) => (c.entry ? [c.entry] : []));
    const remove: Entry[] = [];
    const replace: Entry[] = [];
    const done = new Set<Entry>();
    for (const [n, what] of g.picks) {
      const e = entries[n % Math.max(1, entries.length)];
      if (!e || done.has(e) || what === 'keep') continue;
      done.add(e);
      (what === 'remove' ? remove : replace).push(what === 'remove' ? e : { ...e, value: `${e.value}-new` });
    }
    const append = SECTIONS.flatMap((section, i) =>
      Array.from({ length: g.appended[i] }, (_, k): Entry => ({ section, name: `fleet-new-${k}`, value: `new-${k}` })),
    );
    return { eol: g.eol, bom: g.bom, finalNewline: g.finalNewline, chunks, remove, replace, append };
  });

const textOf = (c: Case, chunks: Chunk[]) =>
  (c.bom ? '\uFEFF' : '') + chunks.flatMap((k) => k.lines).join(c.eol) + (c.finalNewline ? c.eol : '');

function item(e: Entry): NamedItem {
  return {
    name: e.name,
    [KEY[e.section]]: { [FIELD[e.section]]: e.value, ...(e.namespace ? { namespace: e.namespace } : {}) },
  };
}

interface Loaded {
  error?: string;
  clusters?: Record<string, string>;
  users?: Record<string, string>;
  contexts?: Record<string, { cluster: string; user: string; namespace: string }>;
  current?: string;
}

/** client-go's reading of every text, one process for all. */
function oracle(texts: string[]): Loaded[] {
  const out = execFileSync(ORACLE, {
    input: texts.map((text) => JSON.stringify({ text })).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  // Go's omitempty leaves out an empty map: read as empty here.
  const answers = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Loaded)
    .map((a) =>
      a.error
        ? a
        : { clusters: a.clusters ?? {}, users: a.users ?? {}, contexts: a.contexts ?? {}, current: a.current },
    );
  assert.equal(answers.length, texts.length);
  return answers;
}

/** What client-go should read after the edits: its reading of the input, changed as the case says. */
function expected(before: Loaded, c: Case): Loaded {
  const after: Loaded = {
    clusters: { ...before.clusters },
    users: { ...before.users },
    contexts: { ...before.contexts },
    current: before.current,
  };
  const set = (e: Entry) => {
    if (e.section === 'clusters') after.clusters![e.name] = e.value;
    else if (e.section === 'users') after.users![e.name] = e.value;
    else after.contexts![e.name] = { cluster: e.value, user: '', namespace: e.namespace ?? '' };
  };
  for (const e of c.remove) delete (after[e.section] as Record<string, unknown>)[e.name];
  for (const e of [...c.replace, ...c.append]) set(e);
  return after;
}

describe('kubeconfig edits over generated files, against client-go', () => {
  it(`${RUNS} files: client-go reads exactly the edits; line ends, BOM and every other line kept`, () => {
    const started = Date.now();
    const cases: Array<{ c: Case; input: string; output: string }> = [];
    fc.assert(
      fc.property(caseArb, (c) => {
        const input = textOf(c, c.chunks);
        const edit = new KubeconfigEdit(input, 'generated');
        for (const e of c.remove) edit.remove(e.section, e.name);
        for (const e of [...c.replace, ...c.append]) edit.put(e.section, item(e));
        const output = edit.result();
        // Bytes: the BOM as it was, once; no bare LF in a CRLF file; only-removals take out exactly those lines.
        assert.equal(output.startsWith('\uFEFF'), c.bom);
        assert.equal(output.indexOf('\uFEFF', 1), -1);
        if (c.eol === '\r\n') assert.doesNotMatch(output, /(^|[^\r])\n/);
        if (c.replace.length === 0 && c.append.length === 0) {
          assert.equal(
            output,
            textOf(
              c,
              c.chunks.filter((k) => !k.entry || !c.remove.includes(k.entry)),
            ),
          );
        } else {
          // Everything before the first place an edit touches is the input's, byte for byte: an entry removed or
          // replaced, an empty list (`[]`) written, or the line after a list's last entry, where new ones go.
          const changed = (e: Entry) =>
            c.remove.includes(e) || c.replace.some((r) => r.name === e.name && r.section === e.section);
          const touched = c.chunks.flatMap((k, i) => (k.entry && changed(k.entry) ? [i] : []));
          for (const section of new Set(c.append.map((a) => a.section))) {
            const header = c.chunks.findIndex((k) => k.lines[0] === `${section}:` || k.lines[0] === `${section}: []`);
            const kept = c.chunks
              .map((k, i) => (k.entry?.section === section && !c.remove.includes(k.entry) ? i : -1))
              .filter((i) => i >= 0);
            touched.push(
              c.chunks[header].lines[0].endsWith('[]') ? header : kept.length > 0 ? kept.at(-1)! + 1 : header + 1,
            );
          }
          const prefix = textOf(c, c.chunks.slice(0, Math.min(...touched))).replace(/(\r?\n)?$/, '');
          assert.ok(output.startsWith(prefix), 'bytes before the first edit changed');
        }
        cases.push({ c, input, output });
      }),
      { numRuns: RUNS },
    );
    const generatedMs = Date.now() - started;
    const loaded = oracle(cases.flatMap(({ input, output }) => [input, output]));
    for (const [i, { c, input, output }] of cases.entries()) {
      const before = loaded[2 * i];
      const after = loaded[2 * i + 1];
      assert.equal(
        before.error,
        undefined,
        `client-go refused the generated input: ${before.error}\n${JSON.stringify(input)}`,
      );
      assert.deepEqual(
        after,
        expected(before, c),
        `case ${i}: client-go reads the edited file differently\ninput: ${JSON.stringify(input)}\noutput: ${JSON.stringify(output)}`,
      );
    }
    console.log(
      `# ${cases.length} cases: generated and edited in ${generatedMs} ms, client-go oracle and comparison in ${Date.now() - started - generatedMs} ms`,
    );
  });
});
