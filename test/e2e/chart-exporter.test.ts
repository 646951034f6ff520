// The fleet exporter in deploy/chart (exporter.*) and deploy/kustomize/exporter: the objects it renders, its values
// schema, the PrometheusRule's alerts under promtool (check rules, and test rules with deploy/chart/tests/
// alerts.test.yaml: a firing and a not-firing case for every alert), per-alert overrides, the Grafana dashboard's
// queries parsed by promtool, kubeconform against the hub's schemas with the prometheus-operator CRDs applied (so the
// ServiceMonitor and PrometheusRule are checked, none skipped) and a server-side dry run, the kustomize base against
// the chart, then `helm install` on the hub and `fleet exporter --once` run as the Pod would run it (the chart's
// ServiceAccount token, the chart's Secret as /etc/fleet, the Deployment's own args): the RBAC is enough to read the
// hub's consumer Secrets in the namespaces it names, and grants no write. Every name is unique: the hub is shared.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { releaseTool, repoRoot } from '../support/binaries.js';
import { renderAlertRules, renderPrometheusRule } from '../support/chart-rules.js';
import { runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { writeKubeconformSchemas } from '../support/kube-schemas.js';
import { PROMETHEUS_OPERATOR_VERSION, prometheusOperatorCrds } from '../support/prometheus-operator.js';

const cp = loadControlPlane();
const hub = cp.hub;
const member = cp.members[0];
const CHART = join(repoRoot, 'deploy/chart');
const BASE = join(repoRoot, 'deploy/kustomize');
const EXPORTER_BASE = join(BASE, 'exporter');
const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const ALERTS = [
  'FleetCredentialExpiringSoon',
  'FleetCredentialExpiringCritical',
  'FleetCredentialExpired',
  'FleetCredentialNotValid',
  'FleetCredentialRotationUnfinished',
  'FleetCredentialRotationOverdue',
  'FleetClusterDown',
  'FleetSourceDown',
  'FleetVerifyCheckFailing',
  'FleetExporterCollectionsFailing',
  'FleetExporterStale',
];
/** Reads only: what creds list asks of a hub (src/creds/list.ts, flux-refs.ts). */
const READ = ['get', 'list', 'watch'];
const EXPORTER_RULES = [
  { apiGroups: [''], resources: ['secrets'], verbs: READ },
  { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles'], verbs: READ },
  { apiGroups: ['kustomize.toolkit.fluxcd.io'], resources: ['kustomizations'], verbs: READ },
  { apiGroups: ['helm.toolkit.fluxcd.io'], resources: ['helmreleases'], verbs: READ },
];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  return new Promise<Run>((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        cwd: o.cwd ?? repoRoot,
        timeout: 300_000,
        maxBuffer: 64 << 20,
        env: { ...process.env, KUBECONFIG: '', ...o.env },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}`));
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.stdin ?? '');
  });
}

async function ok(cmd: string, args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const r = await run(cmd, args, o);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
};
const parseAll = (text: string): Obj[] => (yaml.loadAll(text) as (Obj | null)[]).filter((o): o is Obj => !!o);
const find = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const one = (objs: Obj[], kind: string) => {
  const found = find(objs, kind);
  assert.equal(found.length, 1, `${found.length} ${kind}s`);
  return found[0];
};
const byKey = (a: Obj, b: Obj) =>
  `${a.kind}/${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
    `${b.kind}/${b.metadata.namespace}/${b.metadata.name}`,
  );

interface Container {
  name: string;
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  securityContext: object;
  volumeMounts: { name: string; mountPath: string }[];
  resources?: object;
}
interface PodSpec {
  serviceAccountName: string;
  securityContext: object;
  volumes: { name: string; secret?: { secretName: string; defaultMode: number }; configMap?: { name: string } }[];
  containers: Container[];
  nodeSelector?: object;
  tolerations?: object[];
  affinity?: object;
}
const podOf = (d: Obj) => {
  const spec = d.spec as {
    replicas: number;
    strategy: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
  return { spec, pod: spec.template.spec, container: spec.template.spec.containers[0] };
};
const cronPodOf = (c: Obj) =>
  (c.spec as { jobTemplate: { spec: { template: { spec: PodSpec } } } }).jobTemplate.spec.template.spec;

let helm = '';
let kustomize = '';
let kubeconform = '';
let promtool = '';
let schemaLocation = '';
const dir = join(scratchDir(), uniqueName('chart-exporter'));

const template = (args: string[], release = 'fleet-rotator', namespace = 'fleet-system') =>
  run(helm, ['template', release, CHART, '--namespace', namespace, ...args]);
const render = async (args: string[], release = 'fleet-rotator', namespace = 'fleet-system') =>
  parseAll(await ok(helm, ['template', release, CHART, '--namespace', namespace, ...args]));
const valuesFile = (values: object) => {
  const file = join(dir, `${uniqueName('values')}.yaml`);
  writeFileSync(file, yaml.dump(values), { mode: 0o600 });
  return file;
};
const ALL_ON = [
  '--set',
  'exporter.enabled=true,exporter.serviceMonitor.enabled=true,exporter.prometheusRule.enabled=true,exporter.dashboard.enabled=true',
];

/** promtool (Debian's prometheus package): required in CI (.ci/run installs it), else these checks are skipped. */
function findPromtool(): string {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return 'promtool';
  } catch {
    if (process.env.CI) assert.fail('promtool is not installed (apt-get install prometheus)');
    return '';
  }
}

/** `promtool test rules` of deploy/chart/tests/alerts.test.yaml over `rules` (a rules file's text). */
async function promtoolTest(rules: string): Promise<Run> {
  const d = join(dir, uniqueName('promtool'));
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, 'alerts.rules.yaml'), rules);
  copyFileSync(join(CHART, 'tests/alerts.test.yaml'), join(d, 'alerts.test.yaml'));
  return run(promtool, ['test', 'rules', 'alerts.test.yaml'], { cwd: d });
}

async function promtoolCheck(rules: string): Promise<Run> {
  const file = join(dir, `${uniqueName('rules')}.yaml`);
  writeFileSync(file, rules);
  return run(promtool, ['check', 'rules', file]);
}

async function conform(docs: string) {
  const r = await run(
    kubeconform,
    ['-strict', '-verbose', '-summary', '-output', 'json', '-schema-location', schemaLocation, '-'],
    { stdin: docs },
  );
  const out = JSON.parse(r.stdout) as {
    resources: { kind: string; name: string; status: string; msg: string }[];
    summary: { valid: number; invalid: number; errors: number; skipped: number };
  };
  return { code: r.code, ...out, stderr: r.stderr };
}

type Rule = { alert: string; expr: string; for: string; labels: Record<string, string>; annotations: object };

describe('deploy/chart exporter.* and deploy/kustomize/exporter: the fleet exporter', { timeout: 1_800_000 }, () => {
  before(async () => {
    helm = releaseTool('helm');
    kustomize = releaseTool('kustomize');
    kubeconform = releaseTool('kubeconform');
    promtool = findPromtool();
    mkdirSync(dir, { recursive: true });
    // The ServiceMonitor and PrometheusRule CRDs, applied server-side (idempotent: other runs and files share the hub),
    // then the schemas made from the hub's OpenAPI include monitoring.coreos.com/v1.
    for (const crd of prometheusOperatorCrds())
      await kubectl(hub, ['apply', '--server-side', '--force-conflicts', '--field-manager=fleet-e2e', '-f', crd]);
    await kubectl(hub, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
    ]);
    // The aggregated OpenAPI lists a new group-version a moment after the CRD is established.
    for (let i = 0; ; i++) {
      const schemas = await writeKubeconformSchemas(hub, join(dir, 'schemas'));
      schemaLocation = schemas.location;
      const have = ['servicemonitor-monitoring-v1.json', 'prometheusrule-monitoring-v1.json'].every((f) =>
        existsSync(join(dir, 'schemas', f)),
      );
      if (have) break;
      assert.ok(i < 30, 'the hub does not publish monitoring.coreos.com/v1 in /openapi/v3');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('off by default: the defaults render no exporter object; helm lint --strict passes with everything on', async () => {
    const defaults = await render([]);
    assert.deepEqual(
      defaults.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'metrics-exporter'),
      [],
    );
    assert.deepEqual(defaults.map((o) => o.kind).sort(), [
      'CronJob',
      'Role',
      'RoleBinding',
      'Secret',
      'ServiceAccount',
    ]);
    for (const extra of [[], ['--set', 'exporter.allNamespaces=true'], ['--set', 'exporter.policy=checks: []']]) {
      const lint = await ok(helm, ['lint', '--strict', CHART, ...ALL_ON, ...extra]);
      assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('exporter.enabled renders the Deployment, its ServiceAccount, read-only Roles and the Service', async () => {
    const objs = await render(['--set', 'exporter.enabled=true']);
    const ours = objs.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'metrics-exporter');
    assert.deepEqual(ours.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort(), [
      'Deployment fleet-system/fleet-rotator-exporter',
      'Role fleet-system/fleet-rotator-exporter',
      'RoleBinding fleet-system/fleet-rotator-exporter',
      'Service fleet-system/fleet-rotator-exporter',
      'ServiceAccount fleet-system/fleet-rotator-exporter',
    ]);
    const { spec, pod, container } = podOf(one(objs, 'Deployment'));
    const cron = cronPodOf(one(objs, 'CronJob'));
    assert.equal(spec.replicas, 1);
    assert.equal(spec.strategy.type, 'Recreate');
    assert.deepEqual(spec.selector.matchLabels, {
      'app.kubernetes.io/name': 'fleet-rotator',
      'app.kubernetes.io/instance': 'fleet-rotator',
      'app.kubernetes.io/component': 'metrics-exporter',
    });
    for (const [k, v] of Object.entries(spec.selector.matchLabels)) assert.equal(spec.template.metadata.labels[k], v);
    // The CronJob's image, Pod and container security and config Secret; its own ServiceAccount.
    assert.equal(container.image, `ghcr.io/fleet-cli/fleet:${VERSION}`);
    assert.equal(container.image, cron.containers[0].image);
    assert.deepEqual(pod.securityContext, cron.securityContext);
    assert.deepEqual(container.securityContext, cron.containers[0].securityContext);
    assert.deepEqual(pod.volumes, cron.volumes);
    assert.equal(pod.serviceAccountName, 'fleet-rotator-exporter');
    assert.notEqual(pod.serviceAccountName, cron.serviceAccountName);
    assert.deepEqual(container.args, [
      'exporter',
      '--listen',
      ':9478',
      '--interval',
      '5m',
      '--fleet-config',
      '/etc/fleet/fleet.yaml',
      '--hub-namespace',
      'fleet-system',
    ]);
    assert.deepEqual(container.ports, [{ name: 'metrics', containerPort: 9478, protocol: 'TCP' }]);
    assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'metrics' });
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'metrics' });
    const exporterOnly = (kind: string) => ours.filter((o) => o.kind === kind);
    assert.deepEqual(exporterOnly('Role')[0].rules, EXPORTER_RULES);
    assert.deepEqual(exporterOnly('RoleBinding')[0].subjects, [
      { kind: 'ServiceAccount', name: 'fleet-rotator-exporter', namespace: 'fleet-system' },
    ]);
    const service = exporterOnly('Service')[0].spec as { type: string; selector: object; ports: object[] };
    assert.equal(service.type, 'ClusterIP');
    assert.deepEqual(service.selector, spec.selector.matchLabels);
    assert.deepEqual(service.ports, [{ name: 'metrics', port: 9478, targetPort: 'metrics', protocol: 'TCP' }]);
    // No verb but reads in anything the exporter is bound to.
    for (const r of [...exporterOnly('Role'), ...exporterOnly('ClusterRole')])
      for (const rule of r.rules as { verbs: string[] }[]) for (const v of rule.verbs) assert.ok(READ.includes(v), v);

    // Every knob: policy (a ConfigMap, mounted, its hash on the Pod), credential ids, extra args, port, interval,
    // two namespaces (sorted, each once), scheduling, no Service.
    const policy = 'checks:\n  - name: reachable\n';
    const custom = await render(
      [
        '-f',
        valuesFile({
          exporter: {
            enabled: true,
            port: 9100,
            interval: '90s',
            policy,
            credentialIdLabel: true,
            extraArgs: ['--concurrency', '8'],
            hubNamespaces: ['b', 'a'],
            resources: { limits: { memory: '256Mi' } },
            nodeSelector: { pool: 'ops' },
            tolerations: [{ key: 'ops', operator: 'Exists' }],
            affinity: { nodeAffinity: {} },
            podAnnotations: { team: 'platform' },
            service: { enabled: false },
            serviceAccount: { name: 'watcher' },
          },
        }),
      ],
      'rel',
      'ops',
    );
    const c = podOf(one(custom, 'Deployment'));
    assert.deepEqual(c.container.args, [
      'exporter',
      '--listen',
      ':9100',
      '--interval',
      '90s',
      '--fleet-config',
      '/etc/fleet/fleet.yaml',
      '--policy',
      '/etc/fleet-exporter/policy.yaml',
      '--hub-namespace',
      'a',
      '--hub-namespace',
      'b',
      '--credential-id-label',
      '--concurrency',
      '8',
    ]);
    assert.equal(c.container.ports[0].containerPort, 9100);
    assert.deepEqual(c.container.resources, { limits: { memory: '256Mi' } });
    assert.deepEqual(
      [c.pod.nodeSelector, c.pod.tolerations, c.pod.affinity],
      [{ pool: 'ops' }, [{ key: 'ops', operator: 'Exists' }], { nodeAffinity: {} }],
    );
    assert.equal(c.pod.serviceAccountName, 'watcher');
    assert.equal(c.spec.template.metadata.annotations?.team, 'platform');
    assert.match(c.spec.template.metadata.annotations?.['fleet.dev/policy-sha256'] ?? '', /^[0-9a-f]{64}$/);
    const cm = find(custom, 'ConfigMap').find((o) => o.metadata.name === 'rel-fleet-rotator-exporter-policy');
    assert.deepEqual(cm?.data, { 'policy.yaml': policy });
    assert.deepEqual(
      c.pod.volumes.find((v) => v.name === 'policy'),
      { name: 'policy', configMap: { name: 'rel-fleet-rotator-exporter-policy' } },
    );
    assert.ok(c.container.volumeMounts.some((m) => m.name === 'policy' && m.mountPath === '/etc/fleet-exporter'));
    assert.deepEqual(find(custom, 'Service'), []);
    assert.deepEqual(
      find(custom, 'ServiceAccount')
        .map((o) => o.metadata.name)
        .sort(),
      ['rel-fleet-rotator', 'watcher'],
    );
    assert.deepEqual(
      find(custom, 'RoleBinding')
        .filter((o) => o.metadata.name === 'rel-fleet-rotator-exporter')
        .map((b) => [b.metadata.namespace, (b.subjects as object[])[0]]),
      ['a', 'b'].map((ns) => [ns, { kind: 'ServiceAccount', name: 'watcher', namespace: 'ops' }]),
    );

    // allNamespaces: a ClusterRole of the same reads, no --hub-namespace.
    const wide = await render(['--set', 'exporter.enabled=true,exporter.allNamespaces=true']);
    assert.deepEqual(one(wide, 'ClusterRole').rules, EXPORTER_RULES);
    assert.equal(one(wide, 'ClusterRoleBinding').metadata.name, 'fleet-rotator-exporter');
    assert.ok(!podOf(one(wide, 'Deployment')).container.args.includes('--hub-namespace'));
    assert.deepEqual(
      find(wide, 'Role').map((r) => r.metadata.name),
      ['fleet-rotator'],
    );
  });

  it("the ServiceMonitor scrapes the Service's metrics port; the dashboard ConfigMap holds the JSON file with the sidecar label", async () => {
    const objs = await render([
      ...ALL_ON,
      '--set',
      'exporter.serviceMonitor.interval=30s,exporter.serviceMonitor.scrapeTimeout=10s,exporter.serviceMonitor.labels.release=kps',
    ]);
    const sm = one(objs, 'ServiceMonitor');
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(sm.metadata.labels?.release, 'kps');
    const service = objs.find((o) => o.kind === 'Service')!;
    assert.deepEqual(sm.spec, {
      selector: { matchLabels: (service.spec as { selector: object }).selector },
      namespaceSelector: { matchNames: ['fleet-system'] },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }],
    });
    const dash = find(objs, 'ConfigMap').find((o) => o.metadata.name === 'fleet-rotator-exporter-dashboard');
    assert.ok(dash);
    assert.equal(dash.metadata.labels?.grafana_dashboard, '1');
    assert.deepEqual(dash.data, {
      'fleet-exporter.json': readFileSync(join(CHART, 'dashboards/fleet-exporter.json'), 'utf8'),
    });
    const relabelled = await render([
      ...ALL_ON,
      '-f',
      valuesFile({ exporter: { dashboard: { labels: { grafana_dashboard: null, 'dash.example/fleet': 'yes' } } } }),
    ]);
    const d2 = find(relabelled, 'ConfigMap').find((o) => o.metadata.name === 'fleet-rotator-exporter-dashboard');
    assert.equal(d2?.metadata.labels?.['dash.example/fleet'], 'yes');
    assert.equal(d2?.metadata.labels?.grafana_dashboard, undefined);
    // A ServiceMonitor without the Service it scrapes is refused.
    const r = await template([...ALL_ON, '--set', 'exporter.service.enabled=false']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /exporter\.serviceMonitor\.enabled needs exporter\.service\.enabled/);
  });

  it('the PrometheusRule: group fleet-exporter with the eleven alerts; promtool check rules and test rules (deploy/chart/tests/alerts.test.yaml) pass, and fail when a threshold moves', async (t) => {
    const rule = await renderPrometheusRule();
    assert.equal(rule.metadata.name, 'fleet-rotator-exporter');
    assert.deepEqual(
      rule.spec.groups.map((g) => g.name),
      ['fleet-exporter'],
    );
    const rules = rule.spec.groups[0].rules as Rule[];
    assert.deepEqual(
      rules.map((r) => r.alert),
      ALERTS,
    );
    const defaults: Record<string, [string, string]> = {
      FleetCredentialExpiringSoon: ['15m', 'warning'],
      FleetCredentialExpiringCritical: ['5m', 'critical'],
      FleetCredentialExpired: ['0m', 'critical'],
      FleetCredentialNotValid: ['15m', 'critical'],
      FleetCredentialRotationUnfinished: ['0m', 'warning'],
      FleetCredentialRotationOverdue: ['1h', 'warning'],
      FleetClusterDown: ['10m', 'critical'],
      FleetSourceDown: ['15m', 'warning'],
      FleetVerifyCheckFailing: ['15m', 'warning'],
      FleetExporterCollectionsFailing: ['15m', 'warning'],
      FleetExporterStale: ['0m', 'critical'],
    };
    for (const r of rules) {
      assert.deepEqual([r.for, r.labels.severity], defaults[r.alert], r.alert);
      const a = r.annotations as { summary: string; description: string };
      assert.ok(a.summary && a.description, r.alert);
      // Helm wrote Prometheus' templates as they are, not run them.
      assert.ok(!/\{\{\s*\}\}|<no value>/.test(a.summary + a.description), `${r.alert}: ${JSON.stringify(a)}`);
      assert.match(a.description, /\{\{ \$labels\.\w+ \}\}/, r.alert);
      // No aggregation that would drop the credential's (or cluster's) labels.
      assert.doesNotMatch(r.expr, /\b(sum|count|max|min|avg)\b\s*(by|without)?\s*\(/, r.alert);
    }
    const text = await renderAlertRules({});
    assert.match(text, /^groups:/);
    if (!promtool) return t.skip('promtool is not installed (required in CI)');
    const check = await promtoolCheck(text);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /SUCCESS: 11 rules found/);
    const test = await promtoolTest(text);
    assert.equal(test.code, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /SUCCESS/);
    // The unit tests can fail: a fraction threshold of 0.9 fires ExpiringSoon on the 180-hour token they say is quiet,
    // and ClusterDown for 5m fires at 9m where they expect nothing.
    for (const [override, expected] of [
      [{ FleetCredentialExpiringSoon: { fractionLeft: 0.9 } }, /FleetCredentialExpiringSoon[\s\S]*token-180h/],
      [{ FleetClusterDown: { for: '5m' } }, /alertname: FleetClusterDown, time: 9m/],
      [{ FleetSourceDown: { enabled: false } }, /alertname: FleetSourceDown/],
    ] as const) {
      const moved = await promtoolTest(await renderAlertRules({ exporter: { prometheusRule: { alerts: override } } }));
      assert.notEqual(moved.code, 0, `${JSON.stringify(override)} passed the unit tests`);
      assert.match(moved.stdout + moved.stderr, expected);
    }
  });

  it('per-alert overrides: for, thresholds, severity, labels, annotations, enabled=false', async () => {
    const rule = await renderPrometheusRule({
      exporter: {
        prometheusRule: {
          labels: { role: 'alert-rules' },
          alerts: {
            FleetCredentialExpiringSoon: { for: '20s', fractionLeft: 0.95, timeLeftHours: 720 },
            FleetClusterDown: {
              for: '10s',
              severity: 'page',
              labels: { team: 'sre' },
              annotations: { runbook_url: 'https://runbooks.example/fleet' },
            },
            FleetCredentialRotationUnfinished: { afterMinutes: 5 },
            FleetExporterStale: { staleMinutes: 90 },
            FleetCredentialRotationOverdue: { timeLeftHours: 12 },
            FleetSourceDown: { enabled: false },
          },
        },
      },
    });
    assert.equal(rule.metadata.labels?.role, 'alert-rules');
    const rules = rule.spec.groups[0].rules as Rule[];
    const by = Object.fromEntries(rules.map((r) => [r.alert, r]));
    assert.deepEqual(
      rules.map((r) => r.alert),
      ALERTS.filter((a) => a !== 'FleetSourceDown'),
    );
    assert.equal(by.FleetCredentialExpiringSoon.for, '20s');
    assert.match(by.FleetCredentialExpiringSoon.expr, /< 720 \* 3600\b/);
    assert.match(by.FleetCredentialExpiringSoon.expr, /fleet_credential_lifetime_seconds\) < 0\.95 or/);
    // The other band keeps its defaults.
    assert.match(by.FleetCredentialExpiringCritical.expr, /< 24 \* 3600\b[\s\S]*< 0\.1 or/);
    assert.equal(by.FleetCredentialExpiringCritical.for, '5m');
    assert.equal(by.FleetClusterDown.for, '10s');
    assert.deepEqual(by.FleetClusterDown.labels, { severity: 'page', team: 'sre' });
    assert.equal(
      (by.FleetClusterDown.annotations as Record<string, string>).runbook_url,
      'https://runbooks.example/fleet',
    );
    assert.ok((by.FleetClusterDown.annotations as Record<string, string>).summary);
    assert.match(by.FleetCredentialRotationUnfinished.expr, /> 5 \* 60$/);
    assert.match(by.FleetExporterStale.expr, /> 90 \* 60$/);
    assert.match(by.FleetCredentialRotationOverdue.expr, /management!="unmanaged"\}[^<]*< 12 \* 3600$/);
    if (promtool) {
      const check = await promtoolCheck(
        await renderAlertRules({ exporter: { prometheusRule: { alerts: { FleetClusterDown: { for: '10s' } } } } }),
      );
      assert.equal(check.code, 0, check.stdout + check.stderr);
    }
  });

  it('the dashboard: Grafana JSON, every panel on ${datasource}, $cluster the one query variable, every expr valid PromQL (promtool)', async (t) => {
    const dash = JSON.parse(readFileSync(join(CHART, 'dashboards/fleet-exporter.json'), 'utf8')) as {
      schemaVersion: number;
      uid: string;
      title: string;
      templating: {
        list: {
          name: string;
          type: string;
          query?: unknown;
          includeAll?: boolean;
          multi?: boolean;
          allValue?: string;
        }[];
      };
      panels: {
        type: string;
        title: string;
        datasource?: { uid: string; type: string };
        targets?: { expr: string; datasource?: { uid: string } }[];
        panels?: unknown[];
      }[];
    };
    assert.ok(dash.schemaVersion >= 36 && dash.schemaVersion <= 41, String(dash.schemaVersion));
    assert.equal(dash.uid, 'fleet-exporter');
    const vars = Object.fromEntries(dash.templating.list.map((v) => [v.name, v]));
    assert.deepEqual(Object.keys(vars).sort(), ['cluster', 'datasource']);
    assert.equal(vars.datasource.type, 'datasource');
    assert.equal(vars.datasource.query, 'prometheus');
    assert.equal(vars.cluster.type, 'query');
    assert.deepEqual((vars.cluster.query as { query: string }).query, 'label_values(fleet_cluster_info, cluster)');
    assert.deepEqual([vars.cluster.multi, vars.cluster.includeAll, vars.cluster.allValue], [true, true, '.*']);
    const panels = dash.panels.filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 10, `${panels.length} panels`);
    const types = new Set(panels.map((p) => p.type));
    for (const needed of ['table', 'stat', 'timeseries', 'state-timeline']) assert.ok(types.has(needed), needed);
    const exprs: string[] = [];
    for (const p of panels) {
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, p.title);
      assert.ok(p.targets?.length, `${p.title}: no query`);
      for (const target of p.targets) {
        assert.equal(target.datasource?.uid, '${datasource}', p.title);
        exprs.push(target.expr);
      }
    }
    // What the exporter's e2e substitutes: these four, $cluster only as cluster=~"$cluster".
    for (const e of exprs) {
      const variables = e.match(/\$\{?\w+/g) ?? [];
      for (const v of variables)
        assert.ok(
          ['$__rate_interval', '$__range', '$__interval', '$cluster'].includes(v.replace('{', '')),
          `${v} in ${e}`,
        );
      if (e.includes('$cluster')) assert.ok(e.replaceAll('cluster=~"$cluster"', '').indexOf('$cluster') < 0, e);
    }
    const names = [
      'fleet_credential_expiration_timestamp_seconds',
      'fleet_cluster_up',
      'fleet_verify_check_ok',
      'fleet_source_up',
      'fleet_exporter_collection_duration_seconds',
      'fleet_exporter_collections_total',
      'fleet_exporter_last_success_timestamp_seconds',
    ];
    for (const n of names)
      assert.ok(
        exprs.some((e) => e.includes(n)),
        `no panel reads ${n}`,
      );
    if (!promtool) return t.skip('promtool is not installed (required in CI)');
    const substitute = (e: string) =>
      e
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$__range', '1h')
        .replaceAll('$__interval', '30s')
        .replaceAll('$cluster', '.*');
    const rulesFile = yaml.dump({
      groups: [
        { name: 'dashboard', rules: exprs.map((e, i) => ({ record: `dashboard:expr_${i}`, expr: substitute(e) })) },
      ],
    });
    const check = await promtoolCheck(rulesFile);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, new RegExp(`SUCCESS: ${exprs.length} rules found`));
    // The check can fail: one expression left unbalanced is refused.
    const broken = await promtoolCheck(
      yaml.dump({ groups: [{ name: 'x', rules: [{ record: 'x:y', expr: `${substitute(exprs[0])})` }] }] }),
    );
    assert.notEqual(broken.code, 0);
  });

  it('values.schema.json refuses bad exporter values (a wrong type, an unknown alert or key, a `for` that is not a duration, a line break in a name)', async () => {
    const inject = 'x\n      hostPID: true';
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ exporter: { enabled: 'yes' } }, /\/exporter\/enabled/],
      [{ exporter: { port: '9478' } }, /\/exporter\/port/],
      [{ exporter: { port: 70000 } }, /\/exporter\/port/],
      [{ exporter: { interval: '5 minutes' } }, /\/exporter\/interval/],
      [
        { exporter: { prometheusRule: { alerts: { FleetBogus: { enabled: true } } } } },
        /additional properties 'FleetBogus' not allowed/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetClusterDown: { threshold: 3 } } } } },
        /additional properties 'threshold' not allowed/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetClusterDown: { for: 10 } } } } },
        /\/exporter\/prometheusRule\/alerts\/FleetClusterDown\/for/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetClusterDown: { for: 'ten minutes' } } } } },
        /\/exporter\/prometheusRule\/alerts\/FleetClusterDown\/for/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetCredentialExpiringSoon: { fractionLeft: 1.5 } } } } },
        /fractionLeft/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetCredentialExpiringSoon: { timeLeftHours: '168h' } } } } },
        /timeLeftHours/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetClusterDown: { severity: `critical${inject}` } } } } },
        /severity/,
      ],
      [
        { exporter: { prometheusRule: { alerts: { FleetClusterDown: { labels: { 'bad-name': 'x' } } } } } },
        /'bad-name'/,
      ],
      [{ exporter: { serviceAccount: { name: inject } } }, /\/exporter\/serviceAccount\/name/],
      [{ exporter: { hubNamespaces: [`ns${inject}`] } }, /\/exporter\/hubNamespaces\/0/],
      [{ exporter: { serviceMonitor: { labels: { release: `a${inject}` } } } }, /\/exporter\/serviceMonitor\/labels/],
      [{ exporter: { dashboard: { enabled: 1 } } }, /\/exporter\/dashboard\/enabled/],
      [{ exporter: { bogus: true } }, /additional properties 'bogus' not allowed/],
    ];
    for (const [values, expected] of cases) {
      const file = valuesFile(values);
      const lint = await run(helm, ['lint', '--strict', CHART, '-f', file]);
      assert.notEqual(lint.code, 0, `helm lint --strict passed ${JSON.stringify(values)}:\n${lint.stdout}`);
      assert.match(lint.stdout + lint.stderr, expected, JSON.stringify(values));
      const r = await template(['-f', file]);
      assert.notEqual(r.code, 0, `${JSON.stringify(values)} was rendered:\n${r.stdout}`);
      assert.match(r.stderr, expected, JSON.stringify(values));
      assert.equal(r.stdout, '', 'nothing rendered');
    }
    const empty = await template(['--set', 'exporter.enabled=true', '--set-json', 'exporter.hubNamespaces=[]']);
    assert.notEqual(empty.code, 0);
    assert.match(empty.stderr, /exporter\.hubNamespaces is empty/);
    // What has no pattern goes through toYaml or quote: an annotation's or policy's text stays its value.
    const objs = await render([
      ...ALL_ON,
      '-f',
      valuesFile({
        exporter: {
          policy: `checks: []\n${inject}\n`,
          extraArgs: [`--x${inject}`],
          prometheusRule: { alerts: { FleetClusterDown: { annotations: { note: `a${inject}\n- alert: Injected` } } } },
        },
      }),
    ]);
    const pr = one(objs, 'PrometheusRule').spec as { groups: { rules: Rule[] }[] };
    assert.deepEqual(
      pr.groups[0].rules.map((r) => r.alert),
      ALERTS,
    );
    assert.equal((pr.groups[0].rules[6].annotations as Record<string, string>).note, `a${inject}\n- alert: Injected`);
    const dep = podOf(one(objs, 'Deployment'));
    assert.equal((dep.pod as unknown as Record<string, unknown>).hostPID, undefined);
    assert.ok(dep.container.args.includes(`--x${inject}`));
  });

  it('kubeconform finds every exporter object strictly valid against the hub (ServiceMonitor and PrometheusRule by the prometheus-operator CRDs), and the hub accepts them in a server-side dry run', async (t) => {
    t.diagnostic(`prometheus-operator CRDs ${PROMETHEUS_OPERATOR_VERSION}`);
    const variants = [
      [...ALL_ON],
      [...ALL_ON, '--set', 'exporter.allNamespaces=true,exporter.policy=checks: []'],
      ['--set', 'exporter.enabled=true,exporter.hubNamespaces={a,b}'],
    ];
    const docs: string[] = [];
    for (const v of variants)
      docs.push(await ok(helm, ['template', 'fleet-rotator', CHART, '--namespace', 'fleet-system', ...v]));
    docs.push(await ok(kustomize, ['build', EXPORTER_BASE]));
    const all = docs.join('\n---\n');
    const objs = parseAll(all);
    const kinds = new Set(objs.map((o) => o.kind));
    for (const k of ['Deployment', 'Service', 'ServiceMonitor', 'PrometheusRule', 'ConfigMap', 'ClusterRole', 'Role'])
      assert.ok(kinds.has(k), k);
    const res = await conform(objs.map((o) => yaml.dump(o)).join('---\n'));
    t.diagnostic(`kubeconform: ${JSON.stringify(res.summary)}`);
    assert.equal(
      res.code,
      0,
      `${JSON.stringify(
        res.resources.filter((r) => r.status !== 'statusValid'),
        null,
        1,
      )}\n${res.stderr}`,
    );
    assert.equal(res.summary.skipped + res.summary.invalid + res.summary.errors, 0, JSON.stringify(res.resources));
    assert.equal(res.summary.valid, objs.length);
    // The CRD schemas are strict too: a misspelt ServiceMonitor field and a PrometheusRule `for` of the wrong type fail.
    const rendered = await ok(helm, ['template', 'fleet-rotator', CHART, '--namespace', 'fleet-system', ...ALL_ON]);
    const bad = parseAll(rendered).filter((o) => o.kind === 'ServiceMonitor' || o.kind === 'PrometheusRule');
    (one(bad, 'ServiceMonitor').spec as Record<string, unknown>).endpoint = [];
    (one(bad, 'PrometheusRule').spec as { groups: { rules: Record<string, unknown>[] }[] }).groups[0].rules[0].for = 15;
    const badRes = await conform(bad.map((o) => yaml.dump(o)).join('---\n'));
    assert.equal(badRes.summary.invalid, 2, JSON.stringify(badRes.resources));

    // The hub's own validation of the rendered objects (the CRDs' schemas and every built-in kind's), nothing stored.
    const ns = uniqueName('exp-dry');
    await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    try {
      const inNs = await ok(helm, [
        'template',
        'dry',
        CHART,
        '--namespace',
        ns,
        ...ALL_ON,
        '--set',
        `exporter.hubNamespaces={${ns}},rotate.secrets={${ns}/member-1}`,
      ]);
      const out = await kubectl(
        hub,
        ['apply', '--dry-run=server', '--server-side', '--field-manager=fleet-e2e', '-f', '-'],
        { stdin: inNs },
      );
      for (const kind of [
        'deployment.apps',
        'service',
        'servicemonitor.monitoring.coreos.com',
        'prometheusrule.monitoring.coreos.com',
      ])
        assert.match(
          out,
          new RegExp(
            `^${kind.replaceAll('.', '\\.')}/dry-fleet-rotator-exporter serverside-applied \\(server dry run\\)$`,
            'm',
          ),
          out,
        );
      assert.equal(
        (
          await kubectl(hub, ['get', 'deployments,services,servicemonitors,prometheusrules', '-n', ns, '-o', 'name'])
        ).trim(),
        '',
      );
    } finally {
      await kubectlResult(hub, ['delete', 'namespace', ns, '--wait=false']);
    }
  });

  it("kustomize build deploy/kustomize/exporter is the chart's exporter objects with exporter.enabled (without Helm's own labels)", async () => {
    const withoutHelm = (o: Obj): Obj => {
      const copy = JSON.parse(JSON.stringify(o)) as Obj;
      const strip = (m?: { labels?: Record<string, string> }) => {
        if (m?.labels) {
          delete m.labels['helm.sh/chart'];
          delete m.labels['app.kubernetes.io/managed-by'];
        }
      };
      strip(copy.metadata);
      if (copy.kind === 'Deployment') strip((copy.spec as { template: { metadata: object } }).template.metadata);
      if (copy.kind === 'CronJob') {
        const spec = copy.spec as { jobTemplate: { metadata?: object; spec: { template: { metadata?: object } } } };
        strip(spec.jobTemplate.metadata);
        strip(spec.jobTemplate.spec.template.metadata);
      }
      return copy;
    };
    const chart = await render(['--set', 'exporter.enabled=true']);
    const exporter = chart.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'metrics-exporter');
    const base = parseAll(await ok(kustomize, ['build', EXPORTER_BASE]));
    assert.deepEqual(base.sort(byKey), exporter.map(withoutHelm).sort(byKey));
    // The two bases together are the chart's whole render.
    const both = [...parseAll(await ok(kustomize, ['build', BASE])), ...base];
    assert.deepEqual(both.sort(byKey), chart.map(withoutHelm).sort(byKey));
  });

  describe('installed into the hub', () => {
    const release = uniqueName('exp');
    const ns = `${release}-fleet`; // the release's namespace and the hub namespace it reads
    const other = `${release}-other`; // a namespace with a consumer Secret the chart is not told about
    const memberNs = `${release}-sys`;
    const fullname = `${release}-fleet-rotator-exporter`;
    const sa = `system:serviceaccount:${ns}:${fullname}`;
    const values = join(dir, `${release}.values.yaml`);
    const helmEnv = {
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    };
    const h = (args: string[]) => ok(helm, [...args, '--kubeconfig', hub.kubeconfig], { env: helmEnv });
    const secrets = new Set<string>();
    const canI = async (verb: string, resource: string, where: string[]) =>
      (await kubectlResult(hub, ['auth', 'can-i', verb, resource, '--as', sa, ...where])).stdout.trim();

    /** `fleet exporter --once -o json` as the Deployment's Pod runs it: its token, CA, /etc/fleet and args. */
    async function runAsPod(t: { diagnostic: (s: string) => void }) {
      const deployment = JSON.parse(await kubectl(hub, ['get', 'deployment', fullname, '-n', ns, '-o', 'json'])) as Obj;
      const { pod: podSpec, container } = podOf(deployment);
      assert.equal(podSpec.serviceAccountName, fullname);
      const pod = join(dir, uniqueName(release));
      const etc = join(pod, 'etc-fleet');
      mkdirSync(join(pod, 'serviceaccount'), { recursive: true });
      mkdirSync(etc, { recursive: true });
      const secretName = podSpec.volumes.find((v) => v.name === 'fleet')!.secret!.secretName;
      const config = JSON.parse(await kubectl(hub, ['get', 'secret', secretName, '-n', ns, '-o', 'json'])) as {
        data: Record<string, string>;
      };
      for (const [k, v] of Object.entries(config.data))
        writeFileSync(join(etc, k), Buffer.from(v, 'base64'), { mode: 0o400 });
      const token = (await kubectl(hub, ['create', 'token', fullname, '-n', ns, '--duration', '1h'])).trim();
      secrets.add(token);
      writeFileSync(join(pod, 'serviceaccount', 'token'), token, { mode: 0o600 });
      writeFileSync(join(pod, 'serviceaccount', 'ca.crt'), readFileSync(hub.caFile));
      const url = new URL(hub.url);
      const env = {
        KUBERNETES_SERVICE_HOST: url.hostname,
        KUBERNETES_SERVICE_PORT: url.port,
        FLEET_IN_CLUSTER_TOKEN_FILE: join(pod, 'serviceaccount', 'token'),
        FLEET_IN_CLUSTER_CA_FILE: join(pod, 'serviceaccount', 'ca.crt'),
      };
      assert.equal(container.args[0], 'exporter');
      const args = [
        ...container.args.map((a) => (a === '/etc/fleet/fleet.yaml' ? join(etc, 'fleet.yaml') : a)),
        '--once',
        '-o',
        'json',
      ];
      const res = await runFleet(args, { env, cwd: pod, timeoutMs: 120_000 });
      t.diagnostic(
        `fleet ${args.slice(0, 9).join(' ')} ... --once: exit ${res.code}; ${res.stderr.trim().split('\n').join(' | ')}`,
      );
      for (const s of secrets) assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), 'a token in the output');
      return {
        args: container.args,
        res,
        collection: res.json<{
          sources: { kind: string; name: string; up: boolean; error?: { kind: string; message: string } }[];
          verify: { items: { cluster: string }[] };
          credentials: {
            items: { location: string; source: { kind: string; namespace?: string; name?: string } }[];
            errors: object[];
            warnings?: string[];
          };
        }>(),
      };
    }

    after(async () => {
      await run(helm, ['uninstall', release, '--namespace', ns, '--kubeconfig', hub.kubeconfig], { env: helmEnv });
      for (const n of [ns, other]) await kubectlResult(hub, ['delete', 'namespace', n, '--wait=false']);
      await kubectlResult(member, ['delete', 'namespace', memberNs, '--wait=false']);
    });

    it("helm install; fleet exporter --once with the chart's ServiceAccount lists the hub Secrets of its namespace, no hub error, and that ServiceAccount can write nothing", async (t) => {
      for (const n of [ns, other])
        await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }));
      for (const secretNs of [ns, other]) {
        const gen = await runFleet([
          'creds',
          'generate',
          '--kubeconfig',
          member.kubeconfig,
          '--cluster',
          member.context,
          '--hub-kubeconfig',
          hub.kubeconfig,
          '--service-account',
          `${memberNs}/app`,
          '--role',
          'pod-lister',
          '--create-namespace',
          '--duration',
          '2h',
          '--secret',
          `${secretNs}/member-1`,
          '--format',
          'multicluster-runtime',
          '-o',
          'json',
        ]);
        assert.equal(gen.code, 0, gen.stderr);
      }
      writeFileSync(
        values,
        yaml.dump({
          rotate: { secrets: [`${ns}/member-1`] },
          config: { kubeconfigs: { 'member-1.kubeconfig': readFileSync(member.kubeconfig, 'utf8') } },
          exporter: {
            enabled: true,
            hubNamespaces: [ns],
            serviceMonitor: { enabled: true },
            prometheusRule: { enabled: true },
            dashboard: { enabled: true },
          },
        }),
        { mode: 0o600 },
      );
      // No --wait: the test hub has no kubelet, so the Deployment never becomes available.
      const notes = await h(['install', release, CHART, '--namespace', ns, '--values', values]);
      assert.match(notes, new RegExp(`http://${fullname}\\.${ns}\\.svc:9478/metrics`));
      assert.match(notes, new RegExp(`kubectl port-forward --namespace ${ns} service/${fullname} 9478:metrics`));
      for (const kind of ['servicemonitor', 'prometheusrule', 'service', 'deployment'])
        await kubectl(hub, ['get', kind, fullname, '-n', ns]);

      // What the chart granted the exporter's ServiceAccount anywhere on the hub: one RoleBinding, to reads.
      const bindings = JSON.parse(
        await kubectl(hub, ['get', 'rolebindings,clusterrolebindings', '-A', '-o', 'json']),
      ) as {
        items: (Obj & {
          subjects?: { kind: string; name: string; namespace?: string }[];
          roleRef: { kind: string; name: string };
        })[];
      };
      const ours = bindings.items.filter((b) =>
        (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === fullname && s.namespace === ns),
      );
      assert.deepEqual(
        ours.map((b) => [b.kind, b.metadata.namespace, b.roleRef.kind, b.roleRef.name]),
        [['RoleBinding', ns, 'Role', fullname]],
      );
      const role = JSON.parse(await kubectl(hub, ['get', 'role', fullname, '-n', ns, '-o', 'json'])) as {
        rules: object[];
      };
      assert.deepEqual(role.rules, EXPORTER_RULES);
      // The API server's own answers for it.
      assert.equal(await canI('list', 'secrets', ['-n', ns]), 'yes');
      assert.equal(await canI('watch', 'secrets', ['-n', ns]), 'yes');
      for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection'])
        assert.equal(await canI(verb, 'secrets', ['-n', ns]), 'no', `${verb} secrets in ${ns}`);
      assert.equal(await canI('get', 'secrets', ['-n', other]), 'no');
      assert.equal(await canI('list', 'secrets', ['--all-namespaces']), 'no');
      assert.equal(await canI('update', 'leases.coordination.k8s.io', ['-n', ns]), 'no');
      assert.equal(await canI('delete', 'clusterprofiles.multicluster.x-k8s.io', ['-n', ns]), 'no');

      const { res, collection } = await runAsPod(t);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const hubs = collection.sources.filter((s) => s.kind === 'hub');
      assert.deepEqual(
        hubs.map((s) => [s.up, s.error]),
        [[true, undefined]],
      );
      assert.deepEqual(collection.credentials.errors, []);
      // A hub taken from the in-cluster configuration that refuses a list is a warning, not a source down (measured:
      // without `list secrets` the hub source stays up and lists nothing): no warning either.
      assert.deepEqual(collection.credentials.warnings ?? [], []);
      const listed = collection.credentials.items
        .filter((i) => i.source.kind === 'secret')
        .map((i) => `${i.source.namespace}/${i.source.name}`);
      assert.deepEqual(listed, [`${ns}/member-1`]);
      assert.ok(
        collection.verify.items.some((i) => i.cluster.includes('member-1')),
        JSON.stringify(collection.verify.items.map((i) => i.cluster)),
      );
      assert.ok(
        collection.sources.every((s) => s.up),
        JSON.stringify(collection.sources),
      );
    });

    it('helm upgrade with exporter.allNamespaces: a ClusterRole of reads, and the exporter lists the Secrets of every namespace; helm uninstall leaves nothing', async (t) => {
      await h([
        'upgrade',
        release,
        CHART,
        '--namespace',
        ns,
        '--values',
        values,
        '--set',
        'exporter.allNamespaces=true',
      ]);
      assert.equal(await canI('list', 'secrets', ['--all-namespaces']), 'yes');
      for (const verb of ['create', 'update', 'patch', 'delete'])
        assert.equal(await canI(verb, 'secrets', ['-n', other]), 'no', `${verb} secrets in ${other}`);
      const gone = await kubectlResult(hub, ['get', 'role', fullname, '-n', ns]);
      assert.match(gone.stderr, /NotFound/);
      const { args, res, collection } = await runAsPod(t);
      assert.ok(!args.includes('--hub-namespace'));
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.deepEqual(
        collection.sources.filter((s) => s.kind === 'hub').map((s) => [s.up, s.error]),
        [[true, undefined]],
      );
      const listed = collection.credentials.items
        .filter((i) => i.source.kind === 'secret')
        .map((i) => `${i.source.namespace}/${i.source.name}`);
      assert.ok(listed.includes(`${ns}/member-1`) && listed.includes(`${other}/member-1`), listed.join(', '));

      await h(['uninstall', release, '--namespace', ns, '--wait']);
      const kinds =
        'deployments,services,serviceaccounts,secrets,roles,rolebindings,clusterroles,clusterrolebindings,configmaps,servicemonitors,prometheusrules';
      const left = (
        await kubectl(hub, ['get', kinds, '-A', '-l', `app.kubernetes.io/instance=${release}`, '-o', 'name'])
      )
        .split('\n')
        .filter(Boolean);
      assert.deepEqual(left, []);
    });
  });
});
