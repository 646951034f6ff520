import {createHash} from 'node:crypto'
import yaml from 'js-yaml'

import {whoami} from '../access/whoami.js'
import {type Check, worstStatus} from '../base/checks.js'
import {mapLimit} from '../base/concurrency.js'
import type {Cancellation} from '../base/cancel.js'
import {type ErrorInfo, FleetError, toErrorInfo} from '../base/errors.js'
import type {HubSpec} from '../config/fleet-config.js'
import {type ConnectionSettings, KubeClient} from '../kube/client.js'
import {httpError} from '../kube/errors.js'
import {contextFromKubeconfigText} from '../kubeconfig/from-text.js'
import {describeCertificate} from '../kubeconfig/credentials.js'
import {registerSecret} from '../kubeconfig/redact.js'
import type {ClusterEntry, KubeconfigDoc, UserEntry} from '../kubeconfig/types.js'
import {type Secret, secretText} from '../providers/hub/objects.js'
import type {ClusterRef} from '../providers/types.js'
import {type SecretDestination, type SecretFormat, destinationSecret, kubeconfigKey} from './formats.js'
import {ApplyLog, type KubeObject, applyObject, deleteObject, getObject, objectPath} from './kube-objects.js'
import {buildKubeconfig, kubeconfigSha256} from './kubeconfig-out.js'
import {ANNOTATIONS, MANAGED_BY, MANAGED_BY_LABEL, isFleetManaged} from './labels.js'
import {acquireLease} from './lease.js'
import {type Lifetime, lifetimeOf, lifetimeToAsk} from './lifetime.js'
import {type Issued, METHODS, type Method, anchorName, anchorObject, awaitLegacyToken, issueBoundToken, issueClientCert, legacySecretName, legacyTokenObject} from './methods.js'
import {findPreset} from './presets.js'
import {type Identity, roleBaseName} from './rbac.js'
import type {PolicyRule} from './rules-file.js'
import {type RotationState, type Step, anchorSuffix, failpoint, pausepoint, newRunId, readState, stateAnnotations, withoutState} from './rotation-state.js'
import {verifyCredential} from './verify.js'
import {accessReview} from '../access/access-review.js'
import {type RecordedCluster, type ResolvedTarget, identityFacts, identityRecord, recordedCluster, resolveCredentialCluster} from './cluster-identity.js'
import {connectCredsHub} from './hubs.js'
import {CONSUMER_LABEL, PROFILE_LABEL} from '../providers/hub/cluster-inventory.js'
import {CAPI_CLUSTER_NAME_LABEL} from './formats.js'

/**
 * `fleet creds rotate`: replaces the credential in a fleet-managed hub Secret with a new one of the same method, identity
 * and scope, proved before it is written, and revokes the old one. At every instant the Secret holds a credential that
 * works: the new one is written only once verified, the old one is revoked only once replaced. Progress is recorded
 * on the Secret (rotation-state.ts) so a killed run is finished by the next, and every write to the Secret carries a
 * resourceVersion precondition, so a concurrent change is re-read, never overwritten.
 */
export interface RotateRequest {
  /** NAMESPACE/NAME of hub Secrets; empty with `all`. */
  names: Array<{namespace: string; name: string}>
  /** Kubeconfig files creds generate wrote (--file). */
  files?: string[]
  all: boolean
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

export interface RotateEnv extends ConnectionSettings {
  env?: NodeJS.ProcessEnv
  /** The command's interrupt (SIGINT/SIGTERM), honoured after each step (see afterInterrupt). */
  cancel?: Cancellation
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
  verification: Check[]
  steps: StepRecord[]
  durationMs: number
  error?: ErrorInfo
}

export interface RotationReport {
  kind: 'CredentialRotation'
  dryRun: boolean
  hub: string
  items: RotatedCredential[]
}

const CONFLICT = 409
/** Without the Lease, a claim younger than this may belong to a live run. */
const STALE_CLAIM_MS = 120_000

/** A Secret changed by someone else since it was read: re-read, never overwrite. */
class Conflict extends Error {}

/** PUT with the resourceVersion the object was read at: 409 means someone else wrote it since. */
async function replaceSecret(hub: KubeClient, s: Secret): Promise<Secret> {
  const res = await hub.request('PUT', objectPath('Secret', s.metadata.name, s.metadata.namespace), s)
  if (res.status === CONFLICT) throw new Conflict(`Secret ${s.metadata.namespace}/${s.metadata.name} changed since it was read`)
  if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `replace Secret ${s.metadata.namespace}/${s.metadata.name}`)
  return JSON.parse(res.body) as Secret
}

const annotationsOf = (s: Secret) => ((s.metadata as {annotations?: Record<string, string>}).annotations ?? {})

function withAnnotations(s: Secret, annotations: Record<string, string>): Secret {
  return {...s, metadata: {...s.metadata, annotations} as Secret['metadata']}
}

export function parseIdentity(text: string | undefined): (Identity & {kind: 'ServiceAccount'}) | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(text ?? '')
  return m ? {kind: 'ServiceAccount', namespace: m[1], name: m[2]} : undefined
}

function parseScope(text: string | undefined): string[] {
  if (!text || text === 'cluster-wide') return []
  return text.replace(/^namespaces /, '').split(',').filter(Boolean)
}

/** The rules granted, for verification: the preset, the bound ClusterRole, or the Role/ClusterRole generate applied. */
async function grantedRules(target: KubeClient, access: string | undefined, id: Identity, namespaces: string[]): Promise<PolicyRule[]> {
  const a = access ?? ''
  if (a.startsWith('preset ')) return findPreset(a.slice('preset '.length)).rules
  const roleName = a.startsWith('ClusterRole ') ? a.slice('ClusterRole '.length) : roleBaseName(id)
  const role = a.startsWith('ClusterRole ') || namespaces.length === 0
    ? await getObject<{rules?: PolicyRule[]}>(target, 'ClusterRole', roleName)
    : await getObject<{rules?: PolicyRule[]}>(target, 'Role', roleName, namespaces[0])
  if (!role) throw new FleetError('config', `the grant (${a || 'unknown access'}) is not on the cluster any more: nothing to verify a new credential against`)
  return role.rules ?? []
}

/** The credential a Secret holds, as a kubeconfig (argocd's JSON turned into one), with the parts to rebuild it. */
export interface Held {
  kubeconfig: string
  cluster: ClusterEntry
  user: UserEntry
  names: {cluster: string; user: string; namespace?: string}
}

export function heldCredential(s: Secret, format: SecretFormat): Held | undefined {
  if (format === 'argocd') {
    const server = secretText(s, 'server')
    const config = JSON.parse(secretText(s, 'config') ?? '{}') as {bearerToken?: string; tlsClientConfig?: {caData?: string; serverName?: string; insecure?: boolean; certData?: string; keyData?: string}}
    const cluster: ClusterEntry = {server}
    const tls = config.tlsClientConfig ?? {}
    if (tls.caData) cluster['certificate-authority-data'] = tls.caData
    if (tls.serverName) cluster['tls-server-name'] = tls.serverName
    if (tls.insecure) cluster['insecure-skip-tls-verify'] = true
    const user: UserEntry = config.bearerToken ? {token: config.bearerToken} : {'client-certificate-data': tls.certData, 'client-key-data': tls.keyData}
    const names = {cluster: s.metadata.name, user: s.metadata.name}
    return {kubeconfig: buildKubeconfig({name: names.cluster, userName: names.user, cluster, user}), cluster, user, names}
  }
  const key = kubeconfigKey(format)
  const text = key ? secretText(s, key) : undefined
  if (!text) return undefined
  const doc = yaml.load(text) as KubeconfigDoc
  const ctxName = doc['current-context'] ?? doc.contexts?.[0]?.name
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user
  if (!ctx || !cluster || !user) return undefined
  return {kubeconfig: text, cluster, user, names: {cluster: ctxName!, user: ctx.user!, namespace: ctx.namespace}}
}

function destinationOf(s: Secret, format: SecretFormat): SecretDestination {
  const labels = s.metadata.labels ?? {}
  const name = format === 'cluster-api' ? (labels[CAPI_CLUSTER_NAME_LABEL] ?? s.metadata.name.replace(/-kubeconfig$/, '')) : s.metadata.name
  return {namespace: s.metadata.namespace ?? 'default', name, format, consumer: labels[CONSUMER_LABEL], profile: labels[PROFILE_LABEL]}
}

const fp = (hex: string | undefined) => (hex ? `sha256:${hex}` : undefined)
const refText = (r: {namespace: string; name: string} | undefined) => (r ? `${r.namespace}/${r.name}` : undefined)
const parseRef = (v: string | undefined) => {
  const [namespace, name] = (v ?? '').split('/')
  return namespace && name ? {namespace, name} : undefined
}

/** Secrets `--all` considers: every hub Secret fleet manages that holds a consumer credential (it has a format). */
async function fleetSecrets(hub: KubeClient): Promise<Secret[]> {
  const res = await hub.request('GET', `/api/v1/secrets?labelSelector=${encodeURIComponent(`${MANAGED_BY_LABEL}=${MANAGED_BY}`)}`)
  if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, 'list Secrets')
  const items = (JSON.parse(res.body) as {items: Secret[]}).items
  return items.filter((s) => annotationsOf(s)[ANNOTATIONS.format] && annotationsOf(s)[ANNOTATIONS.method])
}

export async function rotateCredentials(r: RotateRequest, env: RotateEnv): Promise<RotationReport> {
  const {rotateFile} = await import('./rotate-file.js')
  const fileItems: RotatedCredential[] = []
  for (const path of r.files ?? []) fileItems.push(await rotateFile(path, r, env))
  if (!r.all && r.names.length === 0) return {kind: 'CredentialRotation', dryRun: Boolean(r.dryRun), hub: '', items: fileItems}
  const hub = await connectCredsHub(r.hub, env)
  const hubName = hub.context.contextName
  let targets: Array<{namespace: string; name: string}>
  if (r.all) targets = (await fleetSecrets(hub)).map((s) => ({namespace: s.metadata.namespace ?? 'default', name: s.metadata.name}))
  else targets = r.names
  const run = newRunId()
  const items = await mapLimit(targets, Math.max(1, r.concurrency), (t) => rotateOne(hub, hubName, t, r, env, run))
  return {kind: 'CredentialRotation', dryRun: Boolean(r.dryRun), hub: hubName, items: [...fileItems, ...items]}
}

async function rotateOne(
  hub: KubeClient,
  hubName: string,
  t: {namespace: string; name: string},
  r: RotateRequest,
  env: RotateEnv,
  run: string,
): Promise<RotatedCredential> {
  const started = Date.now()
  const item: RotatedCredential = {secret: {hub: hubName, ...t}, status: 'failed', old: {}, verification: [], steps: [], durationMs: 0}
  const leaseName = `fleet-rotate-${createHash('sha256').update(t.name).digest('hex').slice(0, 12)}`
  let lease: Awaited<ReturnType<typeof acquireLease>> | undefined
  // The target this run reached (before its claim): an interrupt deletes the new anchor there.
  const reachedTarget: {client?: KubeClient} = {}
  try {
    if (r.lease !== false && !r.dryRun) {
      lease = await acquireLease(hub, t.namespace, leaseName, run, {seconds: 15, waitMs: r.leaseWaitMs ?? 60_000})
    }
    await rotateLocked(hub, t, r, env, run, item, Boolean(lease), reachedTarget)
  } catch (error) {
    item.status = 'failed'
    if (env.cancel?.interrupted) {
      const what = await afterInterrupt(hub, t, env, run, reachedTarget.client).catch((e: Error) => `and its claim could not be lifted (${e.message}): the next run finishes it`)
      error = env.cancel.error(what)
    }
    item.error = toErrorInfo(error)
    item.reason ??= item.error.message
  } finally {
    await lease?.release().catch(() => undefined)
    item.durationMs = Date.now() - started
  }
  return item
}

async function rotateLocked(
  hub: KubeClient,
  t: {namespace: string; name: string},
  r: RotateRequest,
  env: RotateEnv,
  run: string,
  item: RotatedCredential,
  leaseHeld: boolean,
  reachedTarget: {client?: KubeClient},
): Promise<void> {
  env.cancel?.check()
  let secret = await getObject<Secret>(hub, 'Secret', t.name, t.namespace)
  if (!secret) throw new FleetError('not-found', `hub ${hub.context.contextName}: Secret ${t.namespace}/${t.name} not found`)
  const ann = annotationsOf(secret)
  const format = ann[ANNOTATIONS.format] as SecretFormat | undefined
  item.secret!.format = format
  item.cluster = ann[ANNOTATIONS.cluster]
  item.method = ann[ANNOTATIONS.method]
  item.identity = ann[ANNOTATIONS.identity]
  item.old = {fingerprint: fp(ann[ANNOTATIONS.fingerprint]), expires: ann[ANNOTATIONS.expires], anchor: ann[ANNOTATIONS.anchor]}
  const where = `Secret ${t.namespace}/${t.name}`
  if (!isFleetManaged(secret.metadata.labels) || !format || !item.cluster) {
    throw new FleetError('config', `${where} was not written by fleet creds generate (no managed-by label or credential annotations): fleet rotates only what it made`)
  }
  const method = item.method as Method
  if (!METHODS.includes(method)) throw new FleetError('config', `${where}: unknown credential method "${item.method}"`)
  const held = heldCredential(secret, format)
  if (!held) throw new FleetError('config', `${where}: no kubeconfig in the ${format} keys`)
  registerSecret(held.user.token)
  registerSecret(held.user['client-key-data'])
  const id = identityOf(method, item.identity, held.user)
  if (!id) throw new FleetError('config', `${where}: identity annotation "${item.identity}" does not fit method ${method}`)
  // generate records no anchor for a legacy token: its Secret's name is derived from the destination, the same way here.
  if (method === 'legacy-token' && !item.old.anchor && id.kind === 'ServiceAccount') {
    const key = createHash('sha256').update(`secret:${t.namespace}/${t.name}:${format}`).digest('hex').slice(0, 8)
    item.old.anchor = `${id.namespace}/${legacySecretName(id.name, key)}`
  }
  let state = readState(ann)
  const recorded = recordedCluster(ann, 'secret', held.cluster)
  // The cluster is found before the claim (and by --dry-run, which then says where it would mint).
  const findTarget = async () => {
    const found = await reachTarget(r, recorded, env, {what: where, method, id, self: t})
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
      item.reason = `would mint a token for ${item.identity} bound to a new anchor, verify it, replace the Secret, delete anchor ${item.old.anchor}`
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
    const v = await work()
    item.steps.push({step, ms: Date.now() - t0, ...(detail ? {detail: detail(v)} : {})})
    failpoint(step, env.env)
    await pausepoint(step, env.env, env.cancel?.signal)
    env.cancel?.check()
    return v
  }

  // The cluster is found before the claim: a resolution failure leaves the Secret as it was (no claim behind).
  const needsTarget = !state || state.phase === 'claimed' || Boolean(state.oldAnchor)
  const reached = needsTarget ? await findTarget() : undefined

  // Step 1: claim. The new anchor's name is recorded before it exists, so a re-run makes this same anchor, never a second.
  if (!state) {
    const oldAnchor = parseRef(item.old.anchor)
    const key = `${createHash('sha256').update(`${t.namespace}/${t.name}`).digest('hex').slice(0, 8)}-${anchorSuffix()}`
    const fresh: RotationState = {
      phase: 'claimed',
      newAnchor: id.kind === 'User' ? undefined : {namespace: id.namespace, name: method === 'token' ? anchorName(id.name, key) : legacySecretName(id.name, key)},
      oldAnchor,
      run,
      started: new Date().toISOString(),
    }
    secret = await timed('claim', async () => {
      try {
        return await replaceSecret(hub, withAnnotations(secret!, {...ann, ...stateAnnotations(fresh)}))
      } catch (error) {
        if (error instanceof Conflict) {
          throw new FleetError('server', `${where} was changed by someone else while this run claimed it (another rotation?); nothing was minted, the credential in it is unchanged`)
        }
        throw error
      }
    })
    state = fresh
  } else {
    // A claim left by another run: with the Lease held, that run is gone (dead or hung past its Lease) and this one
    // finishes its rotation. Without the Lease, a recent claim may be a live run: leave it alone (nothing minted here).
    if (state.run !== run && !leaseHeld && Date.now() - Date.parse(state.started) < STALE_CLAIM_MS) {
      throw new FleetError('server', `${where}: a rotation by run ${state.run} started ${state.started} is in progress; nothing was minted, the credential in it is unchanged`)
    }
    item.resumed = state.phase
    if (state.phase === 'replaced') item.old = {anchor: refText(state.oldAnchor)}
  }

  const target = state.phase === 'claimed' || state.oldAnchor ? reached?.client : undefined
  let oldClient: KubeClient | undefined
  if (state.phase === 'claimed') {
    // The old credential is still the Secret's: kept to prove later that it stopped working.
    oldClient = await KubeClient.connect(contextFromKubeconfigText(held.kubeconfig, `${where} (old credential)`), {timeoutMs: env.timeoutMs, clusterName: item.cluster, exec: env.exec, log: env.log})
    const namespaces = parseScope(ann[ANNOTATIONS.scope])
    const rules = await grantedRules(target!, ann[ANNOTATIONS.access], id, namespaces)
    const claimed = state
    const annotations = {
      [ANNOTATIONS.method]: method,
      [ANNOTATIONS.identity]: item.identity!,
      [ANNOTATIONS.scope]: ann[ANNOTATIONS.scope] ?? '',
      [ANNOTATIONS.access]: ann[ANNOTATIONS.access] ?? '',
    }
    // The same lifetime as at generate (asked again, so a server's cut is not compounded and a raised maximum is used).
    const seconds = lifetimeToAsk(r.durationSeconds, ann[ANNOTATIONS.lifetime], held.user)
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
    const fresh = await KubeClient.connect(contextFromKubeconfigText(kubeconfig, 'the new credential'), {timeoutMs: env.timeoutMs, clusterName: item.cluster, exec: env.exec, log: env.log})
    item.verification = await timed('verify', () => verifyCredential(fresh, {username: item.identity!, rules, namespaces}), (c) => c.map((x) => `${x.name} ${x.status}`).join(', '))
    const newAnchor = refText(claimed.newAnchor)
    item.new = {fingerprint: fp(kubeconfigSha256(kubeconfig)), expires: issued.expires, anchor: newAnchor}
    if (worstStatus(item.verification) === 'fail') {
      // Nothing was written: the old credential stays; the new anchor (and every token bound to it) goes, and the claim is lifted.
      if (claimed.newAnchor) await deleteObject(target!, 'Secret', claimed.newAnchor.name, claimed.newAnchor.namespace)
      await releaseClaim(hub, t, claimed).catch(() => undefined)
      const failed = item.verification.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.message}`)
      throw new FleetError('server', `${where}: the new credential failed verification (${failed.join('; ')}); the old one is unchanged and its anchor deleted`)
    }
    // Step: replace, only if the Secret is still as this run claimed it.
    const rebuilt = destinationSecret(destinationOf(secret, format), {
      kubeconfig,
      cluster: held.cluster,
      user: issued.user,
      clusterName: item.cluster!,
      annotations: {},
    })
    const replacedState: RotationState = {...claimed, phase: 'replaced'}
    const nextAnnotations = {
      ...annotationsOf(secret),
      ...(newAnchor ? {[ANNOTATIONS.anchor]: newAnchor} : {}),
      [ANNOTATIONS.expires]: issued.expires ?? 'never',
      [ANNOTATIONS.fingerprint]: kubeconfigSha256(kubeconfig),
      // A Secret written before the cluster's identity was recorded gets it now, from the cluster it was found on.
      ...(recorded.legacy && reached ? identityRecord(await identityFacts(await reached.ref.resolve(), reached.client, reached.ref), 'secret') : {}),
      ...(item.lifetime ? {[ANNOTATIONS.lifetime]: String(seconds)} : {}),
      ...stateAnnotations(replacedState),
    }
    try {
      secret = await timed('replace', () => replaceSecret(hub, {...withAnnotations(secret!, nextAnnotations), data: {...(secret!.data ?? {}), ...(rebuilt.data as Record<string, string>)}}))
    } catch (error) {
      if (!(error instanceof Conflict)) throw error
      // Someone else wrote the Secret: re-read it. If it does not hold this run's anchor, this run lost: its credential is revoked.
      const now = await getObject<Secret>(hub, 'Secret', t.name, t.namespace)
      const holds = now && newAnchor && annotationsOf(now)[ANNOTATIONS.anchor] === newAnchor
      if (!holds && claimed.newAnchor) {
        await deleteObject(target!, 'Secret', claimed.newAnchor.name, claimed.newAnchor.namespace)
        item.revoked = {done: true, reason: `this run's new credential (anchor ${newAnchor}) was revoked: the Secret was changed by another writer first`}
      }
      throw new FleetError('server', `${where} changed while this run rotated it; re-read, not overwritten`)
    }
    state = replacedState
  }

  // Steps: revoke the old anchor, confirm the old token is dead, finish (clear the rotation annotations).
  const old = state.oldAnchor
  if (method === 'client-cert') {
    const until = certNotAfter(held.user) ?? item.old.expires
    item.revoked = {done: false, reason: `a client certificate cannot be revoked: the old one stays valid until ${until} (its NotAfter)`}
  } else if (old && target) {
    await timed('revoke', () => deleteObject(target, 'Secret', old.name, old.namespace), () => `deleted anchor Secret ${old.namespace}/${old.name}`)
    if (oldClient) {
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
  await timed('finish', () => finishSecret(hub, t))
  // A certificate that cannot be revoked is the method's nature, said in `revoked`; a token that survived its anchor is a failure.
  item.status = item.revoked.done || method === 'client-cert' ? 'rotated' : 'failed'
  if (item.status === 'failed') item.reason = item.revoked.reason
  if (!item.new) {
    const a = annotationsOf(secret)
    item.new = {fingerprint: fp(a[ANNOTATIONS.fingerprint]), expires: a[ANNOTATIONS.expires], anchor: a[ANNOTATIONS.anchor]}
  }
}

export function identityOf(method: Method, identity: string | undefined, user: UserEntry): Identity | undefined {
  if (method !== 'client-cert') return parseIdentity(identity)
  const pem = user['client-certificate-data'] ? Buffer.from(user['client-certificate-data'], 'base64').toString('utf8') : undefined
  if (!pem || !identity) return undefined
  // The groups are the old certificate's organizations: the new one says the same.
  return {kind: 'User', name: identity, groups: describeCertificate(pem).organizations}
}

function certInfo(user: UserEntry) {
  const data = user['client-certificate-data']
  return data ? describeCertificate(Buffer.from(data, 'base64').toString('utf8')) : undefined
}

export const certNotAfter = (user: UserEntry) => certInfo(user)?.notAfter

/** Kept here for the callers that import them from rotate.js; the rules live in lifetime.ts. */
export {certLifetimeSeconds, tokenLifetimeSeconds as lifetimeSeconds} from './lifetime.js'

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
    connect: async (ref) => KubeClient.connect(await ref.resolve(), {timeoutMs: env.timeoutMs, clusterName: ref.name, exec: env.exec, log: env.log}),
    mayMint: async (client) => (await accessReview(client, {resource: need})).allowed,
    exclude: (ref) => Boolean(o.self && ref.source.kind === 'secret' && ref.source.namespace === o.self.namespace && ref.source.name === o.self.name),
    what: o.what,
  })
}

/** Polls SelfSubjectReview with the old credential until the server refuses it (401). */
export async function confirmDead(client: KubeClient, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      await whoami(client)
    } catch (error) {
      if (error instanceof FleetError && error.kind === 'unauthorized') return true
    }
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Clears the rotation annotations, re-reading on conflict (the data is never touched here). */
async function finishSecret(hub: KubeClient, t: {namespace: string; name: string}): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const s = await getObject<Secret>(hub, 'Secret', t.name, t.namespace)
    if (!s || !readState(annotationsOf(s))) return
    try {
      await replaceSecret(hub, withAnnotations(s, withoutState(annotationsOf(s))))
      return
    } catch (error) {
      if (!(error instanceof Conflict)) throw error
    }
  }
  throw new FleetError('server', `Secret ${t.namespace}/${t.name}: could not clear the rotation annotations (kept changing)`)
}

/**
 * After an interrupt: a claim this run made whose Secret was not replaced yet is lifted (the new anchor, and every token
 * bound to it, deleted first), so the Secret is as before the run; a Secret already replaced is left for the next run,
 * which finishes the rotation (the state machine in rotation-state.ts). Says which of these happened.
 */
async function afterInterrupt(hub: KubeClient, t: {namespace: string; name: string}, env: RotateEnv, run: string, target: KubeClient | undefined): Promise<string> {
  env.cancel?.undoing(() => [`the rotation claim on hub Secret ${t.namespace}/${t.name} (the next run finishes or lifts it)`])
  const s = await getObject<Secret>(hub, 'Secret', t.name, t.namespace)
  const st = s ? readState(annotationsOf(s)) : undefined
  if (!s || !st || st.run !== run) return 'before this run changed anything: the credential is unchanged'
  if (st.phase === 'replaced') return 'after the Secret got the new credential: the next run finishes the rotation (deletes the old anchor)'
  if (st.newAnchor) {
    // This run claimed only after it had reached the target, so the target is known here.
    if (!target) throw new FleetError('internal', 'the target cluster of this claim was never reached')
    await deleteObject(target, 'Secret', st.newAnchor.name, st.newAnchor.namespace)
  }
  await releaseClaim(hub, t, st)
  return 'before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted'
}

/** Lifts the claim this run worked on after a failed verification (only if the Secret still records that same claim). */
async function releaseClaim(hub: KubeClient, t: {namespace: string; name: string}, claimed: RotationState): Promise<void> {
  const s = await getObject<Secret>(hub, 'Secret', t.name, t.namespace)
  const st = s ? readState(annotationsOf(s)) : undefined
  if (!s || !st || st.phase !== 'claimed' || st.run !== claimed.run || refText(st.newAnchor) !== refText(claimed.newAnchor)) return
  await replaceSecret(hub, withAnnotations(s, withoutState(annotationsOf(s))))
}
