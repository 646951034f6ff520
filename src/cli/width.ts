import stringWidth from 'string-width';

/**
 * The width fleet lays human output out for, the one rule for tables and help: `COLUMNS` when it holds a positive
 * whole number (as less, ls, Python and git read it; it also pins a width for a script or a test), else the terminal's
 * width when stdout is a terminal, else none: a table piped into grep or a file keeps every value whole (help, which
 * must wrap somewhere, then uses 80, as oclif does: `helpWidth`).
 */
export function outputWidth(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): number | undefined {
  const fromEnv = env.COLUMNS?.trim();
  if (fromEnv && /^\d+$/.test(fromEnv) && Number(fromEnv) > 0) return Number(fromEnv);
  if (stdout.isTTY && stdout.columns && stdout.columns > 0) return stdout.columns;
  return undefined;
}

/**
 * The width help is wrapped to: oclif's own `OCLIF_COLUMNS` first (what it always honoured), then `outputWidth`, else
 * 80; at least 40, as oclif's own rule (narrower, every description would be a column of single words).
 */
export function helpWidth(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): number {
  const oclif = Number.parseInt(env.OCLIF_COLUMNS ?? '', 10);
  const width = oclif > 0 ? oclif : (outputWidth(env, stdout) ?? 80);
  return Math.max(width, 40);
}

// Printable ASCII only: one character is one terminal column, so the width is the length.
const PLAIN = /^[\x20-\x7e]*$/;

/** Columns the text takes on a terminal: wide (CJK, emoji) characters count 2, combining marks 0, ANSI colour codes 0. */
export function visibleWidth(text: string): number {
  return PLAIN.test(text) ? text.length : stringWidth(text);
}

const ELLIPSIS = '…';
let segmenter: Intl.Segmenter | undefined;
const graphemes = (text: string): string[] =>
  [...(segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })).segment(text)].map((s) => s.segment);

/**
 * The text in at most `width` columns, cut in the middle with one `…` so that both ends stay readable (cluster names,
 * servers and paths often differ only at their end): `prod-eu-west-1…cluster-7`. Never splits a character (a wide one,
 * or a letter and its combining marks); text that fits comes back as it is.
 */
export function elideMiddle(text: string, width: number): string {
  if (visibleWidth(text) <= width) return text;
  if (width <= 1) return width === 1 ? ELLIPSIS : '';
  const room = width - 1;
  const headRoom = Math.ceil(room / 2);
  if (PLAIN.test(text)) return text.slice(0, headRoom) + ELLIPSIS + text.slice(text.length - (room - headRoom));
  const parts = graphemes(text);
  let head = '';
  let used = 0;
  let i = 0;
  for (; i < parts.length; i++) {
    const w = stringWidth(parts[i]);
    if (used + w > headRoom) break;
    head += parts[i];
    used += w;
  }
  let tail = '';
  let left = room - used;
  for (let j = parts.length - 1; j >= i; j--) {
    const w = stringWidth(parts[j]);
    if (w > left) break;
    tail = parts[j] + tail;
    left -= w;
  }
  return head + ELLIPSIS + tail;
}

/**
 * How a column gives way when a table is wider than the terminal. `first`: free text (reasons, messages, sources,
 * servers, rule lists), shortened before anything else; `normal` (the default): other values; `last`: names (cluster
 * columns), shortened only when nothing else can be; `never`: a status or an answer, which an ellipsis would make
 * ambiguous.
 */
export type Shrink = 'first' | 'normal' | 'last' | 'never';
const ORDER: Shrink[] = ['first', 'normal', 'last'];

/** The narrowest a shrinking column becomes: its header, and at least this many columns of its values. */
export const MIN_CELL = 10;

/**
 * The widths of a table's columns that fit `limit` columns (`gap` spaces between columns), each at most its natural
 * width: the columns that shrink `first` give way, the widest first (each is cut to a common width as far as needed,
 * not below its header or MIN_CELL), then the `normal` ones, then the `last`; `never` columns keep their width. When
 * even that does not fit, the table is as narrow as those floors allow and is wider than `limit`.
 */
export function fitWidths(
  natural: number[],
  columns: Array<{ header: number; shrink: Shrink }>,
  limit: number,
  gap: number,
): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((a, b) => a + b, 0) + gap * Math.max(0, widths.length - 1);
  for (const tier of ORDER) {
    let excess = total() - limit;
    if (excess <= 0) break;
    const members = columns.map((c, k) => k).filter((k) => columns[k].shrink === tier);
    const floor = (k: number) => Math.min(natural[k], Math.max(columns[k].header, MIN_CELL));
    // Lower a common cap over the tier's columns (water-filling from the top) until the excess is gone or every column
    // is at its floor.
    while (excess > 0) {
      const open = members.filter((k) => widths[k] > floor(k));
      if (open.length === 0) break;
      const top = Math.max(...open.map((k) => widths[k]));
      const atTop = open.filter((k) => widths[k] === top);
      const next = Math.max(
        ...open.filter((k) => widths[k] < top).map((k) => widths[k]),
        ...atTop.map((k) => floor(k)),
      );
      // Lowering every column at the top to `next` saves (top - next) each; take only what is needed.
      const step = Math.min(top - next, Math.ceil(excess / atTop.length));
      for (const k of atTop) {
        const cut = Math.min(step, widths[k] - floor(k), excess);
        widths[k] -= cut;
        excess -= cut;
      }
    }
  }
  return widths;
}
