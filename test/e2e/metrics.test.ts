// -o prometheus against the real control plane, read back with Prometheus's own text parser (github.com/prometheus/
// common/expfmt, built from the version pinned in test/prom-parser/go.mod): creds list over a kubeconfig whose path and
// context name need escaping, a client certificate and a hub Secret; clusters verify over a fleet with a cluster down;
// every other command refusing the format. Each output is grepped for the credentials the test made.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

import yaml from 'js-yaml';

import type { CredentialList } from '../../src/creds/list.js';
import type { VerifyReport } from '../../src/verify/report.js';
import { formatMetrics } from '../../src/cli/prometheus.js';
import { type CliResult, runFleet } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  loadControlPlane,
  scratchDir,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';
import { kubeconfigObject } from '../support/kubeconfig.js';
import { closedPort } from '../support/net.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const [m1] = cp.members;
const BUILD = fileURLToPath(new URL('../prom-parser/build.sh', import.meta.url));

interface Family {
  name: string;
  help: string;
  type: string;
  samples: Array<{ labels: Record<string, string>; value: number }>;
}

let promparse: string;

/** Prometheus's parser on `text`: the families, or the parser's error. */
function parse(text: string): { families?: Map<string, Family>; error?: string } {
  const r = spawnSync(promparse, [], { input: text, encoding: 'utf8' });
  if (r.status !== 0) return { error: r.stderr.trim() };
  return { families: new Map((JSON.parse(r.stdout) as Family[]).map((f) => [f.name, f])) };
}

function families(res: CliResult): Map<string, Family> {
  const { families, error } = parse(res.stdout);
  assert.equal(error, undefined, `Prometheus's parser refused the output:\n${res.stdout}`);
  for (const f of families!.values()) {
    assert.equal(f.type, 'GAUGE', f.name);
    assert.ok(f.help.length > 10, `${f.name} has HELP`);
    assert.ok(f.samples.length > 0, `${f.name} has samples`);
  }
  return families!;
}

function noSecrets(secrets: string[], ...results: CliResult[]): void {
  for (const r of results)
    for (const s of secrets) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), 'a credential was printed');
}

const jwtExp = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { exp: number }).exp;

before(() => {
  promparse = buildScriptOutput(BUILD);
});

describe('the parser itself', () => {
  it('refuses broken text (so a pass below means something): an unescaped quote, a repeated series, a bad name', () => {
    assert.match(parse('# TYPE a gauge\na{x="b"c"} 1\n').error ?? '', /parse error/);
    assert.match(parse('# TYPE a gauge\na{x="b"} 1\na{x="b"} 2\n').error ?? '', /duplicate series/);
    assert.match(parse('a-b 1\n').error ?? '', /parse error/);
    assert.deepEqual(parse('# HELP a h\n# TYPE a gauge\na{x="q\\"\\\\\\n"} 1\n').families?.get('a')?.samples, [
      { labels: { x: 'q"\\\n' }, value: 1 },
    ]);
  });
});

describe("fleet's writer against the parser", () => {
  it('any label value reads back as written: 300 random strings of quotes, backslashes, line breaks, braces and Unicode', () => {
    const alphabet = ['\\', '"', '\n', '\r', '\t', '{', '}', ',', '=', ' ', 'a', 'Z', '0', 'é', '🙂', '\\n', '#'];
    let seed = 24;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const values = Array.from(
      { length: 300 },
      (_, i) => `${i}:` + Array.from({ length: 1 + rand(12) }, () => alphabet[rand(alphabet.length)]).join(''),
    );
    const text = formatMetrics([
      {
        name: 'fleet_test_value',
        help: 'A "help" text with \\ and\na line feed.',
        samples: values.map((v, i) => ({ labels: { v }, value: i })),
      },
    ]);
    const { families, error } = parse(text);
    assert.equal(error, undefined, text);
    const f = families!.get('fleet_test_value')!;
    assert.equal(f.help, 'A "help" text with \\ and\na line feed.');
    assert.deepEqual(
      f.samples.map((x) => x.labels.v),
      values,
    );
    assert.deepEqual(
      f.samples.map((x) => x.value),
      values.map((_, i) => i),
    );
  });
});

describe('creds list -o prometheus (live)', () => {
  const run = uniqueName('metrics');
  let token: string;
  let secretToken: string;
  let weirdPath: string;
  let weirdContext: string;
  let certFile: string;
  let certKey: string;
  let hubNs: string;

  before(async () => {
    const ns = uniqueName('metrics-sa');
    token = await createServiceAccountToken(cp.hub, ns, 'deployer', { duration: '2h' });
    secretToken = await createServiceAccountToken(cp.hub, ns, 'argo', { duration: '48h' });
    // A directory and a context whose names need escaping in a label value: a double quote, a backslash, a line feed.
    const dir = join(scratchDir(), `${run} "quoted" back\\slash`);
    mkdirSync(dir, { recursive: true });
    weirdPath = join(dir, 'a.kubeconfig');
    weirdContext = `ctx "q" \\ new\nline`;
    writeKubeconfig({
      path: weirdPath,
      server: cp.hub.url,
      caFile: cp.hub.caFile,
      context: weirdContext,
      user: { token },
    });
    const cert = await createCertUser(m1, { user: uniqueName('metrics-cert') });
    certFile = cert.kubeconfigPath;
    certKey = readFileSync(cert.keyFile, 'utf8').split('\n').slice(1, -2).join('');
    hubNs = uniqueName('metrics-hub');
    const label = { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' };
    const kubeconfig = yaml.dump(
      kubeconfigObject({ path: '', server: m1.url, caFile: m1.caFile, context: 'argo', user: { token: secretToken } }),
    );
    await applyYaml(
      cp.hub,
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'member-one', namespace: hubNs, labels: label },
          stringData: { kubeconfig },
        },
      ]
        .map((d) => yaml.dump(d))
        .join('---\n'),
    );
  });

  it("parses, and each credential's labels and values are the JSON output's: escaped path and context, expiry from the credential", async () => {
    const hubInNs = kubeconfigFor(
      cp.hub,
      { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
      { name: uniqueName('hub-ns'), namespace: hubNs },
    );
    const args = ['creds', 'list', '--kubeconfig', [weirdPath, certFile].join(':'), '--hub-kubeconfig', hubInNs];
    const [res, json] = await Promise.all([runFleet([...args, '-o', 'prometheus']), runFleet([...args, '-o', 'json'])]);
    assert.equal(res.code, json.code, res.stderr);
    assert.equal(res.code, 0, res.stderr);
    const list = json.json<CredentialList>();
    const f = families(res);
    assert.deepEqual([...f.keys()].sort(), [
      'fleet_credential_expiry_timestamp_seconds',
      'fleet_credential_info',
      'fleet_credential_issued_timestamp_seconds',
      'fleet_credential_problems',
    ]);
    const info = f.get('fleet_credential_info')!.samples;
    // One series per credential, in the JSON's order; the location (path and context included) survives escaping.
    assert.deepEqual(
      info.map((s) => s.labels.location),
      list.items.map((i) => i.location),
    );
    const mine = info.find((s) => s.labels.path === weirdPath)!;
    assert.ok(mine, `no series for ${weirdPath}: ${JSON.stringify(info.map((s) => s.labels))}`);
    assert.equal(mine.labels.context, weirdContext);
    assert.deepEqual(
      [mine.labels.source, mine.labels.method, mine.labels.identity, mine.value],
      ['kubeconfig', 'token', `system:serviceaccount:${mine.labels.identity.split(':')[2]}:deployer`, 1],
    );
    const expiry = f.get('fleet_credential_expiry_timestamp_seconds')!.samples;
    assert.equal(expiry.find((s) => s.labels.path === weirdPath)!.value, jwtExp(token));
    const certItem = list.items.find((i) => i.source.kind === 'kubeconfig' && i.source.path === certFile)!;
    assert.equal(expiry.find((s) => s.labels.path === certFile)!.value, Date.parse(certItem.expires!) / 1000);
    const secret = expiry.find((s) => s.labels.source === 'secret' && s.labels.namespace === hubNs)!;
    assert.deepEqual(
      [secret.labels.name, secret.labels.key, secret.value],
      ['member-one', 'kubeconfig', jwtExp(secretToken)],
    );
    for (const s of info) assert.ok(!Object.values(s.labels).some((v) => v.includes('eyJ')), 'no JWT in a label');
    noSecrets([token, secretToken, certKey], res, json);
  });

  it('--expiring-within: 1 for the credential inside the window, 0 outside, and the same exit 1 as the other formats', async () => {
    const res = await runFleet([
      'creds',
      'list',
      '--kubeconfig',
      [weirdPath, certFile].join(':'),
      '--expiring-within',
      '3h',
      '-o',
      'prometheus',
    ]);
    assert.equal(res.code, 1, 'a credential expiring within the window fails the run, whatever the format');
    const expiring = families(res).get('fleet_credential_expiring')!.samples;
    assert.deepEqual(
      expiring.map((s) => [s.labels.path, s.labels.within, s.value]),
      [
        [weirdPath, '3h', 1],
        [certFile, '3h', 0],
      ],
    );
    noSecrets([token, certKey], res);
  });

  it('--live: whether each credential still authenticates', async () => {
    const res = await runFleet([
      'creds',
      'list',
      '--kubeconfig',
      [weirdPath, certFile].join(':'),
      '--live',
      '-o',
      'prometheus',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(
      families(res)
        .get('fleet_credential_live_ok')!
        .samples.map((s) => [s.labels.path, s.value]),
      [
        [weirdPath, 1],
        [certFile, 1],
      ],
    );
    noSecrets([token, certKey], res);
  });
});

describe('clusters verify -o prometheus (live)', () => {
  it('one 0/1 series per check and status, equal to the JSON report; the cluster that is down fails reachable', async () => {
    const port = await closedPort();
    const down = kubeconfigFor(
      { ...m1, url: `https://127.0.0.1:${port}` },
      { token: 'x'.repeat(24) },
      { name: uniqueName('down') },
    );
    const args = ['clusters', 'verify', '--all', '--kubeconfig', [cp.hub.kubeconfig, down, m1.kubeconfig].join(':')];
    const [res, json] = await Promise.all([runFleet([...args, '-o', 'prometheus']), runFleet([...args, '-o', 'json'])]);
    assert.equal(res.code, 1);
    assert.equal(json.code, 1);
    const report = json.json<VerifyReport>();
    const f = families(res);
    const checks = f.get('fleet_verify_check')!.samples;
    for (const item of report.items) {
      for (const c of item.checks!) {
        const series = checks.filter((s) => s.labels.cluster === item.cluster && s.labels.check === c.name);
        assert.deepEqual(
          series.map((s) => [s.labels.status, s.value]).sort(),
          ['fail', 'pass', 'skip', 'warn'].map((st) => [st, st === c.status ? 1 : 0]),
          `${item.cluster} ${c.name}`,
        );
      }
    }
    assert.equal(
      checks.length,
      report.items.reduce((n, i) => n + i.checks!.length * 4, 0),
    );
    assert.deepEqual(
      f.get('fleet_verify_cluster_ok')!.samples.map((s) => [s.labels.cluster, s.value]),
      report.items.map((i) => [i.cluster, i.ok ? 1 : 0]),
    );
    assert.deepEqual(
      f.get('fleet_verify_cluster_ok')!.samples.map((s) => s.value),
      [1, 0, 1],
    );
    // Down is a failed check (reachable), not a verification cut short: no error series, the check says it.
    assert.equal(f.get('fleet_verify_cluster_error'), undefined);
    assert.deepEqual(
      checks
        .filter((s) => s.labels.cluster === report.items[1].cluster && s.labels.check === 'reachable' && s.value === 1)
        .map((s) => s.labels.status),
      ['fail'],
    );
    assert.deepEqual(f.get('fleet_verify_ok')!.samples, [{ labels: {}, value: 0 }]);
    assert.deepEqual(f.get('fleet_verify_clusters')!.samples, [{ labels: {}, value: 3 }]);
    const expiry = f.get('fleet_verify_credential_expiry_timestamp_seconds')!.samples;
    assert.equal(
      expiry.find((s) => s.labels.cluster === report.items[0].cluster)!.value,
      Date.parse(report.items[0].expires!) / 1000,
    );
    assert.equal(res.stderr, '', "stdout holds only metrics; the table's notes are not printed");
    noSecrets(['x'.repeat(24)], res);
  });

  it('a verification cut short (--cluster-timeout) is an error series with its kind, and the run fails', async () => {
    const res = await runFleet([
      'clusters',
      'verify',
      '--kubeconfig',
      cp.hub.kubeconfig,
      '--cluster-timeout',
      '1ms',
      '-o',
      'prometheus',
    ]);
    assert.equal(res.code, 1);
    const f = families(res);
    const cluster = `${cp.hub.kubeconfig}+hub`;
    assert.deepEqual(f.get('fleet_verify_cluster_error')!.samples, [
      { labels: { cluster, kind: 'timeout' }, value: 1 },
    ]);
    assert.deepEqual(f.get('fleet_verify_cluster_ok')!.samples, [{ labels: { cluster }, value: 0 }]);
  });
});

describe('-o prometheus elsewhere', () => {
  it('every other command refuses it: one line, exit 2, nothing contacted', async () => {
    const port = await closedPort();
    const down = kubeconfigFor(
      { ...m1, url: `https://127.0.0.1:${port}` },
      { token: 'y'.repeat(24) },
      { name: uniqueName('never') },
    );
    for (const [command, name] of [
      [['auth', 'rules'], 'auth rules'],
      [['auth', 'diff', '--all'], 'auth diff'],
      [['clusters', 'list'], 'clusters list'],
      [['auth', 'can-i', 'get', 'pods'], 'auth can-i'],
    ] as const) {
      const res = await runFleet([...command, '--kubeconfig', down, '-o', 'prometheus']);
      assert.equal(res.code, 2, `${name}: ${res.stderr}`);
      assert.equal(res.stdout, '');
      assert.equal(
        res.stderr,
        `error: -o prometheus: "${name}" has no metrics (creds list, creds rotate and clusters verify have); use -o table, wide, json, yaml or name\n`,
      );
    }
  });
});
