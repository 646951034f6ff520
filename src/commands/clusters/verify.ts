import { Flags } from '@oclif/core';

import { BaseCommand, type BaseFlags, type FlagGroups } from '../../cli/base-command.js';
import { verifyMetrics } from '../../cli/metrics.js';
import { checkColumns, checkDetails } from '../../cli/checks-table.js';
import { fleetFlags, impersonationFlags } from '../../cli/flags.js';
import { describeImpersonation } from '../../kube/client.js';
import { checkJunitTarget, writeJunit } from '../../cli/junit-file.js';
import { scrub } from '../../kubeconfig/redact.js';
import { annotations, appendSummary, inGitHubActions, markdownSummary } from '../../verify/github.js';
import { DEFAULT_POLICY, type Policy, loadPolicy } from '../../verify/policy.js';
import { FleetVerifier, type VerifyItem, type VerifyReport } from '../../verify/report.js';
import { counted } from '../../base/text.js';

export default class ClustersVerify extends BaseCommand<typeof ClustersVerify> {
  static summary = 'Check every selected cluster against a policy: the CI step before a deploy.';
  static description = `Per cluster: provider readiness, reachable (/readyz, with the failing checks of /readyz?verbose), TLS verified, authenticated (SelfSubjectReview), expected identity, required permissions (access reviews), forbidden power (system:masters, cluster-admin, risk codes of auth rules), credential lifetime left (certificate, JWT exp, exec plugin expirationTimestamp) and server version range. Without --policy: reachable, TLS verified, authenticated, an exec plugin credential valid now and a stored credential (certificate, token) valid for at least 30m (a warning under 7d when issued for longer), and a warning for system:masters; rules select clusters by label, fleet.dev/auth included. Writes JUnit XML with --junit, GitHub Actions annotations when GITHUB_ACTIONS=true, and a Markdown summary to $GITHUB_STEP_SUMMARY when it is set. Exit 0 when no check failed (warnings fail too with --strict), 1 otherwise, 2 for a bad policy or usage. See docs/verify.md.`;

  static examples = [
    '<%= config.bin %> clusters verify --all --policy policy.yaml --junit verify.xml',
    '<%= config.bin %> clusters verify -l env=prod --strict -o json',
  ];

  static metrics = true;
  static reportsSkippedTls = true;
  // A cluster whose entry is broken (a context naming a missing cluster) is the failed provider-ready check here, exit 1
  // like any failed check (docs/verify.md): a CI step reports it per cluster, beside the clusters that passed.
  static brokenEntryIsCheck = true;

  static flags = {
    ...fleetFlags,
    ...impersonationFlags,
    policy: Flags.string({
      char: 'p',
      description: 'Policy file (YAML, schema in schemas/verify-policy.schema.json). Default: built-in defaults.',
    }),
    junit: Flags.string({
      description: 'Write a JUnit XML report to this file (one testsuite per cluster, one testcase per check).',
    }),
    strict: Flags.boolean({ description: 'Warnings fail too.', default: false }),
  };

  protected flagGroups(): FlagGroups {
    return { selection: this.flags, impersonation: this.flags };
  }

  async run(): Promise<VerifyReport> {
    const o = await verifyOptions(this.flags, process.env);
    const refs = await this.fleet.selected();
    const verifier = new FleetVerifier(o.policy, { exec: this.fleet.execRunner, strict: o.strict });
    await verifier.prepare(refs);
    const results = await this.overClusters(verifier.work, (r) => verifier.item(r));
    const report = verifier.report(results, refs);
    if (this.impersonation) report.as = this.impersonation;
    if (!report.ok) this.markFailed();

    // The report is printed even when the JUnit file cannot be written after all (checked before the run; a directory
    // can vanish meanwhile): the error follows the table instead of replacing it.
    // The XML builder is loaded only for --junit: evaluating it cost every verify run about 15 ms.
    const { junit } = o;
    const junitFailed = junit
      ? await import('../../verify/junit.js')
          .then(({ junitXml }) => writeJunit(junit, junitXml(report)))
          .then(
            () => undefined,
            (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
          )
      : undefined;
    if (o.annotations) for (const line of annotations(report)) this.logStderr(line);
    if (o.summaryFile) await appendSummary(o.summaryFile, scrub(markdownSummary(report)));

    const rows = report.items.map((i) => ({ ...i, subject: i.cluster }));
    await this.render(report, {
      rows,
      columns: [
        ...checkColumns(rows, 'cluster', 'clusters'),
        { header: 'username', get: (r: VerifyItem) => r.username ?? '', wide: true },
        { header: 'version', get: (r: VerifyItem) => r.version ?? '', wide: true },
        { header: 'expires', get: (r: VerifyItem) => r.expires ?? '', wide: true },
      ],
      name: (r) => r.cluster,
      metrics: verifyMetrics(report),
      notes: [
        ...(report.as
          ? [
              `note: checked as ${describeImpersonation(report.as)} (impersonated): identity, permissions and power are that identity's; reachability, TLS and credential lifetime are the caller's`,
            ]
          : []),
        ...checkDetails(rows, { strict: report.strict }),
        `${report.ok ? 'passed' : 'FAILED'}: ${report.summary.passed} of ${counted(report.summary.clusters, 'cluster')} passed (${report.summary.checks.fail} failed, ${counted(report.summary.checks.warn, 'warning check')})`,
      ],
    });
    if (junitFailed) throw junitFailed;
    return report;
  }
}

/** What `clusters verify` checks and where it reports, from its flags and the environment (GitHub Actions). */
export interface VerifyOptions {
  policy: Policy;
  /** --junit: the file the JUnit XML goes to (its directory checked here). */
  junit?: string;
  strict: boolean;
  /** GitHub Actions annotations on stderr (GITHUB_ACTIONS=true). */
  annotations: boolean;
  /** $GITHUB_STEP_SUMMARY: the Markdown summary is appended there. */
  summaryFile?: string;
}

/** The options, checked before any cluster is contacted: a bad policy or a --junit file that cannot be written stops the run (exit 2). */
export async function verifyOptions(
  flags: BaseFlags<typeof ClustersVerify>,
  env: NodeJS.ProcessEnv,
): Promise<VerifyOptions> {
  const policy = flags.policy ? await loadPolicy(flags.policy) : DEFAULT_POLICY;
  if (flags.junit) await checkJunitTarget(flags.junit);
  return {
    policy,
    junit: flags.junit,
    strict: flags.strict,
    annotations: inGitHubActions(env),
    summaryFile: env.GITHUB_STEP_SUMMARY || undefined,
  };
}
