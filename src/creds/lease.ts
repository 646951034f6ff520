import { createHash } from 'node:crypto';
import type { V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import { type ErrorInfo, FleetError, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { httpError } from '../kube/errors.js';
import type { ObjectMeta, Wire } from '../kube/objects.js';
import { LEASE } from '../kube/resources.js';
import { FIELD_MANAGER, getObject, sendObject } from '../kube/typed.js';
import { MANAGED_BY_LABELS, MANAGED_BY_SELECTOR } from './labels.js';

/**
 * A coordination.k8s.io Lease per rotated Secret, so that two fleet runs do not both mint a credential for the same
 * Secret (the second waits). It saves work; correctness does not rest on it: every write to the Secret carries a
 * resourceVersion precondition. Taken and renewed with resourceVersion preconditions too (create, or update an expired one).
 */
// spec is required here: the API server always serializes it (a struct field; omitempty does not drop it in Go's JSON).
type LeaseObject = Wire<V1Lease> & { metadata: ObjectMeta & { namespace: string }; spec: Wire<V1LeaseSpec> };

/** One request about a Lease (or the Leases of a namespace), answered with whatever status the server sent. */
const send = (
  hub: KubeClient,
  method: string,
  ns: string,
  name: string | undefined,
  o: { body?: unknown; query?: Record<string, string> } = {},
) => sendObject(hub, method, LEASE, { namespace: ns, name }, o);
const getLease = (hub: KubeClient, ns: string, name: string) =>
  getObject<LeaseObject>(hub, LEASE, name, { namespace: ns, what: `get Lease ${ns}/${name}` });
const micro = (d = new Date()) =>
  d
    .toISOString()
    .replace(/Z$/, '000Z')
    .replace(/\.(\d{3})000Z$/, '.$1000Z');

function expired(l: LeaseObject, now = Date.now()): boolean {
  const renew = Date.parse(l.spec.renewTime ?? l.spec.acquireTime ?? '');
  if (!l.spec.holderIdentity || Number.isNaN(renew)) return true;
  return renew + (l.spec.leaseDurationSeconds ?? 0) * 1000 < now;
}

export interface HeldLease {
  /** Whether the previous holder's lease had to expire (it died or hung). */
  takenOver: boolean;
  release(): Promise<void>;
}

async function tryTake(
  hub: KubeClient,
  ns: string,
  name: string,
  holder: string,
  seconds: number,
): Promise<'taken' | 'takenOver' | 'busy'> {
  const lease = await getLease(hub, ns, name);
  const now = micro();
  if (!lease) {
    const body: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: ns, labels: { ...MANAGED_BY_LABELS } },
      spec: {
        holderIdentity: holder,
        leaseDurationSeconds: seconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    };
    const c = await send(hub, 'POST', ns, undefined, { body, query: { fieldManager: FIELD_MANAGER } });
    if (c.status === 409) return 'busy';
    if (c.status < 200 || c.status >= 300) throw httpError(c.status, c.body, `create Lease ${ns}/${name}`);
    return 'taken';
  }
  if (lease.spec.holderIdentity && lease.spec.holderIdentity !== holder && !expired(lease)) return 'busy';
  const over = Boolean(lease.spec.holderIdentity) && lease.spec.holderIdentity !== holder;
  lease.spec = {
    ...lease.spec,
    holderIdentity: holder,
    leaseDurationSeconds: seconds,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1,
  };
  const u = await send(hub, 'PUT', ns, name, { body: lease, query: { fieldManager: FIELD_MANAGER } });
  if (u.status === 409) return 'busy';
  if (u.status < 200 || u.status >= 300) throw httpError(u.status, u.body, `update Lease ${ns}/${name}`);
  return over ? 'takenOver' : 'taken';
}

export async function acquireLease(
  hub: KubeClient,
  ns: string,
  name: string,
  holder: string,
  o: { seconds: number; waitMs: number },
): Promise<HeldLease> {
  const deadline = Date.now() + o.waitMs;
  let got: 'taken' | 'takenOver' | 'busy';
  for (;;) {
    got = await tryTake(hub, ns, name, holder, o.seconds);
    if (got !== 'busy') break;
    if (Date.now() > deadline)
      throw new FleetError(
        'timeout',
        `Lease ${ns}/${name} on the hub is held by another rotation (waited ${Math.round(o.waitMs / 1000)}s)`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
  // Renewed at a third of its duration; a renewal that fails only shortens the protection (the Secret's preconditions remain).
  // The renewal in flight is kept so that release waits for it: a renewal landing between release's read and its delete
  // would move resourceVersion, fail the delete's precondition and leave the Lease behind.
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewing.then(() => renew(hub, ns, name, holder)).catch(() => undefined);
    },
    Math.max(1000, (o.seconds * 1000) / 3),
  );
  timer.unref();
  return {
    takenOver: got === 'takenOver',
    async release() {
      clearInterval(timer);
      await renewing;
      // Deleted with a precondition on its resourceVersion, so a Lease another run has just taken is left alone; a
      // conflict (someone else wrote it between the read and the delete) is read again and decided again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await send(hub, 'GET', ns, name);
        if (res.status !== 200) return;
        const lease = JSON.parse(res.body) as LeaseObject;
        if (lease.spec.holderIdentity !== holder) return;
        const del = await send(hub, 'DELETE', ns, name, {
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions: { resourceVersion: lease.metadata.resourceVersion },
          },
        });
        if (del.status !== 409) return;
      }
    },
  };
}

async function renew(hub: KubeClient, ns: string, name: string, holder: string): Promise<void> {
  const res = await send(hub, 'GET', ns, name);
  if (res.status !== 200) return;
  const lease = JSON.parse(res.body) as LeaseObject;
  if (lease.spec.holderIdentity !== holder) return;
  lease.spec.renewTime = micro();
  await send(hub, 'PUT', ns, name, { body: lease });
}

/** The Lease that guards a Secret's rotation, in the Secret's namespace: one name per Secret name. */
export const leaseName = (secretName: string) =>
  `fleet-rotate-${createHash('sha256').update(secretName).digest('hex').slice(0, 12)}`;

/** What a run's sweep did: Leases removed, Leases left (held by a live run), and why it could not look, if it could not. */
export interface LeaseSweep {
  removed: string[];
  left: string[];
  error?: ErrorInfo;
}

/**
 * Removes the rotation Leases that stopped runs left over a selection of Secrets: expired ones (their holder died or
 * hung: a live holder renews every 5 s), and this run's own (a release the hub did not answer). Each delete carries the
 * Lease's resourceVersion, so one another run has just taken is left alone. Read with one list per namespace; a
 * selection whose namespaces forbid listing (the least Role grants get, not list) is read Lease by Lease.
 * `orphansOf`: every Secret --all found; a fleet Lease in those namespaces that guards none of them is removed too.
 */
export async function sweepLeases(
  hub: KubeClient,
  selection: Array<{ namespace: string; name: string }>,
  run: string,
  o: { orphansOf?: Array<{ namespace: string; name: string }> },
): Promise<LeaseSweep> {
  const out: LeaseSweep = { removed: [], left: [] };
  const wanted = new Set(selection.map((t) => `${t.namespace}/${leaseName(t.name)}`));
  const guarded = new Set((o.orphansOf ?? []).map((t) => `${t.namespace}/${leaseName(t.name)}`));
  const namespaces = [...new Set([...selection, ...(o.orphansOf ?? [])].map((t) => t.namespace))].sort();
  const labelSelector = MANAGED_BY_SELECTOR;
  try {
    for (const ns of namespaces) {
      let leases: LeaseObject[];
      const res = await send(hub, 'GET', ns, undefined, { query: { labelSelector } });
      if (res.status === 403) {
        leases = [];
        for (const t of selection.filter((x) => x.namespace === ns)) {
          const l = await getLease(hub, ns, leaseName(t.name));
          if (l) leases.push(l);
        }
      } else if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `list Leases in ${ns}`);
      else leases = (JSON.parse(res.body) as { items: LeaseObject[] }).items;
      for (const l of leases) {
        const key = `${ns}/${l.metadata.name}`;
        const orphan = o.orphansOf !== undefined && l.metadata.name.startsWith('fleet-rotate-') && !guarded.has(key);
        if (!wanted.has(key) && !orphan) continue;
        if (l.spec.holderIdentity !== run && !expired(l)) {
          out.left.push(key);
          continue;
        }
        const del = await send(hub, 'DELETE', ns, l.metadata.name, {
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions: { resourceVersion: l.metadata.resourceVersion },
          },
        });
        if (del.status >= 200 && del.status < 300) out.removed.push(key);
        else if (del.status === 409) out.left.push(key);
        else if (del.status !== 404) throw httpError(del.status, del.body, `delete Lease ${key}`);
      }
    }
  } catch (error) {
    out.error = toErrorInfo(error);
  }
  return out;
}
