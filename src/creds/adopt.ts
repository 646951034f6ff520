import { createHash } from 'node:crypto';

import type { V1ClusterRoleBinding, V1RoleBinding } from '@kubernetes/client-node';

import { type RiskCode, summarizeRisks } from '../access/risk.js';
import { rulesReview } from '../access/rules.js';
import { selfSubjectReview } from '../access/whoami.js';
import { accessReview } from '../access/access-review.js';
import { tokenReview } from '../access/token-review.js';
import type { Check } from '../base/checks.js';
import { ConfigError, type ErrorInfo, FleetError, toErrorInfo } from '../base/errors.js';
import type { NamespacedName } from '../base/names.js';
import type { HubSpec } from '../config/fleet-config.js';
import { ApplyLog } from '../kube/apply-log.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import type { Destination } from '../kube/destination.js';
import { statusOf } from '../kube/errors.js';
import type { KubeObject, ObjectMeta, Wire } from '../kube/objects.js';
import { CLUSTER_ROLE_BINDING, ROLE_BINDING, SECRET, SERVICE_ACCOUNT } from '../kube/resources.js';
import { deleteObject, getObject, listObjects, updateObject } from '../kube/typed.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { ClusterRef } from '../providers/types.js';
import { type Secret, secretText } from '../providers/hub/objects.js';
import { identityFacts, identityRecord, recordedCluster } from './cluster-identity.js';
import { FORMAT_QUERIES, type Held, type SecretFormat, codecOf, detectFormat } from './codecs/index.js';
import { certNotAfter, parseIdentity } from './credential-record.js';
import { type AccessRequest, plan as generatePlan, resolveAccess } from './generate.js';
import { kubeconfigSha256 } from './kubeconfig-out.js';
import { ADOPTED_AT, ADOPTED_FROM, ANNOTATIONS, MANAGED_BY_LABELS, isFleetManaged } from './labels.js';
import { type Lifetime } from './lifetime.js';
import { type CredentialMethod, describeUser } from './list.js';
import { anchorName } from './methods.js';
import { type Access, type Identity, describeAccess, describeAnnotations, describeScope, username } from './rbac.js';
import { assessGrant, refuseRisky } from './risk-gate.js';
import { type RotationState, anchorSuffix, newRunId, stateAnnotations, withoutState } from './rotation-state.js';
import {
  type RotateEnv,
  type RotateRequest,
  type Rotation,
  type StepRecord,
  abandon,
  confirmRefused,
  finish,
  findTarget,
  mint,
  mintPermission,
  newRotation,
  readStored,
  reachTarget,
  refText,
  replace,
  step,
  takeOver,
  verified,
  verify,
} from './rotation-steps.js';
import { SecretStore, type Stored } from './rotation-store.js';
import { type HeldServer, checkHeldServer } from './held-server.js';
import { type TokenSecretDeletion, stillUsed, usedText } from './still-used.js';

/**
 * `fleet creds adopt`: a consumer Secret fleet did not write (Argo CD's `argocd cluster add`, a Cluster API kubeconfig,
 * a hand-made multicluster-runtime Secret) is taken over. The credential in it is described first, with itself (who it
 * is, what it may do, when it expires); then a fleet credential is minted for the same ServiceAccount or a new
 * least-privilege identity, proved, and written into the same Secret in the same format, keeping everything fleet does
 * not own; the old credential is said plainly and, with `revokeOld`, deleted when fleet can prove which object it is.
 *
 * No second state machine: the adoption's first write marks the Secret as fleet's (its annotations, as generate writes
 * them) together with a rotation claim (rotation-state.ts), so the rest is rotation's own steps (mint, verify, replace,
 * revoke, confirm-revoked, finish) and a run killed after that write is finished by the next `creds adopt` or `creds
 * rotate`. A failure or an interrupt before the replace puts the Secret's labels and annotations back as they were.
 */
export interface AdoptRequest {
  /** NAMESPACE/NAME of hub Secrets. */
  names: NamespacedName[];
  /** `--all-unmanaged`: every consumer Secret on the hub fleet did not write, narrowed by these. */
  allUnmanaged?: { namespace?: string; labelSelector?: string };
  /** A Secret's format when it carries no mark (Flux, kubeconfig-secretreader). */
  format?: SecretFormat;
  hub?: HubSpec;
  cluster: (name: string) => Promise<ClusterRef>;
  clusters: () => Promise<ClusterRef[]>;
  clusterOverride?: string;
  /** A new identity and its grant (creds generate's flags); absent: the same ServiceAccount and its grant as it is. */
  into?: { identity: Identity; access: AccessRequest; namespaces: string[]; allowRisky?: boolean };
  durationSeconds: number;
  revokeOld: boolean;
  dryRun: boolean;
}

/** What the credential in the Secret is, found with the credential itself (never the credential). */
export interface CredentialBefore {
  /** The user the server sees (SelfSubjectReview made with the credential). */
  identity: string;
  groups: string[];
  method: CredentialMethod;
  /** RFC 3339, or `never`. */
  expires: string;
  /** The risk codes of `auth rules` for what it may do (cluster-admin stands for everything). */
  risks: RiskCode[];
  /** Why what it may do could not be read (its rules review failed): then `risks` is empty and unknown, not clean. */
  risksUnknown?: string;
  /** The legacy token Secret on the cluster whose token is this credential (what --revoke-old deletes). */
  tokenSecret?: string;
}

/** The stable JSON shape of one adoption (docs/creds.md, "Adopting credentials fleet did not make"). */
export interface AdoptedCredential {
  /** A hub Secret, or (`file`) a kubeconfig file and the context whose user was adopted (`creds adopt --file`). */
  secret?: { hub: string; namespace: string; name: string; format?: string };
  file?: { path: string; context: string };
  status: 'adopted' | 'planned' | 'unchanged' | 'failed';
  reason?: string;
  /** The phase an interrupted adoption left (this run finished it). */
  resumed?: string;
  target?: { cluster: string; by: string };
  /** The server the new credential is written for, where it is minted and verified, and why they are one cluster. */
  destination?: HeldServer;
  before?: CredentialBefore;
  after?: {
    identity: string;
    method: string;
    access: string;
    scope: string;
    expires?: string;
    anchor?: string;
    lifetime?: Lifetime;
    fingerprint?: string;
  };
  /** The credential that was in the Secret: whether it still works, why, and who else may hold it. */
  old?: {
    valid: boolean;
    revoked: boolean;
    reason: string;
    heldBy: string[];
    notAfter?: string;
    /** --revoke-old: who else still uses the old token Secret (kept unless --force; deleted with it, still named). */
    stillUsed?: string[];
    /** --revoke-old: what could not be looked at before the deletion (no list permission, no hub), with why. */
    unchecked?: string[];
  };
  /** The RBAC objects made for a new identity. */
  objects?: Array<{ kind: string; name: string; namespace?: string; action: string }>;
  verification: Check[];
  steps: StepRecord[];
  durationMs: number;
  error?: ErrorInfo;
}

export interface AdoptionReport {
  kind: 'CredentialAdoption';
  dryRun: boolean;
  hub: string;
  items: AdoptedCredential[];
}

// What marks an adopted Secret lives with the other marks (labels.ts); adopt-file.ts takes them from here too.
export { ADOPTED_AT, ADOPTED_FROM };

const LEGACY_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * The offline checks of a new identity's grant, before anything is contacted: a preset or rules file that exists and,
 * without --allow-risky, passes the risk rules (as creds generate refuses it). A ClusterRole is read from the cluster later.
 */
export async function checkAdoptGrant(into: AdoptRequest['into']): Promise<void> {
  if (!into || 'clusterRole' in into.access) return;
  const access = await resolveAccess(into.access, undefined);
  if (!into.allowRisky)
    refuseRisky(
      assessGrant(access.rules, into.namespaces.length === 0),
      `to grant ${describeAccess(access)} ${describeScope(into.namespaces)}`,
    );
}

/** The consumer Secrets on the hub that fleet did not write (--all-unmanaged), each found once. */
async function unmanagedSecrets(
  hub: KubeClient,
  o: { namespace?: string; labelSelector?: string },
): Promise<NamespacedName[]> {
  const found = new Map<string, Secret>();
  for (const q of FORMAT_QUERIES) {
    const labelSelector = [q.labelSelector, o.labelSelector].filter(Boolean).join(',');
    for (const s of await listObjects<Secret>(hub, SECRET, {
      namespace: o.namespace,
      labelSelector,
      fieldSelector: q.fieldSelector,
      what: 'list Secrets',
    }))
      found.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
  }
  return [...found.values()]
    .filter((s) => !isFleetManaged(s.metadata.labels))
    .map((s) => ({ namespace: s.metadata.namespace ?? 'default', name: s.metadata.name }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

export async function adoptCredentials(r: AdoptRequest, env: RotateEnv): Promise<AdoptionReport> {
  const hub = await env.connector.hub(r.hub, env.env);
  const hubName = hub.context.contextName;
  const targets = r.allUnmanaged ? await unmanagedSecrets(hub, r.allUnmanaged) : r.names;
  const run = newRunId();
  const items: AdoptedCredential[] = [];
  const count = { done: 0, total: targets.length, failed: 0 };
  env.progress?.count({ ...count });
  for (const t of targets) {
    if (env.cancel?.interrupted) break;
    const item = await adoptOne(hub, hubName, t, r, env, run);
    items.push(item);
    count.done++;
    if (item.status === 'failed') count.failed++;
    env.progress?.count({ ...count });
  }
  // Interrupted before the last: nothing more is counted.
  env.progress?.count({ ...count, done: count.total });
  return { kind: 'CredentialAdoption', dryRun: r.dryRun, hub: hubName, items };
}

/** The rotation request adopt's steps run under (rotation-steps.ts reads the clusters and the lifetime from it). */
function rotateRequest(r: AdoptRequest, t: NamespacedName): RotateRequest {
  return {
    names: [t],
    all: false,
    cluster: r.cluster,
    clusters: r.clusters,
    clusterOverride: r.clusterOverride,
    durationSeconds: r.durationSeconds,
    concurrency: 1,
  };
}

/** A Secret's labels and annotations as they were before the adoption's first write: what an undo puts back. */
interface Original {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  data: Record<string, string>;
}

async function adoptOne(
  hub: KubeClient,
  hubName: string,
  t: NamespacedName,
  r: AdoptRequest,
  env: RotateEnv,
  run: string,
): Promise<AdoptedCredential> {
  const started = Date.now();
  const item: AdoptedCredential = {
    secret: { hub: hubName, ...t },
    status: 'failed',
    verification: [],
    steps: [],
    durationMs: 0,
  };
  const store = new SecretStore(hub, t);
  const rot = newRotation(store, rotateRequest(r, t), env, run);
  const log = new ApplyLog<'cluster'>();
  const made: { original?: Original } = {};
  let lock: { release: () => Promise<void> } | undefined;
  try {
    if (!r.dryRun) {
      lock = await store.lock(run, { lease: true, waitMs: 60_000 });
      rot.exclusive = true;
    }
    const secret = await getObject<Secret>(hub, SECRET, t.name, { namespace: t.namespace });
    if (!secret) throw new FleetError('not-found', `hub ${hubName}: Secret ${t.namespace}/${t.name} not found`);
    if (isFleetManaged(secret.metadata.labels)) {
      await resumeOrLeave(rot, hub, secret, item, r);
      return item;
    }
    await adoptFresh(rot, hub, secret, item, r, log, made);
  } catch (error) {
    await adoptionFailed(item, error, rot, env, {
      made: Boolean(made.original) || log.applied.length > 0,
      undo: () => undo(hub, rot, made.original, log),
      afterReplace: 'after the Secret got the new credential: the next creds adopt (or creds rotate) finishes it',
    });
  } finally {
    item.steps = rot.steps;
    await lock?.release().catch(() => undefined);
    item.durationMs = Date.now() - started;
    env.progress?.doing(store.where, undefined);
  }
  return item;
}

/**
 * An adoption that failed or was interrupted: what this run made is undone unless the credential was already replaced
 * (then the next run finishes it), and the item says which of the three happened (one wording for Secrets and files).
 */
export async function adoptionFailed(
  item: AdoptedCredential,
  error: unknown,
  rot: Rotation,
  env: RotateEnv,
  o: { made: boolean; undo: () => Promise<string | undefined>; afterReplace: string },
): Promise<void> {
  item.status = 'failed';
  let message = toErrorInfo(error);
  const undone =
    o.made && rot.at.phase !== 'replaced'
      ? await o.undo().catch((e: Error) => `the undo failed: ${e.message}`)
      : undefined;
  if (env.cancel?.interrupted) {
    const what =
      rot.at.phase === 'replaced'
        ? o.afterReplace
        : undone
          ? `before the new credential was written: ${undone}`
          : 'before anything was changed';
    message = toErrorInfo(env.cancel.error(what));
  } else if (undone) message = { ...message, message: `${message.message}; ${undone}` };
  item.error = message;
  item.reason = message.message;
}

/**
 * A Secret that already carries fleet's mark: an adoption an earlier run left half-done (a rotation claim) is finished
 * with rotation's steps; an adopted or generated one is fleet's already (creds rotate keeps it fresh).
 */
async function resumeOrLeave(
  rot: Rotation,
  hub: KubeClient,
  secret: Secret,
  item: AdoptedCredential,
  r: AdoptRequest,
): Promise<void> {
  const ann = secret.metadata.annotations ?? {};
  item.secret!.format = ann[ANNOTATIONS.format];
  const s = await readStored(rot);
  if (!s.state) {
    item.status = 'unchanged';
    item.reason = ann[ADOPTED_FROM]
      ? `adopted already (from ${ann[ADOPTED_FROM]}); creds rotate keeps it fresh`
      : 'written by fleet creds generate: nothing to adopt (creds rotate keeps it fresh)';
    return;
  }
  if (r.dryRun) {
    item.status = 'planned';
    item.reason = `would finish the interrupted ${ann[ADOPTED_FROM] ? 'adoption' : 'rotation'} (phase ${s.state.phase})`;
    return;
  }
  item.resumed = s.state.phase;
  const state = takeOver(rot, s.state);
  const found = await findTarget(rot, s);
  item.target = { cluster: found.ref.name, by: found.by };
  // The Secret may have been edited since the interrupted run: its entry must still reach the target.
  item.destination = await checkHeldServer(s.held.cluster, found.destination, rot.store.where, 'adopt', {
    signal: rot.env.cancel?.signal,
  });
  const oldClient =
    state.phase === 'claimed'
      ? await rot.env.connector.withCredential(found.destination, s.held.user, `${rot.store.where} (old credential)`)
      : undefined;
  item.after = { identity: s.identity, method: s.method, access: ann[ANNOTATIONS.access] ?? '', scope: '' };
  item.after.scope = ann[ANNOTATIONS.scope] ?? '';
  await rotateInto(
    rot,
    s,
    state,
    found.client,
    oldClient,
    item,
    found.destination,
    found.ref.name,
    secretSite(rot, hub),
  );
  item.status = 'adopted';
}

/** The inspection of the credential in an unmanaged Secret, then (unless --dry-run) its adoption. */
async function adoptFresh(
  rot: Rotation,
  hub: KubeClient,
  secret: Secret,
  item: AdoptedCredential,
  r: AdoptRequest,
  log: ApplyLog<'cluster'>,
  made: { original?: Original },
): Promise<void> {
  const where = rot.store.where;
  const detected = r.format ? { format: r.format } : detectFormat(secret);
  if (!detected || detected.format === 'unknown')
    throw new ConfigError(
      `${where}: not a consumer Secret of a format fleet knows${detected && 'reason' in detected ? ` (${detected.reason})` : ''}; name its format with --format`,
    );
  // A Secret a controller owns (Cluster API's KubeadmControlPlane makes `<cluster>-kubeconfig` and writes it again from
  // its own certificate) is that controller's to keep fresh: fleet's token would be overwritten, or fight it.
  const owner = (secret.metadata.ownerReferences ?? []).find((o) => o.controller);
  if (owner)
    throw new ConfigError(
      `${where} is controlled by ${owner.kind} ${owner.name}, which writes it: leave its credential to that controller`,
    );
  const format = detected.format;
  item.secret!.format = format;
  const codec = codecOf(format, where);
  let held: Held | undefined;
  try {
    held = codec.decode(secret);
  } catch (error) {
    throw new ConfigError(`${where}: the ${codec.key} key cannot be read: ${(error as Error).message}`);
  }
  if (!held) throw new ConfigError(`${where}: no credential in the ${format} key ${codec.key}`);
  registerSecret(held.user.token);
  registerSecret(held.user['client-key-data']);
  registerSecret(held.user.password);
  if (held.user.exec || held.user['auth-provider'])
    throw new ConfigError(
      `${where}: the credential is a plugin (${held.user.exec ? 'exec' : 'auth-provider'}), which holds no secret fleet could take over`,
    );

  // Basic authentication alone: kube-apiserver dropped it in 1.19 and treats such requests as anonymous, so there is
  // no identity to take over (a certificate or token beside it is what client-go would authenticate with instead).
  if ((held.user.username || held.user.password) && !held.user.token && !held.user['client-certificate-data'])
    throw new ConfigError(
      `${where}: the credential is basic authentication (username/password), which kube-apiserver has not accepted since 1.19: there is no identity to take over; write a new credential with creds generate`,
    );

  // The cluster to mint on, among the clusters the operator's configuration knows (--cluster, else by the Secret's
  // server and CA), with a credential that may ask who the held token is (or mint for the identity named). Nothing is
  // sent to the server the Secret names: its entry is checked against the cluster's (held-server.ts) before anything else.
  const method = 'token';
  rot.at.step = 'target';
  const found = await reachTarget(rot.request, recordedCluster({}, 'secret', held.cluster), rot.env, {
    what: where,
    method,
    id: r.into?.identity,
    self: rot.store.self,
  });
  rot.at.target = found.client;
  const target = found.client;
  item.target = { cluster: found.ref.name, by: found.by };
  item.destination = await checkHeldServer(held.cluster, found.destination, where, 'adopt', {
    signal: rot.env.cancel?.signal,
  });

  // Who the credential is, asked of the member (TokenReview with the operator's credential; a certificate is judged by
  // the member's own CA), and what it may do (auth rules' risk report, at the member).
  rot.at.step = 'inspect';
  const { before, oldClient } = await inspectCredential(found, held.user, r.into, where, rot.env.connector);
  item.before = before;
  const id = adoptedIdentity(before, r.into, where);
  if (!r.into) await requireMayMint(target, id, found.ref.name, where);
  before.tokenSecret = await legacyTokenSecret(target, before.identity, held.user.token);
  const { access, namespaces, objects } = await adoptGrant(target, found.ref, id, r, held.cluster, where);
  const annotations = describeAnnotations(id, access, namespaces, method);
  item.after = {
    identity: username(id),
    method,
    access: annotations[ANNOTATIONS.access],
    scope: describeScope(namespaces),
  };
  item.old = oldFate(before, held, r.revokeOld);

  if (r.dryRun) {
    item.status = 'planned';
    const deletion = await planOldDeletion(rot, item, before, {
      target,
      cluster: found.ref.name,
      token: held.user.token,
      revokeOld: r.revokeOld,
      site: secretSite(rot, hub),
    });
    item.reason = `would mint a bound token for ${username(id)} (${annotations[ANNOTATIONS.access]}, ${describeScope(namespaces)}) on ${found.ref.name}, verify it at ${item.destination.verifiedAt}, write it into ${where} (${format}) for server ${item.destination.server} (${item.destination.by})${deletion}`;
    return;
  }

  // From here the run changes things: a new identity's RBAC, then the Secret's mark with the rotation claim.
  for (const obj of objects) await log.apply(target, obj, 'cluster');
  rot.env.cancel?.check();
  item.objects = log.applied.map(({ kind, name, namespace, action }) => ({ kind, name, namespace, action }));
  const facts = await identityFacts(await found.ref.resolve(), target, found.ref);
  const key = `${short(`${rot.store.self!.namespace}/${rot.store.self!.name}`)}-${anchorSuffix()}`;
  const oldAnchor = r.revokeOld && before.tokenSecret ? parseRef(before.tokenSecret) : undefined;
  const state: RotationState = {
    phase: 'claimed',
    newAnchor: { namespace: id.namespace, name: anchorName(id.name, key) },
    oldAnchor,
    run: rot.run,
    started: new Date().toISOString(),
  };
  made.original = {
    labels: secret.metadata.labels,
    annotations: secret.metadata.annotations,
    data: { ...(secret.data ?? {}) },
  };
  const marked: Secret = {
    ...secret,
    metadata: {
      ...secret.metadata,
      labels: { ...(secret.metadata.labels ?? {}), ...MANAGED_BY_LABELS },
      annotations: {
        ...(secret.metadata.annotations ?? {}),
        ...annotations,
        [ANNOTATIONS.format]: format,
        [ANNOTATIONS.cluster]: found.ref.name,
        ...identityRecord(facts, 'secret'),
        [ANNOTATIONS.expires]: before.expires,
        [ANNOTATIONS.fingerprint]: kubeconfigSha256(held.kubeconfig),
        [ANNOTATIONS.lifetime]: String(r.durationSeconds),
        [ADOPTED_FROM]: `${before.identity} (${before.method}, expires ${before.expires})`,
        [ADOPTED_AT]: new Date().toISOString(),
        ...stateAnnotations(state),
      },
    },
  };
  await step(
    rot,
    'claim',
    () => putSecret(hub, marked, where, 'was changed by someone else since it was read; nothing was adopted'),
    () => 'marked as fleet-managed, adoption claimed',
    'claimed',
  );
  const s = await readStored(rot);
  await rotateInto(rot, s, state, target, oldClient, item, found.destination, found.ref.name, secretSite(rot, hub));
  item.status = 'adopted';
}

/** Without --service-account the identity is the held one's: the target's credential must be allowed to mint for it. */
export async function requireMayMint(
  target: KubeClient,
  id: Extract<Identity, { kind: 'ServiceAccount' }>,
  cluster: string,
  where: string,
): Promise<void> {
  if (!(await accessReview(target, { resource: mintPermission(id, 'token') })).allowed)
    throw new ConfigError(
      `${where}: the credential fleet reaches ${cluster} with may not mint a token for ${username(id)} (create serviceaccounts/token in ${id.namespace}); nothing was minted`,
    );
}

/** Where a Secret's adoption looks for other holders of the old token: the hub's other Secrets. */
function secretSite(rot: Rotation, hub: KubeClient): DeletionSite {
  return { hub: { client: hub, name: hub.context.contextName }, self: { hubSecret: rot.store.self } };
}

/**
 * Who the credential is, asked of the member: a token by TokenReview with the operator's own credential for the
 * member (`target.client`), a client certificate by SelfSubjectReview made with it at the member's destination (the
 * member's CA decides); what it may do (the risk codes of `auth rules`, reviewed with it at the member, in the first
 * namespace of a new identity's grant, else `default`), and when it expires. Never asked of the server the Secret or
 * file names. Shared by a Secret's and a file's adoption; the client for the held credential (at the member) is kept
 * for --revoke-old's proof.
 */
export async function inspectCredential(
  target: { client: KubeClient; destination: Destination },
  user: Held['user'],
  into: AdoptRequest['into'],
  where: string,
  connector: Connector,
  o: { userFiles?: boolean } = {},
): Promise<{ before: CredentialBefore; oldClient: KubeClient }> {
  const oldClient = await connector.withCredential(target.destination, user, `${where} (the credential in it)`, o);
  // A credential the server does not recognise is taken as system:anonymous (forbidden to ask, or answered as such):
  // said as that, not as a 403 for a user nobody named.
  const anonymous = () =>
    new FleetError(
      'unauthorized',
      `${where}: the API server does not accept the credential (its requests are anonymous): there is no identity to take over`,
    );
  const selfReview = () =>
    selfSubjectReview(oldClient).catch((error: unknown) => {
      throw statusOf(error) === 403 && /"system:anonymous"/.test(toErrorInfo(error).message) ? anonymous() : error;
    });
  let me: { username: string; groups?: string[] };
  if (user.token) {
    // The operator's credential asks: the member's authenticators judge the token. A credential that may not review
    // tokens (403) falls back to the token's own SelfSubjectReview, still at the member's destination.
    const review = await tokenReview(target.client, user.token).catch((error: unknown) => {
      if (statusOf(error) === 403) return undefined;
      throw error;
    });
    if (review && !review.authenticated) throw anonymous();
    me = review?.authenticated ? review : await selfReview();
  } else me = await selfReview();
  if (me.username === 'system:anonymous') throw anonymous();
  const described = await describeUser(user);
  const rules = await rulesReview(oldClient, into?.namespaces[0] ?? 'default').catch((error: unknown) =>
    toErrorInfo(error),
  );
  const before: CredentialBefore = {
    identity: me.username,
    groups: me.groups ?? [],
    method: described.method,
    expires: described.expires ?? 'never',
    risks: 'risks' in rules ? summarizeRisks(rules.risks) : [],
    ...('risks' in rules ? {} : { risksUnknown: rules.message }),
  };
  return { before, oldClient };
}

/** The identity the new credential is for: a new one (--service-account with a grant), else the same ServiceAccount. */
export function adoptedIdentity(
  before: CredentialBefore,
  into: AdoptRequest['into'],
  where: string,
): Extract<Identity, { kind: 'ServiceAccount' }> {
  const sameSa = parseIdentity(before.identity);
  if (!into && !sameSa)
    throw new ConfigError(
      `${where}: the credential is ${before.identity} (${before.method}), not a ServiceAccount, so fleet cannot mint for the same identity; name the identity to adopt into with --service-account NAMESPACE/NAME and a grant (--role, --rules or --cluster-role)`,
    );
  const id = into?.identity ?? sameSa!;
  // Tokens only: rotation takes a certificate's groups from the certificate held, which for an adopted admin
  // certificate would be system:masters again (docs/creds.md says so).
  if (id.kind !== 'ServiceAccount')
    throw new ConfigError(
      'creds adopt mints bound tokens: name a ServiceAccount with --service-account NAMESPACE/NAME',
    );
  return id;
}

/** The legacy token Secret on the cluster whose token is the old one: what fleet can prove is this credential (--revoke-old). */
export async function legacyTokenSecret(
  target: KubeClient,
  identity: string,
  token: string | undefined,
): Promise<string | undefined> {
  const owner = parseIdentity(identity);
  if (!owner || owner.kind !== 'ServiceAccount' || !token) return undefined;
  const tokens = await listObjects<Secret>(target, SECRET, {
    namespace: owner.namespace,
    fieldSelector: `type=${LEGACY_TOKEN_TYPE}`,
    what: `list token Secrets in ${owner.namespace}`,
  });
  const match = tokens.find(
    (s) =>
      s.metadata.annotations?.['kubernetes.io/service-account.name'] === owner.name && secretText(s, 'token') === token,
  );
  return match ? `${owner.namespace}/${match.metadata.name}` : undefined;
}

/**
 * The grant of the adopted credential: a new identity's (checked for risk as generate checks it, with generate's own
 * RBAC objects to apply, its anchor left to rotation's mint), or the same ServiceAccount's binding as it is.
 */
export async function adoptGrant(
  target: KubeClient,
  ref: ClusterRef,
  id: Extract<Identity, { kind: 'ServiceAccount' }>,
  r: Pick<AdoptRequest, 'into' | 'durationSeconds'>,
  cluster: Held['cluster'],
  where: string,
): Promise<{ access: Access; namespaces: string[]; objects: KubeObject[] }> {
  if (!r.into) return { ...(await currentGrant(target, id, where)), objects: [] };
  const access = await resolveAccess(r.into.access, target);
  // A preset or rules file was checked before anything was contacted (checkAdoptGrant); a ClusterRole only now.
  if (!r.into.allowRisky)
    refuseRisky(
      assessGrant(access.rules, r.into.namespaces.length === 0),
      `to grant ${describeAccess(access)} ${describeScope(r.into.namespaces)}`,
    );
  const namespaces = r.into.namespaces;
  const exists = Boolean(await getObject(target, SERVICE_ACCOUNT, id.name, { namespace: id.namespace }));
  const p = generatePlan(
    {
      request: {
        ref,
        identity: id,
        access: r.into.access,
        namespaces,
        method: 'token',
        durationSeconds: r.durationSeconds,
        destination: { kind: 'stdout' },
      },
    },
    { target, access, missingNamespaces: [], serviceAccountExists: exists, cluster, clusterFacts: {} },
  );
  // generate's own objects without its anchor: the anchor is rotation's (named in the claim, made by mint).
  return { access, namespaces, objects: p.objects.filter((o) => o !== p.credentialObject) };
}

/** `ns/name`, as rotation keeps anchors. */
export function parseRef(text: string): { namespace: string; name: string } {
  const [namespace, name] = text.split('/');
  return { namespace, name };
}

/** The ServiceAccount's grant as it is: its first ClusterRoleBinding, else a RoleBinding to a ClusterRole. */
async function currentGrant(
  target: KubeClient,
  sa: { namespace: string; name: string },
  where: string,
): Promise<{ access: Access; namespaces: string[] }> {
  type Binding = Wire<V1ClusterRoleBinding | V1RoleBinding> & { metadata: ObjectMeta };
  const binds = (b: Binding) =>
    (b.subjects ?? []).some((x) => x.kind === 'ServiceAccount' && x.name === sa.name && x.namespace === sa.namespace);
  const crb = (await listObjects<Binding>(target, CLUSTER_ROLE_BINDING)).find(binds);
  if (crb) return { access: { kind: 'cluster-role', name: crb.roleRef.name, rules: [] }, namespaces: [] };
  const rbs = (await listObjects<Binding>(target, ROLE_BINDING)).filter(
    (b) => binds(b) && b.roleRef.kind === 'ClusterRole',
  );
  if (rbs.length > 0)
    return {
      access: { kind: 'cluster-role', name: rbs[0].roleRef.name, rules: [] },
      namespaces: [
        ...new Set(rbs.filter((b) => b.roleRef.name === rbs[0].roleRef.name).map((b) => b.metadata.namespace!)),
      ],
    };
  throw new ConfigError(
    `${where}: ServiceAccount ${sa.namespace}/${sa.name} has no ClusterRoleBinding, and no RoleBinding to a ClusterRole, that fleet could verify a new credential against; name a grant (--service-account with --role, --rules or --cluster-role)`,
  );
}

/** What becomes of the credential that was in the Secret, in plain words. */
export function oldFate(
  before: CredentialBefore,
  held: Pick<Held, 'user'>,
  revokeOld: boolean,
): NonNullable<AdoptedCredential['old']> {
  if (before.method === 'client-cert') {
    const notAfter = certNotAfter(held.user);
    return {
      valid: true,
      revoked: false,
      notAfter,
      reason: `a client certificate cannot be revoked: it stays valid until ${notAfter} (its NotAfter)`,
      heldBy: ['whoever has its key (copies of this Secret, the kubeconfig it came from)'],
    };
  }
  if (before.tokenSecret)
    return {
      valid: true,
      revoked: false,
      reason: `still valid: it never expires; --revoke-old deletes its token Secret ${before.tokenSecret} and checks it is refused`,
      heldBy: [
        `the token Secret ${before.tokenSecret} on the cluster (anyone who may read Secrets there)`,
        'any copy made of it',
      ],
    };
  if (before.method === 'static-token')
    return {
      valid: true,
      revoked: false,
      reason: `still valid: a static token of the API server's --token-auth-file; fleet cannot revoke it (remove it from that file)${revokeOld ? ' (--revoke-old: nothing fleet can prove is this credential)' : ''}`,
      heldBy: ["the API server's token file", 'any copy made of it'],
    };
  return {
    valid: true,
    revoked: false,
    reason: `still valid until ${before.expires}${revokeOld ? ': fleet found no object it could prove is this credential (no legacy token Secret holds it)' : ''}`,
    heldBy: ['any copy made of it'],
  };
}

/** Where an adoption looks for other holders of the old token besides the member and the operator's files. */
export type DeletionSite = Pick<TokenSecretDeletion, 'hub' | 'self'>;

/**
 * --dry-run with --revoke-old: what the deletion of the old token Secret would meet (still-used.ts), recorded in
 * `old` as a run would record it, and the end of the plan's sentence.
 */
export async function planOldDeletion(
  rot: Rotation,
  item: AdoptedCredential,
  before: CredentialBefore,
  o: { target: KubeClient; cluster: string; token?: string; revokeOld: boolean; site: DeletionSite },
): Promise<string> {
  if (!o.revokeOld || !before.tokenSecret) return '';
  const secret = parseRef(before.tokenSecret);
  const used = await stillUsed(
    {
      secret,
      member: o.target,
      memberName: o.cluster,
      tokens: [o.token],
      clusters: rot.request.clusters,
      ...o.site,
    },
    rot.env.guard,
  );
  const what = `the old token Secret ${before.tokenSecret} on ${o.cluster}`;
  const forced = Boolean(rot.env.guard?.force);
  if (used.unchecked.length > 0) item.old!.unchecked = used.unchecked;
  if (used.users.length === 0) return ` and delete ${what}`;
  item.old!.stillUsed = used.users;
  if (forced) return ` and delete ${what} although still used by ${used.users.join(', ')} (--force)`;
  item.old!.reason = `would be kept: ${usedText(what, used, false)}`;
  item.old!.heldBy = [...used.users, ...item.old!.heldBy];
  return `, keeping ${what}: still used by ${used.users.join(', ')} (--force deletes it anyway)`;
}

/**
 * Rotation's steps from a claim: mint on the target, verify, replace the Secret (resourceVersion precondition),
 * delete the old token Secret the claim names and prove the old token refused, finish. A verification that fails
 * lifts the claim (abandon) and throws. Before the deletion, whoever else still uses the old token (the operator's own
 * kubeconfig, a workload, another hub Secret: still-used.ts) keeps it: the adoption is finished with the old token
 * left valid and said why, unless --force.
 */
export async function rotateInto(
  rot: Rotation,
  s: Stored,
  claimedOrReplaced: RotationState,
  target: KubeClient,
  oldClient: KubeClient | undefined,
  item: AdoptedCredential,
  destination: Destination,
  cluster: string,
  site: DeletionSite,
): Promise<void> {
  let state = claimedOrReplaced;
  if (state.phase === 'claimed') {
    const grant = await rot.store.grant(target);
    const minted = await mint(rot, s, state, target);
    item.verification = await verify(rot, s, minted, grant, destination);
    item.after = {
      ...item.after!,
      expires: minted.issued.expires,
      anchor: refText(state.newAnchor),
      ...(minted.lifetime ? { lifetime: minted.lifetime } : {}),
      fingerprint: `sha256:${kubeconfigSha256(minted.kubeconfig)}`,
    };
    if (!verified(item.verification)) await abandon(rot, state, target, item.verification);
    state = await replace(rot, state, minted, target);
  }
  const old = state.oldAnchor;
  if (old) {
    rot.at.step = 'still-used';
    const used = await stillUsed(
      {
        secret: old,
        member: target,
        memberName: cluster,
        // Only a claim this run made still has the old credential in hand (after a replace, s holds the new one).
        tokens: [oldClient ? s.held.user.token : undefined],
        clusters: rot.request.clusters,
        ...site,
      },
      rot.env.guard,
    );
    const what = `the old token Secret ${refText(old)} on ${cluster}`;
    const forced = Boolean(rot.env.guard?.force);
    const noted = {
      ...(used.users.length > 0 ? { stillUsed: used.users } : {}),
      ...(used.unchecked.length > 0 ? { unchecked: used.unchecked } : {}),
    };
    if (used.users.length > 0 && !forced) {
      // Adopted all the same (the Secret holds the new credential); the old token stays valid, and the reason says
      // who uses it and how to delete it once nothing does.
      item.old = {
        valid: true,
        revoked: false,
        heldBy: used.users,
        ...noted,
        reason: `kept: ${usedText(what, used, false)} (or, once nothing uses it, delete it yourself: kubectl delete secret ${old.name} -n ${old.namespace})`,
      };
      await finish(rot);
      return;
    }
    await step(
      rot,
      'revoke',
      () => deleteObject(target, SECRET, old.name, { namespace: old.namespace }),
      () => `deleted the old token Secret ${refText(old)}`,
    );
    const dead = oldClient
      ? await step(
          rot,
          'confirm-revoked',
          () =>
            confirmRefused(rot.env.progress, oldClient, {
              text: `${rot.store.where}: waiting for the API server to refuse the old token`,
              finishing: `the adoption of ${rot.store.where} (it holds its new credential and the old token Secret is deleted; waiting for the API server to refuse the old token)`,
              leaves: `${rot.store.where} adopted and holding the new credential, its last step for the next run to finish`,
            }),
          (d) => (d ? 'the old token is refused (401)' : 'the old token still authenticates'),
        )
      : undefined;
    const overrode = used.users.length > 0 ? `; ${usedText(what, used, true)}` : '';
    item.old = {
      valid: dead === false,
      revoked: dead !== false,
      heldBy: [],
      ...noted,
      reason:
        (dead === undefined
          ? `the old token Secret ${refText(old)} was deleted (an earlier, interrupted run replaced the token, so it could not be probed here)`
          : dead
            ? `the old token Secret ${refText(old)} was deleted; the old token is refused (401)`
            : `the old token Secret ${refText(old)} was deleted, but the old token still authenticated after 30s`) +
        overrode,
    };
    if (dead === false) throw new FleetError('server', `${rot.store.where}: ${item.old.reason}`);
  }
  await finish(rot);
}

/** PUT with the resourceVersion the Secret was read at; a 409 is said as `conflict`. */
async function putSecret(hub: KubeClient, s: Secret, where: string, conflict: string): Promise<void> {
  try {
    await updateObject<Secret>(
      hub,
      { ...s, apiVersion: 'v1', kind: 'Secret' },
      {
        what: `update ${where}`,
      },
    );
  } catch (error) {
    if (statusOf(error) === 409) throw new FleetError('server', `${where} ${conflict}`);
    throw error;
  }
}

/**
 * A failure or interrupt before the Secret got the new credential: the new anchor (and every token bound to it) is
 * deleted, the Secret's labels and annotations are put back as they were (only while its data is still the old one),
 * and the RBAC a new identity got is removed. Says what it did.
 */
async function undo(
  hub: KubeClient,
  rot: Rotation,
  original: Original | undefined,
  log: ApplyLog<'cluster'>,
): Promise<string | undefined> {
  const parts: string[] = [];
  const { namespace, name } = rot.store.self!;
  rot.env.cancel?.undoing(() => [`the adoption mark on ${rot.store.where}`, ...log.pending()]);
  const now = await getObject<Secret>(hub, SECRET, name, { namespace });
  if (original && now && isFleetManaged(now.metadata.labels) && !isFleetManaged(original.labels)) {
    const claim = now.metadata.annotations?.['fleet.dev/rotation-new-anchor'];
    if (claim && rot.at.target) {
      const ref = parseRef(claim);
      await deleteObject(rot.at.target, SECRET, ref.name, { namespace: ref.namespace }).catch(() => undefined);
      parts.push(`the new anchor ${claim} deleted`);
    }
    if (JSON.stringify(now.data ?? {}) === JSON.stringify(original.data)) {
      await putSecret(
        hub,
        {
          ...now,
          metadata: {
            ...now.metadata,
            labels: original.labels ?? {},
            annotations: withoutState(original.annotations ?? {}),
          },
        },
        rot.store.where,
        'changed while the adoption was undone; its labels and annotations were left as they are',
      );
      parts.push(`${rot.store.where} is as it was (the old credential in it, fleet's mark removed)`);
    }
  } else if (now && !isFleetManaged(now.metadata.labels)) parts.push(`${rot.store.where} is unchanged`);
  const failed = await log.rollback();
  if (log.applied.some((o) => o.action === 'created'))
    parts.push(
      failed.length > 0 ? `could not remove: ${failed.join('; ')}` : 'the RBAC objects this run created were removed',
    );
  rot.at.phase = 'unchanged';
  return parts.join('; ') || undefined;
}
