import {open, readFile, unlink} from 'node:fs/promises'
import {resolve} from 'node:path'
import yaml from 'js-yaml'

import {type Check, worstStatus} from '../base/checks.js'
import {FleetError, toErrorInfo} from '../base/errors.js'
import {KubeClient} from '../kube/client.js'
import {httpError} from '../kube/errors.js'
import {writeFileAtomic} from '../kubeconfig/atomic-write.js'
import {contextFromKubeconfigText} from '../kubeconfig/from-text.js'
import {registerSecret} from '../kubeconfig/redact.js'
import type {KubeconfigDoc, UserEntry} from '../kubeconfig/types.js'
import {ApplyLog, type KubeObject, applyObject, deleteObject, getObject} from './kube-objects.js'
import {KUBECONFIG_EXTENSION, kubeconfigSha256} from './kubeconfig-out.js'
import {CREDENTIAL_LABEL} from './labels.js'
import {lifetimeOf, lifetimeToAsk} from './lifetime.js'
import {type Issued, METHODS, type Method, anchorName, anchorObject, awaitLegacyToken, issueBoundToken, issueClientCert, legacySecretName, legacyTokenObject} from './methods.js'
import {type Identity, credentialId} from './rbac.js'
import type {PolicyRule} from './rules-file.js'
import {type RotateEnv, type RotateRequest, type RotatedCredential, type StepRecord, certNotAfter, confirmDead, identityOf, reachTarget} from './rotate.js'
import {type Step, anchorSuffix, failpoint} from './rotation-state.js'
import {verifyCredential} from './verify.js'
import {identityFacts, identityRecord, recordedCluster} from './cluster-identity.js'
import {createHash} from 'node:crypto'

/**
 * Rotation of a kubeconfig file `creds generate --out` wrote. The same steps as a hub Secret; the progress is recorded
 * in the file's own `fleet.dev/credential` extension (phase, new anchor, old anchor), each write atomic and 0600, and a
 * lock file beside it (O_EXCL, the holder's pid) keeps two runs apart. A file records no grant, so the grant to verify
 * against is read from the cluster: the bindings fleet labelled for this identity.
 */
type Facts = Record<string, string>

function facts(doc: KubeconfigDoc): Facts | undefined {
  const e = doc.extensions?.find((x) => x.name === KUBECONFIG_EXTENSION)
  return e?.extension as Facts | undefined
}

function withFacts(doc: KubeconfigDoc, f: Facts): string {
  const extensions = [...(doc.extensions ?? []).filter((x) => x.name !== KUBECONFIG_EXTENSION), {name: KUBECONFIG_EXTENSION, extension: f}]
  return yaml.dump({...doc, extensions}, {noRefs: true, lineWidth: -1})
}

function currentUser(doc: KubeconfigDoc): {name: string; user: UserEntry} | undefined {
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context
  const u = doc.users?.find((x) => x.name === ctx?.user)
  return u ? {name: u.name, user: u.user} : undefined
}

/** The cluster of the current context: the server and CA the credential is for. */
function currentCluster(doc: KubeconfigDoc) {
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context
  return doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster
}

/** The grant fleet applied for this identity, found by its label: rules, and namespaces (empty: cluster-wide). */
async function grantOnCluster(target: KubeClient, id: Identity): Promise<{rules: PolicyRule[]; namespaces: string[]}> {
  const sel = `labelSelector=${encodeURIComponent(`${CREDENTIAL_LABEL}=${credentialId(id)}`)}`
  const list = async (path: string) => {
    const res = await target.request('GET', `${path}?${sel}`)
    if (res.status < 200 || res.status >= 300) throw httpError(res.status, res.body, `list ${path}`)
    return (JSON.parse(res.body) as {items: Array<{metadata: {namespace?: string}; roleRef: {kind: string; name: string}}>}).items
  }
  const crbs = await list('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')
  const rbs = await list('/apis/rbac.authorization.k8s.io/v1/rolebindings')
  const b = crbs[0] ?? rbs[0]
  if (!b) throw new FleetError('config', `no RBAC binding labelled for ${credentialId(id)} on the cluster: nothing to verify a new credential against`)
  const role = b.roleRef.kind === 'ClusterRole'
    ? await getObject<{rules?: PolicyRule[]}>(target, 'ClusterRole', b.roleRef.name)
    : await getObject<{rules?: PolicyRule[]}>(target, 'Role', b.roleRef.name, b.metadata.namespace)
  return {rules: role?.rules ?? [], namespaces: crbs.length > 0 ? [] : [...new Set(rbs.map((x) => x.metadata.namespace!))]}
}

async function lock(path: string): Promise<() => Promise<void>> {
  const lockPath = `${path}.fleet-rotate.lock`
  for (let i = 0; i < 2; i++) {
    try {
      const h = await open(lockPath, 'wx', 0o600)
      await h.writeFile(String(process.pid))
      await h.close()
      return () => unlink(lockPath).catch(() => undefined)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const pid = Number(await readFile(lockPath, 'utf8').catch(() => ''))
      let alive = false
      try {
        if (pid) process.kill(pid, 0)
        alive = Boolean(pid)
      } catch {
        alive = false
      }
      if (alive) throw new FleetError('server', `${path}: another fleet run (pid ${pid}) is rotating this file`)
      // The holder died (a crash): its lock is stale; the file's recorded phase says what is left to do.
      await unlink(lockPath).catch(() => undefined)
    }
  }
  throw new FleetError('server', `${path}: could not take the rotation lock ${lockPath}`)
}

export async function rotateFile(path: string, r: RotateRequest, env: RotateEnv): Promise<RotatedCredential> {
  const abs = resolve(path)
  const started = Date.now()
  const item: RotatedCredential = {file: {path: abs}, status: 'failed', old: {}, verification: [], steps: [], durationMs: 0}
  let release: (() => Promise<void>) | undefined
  try {
    release = r.dryRun ? undefined : await lock(abs)
    await rotateFileLocked(abs, r, env, item)
  } catch (error) {
    item.status = 'failed'
    item.error = toErrorInfo(error)
    item.reason ??= item.error.message
  } finally {
    await release?.()
    item.durationMs = Date.now() - started
  }
  return item
}

async function rotateFileLocked(path: string, r: RotateRequest, env: RotateEnv, item: RotatedCredential): Promise<void> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new FleetError('config', `${path}: ${(error as Error).message}`)
  }
  let doc = yaml.load(text) as KubeconfigDoc
  const f = facts(doc)
  if (!f) throw new FleetError('config', `${path}: not written by fleet creds generate (no ${KUBECONFIG_EXTENSION} extension): fleet rotates only what it made`)
  const method = f.method as Method
  if (!METHODS.includes(method)) throw new FleetError('config', `${path}: unknown credential method "${f.method}"`)
  const cu = currentUser(doc)
  if (!cu) throw new FleetError('config', `${path}: the current context has no user`)
  registerSecret(cu.user.token)
  registerSecret(cu.user['client-key-data'])
  item.cluster = f.cluster
  item.method = method
  item.identity = f.identity
  const id = identityOf(method, f.identity, cu.user)
  if (!id) throw new FleetError('config', `${path}: identity "${f.identity}" does not fit method ${method}`)
  const fileKey = createHash('sha256').update(`file:${path}`).digest('hex').slice(0, 8)
  const derivedOld = id.kind === 'ServiceAccount' ? `${id.namespace}/${method === 'token' ? anchorName(id.name, fileKey) : legacySecretName(id.name, fileKey)}` : undefined
  item.old = {fingerprint: `sha256:${kubeconfigSha256(text)}`, expires: f.expires, anchor: f.anchor ?? derivedOld}
  const phase = f['rotation-phase']
  if (!phase && r.expiringWithinMs !== undefined) {
    const exp = Date.parse(f.expires ?? '')
    // A legacy token never expires ("never"): it is not expiring, so a scheduled --expiring-within leaves it.
    if (f.expires === 'never' || (!Number.isNaN(exp) && exp - Date.now() > r.expiringWithinMs)) {
      item.status = 'skipped'
      item.reason = `expires ${f.expires}, not within --expiring-within`
      return
    }
  }
  const recorded = recordedCluster(f, 'file', currentCluster(doc))
  if (r.dryRun) {
    // Where it would mint, found as a real run finds it (and a cluster that cannot be found fails the preview too).
    const found = await reachTarget(r, recorded, env, {what: path, method, id})
    item.target = {cluster: found.ref.name, by: found.by}
    item.status = 'planned'
    item.reason = phase ? `would finish the interrupted rotation (phase ${phase})` : `would mint a new ${method} credential for ${f.identity} and replace the file`
    return
  }
  const timed = async <T>(step: Step, work: () => Promise<T>): Promise<T> => {
    const t0 = Date.now()
    const v = await work()
    item.steps.push({step, ms: Date.now() - t0} satisfies StepRecord)
    failpoint(step, env.env)
    return v
  }
  // Found before the claim: a file whose cluster cannot be found is left as it was.
  const reached = await reachTarget(r, recorded, env, {what: path, method, id})
  item.target = {cluster: reached.ref.name, by: reached.by}
  const target = reached.client
  let state: Facts = f
  if (!phase) {
    const key = `${fileKey}-${anchorSuffix()}`
    const newAnchor = id.kind === 'ServiceAccount' ? `${id.namespace}/${method === 'token' ? anchorName(id.name, key) : legacySecretName(id.name, key)}` : ''
    state = {...f, 'rotation-phase': 'claimed', ...(newAnchor ? {'rotation-new-anchor': newAnchor} : {}), ...(item.old.anchor ? {'rotation-old-anchor': item.old.anchor} : {})}
    text = withFacts(doc, state)
    await timed('claim', () => writeFileAtomic(path, text, {mode: 0o600}))
    doc = yaml.load(text) as KubeconfigDoc
  } else item.resumed = phase

  let oldClient: KubeClient | undefined
  if (state['rotation-phase'] === 'claimed') {
    oldClient = await KubeClient.connect(contextFromKubeconfigText(text, `${path} (old credential)`), {timeoutMs: env.timeoutMs, clusterName: f.cluster, exec: env.exec, log: env.log})
    const grant = await grantOnCluster(target, id)
    const [ans, anm] = (state['rotation-new-anchor'] ?? '').split('/')
    const annotations = {'fleet.dev/credential-method': method, 'fleet.dev/credential-identity': f.identity}
    // The lifetime generate was asked for (the file's `lifetime` fact), so rotations neither drift nor compound a server's cut.
    const seconds = lifetimeToAsk(r.durationSeconds, state.lifetime, cu.user)
    let issued: Issued
    if (id.kind === 'ServiceAccount') {
      const obj: KubeObject = method === 'token' ? anchorObject(id, anm, annotations) : legacyTokenObject(id, anm, annotations)
      const anchor = await timed('anchor', () => applyObject<KubeObject>(target, obj))
      issued = await timed('mint', () => (method === 'token' ? issueBoundToken(target, id, {name: anm, uid: anchor.metadata.uid!}, seconds) : awaitLegacyToken(target, ans, anm)))
    } else {
      issued = await timed('mint', async () => {
        const i = await issueClientCert(target, id, seconds, new ApplyLog(), annotations)
        if (i.csr) await deleteObject(target, 'CertificateSigningRequest', i.csr).catch(() => undefined)
        return i
      })
    }
    if (method !== 'legacy-token') item.lifetime = lifetimeOf(seconds, issued.user)
    const users = (doc.users ?? []).map((u) => (u.name === cu.name ? {name: u.name, user: issued.user} : u))
    // A file written before the cluster's identity was recorded gets it now, from the cluster it was found on.
    const upgrade = recorded.legacy ? identityRecord(await identityFacts(await reached.ref.resolve(), target, reached.ref), 'file') : {}
    const nextFacts: Facts = {
      ...state,
      ...upgrade,
      'rotation-phase': 'replaced',
      expires: issued.expires ?? 'never',
      ...(item.lifetime ? {lifetime: String(seconds)} : {}),
      ...(state['rotation-new-anchor'] ? {anchor: state['rotation-new-anchor']} : {}),
    }
    const next = withFacts({...doc, users}, nextFacts)
    const fresh = await KubeClient.connect(contextFromKubeconfigText(next, 'the new credential'), {timeoutMs: env.timeoutMs, clusterName: f.cluster, exec: env.exec, log: env.log})
    item.verification = await timed('verify', () => verifyCredential(fresh, {username: f.identity, rules: grant.rules, namespaces: grant.namespaces}))
    if (worstStatus(item.verification as Check[]) === 'fail') {
      if (anm) await deleteObject(target, 'Secret', anm, ans)
      await writeFileAtomic(path, withFacts(doc, cleared(state)), {mode: 0o600})
      throw new FleetError('server', `${path}: the new credential failed verification; the file keeps the old one`)
    }
    await timed('replace', () => writeFileAtomic(path, next, {mode: 0o600}))
    text = next
    doc = yaml.load(text) as KubeconfigDoc
    state = nextFacts
  }
  const final = facts(doc)!
  const cuNow = currentUser(doc)!
  item.new = {fingerprint: undefined, expires: final.expires, anchor: final.anchor}
  const [ons, onm] = (state['rotation-old-anchor'] ?? '').split('/')
  if (method === 'client-cert') {
    item.revoked = {done: false, reason: `a client certificate cannot be revoked: the old one stays valid until ${item.old.expires ?? certNotAfter(cu.user)} (its NotAfter)`}
  } else if (onm) {
    await timed('revoke', () => deleteObject(target, 'Secret', onm, ons))
    if (oldClient) {
      const dead = await timed('confirm-revoked', () => confirmDead(oldClient!, 30_000))
      item.revoked = dead ? {done: true, reason: `${ons}/${onm} deleted; the old token is refused`} : {done: false, reason: `${ons}/${onm} deleted, but the old token still authenticated after 30s`}
    } else item.revoked = {done: true, reason: `${ons}/${onm} deleted (the old token was replaced by an earlier, interrupted run)`}
  } else item.revoked = {done: false, reason: 'no old anchor known'}
  const done = withFacts(doc, cleared(state))
  await timed('finish', () => writeFileAtomic(path, done, {mode: 0o600}))
  void cuNow
  item.new.fingerprint = `sha256:${kubeconfigSha256(done)}`
  item.status = item.revoked.done || method === 'client-cert' ? 'rotated' : 'failed'
  if (item.status === 'failed') item.reason = item.revoked.reason
}

function cleared(f: Facts): Facts {
  const out = {...f}
  for (const k of ['rotation-phase', 'rotation-new-anchor', 'rotation-old-anchor']) delete out[k]
  return out
}
