import type { Check, CheckStatus } from '../base/checks.js';
import type { Column } from './table.js';

/**
 * Tables of checks, for commands that judge several subjects (clusters verify; later wi doctor): one row per subject,
 * one column per check holding its outcome, and one detail line per failed or warning check for below the table.
 */
export interface CheckRow {
  subject: string;
  checks?: Check[];
}

const WORD: Record<CheckStatus, string> = { pass: 'pass', fail: 'FAIL', warn: 'warn', skip: '-' };

/** `subjects`: what the rows are; rows of clusters name them as every table does (short names, renderTable). */
export function checkColumns<Row extends CheckRow>(
  rows: Row[],
  first: string,
  subjects: 'clusters' | 'other' = 'other',
): Column<Row>[] {
  const names = rows.find((r) => r.checks && r.checks.length > 0)?.checks?.map((c) => c.name) ?? [];
  return [
    { header: first, get: (r) => r.subject, cluster: subjects === 'clusters' },
    ...names.map((name): Column<Row> => ({
      header: name,
      get: (r) => {
        const c = r.checks?.find((x) => x.name === name);
        return c ? WORD[c.status] : '';
      },
      color: (r, k) => {
        const status = r.checks?.find((x) => x.name === name)?.status;
        return status === 'fail' ? k.red : status === 'warn' ? k.yellow : status === 'pass' ? k.green : undefined;
      },
    })),
  ];
}

/** `subject: check (fail): message; fix: ...` for every failed and warning check. */
export function checkDetails(rows: CheckRow[], options: { strict?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const row of rows) {
    for (const c of row.checks ?? []) {
      if (c.status !== 'fail' && c.status !== 'warn') continue;
      const label = c.status === 'warn' && options.strict ? 'warn, failing with --strict' : c.status;
      out.push(`${row.subject}: ${c.name} (${label}): ${c.message}${c.fix ? `; fix: ${c.fix}` : ''}`);
    }
  }
  return out;
}
