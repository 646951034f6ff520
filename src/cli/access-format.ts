import type { ErrorInfo } from '../base/errors.js';
import type { Column } from './table.js';

/** Table helpers shared by the auth commands; the JSON output never goes through here. */

/** kubectl's list style in `auth can-i --list`: "[get list watch]". */
export const bracketed = (xs: string[]): string => `[${xs.join(' ')}]`;

export interface PerCluster {
  cluster: string;
  ok: boolean;
  error?: ErrorInfo;
}

/** An ERROR column (the kind of failure), present only when some cluster failed, as kubectl adds columns only when useful. */
export function errorColumn<Row>(rows: Row[], item: (row: Row) => PerCluster | undefined): Column<Row>[] {
  if (!rows.some((r) => item(r)?.error)) return [];
  return [
    { header: 'error', get: (r) => item(r)?.error?.kind ?? '', color: (r, k) => (item(r)?.error ? k.red : undefined) },
  ];
}
