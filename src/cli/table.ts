import Table from 'cli-table3'
import type {ChalkInstance} from 'chalk'

/** A column of a kubectl-style table. `wide` columns appear only with `-o wide`. */
export interface Column<Row> {
  header: string
  get: (row: Row) => string | undefined
  wide?: boolean
  /** Colour for a cell, applied only when colour is on. */
  color?: (row: Row, chalk: ChalkInstance) => ((s: string) => string) | undefined
}

const BLANK = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '',
}

/** Borderless, left-aligned, three spaces between columns, upper-case headers: what kubectl users read every day. */
export function renderTable<Row>(rows: Row[], columns: Column<Row>[], options: {wide: boolean; chalk: ChalkInstance}): string {
  const cols = columns.filter((c) => options.wide || !c.wide)
  const table = new Table({
    head: cols.map((c) => c.header.toUpperCase()),
    chars: BLANK,
    // cli-table3 colours headers and borders even when piped unless told not to.
    style: {head: [], border: [], 'padding-left': 0, 'padding-right': 3, compact: true},
    wordWrap: false,
  })
  for (const row of rows) {
    table.push(
      cols.map((c) => {
        const text = c.get(row) ?? ''
        const paint = options.chalk.level > 0 ? c.color?.(row, options.chalk) : undefined
        return paint ? paint(text) : text
      }),
    )
  }
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
}
