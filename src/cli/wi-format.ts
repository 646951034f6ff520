import { Flags } from '@oclif/core';

import type { Check } from '../base/checks.js';
import type { ClusterItem } from '../fleet/items.js';
import type { ProbeResult } from '../workload-identity/probe.js';
import type { CheckSuite } from '../verify/junit.js';
import { fleetFlags } from './flags.js';
import type { Column } from './table.js';

/** Flags and table shapes shared by the `wi` commands; their logic lives in src/workload-identity/. */
export const wiFlags = {
  hub: Flags.string({
    description:
      'The cluster whose ServiceAccount issues the token (a cluster name fleet knows). Without --hub and --service-account, one --target whose user runs fleet wi token is checked as that plugin would run: its ServiceAccount, audience and hub.',
  }),
  'service-account': Flags.string({ description: 'The hub ServiceAccount, NAMESPACE/NAME (required with --hub).' }),
  target: Flags.string({
    description: 'The cluster that should accept the token (repeatable).',
    multiple: true,
    multipleNonGreedy: true,
  }),
  all: Flags.boolean({
    char: 'A',
    description: 'Every cluster the providers list except the hub.',
    exclusive: ['target'],
  }),
  audience: Flags.string({
    description:
      "Audience to request (default: the target's server URL exactly as written in its kubeconfig, as Flux does).",
  }),
  'expect-user': Flags.string({
    description: 'The username the target must map the token to, e.g. hub:system:serviceaccount:NS:NAME.',
  }),
  'can-i': Flags.string({
    description:
      'Something the identity must be allowed on the target: "VERB RESOURCE [NAME] [-n NAMESPACE]" (repeatable).',
    multiple: true,
    multipleNonGreedy: true,
  }),
  expiration: Flags.string({
    description: "Lifetime of the requested token (the API server's minimum is 10m).",
    default: '10m',
  }),
  'token-file': Flags.string({
    description: 'Use the token in this file (e.g. one a workload has) instead of requesting one.',
  }),
  junit: Flags.string({
    description: 'Write a JUnit XML report to this file (one testsuite per target, one testcase per check).',
  }),
  // The probe of each target runs through the fleet runner, which holds this limit as for every fleet-wide command.
  'cluster-timeout': fleetFlags['cluster-timeout'],
};

/** One table row: a check of one target, from the test itself or from the diagnosis that follows a failure. */
export interface CheckRow {
  cluster: string;
  check: Check;
  diagnosis?: boolean;
}

export function checkRows(items: Array<ClusterItem<ProbeResult>>): CheckRow[] {
  const rows: CheckRow[] = [];
  for (const item of items) {
    if (item.error)
      rows.push({ cluster: item.cluster, check: { name: 'connect', status: 'fail', message: item.error.message } });
    for (const c of item.checks ?? []) rows.push({ cluster: item.cluster, check: c });
    for (const c of item.diagnosis ?? []) rows.push({ cluster: item.cluster, check: c, diagnosis: true });
  }
  return rows;
}

export const checkColumns: Column<CheckRow>[] = [
  { header: 'target', get: (r) => r.cluster, cluster: true },
  { header: 'check', get: (r) => (r.diagnosis ? `doctor/${r.check.name}` : r.check.name) },
  {
    header: 'status',
    get: (r) => r.check.status,
    color: (r, k) =>
      r.check.status === 'pass'
        ? k.green
        : r.check.status === 'fail'
          ? k.red
          : r.check.status === 'warn'
            ? k.yellow
            : undefined,
  },
  { header: 'message', get: (r) => r.check.message, shrink: 'first' },
  { header: 'fix', get: (r) => r.check.fix ?? '', wide: true },
];

/** The fixes of failed and warned checks, one line each, printed after the table. */
export function fixNotes(rows: CheckRow[]): string[] {
  return rows
    .filter((r) => r.check.fix && (r.check.status === 'fail' || r.check.status === 'warn'))
    .map((r) => `fix: ${r.cluster}: ${r.diagnosis ? 'doctor/' : ''}${r.check.name}: ${r.check.fix}`);
}

/**
 * The JUnit groups of `wi test` / `wi doctor`: one per target, its testcases the table's rows (the diagnosis that follows
 * a failed `wi test` as `doctor/NAME`, a target fleet could not work on as a failed `connect`).
 */
export function junitSuitesOf(
  report: { hub: string; serviceAccount: string; items: Array<ClusterItem<ProbeResult>> },
  durations: Map<string, number>,
): CheckSuite[] {
  const rows = checkRows(report.items);
  return report.items.map((item) => ({
    name: item.cluster,
    checks: rows
      .filter((r) => r.cluster === item.cluster)
      .map((r) => (r.diagnosis ? { ...r.check, name: `doctor/${r.check.name}` } : r.check)),
    properties: [
      ['target', item.cluster],
      ['hub', report.hub],
      ['serviceAccount', report.serviceAccount],
      ['audience', item.audience],
      ['issuer', item.claims?.iss],
      ['subject', item.claims?.sub],
      ['expires', item.claims?.exp],
      ['username', item.user?.username],
    ],
    durationMs: durations.get(item.cluster) ?? 0,
    ...(item.error ? { error: `${item.error.kind}: ${item.error.message}` } : {}),
  }));
}
