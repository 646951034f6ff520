// fleet creds rotate against the real control plane: a token credential in a hub Secret is replaced by a new one that
// was proved first, the consumer reads the new one through the matching fleet provider and it works, the old token is
// refused, the fingerprint changes; a failed verification leaves the old credential in place and nothing behind; a run
// killed after every step (the failpoint) is finished by the next run with one anchor and no second mint of an anchor,
// while a probe sees a working credential in the Secret the whole time; two runs at once end with one valid credential.
// No secret made here appears in any captured output.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { writeConsumerFleet } from '../support/consumer-fleet.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { consumerWhoami } from '../support/secret-consumers.js';
import { kubeconfigInSecret } from '../support/kubeconfig.js';
import { cronJobRotator } from '../support/rbac.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('rot');
const nsSys = `${run}-sys`;
const hubNs = `${run}-hub`;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const ROTATE = ['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB];
const consumer = `${run}-consumer`;
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
const STEPS = ['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke', 'confirm-revoked', 'finish'];

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
let dir: string;
let fleetYaml: string;

async function fleet(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000, env });
  outputs.push({ what: args.join(' '), res });
  return res;
}

const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

/** The kubeconfig a Secret holds (argocd's config turned into one), remembered as a secret to grep for. */
function kubeconfigOf(s: any): string {
  const text = kubeconfigInSecret(s);
  const u = (yaml.load(text) as any).users[0].user;
  if (u.token) secrets.add(u.token);
  return text;
}

let probeFile = 0;
/**
 * Who the credential in a kubeconfig is, or undefined when the server refuses it. kubectl is run with stdin closed
 * (execFile): the probe runs hundreds of times alongside killed fleet runs, and a pipe to a kubectl that already exited
 * must not fail the test with EPIPE.
 */
async function whoIs(text: string): Promise<string | undefined> {
  const path = join(dir, `probe-${probeFile++ % 8}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return new Promise((resolve) => {
    execFile(
      cp.binaries.kubectl,
      ['--kubeconfig', path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
      { timeout: 30_000 },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    );
  });
}

async function anchors(sa: string, kind = 'anchor'): Promise<string[]> {
  const out = await kubectl(m1, ['get', 'secrets', '-n', nsSys, '-o', 'json']);
  return (JSON.parse(out).items as any[])
    .map((s) => s.metadata.name as string)
    .filter((n) => n.startsWith(`${sa}-fleet-${kind}-`))
    .sort();
}

async function generate(
  sa: string,
  name: string,
  format = 'multicluster-runtime',
  extra: string[] = [],
): Promise<void> {
  const who = extra.includes('client-cert') ? [] : ['--service-account', `${nsSys}/${sa}`];
  const res = await fleet([
    'creds',
    'generate',
    ...MEMBER,
    ...HUB,
    ...who,
    '--role',
    'pod-lister',
    '--create-namespace',
    '--duration',
    '2h',
    '--secret',
    `${hubNs}/${name}`,
    '--format',
    format,
    ...extra,
    '-o',
    'json',
  ]);
  assert.equal(res.code, 0, res.stderr);
  kubeconfigOf(await hubSecret(format === 'cluster-api' ? `${name}-kubeconfig` : name));
}

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  fleetYaml = writeConsumerFleet({ dir, run, hubNs, consumer });
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, '--wait=false']);
});

describe('fleet creds rotate (token)', { concurrency: false }, () => {
  it('rotates a multicluster-runtime Secret: new credential proved and read back by the kubeconfig provider, old token refused, old anchor gone', async () => {
    await generate('mcr', 'member-1');
    const before = await hubSecret('member-1');
    const oldText = kubeconfigOf(before);
    const oldAnchor = before.metadata.annotations['fleet.dev/credential-anchor'];
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:mcr`);

    const dry = await fleet([...ROTATE, `${hubNs}/member-1`, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.json().items[0].status, 'planned');
    assert.equal(
      (await hubSecret('member-1')).metadata.resourceVersion,
      before.metadata.resourceVersion,
      'a dry run changed the Secret',
    );

    const res = await fleet([...ROTATE, `${hubNs}/member-1`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated');
    assert.deepEqual(
      item.steps.map((s: any) => s.step),
      STEPS,
    );
    assert.deepEqual(
      item.verification.map((c: any) => [c.name, c.status]),
      [
        ['identity', 'pass'],
        ['granted', 'pass'],
        ['denied', 'pass'],
      ],
    );
    assert.equal(item.revoked.done, true);
    assert.equal(item.old.anchor, oldAnchor);

    const after = await hubSecret('member-1');
    const newText = kubeconfigOf(after);
    const a = after.metadata.annotations;
    assert.notEqual(newText, oldText);
    assert.equal(item.old.fingerprint, `sha256:${createHash('sha256').update(oldText).digest('hex')}`);
    assert.equal(item.new.fingerprint, `sha256:${createHash('sha256').update(newText).digest('hex')}`);
    assert.equal(a['fleet.dev/kubeconfig-sha256'], createHash('sha256').update(newText).digest('hex'));
    assert.equal(a['fleet.dev/credential-anchor'], item.new.anchor);
    assert.equal(a['fleet.dev/credential-expires'], item.new.expires);
    assert.ok(!Object.keys(a).some((k) => k.startsWith('fleet.dev/rotation-')), 'rotation annotations left behind');
    // About the old lifetime again (2h).
    assert.ok(
      Math.abs(Date.parse(item.new.expires) - Date.now() - 7200_000) < 300_000,
      `new expiry ${item.new.expires}`,
    );
    assert.equal(await whoIs(oldText), undefined, 'the old token still authenticates');
    assert.equal(await whoIs(newText), `system:serviceaccount:${nsSys}:mcr`);
    assert.deepEqual(await anchors('mcr'), [item.new.anchor.split('/')[1]]);
    // The consumer's view: fleet's kubeconfig provider (multicluster-runtime's format) reads the Secret and connects.
    const who = await fleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--cluster', 'mcr#member-1', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json().items[0].user.username, `system:serviceaccount:${nsSys}:mcr`);
    // ... and multicluster-runtime's own kubeconfig provider engages the rotated Secret as the same identity.
    assert.equal((await consumerWhoami('mcr', hub, hubNs, 'member-1')).username, `system:serviceaccount:${nsSys}:mcr`);
  });

  it('rotates an Argo CD cluster Secret (bearerToken in config)', async () => {
    await generate('argo', 'argo-member', 'argocd');
    const s0 = await hubSecret('argo-member');
    const oldText = kubeconfigOf(s0);
    const res = await fleet([...ROTATE, `${hubNs}/argo-member`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.equal(res.json().items[0].status, 'rotated');
    const s = await hubSecret('argo-member');
    const newText = kubeconfigOf(s);
    assert.equal(s.data.name, s0.data.name);
    assert.equal(Buffer.from(s0.data.name, 'base64').toString(), m1.context, "Argo CD's name: the context's name");
    assert.equal(s.data.server, s0.data.server);
    assert.equal(await whoIs(oldText), undefined);
    assert.equal(await whoIs(newText), `system:serviceaccount:${nsSys}:argo`);
  });

  it('rotation keeps the Argo CD display name generate set with --display-name', async () => {
    await generate('argo-named', 'argo-named', 'argocd', ['--display-name', 'Member One (EU)']);
    const res = await fleet([...ROTATE, `${hubNs}/argo-named`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.equal(res.json().items[0].status, 'rotated');
    assert.equal(Buffer.from((await hubSecret('argo-named')).data.name, 'base64').toString(), 'Member One (EU)');
  });

  it('rotates a legacy token (flux Secret): new token Secret, the old one deleted and its token refused', async () => {
    await generate('legacy', 'legacy-flux', 'flux', ['--method', 'legacy-token']);
    const oldText = kubeconfigOf(await hubSecret('legacy-flux'));
    assert.equal((await anchors('legacy', 'token')).length, 1);
    const res = await fleet([...ROTATE, `${hubNs}/legacy-flux`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(item.revoked.done, true);
    const newText = kubeconfigOf(await hubSecret('legacy-flux'));
    assert.equal(await whoIs(oldText), undefined, 'the old legacy token still authenticates');
    assert.equal(await whoIs(newText), `system:serviceaccount:${nsSys}:legacy`);
    assert.deepEqual(await anchors('legacy', 'token'), [item.new.anchor.split('/')[1]]);
    // Flux's runtime client (the Impersonator kustomize-controller builds for spec.kubeConfig.secretRef) connects with
    // the rotated Secret.
    assert.equal(
      (await consumerWhoami('flux', hub, hubNs, 'legacy-flux')).username,
      `system:serviceaccount:${nsSys}:legacy`,
    );
  });

  it('rotates a client certificate (Cluster API Secret, read back by the cluster-api provider): the old one is reported valid until its NotAfter', async () => {
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
    const user = `${run}-ci`;
    await generate('', 'work', 'cluster-api', ['--method', 'client-cert', '--user', user, '--group', 'ci']);
    const s0 = await hubSecret('work-kubeconfig');
    const res = await fleet([...ROTATE, `${hubNs}/work-kubeconfig`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(item.revoked.done, false);
    assert.match(item.revoked.reason, new RegExp(`stays valid until ${item.old.expires}`));
    const s1 = await hubSecret('work-kubeconfig');
    assert.notEqual(s1.data.value, s0.data.value);
    const key = (yaml.load(decode(s1.data.value)) as any).users[0].user['client-key-data'];
    secrets.add(key);
    secrets.add(decode(key).trim());
    assert.equal(
      (await kubectl(m1, ['get', 'csr', '-l', 'app.kubernetes.io/managed-by=fleet', '-o', 'name'])).trim(),
      '',
      'a CSR was left behind',
    );
    const who = await fleet([
      'auth',
      'whoami',
      '--fleet-config',
      fleetYaml,
      '--cluster',
      `capi#${hubNs}/work`,
      '-o',
      'json',
    ]);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json().items[0].user.username, user);
    assert.ok(who.json().items[0].user.groups.includes('ci'));
    // Cluster API's own reader (controllers/remote over util/kubeconfig.FromSecret) connects with the new certificate.
    const capi = await consumerWhoami('capi', hub, hubNs, 'work');
    assert.equal(capi.username, user);
    assert.ok(capi.groups.includes('ci'));
  });

  it('rotates a cluster-inventory Secret (Secret strategy): read back by the cluster-inventory provider, old token refused', async () => {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'inv-m1', namespace: hubNs },
        spec: { clusterManager: { name: 'fleet-e2e' } },
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      'inv-m1',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: healthy }),
    ]);
    const name = `inv-m1-${consumer}`;
    await generate('inv', name, 'cluster-inventory', ['--consumer', consumer, '--profile', 'inv-m1']);
    const s0 = await hubSecret(name);
    const oldText = kubeconfigOf(s0);
    const whoVia = async () =>
      fleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--cluster', `inv#${hubNs}/inv-m1`, '-o', 'json']);
    const before = await whoVia();
    assert.equal(before.code, 0, before.stderr);
    assert.equal(before.json().items[0].user.username, `system:serviceaccount:${nsSys}:inv`);
    const res = await fleet([...ROTATE, `${hubNs}/${name}`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(item.revoked.done, true);
    const s1 = await hubSecret(name);
    const newText = kubeconfigOf(s1);
    assert.notEqual(s1.data.Config, s0.data.Config);
    assert.equal(item.new.fingerprint, `sha256:${createHash('sha256').update(newText).digest('hex')}`);
    // The labels the cluster-inventory consumer selects the Secret by are kept.
    assert.equal(s1.metadata.labels['x-k8s.io/cluster-inventory-consumer'], consumer);
    assert.equal(s1.metadata.labels['x-k8s.io/cluster-profile'], 'inv-m1');
    assert.equal(await whoIs(oldText), undefined, 'the old token still authenticates');
    // The consumer's view: fleet's cluster-inventory provider (Secret strategy) reads the new Secret and connects; the
    // old token is refused, so a success here is the new credential.
    const who = await whoVia();
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json().items[0].user.username, `system:serviceaccount:${nsSys}:inv`);
  });

  it('rotates a kubeconfig-secretreader Secret: read back by the upstream plugin through the ClusterProfile, old token refused', async () => {
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'kcsr', namespace: hubNs },
        spec: { clusterManager: { name: 'fleet-e2e' } },
      }),
    );
    await kubectl(hub, [
      'patch',
      'clusterprofiles',
      'kcsr',
      '-n',
      hubNs,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: healthy }),
    ]);
    await generate('kcsr', 'kcsr-cred', 'kubeconfig-secretreader', ['--update-profile', `${hubNs}/kcsr`]);
    const s0 = await hubSecret('kcsr-cred');
    const oldText = kubeconfigOf(s0);
    const profile0 = JSON.parse(await kubectl(hub, ['get', 'clusterprofiles', 'kcsr', '-n', hubNs, '-o', 'json']));
    const whoVia = async () =>
      fleet(['auth', 'whoami', '--fleet-config', fleetYaml, '--cluster', `access#${hubNs}/kcsr`, '-o', 'json']);
    const before = await whoVia();
    assert.equal(before.code, 0, before.stderr);
    assert.equal(before.json().items[0].user.username, `system:serviceaccount:${nsSys}:kcsr`);
    const res = await fleet([...ROTATE, `${hubNs}/kcsr-cred`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(item.revoked.done, true);
    const s1 = await hubSecret('kcsr-cred');
    const newText = kubeconfigOf(s1);
    assert.notEqual(s1.data.kubeconfig, s0.data.kubeconfig);
    assert.equal(item.new.fingerprint, `sha256:${createHash('sha256').update(newText).digest('hex')}`);
    // The profile still points the plugin at the same Secret and key.
    const profile1 = JSON.parse(await kubectl(hub, ['get', 'clusterprofiles', 'kcsr', '-n', hubNs, '-o', 'json']));
    assert.deepEqual(profile1.status.accessProviders, profile0.status.accessProviders);
    assert.equal(await whoIs(oldText), undefined, 'the old token still authenticates');
    // The consumer's view: the ClusterProfile's access provider, the upstream kubeconfig-secretreader plugin reading the
    // rotated Secret from the hub; the old token is refused, so a success here is the new credential.
    const who = await whoVia();
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json().items[0].user.username, `system:serviceaccount:${nsSys}:kcsr`);
  });

  it('a new credential that fails verification is not written: exit 1, the old one still works, its anchor stays, no new anchor', async () => {
    await generate('broken', 'broken');
    const s0 = await hubSecret('broken');
    const oldText = kubeconfigOf(s0);
    const anchors0 = await anchors('broken');
    // The grant is gone from the cluster: the new token cannot list pods, so the "granted" check fails.
    await kubectl(m1, ['delete', 'clusterrolebinding', `fleet-creds-${nsSys}-broken`]);
    const res = await fleet([...ROTATE, `${hubNs}/broken`, '-o', 'json']);
    assert.equal(res.code, 1, res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'failed');
    assert.match(item.reason, /failed verification/);
    const s1 = await hubSecret('broken');
    assert.equal(s1.data.kubeconfig, s0.data.kubeconfig);
    assert.ok(
      !Object.keys(s1.metadata.annotations).some((k) => k.startsWith('fleet.dev/rotation-')),
      'the claim was not lifted',
    );
    assert.deepEqual(await anchors('broken'), anchors0);
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:broken`);
  });

  it('--all --expiring-within skips credentials that do not expire soon; a Secret fleet did not write is refused', async () => {
    const res = await fleet([...ROTATE, '--all', '--expiring-within', '1h', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const mine = res.json().items.filter((i: any) => i.secret.namespace === hubNs);
    assert.ok(mine.length >= 5);
    for (const i of mine) assert.equal(i.status, 'skipped', JSON.stringify(i));
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'theirs', namespace: hubNs },
        data: { kubeconfig: 'eA==' },
      }),
    );
    // Refused as creds revoke refuses it: exit 2, one line, nothing rotated, even beside a Secret fleet wrote.
    const refused = `error: hub ${hub.context}: Secret ${hubNs}/theirs was not written by fleet creds generate (no managed-by label or credential annotations): fleet rotates only what it made; nothing was rotated\n`;
    const r2 = await fleet([...ROTATE, `${hubNs}/theirs`]);
    assert.deepEqual([r2.code, r2.stdout, r2.stderr], [2, '', refused]);
    const ours = mine[0].secret.name;
    const before = (await hubSecret(ours)).metadata.resourceVersion;
    const beside = await fleet([...ROTATE, `${hubNs}/${ours}`, `${hubNs}/theirs`]);
    assert.deepEqual([beside.code, beside.stdout, beside.stderr], [2, '', refused]);
    assert.equal((await hubSecret(ours)).metadata.resourceVersion, before, `${ours} was touched`);
    const r3 = await fleet([...ROTATE]);
    assert.equal(r3.code, 2);
    assert.match(r3.stderr, /--all/);
  });

  it('killed after every step and run again: finishes, one anchor, a working credential in the Secret at every instant', async () => {
    await generate('crash', 'crash');
    const username = `system:serviceaccount:${nsSys}:crash`;
    // The probe: reads the Secret and uses what it holds, all through the test. A refusal counts only if the Secret
    // did not change between the read and the refusal (a consumer would re-read a changed Secret).
    let stop = false;
    let probes = 0;
    const violations: string[] = [];
    const probe = (async () => {
      while (!stop) {
        const s = await hubSecret('crash');
        const ok = (await whoIs(kubeconfigOf(s))) === username;
        probes++;
        if (!ok) {
          const again = await hubSecret('crash');
          if (
            again.metadata.resourceVersion === s.metadata.resourceVersion &&
            (await whoIs(kubeconfigOf(again))) !== username
          ) {
            violations.push(
              `resourceVersion ${s.metadata.resourceVersion} (${JSON.stringify(s.metadata.annotations)})`,
            );
          }
        }
      }
    })();
    try {
      for (const step of STEPS) {
        const before = await hubSecret('crash');
        const killed = await fleet([...ROTATE, `${hubNs}/crash`, '-o', 'json'], {
          FLEET_ROTATE_FAILPOINT: `after-${step}`,
        });
        assert.notEqual(killed.code, 0, `the failpoint after-${step} did not stop the run`);
        const mid = await hubSecret('crash');
        const state = mid.metadata.annotations['fleet.dev/rotation-phase'];
        const anchorsMid = await anchors('crash');
        // At most the old and the claimed new anchor exist, and the Secret names both (no orphan).
        const named = [
          mid.metadata.annotations['fleet.dev/credential-anchor'],
          mid.metadata.annotations['fleet.dev/rotation-new-anchor'],
          mid.metadata.annotations['fleet.dev/rotation-old-anchor'],
        ]
          .filter(Boolean)
          .map((r: string) => r.split('/')[1]);
        for (const a of anchorsMid)
          assert.ok(named.includes(a), `after-${step}: anchor ${a} is not named by the Secret (${state})`);
        const res = await fleet([...ROTATE, `${hubNs}/crash`, '-o', 'json']);
        assert.equal(res.code, 0, `after-${step}: ${res.stderr}${res.stdout}`);
        const item = res.json().items[0];
        assert.equal(item.status, 'rotated', JSON.stringify(item));
        const after = await hubSecret('crash');
        assert.ok(
          !Object.keys(after.metadata.annotations).some((k) => k.startsWith('fleet.dev/rotation-')),
          `after-${step}: state left behind`,
        );
        assert.deepEqual(
          await anchors('crash'),
          [after.metadata.annotations['fleet.dev/credential-anchor'].split('/')[1]],
          `after-${step}: anchors`,
        );
        assert.equal(await whoIs(kubeconfigOf(after)), username);
        assert.notEqual(after.data.kubeconfig, before.data.kubeconfig, `after-${step}: not rotated`);
        // Interrupted after the claim or later: the re-run finished that rotation (same new anchor), not a fresh one.
        if (state) {
          assert.equal(item.resumed, state, `after-${step}`);
          if (state === 'claimed' || state === 'replaced')
            assert.equal(
              after.metadata.annotations['fleet.dev/credential-anchor'],
              mid.metadata.annotations['fleet.dev/rotation-new-anchor'],
              `after-${step}: a second new anchor`,
            );
        }
      }
    } finally {
      stop = true;
      await probe;
    }
    assert.ok(probes > 10, `the probe ran ${probes} times`);
    assert.deepEqual(violations, [], 'the probe saw the Secret without a working credential');
  });

  it('two rotations at once (no Lease): one valid credential, no lost update, nothing minted by the loser left', async () => {
    await generate('race', 'race');
    const [a, b] = await Promise.all([
      fleet([...ROTATE, `${hubNs}/race`, '--no-lease', '-o', 'json']),
      fleet([...ROTATE, `${hubNs}/race`, '--no-lease', '-o', 'json']),
    ]);
    const items = [a.json().items[0], b.json().items[0]];
    const won = items.filter((i) => i.status === 'rotated');
    assert.ok(won.length >= 1, JSON.stringify(items));
    const s = await hubSecret('race');
    const last = won.find((i) => i.new.anchor === s.metadata.annotations['fleet.dev/credential-anchor']);
    assert.ok(last, 'the Secret holds a credential no run reported');
    assert.equal(await whoIs(kubeconfigOf(s)), `system:serviceaccount:${nsSys}:race`);
    assert.deepEqual(await anchors('race'), [last.new.anchor.split('/')[1]]);
    for (const i of items.filter((x) => x.status === 'failed'))
      assert.match(i.reason, /changed by someone else|in progress|changed while/);
  });

  it('a writer that changes the Secret between claim and replace wins: this run re-reads, revokes its own new credential, overwrites nothing', async () => {
    await generate('lost', 'lost');
    const s0 = await hubSecret('lost');
    const oldText = kubeconfigOf(s0);
    const running = fleet([...ROTATE, `${hubNs}/lost`, '-o', 'json'], { FLEET_ROTATE_PAUSE: 'after-verify:4000' });
    // Wait for the claim, then write the Secret as another writer would (a label change is enough to move resourceVersion).
    for (let i = 0; i < 100 && !(await hubSecret('lost')).metadata.annotations['fleet.dev/rotation-new-anchor']; i++)
      await new Promise((r) => setTimeout(r, 100));
    const claimed = (await hubSecret('lost')).metadata.annotations['fleet.dev/rotation-new-anchor'];
    assert.ok(claimed, 'the run never claimed the Secret');
    await kubectl(hub, ['label', 'secret', 'lost', '-n', hubNs, 'team=other']);
    const res = await running;
    assert.equal(res.code, 1, res.stdout + res.stderr);
    const item = res.json().items[0];
    assert.equal(item.status, 'failed');
    assert.match(item.reason, /changed while this run rotated it/);
    assert.equal(item.revoked.done, true);
    const s1 = await hubSecret('lost');
    assert.equal(s1.data.kubeconfig, s0.data.kubeconfig, 'the other write was overwritten');
    assert.equal(s1.metadata.labels.team, 'other');
    assert.ok(!(await anchors('lost')).includes(claimed.split('/')[1]), "the loser's anchor is still there");
    assert.equal(await whoIs(oldText), `system:serviceaccount:${nsSys}:lost`);
    // The next run finishes cleanly from there.
    const again = await fleet([...ROTATE, `${hubNs}/lost`, '-o', 'json']);
    assert.equal(again.code, 0, again.stdout);
    assert.deepEqual(await anchors('lost'), [
      (await hubSecret('lost')).metadata.annotations['fleet.dev/credential-anchor'].split('/')[1],
    ]);
  });

  it('two rotations at once with the Lease: both succeed one after the other, one valid credential', async () => {
    const [a, b] = await Promise.all([
      fleet([...ROTATE, `${hubNs}/race`, '-o', 'json']),
      fleet([...ROTATE, `${hubNs}/race`, '-o', 'json']),
    ]);
    assert.equal(a.code, 0, a.stdout);
    assert.equal(b.code, 0, b.stdout);
    const s = await hubSecret('race');
    assert.deepEqual(await anchors('race'), [s.metadata.annotations['fleet.dev/credential-anchor'].split('/')[1]]);
    assert.equal(await whoIs(kubeconfigOf(s)), `system:serviceaccount:${nsSys}:race`);
    assert.equal(
      (await kubectl(hub, ['get', 'leases', '-n', hubNs, '-o', 'name'])).trim(),
      '',
      'a Lease was left behind',
    );
  });

  it("in-cluster: the hub is reached with a Pod's ServiceAccount token and CA files and the least hub RBAC of docs/rotation.md", async () => {
    await generate('pod', 'in-pod');
    const sa = `${run}-rotator`;
    // The CronJob's ServiceAccount with exactly the hub Role docs/rotation.md gives it.
    const token = await cronJobRotator(hub, hubNs, sa);
    secrets.add(token);
    const hubDoc = yaml.load(readFileSync(hub.kubeconfig, 'utf8')) as any;
    const url = new URL(hubDoc.clusters[0].cluster.server);
    const podDir = join(dir, 'serviceaccount');
    mkdirSync(podDir, { recursive: true });
    writeFileSync(join(podDir, 'token'), token, { mode: 0o600 });
    writeFileSync(join(podDir, 'ca.crt'), decode(hubDoc.clusters[0].cluster['certificate-authority-data']));
    const podEnv = {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      FLEET_IN_CLUSTER_TOKEN_FILE: join(podDir, 'token'),
      FLEET_IN_CLUSTER_CA_FILE: join(podDir, 'ca.crt'),
    };
    // The member is known through a fleet configuration that names no hub: the hub is then the loading rules' current
    // context, and with no kubeconfig anywhere the Pod's (an explicit --kubeconfig would be the hub, as for kubectl).
    const podFleet = join(dir, 'pod-fleet.yaml');
    writeFileSync(
      podFleet,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: members, type: file, kubeconfig: [${m1.kubeconfig}]}\n`,
    );
    const POD = ['creds', 'rotate', '--fleet-config', podFleet];
    const s0 = await hubSecret('in-pod');
    const res = await fleet([...POD, `${hubNs}/in-pod`, '-o', 'json'], podEnv);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.equal(res.json().hub, 'in-cluster');
    assert.equal(res.json().items[0].status, 'rotated');
    const s1 = await hubSecret('in-pod');
    assert.notEqual(s1.data.kubeconfig, s0.data.kubeconfig);
    assert.equal(await whoIs(kubeconfigOf(s1)), `system:serviceaccount:${nsSys}:pod`);
    // client-go's order: a kubeconfig the loading rules find (here ~/.kube/config in HOME) wins over the Pod's settings.
    const home = join(dir, 'home-with-kubeconfig');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), readFileSync(hub.kubeconfig, 'utf8'), { mode: 0o600 });
    const fromFile = await fleet([...POD, `${hubNs}/in-pod`, '--dry-run', '-o', 'json'], { ...podEnv, HOME: home });
    assert.equal(fromFile.code, 0, fromFile.stderr + fromFile.stdout);
    assert.notEqual(fromFile.json().hub, 'in-cluster');
    assert.equal(fromFile.json().hub, hub.context);
    // Without the token file it is a one-line configuration error naming the path.
    const bad = await fleet([...POD, `${hubNs}/in-pod`], {
      ...podEnv,
      FLEET_IN_CLUSTER_TOKEN_FILE: join(podDir, 'missing'),
    });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr.trim(), /^[^\n]*no ServiceAccount token at .*missing[^\n]*$/);
  });

  it('rotates a kubeconfig file creds generate wrote: atomic, 0600, old token refused; killed after replace and run again', async () => {
    const path = join(dir, 'file-reader.kubeconfig');
    const gen = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/filer`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '1h',
      '--out',
      path,
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
    const oldText = readFileSync(path, 'utf8');
    kubeconfigOf({ data: { kubeconfig: Buffer.from(oldText).toString('base64') } });
    const res = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, '--file', path, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const newText = readFileSync(path, 'utf8');
    kubeconfigOf({ data: { kubeconfig: Buffer.from(newText).toString('base64') } });
    assert.equal(item.new.fingerprint, `sha256:${createHash('sha256').update(newText).digest('hex')}`);
    assert.equal(await whoIs(oldText), undefined);
    assert.equal(await whoIs(newText), `system:serviceaccount:${nsSys}:filer`);
    const facts = (yaml.load(newText) as any).extensions.find((e: any) => e.name === 'fleet.dev/credential').extension;
    assert.equal(facts.anchor, item.new.anchor);
    assert.ok(!Object.keys(facts).some((k) => k.startsWith('rotation-')));
    // Killed right after the file got the new credential: the next run deletes the old anchor and clears the state.
    const killed = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, '--file', path, '-o', 'json'], {
      FLEET_ROTATE_FAILPOINT: 'after-replace',
    });
    assert.notEqual(killed.code, 0);
    const mid = readFileSync(path, 'utf8');
    kubeconfigOf({ data: { kubeconfig: Buffer.from(mid).toString('base64') } });
    assert.equal(await whoIs(mid), `system:serviceaccount:${nsSys}:filer`);
    const again = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, '--file', path, '-o', 'json']);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.equal(again.json().items[0].resumed, 'replaced');
    assert.deepEqual(await anchors('filer'), [again.json().items[0].new.anchor.split('/')[1]]);
    assert.equal(await whoIs(readFileSync(path, 'utf8')), `system:serviceaccount:${nsSys}:filer`);
  });

  it('no secret made here appears in any output', () => {
    assert.ok(secrets.size > 5);
    for (const { what, res } of outputs) {
      for (const x of secrets) {
        assert.ok(!res.stdout.includes(x) && !res.stderr.includes(x), `a secret in the output of fleet ${what}`);
      }
    }
  });
});
