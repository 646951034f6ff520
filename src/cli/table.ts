import { createRequire } from 'node:module';
import type { ChalkInstance } from 'chalk';

import { forTerminal } from './terminal.js';
import { type Shrink, elideMiddle, fitWidths, visibleWidth } from './width.js';

/** A column of a kubectl-style table. `wide` columns appear only with `-o wide`. */
export interface Column<Row> {
  header: string;
  get: (row: Row) => string | undefined;
  wide?: boolean;
  /** Colour for a cell, applied only when colour is on. */
  color?: (row: Row, chalk: ChalkInstance) => ((s: string) => string) | undefined;
  /** The cell is a cluster's full name: shown by its short name where the run has one (renderTable's shortNames). */
  cluster?: boolean;
  /** The cell lists clusters: their full names, each shown by its short name as `cluster` cells are, then joined. */
  clusterList?: { names: (row: Row) => string[]; join: (shown: string[]) => string };
  /**
   * How the column gives way when the default table is wider than the terminal (src/cli/width.ts): `first` for free
   * text (reasons, messages, sources, servers), `never` for a status or an answer; cluster columns default to `last`,
   * the others to `normal`.
   */
  shrink?: Shrink;
}

const GAP = 3;
// Printable ASCII only: one character is one terminal column, so the width is the length.
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * Borderless, left-aligned, three spaces between columns, upper-case headers: what kubectl users read every day.
 * Written directly in one pass over the cells (linear in rows): cli-table3's layout spent most of a 2,000-row table's
 * time checking cell spans that this table never has. Text it cannot measure as simply (wide or combining characters)
 * still goes through cli-table3, so the output is the same either way; line breaks and tabs never reach either path,
 * being escaped (below).
 *
 * Every cell is data (a username, a server's message, a context name) and is escaped here, the one place for tables
 * (src/cli/terminal.ts: scrubbed, then control characters written visibly), before it is measured and before its
 * colour is applied: a CR or LF in a cell cannot start a row of its own, an escape sequence cannot reach the terminal,
 * and chalk's own sequences, added after, are the only ones in the output. The line breaks between rows are the
 * table's layout and are the only line breaks in it.
 *
 * Cluster columns show a file cluster by the short name the run's providers accept for it (`shortNames`, full name to
 * short, from ClusterProvider.shortNames): the one place a table decides how a cluster is named. `/abs/path+context`
 * in every row made `-o wide` run past 200 columns (issue 41); -o json, yaml and name keep the full name, which is the
 * identifier, and `-o wide` still shows the file in its SOURCE column.
 */
export function renderTable<Row>(
  rows: Row[],
  columns: Column<Row>[],
  options: { wide: boolean; chalk: ChalkInstance; shortNames?: ReadonlyMap<string, string>; maxWidth?: number },
): string {
  const cols = columns.filter((c) => options.wide || !c.wide);
  const head = cols.map((c) => forTerminal(c.header.toUpperCase()));
  const colour = options.chalk.level > 0;
  const texts: string[][] = [];
  const paints: Array<Array<((s: string) => string) | undefined>> = [];
  let plain = head.every((h) => PLAIN.test(h));
  for (const row of rows) {
    const cells: string[] = [];
    for (const c of cols) {
      const short = (name: string) => options.shortNames?.get(name) ?? name;
      const full = c.get(row) ?? '';
      const text =
        c.clusterList && options.shortNames
          ? c.clusterList.join(c.clusterList.names(row).map(short))
          : c.cluster
            ? short(full)
            : full;
      // Printable ASCII has nothing to escape: the one test every cell needs for the layout also spares it the escaping
      // check, so a table of ordinary names costs what it did before escaping existed.
      if (PLAIN.test(text)) cells.push(text);
      else {
        const shown = forTerminal(text);
        if (plain && !PLAIN.test(shown)) plain = false;
        cells.push(shown);
      }
    }
    texts.push(cells);
    paints.push(colour ? cols.map((c) => c.color?.(row, options.chalk)) : []);
  }
  if (options.maxWidth !== undefined && cols.length > 0) fit(texts, head, cols, options.maxWidth, plain);
  if (!plain || cols.length === 0) return withCliTable3(head, texts, paints);
  const widths = head.map((h) => h.length);
  for (const cells of texts)
    for (let k = 0; k < cells.length; k++) if (cells[k].length > widths[k]) widths[k] = cells[k].length;
  const line = (cells: string[], paint?: Array<((s: string) => string) | undefined>) => {
    let out = '';
    for (let k = 0; k < cells.length; k++) {
      const text = cells[k];
      const p = paint?.[k];
      out += (p ? p(text) : text) + ' '.repeat(widths[k] + GAP - text.length);
    }
    return out.trimEnd();
  };
  const lines = [line(head)];
  for (let i = 0; i < texts.length; i++) lines.push(line(texts[i], paints[i]));
  return lines.join('\n');
}

/**
 * The width policy, applied here once for every table (src/cli/width.ts): when the table is wider than `maxWidth`,
 * the columns give way in their `shrink` order and each cell longer than its column is cut in the middle with one `…`.
 * Only the default table is fitted (render() passes no width for `-o wide`), so every value is whole in `-o wide`, JSON,
 * YAML and `-o name`. The `…` is one column wide and one UTF-16 unit long, so the plain layout below still measures
 * by length.
 */
function fit<Row>(texts: string[][], head: string[], cols: Column<Row>[], maxWidth: number, plain: boolean): void {
  const measure = plain ? (s: string) => s.length : visibleWidth;
  const natural = head.map(measure);
  for (const cells of texts)
    for (let k = 0; k < cells.length; k++) {
      const w = measure(cells[k]);
      if (w > natural[k]) natural[k] = w;
    }
  const widths = fitWidths(
    natural,
    cols.map((c, k) => ({
      header: measure(head[k]),
      shrink: c.shrink ?? (c.cluster || c.clusterList ? 'last' : 'normal'),
    })),
    maxWidth,
    GAP,
  );
  for (let k = 0; k < cols.length; k++) {
    if (widths[k] >= natural[k]) continue;
    for (const cells of texts) cells[k] = elideMiddle(cells[k], widths[k]);
  }
}

const BLANK = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '',
};

type CliTable = new (options: object) => { push: (row: string[]) => void; toString: () => string };

/** The same table laid out by cli-table3 (loaded only when needed: most tables never are). */
export function withCliTable3(
  head: string[],
  texts: string[][],
  paints: Array<Array<((s: string) => string) | undefined>>,
): string {
  const Table = createRequire(import.meta.url)('cli-table3') as CliTable;
  const table = new Table({
    head,
    chars: BLANK,
    // cli-table3 colours headers and borders even when piped unless told not to.
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': GAP, compact: true },
    wordWrap: false,
  });
  texts.forEach((cells, i) => table.push(cells.map((t, k) => (paints[i]?.[k] ? paints[i][k](t) : t))));
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}
