import {resolve} from 'node:path'

import {accessReview} from '../access/access-review.js'
import {selfSubjectReview} from '../access/whoami.js'
import {type Check, worstStatus} from '../base/checks.js'
import type {Cancellation} from '../base/cancel.js'
import {type ErrorInfo, FleetError, toErrorInfo} from '../base/errors.js'
import {namespacedName} from '../base/names.js'
import type {HubSpec} from '../config/fleet-config.js'
import type {KubeClient} from '../kube/client.js'
import type {Connector} from '../kube/connector.js'
import {type Shard, inShard} from '../fleet/shard.js'
import type {Progress} from '../fleet/runner.js'
import {contextFromKubeconfigText} from '../kubeconfig/from-text.js'
import type {Secret} from '../providers/hub/objects.js'
import type {ClusterRef} from '../providers/types.js'
import {type RecordedCluster, type ResolvedTarget, identityFacts, resolveCredentialCluster} from './cluster-identity.js'
import {ApplyLog, type KubeObject, applyObject, deleteObject} from './kube-objects.js'
import {buildKubeconfig, kubeconfigSha256} from './kubeconfig-out.js'
import {ANNOTATIONS, MANAGED_BY, MANAGED_BY_LABEL} from './labels.js'
import {type Lifetime, lifetimeOf, lifetimeToAsk} from './lifetime.js'
import {type Issued, type Method, anchorName, anchorObject, awaitLegacyToken, issueBoundToken, issueClientCert, legacySecretName, legacyTokenObject} from './methods.js'
import type {Identity} from './rbac.js'
import {type Phase, type RotationState, type Step, anchorSuffix, failpoint, newRunId, pausepoint} from './rotation-state.js'
import {Conflict, FileStore, NotFleetsError, type RotationStore, SecretStore, certNotAfter} from './rotation-store.js'
import {type LeaseSweep, sweepLeases} from './lease.js'
import {verifyCredential} from './verify.js'
import type {ContextOrigin} from '../kubeconfig/trust.js'

/**
 * Whose the held kubeconfig is: a file --file names is the user's; a hub Secret is hub data (fleet wrote it, but anyone
 * who may write the Secret could have changed it since), so its cluster entry may not name local files or plugins.
 */
function storeOrigin(store: RotationStore): ContextOrigin | 'user' {
  return store instanceof FileStore ? 'user' : {object: store.where}
}

/**
 * `fleet creds rotate`: replaces the credential in a fleet-managed hub Secret, or a kubeconfig file creds generate wrote,
 * with a new one of the same method, identity and scope, proved before it is written, and revokes the old one. At every
 * instant the store holds a credential that works: the new one is written only once verified, the old one is revoked
 * only once replaced. Progress is recorded in the store (rotation-state.ts) so a killed run is finished by the next, and
 * every write is conditional (a Secret's resourceVersion; a file's lock), so a concurrent change is re-read, never
 * overwritten. The steps are written once here; rotation-store.ts says how each store reads and writes.
 */
export interface RotateRequest {
  /** NAMESPACE/NAME of hub Secrets; empty with `all`. */
  names: Array<{namespace: string; name: string}>
  /** Kubeconfig files creds generate wrote (--file). */
  files?: string[]
  all: boolean
  /** With `all`: only the Secrets whose NAMESPACE/NAME falls in this shard (src/fleet/shard.ts). */
  shard?: Shard
  expiringWithinMs?: number
  /** Lifetime of the new credential; default the one recorded at generate (fleet.dev/credential-lifetime), else the old one's (lifetime.ts). */
  durationSeconds?: number
  dryRun?: boolean
  hub?: HubSpec
  /** Resolves a cluster by name through fleet's providers (the old-style name annotation, --cluster). */
  cluster: (name: string) => Promise<ClusterRef>
  /** Every cluster fleet's providers know: where the recorded cluster identity is looked for (cluster-identity.ts). */
  clusters?: () => Promise<ClusterRef[]>
  /** --cluster: rotate on this cluster whatever the credential recorded (its cluster ID is still checked). */
  clusterOverride?: string
  concurrency: number
  /** Take a Lease per Secret (default true); tests turn it off to race two runs on the Secret's preconditions alone. */
  lease?: boolean
  leaseWaitMs?: number
}

export interface RotateEnv {
  /** The command's connector: the hub, the targets, the old and the new credential. */
  connector: Connector
  env?: NodeJS.ProcessEnv
  /** The command's interrupt (SIGINT/SIGTERM), honoured after each step (see afterInterrupt). */
  cancel?: Cancellation
  /** Told when the run starts and after each credential (the command draws a progress line at a terminal). */
  onProgress?: (progress: Progress) => void
}

export interface StepRecord {
  step: Step
  ms: number
  detail?: string
}

/** The stable JSON shape of one credential's rotation (docs/rotation.md). */
export interface RotatedCredential {
  /** A hub Secret, or (`file`) a kubeconfig file creds generate wrote. */
  secret?: {hub: string; namespace: string; name: string; format?: string}
  file?: {path: string}
  cluster?: string
  /** The cluster the new credential was minted on, and how it was found from what the credential recorded. */
  target?: {cluster: string; by: string}
  method?: string
  identity?: string
  status: 'rotated' | 'failed' | 'skipped' | 'planned'
  reason?: string
  /** The phase a previous, interrupted run left (this run finished it). */
  resumed?: string
  old: {fingerprint?: string; expires?: string; anchor?: string}
  new?: {fingerprint?: string; expires?: string; anchor?: string}
  /** The new credential's lifetime: asked (--duration, else as recorded at generate) and issued (the server may cut it). */
  lifetime?: Lifetime
  revoked?: {done: boolean; reason: string}
  /** A failed item: where it stopped, what the store holds, and what the next run does with it. */
  unfinished?: Unfinished
  verification: Check[]
  steps: StepRecord[]
  durationMs: number
  error?: ErrorInfo
}

export interface Unfinished {
  /** The step that failed or was interrupted (`lease`, `read`, `target`, a rotation step), and where it ran. */
  step: string
  on: string
  /**
   * What the store holds: `unchanged` (the old credential, no claim), `claimed` (the old one, this claim), `replaced` (the
   * new one), `unknown` (a write to it got no answer: it may or may not have been applied).
   */
  phase: 'unchanged' | Phase | 'unknown'
  /** What the next run does with it (docs/rotation.md, "What the CronJob says"). */
  next: string
}

export interface RotationReport {
  kind: 'CredentialRotation'
  dryRun: boolean
  hub: string
  /** A sharded --all run: its part, and how many Secrets --all found in all (the items are this part's). */
  shard?: Shard & {selected: number}
  items: RotatedCredential[]
  /** Leases on the hub that stopped runs left behind over this run's selection, removed after the rotations. */
  leases?: LeaseSweep
}

/** Without the Lease, a claim younger than this may belong to a live run. */
const STALE_CLAIM_MS = 120_000

const fp = (hex: string | undefined) => (hex ? `sha256:${hex}` : undefined)
const refText = (r: {namespace: string; name: string} | undefined) => (r ? `${r.namespace}/${r.name}` : undefined)

/** Secrets `--all` considers: every hub Secret fleet manages that holds a consumer credential (it has a format). */
async function fleetSecrets(hub: KubeClient): Promise<Secret[]> {
  const {items} = await hub.json<{items: Secret[]}>('GET', `/api/v1/secrets?labelSelector=${encodeURIComponent(`${MANAGED_BY_LABEL}=${MANAGED_BY}`)}`, undefined, 'list Secrets')
  const a = (s: Secret) => (s.metadata as {annotations?: Record<string, string>}).annotations ?? {}
  return items.filter((s) => a(s)[ANNOTATIONS.format] && a(s)[ANNOTATIONS.method])
}

export async function rotateCredentials(r: RotateRequest, env: RotateEnv): Promise<RotationReport> {
  const run = newRunId()
  const files = (r.files ?? []).map((path) => new FileStore(resolve(path)))
  const hub = r.all || r.names.length > 0 ? await env.connector.hub(r.hub, env.env) : undefined
  const named = hub ? r.names.map((t) => new SecretStore(hub, t)) : []
  // A named Secret or file fleet did not write refuses the whole run before anything is rotated (exit 2, one line), as
  // creds revoke does; any other problem reading one stays that credential's failure, found again under its lock.
  for (const store of [...files, ...named]) {
    await store.read().catch((error: unknown) => {
      if (error instanceof NotFleetsError) throw error
    })
  }
  // What is rotated is known before the first rotation, so a progress line counts all of it (files, then Secrets).
  let targets: Array<{namespace: string; name: string}> = r.names
  let shard: RotationReport['shard']
  let all: Array<{namespace: string; name: string}> | undefined
  if (hub && r.all) {
    targets = all = (await fleetSecrets(hub)).map((s) => ({namespace: s.metadata.namespace ?? 'default', name: s.metadata.name}))
    if (r.shard) {
      shard = {...r.shard, selected: targets.length}
      targets = targets.filter((t) => inShard(`${t.namespace}/${t.name}`, r.shard))
    }
  }
  const stores = hub && r.all ? targets.map((t) => new SecretStore(hub, t)) : named
  const progress = {done: 0, total: files.length + stores.length, failed: 0}
  const counted = (item: RotatedCredential) => {
    progress.done++
    if (item.status === 'failed') progress.failed++
    env.onProgress?.({...progress})
    return item
  }
  env.onProgress?.({...progress})
  const fileItems: RotatedCredential[] = []
  for (const store of files) fileItems.push(counted(await rotateOne(store, {file: {path: store.where}}, r, env, run)))
  if (!hub) return {kind: 'CredentialRotation', dryRun: Boolean(r.dryRun), hub: '', items: fileItems}
  const hubName = hub.context.contextName
  const gate = slots(Math.max(1, r.concurrency))
  const items = await Promise.all(
    stores.map(async (store) => {
      await gate.take()
      let held = true
      const give = () => {
        if (held) gate.give()
        held = false
      }
      try {
        return counted(await rotateOne(store, {secret: {hub: hubName, ...store.self}}, r, env, run, give))
      } finally {
        give()
      }
    }),
  )
  // After the rotations (a killed run's Leases have expired by then): over the whole selection, skipped Secrets included;
  // with --all, also the Leases of Secrets that are gone (by one shard only, the first, so two shards never race for them).
  const leases = r.dryRun || env.cancel?.interrupted
    ? undefined
    : await sweepLeases(hub, targets, run, {orphansOf: all && (!r.shard || r.shard.index === 0) ? all : undefined})
  return {kind: 'CredentialRotation', dryRun: Boolean(r.dryRun), hub: hubName, ...(shard ? {shard} : {}), items: [...fileItems, ...items], ...(leases ? {leases} : {})}
}

/**
 * --concurrency places: at most that many credentials in their working steps at once. A credential that only waits for
 * its old token to be refused (confirm-revoked: the API server's token cache keeps a token it authenticated for up to
 * 10 s after its anchor is deleted) gives its place to the next, so those waits overlap instead of adding up.
 */
function slots(limit: number): {take: () => Promise<void>; give: () => void} {
  let free = limit
  const waiting: Array<() => void> = []
  return {
    take: () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((r) => waiting.push(r))),
    give: () => {
      const next = waiting.shift()
      if (next) next()
      else free++
    },
  }
}

/** One credential, whichever store keeps it: locked, rotated, and on an interrupt put back or left for the next run. */
async function rotateOne(store: RotationStore, at: Pick<RotatedCredential, 'secret' | 'file'>, r: RotateRequest, env: RotateEnv, run: string, giveSlot?: () => void): Promise<RotatedCredential> {
  const started = Date.now()
  const item: RotatedCredential = {...at, status: 'failed', old: {}, verification: [], steps: [], durationMs: 0}
  let lock: {exclusive: boolean; release: () => Promise<void>} | undefined
  // The target this run reached (before its claim): an interrupt deletes the new anchor there.
  const reachedTarget: {client?: KubeClient} = {}
  const track: Track = {step: 'lease', phase: 'unchanged'}
  try {
    if (!r.dryRun) lock = await store.lock(run, {lease: r.lease !== false, waitMs: r.leaseWaitMs ?? 60_000})
    await rotateLocked(store, r, env, run, item, Boolean(lock?.exclusive), reachedTarget, track, giveSlot)
  } catch (error) {
    item.status = 'failed'
    if (env.cancel?.interrupted) {
      const what = await afterInterrupt(store, env, run, reachedTarget.client, track).catch((e: Error) => `and its claim could not be lifted (${e.message}): the next run finishes it`)
      error = env.cancel.error(what)
    }
    item.error = toErrorInfo(error)
    item.reason ??= item.error.message
    if (!r.dryRun) item.unfinished = unfinished(store, item, track, error)
  } finally {
    await lock?.release().catch(() => undefined)
    item.durationMs = Date.now() - started
  }
  return item
}

/**
 * The steps, written once for every store (rotation-state.ts draws them):
 *   (none) --claim--> claimed --anchor, mint, verify, replace--> replaced --revoke, confirm-revoked, finish--> (none)
 */
async function rotateLocked(
  store: RotationStore,
  r: RotateRequest,
  env: RotateEnv,
  run: string,
  item: RotatedCredential,
  exclusive: boolean,
  reachedTarget: {client?: KubeClient},
  track: Track,
  giveSlot?: () => void,
): Promise<void> {
  env.cancel?.check()
  const where = store.where
  track.step = 'read'
  const s = await store.read()
  if (item.secret) item.secret.format = s.format
  item.cluster = s.clusterName
  item.method = s.method
  item.identity = s.identity
  item.old = s.old
  const {method, id, held} = s
  let state = s.state
  // The cluster is found before the claim (and by --dry-run, which then says where it would mint).
  const findTarget = async () => {
    track.step = 'target'
    const found = await reachTarget(r, s.recorded, env, {what: where, method, id, self: store.self})
    item.target = {cluster: found.ref.name, by: found.by}
    reachedTarget.client = found.client
    return found
  }

  if (!state) {
    if (r.expiringWithinMs !== undefined) {
      const exp = Date.parse(item.old.expires ?? '')
      // A legacy token never expires ("never"): it is not expiring, so a scheduled --expiring-within leaves it.
      if (item.old.expires === 'never' || (!Number.isNaN(exp) && exp - Date.now() > r.expiringWithinMs)) {
        item.status = 'skipped'
        item.reason = `expires ${item.old.expires}, not within --expiring-within`
        return
      }
    }
    if (r.dryRun) {
      await findTarget()
      item.status = 'planned'
      item.reason = id.kind === 'User'
        ? `would issue a new client certificate for ${item.identity}, verify it, replace ${where}`
        : `would mint a ${method === 'token' ? 'token' : 'legacy token'} for ${item.identity} bound to a new anchor, verify it, replace ${where}, delete ${item.old.anchor ?? 'the old anchor'}`
      return
    }
  } else if (r.dryRun) {
    if (state.phase === 'claimed' || state.oldAnchor) await findTarget()
    item.status = 'planned'
    item.reason = `would finish the interrupted rotation (phase ${state.phase}, new anchor ${refText(state.newAnchor)})`
    return
  }

  const timed = async <T>(step: Step, work: () => Promise<T>, detail?: (v: T) => string | undefined): Promise<T> => {
    const t0 = Date.now()
    track.step = step
    const v = await work()
    track.step = `after ${step}`
    item.steps.push({step, ms: Date.now() - t0, ...(detail ? {detail: detail(v)} : {})})
    failpoint(step, env.env)
    await pausepoint(step, env.env, env.cancel?.signal)
    env.cancel?.check()
    return v
  }

  // The cluster is found before the claim: a resolution failure leaves the store as it was (no claim behind).
  const needsTarget = !state || state.phase === 'claimed' || Boolean(state.oldAnchor)
  const reached = needsTarget ? await findTarget() : undefined

  // Step 1: claim. The new anchor's name is recorded before it exists, so a re-run makes this same anchor, never a second.
  if (!state) {
    const key = `${s.anchorKey}-${anchorSuffix()}`
    const fresh: RotationState = {
      phase: 'claimed',
      newAnchor: id.kind === 'User' ? undefined : {namespace: id.namespace, name: method === 'token' ? anchorName(id.name, key) : legacySecretName(id.name, key)},
      oldAnchor: namespacedName(item.old.anchor),
      run,
      started: new Date().toISOString(),
    }
    await timed('claim', async () => {
      try {
        await store.claim(fresh)
      } catch (error) {
        if (error instanceof Conflict) {
          throw new FleetError('server', `${where} was changed by someone else while this run claimed it (another rotation?); nothing was minted, the credential in it is unchanged`)
        }
        throw error
      }
    })
    state = fresh
    track.phase = 'claimed'
  } else {
    // A claim left by another run: with the Lease (or lock) held, that run is gone (dead or hung past its Lease) and this
    // one finishes its rotation. Without the Lease, a recent claim may be a live run: leave it alone (nothing minted here).
    if (state.run !== run && !exclusive && Date.now() - Date.parse(state.started) < STALE_CLAIM_MS) {
      throw new FleetError('server', `${where}: a rotation by run ${state.run} started ${state.started} is in progress; nothing was minted, the credential in it is unchanged`)
    }
    item.resumed = state.phase
    track.phase = state.phase
    if (state.phase === 'replaced') item.old = {anchor: refText(state.oldAnchor)}
  }

  const target = state.phase === 'claimed' || state.oldAnchor ? reached?.client : undefined
  let oldClient: KubeClient | undefined
  if (state.phase === 'claimed') {
    // The old credential is still the store's: kept to prove later that it stopped working.
    oldClient = await env.connector.context(contextFromKubeconfigText(held.kubeconfig, `${where} (old credential)`, storeOrigin(store)), item.target?.cluster ?? item.cluster ?? where)
    const grant = await store.grant(target!)
    const claimed = state
    const annotations = store.anchorAnnotations()
    // The same lifetime as at generate (asked again, so a server's cut is not compounded and a raised maximum is used).
    const seconds = lifetimeToAsk(r.durationSeconds, s.lifetime, held.user)
    let issued: Issued
    if (id.kind === 'ServiceAccount') {
      const sa = id
      const obj = method === 'token' ? anchorObject(sa, claimed.newAnchor!.name, annotations) : legacyTokenObject(sa, claimed.newAnchor!.name, annotations)
      const anchor = await timed('anchor', () => applyObject<KubeObject>(target!, obj), (a) => `Secret ${a.metadata.namespace}/${a.metadata.name}`)
      issued = await timed(
        'mint',
        () => (method === 'token' ? issueBoundToken(target!, sa, {name: anchor.metadata.name, uid: anchor.metadata.uid!}, seconds) : awaitLegacyToken(target!, sa.namespace, anchor.metadata.name)),
        (i) => (i.expires ? `expires ${i.expires}` : 'never expires'),
      )
    } else {
      // A client certificate hangs on nothing: no anchor step. The key is made here, the CSR approved, then deleted.
      const user = id
      const log = new ApplyLog()
      issued = await timed('mint', async () => {
        const i = await issueClientCert(target!, user, seconds, log, annotations)
        if (i.csr) await deleteObject(target!, 'CertificateSigningRequest', i.csr).catch(() => undefined)
        return i
      }, (i) => `certificate valid until ${i.expires}`)
    }
    if (method !== 'legacy-token') item.lifetime = lifetimeOf(seconds, issued.user)
    const kubeconfig = buildKubeconfig({name: held.names.cluster, userName: held.names.user, cluster: held.cluster, user: issued.user, namespace: held.names.namespace})
    const fresh = await env.connector.context(contextFromKubeconfigText(kubeconfig, 'the new credential', storeOrigin(store)), item.target?.cluster ?? item.cluster ?? where)
    item.verification = await timed('verify', () => verifyCredential(fresh, {username: item.identity!, rules: grant.rules, namespaces: grant.namespaces}), (c) => c.map((x) => `${x.name} ${x.status}`).join(', '))
    const newAnchor = refText(claimed.newAnchor)
    item.new = {fingerprint: fp(kubeconfigSha256(kubeconfig)), expires: issued.expires, anchor: newAnchor}
    if (worstStatus(item.verification) === 'fail') {
      // Nothing was written: the old credential stays; the new anchor (and every token bound to it) goes, and the claim is lifted.
      if (claimed.newAnchor) await deleteObject(target!, 'Secret', claimed.newAnchor.name, claimed.newAnchor.namespace)
      track.phase = (await store.release(claimed).then(() => true, () => false)) ? 'unchanged' : 'claimed'
      const failed = item.verification.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.message}`)
      throw new FleetError('server', `${where}: the new credential failed verification (${failed.join('; ')}); the old one is unchanged and its anchor deleted`)
    }
    // Step: replace, only if the store is still as this run claimed it.
    const replacedState: RotationState = {...claimed, phase: 'replaced'}
    // A record written before the cluster's identity was kept gets it now, from the cluster it was found on.
    const identity = s.recorded.legacy && reached ? await identityFacts(await reached.ref.resolve(), reached.client, reached.ref) : undefined
    try {
      await timed('replace', () =>
        store.replace({kubeconfig, user: issued.user, expires: issued.expires, anchor: newAnchor, lifetimeSeconds: item.lifetime ? seconds : undefined, identity}, replacedState),
      )
    } catch (error) {
      if (!(error instanceof Conflict)) throw error
      // Someone else wrote the store: re-read it. If it does not hold this run's anchor, this run lost: its credential is revoked.
      const now = await store.current()
      const holds = now && newAnchor && now.anchor === newAnchor
      if (!holds && claimed.newAnchor) {
        await deleteObject(target!, 'Secret', claimed.newAnchor.name, claimed.newAnchor.namespace)
        item.revoked = {done: true, reason: `this run's new credential (anchor ${newAnchor}) was revoked: ${where} was changed by another writer first`}
      }
      throw new FleetError('server', `${where} changed while this run rotated it; re-read, not overwritten`)
    }
    state = replacedState
    track.phase = 'replaced'
  }

  // Steps: revoke the old anchor, confirm the old token is dead, finish (clear the rotation state).
  const old = state.oldAnchor
  if (method === 'client-cert') {
    const until = certNotAfter(held.user) ?? item.old.expires
    item.revoked = {done: false, reason: `a client certificate cannot be revoked: the old one stays valid until ${until} (its NotAfter)`}
  } else if (old && target) {
    await timed('revoke', () => deleteObject(target, 'Secret', old.name, old.namespace), () => `deleted anchor Secret ${old.namespace}/${old.name}`)
    if (oldClient) {
      giveSlot?.()
      const dead = await timed('confirm-revoked', () => confirmDead(oldClient!, 30_000), (d) => (d ? 'the old token is refused (401)' : 'the old token still authenticates'))
      item.revoked = dead
        ? {done: true, reason: `anchor ${refText(old)} deleted; the old token is refused`}
        : {done: false, reason: `anchor ${refText(old)} deleted, but the old token still authenticated after 30s`}
    } else {
      item.revoked = {done: true, reason: `anchor ${refText(old)} deleted (the old token was replaced by an earlier, interrupted run, so it could not be probed here)`}
    }
  } else {
    item.revoked = {done: false, reason: 'the old credential named no anchor: nothing to delete (it stays valid until it expires)'}
  }
  await timed('finish', () => store.finish())
  track.phase = 'unchanged'
  // A certificate that cannot be revoked is the method's nature, said in `revoked`; a token that survived its anchor is a failure.
  item.status = item.revoked.done || method === 'client-cert' ? 'rotated' : 'failed'
  if (item.status === 'failed') item.reason = item.revoked.reason
  // What the store holds now (a file's bytes change at finish; a resumed run minted nothing itself).
  const now = store.kind === 'file' || !item.new ? await store.current() : undefined
  item.new = {
    fingerprint: store.kind === 'file' ? now?.fingerprint : (item.new?.fingerprint ?? now?.fingerprint),
    expires: item.new?.expires ?? now?.expires,
    anchor: item.new?.anchor ?? now?.anchor,
  }
}

/**
 * The cluster a credential's new one is minted on, found from what it recorded (cluster-identity.ts) among the clusters
 * fleet knows, with a credential that may mint (TokenRequest, a legacy token Secret, or a CSR).
 */
export async function reachTarget(
  r: RotateRequest,
  rec: RecordedCluster,
  env: RotateEnv,
  o: {what: string; method: Method; id: Identity; self?: {namespace: string; name: string}},
): Promise<ResolvedTarget> {
  const need =
    o.id.kind === 'User'
      ? {verb: 'create', group: 'certificates.k8s.io', resource: 'certificatesigningrequests', namespace: ''}
      : o.method === 'token'
        ? {verb: 'create', group: '', resource: 'serviceaccounts', subresource: 'token', namespace: o.id.namespace}
        : {verb: 'create', group: '', resource: 'secrets', namespace: o.id.namespace}
  return resolveCredentialCluster(rec, {
    override: r.clusterOverride,
    clusters: {get: r.cluster, list: r.clusters ?? (async () => [])},
    connect: (ref) => env.connector.cluster(ref),
    mayMint: async (client) => (await accessReview(client, {resource: need})).allowed,
    exclude: (ref) => Boolean(o.self && ref.source.kind === 'secret' && ref.source.namespace === o.self.namespace && ref.source.name === o.self.name),
    what: o.what,
  })
}

/** How long the server may stay silent while the old credential's refusal is being confirmed. */
const SILENT_CONFIRM_MS = 5_000

/**
 * Polls SelfSubjectReview (alone: the answer's status is the verdict) with the old credential until the server refuses it (401). A server that stops answering
 * (killed, restarting, its etcd stalled) is not a token that "still authenticates": after SILENT_CONFIRM_MS without an
 * answer its error is thrown, so the item says the outage and the next run finishes it.
 */
export async function confirmDead(client: KubeClient, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  let silentSince: number | undefined
  let wait = 250
  for (;;) {
    try {
      await selfSubjectReview(client)
      silentSince = undefined
    } catch (error) {
      if (error instanceof FleetError && error.kind === 'unauthorized') return true
      const silent = error instanceof FleetError && (error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server')
      if (!silent) silentSince = undefined
      else if ((silentSince ??= Date.now()) + SILENT_CONFIRM_MS < Date.now() || Date.now() > deadline) throw error
    }
    if (Date.now() > deadline) return false
    // The token cache holds an authenticated token up to 10 s: polled at 250 ms, then less often (up to every 2 s), so
    // hundreds of rotations waiting at once do not load the member with reviews.
    await new Promise((r) => setTimeout(r, wait))
    wait = Math.min(2000, wait * 2)
  }
}

/**
 * After an interrupt: a claim this run made whose store was not replaced yet is lifted (the new anchor, and every token
 * bound to it, deleted first), so the store is as before the run; one already replaced is left for the next run,
 * which finishes the rotation (the state machine in rotation-state.ts). Says which of these happened.
 */
async function afterInterrupt(store: RotationStore, env: RotateEnv, run: string, target: KubeClient | undefined, track: Track): Promise<string> {
  env.cancel?.undoing(() => [`the rotation claim on ${store.where} (the next run finishes or lifts it)`])
  const st = (await store.current())?.state
  if (!st || st.run !== run) return 'before this run changed anything: the credential is unchanged'
  if (st.phase === 'replaced') return `after the ${store.kind === 'secret' ? 'Secret' : 'file'} got the new credential: the next run finishes the rotation (deletes the old anchor)`
  if (st.newAnchor) {
    // This run claimed only after it had reached the target, so the target is known here.
    if (!target) throw new FleetError('internal', 'the target cluster of this claim was never reached')
    await deleteObject(target, 'Secret', st.newAnchor.name, st.newAnchor.namespace)
  }
  await store.release(st)
  track.phase = 'unchanged'
  return 'before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted'
}

/** Where a credential's rotation is: the step in progress (or just done: `after <step>`) and what its store holds. */
interface Track {
  step: string
  phase: Exclude<Unfinished['phase'], 'unknown'>
}

/** The store's writes: one that got no answer may have been applied or not. */
const STORE_WRITES = new Set(['claim', 'replace', 'finish'])

/** Steps that run on the hub (or the file); the others on the credential's cluster. */
const STORE_STEPS = new Set(['lease', 'read', 'claim', 'replace', 'finish'])

/**
 * What a failed item left and what the next run does with it, from what this run last saw of its store (not re-read:
 * the hub may be the part that failed). A claim this run made and could not lift is taken over by the next run once
 * the Lease has expired (15 s), or after 2 minutes without Leases.
 */
function unfinished(store: RotationStore, item: RotatedCredential, track: Track, error: unknown): Unfinished {
  const bare = track.step.replace(/^after /, '')
  const on = STORE_STEPS.has(bare) ? (store.kind === 'file' ? 'the file' : 'the hub') : (item.target?.cluster ?? item.cluster ?? 'its cluster')
  const kept = store.kind === 'file' ? 'the file' : 'the Secret'
  const silent = error instanceof FleetError && (error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server')
  if (silent && STORE_WRITES.has(track.step)) {
    const next = `the hub did not answer this run's ${track.step} of ${kept}, which may or may not have been applied; ${kept} holds a working credential either way and the next run reads which and finishes the rotation`
    return {step: track.step, on, phase: 'unknown', next}
  }
  const next =
    track.phase === 'replaced'
      ? `${kept} holds the new credential; the next run deletes the old anchor and finishes`
      : track.phase === 'claimed'
        ? `the old credential is in place, claimed by this run; the next run takes the claim over (the same new anchor) and rotates it`
        : 'the old credential is in place and unchanged; the next run rotates it'
  return {step: track.step, on, phase: track.phase, next}
}

/**
 * What the failures left: one that failed before its store was replaced keeps the old credential; one that failed after
 * (an interrupt, a revoke that did not go through) already holds the new one, and the next run finishes it.
 */
export function rotationFailureNote(failed: RotatedCredential[]): string {
  // Replaced by this run (its steps), or by an interrupted one this run was finishing.
  const replaced = failed.filter((i) => i.resumed === 'replaced' || i.steps.some((s) => s.step === 'replace')).length
  const kept = failed.length - replaced
  const parts: string[] = []
  if (kept > 0) parts.push(`${kept === failed.length ? (kept > 1 ? 'their' : 'its') : kept} old credential${kept > 1 ? 's are' : ' is'} still in place`)
  if (replaced > 0) parts.push(`${replaced === failed.length ? (replaced > 1 ? 'they' : 'it') : replaced} already ${replaced > 1 ? 'hold' : 'holds'} the new one and the next run finishes ${replaced > 1 ? 'them' : 'it'}`)
  return `${failed.length} rotation${failed.length > 1 ? 's' : ''} failed: ${parts.join('; ')}`
}
