// The rotation CronJob as a Helm chart (deploy/chart) and a kustomize base (deploy/kustomize), with the upstream tools
// built from their Go modules (test/helm, test/kustomize, test/kubeconform, test/crane): lint and render, kubeconform
// against schemas made from the hub's own OpenAPI (test/support/kube-schemas.ts), the kustomize base against the chart's
// defaults, then `helm install` into the shared hub and `fleet creds rotate` run as the CronJob's Pod would run it (the
// chart's ServiceAccount token and CA where a Pod has them, the Secret the chart made as its /etc/fleet, the CronJob's own
// args), `helm upgrade` and `helm uninstall`, and the chart and fleet's image through a local OCI registry (`crane
// registry serve`). Every name is unique, so the file shares the hub with other tests.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { releaseTool, repoRoot } from '../support/binaries.js';
import { runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { writeKubeconformSchemas } from '../support/kube-schemas.js';

const cp = loadControlPlane();
const hub = cp.hub;
const member = cp.members[0];
const CHART = join(repoRoot, 'deploy/chart');
const BASE = join(repoRoot, 'deploy/kustomize');
const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
/** The hub RBAC docs/rotation.md names ("Least RBAC on the hub"), per namespace. */
const ROLE_RULES = [
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update', 'delete'] },
];
/** With rotate.all: the same cluster-wide, and `list secrets` for --all. */
const CLUSTER_RULES = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'update'] }, ROLE_RULES[1]];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { cwd: repoRoot, timeout: 300_000, maxBuffer: 64 << 20, env: { ...process.env, KUBECONFIG: '', ...o.env } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}`));
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
    // A program that exits before reading its stdin (most take none) closes the pipe: EPIPE there is not the failure;
    // its exit status and stderr, which the callback reports, are.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.stdin ?? '');
  });
}

async function ok(cmd: string, args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const r = await run(cmd, args, o);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
};

const parseAll = (text: string): Obj[] => (yaml.loadAll(text) as (Obj | null)[]).filter((o): o is Obj => !!o);
const byKey = (a: Obj, b: Obj) =>
  `${a.kind}/${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
    `${b.kind}/${b.metadata.namespace}/${b.metadata.name}`,
  );
const find = (objs: Obj[], kind: string, namespace?: string) =>
  objs.filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace));

/** The parts of a CronJob's Pod template the tests read. */
interface PodSpec {
  serviceAccountName: string;
  securityContext: object;
  volumes: { secret: { secretName: string; defaultMode: number } }[];
  containers: { image: string; args: string[]; env?: object[]; securityContext: object }[];
}

/** The CronJob's Pod template and its one container. */
function podOf(cronJob: Obj) {
  const spec = cronJob.spec as {
    schedule: string;
    jobTemplate: {
      spec: {
        completionMode?: string;
        completions?: number;
        parallelism?: number;
        template: { spec: PodSpec };
      };
    };
  };
  const pod = spec.jobTemplate.spec.template.spec;
  return { spec, job: spec.jobTemplate.spec, pod, container: pod.containers[0] };
}

let helm = '';
let kustomize = '';
let kubeconform = '';
let crane = '';
let schemaLocation = '';
const dir = join(scratchDir(), uniqueName('chart'));

const template = (release: string, namespace: string, args: string[] = []) =>
  run(helm, ['template', release, CHART, '--namespace', namespace, ...args]);

/** kubeconform over YAML documents, strict, against the hub's schemas; every resource must be checked, none skipped. */
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

describe('deploy/chart and deploy/kustomize: the rotation CronJob', { timeout: 1_800_000 }, () => {
  before(async () => {
    // Built by .ci/run beforehand; a cold cache builds them here (minutes each).
    helm = releaseTool('helm');
    kustomize = releaseTool('kustomize');
    kubeconform = releaseTool('kubeconform');
    crane = releaseTool('crane');
    mkdirSync(dir, { recursive: true });
    const schemas = await writeKubeconformSchemas(hub, join(dir, 'schemas'));
    assert.ok(schemas.files > 50, `only ${schemas.files} schemas from the hub's OpenAPI`);
    schemaLocation = schemas.location;
  });
  // The image's OCI layouts and build context are hundreds of MB: not left in the shared sandbox's scratch directory.
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("helm lint passes (strict) with the defaults and with rotate.all and shards; the chart's version is fleet's", async (t) => {
    const chart = yaml.load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    assert.deepEqual([chart.version, chart.appVersion], [VERSION, VERSION]);
    t.diagnostic((await ok(helm, ['version', '--short'])).trim());
    const lint = await ok(helm, ['lint', '--strict', CHART]);
    assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    await ok(helm, ['lint', '--strict', CHART, '--set', 'rotate.all=true,shards=4']);
  });

  it('values.schema.json and the templates refuse bad values with one line naming the value', async () => {
    const cases: [string[], RegExp][] = [
      [['--set', 'image.digest=sha256:nothex'], /image\.digest|\/image\/digest/],
      [['--set', 'rotate.secrets={not-a-namespace-slash-name}'], /rotate\.secrets|\/rotate\/secrets/],
      [['--set', 'rotate.expiringWithin=48'], /expiringWithin/],
      [['--set', 'rotate.output=xml'], /output/],
      [['--set', 'rotate.secret=a/b'], /additional properties 'secret' not allowed|secret/],
      [['--set-json', 'rotate.secrets=[]'], /rotate\.secrets is empty: name the hub Secrets to rotate/],
      [['--set', 'shards=3'], /shards: more than one shard splits the Secrets of --all/],
    ];
    for (const [args, expected] of cases) {
      const r = await template('bad', 'fleet-system', args);
      assert.notEqual(r.code, 0, `${args.join(' ')} was accepted:\n${r.stdout}`);
      assert.match(r.stderr, expected, args.join(' '));
      assert.equal(r.stdout, '', 'nothing rendered');
    }
  });

  it('a value with a line break cannot add fields to the Pod (hostPID, hostNetwork): helm lint --strict and helm template refuse it (issue 46)', async () => {
    // With rbac.create=false and serviceAccount.create=false, serviceAccount.name was rendered raw into the Pod spec:
    // this value added hostPID and hostNetwork to it, and `helm lint --strict` passed.
    const inject = 'x\n          hostPID: true\n          hostNetwork: true';
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rbac: { create: false }, serviceAccount: { create: false, name: inject } }, /\/serviceAccount\/name/],
      [{ serviceAccount: { name: inject } }, /\/serviceAccount\/name/],
      [{ config: { existingSecret: `mine${inject}` } }, /\/config\/existingSecret/],
      [{ timeZone: `UTC${inject}` }, /\/timeZone/],
      [{ imagePullSecrets: [{ name: `pull${inject}` }] }, /\/imagePullSecrets\/0\/name/],
      [{ serviceAccount: { name: 'Not_A_Name' } }, /\/serviceAccount\/name/],
    ];
    for (const [values, expected] of cases) {
      const file = join(dir, `${uniqueName('inject')}.values.yaml`);
      writeFileSync(file, yaml.dump(values));
      const lint = await run(helm, ['lint', '--strict', CHART, '-f', file]);
      assert.notEqual(lint.code, 0, `helm lint --strict passed ${JSON.stringify(values)}:\n${lint.stdout}`);
      assert.match(lint.stdout + lint.stderr, expected);
      const r = await template('bad', 'fleet-system', ['-f', file]);
      assert.notEqual(r.code, 0, `${JSON.stringify(values)} was rendered:\n${r.stdout}`);
      assert.match(r.stderr, expected);
      assert.equal(r.stdout, '', 'nothing rendered');
    }
    // What has no pattern is rendered through quote or toYaml: a config Secret's text stays inside its value.
    const file = join(dir, `${uniqueName('inject')}.values.yaml`);
    writeFileSync(
      file,
      yaml.dump({
        config: { fleetYaml: '   indented: 1\nhostPID: true\n', kubeconfigs: { 'm.yaml': 'a: b\n  hostPID: true\n' } },
        rotate: { extraArgs: [`--x${inject}`] },
      }),
    );
    const objs = parseAll(await ok(helm, ['template', 'r', CHART, '-f', file]));
    const secret = find(objs, 'Secret')[0] as Obj & { stringData: Record<string, string> };
    assert.deepEqual(secret.stringData, {
      'fleet.yaml': '   indented: 1\nhostPID: true\n',
      'm.yaml': 'a: b\n  hostPID: true\n',
    });
    const pod = podOf(find(objs, 'CronJob')[0]).pod as PodSpec & Record<string, unknown>;
    assert.equal(pod.hostPID, undefined);
    assert.ok(pod.containers[0].args.includes(`--x${inject}`));
  });

  it('helm template renders the CronJob of docs/rotation.md, and kubeconform finds every object valid against the hub', async (t) => {
    const defaults = await ok(helm, ['template', 'fleet-rotator', CHART, '--namespace', 'fleet-system']);
    const objs = parseAll(defaults);
    assert.deepEqual(objs.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort(), [
      'CronJob fleet-system/fleet-rotator',
      'Role fleet-system/fleet-rotator',
      'RoleBinding fleet-system/fleet-rotator',
      'Secret fleet-system/fleet-rotator-config',
      'ServiceAccount fleet-system/fleet-rotator',
    ]);
    const { spec, job, pod, container } = podOf(find(objs, 'CronJob')[0]);
    assert.equal(spec.schedule, '17 */6 * * *');
    assert.equal(pod.serviceAccountName, 'fleet-rotator');
    assert.equal(container.image, `ghcr.io/fleet-cli/fleet:${VERSION}`);
    assert.deepEqual(container.args, [
      'creds',
      'rotate',
      'fleet-system/member-1',
      '--expiring-within',
      '48h',
      '-o',
      'json',
      '--fleet-config',
      '/etc/fleet/fleet.yaml',
    ]);
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(container.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    assert.equal(job.completionMode, undefined);
    assert.deepEqual(find(objs, 'Role')[0].rules, ROLE_RULES);

    // By digest, --all over four shards (an Indexed Job and a ClusterRole), an existing Secret, no --expiring-within.
    const digest = `sha256:${'ab'.repeat(32)}`;
    const sharded = parseAll(
      await ok(helm, [
        'template',
        'rot',
        CHART,
        '--namespace',
        'ops',
        '--set',
        `rotate.all=true,shards=4,image.digest=${digest},config.existingSecret=mine,rotate.expiringWithin=`,
      ]),
    );
    assert.deepEqual(sharded.map((o) => o.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'CronJob',
      'ServiceAccount',
    ]);
    assert.deepEqual(find(sharded, 'ClusterRole')[0].rules, CLUSTER_RULES);
    const s = podOf(find(sharded, 'CronJob')[0]);
    assert.equal(s.container.image, `ghcr.io/fleet-cli/fleet@${digest}`);
    assert.deepEqual(s.container.args, [
      'creds',
      'rotate',
      '--all',
      '-o',
      'json',
      '--fleet-config',
      '/etc/fleet/fleet.yaml',
    ]);
    assert.deepEqual(s.container.env, [{ name: 'FLEET_SHARD_COUNT', value: '4' }]);
    assert.deepEqual([s.job.completionMode, s.job.completions, s.job.parallelism], ['Indexed', 4, 4]);
    assert.equal(s.pod.volumes[0].secret.secretName, 'mine');

    // Two namespaces of Secrets: a Role and RoleBinding in each, bound to the one ServiceAccount.
    const two = parseAll(
      await ok(helm, ['template', 'rot', CHART, '--namespace', 'ops', '--set', 'rotate.secrets={b/x,a/y,b/z}']),
    );
    assert.deepEqual(
      find(two, 'RoleBinding').map((b) => [b.metadata.namespace, (b.subjects as object[])[0]]),
      ['a', 'b'].map((ns) => [ns, { kind: 'ServiceAccount', name: 'rot-fleet-rotator', namespace: 'ops' }]),
    );

    const base = await ok(kustomize, ['build', BASE]);
    const all = [
      defaults,
      yaml.dump(sharded.find((o) => o.kind === 'CronJob')),
      yaml.dump(find(sharded, 'ClusterRole')[0]),
    ];
    for (const [what, docs] of [
      [
        'helm template (defaults, --all and shards, two namespaces)',
        [...all, ...two.map((o) => yaml.dump(o))].join('\n---\n'),
      ],
      ['kustomize build deploy/kustomize', base],
    ] as const) {
      const res = await conform(docs.replaceAll('\n---\n---\n', '\n---\n'));
      t.diagnostic(`kubeconform, ${what}: ${JSON.stringify(res.summary)}`);
      assert.equal(res.code, 0, `${what}:\n${JSON.stringify(res.resources, null, 1)}\n${res.stderr}`);
      assert.equal(res.summary.skipped + res.summary.invalid + res.summary.errors, 0, JSON.stringify(res.resources));
      assert.ok(res.summary.valid >= 5, JSON.stringify(res.summary));
    }

    // The schemas are strict and are the hub's: a misspelt field and a wrong type are caught.
    const bad = defaults
      .replace('readOnlyRootFilesystem: true', 'readOnlyRootFs: true')
      .replace('runAsUser: 65532', 'runAsUser: "65532"');
    const res = await conform(bad);
    assert.notEqual(res.code, 0);
    assert.equal(res.summary.invalid, 1, JSON.stringify(res.resources));
    const msg = res.resources.find((r) => r.status === 'statusInvalid')?.msg ?? '';
    assert.match(msg, /readOnlyRootFs/);
    assert.match(msg, /runAsUser/);
  });

  it("kustomize build deploy/kustomize is the chart's default render (as parsed objects, without Helm's own labels)", async () => {
    const withoutHelm = (o: Obj): Obj => {
      const copy = JSON.parse(JSON.stringify(o)) as Obj;
      const strip = (m?: { labels?: Record<string, string> }) => {
        if (m?.labels) {
          delete m.labels['helm.sh/chart'];
          delete m.labels['app.kubernetes.io/managed-by'];
        }
      };
      strip(copy.metadata);
      if (copy.kind === 'CronJob') {
        const spec = copy.spec as { jobTemplate: { metadata?: object; spec: { template: { metadata?: object } } } };
        strip(spec.jobTemplate.metadata);
        strip(spec.jobTemplate.spec.template.metadata);
      }
      return copy;
    };
    const chart = parseAll(await ok(helm, ['template', 'fleet-rotator', CHART, '--namespace', 'fleet-system']));
    const base = parseAll(await ok(kustomize, ['build', BASE]));
    assert.deepEqual(base.sort(byKey), chart.map(withoutHelm).sort(byKey));
  });

  describe('installed into the hub', () => {
    const release = uniqueName('rot');
    const ns = `${release}-fleet`; // the release's namespace and the one of the Secret it rotates
    const other = `${release}-other`; // a namespace the chart is not told about
    const extra = `${release}-extra`; // added by an upgrade, removed by the next
    const memberNs = `${release}-sys`;
    const fullname = `${release}-fleet-rotator`;
    const values = join(dir, `${release}.values.yaml`);
    const helmEnv = {
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    };
    const h = (args: string[]) => ok(helm, [...args, '--kubeconfig', hub.kubeconfig], { env: helmEnv });
    const secrets = new Set<string>();
    // A stand-in for the Pushgateway the chart's pushgateway.url names: it records what fleet PUTs.
    const pushes: { method?: string; url?: string; body: string }[] = [];
    const gateway = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        pushes.push({ method: req.method, url: req.url, body });
        res.end();
      });
    });

    before(() => new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r)));
    after(async () => {
      gateway.close();
      await run(helm, ['uninstall', release, '--namespace', ns, '--kubeconfig', hub.kubeconfig], { env: helmEnv });
      for (const n of [ns, other, extra]) await kubectlResult(hub, ['delete', 'namespace', n, '--wait=false']);
      await kubectlResult(member, ['delete', 'namespace', memberNs, '--wait=false']);
    });

    it("helm install; creds rotate with the chart's ServiceAccount and nothing else rotates its Secret, and is refused in a namespace the chart did not grant", async (t) => {
      for (const n of [ns, other, extra])
        await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }));
      // Two consumer Secrets written by creds generate: one the chart is told to rotate, one in another namespace.
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
      // The member's kubeconfig (fleet's identity there) goes into the Secret the chart creates.
      writeFileSync(
        values,
        yaml.dump({
          rotate: { secrets: [`${ns}/member-1`] },
          pushgateway: { url: `http://127.0.0.1:${(gateway.address() as { port: number }).port}` },
          config: { kubeconfigs: { 'member-1.kubeconfig': readFileSync(member.kubeconfig, 'utf8') } },
        }),
        { mode: 0o600 },
      );
      const started = Date.now();
      const notes = await h(['install', release, CHART, '--namespace', ns, '--values', values, '--wait']);
      t.diagnostic(`helm install ${Date.now() - started} ms`);
      assert.match(
        notes,
        new RegExp(`kubectl create job --namespace ${ns} --from=cronjob/${fullname} ${fullname}-first`),
      );
      assert.match(notes, new RegExp(`in: ${ns}\\n`));

      // What the chart granted: one RoleBinding names its ServiceAccount anywhere on the hub, to a Role of exactly
      // the rules docs/rotation.md names.
      const sa = `system:serviceaccount:${ns}:${fullname}`;
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
      assert.deepEqual(role.rules, ROLE_RULES);

      // The Pod, as the kubelet would make it from the installed CronJob: its token and CA at the in-cluster paths,
      // the chart's Secret as /etc/fleet, and the CronJob's own args.
      const cronJob = JSON.parse(await kubectl(hub, ['get', 'cronjob', fullname, '-n', ns, '-o', 'json'])) as Obj;
      const { container, pod: podSpec } = podOf(cronJob);
      assert.equal(podSpec.serviceAccountName, fullname);
      assert.equal(podSpec.volumes[0].secret.defaultMode, 0o400);
      const pod = join(dir, release);
      const etc = join(pod, 'etc-fleet');
      mkdirSync(join(pod, 'serviceaccount'), { recursive: true });
      mkdirSync(etc, { recursive: true });
      const config = JSON.parse(
        await kubectl(hub, ['get', 'secret', podSpec.volumes[0].secret.secretName, '-n', ns, '-o', 'json']),
      ) as { data: Record<string, string> };
      assert.deepEqual(Object.keys(config.data).sort(), ['fleet.yaml', 'member-1.kubeconfig']);
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
      const args = container.args.map((a) => (a === '/etc/fleet/fleet.yaml' ? join(etc, 'fleet.yaml') : a));
      // --expiring-within 48h selects the 2h credential.
      const before = JSON.parse(await kubectl(hub, ['get', 'secret', 'member-1', '-n', ns, '-o', 'json'])) as Obj & {
        data: Record<string, string>;
      };
      const res = await runFleet(args, { env, cwd: pod });
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const report = res.json<{
        hub: string;
        items: { status: string; secret: { namespace: string; name: string } }[];
      }>();
      assert.equal(report.hub, 'in-cluster');
      assert.deepEqual(
        report.items.map((i) => [i.secret.namespace, i.secret.name, i.status]),
        [[ns, 'member-1', 'rotated']],
      );
      const afterRotate = JSON.parse(await kubectl(hub, ['get', 'secret', 'member-1', '-n', ns, '-o', 'json'])) as {
        data: Record<string, string>;
      };
      assert.notDeepEqual(afterRotate.data, before.data, 'the Secret holds a new credential');
      for (const s of secrets) assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), 'a token in the output');
      // The metrics went to the Pushgateway of the values, beside the JSON in the log.
      assert.deepEqual(
        pushes.map((p) => [p.method, p.url]),
        [['PUT', '/metrics/job/fleet_creds_rotate']],
      );
      assert.match(
        pushes[0].body,
        new RegExp(
          `^fleet_rotation_status\\{hub="in-cluster",namespace="${ns}",name="member-1",status="rotated"\\} 1$`,
          'm',
        ),
      );

      // A namespace the chart was not told about: refused, said clearly, the Secret untouched.
      const untouched = await kubectl(hub, [
        'get',
        'secret',
        'member-1',
        '-n',
        other,
        '-o',
        'jsonpath={.metadata.resourceVersion}',
      ]);
      const refused = await runFleet(
        ['creds', 'rotate', `${other}/member-1`, '-o', 'json', '--fleet-config', join(etc, 'fleet.yaml')],
        { env, cwd: pod },
      );
      t.diagnostic(`refused: ${refused.stderr.trim()}`);
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stderr, new RegExp(`${other}/member-1`));
      assert.match(refused.stderr, new RegExp(`forbidden|cannot get|not allowed`, 'i'));
      assert.match(refused.stderr, new RegExp(sa.replaceAll(':', '\\:').replaceAll('.', '\\.')));
      assert.equal(
        await kubectl(hub, ['get', 'secret', 'member-1', '-n', other, '-o', 'jsonpath={.metadata.resourceVersion}']),
        untouched,
      );
      // No rotation Lease is left in the granted namespace.
      assert.equal((await kubectl(hub, ['get', 'leases', '-n', ns, '-o', 'name'])).trim(), '');

      // NOTES' first run by hand: the Job made from the CronJob runs the same Pod (no kubelet here to run it).
      await kubectl(hub, ['create', 'job', '--namespace', ns, `--from=cronjob/${fullname}`, `${fullname}-first`]);
      const first = JSON.parse(await kubectl(hub, ['get', 'job', `${fullname}-first`, '-n', ns, '-o', 'json'])) as {
        spec: { template: { spec: { containers: { args: string[] }[] } } };
      };
      assert.deepEqual(first.spec.template.spec.containers[0].args, container.args);
    });

    it("helm upgrade adds and removes a namespace's Role; helm uninstall leaves nothing of the chart behind", async (t) => {
      const withExtra = await h([
        'upgrade',
        release,
        CHART,
        '--namespace',
        ns,
        '--values',
        values,
        '--set',
        `rotate.secrets={${ns}/member-1,${extra}/member-2},schedule=5 */2 * * *`,
        '--wait',
      ]);
      assert.match(withExtra, new RegExp(`in: ${extra}, ${ns}\\n|in: ${ns}, ${extra}\\n`));
      const role = JSON.parse(await kubectl(hub, ['get', 'role', fullname, '-n', extra, '-o', 'json'])) as {
        rules: object[];
      };
      assert.deepEqual(role.rules, ROLE_RULES);
      assert.equal(
        await kubectl(hub, ['get', 'cronjob', fullname, '-n', ns, '-o', 'jsonpath={.spec.schedule}']),
        '5 */2 * * *',
      );
      await h(['upgrade', release, CHART, '--namespace', ns, '--values', values, '--wait']);
      const gone = await kubectlResult(hub, ['get', 'role,rolebinding', fullname, '-n', extra]);
      assert.notEqual(gone.code, 0, gone.stdout);
      assert.match(gone.stderr, /NotFound/);
      const history = await h(['history', release, '--namespace', ns, '-o', 'json']);
      assert.equal((JSON.parse(history) as object[]).length, 3);

      await h(['uninstall', release, '--namespace', ns, '--wait']);
      // Everything the chart made carries its instance label; Helm's release records are Secrets owned by helm. The
      // Job made by hand from the CronJob is collected by the garbage collector (its owner is the CronJob).
      const kinds =
        'cronjobs,jobs,serviceaccounts,secrets,roles,rolebindings,clusterroles,clusterrolebindings,configmaps';
      const deadline = Date.now() + 60_000;
      let left: string[];
      for (;;) {
        left = [
          ...(
            await kubectl(hub, ['get', kinds, '-A', '-l', `app.kubernetes.io/instance=${release}`, '-o', 'name'])
          ).split('\n'),
          ...(await kubectl(hub, ['get', 'secrets', '-A', '-l', `owner=helm,name=${release}`, '-o', 'name'])).split(
            '\n',
          ),
          ...(await kubectl(hub, ['get', 'jobs,leases', '-n', ns, '-o', 'name'])).split('\n'),
        ].filter(Boolean);
        if (left.length === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.deepEqual(left, []);
      // What is left in the namespaces is what creds generate wrote, which the chart never owned.
      const remains = (
        await kubectl(hub, ['get', 'all,secrets,serviceaccounts,roles,rolebindings,leases', '-n', ns, '-o', 'name'])
      )
        .split('\n')
        .filter(Boolean);
      t.diagnostic(`left in ${ns} after uninstall: ${remains.join(', ')}`);
      assert.deepEqual(remains.sort(), ['secret/member-1', 'serviceaccount/default']);
    });
  });

  it('an overlay of the kustomize base (its namespace, image digest and Secret) applies to the hub and deletes without a trace', async (t) => {
    const ns = uniqueName('kust');
    const overlay = join(dir, ns);
    mkdirSync(overlay, { recursive: true });
    const digest = `sha256:${'cd'.repeat(32)}`;
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      yaml.dump({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        namespace: ns,
        resources: [relative(overlay, BASE)],
        images: [{ name: 'ghcr.io/fleet-cli/fleet', digest }],
        patches: [
          {
            target: { kind: 'CronJob', name: 'fleet-rotator' },
            patch: yaml.dump([
              {
                op: 'replace',
                path: '/spec/jobTemplate/spec/template/spec/containers/0/args/2',
                value: `${ns}/member-1`,
              },
            ]),
          },
        ],
      }),
    );
    const built = await ok(kustomize, ['build', overlay]);
    await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    try {
      await kubectl(hub, ['apply', '--server-side', '--field-manager=fleet-e2e', '-f', '-'], { stdin: built });
      const cronJob = JSON.parse(
        await kubectl(hub, ['get', 'cronjob', 'fleet-rotator', '-n', ns, '-o', 'json']),
      ) as Obj;
      const { container, pod } = podOf(cronJob);
      assert.equal(container.image, `ghcr.io/fleet-cli/fleet@${digest}`);
      assert.equal(container.args[2], `${ns}/member-1`);
      assert.equal(pod.volumes[0].secret.defaultMode, 0o400);
      const role = JSON.parse(await kubectl(hub, ['get', 'role', 'fleet-rotator', '-n', ns, '-o', 'json'])) as {
        rules: object[];
      };
      assert.deepEqual(role.rules, ROLE_RULES);
      const binding = JSON.parse(
        await kubectl(hub, ['get', 'rolebinding', 'fleet-rotator', '-n', ns, '-o', 'json']),
      ) as { subjects: object[] };
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'fleet-rotator', namespace: ns }]);
      await kubectl(hub, ['delete', '--wait', '-f', '-'], { stdin: built });
      const left = (
        await kubectl(hub, [
          'get',
          'cronjobs,serviceaccounts,secrets,roles,rolebindings',
          '-n',
          ns,
          '-l',
          'app.kubernetes.io/instance=fleet-rotator',
          '-o',
          'name',
        ])
      ).trim();
      t.diagnostic(`applied and deleted ${parseAll(built).length} objects in ${ns}`);
      assert.equal(left, '');
    } finally {
      await kubectlResult(hub, ['delete', 'namespace', ns, '--wait=false']);
    }
  });

  describe('through a local OCI registry (crane registry serve)', () => {
    let registry: ChildProcess | undefined;
    let host = '';
    const release = uniqueName('oci');
    const ns = `${release}-fleet`;
    const helmEnv = {
      HELM_CACHE_HOME: join(dir, 'oci-cache'),
      HELM_CONFIG_HOME: join(dir, 'oci-config'),
      HELM_DATA_HOME: join(dir, 'oci-data'),
    };
    const imageTag = `localhost/fleet:${release}`;

    before(async () => {
      const port = await new Promise<number>((resolve) => {
        const srv = createServer().listen(0, '127.0.0.1', () => {
          const p = (srv.address() as { port: number }).port;
          srv.close(() => resolve(p));
        });
      });
      host = `127.0.0.1:${port}`;
      registry = spawn(crane, ['registry', 'serve', '--address', host], { stdio: ['ignore', 'ignore', 'pipe'] });
      for (let i = 0; ; i++) {
        const r = await fetch(`http://${host}/v2/`).catch(() => undefined);
        if (r?.ok) break;
        assert.ok(i < 100, 'crane registry serve did not answer on /v2/');
        await new Promise((res) => setTimeout(res, 100));
      }
    });
    after(async () => {
      registry?.kill();
      await run(helm, ['uninstall', release, '--namespace', ns, '--kubeconfig', hub.kubeconfig], { env: helmEnv });
      await kubectlResult(hub, ['delete', 'namespace', ns, '--wait=false']);
    });

    it("fleet's image is pushed with crane and pulled by digest; the chart is pushed with helm push and installed from oci:// with that digest", async (t) => {
      // The image: fleet's own, built by scripts/image.sh with its cached base (as test/e2e/image.test.ts builds it),
      // copied out of buildah's storage as an OCI layout and pushed with crane.
      const storage = join(
        process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'),
        'fleet/image/storage',
      );
      const buildahEnv = { STORAGE_DRIVER: 'vfs', BUILDAH_ISOLATION: 'chroot', FLEET_IMAGE_STORAGE: storage };
      const started = Date.now();
      await ok('bash', ['scripts/image.sh', '--skip-build', '--tag', imageTag, '--context', join(dir, 'image')], {
        env: buildahEnv,
      });
      const layout = join(dir, 'fleet-oci');
      const g = ['--root', storage, '--runroot', `${storage}-run`];
      try {
        await ok('buildah', [...g, 'push', imageTag, `oci:${layout}:${VERSION}`], { env: buildahEnv });
      } finally {
        await run('buildah', [...g, 'rmi', imageTag], { env: buildahEnv });
      }
      t.diagnostic(`image built and exported in ${Date.now() - started} ms`);
      const repo = `${host}/fleet-cli/fleet`;
      const pushed = (await ok(crane, ['push', '--insecure', layout, `${repo}:${VERSION}`])).trim();
      const digest = (await ok(crane, ['digest', '--insecure', `${repo}:${VERSION}`])).trim();
      assert.match(digest, /^sha256:[0-9a-f]{64}$/);
      assert.equal(pushed, `${repo}@${digest}`);
      // Pulled by digest: the manifest's own hash is the digest, and its config says the image's user and entry point.
      const manifest = await ok(crane, ['manifest', '--insecure', `${repo}@${digest}`]);
      assert.equal(`sha256:${createHash('sha256').update(manifest).digest('hex')}`, digest);
      const imgConfig = JSON.parse(await ok(crane, ['config', '--insecure', `${repo}@${digest}`])) as {
        config: { User: string; Entrypoint: string[] };
      };
      assert.deepEqual([imgConfig.config.User, imgConfig.config.Entrypoint], ['65532:65532', ['/usr/local/bin/fleet']]);
      const pulled = join(dir, 'pulled-oci');
      await ok(crane, ['pull', '--insecure', '--format', 'oci', `${repo}@${digest}`, pulled]);
      const index = JSON.parse(readFileSync(join(pulled, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
      assert.deepEqual(
        index.manifests.map((m) => m.digest),
        [digest],
      );

      // The chart: packaged, pushed, installed from the registry pinned to the image's digest.
      const pkgDir = join(dir, 'pkg');
      mkdirSync(pkgDir, { recursive: true });
      const pkg = await ok(helm, ['package', CHART, '--destination', pkgDir], { env: helmEnv });
      const tgz = join(pkgDir, `fleet-rotator-${VERSION}.tgz`);
      assert.match(pkg, new RegExp(tgz.replaceAll('.', '\\.')));
      const push = await run(helm, ['push', tgz, `oci://${host}/charts`, '--plain-http'], { env: helmEnv });
      assert.equal(push.code, 0, push.stderr);
      const chartDigest = /Digest: (sha256:[0-9a-f]{64})/.exec(push.stdout + push.stderr)?.[1];
      assert.ok(chartDigest, push.stdout + push.stderr);
      t.diagnostic(`chart ${host}/charts/fleet-rotator:${VERSION}@${chartDigest}, image ${repo}@${digest}`);
      const chartManifest = JSON.parse(
        await ok(crane, ['manifest', '--insecure', `${host}/charts/fleet-rotator:${VERSION}`]),
      ) as {
        config: { mediaType: string };
      };
      assert.equal(chartManifest.config.mediaType, 'application/vnd.cncf.helm.config.v1+json');

      await applyYaml(hub, yaml.dump({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
      await ok(
        helm,
        [
          'install',
          release,
          `oci://${host}/charts/fleet-rotator`,
          '--version',
          VERSION,
          '--plain-http',
          '--namespace',
          ns,
          '--kubeconfig',
          hub.kubeconfig,
          '--wait',
          '--set',
          `rotate.secrets={${ns}/member-1},image.repository=${repo},image.digest=${digest}`,
        ],
        { env: helmEnv },
      );
      const image = await kubectl(hub, [
        'get',
        'cronjob',
        `${release}-fleet-rotator`,
        '-n',
        ns,
        '-o',
        'jsonpath={.spec.jobTemplate.spec.template.spec.containers[0].image}',
      ]);
      assert.equal(image, `${repo}@${digest}`);
      const meta = JSON.parse(
        await ok(helm, ['get', 'metadata', release, '--namespace', ns, '--kubeconfig', hub.kubeconfig, '-o', 'json'], {
          env: helmEnv,
        }),
      ) as { chart: string; version: string; appVersion: string; status: string };
      assert.deepEqual(
        [meta.chart, meta.version, meta.appVersion, meta.status],
        ['fleet-rotator', VERSION, VERSION, 'deployed'],
      );
    });
  });
});
