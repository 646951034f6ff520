import { hostname } from 'node:os';

import { create } from 'xmlbuilder2';

import type { Check } from '../base/checks.js';
import type { VerifyReport } from './report.js';

/** One group of checks: a testsuite (a cluster for `clusters verify`, a target for `wi test` and `wi doctor`). */
export interface CheckSuite {
  name: string;
  checks: Check[];
  /** Suite properties, written in this order; empty values are left out. */
  properties: Array<[string, string | undefined]>;
  durationMs?: number;
  /** Why the work on this group failed as a whole (the suite's system-err). */
  error?: string;
}

export interface JUnitOptions {
  /** Warnings fail too. */
  strict?: boolean;
  timestamp?: Date;
  host?: string;
}

/**
 * Groups of checks as JUnit XML, the format CI systems (Jenkins, GitLab, GitHub test reporters, Azure) read: one
 * testsuite per group, one testcase per check. It is valid against both the Apache Ant JUnit schema (the strict one:
 * properties, system-out and system-err present, a timestamp without zone) and the Jenkins xunit JUnit schema; the tests
 * validate it against both. A warning passes unless strict, and is written to the suite's system-out either way.
 */
export function junitSuites(suites: CheckSuite[], options: JUnitOptions = {}): string {
  const timestamp = (options.timestamp ?? new Date()).toISOString().replace(/\.\d{3}Z$/, '');
  const host = options.host ?? (hostname() || 'localhost');
  const fails = (c: Check) => c.status === 'fail' || (Boolean(options.strict) && c.status === 'warn');
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('testsuites');
  suites.forEach((group, id) => {
    const { checks } = group;
    const suite = root.ele('testsuite', {
      name: xmlText(group.name),
      package: xmlText(group.name),
      id: String(id),
      timestamp,
      hostname: host,
      tests: String(checks.length),
      failures: String(checks.filter(fails).length),
      errors: '0',
      skipped: String(checks.filter((c) => c.status === 'skip').length),
      time: seconds(group.durationMs ?? 0),
    });
    const props = suite.ele('properties');
    for (const [name, value] of group.properties) if (value) props.ele('property', { name, value: xmlText(value) });
    const seen = new Map<string, number>();
    for (const check of checks) {
      // A check that repeats in a group (wi's can-i, once per question) gets a numbered testcase name: CI systems key
      // test history by suite and name, and would merge the repeats into one.
      const n = (seen.get(check.name) ?? 0) + 1;
      seen.set(check.name, n);
      const name = n === 1 ? check.name : `${check.name} #${n}`;
      // Check time is not measured per check; the suite carries the group's time.
      const testcase = suite.ele('testcase', { name: xmlText(name), classname: xmlText(group.name), time: '0' });
      const text = xmlText([check.message, check.fix ? `fix: ${check.fix}` : ''].filter(Boolean).join('\n'));
      if (fails(check)) {
        testcase.ele('failure', { message: xmlText(check.message), type: check.status }).txt(text);
      } else if (check.status === 'skip') {
        testcase.ele('skipped', { message: xmlText(check.message) });
      }
    }
    const warnings = checks
      .filter((c) => c.status === 'warn')
      .map((c) => `warn ${c.name}: ${c.message}${c.fix ? ` (fix: ${c.fix})` : ''}`);
    suite.ele('system-out').txt(xmlText(warnings.join('\n')));
    suite.ele('system-err').txt(xmlText(group.error ?? ''));
  });
  return root.end({ prettyPrint: true }) + '\n';
}

/** `clusters verify`'s report: one testsuite per cluster. */
export function junitXml(report: VerifyReport, options: { timestamp?: Date; host?: string } = {}): string {
  const suites = report.items.map((item): CheckSuite => ({
    name: item.cluster,
    checks: item.checks ?? [],
    properties: [
      ['cluster', item.cluster],
      ['provider', item.provider],
      ['server', item.server],
      ['status', item.status],
      ['username', item.username],
      ['version', item.version],
      ['expires', item.expires],
      ['policy', report.policy ?? '(defaults)'],
      ['rules', item.rules?.join(', ')],
    ],
    durationMs: item.durationMs ?? 0,
    ...(item.error ? { error: `${item.error.kind}: ${item.error.message}` } : {}),
  }));
  return junitSuites(suites, { ...options, strict: report.strict });
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** XML 1.0 cannot carry most control characters, even escaped; a server message could hold one. */
function xmlText(s: string): string {
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
}
