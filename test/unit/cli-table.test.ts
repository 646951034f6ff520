// The table renderer writes kubectl-style tables itself (linear in rows); cli-table3 laid them out before. Existing e2e
// tests assert tables byte for byte, and these check the two layouts agree on the inputs commands produce: plain ASCII,
// empty cells, colour, wide columns; and, written out, how text the direct path cannot measure (wide characters, line
// breaks) is laid out. Cells are escaped for the terminal before layout (src/cli/terminal.ts; the
// hostile cases are in terminal-escape.test.ts), so the reference lays out the escaped text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type Column, renderTable, withCliTable3 } from '../../src/cli/table.js';
import { makeChalk } from '../../src/cli/color.js';
import { forTerminal } from '../../src/cli/terminal.js';

type Row = string[];

function columns(n: number, coloured: boolean): Column<Row>[] {
  return Array.from({ length: n }, (_, k) => ({
    header: `col${k}`.repeat(1 + (k % 3)),
    get: (r: Row) => (r[k] === '' && k % 2 ? undefined : r[k]),
    wide: k === n - 1 && n > 2,
    color: coloured ? (r: Row, c) => (r[k].length % 2 ? c.yellow : k % 3 === 0 ? c.red.bold : undefined) : undefined,
  }));
}

/** What cli-table3 draws for the same columns and rows, painted the same way. */
function reference(rows: Row[], cols: Column<Row>[], wide: boolean, chalk: ReturnType<typeof makeChalk>): string {
  const shown = cols.filter((c) => wide || !c.wide);
  return withCliTable3(
    shown.map((c) => c.header.toUpperCase()),
    rows.map((r) => shown.map((c) => forTerminal(c.get(r) ?? ''))),
    rows.map((r) => shown.map((c) => (chalk.level > 0 ? c.color?.(r, chalk) : undefined))),
  );
}

let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const word = (alphabet: string) => Array.from({ length: rand(14) }, () => alphabet[rand(alphabet.length)]).join('');
const ASCII = 'abcXYZ019-_:./ =,@';

describe('renderTable', () => {
  it('matches cli-table3 byte for byte on random ASCII tables, with and without colour, wide or not', () => {
    for (let t = 0; t < 300; t++) {
      const ncols = 1 + rand(6);
      const rows = Array.from({ length: rand(12) }, () => Array.from({ length: ncols }, () => word(ASCII)));
      const chalk = makeChalk(t % 2 === 0);
      const cols = columns(ncols, t % 3 !== 0);
      for (const wide of [false, true]) {
        assert.equal(
          renderTable(rows, cols, { wide, chalk }),
          reference(rows, cols, wide, chalk),
          `table ${t} wide=${wide}`,
        );
      }
    }
  });

  it('pads by the width on screen: wide characters count two columns, line breaks and tabs are escaped', () => {
    // Written out, not compared with cli-table3: a non-ASCII table is laid out by withCliTable3 itself, so a comparison
    // with it could not fail. A CJK character and an emoji take two columns, é one; the third column shows the padding.
    const chalk = makeChalk(false);
    const cols: Column<Row>[] = ['name', 'value', 'x'].map((header, k) => ({ header, get: (r: Row) => r[k] }));
    const table = (odd: string) =>
      renderTable(
        [
          ['a', odd, 'z'],
          ['bb', 'c', 'z'],
        ],
        cols,
        { wide: true, chalk },
      );
    const cases: Array<[string, string[]]> = [
      ['名前名前名前', ['NAME   VALUE          X', 'a      名前名前名前   z', 'bb     c              z']],
      ['emoji 🚀 here', ['NAME   VALUE           X', 'a      emoji 🚀 here   z', 'bb     c               z']],
      ['two\nlines', ['NAME   VALUE        X', 'a      two\\nlines   z', 'bb     c            z']],
      ['tab\there', ['NAME   VALUE       X', 'a      tab\\there   z', 'bb     c           z']],
      ['éé', ['NAME   VALUE   X', 'a      éé      z', 'bb     c       z']],
    ];
    for (const [odd, lines] of cases) assert.equal(table(odd), lines.join('\n'), JSON.stringify(odd));
  });

  it('pads by the width of the text, not of its colour codes, and trims the end of every line', () => {
    const chalk = makeChalk(true);
    const out = renderTable(
      [['x', 'y']],
      [
        { header: 'a', get: (r: Row) => r[0], color: (_r, c) => c.red },
        { header: 'bb', get: (r: Row) => r[1] },
      ],
      { wide: false, chalk },
    );
    assert.equal(out, `A   BB\n${chalk.red('x')}   y`);
  });
});
