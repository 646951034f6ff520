// User journeys (issue 19, item 7): the credential lifecycle as a platform engineer lives it, on the real control plane,
// every step asserted (exit code, JSON, the objects on the clusters, the credential used for real).
//
// (a) The laptop. Priya starts from a clean machine: HOME is an empty directory, KUBECONFIG is unset, and she works in a
//     directory holding the one kubeconfig she was given, merged.yaml (contexts hub, member-1, member-2 with admin
//     credentials; current-context hub). She passes it as `--kubeconfig merged.yaml`, a relative path, and nothing else
//     tells fleet where the hub is.
//     1. `creds generate -c member-1 --secret NS/NAME --format F --duration 30d` once per consumer format
//        (multicluster-runtime, cluster-api, cluster-inventory, kubeconfig-secretreader, argocd on member-2, flux),
//        mixing bound tokens, a client certificate (cluster-api) and a legacy token (flux), plus a `--out reader.kubeconfig`
//        file. Each Secret is on the hub, its credential works, the consumer's provider reads it, and it expires in
//        30 days (the JWT's exp, the certificate's NotAfter), not 24 days or 24 hours.
//     2. `creds list --expiring-within 45d` exits 1 and names every one (the legacy token never expires); `--expiring-within
//        1d` exits 0.
//     3. The ops checkout: from another directory whose fleet.yaml (kind: FleetConfig) names the same merged file by its
//        absolute path (hub) and through a symlink (file provider), `creds rotate --all` rotates every one; the consumers
//        read the new credentials and the old tokens are refused (401). The client certificate keeps its 30 days (no
//        drift); the old one cannot be revoked and is reported valid until its NotAfter.
//     4. The file written with `--kubeconfig merged.yaml` is rotated with `--file` from a shell where
//        KUBECONFIG=/abs/merged.yaml.
// (b) The CronJob on the hub, between (a)4 and (a)5: the same Secrets are rotated by the args of the CronJob in
//     docs/rotation.md, read from it at run time (`creds rotate --all --expiring-within 48h -o json --fleet-config
//     /etc/fleet/fleet.yaml`), with the window 45d and /etc/fleet/ mapped to the test's mount, with in-cluster
//     configuration only: no kubeconfig for the hub (HOME
//     empty, KUBECONFIG unset), KUBERNETES_SERVICE_HOST/PORT pointing at the hub, a ServiceAccount token and CA written
//     where a Pod has them (FLEET_IN_CLUSTER_TOKEN_FILE / FLEET_IN_CLUSTER_CA_FILE), the hub RBAC exactly as
//     docs/rotation.md "Least RBAC on the hub" writes it (read from the doc at run time) plus the cluster-wide `list
//     secrets` that the same section says `--all` needs, and the members reached through a fleet configuration and
//     per-member kubeconfigs mounted at another path (mode 0400, other context names) than the laptop used. Every
//     expiring credential is rotated (the legacy token, which never expires, is skipped), consumers read the new ones,
//     the old are refused, and no Secret is left with a rotation claim.
//     (a)5. Back on the laptop, the end of the lifecycle: `creds revoke` of every Secret (previewed with --dry-run first)
//     and of the file: the Secrets, anchors, ServiceAccounts and RBAC fleet made are gone, the file is gone, and the
//     last credentials are refused.
// Every output captured is grepped for every token and key made. A separate test measures one 30-day
// generate -> rotate -> revoke cycle and prints its wall time.
// The bugs of issue 19 these steps meet, in order: `30d` refused as a duration (a1; `720h` as "longer than ... about 24
// days"), `--kubeconfig` ignored for the hub (a1, the timed cycle's rotate), `creds list` without a fleet configuration
// looking at no hub (a2), the cluster recorded as `merged.yaml+member-1` and not found from another spelling (a3, a4,
// b), a client certificate's lifetime shortened by 5 minutes per rotation (a3, b), and no `creds revoke` (a5).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, cleanEnv, runFleet } from '../support/cli.js';
import { writeConsumerFleet } from '../support/consumer-fleet.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { mergedKubeconfig } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const [m1, m2] = cp.members;
const run = uniqueName('journey');
const hubNs = `${run}-hub`; // consumer Secrets on the hub
const nsSys = `${run}-sys`; // the ServiceAccounts fleet makes on the members
const nsApps = `${run}-apps`; // where the namespaced grants are
const consumer = `${run}-consumer`;
const DAY = 86_400;
const THIRTY_DAYS = 30 * DAY;
const ROTATION_ANNOTATION = /^fleet\.dev\/rotation-/;

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

/** The directories of the people and machines in the journeys (filled in before()). */
const at = {
  root: '',
  laptopHome: '',
  laptop: '',
  ops: '',
  elsewhere: '',
  podHome: '',
  pod: '',
  etcFleet: '',
  serviceAccount: '',
};
let merged = ''; // absolute path of the laptop's merged kubeconfig
let consumerFleet = ''; // the consumers' view of the hub: every fleet provider that reads a consumer Secret format

async function fleet(args: string[], o: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  const res = await runFleet(args, { cwd: o.cwd, env: o.env, timeoutMs: 240_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}
const laptop = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  fleet(args, { cwd: at.laptop, env: cleanEnv(at.laptopHome, env) });
const show = (res: CliResult) => `exit ${res.code}\nstderr: ${res.stderr.trim()}\nstdout: ${res.stdout.slice(0, 4000)}`;

// ---------------------------------------------------------------------------------------------------------------------
// The credentials of the journey: one per consumer format, and one kubeconfig file.

interface Cred {
  key: string;
  format: string;
  /** The cluster (context of merged.yaml). */
  cluster: typeof m1;
  /** What rotate and revoke are given: NAMESPACE/NAME of the hub Secret (for cluster-api, <cluster>-kubeconfig). */
  secret: string;
  method: 'token' | 'legacy-token' | 'client-cert';
  /** The user the credential authenticates as. */
  username: string;
  /** ServiceAccount fleet creates for it (token methods). */
  sa?: string;
  args: string[];
  /** A cluster name in the consumers' fleet configuration that reads this Secret, when fleet has that consumer's provider. */
  via?: string;
  /** One access the grant gives (kubectl auth can-i arguments). */
  can: string[];
}

const CREDS: Cred[] = [
  {
    key: 'mcr',
    format: 'multicluster-runtime',
    cluster: m1,
    secret: `${hubNs}/member-1`,
    method: 'token',
    username: `system:serviceaccount:${nsSys}:mcr`,
    sa: 'mcr',
    args: ['--service-account', `${nsSys}/mcr`, '--role', 'pod-lister', '--secret', `${hubNs}/member-1`],
    via: 'mcr#member-1',
    can: ['list', 'pods', '-A'],
  },
  {
    key: 'capi',
    format: 'cluster-api',
    cluster: m1,
    secret: `${hubNs}/work-kubeconfig`,
    method: 'client-cert',
    username: `${run}-ci`,
    args: [
      '--method',
      'client-cert',
      '--user',
      `${run}-ci`,
      '--group',
      'ci',
      '--role',
      'deployer',
      '-n',
      nsApps,
      '--secret',
      `${hubNs}/work`,
    ],
    via: `capi#${hubNs}/work`,
    can: ['create', 'deployments.apps', '-n', nsApps],
  },
  {
    key: 'inv',
    format: 'cluster-inventory',
    cluster: m1,
    secret: `${hubNs}/m1-${consumer}`,
    method: 'token',
    username: `system:serviceaccount:${nsSys}:inv`,
    sa: 'inv',
    args: [
      '--service-account',
      `${nsSys}/inv`,
      '--role',
      'view',
      '-n',
      nsApps,
      '--secret',
      `${hubNs}/m1-${consumer}`,
      '--consumer',
      consumer,
      '--profile',
      'm1',
    ],
    via: `inv#${hubNs}/m1`,
    can: ['list', 'configmaps', '-n', nsApps],
  },
  {
    key: 'kcsr',
    format: 'kubeconfig-secretreader',
    cluster: m1,
    secret: `${hubNs}/kcsr-cred`,
    method: 'token',
    username: `system:serviceaccount:${nsSys}:kcsr`,
    sa: 'kcsr',
    args: [
      '--service-account',
      `${nsSys}/kcsr`,
      '--role',
      'view',
      '-n',
      nsApps,
      '--secret',
      `${hubNs}/kcsr-cred`,
      '--update-profile',
      `${hubNs}/kcsr`,
    ],
    via: `access#${hubNs}/kcsr`,
    can: ['list', 'configmaps', '-n', nsApps],
  },
  {
    key: 'argocd',
    format: 'argocd',
    cluster: m2,
    secret: `${hubNs}/argo-m2`,
    method: 'token',
    username: `system:serviceaccount:${nsSys}:argo`,
    sa: 'argo',
    args: ['--service-account', `${nsSys}/argo`, '--role', 'deployer', '-n', nsApps, '--secret', `${hubNs}/argo-m2`],
    can: ['create', 'deployments.apps', '-n', nsApps],
  },
  {
    key: 'flux',
    format: 'flux',
    cluster: m1,
    secret: `${hubNs}/flux-m1`,
    method: 'legacy-token',
    username: `system:serviceaccount:${nsSys}:flux`,
    sa: 'flux',
    args: [
      '--method',
      'legacy-token',
      '--service-account',
      `${nsSys}/flux`,
      '--role',
      'deployer',
      '-n',
      nsApps,
      '--secret',
      `${hubNs}/flux-m1`,
    ],
    can: ['create', 'deployments.apps', '-n', nsApps],
  },
];
const FILE = { name: 'reader.kubeconfig', sa: 'reader', username: `system:serviceaccount:${nsSys}:reader` };
const nameOf = (c: Cred) => c.secret.split('/')[1];

/** The kubeconfig a consumer Secret holds (Argo CD's config turned into one); its token or key is remembered. */
function kubeconfigOf(s: any): string {
  let text: string;
  if (s.data.config) {
    const c = JSON.parse(decode(s.data.config));
    const user: Record<string, string> = c.bearerToken
      ? { token: c.bearerToken }
      : { 'client-certificate-data': c.tlsClientConfig.certData, 'client-key-data': c.tlsClientConfig.keyData };
    text = yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [
        {
          name: 'c',
          cluster: { server: decode(s.data.server), 'certificate-authority-data': c.tlsClientConfig.caData },
        },
      ],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    });
  } else text = decode(s.data.kubeconfig ?? s.data.value ?? s.data.Config);
  remember(text);
  return text;
}

function remember(kubeconfigText: string) {
  const u = (yaml.load(kubeconfigText) as any).users[0].user;
  if (u.token) secrets.add(u.token);
  if (u['client-key-data']) {
    secrets.add(u['client-key-data']);
    secrets.add(decode(u['client-key-data']).trim());
  }
}

async function hubSecret(ref: string): Promise<any> {
  const [ns, name] = ref.split('/');
  const r = await kubectlResult(hub, ['get', 'secret', name, '-n', ns, '-o', 'json']);
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
}
async function credText(c: Cred): Promise<string> {
  const s = await hubSecret(c.secret);
  assert.ok(s, `Secret ${c.secret} not found on the hub`);
  return kubeconfigOf(s);
}

/** When the credential in a kubeconfig stops working: the JWT's exp, the certificate's NotAfter; undefined for never. */
function expiryOf(text: string): { expires?: number; lifetime?: number } {
  const u = (yaml.load(text) as any).users[0].user;
  if (u.token) {
    const claims = JSON.parse(Buffer.from(u.token.split('.')[1], 'base64url').toString('utf8'));
    return claims.exp ? { expires: claims.exp * 1000, lifetime: claims.exp - claims.iat } : {};
  }
  const cert = new X509Certificate(Buffer.from(u['client-certificate-data'], 'base64'));
  return {
    expires: Date.parse(cert.validTo),
    lifetime: (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000,
  };
}

/**
 * The credential was issued for exactly 30 days (a token's exp - iat; a certificate's NotAfter - NotBefore, so a
 * rotation that drifts by the signer's 5-minute backdating is caught) and expires about 30 days from now: at most 3
 * minutes of steps since it was issued, and for a certificate the signer's backdating (NotBefore = issue - 5 min).
 */
function assertThirtyDays(c: Pick<Cred, 'key' | 'method'>, text: string) {
  const e = expiryOf(text);
  if (c.method === 'legacy-token') return assert.equal(e.expires, undefined, `${c.key}: a legacy token has no exp`);
  assert.ok(e.expires && e.lifetime, `${c.key}: no expiry in the credential`);
  assert.ok(
    Math.abs(e.lifetime - THIRTY_DAYS) <= 60,
    `${c.key}: issued for ${(e.lifetime / DAY).toFixed(5)} days, not 30`,
  );
  const left = (e.expires - Date.now()) / 1000;
  const slack = c.method === 'client-cert' ? 180 + 300 : 180;
  assert.ok(
    left > THIRTY_DAYS - slack && left < THIRTY_DAYS + 60,
    `${c.key}: expires in ${(left / DAY).toFixed(5)} days, not 30`,
  );
}

let probe = 0;
/** `kubectl auth whoami` with a kubeconfig: the username, or the refusal. */
async function whoIs(text: string): Promise<{ user?: string; unauthorized: boolean; stderr: string }> {
  const path = join(at.root, `probe-${probe++ % 8}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return new Promise((resolve) => {
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: '' } },
      (error, stdout, stderr) =>
        resolve(
          error
            ? { unauthorized: /Unauthorized|must be logged in/i.test(stderr), stderr: stderr.trim() }
            : { user: stdout.trim(), unauthorized: false, stderr: '' },
        ),
    );
  });
}

/** Refused with 401, waiting up to 30 s (token revocation through a deleted anchor reaches the authenticator's cache). */
async function assertRefused(what: string, text: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await whoIs(text);
    if (r.unauthorized) return;
    assert.ok(Date.now() < deadline, `${what}: the old credential is not refused (${r.user ?? r.stderr})`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

async function can(ref: typeof m1, text: string, args: string[]): Promise<boolean> {
  const path = join(at.root, `can-${probe++ % 8}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return (await kubectlResult(ref, ['auth', 'can-i', ...args], { kubeconfig: path })).code === 0;
}

/** The consumer's view: fleet's provider for that format reads the Secret and connects with what it holds. */
async function consumerSees(c: Cred): Promise<void> {
  if (!c.via) {
    // Argo CD and Flux have no fleet provider: the kubeconfig in the Secret, used with kubectl, is what they would use.
    assert.equal((await whoIs(await credText(c))).user, c.username, `${c.key}: the Secret's credential does not work`);
    return;
  }
  const res = await fleet(['auth', 'whoami', '--fleet-config', consumerFleet, '--cluster', c.via, '-o', 'json'], {
    cwd: at.root,
    env: cleanEnv(at.root),
  });
  assert.equal(res.code, 0, `${c.key}: the consumer cannot use the Secret: ${show(res)}`);
  assert.equal(res.json().items[0].user.username, c.username);
}

/** Every Secret of the journey's hub namespace: none carries a rotation claim or phase. */
async function assertNoRotationState() {
  const all = JSON.parse(await kubectl(hub, ['get', 'secrets', '-n', hubNs, '-o', 'json'])).items as any[];
  const left = all.filter((s) => Object.keys(s.metadata.annotations ?? {}).some((k) => ROTATION_ANNOTATION.test(k)));
  assert.deepEqual(
    left.map((s) => `${s.metadata.name}: ${JSON.stringify(s.metadata.annotations)}`),
    [],
    'rotation state left on Secrets',
  );
}

/** A step that needs an earlier one names it instead of failing on undefined. */
const done = new Set<string>();
function needs(...steps: string[]) {
  const missing = steps.filter((s) => !done.has(s));
  if (missing.length > 0)
    throw new Error(`this step needs ${missing.join(', ')}, which did not complete (see that step's failure)`);
}

const rotationDoc = () => readFileSync(fileURLToPath(new URL('../../docs/rotation.md', import.meta.url)), 'utf8');

/**
 * The args of the CronJob in docs/rotation.md, as written there, with two changes: the window is 45d (the journey's
 * credentials live 30 days; the doc's 48h is for short ones) and /etc/fleet/ is where the test mounted the files.
 */
function cronJobArgs(etcFleet: string): string[] {
  const block = /```yaml\n(kind: CronJob[\s\S]*?|apiVersion: batch\/v1\nkind: CronJob[\s\S]*?)```/.exec(rotationDoc());
  assert.ok(block, 'docs/rotation.md has no CronJob yaml block');
  const cronJob = yaml.load(block[1]) as any;
  const args = cronJob?.spec?.jobTemplate?.spec?.template?.spec?.containers?.[0]?.args as unknown[];
  assert.ok(
    Array.isArray(args) && args[0] === 'creds' && args[1] === 'rotate',
    `the CronJob of docs/rotation.md does not run creds rotate: ${JSON.stringify(args)}`,
  );
  const out = args.map(String);
  const w = out.indexOf('--expiring-within');
  assert.ok(w > 0, 'the CronJob of docs/rotation.md has no --expiring-within');
  out[w + 1] = '45d';
  return out.map((a) => a.replace(/^\/etc\/fleet\//, `${etcFleet}/`));
}

/** The hub RBAC of docs/rotation.md "Least RBAC on the hub", as written there (the first yaml block of that section). */
function leastHubRules(): any[] {
  const section = rotationDoc().split(/^### Least RBAC on the hub.*$/m)[1];
  assert.ok(section, 'docs/rotation.md has no "### Least RBAC on the hub" section');
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'docs/rotation.md "Least RBAC on the hub" has no yaml block');
  const rules = (yaml.load(block[1]) as { rules?: any[] }).rules;
  assert.ok(Array.isArray(rules) && rules.length > 0, 'the "Least RBAC on the hub" block has no rules');
  return rules;
}

before(async () => {
  at.root = join(scratchDir(), run);
  for (const k of ['laptopHome', 'laptop', 'ops', 'elsewhere', 'podHome', 'pod', 'etcFleet'] as const) {
    at[k] = join(at.root, k);
    mkdirSync(at[k], { recursive: true, mode: 0o700 });
  }
  merged = join(at.laptop, 'merged.yaml');
  // The laptop's one merged kubeconfig, from the sandbox's per-server files: contexts hub, member-1, member-2.
  writeFileSync(merged, mergedKubeconfig([hub, m1, m2], hub.context), { mode: 0o600 });
  // What the platform already has on the hub: the namespace for consumer Secrets, the Cluster API Cluster and the
  // ClusterProfiles the consumers read (healthy), and the consumers' fleet configuration.
  const healthy = {
    conditions: [
      {
        type: 'ControlPlaneHealthy',
        status: 'True',
        reason: 'Healthy',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  };
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'work', namespace: hubNs },
      spec: {},
    }),
  );
  await kubectl(hub, [
    'patch',
    'clusters.cluster.x-k8s.io',
    'work',
    '-n',
    hubNs,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { initialization: { controlPlaneInitialized: true } } }),
  ]);
  for (const profile of ['m1', 'kcsr']) {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: profile, namespace: hubNs },
        spec: { clusterManager: { name: 'fleet-e2e' } },
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      profile,
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: healthy }),
    ]);
  }
  consumerFleet = writeConsumerFleet({ dir: at.root, run, hubNs, consumer });
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(hub, ['delete', 'clusterrole,clusterrolebinding', `${run}-rotator-list`, '--ignore-not-found']);
  for (const m of [m1, m2]) {
    await kubectlResult(m, ['delete', 'namespace', nsSys, nsApps, '--wait=false', '--ignore-not-found']);
    const names = (await kubectl(m, ['get', 'clusterroles,clusterrolebindings', '-o', 'name']))
      .split('\n')
      .filter((n) => n.includes(`fleet-creds-${nsSys}-`) || n.includes(`fleet-creds-user-${run}`));
    if (names.length > 0) await kubectlResult(m, ['delete', ...names, '--ignore-not-found']);
  }
});

describe(
  'journey (a) laptop and (b) CronJob: generate 30d, list, rotate three ways, revoke',
  { concurrency: false },
  () => {
    /** The credential each Secret held after the last step that changed it. */
    const held = new Map<string, string>();
    let fileText = '';
    const filePath = () => join(at.laptop, FILE.name);

    it('a1: generate --kubeconfig merged.yaml --duration 30d, every consumer format and a file: written, working, read by the consumer, 30 days', async () => {
      const failures: string[] = [];
      for (const c of CREDS) {
        const res = await laptop([
          'creds',
          'generate',
          '--kubeconfig',
          'merged.yaml',
          '-c',
          c.cluster.context,
          ...c.args,
          '--format',
          c.format,
          '--create-namespace',
          '--duration',
          '30d',
          '-o',
          'json',
        ]);
        if (res.code !== 0) {
          failures.push(`${c.key} (${c.format}): ${res.stderr.trim() || res.stdout.trim()} [exit ${res.code}]`);
          continue;
        }
        const out = res.json();
        assert.equal(out.kind, 'GeneratedCredential');
        assert.equal(out.method, c.method);
        assert.equal(out.identity.username, c.username);
        assert.equal(out.server, c.cluster.url);
        assert.deepEqual(
          [out.destination.kind, out.destination.namespace, out.destination.format],
          ['secret', hubNs, c.format],
        );
        const s = await hubSecret(c.secret);
        assert.ok(s, `${c.key}: Secret ${c.secret} not on the hub`);
        assert.equal(s.metadata.labels['app.kubernetes.io/managed-by'], 'fleet');
        const text = kubeconfigOf(s);
        held.set(c.key, text);
        assertThirtyDays(c, text);
        if (c.method === 'legacy-token') assert.equal(out.expires, undefined);
        else
          assert.equal(
            Math.abs(Date.parse(out.expires) - (expiryOf(text).expires ?? 0)) <= 1000,
            true,
            `${c.key}: reported expiry ${out.expires} is not the credential's`,
          );
        assert.equal((await whoIs(text)).user, c.username, `${c.key}: the credential does not authenticate`);
        assert.equal(await can(c.cluster, text, c.can), true, `${c.key}: not granted ${c.can.join(' ')}`);
        await consumerSees(c);
      }
      const file = await laptop([
        'creds',
        'generate',
        '--kubeconfig',
        'merged.yaml',
        '-c',
        m1.context,
        '--service-account',
        `${nsSys}/${FILE.sa}`,
        '--role',
        'view',
        '-n',
        nsApps,
        '--create-namespace',
        '--duration',
        '30d',
        '--out',
        FILE.name,
        '-o',
        'json',
      ]);
      if (file.code === 0) {
        assert.equal(statSync(filePath()).mode & 0o777, 0o600);
        fileText = readFileSync(filePath(), 'utf8');
        remember(fileText);
        assertThirtyDays({ key: 'file', method: 'token' }, fileText);
        assert.equal((await whoIs(fileText)).user, FILE.username);
      } else failures.push(`--out ${FILE.name}: ${file.stderr.trim()} [exit ${file.code}]`);
      assert.deepEqual(failures, [], 'creds generate failed');
      done.add('a1');
    });

    it('a2: creds list --kubeconfig merged.yaml --expiring-within 45d exits 1 naming every Secret; --expiring-within 1d exits 0', async () => {
      needs('a1');
      const soon = await laptop([
        'creds',
        'list',
        '--kubeconfig',
        'merged.yaml',
        '--expiring-within',
        '45d',
        '-o',
        'json',
      ]);
      assert.equal(soon.code, 1, show(soon));
      const items = soon.json().items as any[];
      const mine = (c: Cred) =>
        items.filter((i) => i.source?.kind === 'secret' && i.source.namespace === hubNs && i.source.name === nameOf(c));
      for (const c of CREDS) {
        const found = mine(c);
        assert.equal(found.length, 1, `${c.secret} listed ${found.length} times (${soon.stdout.slice(0, 2000)})`);
        assert.equal(found[0].expiring, c.method !== 'legacy-token', `${c.secret}: expiring ${found[0].expiring}`);
        assert.equal(found[0].managedByFleet, true);
      }
      const file = items.find((i) => i.source?.kind === 'kubeconfig' && i.source.path?.endsWith(FILE.name));
      // The laptop's own kubeconfig is listed too (admin certificates valid for a year: not expiring).
      assert.ok(
        items.some((i) => i.source?.kind === 'kubeconfig' && i.source.context === m1.context),
        "the merged kubeconfig's users are not listed",
      );
      assert.equal(file, undefined, 'a file that is not part of --kubeconfig was listed');

      const later = await laptop([
        'creds',
        'list',
        '--kubeconfig',
        'merged.yaml',
        '--expiring-within',
        '1d',
        '-o',
        'json',
      ]);
      const all = later.json().items as any[];
      for (const c of CREDS)
        assert.equal(
          all.find((i) => i.source?.namespace === hubNs && i.source.name === nameOf(c))?.expiring,
          false,
          `${c.secret} expiring within 1d`,
        );
      // On a hub shared with other tests a foreign credential may expire within a day; the exit code must then say so.
      const foreign = all.filter((i) => i.expiring).map((i) => i.location);
      assert.equal(later.code, foreign.length > 0 ? 1 : 0, `${show(later)}\nexpiring: ${foreign.join(', ')}`);
      done.add('a2');
    });

    it('a3: creds rotate --all from another directory whose fleet.yaml names merged.yaml by absolute path and through a symlink: all rotated, consumers read the new, old refused', async () => {
      needs('a1');
      const link = join(at.ops, 'kube', 'prod.yaml');
      mkdirSync(join(at.ops, 'kube'), { recursive: true });
      symlinkSync(merged, link);
      writeFileSync(
        join(at.ops, 'fleet.yaml'),
        [
          'apiVersion: fleet/v1alpha1',
          'kind: FleetConfig',
          `hub: {kubeconfig: ${merged}}`,
          'providers:',
          '  - {name: laptop, type: file, kubeconfig: [./kube/prod.yaml]}',
          '',
        ].join('\n'),
      );
      // Named (FLEET_CONFIG, relative to the directory): found by itself there, a fleet.yaml may not name files (issue 38).
      const found = await fleet(['creds', 'rotate', '--all', '-o', 'json'], {
        cwd: at.ops,
        env: cleanEnv(at.laptopHome),
      });
      assert.equal(found.code, 2, show(found));
      assert.match(
        found.json().error.message,
        /hub\.kubeconfig: a fleet\.yaml found in the working directory may not name programs or files/,
      );
      const res = await fleet(['creds', 'rotate', '--all', '-o', 'json'], {
        cwd: at.ops,
        env: cleanEnv(at.laptopHome, { FLEET_CONFIG: 'fleet.yaml' }),
      });
      const report = res.json();
      assert.equal(report.kind, 'CredentialRotation', show(res));
      const items = report.items as any[];
      const byName = (c: Cred) => items.find((i) => i.secret?.namespace === hubNs && i.secret.name === nameOf(c));
      const wrong = CREDS.map((c) => [c, byName(c)] as const)
        .filter(([, i]) => i?.status !== 'rotated')
        .map(
          ([c, i]) =>
            `${c.secret}: ${i ? `${i.status}: ${i.reason ?? ''} ${i.error ? JSON.stringify(i.error) : ''}` : 'not in the report'}`,
        );
      assert.deepEqual(wrong, [], `not rotated (exit ${res.code}; stderr ${res.stderr.trim()})`);
      const foreignFailed = items.filter((i) => i.status === 'failed' && i.secret?.namespace !== hubNs);
      assert.equal(res.code, foreignFailed.length > 0 ? 1 : 0, show(res));
      for (const c of CREDS) {
        const item = byName(c);
        const old = held.get(c.key)!;
        const text = await credText(c);
        assert.notEqual(text, old, `${c.key}: the Secret holds the same credential`);
        assert.equal(item.method, c.method);
        assertThirtyDays(c, text);
        assert.equal((await whoIs(text)).user, c.username, `${c.key}: the new credential does not authenticate`);
        await consumerSees(c);
        if (c.method === 'client-cert') {
          // A certificate cannot be revoked: said so, with its NotAfter; it still authenticates until then.
          assert.equal(item.revoked.done, false);
          assert.match(item.revoked.reason, /valid until/);
          assert.equal((await whoIs(old)).user, c.username);
        } else {
          assert.equal(item.revoked.done, true, `${c.key}: ${JSON.stringify(item.revoked)}`);
          await assertRefused(c.key, old);
        }
        held.set(c.key, text);
      }
      await assertNoRotationState();
      done.add('a3');
    });

    it('a4: the --out file generated with --kubeconfig merged.yaml is rotated with --file from KUBECONFIG=/abs/merged.yaml', async () => {
      needs('a1');
      const res = await fleet(['creds', 'rotate', '--file', filePath(), '-o', 'json'], {
        cwd: at.elsewhere,
        env: cleanEnv(at.laptopHome, { KUBECONFIG: merged }),
      });
      assert.equal(res.code, 0, show(res));
      const item = res.json().items[0];
      assert.equal(item.status, 'rotated', JSON.stringify(item));
      assert.equal(statSync(filePath()).mode & 0o777, 0o600);
      const text = readFileSync(filePath(), 'utf8');
      remember(text);
      assert.notEqual(text, fileText);
      assertThirtyDays({ key: 'file', method: 'token' }, text);
      assert.equal((await whoIs(text)).user, FILE.username);
      await assertRefused('file', fileText);
      fileText = text;
      done.add('a4');
    });

    it('b: a CronJob on the hub, in-cluster configuration only, least hub RBAC from docs/rotation.md, members mounted elsewhere: every expiring Secret rotated', async () => {
      needs('a1');
      // The Pod's identity on the hub: a ServiceAccount with the Role of docs/rotation.md, as written there, and the
      // cluster-wide list of Secrets that the same section says --all needs.
      const sa = `${run}-rotator`;
      const rules = leastHubRules();
      await applyYaml(
        hub,
        [
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: hubNs } },
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: sa, namespace: hubNs }, rules },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name: sa, namespace: hubNs },
            subjects: [{ kind: 'ServiceAccount', name: sa, namespace: hubNs }],
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            metadata: { name: `${sa}-list` },
            rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name: `${sa}-list` },
            subjects: [{ kind: 'ServiceAccount', name: sa, namespace: hubNs }],
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${sa}-list` },
          },
        ]
          .map((o) => JSON.stringify(o))
          .join('\n---\n'),
      );
      // Where a Pod has them: /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}.
      const token = (await kubectl(hub, ['create', 'token', sa, '-n', hubNs, '--duration', '1h'])).trim();
      secrets.add(token);
      const saDir = join(at.pod, 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
      mkdirSync(saDir, { recursive: true });
      writeFileSync(join(saDir, 'token'), token, { mode: 0o600 });
      writeFileSync(join(saDir, 'ca.crt'), readFileSync(hub.caFile));
      // The mounted Secret fleet-rotator-config: fleet.yaml without hub: and one kubeconfig per member, other file names
      // and other context names than the laptop's, mode 0400 (defaultMode).
      const files: string[] = [];
      for (const m of [m1, m2]) {
        const doc = yaml.load(readFileSync(m.kubeconfig, 'utf8')) as any;
        const ctx = `rotator@${m.name}`;
        doc.contexts = [{ name: ctx, context: { cluster: `c-${m.name}`, user: `rotator-${m.name}` } }];
        doc.clusters[0].name = `c-${m.name}`;
        doc.users[0].name = `rotator-${m.name}`;
        doc['current-context'] = ctx;
        const f = join(at.etcFleet, `${m.name}.kubeconfig`);
        writeFileSync(f, yaml.dump(doc, { lineWidth: -1 }), { mode: 0o400 });
        files.push(`./${m.name}.kubeconfig`);
      }
      const fleetYaml = join(at.etcFleet, 'fleet.yaml');
      writeFileSync(
        fleetYaml,
        `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [${files.join(', ')}]}\n`,
      );
      chmodSync(fleetYaml, 0o400);
      const url = new URL(hub.url);
      const podEnv = cleanEnv(at.podHome, {
        KUBERNETES_SERVICE_HOST: url.hostname,
        KUBERNETES_SERVICE_PORT: url.port,
        FLEET_IN_CLUSTER_TOKEN_FILE: join(saDir, 'token'),
        FLEET_IN_CLUSTER_CA_FILE: join(saDir, 'ca.crt'),
      });
      // The CronJob's args of docs/rotation.md (creds rotate --all --expiring-within 48h -o json --fleet-config
      // /etc/fleet/fleet.yaml when this was written), with the window that selects 30-day credentials.
      const args = cronJobArgs(at.etcFleet);
      assert.ok(args.includes(fleetYaml), `the CronJob's args name no /etc/fleet/fleet.yaml: ${args.join(' ')}`);
      const res = await fleet(args, { cwd: at.pod, env: podEnv });
      const report = res.json();
      assert.equal(report.kind, 'CredentialRotation', show(res));
      assert.equal(report.hub, 'in-cluster', show(res));
      const items = report.items as any[];
      const byName = (c: Cred) => items.find((i) => i.secret?.namespace === hubNs && i.secret.name === nameOf(c));
      const expected = (c: Cred) => (c.method === 'legacy-token' ? 'skipped' : 'rotated'); // a legacy token never expires
      const wrong = CREDS.filter((c) => byName(c)?.status !== expected(c)).map(
        (c) =>
          `${c.secret}: ${byName(c) ? `${byName(c).status}: ${byName(c).reason ?? ''} ${JSON.stringify(byName(c).error ?? '')}` : 'not in the report'}`,
      );
      assert.deepEqual(wrong, [], `not as expected (exit ${res.code}; stderr ${res.stderr.trim()})`);
      // Secrets in other namespaces (a hub shared with other tests) are outside this ServiceAccount's Role: they fail,
      // and then the exit code must say so.
      const foreignFailed = items.filter((i) => i.status === 'failed' && i.secret?.namespace !== hubNs);
      assert.equal(res.code, foreignFailed.length > 0 ? 1 : 0, show(res));
      for (const c of CREDS) {
        const old = held.get(c.key)!;
        const text = await credText(c);
        if (c.method === 'legacy-token') {
          assert.equal(text, old, `${c.key}: skipped, yet the Secret changed`);
          continue;
        }
        assert.notEqual(text, old, `${c.key}: the Secret holds the same credential`);
        assertThirtyDays(c, text);
        assert.equal((await whoIs(text)).user, c.username);
        await consumerSees(c);
        if (c.method !== 'client-cert') await assertRefused(c.key, old);
        held.set(c.key, text);
      }
      await assertNoRotationState();
      done.add('b');
    });

    it('a5: creds revoke --dry-run previews; creds revoke of every Secret and of the file removes what generate made; the credentials are refused', async () => {
      needs('a1');
      const names = CREDS.map((c) => c.secret);
      const dry = await laptop(['creds', 'revoke', ...names, '--kubeconfig', 'merged.yaml', '--dry-run', '-o', 'json']);
      assert.equal(dry.code, 0, show(dry));
      assert.equal(dry.json().kind, 'CredentialRevocation');
      assert.equal(dry.json().dryRun, true);
      assert.deepEqual(
        dry
          .json()
          .items.map((i: any) => `${i.secret?.namespace}/${i.secret?.name} ${i.status}`)
          .sort(),
        names.map((n) => `${n} planned`).sort(),
      );
      for (const c of CREDS) assert.ok(await hubSecret(c.secret), `--dry-run deleted ${c.secret}`);

      const res = await laptop(['creds', 'revoke', ...names, '--kubeconfig', 'merged.yaml', '-o', 'json']);
      assert.equal(res.code, 0, show(res));
      const report = res.json();
      assert.equal(report.kind, 'CredentialRevocation');
      assert.equal(report.dryRun, false);
      for (const c of CREDS) {
        const item = (report.items as any[]).find((i) => i.secret?.namespace === hubNs && i.secret.name === nameOf(c));
        assert.ok(item, `${c.secret} not in the report`);
        assert.equal(item.status, 'revoked', JSON.stringify(item));
        assert.equal(item.method, c.method);
        // Every object it says it deleted is gone, on the cluster it names.
        for (const d of item.deleted as any[]) {
          const ref = d.on === 'hub' ? hub : c.cluster;
          const args = ['get', d.kind.toLowerCase(), d.name, ...(d.namespace ? ['-n', d.namespace] : [])];
          assert.notEqual(
            (await kubectlResult(ref, args)).code,
            0,
            `${c.key}: ${d.kind} ${d.namespace ?? ''}/${d.name} still on ${d.on}`,
          );
        }
        // And independently of the report: the consumer Secret, the ServiceAccount fleet created, its anchors and grant.
        assert.equal(await hubSecret(c.secret), undefined, `${c.secret} still on the hub`);
        const old = held.get(c.key)!;
        if (c.sa) {
          assert.notEqual(
            (await kubectlResult(c.cluster, ['get', 'serviceaccount', c.sa, '-n', nsSys])).code,
            0,
            `${c.key}: ServiceAccount ${nsSys}/${c.sa} left`,
          );
          const left = (await kubectl(c.cluster, ['get', 'secrets', '-n', nsSys, '-o', 'name']))
            .split('\n')
            .filter((n) => n.startsWith(`secret/${c.sa}-fleet-`));
          assert.deepEqual(left, [], `${c.key}: anchors or token Secrets left`);
          await assertRefused(c.key, old);
          assert.equal(item.refused.done, true, JSON.stringify(item.refused));
        } else {
          // A certificate stays valid until its NotAfter (said so); the grant behind it is gone.
          assert.equal(item.refused.done, false);
          assert.match(item.refused.reason, /valid until|NotAfter/);
          assert.equal(await can(c.cluster, old, c.can), false, `${c.key}: the grant is still there`);
        }
        const grants = (await kubectl(c.cluster, ['get', 'roles,rolebindings', '-n', nsApps, '-o', 'name']))
          .split('\n')
          .concat((await kubectl(c.cluster, ['get', 'clusterroles,clusterrolebindings', '-o', 'name'])).split('\n'));
        const mine = c.sa ? `fleet-creds-${nsSys}-${c.sa}` : `fleet-creds-user-${c.username}`;
        assert.deepEqual(
          grants.filter((g) => g.endsWith(`/${mine}`)),
          [],
          `${c.key}: RBAC left`,
        );
      }

      const file = await laptop(['creds', 'revoke', '--file', FILE.name, '--kubeconfig', 'merged.yaml', '-o', 'json']);
      assert.equal(file.code, 0, show(file));
      const item = file.json().items[0];
      assert.equal(item.status, 'revoked', JSON.stringify(item));
      assert.equal(existsSync(filePath()), false, 'the file is still there');
      assert.notEqual(
        (await kubectlResult(m1, ['get', 'serviceaccount', FILE.sa, '-n', nsSys])).code,
        0,
        "the file's ServiceAccount is left",
      );
      await assertRefused('file', fileText);
      done.add('a5');
    });

    it('no token or key made in the journeys appears in any output', () => {
      for (const { what, res } of outputs)
        for (const s of secrets)
          assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a secret in the output of fleet ${what}`);
      // Only a journey that ran made the secrets and outputs worth grepping.
      needs('a1', 'a3', 'b', 'a5');
      assert.ok(outputs.length >= 20, `only ${outputs.length} outputs captured`);
      assert.ok(secrets.size >= 15, `only ${secrets.size} secrets collected`);
    });
  },
);

describe("a 30-day credential's whole life, timed", () => {
  it('generate (30d) -> rotate -> revoke of one multicluster-runtime Secret, from the laptop', async (t) => {
    const secret = `${hubNs}/cycle`;
    const times: Record<string, number> = {};
    const timed = async (step: string, args: string[]) => {
      const start = performance.now();
      const res = await laptop(args);
      times[step] = Math.round(performance.now() - start);
      assert.equal(res.code, 0, `${step}: ${show(res)}`);
      return res;
    };
    const start = performance.now();
    await timed('generate', [
      'creds',
      'generate',
      '--kubeconfig',
      'merged.yaml',
      '-c',
      m1.context,
      '--service-account',
      `${nsSys}/cycle`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--secret',
      secret,
      '--format',
      'multicluster-runtime',
      '--duration',
      '30d',
      '-o',
      'json',
    ]);
    const first = kubeconfigOf(await hubSecret(secret));
    assertThirtyDays({ key: 'cycle', method: 'token' }, first);
    const rotated = await timed('rotate', ['creds', 'rotate', secret, '--kubeconfig', 'merged.yaml', '-o', 'json']);
    assert.equal(rotated.json().items[0].status, 'rotated');
    const second = kubeconfigOf(await hubSecret(secret));
    await timed('revoke', ['creds', 'revoke', secret, '--kubeconfig', 'merged.yaml', '-o', 'json']);
    const total = Math.round(performance.now() - start);
    assert.equal(await hubSecret(secret), undefined);
    await assertRefused('cycle', first);
    await assertRefused('cycle', second);
    const line = `30-day generate -> rotate -> revoke of one Secret: ${(total / 1000).toFixed(1)} s wall (generate ${times.generate} ms, rotate ${times.rotate} ms, revoke ${times.revoke} ms)`;
    t.diagnostic(line);
    console.log(line);
    for (const { what, res } of outputs)
      for (const s of secrets)
        assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `a secret in the output of fleet ${what}`);
  });
});
