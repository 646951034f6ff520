// fleet wi token, the exec credential plugin, used by its real consumers on the real control plane (issue 25):
// - the protocol itself (KUBERNETES_EXEC_INFO in, one ExecCredential out, one-line errors, nothing secret on stderr),
//   and its wall time per call;
// - cluster-inventory: `wi setup --consumer cluster-inventory --apply` writes the ClusterProfile's access provider and
//   the provider file; upstream's access library (sigs.k8s.io/cluster-inventory-api pkg/access, built from its Go
//   module by test/wi-consumer/build.sh) reaches the member as hub:system:serviceaccount:NS:NAME, with the plugin
//   running as a controller's own ServiceAccount (in-cluster configuration) and no Secret anywhere; fleet's own
//   cluster-inventory provider lists the profile and uses it;
// - kubeconfig: kubectl with the file `wi setup --consumer kubeconfig --out` wrote (no token in it), from --kubeconfig,
//   KUBECONFIG, a relative path and a symlink; creds list calls it workload-identity; clusters verify runs the plugin;
// - argocd: the cluster Secret's execProviderConfig, run by client-go (kubectl) exactly as written, and read by Argo CD's
//   own v1alpha1 types (test/argocd-consumer, v3.2: before provideClusterInfo and config) into the rest.Config it uses;
// - wi doctor on broken plugin setups: a wrong audience, a plugin identity that may not request tokens, a member that
//   does not trust the hub.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, FLEET_BIN, runFleet } from '../support/cli.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import {
  apiRequest,
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1] = cp.members;
const CONSUMER_BUILD = fileURLToPath(new URL('../wi-consumer/build.sh', import.meta.url));
const ARGOCD_CONSUMER_BUILD = fileURLToPath(new URL('../argocd-consumer/build.sh', import.meta.url));
const ns = uniqueName('witok');
const sa = 'app';
const USER = `hub:system:serviceaccount:${ns}:${sa}`;
const KUBECONFIGS = `${hub.kubeconfig}:${m1.kubeconfig}`;
// The plugin is bin/run.js (#!/usr/bin/env node): Node 22+ first on PATH for every program that runs it.
const PATH = `${dirname(process.execPath)}:${process.env.PATH}`;
const EMPTY_HOME = join(scratchDir(), 'empty-home');
mkdirSync(EMPTY_HOME, { recursive: true });

/** Every secret a test made or saw, grepped for in every output. */
const secrets: string[] = [];

function assertClean(what: string, ...outputs: string[]) {
  for (const out of outputs) {
    assert.doesNotMatch(out, /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, `a JWT appears in the output of ${what}`);
    for (const s of secrets) assert.ok(!out.includes(s), `a secret appears in the output of ${what}`);
  }
}

function fleet(args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return runFleet(args, { timeoutMs: 120_000, env: { PATH, ...o.env }, cwd: o.cwd });
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A program with exactly this environment (nothing inherited but what is given). */
function runWith(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, cwd, timeout: 90_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
        // A string code (ENOENT, EACCES, ERR_CHILD_PROCESS_STDIO_MAXBUFFER): the run failed, not the program.
        const failed: Error = err;
        return reject(failed);
      }
      resolve({
        code: err ? ((err as { code?: number }).code ?? 1) : 0,
        stdout,
        stderr,
        ms: Number(process.hrtime.bigint() - start) / 1e6,
      });
    });
  });
}

const execInfo = (cluster?: Record<string, unknown>, apiVersion = 'client.authentication.k8s.io/v1') =>
  JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false, ...(cluster ? { cluster } : {}) } });

/** The plugin as client-go runs it: env only (HOME empty, no KUBECONFIG), KUBERNETES_EXEC_INFO set. */
function plugin(args: string[], info: string | undefined, extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { PATH, HOME: EMPTY_HOME, ...extraEnv };
  if (info !== undefined) env.KUBERNETES_EXEC_INFO = info;
  return runWith(process.execPath, [FLEET_BIN, 'wi', 'token', ...args], env);
}

async function whoamiWithToken(
  server: { url: string; caFile: string },
  token: string,
): Promise<{ status: number; username?: string }> {
  const r = await apiRequest({
    url: server.url,
    caFile: server.caFile,
    token,
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return {
    status: r.status,
    username: r.status === 201 ? (JSON.parse(r.body).status.userInfo.username as string) : undefined,
  };
}

/** The in-cluster configuration of a Pod on the hub running as ns/name: what a controller's plugin sees. */
async function inClusterEnv(name: string): Promise<NodeJS.ProcessEnv> {
  const token = (await kubectl(hub, ['-n', ns, 'create', 'token', name, '--duration', '1h'])).trim();
  secrets.push(token);
  const file = join(scratchDir(), `${uniqueName(name)}.token`);
  writeFileSync(file, token, { mode: 0o600 });
  return {
    PATH,
    HOME: EMPTY_HOME,
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: String(hub.port),
    FLEET_IN_CLUSTER_TOKEN_FILE: file,
    FLEET_IN_CLUSTER_CA_FILE: hub.caFile,
  };
}

describe('fleet wi token (live)', () => {
  before(async () => {
    await applyYaml(
      hub,
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${sa}\n  namespace: ${ns}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ctrl\n  namespace: ${ns}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ctrl-without-grant\n  namespace: ${ns}\n`,
    );
    await applyYaml(m1, `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`);
  });

  // Later files share the control plane: the profiles (whose access provider creds list --live would run), the
  // ServiceAccounts and the grants go with the namespaces.
  after(async () => {
    await kubectlResult(hub, ['delete', 'namespace', ns, `${ns}-argocd`, '--ignore-not-found', '--wait=false']);
    await kubectlResult(m1, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
    await kubectlResult(m1, ['delete', 'clusterrolebinding', `fleet-wi:hub:${ns}:${sa}`, '--ignore-not-found']);
  });

  describe('the exec credential protocol', () => {
    const cluster = () => ({ server: m1.url, config: { serviceAccount: `${ns}/${sa}` } });

    it('answers KUBERNETES_EXEC_INFO with only an ExecCredential whose token the member maps to the hub ServiceAccount', async () => {
      const r = await plugin(['--hub-kubeconfig', hub.kubeconfig], execInfo(cluster()));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const cred = JSON.parse(r.stdout);
      assert.deepEqual(Object.keys(cred).sort(), ['apiVersion', 'kind', 'status']);
      assert.equal(cred.apiVersion, 'client.authentication.k8s.io/v1');
      assert.equal(cred.kind, 'ExecCredential');
      assert.deepEqual(Object.keys(cred.status).sort(), ['expirationTimestamp', 'token']);
      secrets.push(cred.status.token);
      const left = Date.parse(cred.status.expirationTimestamp) - Date.now();
      assert.ok(left > 50 * 60_000 && left <= 60 * 60_000 + 5_000, `expires in ${left} ms, expected about 1h`);
      const claims = JSON.parse(Buffer.from(cred.status.token.split('.')[1], 'base64url').toString());
      assert.deepEqual(claims.aud, [m1.url]);
      assert.equal(claims.sub, `system:serviceaccount:${ns}:${sa}`);
      assert.deepEqual(await whoamiWithToken(m1, cred.status.token), { status: 201, username: USER });
      // Another member does not accept it: the audience is this member's URL.
      assert.equal((await whoamiWithToken(cp.members[1], cred.status.token)).status, 401);
    });

    it('answers in the apiVersion it was asked in, takes the ServiceAccount from a flag, and honours expirationSeconds', async () => {
      const beta = await plugin(
        ['--hub-kubeconfig', hub.kubeconfig, '--service-account', `${ns}/${sa}`],
        execInfo({ server: m1.url }, 'client.authentication.k8s.io/v1beta1'),
      );
      assert.equal(beta.code, 0, beta.stderr);
      assert.equal(JSON.parse(beta.stdout).apiVersion, 'client.authentication.k8s.io/v1beta1');
      secrets.push(JSON.parse(beta.stdout).status.token);
      const short = await plugin(
        ['--hub-kubeconfig', hub.kubeconfig],
        execInfo({ server: m1.url, config: { serviceAccount: `${ns}/${sa}`, expirationSeconds: 900 } }),
      );
      assert.equal(short.code, 0, short.stderr);
      const left = Date.parse(JSON.parse(short.stdout).status.expirationTimestamp) - Date.now();
      secrets.push(JSON.parse(short.stdout).status.token);
      assert.ok(left > 13 * 60_000 && left <= 15 * 60_000 + 5_000, `expires in ${left} ms, expected about 15m`);
    });

    it('finds the hub by the one hub rule: --hub-kubeconfig (absolute, relative, symlink), KUBECONFIG, ./fleet.yaml, FLEET_CONFIG', async () => {
      const dir = join(scratchDir(), uniqueName('hubrule'));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'hub.yaml'), readFileSync(hub.kubeconfig));
      symlinkSync(join(dir, 'hub.yaml'), join(dir, 'hub-link.yaml'));
      const withFleetYaml = join(dir, 'with-config');
      mkdirSync(withFleetYaml);
      writeFileSync(
        join(withFleetYaml, 'fleet.yaml'),
        `kind: FleetConfig\nhub: {kubeconfig: ${join(dir, 'hub.yaml')}}\nproviders:\n  - {name: members, type: file, kubeconfig: [${m1.kubeconfig}]}\n`,
      );
      // Found by itself in the working directory, a fleet.yaml may not name files (issue 38): it may choose the hub's
      // context among the user's own kubeconfig's, and the one naming files is used when named (FLEET_CONFIG below).
      const contextOnly = join(dir, 'context-only');
      mkdirSync(contextOnly);
      writeFileSync(
        join(contextOnly, 'fleet.yaml'),
        'kind: FleetConfig\nhub: {context: hub}\nproviders:\n  - {name: members, type: file}\n',
      );
      const base = { PATH, HOME: EMPTY_HOME, KUBERNETES_EXEC_INFO: execInfo(cluster()) };
      const refused = await runWith(process.execPath, [FLEET_BIN, 'wi', 'token'], base, withFleetYaml);
      const local = join(withFleetYaml, 'fleet.yaml');
      assert.deepEqual(
        [refused.code, refused.stdout, refused.stderr],
        [
          2,
          '',
          `error: ${local}: hub.kubeconfig: a fleet.yaml found in the working directory may not name programs or files (it may come from a checkout of someone else's code); if you trust it, name it: --fleet-config ${local} (or FLEET_CONFIG=${local})\n`,
        ],
      );
      const ways: Array<[string, string[], NodeJS.ProcessEnv, string]> = [
        ['absolute', ['--hub-kubeconfig', join(dir, 'hub.yaml')], base, dir],
        ['relative', ['--hub-kubeconfig', 'hub.yaml'], base, dir],
        ['symlink', ['--hub-kubeconfig', 'hub-link.yaml', '--hub-context', 'hub'], base, dir],
        ['KUBECONFIG', [], { ...base, KUBECONFIG: join(dir, 'hub-link.yaml') }, dir],
        ['./fleet.yaml naming the hub context', [], { ...base, KUBECONFIG: join(dir, 'hub.yaml') }, contextOnly],
        ['FLEET_CONFIG', [], { ...base, FLEET_CONFIG: join(withFleetYaml, 'fleet.yaml') }, dir],
      ];
      for (const [what, args, env, cwd] of ways) {
        const r = await runWith(process.execPath, [FLEET_BIN, 'wi', 'token', ...args], env, cwd);
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        const token = JSON.parse(r.stdout).status.token;
        secrets.push(token);
        assert.deepEqual(await whoamiWithToken(m1, token), { status: 201, username: USER }, what);
      }
    });

    it('fails with one line on stderr, nothing on stdout and no secret, before contacting the hub when the input is wrong', async () => {
      const cases: Array<{ args: string[]; info: string | undefined; code: number; match: RegExp }> = [
        {
          args: ['--hub-kubeconfig', hub.kubeconfig],
          info: execInfo({ server: m1.url }),
          code: 2,
          match: /no ServiceAccount: pass --service-account/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig, '--service-account', `${ns}/other`],
          info: execInfo(cluster()),
          code: 2,
          match: /--service-account .*\/other and the cluster's exec config .* disagree/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig, '--service-account', `${ns}/${sa}`],
          info: execInfo(),
          code: 2,
          match: /no audience: KUBERNETES_EXEC_INFO carries no spec\.cluster\.server/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig],
          info: '{not json',
          code: 2,
          match: /KUBERNETES_EXEC_INFO: not valid JSON/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig, '-o', 'yaml'],
          info: execInfo(cluster()),
          code: 2,
          match: /-o yaml: fleet wi token prints the ExecCredential, which is JSON/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig],
          info: execInfo({ server: m1.url, config: { serviceAcount: `${ns}/${sa}` } }),
          code: 2,
          match: /unknown key "serviceAcount"/,
        },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig],
          info: execInfo(cluster(), 'client.authentication.k8s.io/v2'),
          code: 2,
          match: /apiVersion "client.authentication.k8s.io\/v2"/,
        },
        {
          args: ['--hub-kubeconfig', '/nonexistent/hub.kubeconfig'],
          info: execInfo(cluster()),
          code: 2,
          match: /\/nonexistent\/hub\.kubeconfig/,
        },
        { args: [], info: execInfo(cluster()), code: 2, match: /no kubeconfig found/ },
        {
          args: ['--hub-kubeconfig', hub.kubeconfig],
          info: execInfo({ server: m1.url, config: { serviceAccount: `${ns}/missing` } }),
          code: 1,
          match: /^error: hub hub: TokenRequest for .*\/missing: serviceaccounts "missing" not found$/,
        },
        {
          args: ['--hub-kubeconfig', tokenUser(hub, 'alice').kubeconfigPath],
          info: execInfo(cluster()),
          code: 1,
          match: /forbidden/,
        },
      ];
      for (const c of cases) {
        const r = await plugin(c.args, c.info);
        const what = `wi token ${c.args.join(' ')} with ${c.info}`;
        assert.equal(r.code, c.code, `${what}: ${r.stderr}`);
        // -o yaml asks for errors as YAML on stdout (the base command's error path); everything else leaves stdout empty.
        if (!c.args.includes('-o')) assert.equal(r.stdout, '', what);
        assert.equal(r.stderr.trimEnd().split('\n').length, 1, `${what}: ${r.stderr}`);
        assert.match(r.stderr.trimEnd(), c.match, what);
        assertClean(what, r.stderr);
      }
    });

    it('is fast enough to run at every refresh: wall time per call, median of 10', async (t) => {
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await plugin(['--hub-kubeconfig', hub.kubeconfig], execInfo(cluster()));
        assert.equal(r.code, 0, r.stderr);
        secrets.push(JSON.parse(r.stdout).status.token);
        times.push(r.ms);
      }
      times.sort((a, b) => a - b);
      const median = (times[4] + times[5]) / 2;
      t.diagnostic(
        `fleet wi token wall time per call: median ${median.toFixed(0)} ms, min ${times[0].toFixed(0)} ms, max ${times[9].toFixed(0)} ms (10 calls, one TokenRequest each)`,
      );
      // A loose bound that still catches a regression to loading every command (seconds on this shared machine).
      assert.ok(median < 2_000, `median ${median} ms`);
    });
  });

  describe('cluster-inventory: the ClusterProfile access provider and upstream pkg/access', () => {
    const profile = uniqueName('member');
    let consumerBin: string;
    let providerFile: string;
    let setupOut = '';

    before(async () => {
      consumerBin = buildScriptOutput(CONSUMER_BUILD);
      await applyYaml(
        hub,
        `apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: ${profile}\n  namespace: ${ns}\nspec:\n  clusterManager:\n    name: fleet-e2e\n`,
      );
      const status = {
        status: {
          conditions: [
            {
              type: 'ControlPlaneHealthy',
              status: 'True',
              reason: 'Test',
              message: 'e2e',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      };
      await kubectl(hub, [
        '-n',
        ns,
        'patch',
        'clusterprofile',
        profile,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify(status),
      ]);
    });

    const setupArgs = () => [
      'wi',
      'setup',
      '--consumer',
      'cluster-inventory',
      '--profile',
      `${ns}/${profile}`,
      '--target',
      'member-1',
      '--service-account',
      `${ns}/${sa}`,
      '--role',
      'view',
      '-n',
      ns,
      '--plugin-identity',
      `${ns}/ctrl`,
      '--plugin-command',
      FLEET_BIN,
      '--kubeconfig',
      KUBECONFIGS,
      '--hub-context',
      'hub',
    ];

    it('--apply --dry-run changes nothing; --apply writes the access provider and RBAC; a second --apply changes nothing', async () => {
      const dry = await fleet([...setupArgs(), '--apply', '--dry-run', '-o', 'json']);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(dry.json().consumer.profile.result, 'dry-run');
      const after = JSON.parse(await kubectl(hub, ['-n', ns, 'get', 'clusterprofile', profile, '-o', 'json']));
      assert.equal(after.status.accessProviders, undefined, 'a dry run wrote the profile');
      assert.equal(
        (await kubectlResult(hub, ['-n', ns, 'get', 'role', `fleet-wi-token:${sa}`])).code,
        1,
        'a dry run created the Role',
      );

      const res = await fleet([...setupArgs(), '--apply', '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      setupOut = res.stdout + res.stderr;
      const out = res.json();
      assert.equal(out.consumer.name, 'cluster-inventory');
      assert.equal(out.consumer.profile.result, 'created');
      assert.deepEqual(out.consumer.plugin, { command: FLEET_BIN, args: ['wi', 'token'] });
      // The JSON's providers list is the provider file, as multicluster-runtime's --clusterprofile-provider-file reads it.
      assert.deepEqual(out.providers, [
        {
          name: 'fleet-workload-identity',
          execConfig: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: FLEET_BIN,
            args: ['wi', 'token'],
            env: [],
            provideClusterInfo: true,
          },
        },
      ]);
      providerFile = join(scratchDir(), `${uniqueName('providers')}.json`);
      writeFileSync(providerFile, JSON.stringify({ providers: out.providers }));
      const written = JSON.parse(await kubectl(hub, ['-n', ns, 'get', 'clusterprofile', profile, '-o', 'json']));
      const entry = written.status.accessProviders.find((a: { name: string }) => a.name === 'fleet-workload-identity');
      assert.equal(entry.cluster.server, m1.url);
      assert.equal(
        Buffer.from(entry.cluster['certificate-authority-data'], 'base64').toString(),
        readFileSync(m1.caFile, 'utf8'),
      );
      assert.deepEqual(entry.cluster.extensions, [
        { name: 'client.authentication.k8s.io/exec', extension: { serviceAccount: `${ns}/${sa}` } },
      ]);
      assert.equal(written.status.conditions[0].type, 'ControlPlaneHealthy', 'the other status fields were kept');
      // The plugin's own identity may request tokens for exactly this ServiceAccount.
      const can = await kubectlResult(hub, [
        'auth',
        'can-i',
        'create',
        `serviceaccounts/${sa}`,
        '--subresource=token',
        '-n',
        ns,
        '--as',
        `system:serviceaccount:${ns}:ctrl`,
      ]);
      assert.equal(can.stdout.trim(), 'yes');
      const other = await kubectlResult(hub, [
        'auth',
        'can-i',
        'create',
        'serviceaccounts/ctrl',
        '--subresource=token',
        '-n',
        ns,
        '--as',
        `system:serviceaccount:${ns}:ctrl`,
      ]);
      assert.equal(other.stdout.trim(), 'no');

      const again = await fleet([...setupArgs(), '--apply', '-o', 'json']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.json().consumer.profile.result, 'unchanged');
      assert.deepEqual(
        again
          .json()
          .objects.map((o: { result: string }) => o.result)
          .filter((r: string) => r !== 'unchanged'),
        [],
      );
      assertClean(
        'wi setup --consumer cluster-inventory',
        setupOut,
        dry.stdout,
        dry.stderr,
        again.stdout,
        again.stderr,
      );
    });

    it("upstream's access library turns the profile and the provider file into a config that reaches the member as the hub ServiceAccount, with no Secret anywhere", async () => {
      const env = await inClusterEnv('ctrl');
      const r = await runWith(
        consumerBin,
        [
          '-hub-kubeconfig',
          hub.kubeconfig,
          '-namespace',
          ns,
          '-name',
          profile,
          '-clusterprofile-provider-file',
          providerFile,
          '-requests',
          '3',
        ],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      const seen = JSON.parse(r.stdout);
      assert.equal(seen.username, USER);
      assert.equal(seen.server, m1.url);
      assertClean('the upstream consumer', r.stdout, r.stderr);
      for (const server of [hub, m1]) {
        const list = JSON.parse(await kubectl(server, ['-n', ns, 'get', 'secrets', '-o', 'json']));
        assert.deepEqual(
          list.items.map((s: { metadata: { name: string } }) => s.metadata.name),
          [],
          `Secrets in ${ns} on ${server.name}`,
        );
      }
    });

    it("a controller identity without the token grant gets the hub's refusal through the library, in one line without a secret", async () => {
      const env = await inClusterEnv('ctrl-without-grant');
      const r = await runWith(
        consumerBin,
        [
          '-hub-kubeconfig',
          hub.kubeconfig,
          '-namespace',
          ns,
          '-name',
          profile,
          '-clusterprofile-provider-file',
          providerFile,
        ],
        env,
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /cannot create resource "serviceaccounts\/token"/);
      assertClean('the upstream consumer, refused', r.stdout, r.stderr);
    });

    it("creds list shows the profile's access provider as workload-identity: no Secret, no expiry; --live asks through the plugin", async () => {
      const list = await fleet(['creds', 'list', '--hub-kubeconfig', hub.kubeconfig, '--live', '-o', 'json']);
      const item = list
        .json()
        .items.find(
          (i: { source: { kind: string; namespace?: string; name?: string } }) =>
            i.source.kind === 'cluster-profile' && i.source.namespace === ns && i.source.name === profile,
        );
      assert.ok(item, list.stdout);
      assert.deepEqual(
        [
          item.format,
          item.method,
          item.identity,
          item.expires,
          item.managedByFleet,
          item.source.accessProvider,
          item.server,
        ],
        [
          'cluster-inventory',
          'workload-identity',
          `hub ServiceAccount ${ns}/${sa}`,
          undefined,
          true,
          'fleet-workload-identity',
          m1.url,
        ],
      );
      assert.equal(item.live.username, USER, JSON.stringify(item.live));
      const table = await fleet(['creds', 'list', '--hub-kubeconfig', hub.kubeconfig]);
      assert.match(
        table.stdout,
        new RegExp(
          `clusterprofile hub:${ns}/${profile} \\(accessProvider fleet-workload-identity\\)\\s+cluster-inventory\\s+workload-identity\\s+hub ServiceAccount ${ns}/${sa}\\s+minted per use`,
        ),
      );
      assertClean('creds list over the profile', list.stdout, list.stderr, table.stdout, table.stderr);
    });

    it("fleet's own cluster-inventory provider lists the profile as ready and uses it through the plugin", async () => {
      const dir = scratchDir();
      const config = join(dir, `${uniqueName('fleet')}.yaml`);
      writeFileSync(
        config,
        `kind: FleetConfig\nhub: {kubeconfig: ${hub.kubeconfig}}\nproviders:\n  - {name: inv, type: cluster-inventory, namespace: ${ns}, providerFile: ${providerFile}}\n`,
      );
      const env = await inClusterEnv('ctrl');
      const list = await fleet(['clusters', 'list', '--fleet-config', config, '-o', 'json'], { env });
      assert.equal(list.code, 0, list.stderr);
      const row = list.json().items.find((i: { name: string }) => i.name.endsWith(`${ns}/${profile}`));
      assert.ok(row, list.stdout);
      assert.equal(row.ready, true, list.stdout);
      const who = await fleet(['auth', 'whoami', '--fleet-config', config, '-c', row.name, '-o', 'json'], { env });
      assert.equal(who.code, 0, who.stderr);
      assert.equal(who.json().items[0].user.username, USER);
      // wi doctor reads the plugin's settings from the profile (the exec extension) and the provider file, and its hub
      // as the plugin finds it: here the in-cluster configuration of the controller.
      const doc = await fleet(['wi', 'doctor', '--fleet-config', config, '--target', row.name, '-o', 'json'], { env });
      assert.equal(doc.code, 0, doc.stdout + doc.stderr);
      const checks = doc.json().items[0].checks as Array<{ name: string; status: string; message: string }>;
      assert.match(
        checks[0].message,
        new RegExp(
          `runs fleet wi token: ServiceAccount ${ns}/${sa}, audience ${m1.url.replace(/[.]/g, '\\.')}, hub in-cluster \\(from the one hub rule`,
        ),
      );
      assert.equal(checks.find((c) => c.name === 'target-response')?.status, 'pass');
      assertClean(
        'clusters list / auth whoami / wi doctor over the profile',
        list.stdout,
        list.stderr,
        who.stdout,
        who.stderr,
        doc.stdout,
        doc.stderr,
      );
    });
  });

  describe('kubeconfig: a file whose user runs the plugin', () => {
    const dir = join(scratchDir(), uniqueName('kc'));
    let file: string;

    before(async () => {
      mkdirSync(dir, { recursive: true });
    });

    it('wi setup --consumer kubeconfig --out writes a 0600 file with no token; kubectl reaches the member with it from every spelling of the path', async () => {
      const res = await fleet(
        [
          'wi',
          'setup',
          '--consumer',
          'kubeconfig',
          '--out',
          'member.kubeconfig',
          '--target',
          'member-1',
          '--service-account',
          `${ns}/${sa}`,
          '--role',
          'view',
          '-n',
          ns,
          '--plugin-command',
          FLEET_BIN,
          '--kubeconfig',
          KUBECONFIGS,
          '--hub-context',
          'hub',
          '--apply',
          '-o',
          'json',
        ],
        { cwd: dir },
      );
      assert.equal(res.code, 0, res.stderr);
      file = join(dir, 'member.kubeconfig');
      assert.deepEqual(res.json().consumer.kubeconfig, { path: 'member.kubeconfig', written: true });
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const text = readFileSync(file, 'utf8');
      assertClean('the written kubeconfig', text, res.stdout, res.stderr);
      const doc = yaml.load(text) as any;
      assert.deepEqual(doc.users[0].user.exec.args, [
        'wi',
        'token',
        '--service-account',
        `${ns}/${sa}`,
        '--hub-kubeconfig',
        hub.kubeconfig,
        '--hub-context',
        'hub',
      ]);
      assert.equal(doc.users[0].user.exec.provideClusterInfo, true);
      assert.equal(doc.users[0].user.token, undefined);

      const link = join(dir, 'link.kubeconfig');
      symlinkSync(file, link);
      const env = { PATH, HOME: EMPTY_HOME };
      const runs = [
        await runWith(cp.binaries.kubectl, ['--kubeconfig', file, 'auth', 'whoami', '-o', 'json'], env),
        await runWith(
          cp.binaries.kubectl,
          ['--kubeconfig', 'member.kubeconfig', 'auth', 'whoami', '-o', 'json'],
          env,
          dir,
        ),
        await runWith(cp.binaries.kubectl, ['--kubeconfig', link, 'auth', 'whoami', '-o', 'json'], env),
        await runWith(cp.binaries.kubectl, ['auth', 'whoami', '-o', 'json'], { ...env, KUBECONFIG: file }),
      ];
      for (const r of runs) {
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).status.userInfo.username, USER);
        assertClean('kubectl with the plugin kubeconfig', r.stdout, r.stderr);
      }
      const who = await fleet(['auth', 'whoami', '--kubeconfig', 'link.kubeconfig', '-o', 'json'], { cwd: dir });
      assert.equal(who.code, 0, who.stderr);
      assert.equal(who.json().items[0].user.username, USER);
    });

    it('creds list says workload-identity with no expiry; clusters verify runs the plugin like any exec user', async () => {
      const list = await fleet(['creds', 'list', '--kubeconfig', file, '-o', 'json']);
      const item = list.json().items.find((i: { source: { path?: string } }) => i.source.path === file);
      assert.ok(item, list.stdout);
      assert.equal(item.method, 'workload-identity');
      assert.equal(item.identity, `hub ServiceAccount ${ns}/${sa}`);
      assert.equal(item.expires, undefined);
      const table = await fleet(['creds', 'list', '--kubeconfig', file]);
      assert.match(table.stdout, /workload-identity\s+hub ServiceAccount \S+\s+minted per use/);
      const live = await fleet(['creds', 'list', '--kubeconfig', file, '--live', '-o', 'json']);
      assert.equal(
        live.json().items.find((i: { source: { path?: string } }) => i.source.path === file).live.username,
        USER,
      );

      // With the default policy, as for any exec user: the plugin is run, and its credential judged as one client-go renews.
      const verify = await fleet(['clusters', 'verify', '--kubeconfig', file, '-o', 'json']);
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
      const checks = verify.json().items[0].checks as Array<{ name: string; status: string; message: string }>;
      assert.equal(checks.find((c) => c.name === 'authenticated')?.status, 'pass');
      const lifetime = checks.find((c) => c.name === 'credential-lifetime')!;
      assert.equal(lifetime.status, 'pass', lifetime.message);
      assert.match(lifetime.message, /exec plugin/);
      assertClean(
        'creds list / clusters verify',
        list.stdout,
        list.stderr,
        live.stdout,
        live.stderr,
        verify.stdout,
        verify.stderr,
        table.stdout,
      );
    });

    it('refuses to replace a file fleet did not write (exit 2, the file unchanged)', async () => {
      const foreign = join(dir, 'foreign.kubeconfig');
      writeFileSync(foreign, 'apiVersion: v1\nkind: Config\n');
      const res = await fleet([
        'wi',
        'setup',
        '--consumer',
        'kubeconfig',
        '--out',
        foreign,
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--kubeconfig',
        KUBECONFIGS,
        '--hub-context',
        'hub',
      ]);
      assert.equal(res.code, 2);
      assert.match(
        res.stderr,
        /^error: --out .*foreign\.kubeconfig: the file exists and was not written by fleet wi setup; pass --force to replace it\n$/,
      );
      assert.equal(readFileSync(foreign, 'utf8'), 'apiVersion: v1\nkind: Config\n');
      const bad = await fleet([
        'wi',
        'setup',
        '--consumer',
        'kubeconfig',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--kubeconfig',
        KUBECONFIGS,
        '--hub-context',
        'hub',
      ]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /^error: --consumer kubeconfig needs --out FILE\n$/);
      const wrong = await fleet([
        'wi',
        'setup',
        '--consumer',
        'argocd',
        '--profile',
        'a/b',
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--kubeconfig',
        KUBECONFIGS,
        '--hub-context',
        'hub',
      ]);
      assert.equal(wrong.code, 2);
      assert.match(
        wrong.stderr,
        /^error: --profile is for --consumer cluster-inventory \(this is --consumer argocd\)\n$/,
      );
    });
  });

  describe('argocd: a cluster Secret with execProviderConfig', () => {
    const argoNs = `${ns}-argocd`;

    it('wi setup --consumer argocd --apply writes the Secret; client-go runs its execProviderConfig as written and reaches the member', async () => {
      await applyYaml(hub, `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${argoNs}\n`);
      const res = await fleet([
        'wi',
        'setup',
        '--consumer',
        'argocd',
        '--argocd-namespace',
        argoNs,
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--role',
        'view',
        '-n',
        ns,
        '--plugin-command',
        FLEET_BIN,
        '--plugin-hub-kubeconfig',
        hub.kubeconfig,
        '--kubeconfig',
        KUBECONFIGS,
        '--hub-context',
        'hub',
        '--apply',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr);
      const name = res.json().consumer.argocdSecret.split('/')[1];
      const table = await fleet([
        'wi',
        'setup',
        '--consumer',
        'argocd',
        '--argocd-namespace',
        argoNs,
        '--target',
        'member-1',
        '--service-account',
        `${ns}/${sa}`,
        '--role',
        'view',
        '-n',
        ns,
        '--plugin-command',
        FLEET_BIN,
        '--plugin-hub-kubeconfig',
        hub.kubeconfig,
        '--kubeconfig',
        KUBECONFIGS,
        '--hub-context',
        'hub',
        '--apply',
      ]);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stderr, /the fleet binary must be in the Argo CD image/);
      assert.match(table.stdout, new RegExp(`Secret ${argoNs}/${name}\\s+unchanged`));
      const secret = JSON.parse(await kubectl(hub, ['-n', argoNs, 'get', 'secret', name, '-o', 'json']));
      assert.equal(secret.metadata.labels['argocd.argoproj.io/secret-type'], 'cluster');
      const text = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
      assert.equal(text('server'), m1.url);
      const config = JSON.parse(text('config'));
      assert.equal(config.bearerToken, undefined);
      assert.deepEqual(config.execProviderConfig.config, { serviceAccount: `${ns}/${sa}` });
      assert.equal(config.execProviderConfig.provideClusterInfo, true);
      assertClean('the Argo CD Secret', JSON.stringify(secret), res.stdout, res.stderr);
      // What Argo CD builds from the Secret: server, CA, and an exec provider with exactly these fields.
      const kc = join(scratchDir(), `${uniqueName('argo')}.kubeconfig`);
      const e = config.execProviderConfig;
      writeFileSync(
        kc,
        yaml.dump({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'argo',
          clusters: [
            {
              name: 'argo',
              cluster: {
                server: text('server'),
                'certificate-authority-data': config.tlsClientConfig.caData,
                extensions: [{ name: 'client.authentication.k8s.io/exec', extension: e.config }],
              },
            },
          ],
          users: [
            {
              name: 'argo',
              user: {
                exec: {
                  command: e.command,
                  args: e.args,
                  apiVersion: e.apiVersion,
                  provideClusterInfo: e.provideClusterInfo,
                  interactiveMode: 'Never',
                },
              },
            },
          ],
          contexts: [{ name: 'argo', context: { cluster: 'argo', user: 'argo' } }],
        }),
      );
      const who = await runWith(cp.binaries.kubectl, ['--kubeconfig', kc, 'auth', 'whoami', '-o', 'json'], {
        PATH,
        HOME: EMPTY_HOME,
      });
      assert.equal(who.code, 0, who.stderr);
      assert.equal(JSON.parse(who.stdout).status.userInfo.username, USER);

      // Argo CD's own code: its v1alpha1 ClusterConfig reads the Secret's config and Cluster.RawRestConfig builds the
      // client (v3.2, which has neither provideClusterInfo nor config: the plugin's arguments carry both settings).
      const argocd = buildScriptOutput(ARGOCD_CONSUMER_BUILD);
      const byArgo = await runWith(argocd, ['-hub-kubeconfig', hub.kubeconfig, '-namespace', argoNs, '-name', name], {
        PATH,
        HOME: EMPTY_HOME,
      });
      assert.equal(byArgo.code, 0, byArgo.stderr);
      assert.deepEqual(JSON.parse(byArgo.stdout), { username: USER, server: m1.url });
      assertClean('the Argo CD consumer', byArgo.stdout, byArgo.stderr);

      const list = await fleet(['creds', 'list', '--hub-kubeconfig', hub.kubeconfig, '-o', 'json']);
      const item = list
        .json()
        .items.find(
          (i: { source: { namespace?: string; name?: string } }) =>
            i.source.namespace === argoNs && i.source.name === name,
        );
      assert.ok(item, list.stdout);
      assert.equal(item.format, 'argocd');
      assert.equal(item.method, 'workload-identity');
      assert.equal(item.expires, undefined);
      assertClean('creds list with the Argo CD Secret', list.stdout, list.stderr);
    });
  });

  describe('wi doctor on broken plugin setups', () => {
    let untrusting: ExtraApiserver | undefined;
    after(async () => untrusting?.stop());

    async function pluginKubeconfig(extra: string[], target = 'member-1', kubeconfigs = KUBECONFIGS): Promise<string> {
      const out = join(scratchDir(), `${uniqueName('broken')}.kubeconfig`);
      const res = await fleet([
        'wi',
        'setup',
        '--consumer',
        'kubeconfig',
        '--out',
        out,
        '--target',
        target,
        '--service-account',
        `${ns}/${sa}`,
        '--plugin-command',
        FLEET_BIN,
        '--kubeconfig',
        kubeconfigs,
        '--hub-context',
        'hub',
        ...extra,
      ]);
      assert.equal(res.code, 0, res.stderr);
      return out;
    }

    async function doctor(
      file: string,
      alsoKubeconfig?: string,
    ): Promise<{ res: CliResult; checks: Array<{ name: string; status: string; message: string; fix?: string }> }> {
      let target = (yaml.load(readFileSync(file, 'utf8')) as any).contexts[0].name;
      let kubeconfig = file;
      if (alsoKubeconfig) {
        // A directory of kubeconfigs: each file stands alone, so two contexts of the same name both stay.
        kubeconfig = join(scratchDir(), uniqueName('both'));
        mkdirSync(kubeconfig);
        writeFileSync(join(kubeconfig, 'plugin.kubeconfig'), readFileSync(file));
        writeFileSync(join(kubeconfig, 'mine.kubeconfig'), readFileSync(alsoKubeconfig));
        const list = await fleet(['clusters', 'list', '--kubeconfig', kubeconfig, '-o', 'json']);
        target = list.json().items.find((i: { name: string }) => i.name.endsWith(`plugin.kubeconfig+${target}`)).name;
      }
      const res = await fleet(['wi', 'doctor', '--kubeconfig', kubeconfig, '--target', target, '-o', 'json']);
      assertClean('wi doctor', res.stdout, res.stderr);
      const item = res.json().items[0];
      return { res, checks: item.checks };
    }

    it('a working setup passes, and names what the plugin does', async () => {
      const { res, checks } = await doctor(await pluginKubeconfig([]));
      assert.equal(res.code, 0, res.stdout);
      assert.match(
        checks[0].message,
        new RegExp(
          `runs fleet wi token: ServiceAccount ${ns}/${sa}, audience ${m1.url.replace(/[.]/g, '\\.')}, hub hub`,
        ),
      );
      assert.equal(checks.find((c) => c.name === 'target-response')?.status, 'pass');
    });

    it('a wrong audience (a trailing slash) fails the audience check and says how the two differ', async () => {
      const file = await pluginKubeconfig(['--audience', `${m1.url}/`]);
      const kubectlRun = await runWith(cp.binaries.kubectl, ['--kubeconfig', file, 'auth', 'whoami'], {
        PATH,
        HOME: EMPTY_HOME,
      });
      assert.notEqual(kubectlRun.code, 0);
      const { res, checks } = await doctor(file);
      assert.equal(res.code, 1);
      const audience = checks.find((c) => c.name === 'audience')!;
      assert.equal(audience.status, 'fail');
      assert.match(audience.message, /differ only by trailing slash/);
    });

    it('a plugin identity without "create serviceaccounts/token" fails the token request and says who needs it', async () => {
      const file = await pluginKubeconfig(['--plugin-hub-kubeconfig', tokenUser(hub, 'bob').kubeconfigPath]);
      secrets.push(tokenUser(hub, 'bob').token);
      const kubectlRun = await runWith(cp.binaries.kubectl, ['--kubeconfig', file, 'auth', 'whoami'], {
        PATH,
        HOME: EMPTY_HOME,
      });
      assert.notEqual(kubectlRun.code, 0);
      assert.match(kubectlRun.stderr, /cannot create resource "serviceaccounts\/token"/);
      assertClean('kubectl with a refused plugin', kubectlRun.stdout, kubectlRun.stderr);
      const { res, checks } = await doctor(file);
      assert.equal(res.code, 1);
      const tr = checks.find((c) => c.name === 'token-request')!;
      assert.equal(tr.status, 'fail');
      assert.match(tr.message, /forbidden/);
      assert.match(tr.fix!, /need "create" on serviceaccounts\/token in namespace/);
    });

    it('a member that does not trust the hub: every check from outside passes and the target answers 401', async () => {
      untrusting = await startExtraApiserver();
      const file = await pluginKubeconfig([], untrusting.name, `${KUBECONFIGS}:${untrusting.kubeconfig}`);
      // Only the plugin's identity for the target: what can be seen from outside passes, and the 401 is all that fails.
      const { res, checks } = await doctor(file);
      assert.equal(res.code, 1);
      assert.deepEqual(
        checks.filter((c) => c.status === 'fail').map((c) => c.name),
        ['target-response'],
      );
      assert.match(checks.find((c) => c.name === 'target-response')!.message, /does not trust this issuer/);
      assert.equal(checks.find((c) => c.name === 'target-trusts-issuer')!.status, 'skip');
      assert.match(checks[0].message, /no other credentials for this server/);
      // With your own context for the same server beside it, the target's metrics say it has no authenticator for the hub.
      const mine = await doctor(file, untrusting.kubeconfig);
      assert.equal(mine.res.code, 1);
      assert.match(mine.checks[0].message, /read with the credentials of .*\(same server\)/);
      const trust = mine.checks.find((c) => c.name === 'target-trusts-issuer')!;
      assert.equal(trust.status, 'fail', JSON.stringify(mine.checks, null, 1));
      assert.match(
        trust.message,
        new RegExp(`no JWT authenticator for issuer ${hub.issuer.replace(/[.]/g, '\\.')}: it does not trust the hub`),
      );
    });
  });
});
