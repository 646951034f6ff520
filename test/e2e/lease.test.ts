// The rotation Lease (src/creds/lease.ts) against a real apiserver. The case that matters is release racing the
// Lease's own renewal: a renewal that lands between release's read and its delete moves resourceVersion, fails the
// delete's precondition, and (before the fix) left the Lease behind for 15 s, which CI saw once as a flaky
// "a Lease was left behind" in creds-rotate.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { acquireLease } from '../../src/creds/lease.js';
import { KubeClient } from '../../src/kube/client.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { kubectl, loadControlPlane, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.servers.find((s) => s.role === 'hub')!;
const ns = uniqueName('lease');

async function admin(): Promise<KubeClient> {
  const ctx = {
    contextName: 'hub-admin',
    clusterName: 'hub',
    userName: 'admin',
    cluster: { server: hub.url, 'certificate-authority': hub.caFile },
    user: { 'client-certificate': cp.admin.certFile, 'client-key': cp.admin.keyFile },
    contextFile: 'test',
    clusterFile: 'test',
  } as unknown as ResolvedContext;
  return KubeClient.connect(ctx, { timeoutMs: 10_000, clusterName: 'hub', exec: new ExecCredentialRunner() });
}

async function leaseNames(): Promise<string[]> {
  return (await kubectl(hub, ['get', 'leases', '-n', ns, '-o', 'name'])).split('\n').filter(Boolean);
}

describe('rotation Lease', () => {
  before(async () => {
    await kubectl(hub, ['create', 'namespace', ns]);
  });
  after(async () => {
    await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']);
  });

  it('release right as a renewal fires still deletes the Lease (ten rounds, renewals every second)', async () => {
    const client = await admin();
    for (let round = 0; round < 10; round++) {
      const name = `race-${round}`;
      // 3 s Lease: renewed every second. The release is scheduled after the interval is, for the same moment, so it
      // starts while that renewal's read/write is in flight.
      const held = await acquireLease(client, ns, name, `holder-${round}`, { seconds: 3, waitMs: 5_000 });
      assert.equal(held.takenOver, false);
      await new Promise<void>((resolve, reject) =>
        setTimeout(() => void held.release().then(resolve, reject), 1000 + (round % 3) * 5),
      );
      assert.deepEqual(await leaseNames(), [], `round ${round}: a Lease was left behind`);
    }
  });

  it('a second holder waits for the first and takes the Lease once it is released; a held Lease is not taken over', async () => {
    const client = await admin();
    const first = await acquireLease(client, ns, 'queue', 'first', { seconds: 15, waitMs: 1_000 });
    await assert.rejects(
      acquireLease(client, ns, 'queue', 'second', { seconds: 15, waitMs: 1_200 }),
      /held by another rotation/,
    );
    const waiting = acquireLease(client, ns, 'queue', 'second', { seconds: 15, waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 700));
    await first.release();
    const second = await waiting;
    assert.equal(second.takenOver, false);
    const holder = (
      await kubectl(hub, ['get', 'lease', 'queue', '-n', ns, '-o', 'jsonpath={.spec.holderIdentity}'])
    ).trim();
    assert.equal(holder, 'second');
    // The first holder releasing again does not delete the second's Lease.
    await first.release();
    assert.deepEqual(await leaseNames(), ['lease.coordination.k8s.io/queue']);
    await second.release();
    assert.deepEqual(await leaseNames(), []);
  });

  it('an expired Lease (its holder died) is taken over and says so', async () => {
    const client = await admin();
    // The Lease a killed process left: held, last renewed long ago.
    await kubectl(hub, ['apply', '-f', '-'], {
      stdin: `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: dead\n  namespace: ${ns}\nspec:\n  holderIdentity: dead-holder\n  leaseDurationSeconds: 15\n  acquireTime: "2020-01-01T00:00:00.000000Z"\n  renewTime: "2020-01-01T00:00:00.000000Z"\n`,
    });
    const next = await acquireLease(client, ns, 'dead', 'next-holder', { seconds: 15, waitMs: 500 });
    assert.equal(next.takenOver, true);
    await next.release();
  });
});
