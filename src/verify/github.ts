import { appendFile } from 'node:fs/promises';

import type { Check } from '../base/checks.js';
import type { VerifyReport } from './report.js';

/**
 * GitHub Actions output: workflow commands (`::error title=...::message`) that the runner turns into annotations, and a
 * Markdown summary for the job page. The commands go to stderr, which the runner reads for commands as it does stdout,
 * so that `-o json` on stdout stays parseable. @actions/core is not used: it writes commands to stdout and brings an
 * HTTP client fleet does not need; the escaping below is the documented one.
 */

/** GITHUB_ACTIONS=true is how the runner says a step runs in GitHub Actions. */
export function inGitHubActions(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/** Message text of a workflow command: %, CR and LF escaped. */
export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property value (title=...): also ':' and ','. */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** One `::error` per failed check (and per warning, as `::warning`, or `::error` with --strict). */
export function annotations(report: VerifyReport): string[] {
  const lines: string[] = [];
  for (const item of report.items) {
    for (const check of item.checks ?? []) {
      if (check.status !== 'fail' && check.status !== 'warn') continue;
      const level = check.status === 'fail' || report.strict ? 'error' : 'warning';
      const title = `fleet verify: ${item.cluster}: ${check.name}`;
      lines.push(`::${level} title=${escapeProperty(title)}::${escapeData(withFix(check))}`);
    }
  }
  return lines;
}

const withFix = (c: Check) => (c.fix ? `${c.message} (fix: ${c.fix})` : c.message);

const SYMBOL: Record<Check['status'], string> = { pass: '✅ pass', fail: '❌ fail', warn: '⚠️ warn', skip: '➖ skip' };

/** Markdown for $GITHUB_STEP_SUMMARY: the verdict, a table of clusters by check, then the details of what failed. */
export function markdownSummary(report: VerifyReport): string {
  const s = report.summary;
  const out: string[] = [];
  out.push(`## fleet clusters verify: ${report.ok ? 'passed' : 'failed'}`, '');
  out.push(
    `${s.passed} of ${s.clusters} cluster${s.clusters === 1 ? '' : 's'} passed · checks: ${s.checks.pass} pass, ${s.checks.fail} fail, ${s.checks.warn} warn, ${s.checks.skip} skip · policy: ${report.policy ? `\`${cell(report.policy)}\`` : 'defaults'}${report.strict ? ' · strict' : ''}`,
    '',
  );
  const names = report.items[0]?.checks?.map((c) => c.name) ?? [];
  out.push(`| cluster | ${names.join(' | ')} |`, `|---|${names.map(() => '---').join('|')}|`);
  for (const item of report.items) {
    out.push(`| ${cell(item.cluster)} | ${(item.checks ?? []).map((c) => SYMBOL[c.status]).join(' | ')} |`);
  }
  const problems = report.items.flatMap((i) =>
    (i.checks ?? []).filter((c) => c.status === 'fail' || c.status === 'warn').map((c) => ({ i, c })),
  );
  if (problems.length > 0) {
    out.push('', '### Problems', '');
    for (const { i, c } of problems)
      out.push(
        `- **${cell(i.cluster)}** \`${c.name}\` (${c.status}): ${cell(c.message)}${c.fix ? ` — fix: ${cell(c.fix)}` : ''}`,
      );
  }
  return out.join('\n') + '\n';
}

/** Table cells cannot hold a pipe or a line break. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export async function appendSummary(file: string, markdown: string): Promise<void> {
  await appendFile(file, markdown, { encoding: 'utf8' });
}
