import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { Cancellation } from '../../src/base/cancel.js';
import { FleetError, Interrupted } from '../../src/base/errors.js';
import { buildKubeconfig } from '../../src/creds/kubeconfig-out.js';
import { anchorName } from '../../src/creds/methods.js';
import type { RotationHooks, RotationState } from '../../src/creds/rotation-state.js';
import * as steps from '../../src/creds/rotation-steps.js';
import type { RotateRequest, Rotation, ReplaceConflict, StepRecord } from '../../src/creds/rotation-steps.js';
import { Conflict, type NewCredential, type RotationStore, type Stored } from '../../src/creds/rotation-store.js';
import { type ObjectServer, startObjectServer } from '../support/object-server.js';

// The rotation's steps (src/creds/rotation-steps.ts), each run against an in-memory RotationStore: the steps decide
// and record, the store only keeps. Steps that delete an anchor do it on a small real HTTPS server
// (test/support/object-server.ts); minting and verifying need a real API server and are covered by
// test/e2e/creds-rotate.test.ts.

/** A RotationStore that keeps its record in memory; `conflict` makes the next claim or replace find it changed. */
class MemoryStore implements RotationStore {
  readonly kind = 'secret';
  readonly where = 'Secret hub/mem';
  readonly self = { namespace: 'hub', name: 'mem' };
  state?: RotationState;
  anchor?: string = 'team/bot-old';
  written?: NewCredential;
  conflict?: 'claim' | 'replace';
  /** What a concurrent writer leaves when `conflict` fires. */
  theirs?: { anchor: string };
  writes: string[] = [];
  constructor(readonly stored: Stored) {}
  async lock() {
    return { exclusive: true, release: async () => undefined };
  }
  async read() {
    return { ...this.stored, state: this.state };
  }
  private write(what: 'claim' | 'replace') {
    if (this.conflict !== what) return;
    this.conflict = undefined;
    if (this.theirs) this.anchor = this.theirs.anchor;
    throw new Conflict(`${this.where} changed since it was read`);
  }
  async claim(state: RotationState) {
    this.write('claim');
    this.state = state;
    this.writes.push('claim');
  }
  async grant() {
    return { rules: [], namespaces: [] };
  }
  anchorAnnotations() {
    return {};
  }
  async replace(n: NewCredential, state: RotationState) {
    this.write('replace');
    this.written = n;
    this.anchor = n.anchor;
    this.state = state;
    this.writes.push('replace');
  }
  async current() {
    return { state: this.state, anchor: this.anchor };
  }
  async release(claimed: RotationState) {
    if (this.state?.phase === 'claimed' && this.state.run === claimed.run) {
      this.state = undefined;
      this.writes.push('release');
    }
  }
  async finish() {
    this.state = undefined;
    this.writes.push('finish');
  }
}

const cluster = { server: 'https://member:6443' };
const tokenUser = { token: 'old-token-steps-test' };
const stored = (o: Partial<Stored> = {}): Stored => ({
  method: 'token',
  identity: 'system:serviceaccount:team:bot',
  id: { kind: 'ServiceAccount', namespace: 'team', name: 'bot' },
  clusterName: 'm1',
  recorded: { legacy: false, name: 'm1' },
  held: {
    kubeconfig: buildKubeconfig({ name: 'm1', userName: 'bot', cluster, user: tokenUser }),
    cluster,
    user: tokenUser,
    names: { cluster: 'm1', user: 'bot' },
  },
  old: { anchor: 'team/bot-old', expires: '2026-11-27T00:00:00Z' },
  anchorKey: 'k1',
  ...o,
});
const certStored = () =>
  stored({
    method: 'client-cert',
    identity: 'alice',
    id: { kind: 'User', name: 'alice', groups: [] },
    old: { expires: '2026-12-01T00:00:00Z' },
  });

function rotation(
  store: RotationStore,
  o: { request?: Partial<RotateRequest>; hooks?: RotationHooks; cancel?: Cancellation; run?: string } = {},
): Rotation {
  const request = {
    names: [],
    all: false,
    cluster: async () => assert.fail('no cluster lookup here'),
    concurrency: 1,
    ...o.request,
  };
  // No step under test here connects anywhere (finding the target and verifying are e2e-tested).
  return steps.newRotation(
    store,
    request,
    { connector: undefined as never, hooks: o.hooks, cancel: o.cancel },
    o.run ?? 'run-1',
  );
}

const claimedBy = (
  run: string,
  started = new Date().toISOString(),
  newAnchor = { namespace: 'team', name: 'bot-new' },
): RotationState => ({ phase: 'claimed', newAnchor, oldAnchor: { namespace: 'team', name: 'bot-old' }, run, started });

describe('rotation steps: deciding', () => {
  const now = Date.parse('2026-11-26T00:00:00Z');
  it('skips a credential not expiring within --expiring-within, and a legacy token that never expires', () => {
    assert.deepEqual(steps.decide({ expiringWithinMs: 3_600_000 }, stored(), 'S', now), {
      status: 'skipped',
      needsTarget: false,
      reason: 'expires 2026-11-27T00:00:00Z, not within --expiring-within',
    });
    assert.equal(
      steps.decide({ expiringWithinMs: 3_600_000 }, stored({ old: { expires: 'never' } }), 'S', now).status,
      'skipped',
    );
    assert.deepEqual(steps.decide({ expiringWithinMs: 2 * 86_400_000 }, stored(), 'S', now), { status: 'rotate' });
  });

  it('--dry-run plans, naming what it would do; an interrupted rotation is planned to be finished', () => {
    assert.deepEqual(steps.decide({ dryRun: true }, stored(), 'Secret hub/m1', now), {
      status: 'planned',
      needsTarget: true,
      reason:
        'would mint a token for system:serviceaccount:team:bot bound to a new anchor, verify it, replace Secret hub/m1, delete team/bot-old',
    });
    assert.match(
      (steps.decide({ dryRun: true }, certStored(), 'f', now) as { reason: string }).reason,
      /^would issue a new client certificate for alice, verify it, replace f$/,
    );
    const replaced = { ...claimedBy('old-run'), phase: 'replaced' as const, oldAnchor: undefined };
    assert.deepEqual(steps.decide({ dryRun: true }, stored({ state: replaced }), 'S', now), {
      status: 'planned',
      needsTarget: false,
      reason: 'would finish the interrupted rotation (phase replaced, new anchor team/bot-new)',
    });
    assert.deepEqual(
      steps.decide({ expiringWithinMs: 1 }, stored({ state: replaced }), 'S', now),
      { status: 'rotate' },
      'an interrupted rotation is finished whatever its expiry',
    );
  });
});

describe('rotation steps: claim and take-over', () => {
  it('claim records the new anchor before it exists, named from the store and a fresh suffix', async () => {
    const store = new MemoryStore(stored());
    const rot = rotation(store);
    const state = await steps.claim(rot, stored());
    assert.deepEqual(store.state, state);
    assert.equal(state.newAnchor!.namespace, 'team');
    assert.match(state.newAnchor!.name, new RegExp(`^${anchorName('bot', 'k1')}-[0-9a-f]{6}$`));
    assert.deepEqual(
      [state.oldAnchor, state.run, state.phase],
      [{ namespace: 'team', name: 'bot-old' }, 'run-1', 'claimed'],
    );
    assert.deepEqual([rot.at, rot.steps.map((s) => s.step)], [{ step: 'after claim', phase: 'claimed' }, ['claim']]);
    const cert = await steps.claim(rotation(new MemoryStore(certStored())), certStored());
    assert.equal(cert.newAnchor, undefined, 'a certificate hangs on no anchor');
  });

  it('a claim that finds the store changed mints nothing and says so', async () => {
    const store = new MemoryStore(stored());
    store.conflict = 'claim';
    const rot = rotation(store);
    await assert.rejects(steps.claim(rot, stored()), {
      message:
        'Secret hub/mem was changed by someone else while this run claimed it (another rotation?); nothing was minted, the credential in it is unchanged',
    });
    assert.deepEqual([store.state, rot.at.phase, rot.steps], [undefined, 'unchanged', []]);
  });

  it("another run's recent claim is left alone without the lock; with it, or once stale, this run finishes it", () => {
    const now = Date.parse('2026-11-26T03:00:00Z');
    const recent = claimedBy('other', '2026-11-26T02:59:00.000Z');
    const rot = rotation(new MemoryStore(stored()));
    assert.throws(() => steps.takeOver(rot, recent, now), {
      message:
        'Secret hub/mem: a rotation by run other started 2026-11-26T02:59:00.000Z is in progress; nothing was minted, the credential in it is unchanged',
    });
    assert.equal(rot.at.phase, 'unchanged');
    assert.equal(steps.takeOver({ ...rot, exclusive: true }, recent, now), recent);
    const stale = claimedBy('other', '2026-11-26T02:57:00.000Z');
    assert.equal(steps.takeOver(rot, stale, now), stale);
    assert.equal(rot.at.phase, 'claimed');
    assert.equal(
      steps.takeOver(rotation(new MemoryStore(stored()), { run: 'other' }), recent, now),
      recent,
      'its own claim',
    );
  });
});

describe('rotation steps: the hooks and the interrupt after each step', () => {
  it('records the step, then the failpoint, the pause, and the interrupt, in that order', async () => {
    const crashed: string[] = [];
    const rot = rotation(new MemoryStore(stored()), {
      hooks: { failAfter: 'claim', crash: () => crashed.push(rot.at.step) },
    });
    assert.equal(
      await steps.step(
        rot,
        'claim',
        async () => 42,
        (v) => `got ${v}`,
      ),
      42,
    );
    assert.deepEqual(crashed, ['after claim'], 'crashed right after the step, once it was done');
    assert.deepEqual(
      rot.steps.map(({ step: s, detail }) => [s, detail]),
      [['claim', 'got 42']],
    );
    const cancel = new Cancellation();
    const paused = rotation(new MemoryStore(stored()), { hooks: { pauseAfter: { step: 'verify', ms: 5000 } }, cancel });
    const t0 = Date.now();
    setTimeout(() => cancel.cancel('SIGINT'), 30);
    await assert.rejects(
      steps.step(paused, 'verify', async () => undefined),
      Interrupted,
    );
    assert.ok(Date.now() - t0 < 2000, 'the interrupt ended the pause');
    assert.deepEqual([paused.at.step, paused.steps.length], ['after verify', 1]);
  });
});

describe('rotation steps: replace, abandon, revoke, finish, interrupt', () => {
  let api: ObjectServer;
  const anchorPath = (name: string) => `/api/v1/namespaces/team/secrets/${name}`;
  before(async () => (api = await startObjectServer()));
  after(() => api.close());
  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
    for (const name of ['bot-new', 'bot-old'])
      api.objects.set(anchorPath(name), { metadata: { name, namespace: 'team', resourceVersion: '1' } });
  });
  const minted = {
    issued: { user: { token: 'new-token-steps' }, expires: '2026-11-28T00:00:00Z' },
    seconds: 3600,
    lifetime: { requestedSeconds: 3600, shortened: false },
    kubeconfig: 'k',
  };

  it('replace writes the new credential only as claimed, phase replaced', async () => {
    const store = new MemoryStore(stored());
    const rot = rotation(store);
    const claimed = claimedBy('run-1');
    store.state = claimed;
    const state = await steps.replace(rot, claimed, minted, api.client);
    assert.deepEqual([state.phase, store.state?.phase, rot.at.phase], ['replaced', 'replaced', 'replaced']);
    assert.deepEqual(store.written, {
      kubeconfig: 'k',
      user: { token: 'new-token-steps' },
      expires: '2026-11-28T00:00:00Z',
      anchor: 'team/bot-new',
      lifetimeSeconds: 3600,
      identity: undefined,
    });
  });

  it('replace that loses to another writer revokes its own new credential; one the store already holds is kept', async () => {
    const store = new MemoryStore(stored());
    store.conflict = 'replace';
    store.theirs = { anchor: 'team/someone-elses' };
    await assert.rejects(
      steps.replace(rotation(store), claimedBy('run-1'), minted, api.client),
      (e: ReplaceConflict) => {
        assert.equal(e.message, 'Secret hub/mem changed while this run rotated it; re-read, not overwritten');
        assert.deepEqual(e.revoked, {
          done: true,
          reason:
            "this run's new credential (anchor team/bot-new) was revoked: Secret hub/mem was changed by another writer first",
        });
        return true;
      },
    );
    assert.equal(api.objects.has(anchorPath('bot-new')), false);
    const holding = new MemoryStore(stored());
    holding.conflict = 'replace';
    holding.theirs = { anchor: 'team/bot-new' };
    await assert.rejects(
      steps.replace(rotation(holding), claimedBy('run-1'), minted, api.client),
      (e: ReplaceConflict) => e.revoked === undefined,
    );
    assert.deepEqual(
      api.requests.filter((r) => r.startsWith('DELETE')),
      [`DELETE ${anchorPath('bot-new')}`],
      'deleted once, by the run that lost',
    );
  });

  it('abandon after a failed verification deletes the new anchor and lifts the claim', async () => {
    const store = new MemoryStore(stored());
    const rot = rotation(store);
    store.state = claimedBy('run-1');
    rot.at.phase = 'claimed';
    await assert.rejects(
      steps.abandon(rot, store.state, api.client, [
        { name: 'identity', status: 'fail', message: 'is nobody' },
        { name: 'grant', status: 'pass', message: '' },
      ]),
      {
        message:
          'Secret hub/mem: the new credential failed verification (identity: is nobody); the old one is unchanged and its anchor deleted',
      },
    );
    assert.deepEqual(
      [api.objects.has(anchorPath('bot-new')), store.state, rot.at.phase],
      [false, undefined, 'unchanged'],
    );
  });

  it('revoke deletes the old anchor; a certificate, or a credential with no anchor, says why nothing was revoked', async () => {
    const rot = rotation(new MemoryStore(stored()));
    const replaced = { ...claimedBy('run-1'), phase: 'replaced' as const };
    assert.deepEqual(await steps.revokeOld(rot, stored(), { state: replaced, target: api.client }), {
      done: true,
      reason:
        'anchor team/bot-old deleted (the old token was replaced by an earlier, interrupted run, so it could not be probed here)',
    });
    assert.equal(api.objects.has(anchorPath('bot-old')), false);
    assert.deepEqual(
      rot.steps.map((s) => [s.step, s.detail]),
      [['revoke', 'deleted anchor Secret team/bot-old']],
    );
    assert.deepEqual(
      await steps.revokeOld(rot, stored(), { state: { ...replaced, oldAnchor: undefined }, target: api.client }),
      {
        done: false,
        reason: 'the old credential named no anchor: nothing to delete (it stays valid until it expires)',
      },
    );
    assert.deepEqual(
      await steps.revokeOld(rot, certStored(), { state: replaced, oldExpires: '2026-12-01T00:00:00Z' }),
      {
        done: false,
        reason:
          'a client certificate cannot be revoked: the old one stays valid until 2026-12-01T00:00:00Z (its NotAfter)',
      },
    );
    assert.equal(rot.steps.length, 1, 'nothing more was done');
  });

  it('finish clears the record; the phase is back to unchanged', async () => {
    const store = new MemoryStore(stored());
    store.state = { ...claimedBy('run-1'), phase: 'replaced' };
    const rot = rotation(store);
    await steps.finish(rot);
    assert.deepEqual([store.state, rot.at.phase, store.writes], [undefined, 'unchanged', ['finish']]);
  });

  it("after an interrupt: its own claim is lifted (its anchor deleted); a replaced store is left for the next run; another's claim untouched", async () => {
    const store = new MemoryStore(stored());
    const rot = rotation(store);
    assert.equal(await steps.afterInterrupt(rot), 'before this run changed anything: the credential is unchanged');
    store.state = claimedBy('run-1');
    await assert.rejects(steps.afterInterrupt(rot), { message: 'the target cluster of this claim was never reached' });
    rot.at.target = api.client;
    assert.equal(
      await steps.afterInterrupt(rot),
      'before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted',
    );
    assert.deepEqual([store.state, api.objects.has(anchorPath('bot-new'))], [undefined, false]);
    store.state = { ...claimedBy('run-1'), phase: 'replaced' };
    assert.equal(
      await steps.afterInterrupt(rot),
      'after the Secret got the new credential: the next run finishes the rotation (deletes the old anchor)',
    );
    store.state = claimedBy('other');
    assert.equal(await steps.afterInterrupt(rot), 'before this run changed anything: the credential is unchanged');
    assert.equal(store.state.run, 'other');
  });

  it('after an interrupt honoured right after a store write, what it says matches what the store holds (issue 41)', async () => {
    // Interrupted after replace: the phase is "replaced" at once (the step sets it before the interrupt is checked), so
    // the line and the next-run note agree (they said "before this run changed anything" / "claimed by this run").
    const store = new MemoryStore(stored());
    const rot = rotation(store);
    store.state = claimedBy('run-1');
    const c = new Cancellation();
    rot.env.cancel = c;
    c.cancel('SIGINT');
    await assert.rejects(
      steps.step(
        rot,
        'replace',
        async () => (store.state = { ...claimedBy('run-1'), phase: 'replaced' }),
        undefined,
        'replaced',
      ),
      Interrupted,
    );
    assert.equal(rot.at.phase, 'replaced');
    // A run finishing another's replaced rotation, interrupted after its revoke: the store is replaced, said so.
    const resumed = rotation(store);
    store.state = { ...claimedBy('earlier'), phase: 'replaced' };
    resumed.steps.push({ step: 'revoke', ms: 1 });
    assert.equal(
      await steps.afterInterrupt(resumed),
      'after the Secret got the new credential: the next run finishes the rotation (the old anchor is deleted already)',
    );
    // Interrupted after finish: the rotation is done.
    store.state = undefined;
    resumed.steps.push({ step: 'finish', ms: 1 });
    assert.equal(
      await steps.afterInterrupt(resumed),
      'after the rotation finished: the Secret holds the new credential and nothing is left to do',
    );
  });
});

describe('rotation steps: what a failed item left', () => {
  const rot = (
    step: string,
    phase: 'unchanged' | 'claimed' | 'replaced',
    kind: 'secret' | 'file' = 'secret',
    steps: StepRecord[] = [],
  ) => ({ store: { kind } as RotationStore, at: { step, phase }, steps });
  it('names the step, where it ran, what the store holds and what the next run does', () => {
    assert.deepEqual(
      steps.unfinished(rot('mint', 'claimed'), { target: { cluster: 'm1', by: 'server' } }, new Error('x')),
      {
        step: 'mint',
        on: 'm1',
        phase: 'claimed',
        next: 'the old credential is in place, claimed by this run; the next run takes the claim over (the same new anchor) and rotates it',
      },
    );
    assert.deepEqual(steps.unfinished(rot('after replace', 'replaced', 'file'), { cluster: 'c' }, new Error('x')), {
      step: 'after replace',
      on: 'the file',
      phase: 'replaced',
      next: 'the file holds the new credential; the next run finishes it (deletes the old anchor)',
    });
    assert.deepEqual(
      steps.unfinished(
        rot('after revoke', 'replaced', 'file', [{ step: 'revoke', ms: 1 }]),
        { cluster: 'c' },
        new Error('x'),
      ),
      {
        step: 'after revoke',
        on: 'c',
        phase: 'replaced',
        next: 'the file holds the new credential; the next run finishes it (the old anchor is deleted already)',
      },
    );
    assert.equal(steps.unfinished(rot('read', 'unchanged'), {}, new Error('x')).on, 'the hub');
    const silent = steps.unfinished(rot('replace', 'claimed'), {}, new FleetError('timeout', 'no answer'));
    assert.deepEqual([silent.phase, silent.on], ['unknown', 'the hub']);
    assert.match(
      silent.next,
      /^the hub did not answer this run's replace of the Secret, which may or may not have been applied/,
    );
  });
});
