// fleet creds adopt --file against the real control plane (issue 39 item 2): a kubeconfig file fleet did not write is
// taken over in place. A file with a legacy ServiceAccount token of a cluster-admin (beside another context, a user
// preference and an extension of someone else's) is adopted through a symlink into a namespace-scoped view identity with
// a bound token: --dry-run leaves it byte for byte, the new file does what the grant says and no more (kubectl auth
// can-i), the link stays a link, every other entry is kept, --revoke-old makes the old token refused, creds list shows the
// context as fleet's, creds rotate --file rotates it and creds revoke --file revokes it (the other context stays). A file
// with the client certificate of a cluster-admin user is adopted into a new identity (the certificate reported with its
// NotAfter); a static token's adoption is interrupted with SIGINT after the mint (the file is as it was, the run's
// identity gone), then done (the token said still valid, not revocable by fleet). fleet runs with --kubeconfig FILE,
// KUBECONFIG unset and HOME an empty directory; no token or key made here appears in any output.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import {
  applyYaml,
  createCertUser,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const m1 = cp.members[0];
const run = uniqueName('adoptf');
const src = `${run}-src`;
const apps = `${run}-apps`;
const legacySa = 'legacy-deployer';
const certUser = `${run}-admin`;
const caPem = readFileSync(m1.caFile, 'utf8');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

const outputs: Array<{ what: string; text: string }> = [];
const secrets = new Set<string>();
let dir: string;
let home: string;

async function fleet(args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 180_000, cwd: o.cwd, env: { HOME: home, ...o.env } });
  outputs.push({ what: args.join(' '), text: res.stdout + res.stderr });
  return res;
}

/** A kubeconfig as people write them: several contexts, a preference and someone else's extension beside the one adopted. */
function kubeconfig(
  contexts: Array<{ name: string; user: Record<string, unknown> }>,
  current: string,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: { colors: true },
    clusters: [{ name: 'm1', cluster: { server: m1.url, 'certificate-authority-data': b64(caPem) } }],
    users: contexts.map((c) => ({ name: `${c.name}-user`, user: c.user })),
    contexts: contexts.map((c) => ({
      name: c.name,
      context: { cluster: 'm1', user: `${c.name}-user`, namespace: apps },
    })),
    'current-context': current,
    extensions: [{ name: 'example.com/team', extension: { owner: 'platform' } }],
  };
}

/** kubectl with a kubeconfig file: its output, or undefined when it fails (a refused credential, a "no"). */
function kubectlWith(path: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, ...args],
      { timeout: 30_000, env: { ...process.env, KUBECONFIG: '', HOME: home } },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    ),
  );
}
const whoami = (path: string, context?: string) =>
  kubectlWith(path, [
    ...(context ? ['--context', context] : []),
    'auth',
    'whoami',
    '-o',
    'jsonpath={.status.userInfo.username}',
  ]);
const canI = (path: string, context: string, ...args: string[]) =>
  kubectlWith(path, ['--context', context, 'auth', 'can-i', ...args]).then((out) => out === 'yes');

let probe = 0;
/** Who a bare token is, or undefined when the server refuses it. */
function tokenIs(token: string): Promise<string | undefined> {
  const path = join(dir, `probe-${probe++}.kubeconfig`);
  writeFileSync(path, yaml.dump(kubeconfig([{ name: 'p', user: { token } }], 'p')), { mode: 0o600 });
  return whoami(path);
}

const fileOf = (path: string) => yaml.load(readFileSync(path, 'utf8')) as any;
const userOf = (doc: any, name: string) => doc.users.find((u: any) => u.name === name)?.user;
const facts = (doc: any) => doc.extensions?.find((x: any) => x.name === 'fleet.dev/credential')?.extension;

async function anchorsOf(ns: string, sa: string): Promise<string[]> {
  const out = await kubectl(m1, ['get', 'secrets', '-n', ns, '-o', 'json']);
  return (JSON.parse(out).items as any[])
    .map((s) => s.metadata.name as string)
    .filter((n) => n.startsWith(`${sa}-fleet-anchor-`))
    .sort();
}

let legacy = '';

before(async () => {
  dir = join(scratchDir(), run);
  home = join(dir, 'home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, 'real'), { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, 'links', 'sub'), { recursive: true, mode: 0o700 });
  // A ServiceAccount with cluster-admin and a legacy token Secret, as older installers (argocd cluster add) leave them.
  await applyYaml(
    m1,
    [
      `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${src}}`,
      `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${apps}}`,
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${legacySa}, namespace: ${src}}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${run}-legacy}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: ServiceAccount, name: ${legacySa}, namespace: ${src}}`,
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${legacySa}-token\n  namespace: ${src}\n  annotations: {kubernetes.io/service-account.name: ${legacySa}}\ntype: kubernetes.io/service-account-token`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${run}-cert}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: User, name: ${certUser}, apiGroup: rbac.authorization.k8s.io}`,
    ].join('\n---\n'),
  );
  for (let i = 0; i < 100 && !legacy; i++) {
    legacy = decode(
      await kubectl(m1, ['get', 'secret', `${legacySa}-token`, '-n', src, '-o', 'jsonpath={.data.token}']),
    );
    if (!legacy) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(legacy, 'kube-controller-manager did not fill the legacy token Secret');
  secrets.add(legacy);
});

after(async () => {
  await kubectlResult(m1, ['delete', 'namespace', src, apps, '--wait=false', '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'clusterrolebinding', `${run}-legacy`, `${run}-cert`, '--ignore-not-found']);
});

describe('fleet creds adopt --file', { concurrency: false }, () => {
  let real = '';
  let link = '';
  let alice = '';

  it('refuses, in one line with exit 2 and before any cluster is touched, what it cannot adopt', async () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad, { recursive: true });
    execFileSync('mkfifo', [join(bad, 'fifo')]);
    // A server nothing listens on: a check that contacted it would fail with a connection error, not these lines.
    const offline = (user: Record<string, unknown>) => {
      const doc = kubeconfig([{ name: 'x', user }], 'x');
      (doc.clusters as any[])[0].cluster.server = 'https://127.0.0.1:1';
      return yaml.dump(doc);
    };
    writeFileSync(join(bad, 'token.kubeconfig'), offline({ token: 'abc' }), { mode: 0o600 });
    writeFileSync(
      join(bad, 'exec.kubeconfig'),
      offline({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', args: ['eks', 'get-token'] } }),
      { mode: 0o600 },
    );
    const cases: Array<[string[], RegExp]> = [
      [['--file', join(bad, 'missing.kubeconfig')], /missing\.kubeconfig: file not found$/],
      [['--file', bad], /is a directory, not a kubeconfig file$/],
      [['--file', join(bad, 'fifo')], /fifo: not a regular file$/],
      [
        ['--file', join(bad, 'token.kubeconfig'), '--context', 'nope'],
        /no context "nope" in the file \(its contexts: x\)$/,
      ],
      [
        ['--file', join(bad, 'exec.kubeconfig')],
        /the exec plugin aws, which makes and renews it: fleet holds no secret/,
      ],
      [['--file', join(bad, 'token.kubeconfig'), 'ns/name'], /--file and Secret names exclude each other/],
      [['--file', join(bad, 'token.kubeconfig')], /pass --yes to adopt without a prompt/],
    ];
    for (const [args, want] of cases) {
      const res = await fleet(['creds', 'adopt', '--kubeconfig', join(bad, 'token.kubeconfig'), ...args]);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      const lines = res.stderr.trim().split('\n');
      assert.equal(lines.length, 1, res.stderr);
      assert.match(lines[0], want);
      assert.doesNotMatch(res.stderr, /127\.0\.0\.1:1|connect|ECONNREFUSED/);
    }
  });

  it('--dry-run (a relative path through ..) says who the legacy token is, cluster-admin, never expires, and leaves the file byte for byte', async () => {
    alice = tokenUser(m1, 'alice').token;
    secrets.add(alice);
    real = join(dir, 'real', 'team.kubeconfig');
    writeFileSync(
      real,
      yaml.dump(
        kubeconfig(
          [
            { name: 'alice', user: { token: alice } },
            { name: 'deploy', user: { token: legacy } },
          ],
          'alice',
        ),
      ),
      { mode: 0o600 },
    );
    link = join(dir, 'links', 'team.kubeconfig');
    symlinkSync('../real/team.kubeconfig', link);
    const bytes = readFileSync(real);
    const rel = '../team.kubeconfig';
    const cwd = join(dir, 'links', 'sub');
    const dry = await fleet(
      [
        'creds',
        'adopt',
        '--kubeconfig',
        rel,
        '--file',
        rel,
        '--context',
        'deploy',
        '--service-account',
        `${apps}/deployer`,
        '--role',
        'view',
        '-n',
        apps,
        '--revoke-old',
        '--dry-run',
        '-o',
        'json',
      ],
      { cwd },
    );
    assert.equal(dry.code, 0, dry.stderr);
    const report = dry.json<any>();
    assert.equal(report.kind, 'CredentialAdoption');
    const item = report.items[0];
    assert.deepEqual(item.file, { path: link, context: 'deploy' });
    assert.equal(item.status, 'planned');
    assert.equal(item.before.identity, `system:serviceaccount:${src}:${legacySa}`);
    assert.equal(item.before.method, 'legacy-token');
    assert.equal(item.before.expires, 'never');
    assert.deepEqual(item.before.risks, ['cluster-admin']);
    assert.equal(item.before.tokenSecret, `${src}/${legacySa}-token`);
    assert.equal(item.after.identity, `system:serviceaccount:${apps}:deployer`);
    assert.equal(item.after.scope, `namespaces ${apps}`);
    assert.equal(item.old.valid, true);
    assert.match(item.old.reason, /never expires; --revoke-old deletes its token Secret/);
    assert.deepEqual(readFileSync(real), bytes);
    assert.ok(lstatSync(link).isSymbolicLink());
    // Nothing was made on the cluster either.
    assert.notEqual((await kubectlResult(m1, ['get', 'serviceaccount', 'deployer', '-n', apps])).code, 0);
  });

  it('adopts it through the symlink: the link stays a link, only that user changed, the new file does what view in one namespace allows and no more, the old token is refused', async () => {
    const before = fileOf(real);
    const res = await fleet([
      'creds',
      'adopt',
      '--kubeconfig',
      link,
      '--file',
      link,
      '--context',
      'deploy',
      '--service-account',
      `${apps}/deployer`,
      '--role',
      'view',
      '-n',
      apps,
      '--duration',
      '2h',
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.deepEqual(
      item.steps.map((x: any) => x.step),
      ['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke', 'confirm-revoked', 'finish'],
    );
    assert.deepEqual(
      item.verification.map((c: any) => [c.name, c.status]),
      [
        ['identity', 'pass'],
        ['granted', 'pass'],
        ['denied', 'pass'],
      ],
    );
    assert.ok(Math.abs(Date.parse(item.after.expires) - Date.now() - 2 * 3600_000) < 600_000, item.after.expires);
    assert.equal(item.old.revoked, true);
    assert.match(item.old.reason, /refused \(401\)/);

    assert.ok(lstatSync(link).isSymbolicLink(), 'the link was replaced by a file');
    assert.equal(statSync(real).mode & 0o777, 0o600);
    const doc = fileOf(real);
    const token = userOf(doc, 'deploy-user').token as string;
    secrets.add(token);
    assert.notEqual(token, legacy);
    // Everything but that user's credential and fleet's record is as it was.
    assert.deepEqual(userOf(doc, 'alice-user'), userOf(before, 'alice-user'));
    assert.deepEqual(doc.clusters, before.clusters);
    assert.deepEqual(doc.contexts, before.contexts);
    assert.equal(doc['current-context'], 'alice');
    assert.deepEqual(doc.preferences, { colors: true });
    assert.deepEqual(
      doc.extensions.find((x: any) => x.name === 'example.com/team'),
      { name: 'example.com/team', extension: { owner: 'platform' } },
    );
    const f = facts(doc);
    assert.equal(f.context, 'deploy');
    assert.equal(f.method, 'token');
    assert.equal(f.identity, `system:serviceaccount:${apps}:deployer`);
    assert.equal(f['adopted-from'], `system:serviceaccount:${src}:${legacySa} (legacy-token, expires never)`);
    assert.ok(!Object.keys(f).some((k) => k.startsWith('rotation-')), 'rotation facts left behind');

    assert.equal(await whoami(link, 'deploy'), `system:serviceaccount:${apps}:deployer`);
    assert.equal(await whoami(link, 'alice'), 'alice');
    assert.equal(await canI(link, 'deploy', 'list', 'pods', '-n', apps), true);
    assert.equal(await canI(link, 'deploy', 'list', 'pods', '-n', src), false);
    assert.equal(await canI(link, 'deploy', 'get', 'secrets', '-n', apps), false);
    assert.equal(await canI(link, 'deploy', 'create', 'deployments', '-n', apps), false);
    assert.equal(await tokenIs(legacy), undefined, 'the old token still works');

    const again = await fleet([
      'creds',
      'adopt',
      '--kubeconfig',
      link,
      '--file',
      link,
      '--context',
      'deploy',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json<any>().items[0].status, 'unchanged');
  });

  it('creds list shows the adopted context as fleet-managed (the other one not); creds rotate --file rotates it', async () => {
    const list = await fleet(['creds', 'list', '--kubeconfig', link, '-o', 'json']);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.json<any>().items.filter((i: any) => i.source?.kind === 'kubeconfig');
    const byContext = Object.fromEntries(rows.map((i: any) => [i.source.context, i.managedByFleet]));
    assert.deepEqual(byContext, { alice: false, deploy: true });

    const old = userOf(fileOf(real), 'deploy-user').token as string;
    // The adopted view identity may not mint: the admin kubeconfig is the credential that may (as for any file).
    const rot = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, '--file', link, '-o', 'json']);
    assert.equal(rot.code, 0, rot.stderr + rot.stdout);
    const r = rot.json<any>().items[0];
    assert.equal(r.status, 'rotated', JSON.stringify(r));
    assert.equal(r.identity, `system:serviceaccount:${apps}:deployer`);
    assert.ok(lstatSync(link).isSymbolicLink());
    const doc = fileOf(real);
    const token = userOf(doc, 'deploy-user').token as string;
    secrets.add(token);
    assert.notEqual(token, old);
    assert.equal(userOf(doc, 'alice-user').token, alice);
    assert.equal(await whoami(link, 'deploy'), `system:serviceaccount:${apps}:deployer`);
    assert.equal(await tokenIs(old), undefined, 'the token rotated out still works');
  });

  it('creds revoke --file revokes it: the token is refused, the context goes, the rest of the file stays', async () => {
    const token = userOf(fileOf(real), 'deploy-user').token as string;
    const res = await fleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', link, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'revoked', JSON.stringify(item));
    assert.equal(await tokenIs(token), undefined, 'the revoked token still works');
    assert.ok(lstatSync(link).isSymbolicLink());
    const doc = fileOf(real);
    assert.deepEqual(
      doc.contexts.map((c: any) => c.name),
      ['alice'],
    );
    assert.deepEqual(
      doc.users.map((u: any) => u.name),
      ['alice-user'],
    );
    assert.equal(facts(doc), undefined);
    assert.equal(doc['current-context'], 'alice');
    assert.equal(await whoami(link), 'alice');
    // The ServiceAccount adopt created for the new identity is fleet's, and goes with it.
    assert.notEqual((await kubectlResult(m1, ['get', 'serviceaccount', 'deployer', '-n', apps])).code, 0);
  });

  it('a client certificate of a cluster-admin user: adopted into a new identity, the certificate reported with its NotAfter', async () => {
    const cert = await createCertUser(m1, { user: certUser, dir });
    const key = readFileSync(cert.keyFile, 'utf8');
    secrets.add(b64(key));
    secrets.add(key.split('\n').slice(1, -2).join(''));
    const path = join(dir, 'real', 'admin.kubeconfig');
    writeFileSync(
      path,
      yaml.dump(
        kubeconfig(
          [
            {
              name: 'admin',
              user: {
                'client-certificate-data': b64(readFileSync(cert.certFile, 'utf8')),
                'client-key-data': b64(key),
              },
            },
          ],
          'admin',
        ),
      ),
      { mode: 0o644 },
    );
    const bytes = readFileSync(path);
    const base = ['creds', 'adopt', '--kubeconfig', path, '--file', path];
    const same = await fleet([...base, '--dry-run']);
    assert.equal(same.code, 2, same.stderr);
    assert.match(same.stderr, /not a ServiceAccount, so fleet cannot mint for the same identity/);

    const into = ['--service-account', `${apps}/cert-view`, '--role', 'view', '-n', apps];
    const dry = await fleet([...base, ...into, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = dry.json<any>().items[0];
    assert.equal(planned.before.identity, certUser);
    assert.equal(planned.before.method, 'client-cert');
    assert.deepEqual(planned.before.risks, ['cluster-admin']);
    assert.ok(!Number.isNaN(Date.parse(planned.before.expires)), planned.before.expires);
    assert.deepEqual(readFileSync(path), bytes);

    const res = await fleet([...base, ...into, '--revoke-old', '--yes', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.old.valid, true);
    assert.equal(item.old.notAfter, planned.before.expires);
    assert.match(item.old.reason, /a client certificate cannot be revoked: it stays valid until .* \(its NotAfter\)/);
    assert.ok(!item.steps.some((s: any) => s.step === 'revoke'));
    // A credential file is 0600 from now on (it was 0644).
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const user = userOf(fileOf(path), 'admin-user');
    secrets.add(user.token);
    assert.deepEqual(Object.keys(user), ['token']);
    assert.equal(await whoami(path), `system:serviceaccount:${apps}:cert-view`);
    assert.equal(await canI(path, 'admin', 'delete', 'namespaces'), false);
  });

  it('a static token: SIGINT after the mint leaves the file as it was and the run identity gone; the token is said still valid and not revocable by fleet; a run killed after the replace is finished by the next', async () => {
    const carol = tokenUser(m1, 'carol').token;
    secrets.add(carol);
    const path = join(dir, 'real', 'static.kubeconfig');
    writeFileSync(path, yaml.dump(kubeconfig([{ name: 'ci', user: { token: carol } }], 'ci')), { mode: 0o640 });
    const bytes = readFileSync(path);
    const args = [
      'creds',
      'adopt',
      '--kubeconfig',
      m1.kubeconfig,
      '--file',
      path,
      '--service-account',
      `${apps}/ci`,
      '--role',
      'pod-lister',
      '-n',
      apps,
      '--yes',
      '-o',
      'json',
    ];
    const child: ChildProcess = spawn(process.execPath, [FLEET_BIN, ...args], {
      env: fleetTestEnv({ HOME: home, FLEET_ROTATE_PAUSE: 'after-mint:60000' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    const deadline = Date.now() + 60_000;
    while ((await anchorsOf(apps, 'ci')).length === 0) {
      assert.ok(Date.now() < deadline, `the run never minted: ${out}${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(facts(fileOf(path))['rotation-phase'], 'claimed');
    child.kill('SIGINT');
    assert.equal(await code, 130, out + err);
    outputs.push({ what: 'adopt --file interrupted', text: out + err });
    assert.match(err, /^error: .*\(context ci\): interrupted \(SIGINT\) before the new credential was written/m);
    const interrupted = JSON.parse(out).items[0];
    assert.equal(interrupted.error.kind, 'interrupted');
    assert.match(interrupted.error.message, /before the new credential was written: .*is as it was/);
    assert.deepEqual(readFileSync(path), bytes);
    assert.equal(statSync(path).mode & 0o777, 0o640);
    assert.deepEqual(await anchorsOf(apps, 'ci'), []);
    assert.notEqual(
      (await kubectlResult(m1, ['get', 'serviceaccount', 'ci', '-n', apps])).code,
      0,
      'the ServiceAccount the run made is left',
    );

    // Said before anything is done: a static token, never expires, still valid and not revocable by fleet.
    const dry = await fleet([...args.filter((a) => a !== '--yes'), '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = dry.json<any>().items[0];
    assert.equal(planned.before.identity, 'carol');
    assert.equal(planned.before.method, 'static-token');
    assert.equal(planned.before.expires, 'never');
    assert.equal(planned.old.valid, true);
    assert.match(planned.old.reason, /still valid: a static token .*fleet cannot revoke it/);

    // Killed (SIGKILL, no cleanup) right after the replace: the file holds the new credential and the claim; the next
    // adopt finishes it.
    const killed = await runFleet(args, {
      env: { HOME: home, FLEET_ROTATE_FAILPOINT: 'after-replace' },
      timeoutMs: 120_000,
    });
    outputs.push({ what: 'adopt --file killed', text: killed.stdout + killed.stderr });
    assert.notEqual(killed.code, 0);
    const mid = fileOf(path);
    assert.equal(facts(mid)['rotation-phase'], 'replaced');
    const token = userOf(mid, 'ci-user').token as string;
    secrets.add(token);
    assert.notEqual(token, carol);

    const res = await fleet(args);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.resumed, 'replaced');
    const done = fileOf(path);
    assert.ok(!Object.keys(facts(done)).some((k) => k.startsWith('rotation-')), 'rotation facts left behind');
    assert.equal(userOf(done, 'ci-user').token, token);
    assert.equal(await whoami(path), `system:serviceaccount:${apps}:ci`);
    assert.equal(await tokenIs(carol), 'carol');
  });

  it('no token or key made here appears in any output', () => {
    assert.ok(outputs.length > 10);
    for (const o of outputs)
      for (const s of secrets) if (s) assert.ok(!o.text.includes(s), `a secret appeared in the output of ${o.what}`);
  });
});
