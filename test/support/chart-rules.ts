// The chart's PrometheusRule (deploy/chart, exporter.prometheusRule) as a Prometheus rules file: what promtool and a
// real Prometheus read. The chart's own tests (test/e2e/chart-exporter.test.ts) and the exporter's e2e with Prometheus
// load the alerts from here, so both test the rules the chart ships.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';

import { releaseTool, repoRoot } from './binaries.js';

export const CHART_DIR = join(repoRoot, 'deploy/chart');
export const PROMETHEUS_RULE_TEMPLATE = 'templates/exporter-prometheusrule.yaml';

/** Runs helm (built by test/helm/build.sh) and resolves to its stdout; a non-zero exit rejects with its stderr. */
export function helmRun(args: string[]): Promise<string> {
  const helm = releaseTool('helm');
  return new Promise((resolve, reject) =>
    execFile(helm, args, { maxBuffer: 64 << 20, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) =>
      err ? reject(new Error(`helm ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

/**
 * The PrometheusRule `helm template` renders with exporter.enabled, exporter.prometheusRule.enabled and `valuesOverride`
 * (a values file after those, so Helm deep-merges it: `{exporter: {prometheusRule: {alerts: {FleetClusterDown: {for:
 * '10s'}}}}}` changes that one key), as the parsed object.
 */
export async function renderPrometheusRule(valuesOverride: object = {}): Promise<{
  metadata: { name: string; labels?: Record<string, string> };
  spec: { groups: { name: string; rules: Record<string, unknown>[] }[] };
}> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-chart-rules-'));
  try {
    const base = join(dir, 'base.yaml');
    const override = join(dir, 'override.yaml');
    writeFileSync(base, yaml.dump({ exporter: { enabled: true, prometheusRule: { enabled: true } } }));
    writeFileSync(override, yaml.dump(valuesOverride));
    const out = await helmRun([
      'template',
      'fleet-rotator',
      CHART_DIR,
      '--namespace',
      'fleet-system',
      '-f',
      base,
      '-f',
      override,
      '--show-only',
      PROMETHEUS_RULE_TEMPLATE,
    ]);
    const docs = (yaml.loadAll(out) as ({ kind?: string } | null)[]).filter((d) => d?.kind === 'PrometheusRule');
    if (docs.length !== 1) throw new Error(`helm template rendered ${docs.length} PrometheusRules:\n${out}`);
    return docs[0] as Awaited<ReturnType<typeof renderPrometheusRule>>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The PrometheusRule's spec as a Prometheus rules file (YAML text with `groups:`), for `promtool check rules`,
 * `promtool test rules` or a Prometheus' rule_files.
 */
export async function renderAlertRules(valuesOverride: object = {}): Promise<string> {
  const rule = await renderPrometheusRule(valuesOverride);
  return yaml.dump({ groups: rule.spec.groups }, { lineWidth: -1, noRefs: true });
}
