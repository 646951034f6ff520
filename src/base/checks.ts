/**
 * The one shape of a check, shared by every command that judges something (clusters verify, wi doctor, wi test): a
 * name, an outcome, what was found, and how to fix it. Renderers (table, JSON, JUnit, GitHub annotations) read only this.
 */
export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip';

export interface Check {
  /** Stable identifier, kebab-case (e.g. `reachable`, `tls-verified`, `issuer-matches`). */
  name: string;
  status: CheckStatus;
  /** What was found, one line. */
  message: string;
  /** What to do about it; present for fail and warn. */
  fix?: string;
}

const SEVERITY: Record<CheckStatus, number> = { skip: 0, pass: 1, warn: 2, fail: 3 };

/** The worst outcome of a list of checks (`skip` when empty). */
export function worstStatus(checks: readonly Check[]): CheckStatus {
  return checks.reduce<CheckStatus>((worst, c) => (SEVERITY[c.status] > SEVERITY[worst] ? c.status : worst), 'skip');
}

export function countByStatus(checks: readonly Check[]): Record<CheckStatus, number> {
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const c of checks) counts[c.status]++;
  return counts;
}
