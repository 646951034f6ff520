import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { destinationSecret } from '../../src/creds/codecs/index.js';
import { buildKubeconfig, kubeconfigSha256 } from '../../src/creds/kubeconfig-out.js';
import { ROTATION, type RotationState } from '../../src/creds/rotation-state.js';
import { Conflict, FileStore, NotFleetsError, SecretStore } from '../../src/creds/rotation-store.js';
import { type ObjectServer, startObjectServer } from '../support/object-server.js';

// The two places a rotation keeps a credential (src/creds/rotation-store.ts): a hub Secret, here on a small real HTTPS
// server that keeps objects and answers a stale resourceVersion with 409 as the API server does, and a kubeconfig file.
const cluster = { server: 'https://member:6443', 'certificate-authority-data': 'Q0E=' };
const oldUser = { token: 'old-token-store-test-1' };
const newUser = { token: 'new-token-store-test-2' };
const claimed: RotationState = {
  phase: 'claimed',
  newAnchor: { namespace: 'team', name: 'bot-new' },
  oldAnchor: { namespace: 'team', name: 'bot-old' },
  run: 'run-1',
  started: '2026-11-26T03:00:00.000Z',
};
const record = {
  'fleet.dev/credential-method': 'token',
  'fleet.dev/credential-identity': 'system:serviceaccount:team:bot',
  'fleet.dev/credential-scope': 'namespaces team',
  'fleet.dev/credential-access': 'preset view',
  'fleet.dev/credential-cluster': 'm1',
  'fleet.dev/credential-expires': '2026-11-27T00:00:00Z',
  'fleet.dev/credential-anchor': 'team/bot-old',
  'fleet.dev/cluster-server': 'https://member:6443',
};

describe('SecretStore: a fleet-written hub Secret', () => {
  let api: ObjectServer;
  const path = '/api/v1/namespaces/hub/secrets/m1';
  const put = (
    format: 'multicluster-runtime' | 'argocd',
    annotations: Record<string, string> = {},
    labels?: Record<string, string>,
  ) => {
    const kubeconfig = buildKubeconfig({ name: 'm1', userName: 'bot', cluster, user: oldUser });
    const s = destinationSecret(
      { namespace: 'hub', name: 'm1', format },
      {
        kubeconfig,
        cluster,
        user: oldUser,
        clusterName: 'm1',
        displayName: 'EU one',
        annotations: {
          ...record,
          'fleet.dev/credential-format': format,
          'fleet.dev/kubeconfig-sha256': kubeconfigSha256(kubeconfig),
          ...annotations,
        },
      },
    );
    if (labels) s.metadata.labels = labels;
    api.objects.set(path, { ...s, metadata: { ...s.metadata, resourceVersion: '1', uid: 'u1' } });
  };
  const secret = () =>
    api.objects.get(path) as unknown as {
      data: Record<string, string>;
      metadata: { annotations: Record<string, string>; resourceVersion: string };
    };
  const text = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

  before(async () => (api = await startObjectServer()));
  after(() => api.close());
  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  it('reads the credential and its record', async () => {
    put('multicluster-runtime');
    const s = await new SecretStore(api.client, { namespace: 'hub', name: 'm1' }).read();
    assert.deepEqual(
      [s.method, s.identity, s.id, s.clusterName, s.format, s.state],
      [
        'token',
        'system:serviceaccount:team:bot',
        { kind: 'ServiceAccount', namespace: 'team', name: 'bot' },
        'm1',
        'multicluster-runtime',
        undefined,
      ],
    );
    assert.deepEqual(s.held.user, oldUser);
    assert.equal(s.old.anchor, 'team/bot-old');
    assert.match(s.old.fingerprint!, /^sha256:[0-9a-f]{64}$/);
    assert.equal(s.recorded.server, 'https://member:6443');
  });

  it("claims, replaces and finishes: each a PUT at the version it read; the data is the format's", async () => {
    put('multicluster-runtime');
    const store = new SecretStore(api.client, { namespace: 'hub', name: 'm1' });
    await store.read();
    await store.claim(claimed);
    assert.equal(secret().metadata.annotations[ROTATION.phase], 'claimed');
    assert.equal(secret().metadata.annotations[ROTATION.newAnchor], 'team/bot-new');
    const kubeconfig = buildKubeconfig({ name: 'm1', userName: 'bot', cluster, user: newUser });
    await store.replace(
      { kubeconfig, user: newUser, expires: '2026-11-28T00:00:00Z', anchor: 'team/bot-new', lifetimeSeconds: 86400 },
      { ...claimed, phase: 'replaced' },
    );
    const a = secret().metadata.annotations;
    assert.deepEqual(
      [
        a[ROTATION.phase],
        a['fleet.dev/credential-anchor'],
        a['fleet.dev/credential-expires'],
        a['fleet.dev/credential-lifetime'],
      ],
      ['replaced', 'team/bot-new', '2026-11-28T00:00:00Z', '86400'],
    );
    assert.equal(a['fleet.dev/kubeconfig-sha256'], kubeconfigSha256(kubeconfig));
    assert.equal(text(secret().data.kubeconfig), kubeconfig);
    assert.deepEqual(await store.current(), {
      state: { ...claimed, phase: 'replaced' },
      anchor: 'team/bot-new',
      expires: '2026-11-28T00:00:00Z',
      fingerprint: `sha256:${kubeconfigSha256(kubeconfig)}`,
    });
    await store.finish();
    assert.equal(
      Object.keys(secret().metadata.annotations).some((k) => k.startsWith('fleet.dev/rotation-')),
      false,
    );
    assert.equal(text(secret().data.kubeconfig), kubeconfig, 'finish never touches the credential');
    assert.deepEqual(
      api.requests.filter((r) => r.startsWith('PUT')),
      [`PUT ${path}`, `PUT ${path}`, `PUT ${path}`],
      'claim, replace, finish (and nothing else) wrote',
    );
  });

  it('a write after someone else changed the Secret is a Conflict, never an overwrite', async () => {
    put('multicluster-runtime');
    const store = new SecretStore(api.client, { namespace: 'hub', name: 'm1' });
    await store.read();
    const theirs = {
      ...secret(),
      metadata: {
        ...secret().metadata,
        resourceVersion: '7',
        annotations: { ...secret().metadata.annotations, 'someone/else': 'x' },
      },
    };
    api.objects.set(path, theirs as never);
    await assert.rejects(store.claim(claimed), Conflict);
    assert.equal(secret().metadata.annotations[ROTATION.phase], undefined);
    assert.equal(secret().metadata.annotations['someone/else'], 'x');
  });

  it('lifts only its own claim (same run and new anchor), and the Secret is left otherwise', async () => {
    put('multicluster-runtime');
    const store = new SecretStore(api.client, { namespace: 'hub', name: 'm1' });
    await store.read();
    await store.claim(claimed);
    await store.release({ ...claimed, run: 'another-run' });
    assert.equal(secret().metadata.annotations[ROTATION.phase], 'claimed');
    await store.release(claimed);
    assert.equal(secret().metadata.annotations[ROTATION.phase], undefined);
    assert.equal(secret().metadata.annotations['fleet.dev/credential-anchor'], 'team/bot-old');
  });

  it('an Argo CD Secret is read from its config and written back with its display name kept', async () => {
    put('argocd');
    const store = new SecretStore(api.client, { namespace: 'hub', name: 'm1' });
    const s = await store.read();
    assert.deepEqual(s.held.user, oldUser);
    await store.claim(claimed);
    await store.replace(
      {
        kubeconfig: buildKubeconfig({ name: 'm1', userName: 'm1', cluster, user: newUser }),
        user: newUser,
        anchor: 'team/bot-new',
      },
      { ...claimed, phase: 'replaced' },
    );
    assert.equal(JSON.parse(text(secret().data.config)).bearerToken, newUser.token);
    assert.equal(text(secret().data.name), 'EU one');
  });

  it('the grant to verify against: a preset from the record, or the role on the cluster', async () => {
    put('multicluster-runtime');
    const store = new SecretStore(api.client, { namespace: 'hub', name: 'm1' });
    await store.read();
    api.requests.length = 0;
    const preset = await store.grant(api.client);
    assert.deepEqual(preset.namespaces, ['team']);
    assert.ok(preset.rules.length > 0);
    assert.deepEqual(api.requests, [], 'a preset is known without asking the cluster');
    put('multicluster-runtime', {
      'fleet.dev/credential-access': 'ClusterRole auditor',
      'fleet.dev/credential-scope': 'cluster-wide',
    });
    await store.read();
    api.objects.set('/apis/rbac.authorization.k8s.io/v1/clusterroles/auditor', {
      metadata: { name: 'auditor' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    assert.deepEqual(await store.grant(api.client), {
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      namespaces: [],
    });
    api.objects.delete('/apis/rbac.authorization.k8s.io/v1/clusterroles/auditor');
    await assert.rejects(store.grant(api.client), /the grant \(ClusterRole auditor\) is not on the cluster any more/);
  });

  it('refuses what fleet did not write, and names a format it does not know', async () => {
    put('multicluster-runtime', {}, { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' });
    await assert.rejects(new SecretStore(api.client, { namespace: 'hub', name: 'm1' }).read(), NotFleetsError);
    put('multicluster-runtime', { 'fleet.dev/credential-format': 'rancher' });
    await assert.rejects(new SecretStore(api.client, { namespace: 'hub', name: 'm1' }).read(), {
      name: 'UnknownFormatError',
      exitCode: 2,
      message: /Secret hub\/m1: unknown consumer Secret format "rancher"/,
    });
    await assert.rejects(
      new SecretStore(api.client, { namespace: 'hub', name: 'gone' }).read(),
      /Secret hub\/gone not found/,
    );
  });

  it('without the Lease the lock is not exclusive (a test races two runs on preconditions alone)', async () => {
    const lock = await new SecretStore(api.client, { namespace: 'hub', name: 'm1' }).lock('r', {
      lease: false,
      waitMs: 0,
    });
    assert.equal(lock.exclusive, false);
    assert.deepEqual(api.requests, []);
  });
});

describe('FileStore: a kubeconfig file creds generate wrote', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-file-store-'));
  const facts = {
    method: 'token',
    identity: 'system:serviceaccount:team:bot',
    cluster: 'm1',
    expires: '2026-11-27T00:00:00Z',
    anchor: 'team/bot-old',
    'cluster-server': 'https://member:6443',
  };
  const write = (name: string, withFacts = true) => {
    const path = join(dir, name);
    writeFileSync(
      path,
      buildKubeconfig({ name: 'm1', userName: 'bot', cluster, user: oldUser, ...(withFacts ? { facts } : {}) }),
      { mode: 0o600 },
    );
    return path;
  };
  const factsIn = (path: string) =>
    (
      yaml.load(readFileSync(path, 'utf8')) as {
        extensions: Array<{ name: string; extension: Record<string, string> }>;
      }
    ).extensions.find((e) => e.name === 'fleet.dev/credential')!.extension;

  it('reads, claims, replaces the user and finishes, each an atomic 0600 write', async () => {
    const path = write('a.kubeconfig');
    const store = new FileStore(path);
    const s = await store.read();
    assert.deepEqual(
      [s.method, s.identity, s.clusterName, s.old.anchor, s.state],
      ['token', 'system:serviceaccount:team:bot', 'm1', 'team/bot-old', undefined],
    );
    assert.equal(s.old.fingerprint, `sha256:${kubeconfigSha256(readFileSync(path, 'utf8'))}`);
    await store.claim(claimed);
    assert.equal(factsIn(path)['rotation-phase'], 'claimed');
    await store.replace(
      { kubeconfig: '', user: newUser, expires: '2026-11-28T00:00:00Z', anchor: 'team/bot-new', lifetimeSeconds: 3600 },
      { ...claimed, phase: 'replaced' },
    );
    const doc = yaml.load(readFileSync(path, 'utf8')) as { users: Array<{ user: unknown }> };
    assert.deepEqual(doc.users[0].user, newUser);
    assert.deepEqual(
      [factsIn(path)['rotation-phase'], factsIn(path).anchor, factsIn(path).expires, factsIn(path).lifetime],
      ['replaced', 'team/bot-new', '2026-11-28T00:00:00Z', '3600'],
    );
    assert.equal(statSync(path).mode & 0o777, 0o600);
    await store.finish();
    assert.equal(
      Object.keys(factsIn(path)).some((k) => k.startsWith('rotation-')),
      false,
    );
    assert.equal((await store.current())?.state, undefined);
  });

  it('lifts only its own claim', async () => {
    const path = write('b.kubeconfig');
    const store = new FileStore(path);
    await store.read();
    await store.claim(claimed);
    await store.release({ ...claimed, run: 'another-run' });
    assert.equal(factsIn(path)['rotation-phase'], 'claimed');
    await store.release(claimed);
    assert.equal(factsIn(path)['rotation-phase'], undefined);
  });

  it('the lock file keeps a second run out while its holder lives, and is taken over from a dead one', async () => {
    const path = write('c.kubeconfig');
    const first = await new FileStore(path).lock();
    assert.equal(first.exclusive, true);
    await assert.rejects(
      new FileStore(path).lock(),
      new RegExp(`another fleet run \\(pid ${process.pid}\\) is rotating this file`),
    );
    await first.release();
    assert.equal(existsSync(`${path}.fleet-rotate.lock`), false);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    writeFileSync(`${path}.fleet-rotate.lock`, dead);
    const taken = await new FileStore(path).lock();
    assert.equal(readFileSync(`${path}.fleet-rotate.lock`, 'utf8'), String(process.pid));
    await taken.release();
  });

  it('refuses a file fleet did not write', async () => {
    await assert.rejects(new FileStore(write('d.kubeconfig', false)).read(), NotFleetsError);
    await assert.rejects(new FileStore(join(dir, 'missing')).read(), { name: 'FleetError' });
  });
});
