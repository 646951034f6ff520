// An adopted credential's whole life, across the machines that handle it (issue 39 item 2 with the journeys of issue
// 19): a member added to Argo CD the way `argocd cluster add` adds it (Argo CD's own code: argocd-manager with `*` on
// `*` and a never-expiring legacy token in the hub's cluster Secret) is
//   1. adopted on a laptop: HOME empty, KUBECONFIG unset, a relative `--kubeconfig merged.yaml` naming hub and member;
//      the Secret then holds a 30-day bound token of a view-only identity, Argo CD's code connects with it, the legacy
//      token Secret is deleted and the old token refused (401);
//   2. rotated by a CronJob on the hub, with in-cluster configuration only (no kubeconfig for the hub, the least hub RBAC
//      of docs/rotation.md read from the doc), the member reached through a mounted kubeconfig with other names;
//   3. listed from CI, where KUBECONFIG names the laptop's file through a symlink: managed, 30 days, its credential-id,
//      and `--credential-id` names the Secret;
//   4. revoked from the laptop, previewed with --dry-run first: the Secret and the anchor are gone and the last token
//      is refused.
// Every output is grepped for every token the journey saw.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { argocdClusterAdd, argocdConnect, argocdNamespace } from '../support/argocd.js';
import { type CliResult, cleanEnv, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { mergedKubeconfig } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('jadopt');
const argoNs = `${run}-argocd`; // Argo CD's namespace on the hub
const sysNs = `${run}-sys`; // where `argocd cluster add` puts argocd-manager on the member
const viewNs = `${run}-view`; // the adopted identity's ServiceAccount on the member
const DAY = 86_400;

const outputs: Array<{ what: string; res: CliResult }> = [];
const tokens = new Set<string>();
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');
const at = { laptopHome: '', laptop: '', ciHome: '', ci: '', podHome: '', pod: '', etcFleet: '' };
let secret = ''; // the Argo CD cluster Secret's name
let tokenSecret = ''; // argocd-manager's legacy token Secret on the member
const steps = new Set<string>();
const needs = (step: string) => assert.ok(steps.has(step), `step ${step} did not pass`);

async function fleet(args: string[], o: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  const res = await runFleet(args, { cwd: o.cwd, env: o.env, timeoutMs: 240_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}
const laptop = (args: string[]) => fleet(args, { cwd: at.laptop, env: cleanEnv(at.laptopHome) });
const show = (res: CliResult) => `exit ${res.code}\nstderr: ${res.stderr.trim()}\nstdout: ${res.stdout.slice(0, 4000)}`;

/** The bearer token in the Argo CD Secret's config, as the hub has it now. */
async function heldToken(): Promise<string> {
  const s = JSON.parse(await kubectl(hub, ['get', 'secret', secret, '-n', argoNs, '-o', 'json'])) as {
    data: { config: string };
  };
  const token = (JSON.parse(decode(s.data.config)) as { bearerToken?: string }).bearerToken;
  assert.ok(token, 'the Argo CD Secret holds no bearer token');
  tokens.add(token);
  return token;
}

let probes = 0;
/** Who member-1 says a token is, or undefined when it refuses it (kubectl auth whoami, not fleet). */
function whoIs(token: string): Promise<string | undefined> {
  const path = join(at.laptop, `..`, `probe-${probes++}.kubeconfig`);
  writeFileSync(
    path,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'm', cluster: { server: m1.url, 'certificate-authority': m1.caFile } }],
      users: [{ name: 'u', user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'm', user: 'u' } }],
      'current-context': 'c',
    }),
    { mode: 0o600 },
  );
  return new Promise((resolve) =>
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve(error ? (/Unauthorized/.test(stderr) ? undefined : `error: ${stderr}`) : stdout),
    ),
  );
}

/** The seconds between a JWT's iat and exp. */
function lifetime(token: string): number {
  const c = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { iat: number; exp: number };
  return c.exp - c.iat;
}

const rotationDoc = () => readFileSync(fileURLToPath(new URL('../../docs/rotation.md', import.meta.url)), 'utf8');
/** The hub Role's rules exactly as docs/rotation.md "Least RBAC on the hub" writes them. */
function leastHubRules(): unknown[] {
  const section = rotationDoc().split(/^### Least RBAC on the hub.*$/m)[1];
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'docs/rotation.md "Least RBAC on the hub" has no yaml block');
  const rules = (yaml.load(block[1]) as { rules?: unknown[] }).rules;
  assert.ok(Array.isArray(rules) && rules.length > 0);
  return rules;
}

describe('journey: an Argo CD credential adopted on a laptop, rotated by a CronJob, listed from CI, revoked', () => {
  before(async () => {
    const root = join(scratchDir(), run);
    for (const k of Object.keys(at) as Array<keyof typeof at>) {
      at[k] = join(root, k);
      mkdirSync(at[k], { recursive: true });
    }
    writeFileSync(join(at.laptop, 'merged.yaml'), mergedKubeconfig([hub, m1], hub.context), { mode: 0o600 });
    await argocdNamespace(hub, argoNs);
    await kubectl(m1, ['create', 'namespace', sysNs]);
    await kubectl(m1, ['create', 'namespace', viewNs]);
    const added = await argocdClusterAdd(hub, {
      namespace: argoNs,
      member: m1,
      systemNamespace: sysNs,
      clusterName: 'member-1-prod',
      tokenOnly: true,
    });
    secret = added.secret;
    tokenSecret = added.tokenSecret;
  });
  after(async () => {
    await kubectlResult(hub, ['delete', 'namespace', argoNs, '--wait=false']);
    await kubectlResult(m1, ['delete', 'namespace', sysNs, viewNs, '--wait=false']);
  });

  it('1: the laptop adopts it into a 30-day view-only bound token; Argo CD connects; the legacy token is refused', async () => {
    const legacy = await heldToken();
    assert.equal(await whoIs(legacy), `system:serviceaccount:${sysNs}:argocd-manager`);
    const res = await laptop([
      'creds',
      'adopt',
      `${argoNs}/${secret}`,
      '--kubeconfig',
      'merged.yaml',
      '--service-account',
      `${viewNs}/argocd-view`,
      '--cluster-role',
      'view',
      '--duration',
      '30d',
      '--revoke-old',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, show(res));
    const item = (JSON.parse(res.stdout) as { items: any[] }).items[0];
    assert.equal(item.status, 'adopted', show(res));
    assert.equal(item.before.identity, `system:serviceaccount:${sysNs}:argocd-manager`);
    assert.equal(item.before.expires, 'never');
    assert.ok(item.before.risks.length > 0, 'a `*` on `*` grant reported no risk');
    assert.equal(item.after.identity, `system:serviceaccount:${viewNs}:argocd-view`);
    assert.equal(item.old.revoked, true, show(res));
    const token = await heldToken();
    assert.notEqual(token, legacy);
    assert.equal(lifetime(token), 30 * DAY);
    assert.equal((await argocdConnect(hub, argoNs, secret)).username, `system:serviceaccount:${viewNs}:argocd-view`);
    assert.equal(await whoIs(legacy), undefined, 'the legacy token still authenticates');
    const gone = await kubectlResult(m1, ['get', 'secret', tokenSecret.split('/').pop()!, '-n', sysNs]);
    assert.notEqual(gone.code, 0, 'the legacy token Secret is still there');
    steps.add('1');
  });

  it('2: a CronJob on the hub with in-cluster configuration only rotates it; Argo CD connects; the previous token is refused', async () => {
    needs('1');
    const before = await heldToken();
    const sa = `${run}-rotator`;
    await applyYaml(
      hub,
      [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: argoNs } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: sa, namespace: argoNs },
          rules: leastHubRules(),
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: sa, namespace: argoNs },
          subjects: [{ kind: 'ServiceAccount', name: sa, namespace: argoNs }],
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
        },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n---\n'),
    );
    const podToken = (await kubectl(hub, ['create', 'token', sa, '-n', argoNs, '--duration', '1h'])).trim();
    tokens.add(podToken);
    const saDir = join(at.pod, 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    writeFileSync(join(saDir, 'token'), podToken, { mode: 0o600 });
    writeFileSync(join(saDir, 'ca.crt'), readFileSync(hub.caFile));
    // The member as a mounted Secret would give it: another file name, other context/cluster/user names, mode 0400.
    const doc = yaml.load(readFileSync(m1.kubeconfig, 'utf8')) as any;
    doc.contexts = [{ name: 'rotator@m1', context: { cluster: 'c-m1', user: 'rotator-m1' } }];
    doc.clusters[0].name = 'c-m1';
    doc.users[0].name = 'rotator-m1';
    doc['current-context'] = 'rotator@m1';
    writeFileSync(join(at.etcFleet, 'm1.kubeconfig'), yaml.dump(doc, { lineWidth: -1 }), { mode: 0o400 });
    const fleetYaml = join(at.etcFleet, 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      'apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [./m1.kubeconfig]}\n',
      { mode: 0o400 },
    );
    const url = new URL(hub.url);
    const res = await fleet(
      ['creds', 'rotate', `${argoNs}/${secret}`, '--expiring-within', '45d', '-o', 'json', '--fleet-config', fleetYaml],
      {
        cwd: at.pod,
        env: cleanEnv(at.podHome, {
          KUBERNETES_SERVICE_HOST: url.hostname,
          KUBERNETES_SERVICE_PORT: url.port,
          FLEET_IN_CLUSTER_TOKEN_FILE: join(saDir, 'token'),
          FLEET_IN_CLUSTER_CA_FILE: join(saDir, 'ca.crt'),
        }),
      },
    );
    assert.equal(res.code, 0, show(res));
    const report = JSON.parse(res.stdout) as { hub: string; items: any[] };
    assert.equal(report.hub, 'in-cluster', show(res));
    assert.equal(report.items[0].status, 'rotated', show(res));
    const token = await heldToken();
    assert.notEqual(token, before);
    assert.equal(lifetime(token), 30 * DAY, 'the rotation did not keep the adopted 30 days');
    assert.equal((await argocdConnect(hub, argoNs, secret)).username, `system:serviceaccount:${viewNs}:argocd-view`);
    assert.equal(await whoIs(before), undefined, 'the token before the rotation still authenticates');
    const claims = JSON.parse(await kubectl(hub, ['get', 'secret', secret, '-n', argoNs, '-o', 'json'])) as {
      metadata: { annotations?: Record<string, string> };
    };
    const leftover = Object.keys(claims.metadata.annotations ?? {}).filter((k) => k.startsWith('fleet.dev/rotation-'));
    assert.deepEqual(leftover, [], 'a rotation claim was left on the Secret');
    steps.add('2');
  });

  it('3: CI lists it through a symlinked KUBECONFIG: managed, 30 days, its credential-id names the Secret', async () => {
    needs('2');
    const link = join(at.ci, 'kubeconfig');
    symlinkSync(join(at.laptop, 'merged.yaml'), link);
    const env = cleanEnv(at.ciHome, { KUBECONFIG: link, CI: 'true' });
    const res = await fleet(['creds', 'list', '-o', 'json'], { cwd: at.ci, env });
    assert.equal(res.code, 0, show(res));
    const item = (JSON.parse(res.stdout) as { items: any[] }).items.find(
      (i) => i.source?.namespace === argoNs && i.source.name === secret,
    );
    assert.ok(item, `creds list does not show ${argoNs}/${secret}`);
    assert.equal(item.managedByFleet, true);
    assert.equal(item.method, 'bound-token');
    assert.equal(item.identity, `system:serviceaccount:${viewNs}:argocd-view`);
    const days = (Date.parse(item.expires as string) - Date.now()) / 1000 / DAY;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    assert.match(item.credentialId as string, /^JTI=[0-9a-f-]{36}$/);
    const traced = await fleet(['creds', 'list', '--credential-id', item.credentialId as string, '-o', 'json'], {
      cwd: at.ci,
      env,
    });
    assert.equal(traced.code, 0, show(traced));
    const found = (JSON.parse(traced.stdout) as { items: any[] }).items.map(
      (i) => `${i.source.namespace as string}/${i.source.name as string}`,
    );
    assert.deepEqual(found, [`${argoNs}/${secret}`]);
    const window = await fleet(['creds', 'list', '--expiring-within', '45d', '-o', 'json'], { cwd: at.ci, env });
    assert.equal(window.code, 1, 'a 30-day credential is not reported inside a 45-day window');
    steps.add('3');
  });

  it('4: the laptop previews and revokes it: the Secret and the anchor are gone, the token is refused', async () => {
    needs('3');
    const token = await heldToken();
    const dry = await laptop(['creds', 'revoke', `${argoNs}/${secret}`, '--kubeconfig', 'merged.yaml', '--dry-run']);
    assert.equal(dry.code, 0, show(dry));
    assert.equal(await heldToken(), token, '--dry-run changed the Secret');
    assert.equal(await whoIs(token), `system:serviceaccount:${viewNs}:argocd-view`, '--dry-run revoked the token');
    const res = await laptop(['creds', 'revoke', `${argoNs}/${secret}`, '--kubeconfig', 'merged.yaml', '-o', 'json']);
    assert.equal(res.code, 0, show(res));
    assert.notEqual((await kubectlResult(hub, ['get', 'secret', secret, '-n', argoNs])).code, 0, 'the Secret is left');
    const anchors = JSON.parse(await kubectl(m1, ['get', 'secrets', '-n', viewNs, '-o', 'json'])) as { items: any[] };
    assert.deepEqual(
      anchors.items.map((s) => s.metadata.name as string).filter((n) => n.includes('fleet-anchor')),
      [],
      'an anchor is left',
    );
    assert.equal(await whoIs(token), undefined, 'the revoked token still authenticates');
  });

  it('no token appears in any output', () => {
    assert.ok(outputs.length >= 6 && tokens.size >= 4);
    for (const { what, res } of outputs)
      for (const t of tokens)
        assert.ok(!(res.stdout + res.stderr).includes(t), `${what}: a token appears in the output`);
  });
});
