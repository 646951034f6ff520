import { type RiskFinding, assessRules } from '../access/risk.js';
import { FleetError } from '../base/errors.js';
import type { PolicyRule } from './rules-file.js';

/**
 * The grant is checked with the same risk rules `fleet auth rules` reports, before anything is created. Reading Secrets
 * is refused only cluster-wide: a per-namespace secrets reader is a deliberate, bounded grant (the `secrets-reader`
 * preset exists for it). Everything else the rules flag is refused at any scope unless --allow-risky.
 */
const NAMESPACE_BOUNDED = new Set(['read-secrets']);

export interface RiskVerdict {
  findings: RiskFinding[];
  /** The findings that block the grant (empty when allowed). */
  blocking: RiskFinding[];
}

export function assessGrant(rules: PolicyRule[], clusterWide: boolean): RiskVerdict {
  const resourceRules = rules
    .filter((r) => !r.nonResourceURLs?.length)
    .map((r) => ({
      verbs: r.verbs,
      apiGroups: r.apiGroups ?? [],
      resources: r.resources ?? [],
      resourceNames: r.resourceNames ?? [],
    }));
  const findings = assessRules(resourceRules);
  const blocking = findings.filter((f) => clusterWide || !NAMESPACE_BOUNDED.has(f.code));
  return { findings, blocking };
}

export function refuseRisky(verdict: RiskVerdict, what: string): void {
  if (verdict.blocking.length === 0) return;
  const f = verdict.blocking[0];
  const more =
    verdict.blocking.length > 1
      ? ` (and ${verdict.blocking.length - 1} more: ${[...new Set(verdict.blocking.slice(1).map((x) => x.code))].join(', ')})`
      : '';
  throw new FleetError(
    'usage',
    `refusing ${what}: risk rule "${f.code}" (rule ${f.rule + 1}): ${f.message}${more}; pass --allow-risky to grant it anyway`,
  );
}
