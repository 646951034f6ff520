import { lifetimeOf, lifetimeToAsk } from './lifetime.js';
import { FleetError, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { SECRET } from '../kube/resources.js';
import { listObjects } from '../kube/typed.js';
import { type Shard, inShard } from '../fleet/shard.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import type { Secret } from '../providers/hub/objects.js';
import { identityFacts } from './cluster-identity.js';
import { checkHeldServer } from './held-server.js';
import { UnknownFormatError } from './codecs/index.js';
import { kubeconfigSha256 } from './kubeconfig-out.js';
import { ANNOTATIONS, MANAGED_BY_SELECTOR } from './labels.js';
import { type LeaseSweep, sweepLeases } from './lease.js';
import { newRunId } from './rotation-state.js';
import {
  type RotateEnv,
  type RotateRequest,
  type RotatedCredential,
  type Rotation,
  ReplaceConflict,
  abandon,
  afterInterrupt,
  anchorStillUsed,
  claim,
  decide,
  findTarget,
  finish,
  fp,
  mint,
  newRotation,
  readStored,
  refText,
  replace,
  revokeOld,
  storeOrigin,
  takeOver,
  rotationFinished,
  unfinished,
  verified,
  verify,
} from './rotation-steps.js';
import { FileStore, NotFleetsError, type RotationStore, SecretStore } from './rotation-store.js';
import { kernelPath } from '../base/paths.js';
import { namespacedName } from '../base/names.js';
import { usedText } from './still-used.js';

export type { RotateEnv, RotateRequest, RotatedCredential, StepRecord, Unfinished } from './rotation-steps.js';

/**
 * `fleet creds rotate`: replaces the credential in a fleet-managed hub Secret, or a kubeconfig file creds generate wrote,
 * with a new one of the same method, identity and scope, proved before it is written, and revokes the old one. At every
 * instant the store holds a credential that works: the new one is written only once verified, the old one is revoked
 * only once replaced. Progress is recorded in the store (rotation-state.ts) so a killed run is finished by the next, and
 * every write is conditional (a Secret's resourceVersion; a file's lock), so a concurrent change is re-read, never
 * overwritten. The steps are functions of the rotation (rotation-steps.ts), run in order here; rotation-store.ts says
 * how each store reads and writes.
 */
export interface RotationReport {
  kind: 'CredentialRotation';
  dryRun: boolean;
  hub: string;
  /** A sharded --all run: its part, and how many Secrets --all found in all (the items are this part's). */
  shard?: Shard & { selected: number };
  items: RotatedCredential[];
  /** Leases on the hub that stopped runs left behind over this run's selection, removed after the rotations. */
  leases?: LeaseSweep;
}

/** Secrets `--all` considers: every hub Secret fleet manages that holds a consumer credential (it has a format). */
async function fleetSecrets(hub: KubeClient): Promise<Secret[]> {
  const items = await listObjects<Secret>(hub, SECRET, { labelSelector: MANAGED_BY_SELECTOR, what: 'list Secrets' });
  const a = (s: Secret) => (s.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  return items.filter((s) => a(s)[ANNOTATIONS.format] && a(s)[ANNOTATIONS.method]);
}

export async function rotateCredentials(r: RotateRequest, env: RotateEnv): Promise<RotationReport> {
  const run = newRunId();
  const files = (r.files ?? []).map((path) => new FileStore(kernelPath(path)));
  const hub = r.all || r.names.length > 0 ? await env.connector.hub(r.hub, env.env) : undefined;
  const named = hub ? r.names.map((t) => new SecretStore(hub, t)) : [];
  // A named Secret or file fleet did not write, or one in a format it does not know, refuses the whole run before
  // anything is rotated (exit 2, one line), as creds revoke does; any other problem reading one stays that credential's
  // failure, found again under its lock.
  for (const store of [...files, ...named]) {
    await store.read().catch((error: unknown) => {
      if (error instanceof NotFleetsError || error instanceof UnknownFormatError) throw error;
    });
  }
  // What is rotated is known before the first rotation, so a progress line counts all of it (files, then Secrets).
  let targets: Array<{ namespace: string; name: string }> = r.names;
  let shard: RotationReport['shard'];
  let all: Array<{ namespace: string; name: string }> | undefined;
  if (hub && r.all) {
    targets = all = (await fleetSecrets(hub)).map((s) => ({
      namespace: s.metadata.namespace ?? 'default',
      name: s.metadata.name,
    }));
    if (r.shard) {
      shard = { ...r.shard, selected: targets.length };
      targets = targets.filter((t) => inShard(`${t.namespace}/${t.name}`, r.shard));
    }
  }
  const stores = hub && r.all ? targets.map((t) => new SecretStore(hub, t)) : named;
  const progress = { done: 0, total: files.length + stores.length, failed: 0 };
  const counted = (item: RotatedCredential) => {
    progress.done++;
    if (item.status === 'failed') progress.failed++;
    env.progress?.count({ ...progress });
    return item;
  };
  env.progress?.count({ ...progress });
  const fileItems: RotatedCredential[] = [];
  for (const store of files)
    fileItems.push(counted(await rotateOne(store, { file: { path: store.where } }, r, env, run)));
  if (!hub) return { kind: 'CredentialRotation', dryRun: Boolean(r.dryRun), hub: '', items: fileItems };
  const hubName = hub.context.contextName;
  const gate = slots(Math.max(1, r.concurrency));
  const items = await Promise.all(
    stores.map(async (store) => {
      await gate.take();
      let held = true;
      const give = () => {
        if (held) gate.give();
        held = false;
      };
      try {
        return counted(await rotateOne(store, { secret: { hub: hubName, ...store.self } }, r, env, run, give));
      } finally {
        give();
      }
    }),
  );
  // After the rotations (a killed run's Leases have expired by then): over the whole selection, skipped Secrets included;
  // with --all, also the Leases of Secrets that are gone (by one shard only, the first, so two shards never race for them).
  const leases =
    r.dryRun || env.cancel?.interrupted
      ? undefined
      : await sweepLeases(hub, targets, run, { orphansOf: all && (!r.shard || r.shard.index === 0) ? all : undefined });
  return {
    kind: 'CredentialRotation',
    dryRun: Boolean(r.dryRun),
    hub: hubName,
    ...(shard ? { shard } : {}),
    items: [...fileItems, ...items],
    ...(leases ? { leases } : {}),
  };
}

/**
 * --concurrency places: at most that many credentials in their working steps at once. A credential that only waits for
 * its old token to be refused (confirm-revoked: the API server's token cache keeps a token it authenticated for up to
 * 10 s after its anchor is deleted) gives its place to the next, so those waits overlap instead of adding up.
 */
function slots(limit: number): { take: () => Promise<void>; give: () => void } {
  let free = limit;
  const waiting: Array<() => void> = [];
  return {
    take: () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((r) => waiting.push(r))),
    give: () => {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/** One credential, whichever store keeps it: locked, rotated, and on an interrupt put back or left for the next run. */
async function rotateOne(
  store: RotationStore,
  at: Pick<RotatedCredential, 'secret' | 'file'>,
  r: RotateRequest,
  env: RotateEnv,
  run: string,
  giveSlot?: () => void,
): Promise<RotatedCredential> {
  const started = Date.now();
  const item: RotatedCredential = { ...at, status: 'failed', old: {}, verification: [], steps: [], durationMs: 0 };
  const rot = newRotation(store, r, env, run, giveSlot);
  if (!r.dryRun) rot.at.step = 'lease';
  let lock: { exclusive: boolean; release: () => Promise<void> } | undefined;
  try {
    if (!r.dryRun) lock = await store.lock(run, { lease: r.lease !== false, waitMs: r.leaseWaitMs ?? 60_000 });
    rot.exclusive = Boolean(lock?.exclusive);
    Object.assign(item, await rotateLocked(rot, item));
  } catch (caught) {
    // An interrupt replaces what was caught with the interrupt's own error, which names what it left.
    let error = caught;
    item.status = 'failed';
    if (caught instanceof ReplaceConflict && caught.revoked) item.revoked = caught.revoked;
    if (env.cancel?.interrupted) {
      const what = await afterInterrupt(rot).catch(
        (e: Error) => `and its claim could not be lifted (${e.message}): the next run finishes it`,
      );
      error = env.cancel.error(what);
    }
    item.error = toErrorInfo(error);
    item.reason ??= item.error.message;
    // A Secret (or its namespace) that is not there was never rotated and has nothing for a next run to finish: saying
    // "the old credential is in place; the next run rotates it" would promise a credential that does not exist.
    if (absent(error, rot.at.step)) {
      item.reason =
        rot.at.step === 'read' || item.error.message.endsWith(`${store.where} not found`)
          ? `${item.error.message}: nothing to rotate`
          : `${store.where} does not exist (${item.error.message}): nothing to rotate`;
    } else if (!r.dryRun && !rotationFinished(rot)) item.unfinished = unfinished(rot, item, error);
  } finally {
    item.steps = rot.steps;
    await lock?.release().catch(() => undefined);
    item.durationMs = Date.now() - started;
    env.progress?.doing(store.where, undefined);
  }
  return item;
}

/** The credential's store is not there: its Secret, or the namespace a Lease beside it would go to (404 at lease or read). */
function absent(error: unknown, step: string): boolean {
  return error instanceof FleetError && error.kind === 'not-found' && (step === 'lease' || step === 'read');
}

/**
 * The steps in order (rotation-steps.ts), for every store. `item` is the report as far as the run got: each step's
 * result is recorded in it as soon as it is known, so a failed item says what was done (its target, the new
 * credential's verification); what the run ends with is returned.
 */
async function rotateLocked(rot: Rotation, item: RotatedCredential): Promise<Partial<RotatedCredential>> {
  const { store, request: r, env } = rot;
  const where = store.where;
  const s = await readStored(rot);
  if (item.secret) item.secret.format = s.format;
  Object.assign(item, { cluster: s.clusterName, method: s.method, identity: s.identity, old: s.old });
  const toTarget = async () => {
    const found = await findTarget(rot, s);
    item.target = { cluster: found.ref.name, by: found.by };
    // A hub Secret's cluster entry is hub data: whoever may write the Secret may have pointed it elsewhere since fleet
    // wrote it. The new credential is written into that entry, so it must still reach the target (held-server.ts).
    if (store.kind === 'secret')
      item.destination = await checkHeldServer(s.held.cluster, found.destination, where, 'rotate', {
        signal: env.cancel?.signal,
      });
    else
      item.destination = {
        server: s.held.cluster.server ?? '',
        verifiedAt: found.destination.server,
        by: "the user's own file",
      };
    return found;
  };

  const decision = decide(r, s, where);
  if (decision.status !== 'rotate') {
    // --dry-run says where it would mint; a skipped credential is not looked for.
    const found = decision.needsTarget ? await toTarget() : undefined;
    const old = namespacedName(s.state?.oldAnchor ? refText(s.state.oldAnchor) : s.old.anchor);
    if (found && decision.status === 'planned' && old && s.id.kind === 'ServiceAccount') {
      // What the old anchor's deletion would meet (still-used.ts), said as the run would say it.
      const used = await anchorStillUsed(rot, s, old, found.client, s.state ? undefined : s.held.user.token);
      if (used.users.length > 0 || used.unchecked.length > 0)
        item.revoked = {
          done: false,
          ...(used.users.length > 0 ? { stillUsed: used.users } : {}),
          ...(used.unchecked.length > 0 ? { unchecked: used.unchecked } : {}),
          reason:
            used.users.length === 0
              ? `would delete the old anchor ${refText(old)}`
              : env.guard?.force
                ? `would delete the old anchor ${refText(old)} although still used by ${used.users.join(', ')} (--force)`
                : `would be kept: ${usedText(`the old anchor Secret ${refText(old)}`, used, false)}`,
        };
    }
    const at = item.destination
      ? `; the new credential is written for ${item.destination.server} and verified at ${item.destination.verifiedAt} (${item.destination.by})`
      : '';
    return {
      status: decision.status,
      reason: decision.status === 'planned' ? `${decision.reason}${at}` : decision.reason,
    };
  }

  // The cluster is found before the claim: a resolution failure leaves the store as it was (no claim behind).
  const needsTarget = !s.state || s.state.phase === 'claimed' || Boolean(s.state.oldAnchor);
  const reached = needsTarget ? await toTarget() : undefined;
  let state = s.state ? takeOver(rot, s.state) : await claim(rot, s);
  if (s.state) {
    item.resumed = s.state.phase;
    if (s.state.phase === 'replaced') item.old = { anchor: refText(s.state.oldAnchor) };
  }

  const target = state.phase === 'claimed' || state.oldAnchor ? reached?.client : undefined;
  const cluster = item.target?.cluster ?? item.cluster ?? where;
  let oldClient: KubeClient | undefined;
  if (state.phase === 'claimed') {
    // The old credential is still the store's: kept to prove later that it stopped working.
    // A Secret's credential goes to the target's destination, never to the server its entry names.
    // (A claim always reaches its target first: `reached` is set here.)
    oldClient =
      store.kind === 'secret'
        ? await env.connector.withCredential(reached!.destination, s.held.user, `${where} (old credential)`)
        : await env.connector.context(
            contextFromKubeconfigText(s.held.kubeconfig, `${where} (old credential)`, storeOrigin(store), s.context),
            cluster,
          );
    const grant = await store.grant(target!);
    const claimed = state;
    const minted = await mint(rot, s, claimed, target!);
    if (minted.lifetime) item.lifetime = minted.lifetime;
    item.verification = await verify(rot, s, minted, grant, reached!.destination);
    item.new = {
      fingerprint: fp(kubeconfigSha256(minted.kubeconfig)),
      expires: minted.issued.expires,
      anchor: refText(claimed.newAnchor),
    };
    if (!verified(item.verification)) await abandon(rot, claimed, target!, item.verification);
    // A record written before the cluster's identity was kept gets it now, from the cluster it was found on.
    const identity =
      s.recorded.legacy && reached
        ? await identityFacts(await reached.ref.resolve(), reached.client, reached.ref)
        : undefined;
    state = await replace(rot, claimed, minted, target!, identity);
  }

  const revoked = await revokeOld(rot, s, { state, target, oldClient, oldExpires: item.old.expires });
  item.revoked = revoked;
  await finish(rot);
  // A certificate that cannot be revoked is the method's nature, said in `revoked`; a token that survived its anchor is a
  // failure. An anchor kept because something still uses it (never deleted) is rotated, and the command exits 1 for it.
  const rotated = revoked.done || s.method === 'client-cert' || oldAnchorKept(item.revoked, rot);
  // What the store holds now (a file's bytes change at finish; a resumed run minted nothing itself).
  const now = store.kind === 'file' || !item.new ? await store.current() : undefined;
  // A run that resumed after the replace minted nothing, but the store already holds the new credential: its lifetime
  // is what that credential was issued with (the table's LIFETIME was empty for it).
  if (!item.lifetime && item.resumed === 'replaced' && s.method !== 'legacy-token')
    item.lifetime = lifetimeOf(lifetimeToAsk(undefined, s.lifetime, s.held.user), s.held.user);
  return {
    status: rotated ? 'rotated' : 'failed',
    ...(rotated ? {} : { reason: revoked.reason }),
    new: {
      fingerprint: store.kind === 'file' ? now?.fingerprint : (item.new?.fingerprint ?? now?.fingerprint),
      expires: item.new?.expires ?? now?.expires,
      anchor: item.new?.anchor ?? now?.anchor,
    },
  };
}

/** The old anchor was kept (not deleted: the revoke step never ran) because something still uses it. */
export function oldAnchorKept(revoked: RotatedCredential['revoked'], rot?: Pick<Rotation, 'steps'>): boolean {
  return Boolean(
    revoked && !revoked.done && revoked.stillUsed?.length && !(rot?.steps ?? []).some((s) => s.step === 'revoke'),
  );
}

/**
 * What the failures left: one that failed before its store was replaced keeps the old credential; one that failed after
 * (an interrupt, a revoke that did not go through) already holds the new one, and the next run finishes it.
 */
export function rotationFailureNote(failed: RotatedCredential[]): string {
  // Interrupted after the last step: rotated after all, the signal only ended the run.
  const finished = failed.filter((i) => rotationFinished(i)).length;
  // Replaced by this run (its steps), or by an interrupted one this run was finishing, and not finished.
  const replaced = failed.filter(
    (i) => !rotationFinished(i) && (i.resumed === 'replaced' || i.steps.some((s) => s.step === 'replace')),
  ).length;
  const missing = failed.filter((i) => i.error?.kind === 'not-found' && !i.unfinished).length;
  const kept = failed.length - replaced - missing - finished;
  const parts: string[] = [];
  if (missing > 0)
    parts.push(
      `${missing === failed.length ? (missing > 1 ? 'they do' : 'it does') : `${missing} do${missing > 1 ? '' : 'es'}`} not exist`,
    );
  if (kept > 0)
    parts.push(
      `${kept === failed.length ? (kept > 1 ? 'their' : 'its') : kept} old credential${kept > 1 ? 's are' : ' is'} still in place`,
    );
  if (finished > 0)
    parts.push(
      `${finished === failed.length ? (finished > 1 ? 'they' : 'it') : finished} finished before the signal (the new credential is in place; nothing is left to do)`,
    );
  if (replaced > 0)
    parts.push(
      `${replaced === failed.length ? (replaced > 1 ? 'they' : 'it') : replaced} already ${replaced > 1 ? 'hold' : 'holds'} the new one and the next run finishes ${replaced > 1 ? 'them' : 'it'}`,
    );
  return `${failed.length} rotation${failed.length > 1 ? 's' : ''} failed: ${parts.join('; ')}`;
}
