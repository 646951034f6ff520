import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { inClusterContext, useInCluster } from '../../src/kubeconfig/in-cluster.js';
import { tokenLifetimeSeconds as lifetimeSeconds } from '../../src/creds/lifetime.js';
import { type RotatedCredential, rotationFailureNote } from '../../src/creds/rotate.js';
import { parseIdentity } from '../../src/creds/credential-record.js';
import {
  ROTATION,
  STEPS,
  type Step,
  failpoint,
  pausepoint,
  readState,
  rotationHooks,
  stateAnnotations,
  withoutState,
} from '../../src/creds/rotation-state.js';

const jwt = (claims: object) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('creds rotate: state on the Secret', () => {
  it('round-trips a claimed state and clears every rotation annotation, keeping the others', () => {
    const s = {
      phase: 'claimed' as const,
      newAnchor: { namespace: 'ns', name: 'a-new' },
      oldAnchor: { namespace: 'ns', name: 'a-old' },
      run: 'r1',
      started: '2026-11-22T09:00:00.000Z',
    };
    const ann = { 'fleet.dev/credential-method': 'token', ...stateAnnotations(s) };
    assert.deepEqual(readState(ann), s);
    assert.deepEqual(withoutState(ann), { 'fleet.dev/credential-method': 'token' });
    assert.equal(readState({ [ROTATION.phase]: 'bogus' }), undefined);
    assert.equal(readState(undefined), undefined);
  });

  it('a client certificate rotation has no anchor to record', () => {
    const ann = stateAnnotations({ phase: 'replaced', run: 'r', started: 'x' });
    assert.equal(ann[ROTATION.newAnchor], undefined);
    assert.equal(readState(ann)?.phase, 'replaced');
  });

  it('the failpoint steps docs/rotation.md names are the ones the code has, in order', () => {
    const doc = readFileSync(new URL('../../docs/rotation.md', import.meta.url), 'utf8');
    const paragraph = doc.slice(doc.indexOf('**Failpoint**'), doc.indexOf('\n\n', doc.indexOf('**Failpoint**')));
    const named = [...paragraph.slice(paragraph.indexOf('one of')).matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    assert.deepEqual(named, [...STEPS]);
  });

  it('FLEET_ROTATE_FAILPOINT=after-<step> kills the process with SIGKILL right after that step and no other', () => {
    // The command reads the variable once (rotationHooks(process.env)) and hands the hooks to the rotation.
    const url = new URL('../../src/creds/rotation-state.ts', import.meta.url).href;
    for (const at of [STEPS[0], STEPS[STEPS.length - 1], 'mint'] as const) {
      const script = `import {STEPS, failpoint, rotationHooks} from ${JSON.stringify(url)}; const hooks = rotationHooks(process.env); for (const s of STEPS) { failpoint(s, hooks); process.stdout.write(s + ' ') }`;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, FLEET_ROTATE_FAILPOINT: `after-${at}` },
        encoding: 'utf8',
      });
      assert.equal(child.signal, 'SIGKILL', child.stderr);
      assert.equal(
        child.stdout,
        STEPS.slice(0, STEPS.indexOf(at))
          .map((s) => `${s} `)
          .join(''),
        at,
      );
    }
  });

  it('the hooks come from the environment the command passes, never from process.env behind its back', async () => {
    assert.deepEqual(rotationHooks({}), {});
    assert.deepEqual(
      rotationHooks({ FLEET_ROTATE_FAILPOINT: 'after-verify', FLEET_ROTATE_PAUSE: 'after-confirm-revoked:4000' }),
      { failAfter: 'verify', pauseAfter: { step: 'confirm-revoked', ms: 4000 } },
    );
    assert.deepEqual(
      rotationHooks({ FLEET_ROTATE_FAILPOINT: 'verify', FLEET_ROTATE_PAUSE: 'after-mint:0' }),
      {},
      'without after-, or a pause of no time: off',
    );
    const crashed: string[] = [];
    for (const s of STEPS) failpoint(s, { failAfter: 'replace', crash: () => crashed.push(s) });
    assert.deepEqual(crashed, ['replace']);
    const t0 = Date.now();
    await pausepoint('mint', { pauseAfter: { step: 'mint', ms: 80 } });
    assert.ok(Date.now() - t0 >= 75, 'paused after its step');
    const t1 = Date.now();
    await pausepoint('verify', { pauseAfter: { step: 'mint', ms: 5000 } });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 20);
    await pausepoint('mint', { pauseAfter: { step: 'mint', ms: 5000 } }, ctl.signal);
    assert.ok(Date.now() - t1 < 2000, 'no pause after another step; an interrupt ends a pause');
  });

  it('reads a ServiceAccount identity and the old token lifetime', () => {
    assert.deepEqual(parseIdentity('system:serviceaccount:team-a:reader'), {
      kind: 'ServiceAccount',
      namespace: 'team-a',
      name: 'reader',
    });
    assert.equal(parseIdentity('alice'), undefined);
    assert.equal(lifetimeSeconds(jwt({ iat: 1000, exp: 8200 })), 7200);
    assert.equal(lifetimeSeconds(jwt({ iat: 1000, exp: 1100 })), 600, 'never below the API minimum');
    assert.equal(lifetimeSeconds('not-a-jwt'), undefined);
  });
});

describe('in-cluster configuration', () => {
  it('reads host, port, token and CA paths the way client-go does (IPv6 in brackets), with the paths overridable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-incluster-'));
    writeFileSync(join(dir, 'token'), 'x');
    writeFileSync(join(dir, 'ca.crt'), 'x');
    const env = {
      KUBERNETES_SERVICE_HOST: 'fd00::1',
      KUBERNETES_SERVICE_PORT: '443',
      FLEET_IN_CLUSTER_TOKEN_FILE: join(dir, 'token'),
      FLEET_IN_CLUSTER_CA_FILE: join(dir, 'ca.crt'),
    };
    const ctx = inClusterContext(env);
    assert.equal(ctx.cluster.server, 'https://[fd00::1]:443');
    assert.equal(ctx.user.tokenFile, join(dir, 'token'));
    assert.equal(ctx.cluster['certificate-authority'], join(dir, 'ca.crt'));
    assert.throws(
      () => inClusterContext({ ...env, FLEET_IN_CLUSTER_TOKEN_FILE: join(dir, 'nope') }),
      /no ServiceAccount token at .*nope/,
    );
    assert.throws(() => inClusterContext({}), /KUBERNETES_SERVICE_HOST/);
  });

  it('is used only when the kubeconfig loading rules find nothing, as client-go decides: a kubeconfig in HOME wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-incluster-choice-'));
    const pod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const withKube = join(dir, 'home-with');
    mkdirSync(join(withKube, '.kube'), { recursive: true });
    writeFileSync(
      join(withKube, '.kube', 'config'),
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://h:6443"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const without = join(dir, 'home-without');
    mkdirSync(without);
    assert.equal(await useInCluster({ ...pod, HOME: withKube }), false, 'HOME has ~/.kube/config: the file wins');
    assert.equal(await useInCluster({ ...pod, HOME: without }), true, 'HOME without a kubeconfig: in-cluster');
    // KUBECONFIG naming only files that do not exist finds nothing either (client-go skips missing files).
    assert.equal(await useInCluster({ ...pod, HOME: withKube, KUBECONFIG: join(dir, 'missing') }), true);
    assert.equal(await useInCluster({ ...pod, HOME: without, KUBECONFIG: join(withKube, '.kube', 'config') }), false);
    // Outside a Pod there is nothing to choose.
    assert.equal(await useInCluster({ HOME: without }), false);
  });
});

describe('creds rotate: what the failures left', () => {
  const failed = (steps: Step[], resumed?: string): RotatedCredential => ({
    status: 'failed',
    old: {},
    verification: [],
    steps: steps.map((step) => ({ step, ms: 1 })),
    resumed,
    durationMs: 1,
  });

  it('before the replace the old credential stays; after it (or finishing a replaced one) the next run finishes', () => {
    assert.equal(
      rotationFailureNote([failed(['claim', 'anchor', 'mint'])]),
      '1 rotation failed: its old credential is still in place',
    );
    assert.equal(
      rotationFailureNote([failed(['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke'])]),
      '1 rotation failed: it already holds the new one and the next run finishes it',
    );
    assert.equal(
      rotationFailureNote([failed([], 'replaced')]),
      '1 rotation failed: it already holds the new one and the next run finishes it',
    );
    assert.equal(
      rotationFailureNote([failed(['claim']), failed(['claim'])]),
      '2 rotations failed: their old credentials are still in place',
    );
    assert.equal(
      rotationFailureNote([failed(['claim']), failed(['claim']), failed(['replace'])]),
      '3 rotations failed: 2 old credentials are still in place; 1 already holds the new one and the next run finishes it',
    );
  });

  it('a Secret that does not exist has no old credential in place (issue 41): said as such, alone or beside others', () => {
    const missing: RotatedCredential = {
      ...failed([]),
      error: { kind: 'not-found', message: 'hub hub: Secret a/b not found' },
    };
    assert.equal(rotationFailureNote([missing]), '1 rotation failed: it does not exist');
    assert.equal(rotationFailureNote([missing, missing]), '2 rotations failed: they do not exist');
    assert.equal(
      rotationFailureNote([missing, failed(['claim'])]),
      '2 rotations failed: 1 does not exist; 1 old credential is still in place',
    );
  });
});
