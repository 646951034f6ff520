import { createHash } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';

import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Namespace,
  V1Role,
  V1RoleBinding,
  V1Secret,
} from '@kubernetes/client-node';

import { ConfigError, type ErrorInfo, FleetError, toErrorInfo } from '../base/errors.js';
import { namespacedName } from '../base/names.js';
import { loadYamlIfValid } from '../base/yaml.js';
import type { HubSpec } from '../config/fleet-config.js';
import type { KubeClient } from '../kube/client.js';
import { statusOf } from '../kube/errors.js';
import type { KubeObject, ObjectMeta, Wire } from '../kube/objects.js';
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  NAMESPACE,
  ROLE,
  ROLE_BINDING,
  type Resource,
  SECRET,
  SERVICE_ACCOUNT,
  resourceOf,
} from '../kube/resources.js';
import { deleteObject, getObject, listObjects } from '../kube/typed.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { KubeconfigDoc, UserEntry } from '../kubeconfig/types.js';
import type { Secret } from '../providers/hub/objects.js';
import type { ClusterRef } from '../providers/types.js';
import { codecOf } from './codecs/index.js';
import { KUBECONFIG_EXTENSION, fileFacts, recordedContext, withoutContext } from './kubeconfig-out.js';
import { Conflict, writeKubeconfigIfUnchanged } from './rotation-store.js';
import { ANNOTATIONS, CREDENTIAL_LABEL, MANAGED_BY_SELECTOR, isFleetManaged } from './labels.js';
import { METHODS, type Method, anchorName, legacySecretName } from './methods.js';
import { type Access, type Identity, credentialId, rbacObjects } from './rbac.js';
import { type RotateEnv, type RotateRequest, confirmRefused, reachTarget } from './rotation-steps.js';
import { certNotAfter, identityOf } from './credential-record.js';
import { recordedCluster } from './cluster-identity.js';
import { ROTATION } from './rotation-state.js';
import type { ContextOrigin } from '../kubeconfig/trust.js';
import { jwtClaims } from '../kubeconfig/credentials.js';
import { counted } from '../base/text.js';
import { type StillUsed, stillUsed, uncheckedText, usedText } from './still-used.js';
import { kernelPath } from '../base/paths.js';

/**
 * `fleet creds revoke`: the end of a credential's life. For a hub Secret or a kubeconfig file `creds generate` wrote, it
 * deletes the credential (the anchor Secret a bound token hangs on, or the legacy token Secret), the RBAC and the
 * ServiceAccount fleet made for its identity unless another credential of that identity still needs them, proves the old
 * credential is refused, and only then deletes the consumer Secret or file. That order makes an interrupted revoke
 * re-runnable: the record that names everything (the Secret or the file) goes last, and every deletion before it treats
 * "already gone" as done.
 */
export interface RevokeRequest {
  /** NAMESPACE/NAME of hub Secrets creds generate wrote. */
  names: Array<{ namespace: string; name: string }>;
  /** Kubeconfig files creds generate --out wrote. */
  files: string[];
  dryRun?: boolean;
  hub?: HubSpec;
  /** Resolves a cluster by name through fleet's providers (the old-style name annotation, --cluster). */
  cluster: (name: string) => Promise<ClusterRef>;
  /** Every cluster fleet's providers know: where the recorded cluster identity is looked for (cluster-identity.ts). */
  clusters?: () => Promise<ClusterRef[]>;
  /** --cluster: revoke on this cluster whatever the credential recorded (its cluster ID is still checked). */
  clusterOverride?: string;
  /** How long the old credential may keep authenticating after its deletion before that is a failure (default 30s). */
  confirmTimeoutMs?: number;
}

export type RevokeEnv = RotateEnv;

/** Where an object was (or would be) deleted: on the credential's cluster, on the hub, or a file on this machine. */
export interface RevokedObject {
  kind: string;
  namespace?: string;
  name: string;
  on: 'cluster' | 'hub' | 'file';
  /** `deleted` by this run, `already-gone` (an earlier, interrupted run or someone else), `would-delete` (--dry-run). */
  action: 'deleted' | 'already-gone' | 'would-delete';
}

export interface KeptObject {
  kind: string;
  namespace?: string;
  name: string;
  reason: string;
  /** `hub` for an object on the hub (the namespace generate created for the Secret); absent: on the cluster. */
  on?: 'hub';
}

/** The stable JSON shape of one credential's revocation (docs/creds.md). */
export interface RevokedCredential {
  secret?: { hub: string; namespace: string; name: string; format?: string };
  file?: { path: string };
  cluster?: string;
  method?: string;
  identity?: string;
  /** `not-found`: no such Secret or file (already revoked, or never written). */
  status: 'revoked' | 'failed' | 'planned' | 'not-found';
  reason?: string;
  deleted: RevokedObject[];
  kept: KeptObject[];
  /** Whether the server now refuses the old credential (a client certificate cannot be refused: said here). */
  refused?: { done: boolean; reason: string };
  /** Who else still uses the credential (still-used.ts): the item is refused unless --force (then deleted, still named). */
  stillUsed?: string[];
  /** What could not be looked at before the deletion (no list permission, no hub in the run), with why. */
  unchecked?: string[];
  durationMs: number;
  error?: ErrorInfo;
}

export interface RevocationReport {
  kind: 'CredentialRevocation';
  dryRun: boolean;
  hub: string;
  items: RevokedCredential[];
}

/**
 * The two connections revoke makes, in one place: the hub (today rotate's rule) and the cluster a credential names (its
 * `fleet.dev/credential-cluster`, through fleet's providers). The record is passed whole, so a resolution by recorded
 * cluster identity (server, CA, cluster ID) can replace this function without touching the rest.
 */
export function reach(r: RevokeRequest, env: RevokeEnv) {
  const find = { cluster: r.cluster, clusters: r.clusters, clusterOverride: r.clusterOverride } as RotateRequest;
  return {
    hub: () => env.connector.hub(r.hub, env.env),
    // The same resolution as rotate: the recorded server, CA and cluster ID among the clusters fleet knows.
    target: async (rec: CredentialRecord) => {
      const held = contextFromKubeconfigText(rec.kubeconfig, rec.where, recordOrigin(rec), rec.context).cluster;
      const found = await reachTarget(find, recordedCluster(rec.facts, rec.consumer.kind, held), env, {
        what: rec.where,
        method: rec.method,
        id: rec.id,
      });
      return found;
    },
  };
}

/** A credential as its record (hub Secret annotations or the file's extension) describes it. */
/** A record read from a file the user named is the user's; one read from a hub Secret is hub data (see rotate.ts). */
function recordOrigin(rec: CredentialRecord): ContextOrigin | 'user' {
  return rec.consumer.kind === 'file' ? 'user' : { object: rec.where };
}

interface CredentialRecord {
  item: RevokedCredential;
  where: string;
  method: Method;
  cluster: string;
  facts: Record<string, string>;
  kubeconfig: string;
  user: UserEntry;
  id: Identity;
  /** Anchor / legacy token Secrets the record names (the current one, and a rotation's new and old). */
  anchors: Array<{ namespace: string; name: string }>;
  /** A file's context whose user is the credential (an adopted file's recorded one; else the current context). */
  context?: string;
  /** That context's user entry's name (a file's): the operator's own kubeconfig may be this very file. */
  userName?: string;
  /** The record itself, deleted last. */
  consumer: { kind: 'secret'; secret: Secret } | { kind: 'file'; path: string; text: string };
}

const key = (o: { kind: string; namespace?: string; name: string }) => `${o.kind}/${o.namespace ?? ''}/${o.name}`;
const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
const annotationsOf = (o: { metadata: object }) =>
  (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};

/**
 * The Secret a ServiceAccount token names in its own claims: a bound token its bound object (`kubernetes.io.secret`), a
 * legacy token its Secret (`kubernetes.io/serviceaccount/secret.name`). Read, not verified: it only picks what to delete.
 */
export function tokenSecret(token: string | undefined): string | undefined {
  const c = jwtClaims(token);
  if (!c) return undefined;
  const bound = c['kubernetes.io'] as { namespace?: string; secret?: { name?: string } } | undefined;
  if (bound?.namespace && bound.secret?.name) return `${bound.namespace}/${bound.secret.name}`;
  const ns = c['kubernetes.io/serviceaccount/namespace'];
  const name = c['kubernetes.io/serviceaccount/secret.name'];
  return typeof ns === 'string' && typeof name === 'string' ? `${ns}/${name}` : undefined;
}

/**
 * Which anchors a credential hangs on: the one its token names (so a file moved since generate still finds it), else the
 * one its record names; generate records none for a legacy token or a file, whose names derive from the destination.
 * A rotation left half-way adds its new and old anchors.
 */
export function ownAnchors(
  id: Identity,
  method: Method,
  facts: Record<string, string>,
  token: string | undefined,
  destinationKey: string,
): Array<{ namespace: string; name: string }> {
  if (id.kind !== 'ServiceAccount' || method === 'client-cert') return [];
  const derived = `${id.namespace}/${method === 'token' ? anchorName(id.name, destinationKey) : legacySecretName(id.name, destinationKey)}`;
  const names = [
    tokenSecret(token) ?? facts[ANNOTATIONS.anchor] ?? facts.anchor ?? derived,
    facts[ROTATION.newAnchor],
    facts[ROTATION.oldAnchor],
    facts['rotation-new-anchor'],
    facts['rotation-old-anchor'],
  ];
  const out = new Map<string, { namespace: string; name: string }>();
  for (const n of names) {
    const r = namespacedName(n);
    if (r) out.set(`${r.namespace}/${r.name}`, r);
  }
  return [...out.values()];
}

/** The grant a credential's annotations describe, enough to derive the names of its RBAC objects (not its rules). */
function accessOf(text: string | undefined): Access | undefined {
  if (text?.startsWith('preset ')) return { kind: 'preset', name: text.slice('preset '.length), rules: [] };
  if (text?.startsWith('rules from ')) return { kind: 'rules', file: text.slice('rules from '.length), rules: [] };
  if (text?.startsWith('ClusterRole '))
    return { kind: 'cluster-role', name: text.slice('ClusterRole '.length), rules: [] };
  return undefined;
}

function scopeOf(text: string | undefined): string[] | undefined {
  if (text === 'cluster-wide') return [];
  if (text?.startsWith('namespaces ')) return text.slice('namespaces '.length).split(',').filter(Boolean);
  return undefined;
}

function notFleets(where: string, why: string): ConfigError {
  return new ConfigError(`${where} ${why}: fleet revokes only what it made; nothing was deleted`);
}

async function readSecretRecord(
  hub: KubeClient,
  hubName: string,
  t: { namespace: string; name: string },
): Promise<CredentialRecord | RevokedCredential> {
  const item: RevokedCredential = {
    secret: { hub: hubName, ...t },
    status: 'failed',
    reason: undefined,
    deleted: [],
    kept: [],
    refused: undefined,
    durationMs: 0,
  };
  const where = `hub ${hubName}: Secret ${t.namespace}/${t.name}`;
  const secret = await getObject<Secret>(hub, SECRET, t.name, { namespace: t.namespace });
  if (!secret) {
    item.status = 'not-found';
    item.reason = `${where} does not exist: nothing to revoke (already revoked, or never written)`;
    return item;
  }
  const a = annotationsOf(secret);
  const format = a[ANNOTATIONS.format];
  if (!isFleetManaged(secret.metadata.labels) || !format || !a[ANNOTATIONS.method] || !a[ANNOTATIONS.cluster]) {
    throw notFleets(where, 'was not written by fleet creds generate (no managed-by label or credential annotations)');
  }
  const codec = codecOf(format, where);
  item.secret!.format = format;
  const method = a[ANNOTATIONS.method] as Method;
  if (!METHODS.includes(method)) throw notFleets(where, `names an unknown credential method "${method}"`);
  const held = codec.decode(secret);
  if (!held) throw new ConfigError(`${where}: no kubeconfig in the ${format} keys; nothing was deleted`);
  registerSecret(held.user.token);
  registerSecret(held.user['client-key-data']);
  const id = identityOf(method, a[ANNOTATIONS.identity], held.user);
  if (!id)
    throw new ConfigError(
      `${where}: identity annotation "${a[ANNOTATIONS.identity] ?? ''}" does not fit method ${method}; nothing was deleted`,
    );
  Object.assign(item, { cluster: a[ANNOTATIONS.cluster], method, identity: a[ANNOTATIONS.identity] });
  // generate's destination key for a Secret (generate.ts destinationKey): the legacy token Secret's name derives from it.
  const destinationKey = short(`secret:${t.namespace}/${t.name}:${format}`);
  return {
    item,
    where,
    method,
    cluster: a[ANNOTATIONS.cluster],
    facts: a,
    kubeconfig: held.kubeconfig,
    user: held.user,
    id,
    anchors: ownAnchors(id, method, a, held.user.token, destinationKey),
    consumer: { kind: 'secret', secret },
  };
}

async function readFileRecord(path: string): Promise<CredentialRecord | RevokedCredential> {
  const abs = kernelPath(path);
  const item: RevokedCredential = {
    file: { path: abs },
    status: 'failed',
    reason: undefined,
    deleted: [],
    kept: [],
    refused: undefined,
    durationMs: 0,
  };
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      item.status = 'not-found';
      item.reason = `${abs} does not exist: nothing to revoke (already revoked, or never written)`;
      return item;
    }
    throw new ConfigError(`--file ${abs}: ${(error as Error).message}`);
  }
  const doc = loadYamlIfValid(text) as KubeconfigDoc | undefined;
  const facts = fileFacts(doc);
  if (!doc || !facts || !facts.method || !facts.cluster)
    throw notFleets(`--file ${abs}`, `was not written by fleet creds generate (no ${KUBECONFIG_EXTENSION} extension)`);
  const method = facts.method as Method;
  if (!METHODS.includes(method)) throw notFleets(`--file ${abs}`, `names an unknown credential method "${method}"`);
  const context = recordedContext(doc, facts);
  const ctx = doc.contexts?.find((c) => c.name === context)?.context;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user;
  if (!user) throw new ConfigError(`--file ${abs}: context ${context ?? '(none)'} has no user; nothing was deleted`);
  registerSecret(user.token);
  registerSecret(user['client-key-data']);
  const id = identityOf(method, facts.identity, user);
  if (!id)
    throw new ConfigError(
      `--file ${abs}: identity "${facts.identity ?? ''}" does not fit method ${method}; nothing was deleted`,
    );
  Object.assign(item, { cluster: facts.cluster, method, identity: facts.identity });
  return {
    item,
    where: abs,
    method,
    cluster: facts.cluster,
    facts,
    kubeconfig: text,
    context,
    userName: ctx?.user,
    user,
    id,
    // generate's destination key for a file (generate.ts destinationKey): the anchor's name derives from the absolute path.
    anchors: ownAnchors(id, method, facts, user.token, short(`file:${abs}`)),
    consumer: { kind: 'file', path: abs, text },
  };
}

/**
 * Reads every record first: a Secret or file fleet did not write, or one whose record cannot be read, refuses the whole
 * run (exit 2) before anything is deleted anywhere.
 */
export async function revokeCredentials(r: RevokeRequest, env: RevokeEnv): Promise<RevocationReport> {
  const connect = reach(r, env);
  const records: Array<CredentialRecord | RevokedCredential> = [];
  let hub: KubeClient | undefined;
  if (r.names.length > 0) {
    hub = await connect.hub();
    for (const t of r.names) records.push(await readSecretRecord(hub, hub.context.contextName, t));
  }
  for (const f of r.files) records.push(await readFileRecord(f));
  // Credentials revoked by this same run do not keep each other's RBAC alive (nor in the --dry-run plan). One after
  // another, so that each item's view of the cluster includes what the previous ones deleted.
  const inRun = new Set<string>();
  for (const rec of records) {
    if (!('consumer' in rec)) continue;
    for (const a of rec.anchors) inRun.add(`${rec.cluster}|${a.namespace}/${a.name}`);
    if (rec.consumer.kind === 'secret')
      inRun.add(`hub|${rec.consumer.secret.metadata.namespace}/${rec.consumer.secret.metadata.name}`);
  }
  const handled = new Set<string>();
  const items: RevokedCredential[] = [];
  const count = { done: 0, total: records.length, failed: 0 };
  const counted = (item: RevokedCredential) => {
    items.push(item);
    count.done++;
    if (item.status === 'failed' || item.status === 'not-found') count.failed++;
    env.progress?.count({ ...count });
  };
  env.progress?.count({ ...count });
  for (const rec of records) {
    if (!('consumer' in rec)) {
      counted(rec);
      continue;
    }
    const started = Date.now();
    try {
      await revokeOne(rec, r, env, connect, hub, inRun, handled);
    } catch (error) {
      rec.item.status = 'failed';
      rec.item.error = toErrorInfo(error);
      rec.item.reason ??= rec.item.error.message;
    } finally {
      env.progress?.doing(rec.where, undefined);
    }
    rec.item.durationMs = Date.now() - started;
    counted(rec.item);
  }
  return { kind: 'CredentialRevocation', dryRun: Boolean(r.dryRun), hub: hub?.context.contextName ?? '', items };
}

/** An object fleet labelled, as listed (a listed object always has a name). */
type Labelled<T> = Wire<T> & { metadata: ObjectMeta };

/** The objects of a resource (in one namespace, or all) that carry the labels. */
async function list<T>(
  client: KubeClient,
  r: Resource,
  labelSelector: string,
  namespace?: string,
): Promise<Array<Labelled<T>>> {
  return listObjects<Labelled<T>>(client, r, { namespace, labelSelector });
}

/** Bindings before roles: the order they are deleted in. */
const RBAC_KINDS: Resource[] = [CLUSTER_ROLE_BINDING, ROLE_BINDING, CLUSTER_ROLE, ROLE];

/** Another credential of the same identity, and the RBAC object keys it needs (undefined: cannot tell, so all). */
interface Other {
  what: string;
  needs?: Set<string>;
}

function needsOf(id: Identity, a: Record<string, string>): Set<string> | undefined {
  const access = accessOf(a[ANNOTATIONS.access]);
  const scope = scopeOf(a[ANNOTATIONS.scope]);
  if (!access || !scope) return undefined;
  return new Set(
    rbacObjects(id, access, scope, a[ANNOTATIONS.method] ?? '').map((o) =>
      key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }),
    ),
  );
}

/**
 * The other credentials of this identity, which keep its RBAC and ServiceAccount alive. A token credential of a
 * ServiceAccount always has an anchor (or legacy token Secret) on the cluster labelled for the identity, wherever its
 * consumer lives. A client certificate leaves nothing on the cluster: the hub's fleet Secrets for the same user and
 * cluster are what can be seen (a certificate in a kubeconfig file elsewhere cannot).
 */
async function otherCredentials(
  rec: CredentialRecord,
  target: KubeClient,
  hub: KubeClient | undefined,
  inRun: Set<string>,
): Promise<Other[]> {
  if (rec.id.kind === 'ServiceAccount') {
    const secrets = await list<V1Secret>(
      target,
      SECRET,
      `${CREDENTIAL_LABEL}=${credentialId(rec.id)}`,
      rec.id.namespace,
    );
    return secrets
      .filter((s) => !inRun.has(`${rec.cluster}|${s.metadata.namespace}/${s.metadata.name}`))
      .map((s) => ({
        what: `Secret ${s.metadata.namespace}/${s.metadata.name} (another credential's ${s.type === 'kubernetes.io/service-account-token' ? 'legacy token' : 'anchor'})`,
        needs: needsOf(rec.id, annotationsOf(s)),
      }));
  }
  if (!hub) return [];
  let secrets: Array<Labelled<V1Secret>>;
  try {
    secrets = await list<V1Secret>(hub, SECRET, MANAGED_BY_SELECTOR);
  } catch (error) {
    // Cannot tell whether another certificate of this user needs the grant: keep it, and say why.
    return [{ what: `credentials fleet could not look for (hub Secrets not listed: ${toErrorInfo(error).message})` }];
  }
  return secrets
    .filter((s) => !inRun.has(`hub|${s.metadata.namespace}/${s.metadata.name}`))
    .filter(
      (s) =>
        annotationsOf(s)[ANNOTATIONS.identity] === rec.id.name &&
        annotationsOf(s)[ANNOTATIONS.cluster] === rec.cluster &&
        annotationsOf(s)[ANNOTATIONS.method] === 'client-cert',
    )
    .map((s) => ({
      what: `hub Secret ${s.metadata.namespace}/${s.metadata.name} (another certificate of ${rec.id.name})`,
      needs: needsOf(rec.id, annotationsOf(s)),
    }));
}

type Planned = { kind: string; namespace?: string; name: string; exists: boolean };

async function revokeOne(
  rec: CredentialRecord,
  r: RevokeRequest,
  env: RevokeEnv,
  connect: ReturnType<typeof reach>,
  hub: KubeClient | undefined,
  inRun: Set<string>,
  handled: Set<string>,
): Promise<void> {
  const { item, id } = rec;
  env.progress?.doing(rec.where, 'finding its cluster');
  const reached = await connect.target(rec);
  env.progress?.doing(rec.where, 'looking for what fleet made for it');
  const target = reached.client;
  const label = `${CREDENTIAL_LABEL}=${credentialId(id)}`;
  const fleetMade = (o: KubeObject | undefined) =>
    Boolean(o && isFleetManaged(o.metadata.labels) && o.metadata.labels?.[CREDENTIAL_LABEL] === credentialId(id));

  // 1. The credential itself: the anchor or legacy token Secrets the record names.
  const credential: Planned[] = [];
  for (const a of rec.anchors) {
    const s = await getObject(target, SECRET, a.name, { namespace: a.namespace });
    if (s && !fleetMade(s))
      item.kept.push({
        kind: 'Secret',
        ...a,
        reason: `named by the record but not labelled ${label}: not fleet's anchor`,
      });
    else credential.push({ kind: 'Secret', ...a, exists: Boolean(s) });
  }

  // 2. The RBAC fleet made for the identity, minus what other credentials of the identity still need.
  const others = await otherCredentials(rec, target, hub, inRun);
  const keepAll = others.find((o) => !o.needs);
  const needed = new Map<string, string>();
  for (const o of others) for (const k of o.needs ?? []) needed.set(k, o.what);
  const rbac: Planned[] = [];
  for (const r of RBAC_KINDS) {
    for (const o of await list<V1ClusterRoleBinding | V1RoleBinding | V1ClusterRole | V1Role>(
      target,
      r,
      `${MANAGED_BY_SELECTOR},${label}`,
    )) {
      const k = { kind: r.kind, namespace: o.metadata.namespace, name: o.metadata.name };
      const user = keepAll?.what ?? needed.get(key(k));
      if (user) item.kept.push({ ...k, reason: `still used by ${user}` });
      else rbac.push({ ...k, exists: true });
    }
  }
  // A bound ClusterRole that fleet did not make (--cluster-role) is never fleet's to delete.
  const bound = accessOf(rec.facts[ANNOTATIONS.access]);
  if (bound?.kind === 'cluster-role')
    item.kept.push({ kind: 'ClusterRole', name: bound.name, reason: 'bound by fleet, not made by it' });

  // 3. The ServiceAccount, only if fleet created it: generate creates one (labelled) only when none exists, and never
  // labels one it found, so the managed-by label with this identity's credential label is the mark of creation.
  const sa: Planned[] = [];
  if (id.kind === 'ServiceAccount') {
    const obj = await getObject(target, SERVICE_ACCOUNT, id.name, { namespace: id.namespace });
    const k = { kind: 'ServiceAccount', namespace: id.namespace, name: id.name };
    if (!obj) sa.push({ ...k, exists: false });
    else if (!fleetMade(obj))
      item.kept.push({
        ...k,
        reason: `fleet found it, did not create it (no ${MANAGED_BY_SELECTOR}, ${label} labels)`,
      });
    else if (others.length > 0) item.kept.push({ ...k, reason: `still used by ${others[0].what}` });
    else sa.push({ ...k, exists: true });
  }
  // Namespaces fleet created (--create-namespace) may hold anything by now: named, never deleted.
  // Informational only: a credential that may not list Namespaces skips it.
  const namespaces = await list<V1Namespace>(target, NAMESPACE, `${MANAGED_BY_SELECTOR},${label}`).catch((error) => {
    if (error instanceof FleetError && error.kind === 'forbidden') return [];
    throw error;
  });
  for (const ns of namespaces) {
    item.kept.push({
      kind: 'Namespace',
      name: ns.metadata.name,
      reason: 'created by fleet (--create-namespace), but a namespace may hold other things: delete it yourself',
    });
  }
  // The hub namespace generate created for the Secret (--create-namespace, labelled for this identity), named the same way.
  if (rec.consumer.kind === 'secret' && hub) {
    const name = rec.consumer.secret.metadata.namespace ?? 'default';
    const ns = await getObject(hub, NAMESPACE, name).catch((error) => {
      if (error instanceof FleetError && error.kind === 'forbidden') return undefined;
      throw error;
    });
    if (fleetMade(ns))
      item.kept.push({
        kind: 'Namespace',
        name,
        on: 'hub',
        reason:
          'created on the hub by fleet (--create-namespace) for the Secret, but a namespace may hold other things: delete it yourself',
      });
  }

  const consumer: RevokedObject =
    rec.consumer.kind === 'secret'
      ? {
          kind: 'Secret',
          namespace: rec.consumer.secret.metadata.namespace,
          name: rec.consumer.secret.metadata.name,
          on: 'hub',
          action: 'would-delete',
        }
      : { kind: 'File', name: rec.consumer.path, on: 'file', action: 'would-delete' };
  // Nothing deleted that something else still uses (still-used.ts): before the first deletion, every token Secret this
  // item would delete is looked for in the operator's own kubeconfig, in workloads beside it and in other hub Secrets.
  const used = await stillUsedBy(rec, credential, r, env, target, hub);
  if (used.unchecked.length > 0) item.unchecked = used.unchecked;
  if (used.users.length > 0) {
    item.stillUsed = used.users;
    const what = `the credential's ${counted(credential.filter((p) => p.exists).length, 'token Secret')} (${credential
      .filter((p) => p.exists)
      .map((p) => `${p.namespace}/${p.name}`)
      .join(', ')}) on ${rec.cluster}`;
    if (!env.guard?.force) {
      item.status = r.dryRun ? 'planned' : 'failed';
      item.reason = r.dryRun
        ? `would be refused: ${usedText(what, used, false)}`
        : `${usedText(what, used, false)}; nothing was deleted`;
      if (!r.dryRun) item.error = { kind: 'server', message: item.reason };
      return;
    }
  }
  // An object an earlier item of this run deleted (or, with --dry-run, would delete) is that item's, not listed again.
  const onCluster = [...credential, ...rbac, ...sa].filter((p) => !handled.has(`${rec.cluster}|${key(p)}`));
  for (const p of onCluster) handled.add(`${rec.cluster}|${key(p)}`);
  if (r.dryRun) {
    item.deleted = [...onCluster.map((p) => planned(p, 'would-delete')), consumer];
    item.status = 'planned';
    item.reason = `would delete ${counted(item.deleted.filter((d) => d.action === 'would-delete').length, 'object')}, check that the old credential is refused, then delete the ${rec.consumer.kind === 'secret' ? 'hub Secret' : 'file'}`;
    return;
  }

  // Kept to prove afterwards that the server refuses it: the old credential goes to the member as the operator's
  // configuration reaches it (its destination), never to the server the record's kubeconfig names.
  const old = await env.connector.withCredential(reached.destination, rec.user, `${rec.where} (old credential)`, {
    userFiles: rec.consumer.kind === 'file',
  });
  // Credential first, then bindings before roles, then the ServiceAccount: a re-run after an interruption finds the
  // record and treats what is gone as done.
  env.progress?.doing(rec.where, 'deleting what fleet made for it');
  for (const p of onCluster) {
    if (p.exists) await deleteObject(target, resourceOf({ kind: p.kind }), p.name, { namespace: p.namespace });
    item.deleted.push(planned(p, p.exists ? 'deleted' : 'already-gone'));
  }

  if (rec.method === 'client-cert') {
    const until = certNotAfter(rec.user) ?? rec.facts[ANNOTATIONS.expires] ?? rec.facts.expires;
    const grant =
      rbac.length > 0
        ? 'the RBAC fleet granted it was deleted'
        : item.kept.some((k) => k.kind.includes('Role'))
          ? 'its RBAC is kept (see kept)'
          : 'no RBAC of it was left';
    item.refused = {
      done: false,
      reason: `a client certificate cannot be revoked: it stays valid until ${until} (its NotAfter); ${grant}`,
    };
  } else {
    const timeoutMs = r.confirmTimeoutMs ?? 30_000;
    // The API server's token cache keeps a deleted token valid for up to about 10 s: said while it lasts.
    const dead = await confirmRefused(
      env.progress,
      old,
      {
        text: `${rec.where}: waiting for the API server to refuse the old credential`,
        finishing: `the revocation of ${rec.where} (waiting for the API server to refuse the old credential)`,
        leaves: `${rec.where} in place for a re-run to finish`,
      },
      timeoutMs,
    );
    item.refused = dead
      ? { done: true, reason: 'the old credential is refused (401)' }
      : {
          done: false,
          reason: `the old credential still authenticated ${Math.round(timeoutMs / 1000)}s after its deletion; the ${rec.consumer.kind === 'secret' ? 'hub Secret' : 'file'} is kept so that a re-run can finish`,
        };
    if (!dead) {
      item.status = 'failed';
      item.reason = item.refused.reason;
      return;
    }
  }

  // Last: the record. A hub Secret is deleted only as it was read (uid and resourceVersion preconditions): one that a
  // rotation changed meanwhile holds a new credential, which this run did not revoke.
  if (rec.consumer.kind === 'secret') {
    const s = rec.consumer.secret;
    const preconditions = { uid: s.metadata.uid, resourceVersion: s.metadata.resourceVersion };
    const done = await deleteObject(hub!, SECRET, s.metadata.name, {
      namespace: s.metadata.namespace,
      preconditions,
      what: `delete ${rec.where}`,
    }).catch((error: unknown) => {
      if (statusOf(error) === 409)
        throw new FleetError(
          'server',
          `${rec.where} changed since it was read (a rotation?): not deleted; run revoke again`,
        );
      throw error;
    });
    consumer.action = done === 'absent' ? 'already-gone' : 'deleted';
  } else {
    const now = await readFile(rec.consumer.path, 'utf8').catch(() => undefined);
    if (now === undefined) consumer.action = 'already-gone';
    else if (now !== rec.consumer.text)
      throw new FleetError(
        'server',
        `${rec.where} changed since it was read (a rotation?): not deleted; run revoke again`,
      );
    else {
      // A file adopt took over keeps the user's other contexts: only the revoked one goes (with its user and cluster
      // when no other context names them); a file with nothing else in it is deleted, as one generate wrote.
      const doc = loadYamlIfValid(now) as KubeconfigDoc;
      const rest = rec.facts.context ? withoutContext(doc, rec.facts.context) : undefined;
      if (rest) {
        await writeKubeconfigIfUnchanged(rec.consumer.path, now, rest).catch((error: unknown) => {
          if (error instanceof Conflict)
            throw new FleetError('server', `${rec.where} changed since it was read: not rewritten; run revoke again`);
          throw error;
        });
        consumer.kind = 'Context';
        consumer.name = `${rec.consumer.path} (context ${rec.facts.context})`;
      } else await unlink(rec.consumer.path);
      consumer.action = 'deleted';
    }
  }
  item.deleted.push(consumer);
  item.status = 'revoked';
}

/** still-used.ts over each token Secret the item would delete that is there, the findings of all of them together. */
async function stillUsedBy(
  rec: CredentialRecord,
  credential: Planned[],
  r: RevokeRequest,
  env: RevokeEnv,
  target: KubeClient,
  hub: KubeClient | undefined,
): Promise<StillUsed> {
  const all: StillUsed = { users: [], unchecked: [] };
  for (const p of credential.filter((c) => c.exists)) {
    const found = await stillUsed(
      {
        secret: { namespace: p.namespace!, name: p.name },
        member: target,
        memberName: rec.cluster,
        tokens: [rec.user.token],
        hub: hub
          ? { client: hub, name: hub.context.contextName }
          : { none: 'a revoke of --file credentials only connects to no hub' },
        clusters: r.clusters,
        self:
          rec.consumer.kind === 'secret'
            ? {
                hubSecret: {
                  namespace: rec.consumer.secret.metadata.namespace ?? 'default',
                  name: rec.consumer.secret.metadata.name,
                },
              }
            : { file: { paths: [rec.consumer.path], user: rec.userName } },
      },
      env.guard,
    );
    for (const u of found.users) if (!all.users.includes(u)) all.users.push(u);
    for (const u of found.unchecked) if (!all.unchecked.includes(u)) all.unchecked.push(u);
  }
  return all;
}

/** The note for a revoke item's unchecked places (the command prints it on stderr). */
export function revokeUncheckedNote(i: RevokedCredential): string | undefined {
  return i.unchecked?.length
    ? uncheckedText("the credential's token Secret", { users: [], unchecked: i.unchecked })
    : undefined;
}

function planned(p: Planned, action: RevokedObject['action']): RevokedObject {
  return {
    kind: p.kind,
    ...(p.namespace ? { namespace: p.namespace } : {}),
    name: p.name,
    on: 'cluster',
    action: p.exists ? action : 'already-gone',
  };
}
