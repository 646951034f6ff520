import {hostname} from 'node:os'

import {create} from 'xmlbuilder2'

import type {VerifyReport} from './report.js'

/**
 * The report as JUnit XML, the format CI systems (Jenkins, GitLab, GitHub test reporters, Azure) read: one testsuite
 * per cluster, one testcase per check. It is valid against both the Apache Ant JUnit schema (the strict one: properties,
 * system-out and system-err present, a timestamp without zone) and the Jenkins xunit JUnit schema; the tests validate it
 * against both. A warning passes unless --strict, and is written to the suite's system-out either way.
 */
export function junitXml(report: VerifyReport, options: {timestamp?: Date; host?: string} = {}): string {
  const timestamp = (options.timestamp ?? new Date()).toISOString().replace(/\.\d{3}Z$/, '')
  const host = options.host ?? (hostname() || 'localhost')
  const root = create({version: '1.0', encoding: 'UTF-8'}).ele('testsuites')
  report.items.forEach((item, id) => {
    const checks = item.checks ?? []
    const failed = checks.filter((c) => c.status === 'fail' || (report.strict && c.status === 'warn'))
    const suite = root.ele('testsuite', {
      name: xmlText(item.cluster),
      package: xmlText(item.cluster),
      id: String(id),
      timestamp,
      hostname: host,
      tests: String(checks.length),
      failures: String(failed.length),
      errors: '0',
      skipped: String(checks.filter((c) => c.status === 'skip').length),
      time: seconds(item.durationMs ?? 0),
    })
    const props = suite.ele('properties')
    const properties: Array<[string, string | undefined]> = [
      ['cluster', item.cluster],
      ['provider', item.provider],
      ['server', item.server],
      ['status', item.status],
      ['username', item.username],
      ['version', item.version],
      ['expires', item.expires],
      ['policy', report.policy ?? '(defaults)'],
      ['rules', item.rules?.join(', ')],
    ]
    for (const [name, value] of properties) if (value) props.ele('property', {name, value: xmlText(value)})
    for (const check of checks) {
      // Check time is not measured per check; the suite carries the cluster's time.
      const testcase = suite.ele('testcase', {name: check.name, classname: xmlText(item.cluster), time: '0'})
      const text = xmlText([check.message, check.fix ? `fix: ${check.fix}` : ''].filter(Boolean).join('\n'))
      if (check.status === 'fail' || (report.strict && check.status === 'warn')) {
        testcase.ele('failure', {message: xmlText(check.message), type: check.status}).txt(text)
      } else if (check.status === 'skip') {
        testcase.ele('skipped', {message: xmlText(check.message)})
      }
    }
    const warnings = checks.filter((c) => c.status === 'warn').map((c) => `warn ${c.name}: ${c.message}${c.fix ? ` (fix: ${c.fix})` : ''}`)
    suite.ele('system-out').txt(xmlText(warnings.join('\n')))
    suite.ele('system-err').txt(xmlText(item.error ? `${item.error.kind}: ${item.error.message}` : ''))
  })
  return root.end({prettyPrint: true}) + '\n'
}

const seconds = (ms: number) => (ms / 1000).toFixed(3)

/** XML 1.0 cannot carry most control characters, even escaped; a server message could hold one. */
function xmlText(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
}
