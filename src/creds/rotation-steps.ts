import { accessReview } from '../access/access-review.js';
import { selfSubjectReview } from '../access/whoami.js';
import { type Check, worstStatus } from '../base/checks.js';
import type { Cancellation } from '../base/cancel.js';
import { type ErrorInfo, FleetError } from '../base/errors.js';
import { namespacedName } from '../base/names.js';
import type { HubSpec } from '../config/fleet-config.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import type { Destination } from '../kube/destination.js';
import type { HeldServer } from './held-server.js';
import { ApplyLog } from '../kube/apply-log.js';
import type { KubeObject } from '../kube/objects.js';
import { CERTIFICATE_SIGNING_REQUEST, SECRET } from '../kube/resources.js';
import { applyObject, deleteObject } from '../kube/typed.js';
import type { Shard } from '../fleet/shard.js';
import type { ProgressPort } from '../base/progress.js';
import { TOKEN_REFUSED_USUALLY_WITHIN_MS } from '../base/limits.js';
import type { ContextOrigin } from '../kubeconfig/trust.js';
import type { ClusterRef } from '../providers/types.js';
import {
  type ClusterIdentityFacts,
  type RecordedCluster,
  type ResolvedTarget,
  resolveCredentialCluster,
} from './cluster-identity.js';
import { certNotAfter } from './credential-record.js';
import { buildKubeconfig } from './kubeconfig-out.js';
import { type Lifetime, lifetimeOf, lifetimeToAsk } from './lifetime.js';
import {
  type Issued,
  type Method,
  anchorName,
  anchorObject,
  awaitLegacyToken,
  issueBoundToken,
  issueClientCert,
  legacySecretName,
  legacyTokenObject,
} from './methods.js';
import type { Identity } from './rbac.js';
import {
  type Phase,
  type RotationHooks,
  type RotationState,
  type Step,
  anchorSuffix,
  failpoint,
  pausepoint,
} from './rotation-state.js';
import { Conflict, type RotationStore, type Stored } from './rotation-store.js';
import type { PolicyRule } from './rules-file.js';
import { type DeleteGuard, stillUsed, usedText } from './still-used.js';
import { verifyCredential } from './verify.js';

/**
 * The steps of one credential's rotation, each a function of the rotation (`Rotation`: its store, request, environment
 * and progress) that returns its result; rotate.ts runs them in order:
 *   (none) --claim--> claimed --anchor, mint, verify, replace--> replaced --revoke, confirm-revoked, finish--> (none)
 * Each reads and writes the credential only through its RotationStore, so each can be run against an in-memory store.
 */
export interface RotateRequest {
  /** NAMESPACE/NAME of hub Secrets; empty with `all`. */
  names: Array<{ namespace: string; name: string }>;
  /** Kubeconfig files creds generate wrote (--file). */
  files?: string[];
  all: boolean;
  /** With `all`: only the Secrets whose NAMESPACE/NAME falls in this shard (src/fleet/shard.ts). */
  shard?: Shard;
  expiringWithinMs?: number;
  /** Lifetime of the new credential; default the one recorded at generate (fleet.dev/credential-lifetime), else the old one's (lifetime.ts). */
  durationSeconds?: number;
  dryRun?: boolean;
  hub?: HubSpec;
  /** Resolves a cluster by name through fleet's providers (the old-style name annotation, --cluster). */
  cluster: (name: string) => Promise<ClusterRef>;
  /** Every cluster fleet's providers know: where the recorded cluster identity is looked for (cluster-identity.ts). */
  clusters?: () => Promise<ClusterRef[]>;
  /** --cluster: rotate on this cluster whatever the credential recorded (its cluster ID is still checked). */
  clusterOverride?: string;
  concurrency: number;
  /** Take a Lease per Secret (default true); tests turn it off to race two runs on the Secret's preconditions alone. */
  lease?: boolean;
  leaseWaitMs?: number;
}

export interface RotateEnv {
  /** The command's connector: the hub, the targets, the old and the new credential. */
  connector: Connector;
  /** The environment the hub is resolved in (KUBECONFIG, in-cluster variables); default the process's. */
  env?: NodeJS.ProcessEnv;
  /** Test hooks (failpoint, pause), read by the command from its environment once; none in production. */
  hooks?: RotationHooks;
  /** The command's interrupt (SIGINT/SIGTERM), honoured after each step (see afterInterrupt). */
  cancel?: Cancellation;
  /**
   * Told the count when the run starts and after each credential, each credential's step as it begins, and the wait
   * for the old token's 401 (the command draws a live line at a terminal, and an interrupt's acknowledgement names the
   * waits). Absent: nobody is told.
   */
  progress?: ProgressPort;
  /** Before a token Secret is deleted: --force and the user's kubeconfig files (still-used.ts); absent: no --force, the process's loading rules. */
  guard?: DeleteGuard;
}

export interface StepRecord {
  step: Step;
  ms: number;
  detail?: string;
}

/** The stable JSON shape of one credential's rotation (docs/rotation.md). */
export interface RotatedCredential {
  /** A hub Secret, or (`file`) a kubeconfig file creds generate wrote. */
  secret?: { hub: string; namespace: string; name: string; format?: string };
  file?: { path: string };
  cluster?: string;
  /** The cluster the new credential was minted on, and how it was found from what the credential recorded. */
  target?: { cluster: string; by: string };
  /** The server the new credential is written for, where it is minted and verified, and why they are one cluster. */
  destination?: HeldServer;
  method?: string;
  identity?: string;
  status: 'rotated' | 'failed' | 'skipped' | 'planned';
  reason?: string;
  /** The phase a previous, interrupted run left (this run finished it). */
  resumed?: string;
  old: { fingerprint?: string; expires?: string; anchor?: string };
  new?: { fingerprint?: string; expires?: string; anchor?: string };
  /** The new credential's lifetime: asked (--duration, else as recorded at generate) and issued (the server may cut it). */
  lifetime?: Lifetime;
  /**
   * `stillUsed`: who else still uses the old anchor's token (still-used.ts): it is kept unless --force (then deleted,
   * still named); `unchecked`: what could not be looked at before the deletion.
   */
  revoked?: { done: boolean; reason: string; stillUsed?: string[]; unchecked?: string[] };
  /** A failed item: where it stopped, what the store holds, and what the next run does with it. */
  unfinished?: Unfinished;
  verification: Check[];
  steps: StepRecord[];
  durationMs: number;
  error?: ErrorInfo;
}

export interface Unfinished {
  /** The step that failed or was interrupted (`lease`, `read`, `target`, a rotation step), and where it ran. */
  step: string;
  on: string;
  /**
   * What the store holds: `unchanged` (the old credential, no claim), `claimed` (the old one, this claim), `replaced` (the
   * new one), `unknown` (a write to it got no answer: it may or may not have been applied).
   */
  phase: 'unchanged' | Phase | 'unknown';
  /** What the next run does with it (docs/rotation.md, "What the CronJob says"). */
  next: string;
}

/** Where a credential's rotation is: the step in progress (or just done: `after <step>`), what its store holds, and the target once reached. */
export interface Track {
  step: string;
  phase: Exclude<Unfinished['phase'], 'unknown'>;
  /** The cluster this run reached before its claim: an interrupt deletes the new anchor there. */
  target?: KubeClient;
}

/** One credential's rotation: what every step is given. */
export interface Rotation {
  store: RotationStore;
  request: RotateRequest;
  env: RotateEnv;
  run: string;
  /** The store's lock (Lease or lock file) is this run's: a claim another run left is this run's to finish. */
  exclusive: boolean;
  /** Where the rotation is, kept up to date by the steps and read after a failure or an interrupt. */
  at: Track;
  /** The steps done, in order (the item's `steps`). */
  steps: StepRecord[];
  /**
   * Gives this credential's --concurrency place to the next one (rotate.ts's slots) when all that is left is waiting for
   * the old token's refusal, so those waits (the token cache's, up to 10 s) overlap instead of adding up.
   */
  giveSlot?: () => void;
}

export function newRotation(
  store: RotationStore,
  request: RotateRequest,
  env: RotateEnv,
  run: string,
  giveSlot?: () => void,
): Rotation {
  return { store, request, env, run, exclusive: false, at: tracked(env, store.where), steps: [], giveSlot };
}

/** What each step is doing, for the live line (`hub/ns/name: minting the new credential...`). */
const DOING: Record<string, string> = {
  lease: 'taking its rotation Lease',
  read: 'reading it',
  target: 'finding the cluster to mint on',
  inspect: 'asking who the credential is and what it may do',
  claim: 'claiming it',
  anchor: 'applying the new anchor',
  mint: 'minting the new credential',
  verify: 'verifying the new credential',
  replace: 'writing the new credential',
  'still-used': 'checking who else uses the old anchor',
  revoke: 'deleting the old anchor',
  'confirm-revoked': 'waiting for the old token to be refused',
  finish: 'finishing',
};

/**
 * The rotation's place, told to the progress port as each step begins (every `rot.at.step = ...`, the steps of rotate
 * and adopt alike); `after <step>` is the moment between two steps, not news.
 */
function tracked(env: RotateEnv, where: string): Track {
  let step = 'lease';
  return {
    phase: 'unchanged',
    get step() {
      return step;
    },
    set step(next: string) {
      step = next;
      const text = DOING[next];
      if (text) env.progress?.doing(where, text);
    },
  };
}

/** Without the Lease, a claim younger than this may belong to a live run. */
export const STALE_CLAIM_MS = 120_000;

export const fp = (hex: string | undefined) => (hex ? `sha256:${hex}` : undefined);
export const refText = (r: { namespace: string; name: string } | undefined) =>
  r ? `${r.namespace}/${r.name}` : undefined;

/**
 * Whose the held kubeconfig is: a file --file names is the user's; a hub Secret is hub data (fleet wrote it, but anyone
 * who may write the Secret could have changed it since), so its cluster entry may not name local files or plugins.
 */
export function storeOrigin(store: RotationStore): ContextOrigin | 'user' {
  return store.kind === 'file' ? 'user' : { object: store.where };
}

/**
 * Runs a step's work and records it (with the phase the store is in once the work is done, before anything can throw:
 * an interrupt honoured right after a store write must know what the store now holds); then the test hooks (failpoint,
 * pause) and the interrupt, in that order.
 */
export async function step<T>(
  rot: Rotation,
  name: Step,
  work: () => Promise<T>,
  detail?: (v: T) => string | undefined,
  phase?: Rotation['at']['phase'],
): Promise<T> {
  const t0 = Date.now();
  rot.at.step = name;
  const v = await work();
  if (phase) rot.at.phase = phase;
  rot.at.step = `after ${name}`;
  rot.steps.push({ step: name, ms: Date.now() - t0, ...(detail ? { detail: detail(v) } : {}) });
  failpoint(name, rot.env.hooks);
  await pausepoint(name, rot.env.hooks, rot.env.cancel?.signal);
  rot.env.cancel?.check();
  return v;
}

/** Reads the credential and its record from the store (refusing what fleet did not write). */
export async function readStored(rot: Rotation): Promise<Stored> {
  rot.env.cancel?.check();
  rot.at.step = 'read';
  return rot.store.read();
}

/** Finds the cluster to mint on from what the credential recorded; remembered for an interrupt. */
export async function findTarget(rot: Rotation, s: Stored): Promise<ResolvedTarget & { destination: Destination }> {
  rot.at.step = 'target';
  const found = await reachTarget(rot.request, s.recorded, rot.env, {
    what: rot.store.where,
    method: s.method,
    id: s.id,
    self: rot.store.self,
  });
  rot.at.target = found.client;
  return found;
}

/** What the run does with a credential before changing anything: leave it (not expiring), plan it (--dry-run), or rotate it. */
export type Decision = { status: 'skipped' | 'planned'; reason: string; needsTarget: boolean } | { status: 'rotate' };

export function decide(
  r: Pick<RotateRequest, 'expiringWithinMs' | 'dryRun'>,
  s: Stored,
  where: string,
  now = Date.now(),
): Decision {
  const state = s.state;
  if (state) {
    if (!r.dryRun) return { status: 'rotate' };
    return {
      status: 'planned',
      needsTarget: state.phase === 'claimed' || Boolean(state.oldAnchor),
      reason: `would finish the interrupted rotation (phase ${state.phase}, new anchor ${refText(state.newAnchor)})`,
    };
  }
  if (r.expiringWithinMs !== undefined) {
    const exp = Date.parse(s.old.expires ?? '');
    // A legacy token never expires ("never"): it is not expiring, so a scheduled --expiring-within leaves it.
    if (s.old.expires === 'never' || (!Number.isNaN(exp) && exp - now > r.expiringWithinMs)) {
      return {
        status: 'skipped',
        needsTarget: false,
        reason: `expires ${s.old.expires}, not within --expiring-within`,
      };
    }
  }
  if (!r.dryRun) return { status: 'rotate' };
  const reason =
    s.id.kind === 'User'
      ? `would issue a new client certificate for ${s.identity}, verify it, replace ${where}`
      : `would mint a ${s.method === 'token' ? 'token' : 'legacy token'} for ${s.identity} bound to a new anchor, verify it, replace ${where}, delete ${s.old.anchor ?? 'the old anchor'}`;
  return { status: 'planned', needsTarget: true, reason };
}

/** Step claim: the new anchor's name is recorded before it exists, so a re-run makes this same anchor, never a second. */
export async function claim(rot: Rotation, s: Stored): Promise<RotationState> {
  const { id, method } = s;
  const key = `${s.anchorKey}-${anchorSuffix()}`;
  const fresh: RotationState = {
    phase: 'claimed',
    newAnchor:
      id.kind === 'User'
        ? undefined
        : {
            namespace: id.namespace,
            name: method === 'token' ? anchorName(id.name, key) : legacySecretName(id.name, key),
          },
    oldAnchor: namespacedName(s.old.anchor),
    run: rot.run,
    started: new Date().toISOString(),
  };
  await step(
    rot,
    'claim',
    async () => {
      try {
        await rot.store.claim(fresh);
      } catch (error) {
        if (error instanceof Conflict) {
          throw new FleetError(
            'server',
            `${rot.store.where} was changed by someone else while this run claimed it (another rotation?); nothing was minted, the credential in it is unchanged`,
          );
        }
        throw error;
      }
    },
    undefined,
    'claimed',
  );
  return fresh;
}

/**
 * A claim left by another run: with the Lease (or lock) held, that run is gone (dead or hung past its Lease) and this
 * one finishes its rotation. Without the Lease, a recent claim may be a live run: it is left alone (nothing minted here).
 */
export function takeOver(rot: Rotation, state: RotationState, now = Date.now()): RotationState {
  if (state.run !== rot.run && !rot.exclusive && now - Date.parse(state.started) < STALE_CLAIM_MS) {
    throw new FleetError(
      'server',
      `${rot.store.where}: a rotation by run ${state.run} started ${state.started} is in progress; nothing was minted, the credential in it is unchanged`,
    );
  }
  rot.at.phase = state.phase;
  return state;
}

/** A new credential, not yet written anywhere. */
export interface Minted {
  issued: Issued;
  /** The lifetime asked for, in seconds. */
  seconds: number;
  /** What the server issued against what was asked (absent for a legacy token, which has no lifetime). */
  lifetime?: Lifetime;
  /** The store's kubeconfig with the new user. */
  kubeconfig: string;
}

/**
 * Steps anchor and mint: the new anchor (the name the claim recorded) and a token bound to it, or a legacy token
 * Secret; or a client certificate, which hangs on nothing (its key is made here, the CSR approved, then deleted).
 */
export async function mint(rot: Rotation, s: Stored, claimed: RotationState, target: KubeClient): Promise<Minted> {
  const { id, method, held } = s;
  const annotations = rot.store.anchorAnnotations();
  // The same lifetime as at generate (asked again, so a server's cut is not compounded and a raised maximum is used).
  const seconds = lifetimeToAsk(rot.request.durationSeconds, s.lifetime, held.user);
  let issued: Issued;
  if (id.kind === 'ServiceAccount') {
    const sa = id;
    const obj =
      method === 'token'
        ? anchorObject(sa, claimed.newAnchor!.name, annotations)
        : legacyTokenObject(sa, claimed.newAnchor!.name, annotations);
    const anchor = await step(
      rot,
      'anchor',
      () => applyObject<KubeObject>(target, obj, { force: true }),
      (a) => `Secret ${a.metadata.namespace}/${a.metadata.name}`,
    );
    issued = await step(
      rot,
      'mint',
      () =>
        method === 'token'
          ? issueBoundToken(target, sa, { name: anchor.metadata.name, uid: anchor.metadata.uid! }, seconds)
          : awaitLegacyToken(target, sa.namespace, anchor.metadata.name),
      (i) => (i.expires ? `expires ${i.expires}` : 'never expires'),
    );
  } else {
    const user = id;
    const log = new ApplyLog();
    issued = await step(
      rot,
      'mint',
      async () => {
        const i = await issueClientCert(target, user, seconds, log, annotations);
        if (i.csr) await deleteObject(target, CERTIFICATE_SIGNING_REQUEST, i.csr).catch(() => undefined);
        return i;
      },
      (i) => `certificate valid until ${i.expires}`,
    );
  }
  const kubeconfig = buildKubeconfig({
    name: held.names.cluster,
    userName: held.names.user,
    cluster: held.cluster,
    user: issued.user,
    namespace: held.names.namespace,
  });
  return {
    issued,
    seconds,
    kubeconfig,
    ...(method !== 'legacy-token' ? { lifetime: lifetimeOf(seconds, issued.user) } : {}),
  };
}

/** Step verify: the new credential, connected to its cluster's destination, is who it should be and may what the grant says. */
export async function verify(
  rot: Rotation,
  s: Stored,
  minted: Minted,
  grant: { rules: PolicyRule[]; namespaces: string[] },
  destination: Destination,
): Promise<Check[]> {
  // To the cluster it was minted on, as the operator's configuration reaches it: never the server, CA or proxy of the
  // store's cluster entry (checkHeldServer proved that entry reaches the same cluster, without a credential).
  const fresh = await rot.env.connector.withCredential(destination, minted.issued.user, 'the new credential');
  return step(
    rot,
    'verify',
    () => verifyCredential(fresh, { username: s.identity, rules: grant.rules, namespaces: grant.namespaces }),
    (c) => c.map((x) => `${x.name} ${x.status}`).join(', '),
  );
}

/**
 * A new credential that failed verification: nothing was written, the old credential stays; the new anchor (and every
 * token bound to it) goes, and the claim is lifted. Throws what failed.
 */
export async function abandon(
  rot: Rotation,
  claimed: RotationState,
  target: KubeClient,
  checks: Check[],
): Promise<never> {
  if (claimed.newAnchor)
    await deleteObject(target, SECRET, claimed.newAnchor.name, { namespace: claimed.newAnchor.namespace });
  rot.at.phase = (await rot.store.release(claimed).then(
    () => true,
    () => false,
  ))
    ? 'unchanged'
    : 'claimed';
  const failed = checks.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.message}`);
  throw new FleetError(
    'server',
    `${rot.store.where}: the new credential failed verification (${failed.join('; ')}); the old one is unchanged and its anchor deleted`,
  );
}

export const verified = (checks: Check[]) => worstStatus(checks) !== 'fail';

/** The store was written by someone else before this run's replace: re-read, not overwritten; `revoked` says what became of this run's credential. */
export class ReplaceConflict extends FleetError {
  constructor(
    where: string,
    readonly revoked?: { done: boolean; reason: string },
  ) {
    super('server', `${where} changed while this run rotated it; re-read, not overwritten`);
  }
}

/** Step replace: the store gets the new credential, only if it is still as this run claimed it. */
export async function replace(
  rot: Rotation,
  claimed: RotationState,
  minted: Minted,
  target: KubeClient,
  identity?: ClusterIdentityFacts,
): Promise<RotationState> {
  const replaced: RotationState = { ...claimed, phase: 'replaced' };
  const newAnchor = refText(claimed.newAnchor);
  const { issued } = minted;
  try {
    await step(
      rot,
      'replace',
      () =>
        rot.store.replace(
          {
            kubeconfig: minted.kubeconfig,
            user: issued.user,
            expires: issued.expires,
            anchor: newAnchor,
            lifetimeSeconds: minted.lifetime ? minted.seconds : undefined,
            identity,
          },
          replaced,
        ),
      undefined,
      'replaced',
    );
  } catch (error) {
    if (!(error instanceof Conflict)) throw error;
    // Someone else wrote the store: re-read it. If it does not hold this run's anchor, this run lost: its credential is revoked.
    const now = await rot.store.current();
    const holds = now && newAnchor && now.anchor === newAnchor;
    if (!holds && claimed.newAnchor) {
      await deleteObject(target, SECRET, claimed.newAnchor.name, { namespace: claimed.newAnchor.namespace });
      throw new ReplaceConflict(rot.store.where, {
        done: true,
        reason: `this run's new credential (anchor ${newAnchor}) was revoked: ${rot.store.where} was changed by another writer first`,
      });
    }
    throw new ReplaceConflict(rot.store.where);
  }
  return replaced;
}

/**
 * Steps revoke and confirm-revoked: the old anchor deleted, and the old token (when this run still has it) proved
 * refused. A client certificate cannot be revoked: said, with until when it stays valid.
 */
export async function revokeOld(
  rot: Rotation,
  s: Stored,
  o: { state: RotationState; target?: KubeClient; oldClient?: KubeClient; oldExpires?: string },
): Promise<NonNullable<RotatedCredential['revoked']>> {
  const old = o.state.oldAnchor;
  if (s.method === 'client-cert') {
    const until = certNotAfter(s.held.user) ?? o.oldExpires;
    return {
      done: false,
      reason: `a client certificate cannot be revoked: the old one stays valid until ${until} (its NotAfter)`,
    };
  }
  if (!old || !o.target)
    return {
      done: false,
      reason: 'the old credential named no anchor: nothing to delete (it stays valid until it expires)',
    };
  const target = o.target;
  // A fleet-made anchor is fleet's, but its token may have been copied: the operator's own kubeconfig, another hub
  // Secret, a workload mounting a legacy token Secret keep it (still-used.ts), unless --force.
  rot.at.step = 'still-used';
  const member = target.context.contextName;
  // Only a claim this run made still has the old token in hand (after an interrupted run's replace it is gone).
  const used = await anchorStillUsed(rot, s, old, target, o.oldClient ? s.held.user.token : undefined);
  const noted = {
    ...(used.users.length > 0 ? { stillUsed: used.users } : {}),
    ...(used.unchecked.length > 0 ? { unchecked: used.unchecked } : {}),
  };
  const what = `the old anchor Secret ${refText(old)} on ${member}`;
  if (used.users.length > 0 && !rot.env.guard?.force)
    return {
      done: false,
      ...noted,
      reason: `kept: ${usedText(what, used, false)} (the old token stays valid until it expires; once nothing uses it, delete it yourself: kubectl delete secret ${old.name} -n ${old.namespace})`,
    };
  const overrode = used.users.length > 0 ? `; ${usedText(what, used, true)}` : '';
  await step(
    rot,
    'revoke',
    () => deleteObject(target, SECRET, old.name, { namespace: old.namespace }),
    () => `deleted anchor Secret ${old.namespace}/${old.name}`,
  );
  if (!o.oldClient)
    return {
      done: true,
      ...noted,
      reason: `anchor ${refText(old)} deleted (the old token was replaced by an earlier, interrupted run, so it could not be probed here)${overrode}`,
    };
  const oldClient = o.oldClient;
  rot.giveSlot?.();
  const dead = await step(
    rot,
    'confirm-revoked',
    () =>
      confirmRefused(rot.env.progress, oldClient, {
        text: `${rot.store.where}: waiting for the API server to refuse the old token`,
        finishing: `the rotation of ${rot.store.where} (its new credential is in place and its old anchor deleted; waiting for the API server to refuse the old token)`,
        leaves: `${rot.store.where} holding the new credential, its rotation for the next run to finish`,
      }),
    (d) => (d ? 'the old token is refused (401)' : 'the old token still authenticates'),
  );
  return dead
    ? { done: true, ...noted, reason: `anchor ${refText(old)} deleted; the old token is refused${overrode}` }
    : {
        done: false,
        ...noted,
        reason: `anchor ${refText(old)} deleted, but the old token still authenticated after 30s${overrode}`,
      };
}

/** still-used.ts for an old anchor on `target`: the store being rotated is not another holder of its token. */
export async function anchorStillUsed(
  rot: Rotation,
  s: Stored,
  old: { namespace: string; name: string },
  target: KubeClient,
  token: string | undefined,
) {
  const hub = rot.store.hubClient;
  return stillUsed(
    {
      secret: old,
      member: target,
      memberName: target.context.contextName,
      tokens: [token],
      // A bound token's anchor holds no token and fleet named it; a legacy token Secret is mounted like any other.
      workloads: s.method === 'legacy-token',
      hub: hub
        ? { client: hub, name: hub.context.contextName }
        : { none: 'a rotation of --file credentials connects to no hub' },
      clusters: rot.request.clusters,
      self:
        rot.store.kind === 'secret'
          ? { hubSecret: rot.store.self }
          : { file: { paths: [rot.store.where], user: s.held.names.user } },
    },
    rot.env.guard,
  );
}

/** Step finish: the rotation state cleared; the credential stays. */
export async function finish(rot: Rotation): Promise<void> {
  await step(rot, 'finish', () => rot.store.finish(), undefined, 'unchanged');
}

/** What a credential on the target must be allowed to mint a new one for `id` by `method` (one rule: rotate and adopt). */
export function mintPermission(id: Identity, method: Method) {
  return id.kind === 'User'
    ? { verb: 'create', group: 'certificates.k8s.io', resource: 'certificatesigningrequests', namespace: '' }
    : method === 'token'
      ? { verb: 'create', group: '', resource: 'serviceaccounts', subresource: 'token', namespace: id.namespace }
      : { verb: 'create', group: '', resource: 'secrets', namespace: id.namespace };
}

/**
 * The cluster a credential's new one is minted on, found from what it recorded (cluster-identity.ts) among the clusters
 * fleet knows, with a credential that may mint (TokenRequest, a legacy token Secret, or a CSR).
 */
export async function reachTarget(
  r: RotateRequest,
  rec: RecordedCluster,
  env: RotateEnv,
  o: { what: string; method: Method; id?: Identity; self?: { namespace: string; name: string } },
): Promise<ResolvedTarget & { destination: Destination }> {
  // No identity yet (creds adopt asks the member whose the held token is): the cluster must answer a TokenReview.
  const need = o.id
    ? mintPermission(o.id, o.method)
    : { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews', namespace: '' };
  const found = await resolveCredentialCluster(rec, {
    override: r.clusterOverride,
    clusters: { get: r.cluster, list: r.clusters ?? (async () => []) },
    connect: (ref) => env.connector.cluster(ref),
    mayMint: async (client) => (await accessReview(client, { resource: need })).allowed,
    exclude: (ref) =>
      Boolean(
        o.self &&
        ref.source.kind === 'secret' &&
        ref.source.namespace === o.self.namespace &&
        ref.source.name === o.self.name,
      ),
    what: o.what,
  });
  // Where whatever is minted there goes: the target's server, CA and proxy as the operator's configuration holds them.
  return { ...found, destination: await env.connector.destination(found.ref) };
}

/**
 * confirmDead as a wait the user is shown (the live line, with how long it usually takes: the API server's token cache)
 * and an interrupt's acknowledgement names; `timeoutMs` is its limit (30 s).
 */
export async function confirmRefused(
  progress: ProgressPort | undefined,
  client: KubeClient,
  w: { text: string; finishing: string; leaves: string },
  timeoutMs = 30_000,
): Promise<boolean> {
  const now = Date.now();
  const end = progress?.wait({
    text: `${w.text} (up to ${Math.round(timeoutMs / 1000)}s)`,
    deadline: now + timeoutMs,
    usually: now + TOKEN_REFUSED_USUALLY_WITHIN_MS,
    finishing: w.finishing,
    leaves: w.leaves,
  });
  try {
    return await confirmDead(client, timeoutMs);
  } finally {
    end?.();
  }
}

/** How long the server may stay silent while the old credential's refusal is being confirmed. */
const SILENT_CONFIRM_MS = 5_000;

/**
 * Polls SelfSubjectReview (alone: its status is the verdict) with the old credential until the server refuses it (401). A server that stops answering
 * (killed, restarting, its etcd stalled) is not a token that "still authenticates": after SILENT_CONFIRM_MS without an
 * answer its error is thrown, so the item says the outage and the next run finishes it.
 */
export async function confirmDead(client: KubeClient, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let silentSince: number | undefined;
  let wait = 250;
  for (;;) {
    try {
      await selfSubjectReview(client);
      silentSince = undefined;
    } catch (error) {
      if (error instanceof FleetError && error.kind === 'unauthorized') return true;
      const silent =
        error instanceof FleetError &&
        (error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server');
      if (!silent) silentSince = undefined;
      else if ((silentSince ??= Date.now()) + SILENT_CONFIRM_MS < Date.now() || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) return false;
    // The token cache holds an authenticated token up to 10 s: polled at 250 ms, then less often (up to every 2 s), so
    // hundreds of rotations waiting at once do not load the member with reviews.
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(2000, wait * 2);
  }
}

/**
 * After an interrupt: a claim this run made whose store was not replaced yet is lifted (the new anchor, and every token
 * bound to it, deleted first), so the store is as before the run; one already replaced is left for the next run,
 * which finishes the rotation (the state machine in rotation-state.ts). Says which of these happened.
 */
export async function afterInterrupt(rot: Rotation): Promise<string> {
  const { store, env, run } = rot;
  env.cancel?.undoing(() => [`the rotation claim on ${store.where} (the next run finishes or lifts it)`]);
  const st = (await store.current())?.state;
  const kept = store.kind === 'secret' ? 'Secret' : 'file';
  // The whole rotation was done when the signal was honoured (after its last step): nothing to undo, nothing to finish.
  if (rotationFinished(rot))
    return `after the rotation finished: the ${kept} holds the new credential and nothing is left to do`;
  // Replaced, by this run or by an interrupted one this run was finishing: the next run finishes it.
  if (st?.phase === 'replaced')
    return `after the ${kept} got the new credential: the next run finishes the rotation (${oldAnchorFate(rot)})`;
  if (!st || st.run !== run) return 'before this run changed anything: the credential is unchanged';
  if (st.newAnchor) {
    // This run claimed only after it had reached the target, so the target is known here.
    if (!rot.at.target) throw new FleetError('internal', 'the target cluster of this claim was never reached');
    await deleteObject(rot.at.target, SECRET, st.newAnchor.name, { namespace: st.newAnchor.namespace });
  }
  await store.release(st);
  rot.at.phase = 'unchanged';
  return 'before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted';
}

/** What the next run does with the old anchor: this run may have deleted it already (step revoke). */
function oldAnchorFate(rot: Pick<Rotation, 'steps'>): string {
  return rot.steps.some((s) => s.step === 'revoke') ? 'the old anchor is deleted already' : 'deletes the old anchor';
}

/** Whether this run did the rotation's last step (the store holds the new credential and no rotation state). */
export function rotationFinished(rot: Pick<Rotation, 'steps'>): boolean {
  return rot.steps.some((s) => s.step === 'finish');
}

/** The store's writes: one that got no answer may have been applied or not. */
const STORE_WRITES = new Set(['claim', 'replace', 'finish']);

/** Steps that run on the hub (or the file); the others on the credential's cluster. */
const STORE_STEPS = new Set(['lease', 'read', 'claim', 'replace', 'finish']);

/**
 * What a failed item left and what the next run does with it, from what this run last saw of its store (not re-read:
 * the hub may be the part that failed). A claim this run made and could not lift is taken over by the next run once
 * the Lease has expired (15 s), or after 2 minutes without Leases.
 */
export function unfinished(
  rot: Pick<Rotation, 'store' | 'at' | 'steps'>,
  item: Pick<RotatedCredential, 'target' | 'cluster'>,
  error: unknown,
): Unfinished {
  const { store, at: track } = rot;
  const bare = track.step.replace(/^after /, '');
  const on = STORE_STEPS.has(bare)
    ? store.kind === 'file'
      ? 'the file'
      : 'the hub'
    : (item.target?.cluster ?? item.cluster ?? 'its cluster');
  const kept = store.kind === 'file' ? 'the file' : 'the Secret';
  const silent =
    error instanceof FleetError &&
    (error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server');
  if (silent && STORE_WRITES.has(track.step)) {
    const next = `the hub did not answer this run's ${track.step} of ${kept}, which may or may not have been applied; ${kept} holds a working credential either way and the next run reads which and finishes the rotation`;
    return { step: track.step, on, phase: 'unknown', next };
  }
  const next =
    track.phase === 'replaced'
      ? `${kept} holds the new credential; the next run finishes it (${oldAnchorFate(rot)})`
      : track.phase === 'claimed'
        ? `the old credential is in place, claimed by this run; the next run takes the claim over (the same new anchor) and rotates it`
        : 'the old credential is in place and unchanged; the next run rotates it';
  return { step: track.step, on, phase: track.phase, next };
}
