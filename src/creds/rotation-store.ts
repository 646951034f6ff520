import { createHash } from 'node:crypto';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import type { V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import yaml from 'js-yaml';

import { ConfigError, FleetError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { readNamedFile } from '../base/files.js';
import { statusOf } from '../kube/errors.js';
import type { ObjectMeta, Wire } from '../kube/objects.js';
import { CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING, SECRET } from '../kube/resources.js';
import { getObject, listObjects, updateObject } from '../kube/typed.js';
import { writeFileAtomic, writeTarget } from '../kubeconfig/atomic-write.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { KubeconfigDoc, UserEntry } from '../kubeconfig/types.js';
import { type Secret, secretText } from '../providers/hub/objects.js';
import {
  type ClusterIdentityFacts,
  type RecordedCluster,
  identityRecord,
  recordedCluster,
} from './cluster-identity.js';
import { keepArgocdConfig } from './codecs/argocd.js';
import { type Held, type SecretFormat, codecOf, destinationSecret } from './codecs/index.js';
import { identityOf } from './credential-record.js';
import { KUBECONFIG_EXTENSION, fileFacts, kubeconfigSha256, recordedContext, withFileFacts } from './kubeconfig-out.js';
import { ANNOTATIONS, CREDENTIAL_LABEL, factKey, isFleetManaged } from './labels.js';
import { acquireLease, leaseName } from './lease.js';
import { METHODS, type Method, anchorName, legacySecretName } from './methods.js';
import { findPreset } from './presets.js';
import { type Identity, credentialId, roleBaseName } from './rbac.js';
import type { PolicyRule } from './rules-file.js';
import {
  ROTATION,
  type RotationState,
  fileState,
  readState,
  stateAnnotations,
  withoutState,
} from './rotation-state.js';

/**
 * Where a credential fleet made is kept, as rotation sees it: a hub Secret (annotations, resourceVersion preconditions,
 * a Lease) or a kubeconfig file `creds generate --out` wrote (its `fleet.dev/credential` extension, atomic 0600 writes,
 * a lock file). The rotation's steps are written once (rotate.ts) over this interface; each store only says how it
 * reads, records progress, writes the new credential and keeps other runs out.
 */
export interface RotationStore {
  readonly kind: 'secret' | 'file';
  /** The name users see in messages and tables: `Secret NS/NAME` or the file's path. */
  readonly where: string;
  /** Excluded from the clusters a rotation may mint on: the consumer Secret being rotated is not a cluster to use. */
  readonly self?: { namespace: string; name: string };
  /** The hub a Secret store is on (where other holders of an old token are looked for before its anchor goes). */
  readonly hubClient?: KubeClient;
  /** Keeps other runs out while held: the per-Secret Lease, or the file's lock file. `exclusive` false: not taken. */
  lock(
    run: string,
    o: { lease: boolean; waitMs: number },
  ): Promise<{ exclusive: boolean; release: () => Promise<void> }>;
  /** Reads the credential and its record (refusing what fleet did not write). */
  read(): Promise<Stored>;
  /** Records the claim, only if the store is still as read (a Conflict otherwise). */
  claim(state: RotationState): Promise<void>;
  /** The grant to verify a new credential against: rules, and namespaces (empty: cluster-wide). */
  grant(target: KubeClient): Promise<{ rules: PolicyRule[]; namespaces: string[] }>;
  /** Annotations for a new anchor or token Secret on the cluster (what generate put on the first one). */
  anchorAnnotations(): Record<string, string>;
  /** Writes the new credential, phase `replaced`, only if the store is still as claimed (a Conflict otherwise). */
  replace(n: NewCredential, state: RotationState): Promise<void>;
  /** What the store records now: its rotation state and the credential's anchor (re-read, for conflicts and interrupts). */
  current(): Promise<{ state?: RotationState; anchor?: string; expires?: string; fingerprint?: string } | undefined>;
  /** Lifts this run's claim (only the same claim), the credential untouched. */
  release(claimed: RotationState): Promise<void>;
  /** Clears the rotation state; the credential stays. */
  finish(): Promise<void>;
}

/** A credential as its store describes it. */
export interface Stored {
  method: Method;
  /** The identity as recorded (`system:serviceaccount:NS:NAME`, or a certificate's user). */
  identity: string;
  id: Identity;
  /** The cluster's name as generate was given it (a hint; the recorded identity finds the cluster). */
  clusterName?: string;
  recorded: RecordedCluster;
  held: Held;
  /** The context of `held.kubeconfig` whose user is the credential (a file's recorded one); absent: its current one. */
  context?: string;
  old: { fingerprint?: string; expires?: string; anchor?: string };
  /** The lifetime generate was asked for, in seconds (as recorded), if it was. */
  lifetime?: string;
  state?: RotationState;
  /** The start of the names of this credential's new anchors (a hash of where it is kept). */
  anchorKey: string;
  /** A Secret's consumer format. */
  format?: SecretFormat;
}

export interface NewCredential {
  /** The new one-context kubeconfig (the Secret's key; a file replaces its user with `user`). */
  kubeconfig: string;
  user: UserEntry;
  expires?: string;
  anchor?: string;
  /** Recorded for the next rotations (absent for a legacy token, which has no lifetime). */
  lifetimeSeconds?: number;
  /** The cluster's identity, for a record written before it was kept (recorded on the first rotation). */
  identity?: ClusterIdentityFacts;
}

/** The store changed since it was read: re-read, never overwrite. */
export class Conflict extends Error {}

const CONFLICT = 409;
const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
const fp = (hex: string | undefined) => (hex ? `sha256:${hex}` : undefined);

/** The method, identity and old anchor every store checks the same way; the anchor of a legacy token is derived. */
function describe(
  where: string,
  methodText: string | undefined,
  identity: string | undefined,
  user: UserEntry,
  anchor: string | undefined,
  legacyKey: string,
) {
  const method = methodText as Method;
  if (!METHODS.includes(method)) throw new FleetError('config', `${where}: unknown credential method "${methodText}"`);
  registerSecret(user.token);
  registerSecret(user['client-key-data']);
  const id = identityOf(method, identity, user);
  if (!id || !identity)
    throw new FleetError('config', `${where}: identity "${identity ?? ''}" does not fit method ${method}`);
  // generate records no anchor for a legacy token: its Secret's name is derived from the destination, the same way here.
  const derived =
    id.kind === 'ServiceAccount' && method !== 'client-cert'
      ? `${id.namespace}/${method === 'token' ? anchorName(id.name, legacyKey) : legacySecretName(id.name, legacyKey)}`
      : undefined;
  return { method, id, identity, anchor: anchor ?? derived };
}

// ---------------------------------------------------------------------------------------------------------------------
// A hub Secret

const annotationsOf = (s: Secret) => (s.metadata as { annotations?: Record<string, string> }).annotations ?? {};
const withAnnotations = (s: Secret, annotations: Record<string, string>): Secret => ({
  ...s,
  metadata: { ...s.metadata, annotations },
});

function parseScope(text: string | undefined): string[] {
  if (!text || text === 'cluster-wide') return [];
  return text
    .replace(/^namespaces /, '')
    .split(',')
    .filter(Boolean);
}

/** The rules granted, for verification: the preset, the bound ClusterRole, or the Role/ClusterRole generate applied. */
async function grantedRules(
  target: KubeClient,
  access: string | undefined,
  id: Identity,
  namespaces: string[],
): Promise<PolicyRule[]> {
  const a = access ?? '';
  if (a.startsWith('preset ')) return findPreset(a.slice('preset '.length)).rules;
  const roleName = a.startsWith('ClusterRole ') ? a.slice('ClusterRole '.length) : roleBaseName(id);
  const role =
    a.startsWith('ClusterRole ') || namespaces.length === 0
      ? await getObject<Wire<V1ClusterRole>>(target, CLUSTER_ROLE, roleName)
      : await getObject<Wire<V1Role>>(target, ROLE, roleName, { namespace: namespaces[0] });
  if (!role)
    throw new FleetError(
      'config',
      `the grant (${a || 'unknown access'}) is not on the cluster any more: nothing to verify a new credential against`,
    );
  return role.rules ?? [];
}

/**
 * A Secret or file fleet did not write, named for rotation: refused for the whole run before anything is rotated (exit
 * 2, one line), as creds revoke refuses it.
 */
export class NotFleetsError extends ConfigError {
  constructor(what: string) {
    super(`${what}: fleet rotates only what it made; nothing was rotated`);
    this.name = 'NotFleetsError';
  }
}

export class SecretStore implements RotationStore {
  readonly kind = 'secret';
  readonly where: string;
  readonly hubClient: KubeClient;
  readonly self: { namespace: string; name: string };
  private secret?: Secret;
  private stored?: Stored;

  constructor(
    private readonly hub: KubeClient,
    t: { namespace: string; name: string },
  ) {
    this.hubClient = hub;
    this.self = t;
    this.where = `Secret ${t.namespace}/${t.name}`;
  }

  async lock(run: string, o: { lease: boolean; waitMs: number }) {
    if (!o.lease) return { exclusive: false, release: async () => undefined };
    const lease = await acquireLease(this.hub, this.self.namespace, leaseName(this.self.name), run, {
      seconds: 15,
      waitMs: o.waitMs,
    }).catch(async (error: unknown) => {
      // The Lease lives beside the Secret: a namespace that does not exist means the Secret does not either, which is
      // what the user named and needs to hear (not "create Lease ...: namespaces not found").
      if ((error as FleetError).kind === 'not-found' && !(await this.get().catch(() => true))) throw this.notFound();
      throw error;
    });
    return { exclusive: true, release: () => lease.release() };
  }

  private notFound(): FleetError {
    return new FleetError(
      'not-found',
      `hub ${this.hub.context.contextName}: Secret ${this.self.namespace}/${this.self.name} not found`,
    );
  }

  private async get(): Promise<Secret | undefined> {
    return getObject<Secret>(this.hub, SECRET, this.self.name, { namespace: this.self.namespace });
  }

  async read(): Promise<Stored> {
    const secret = await this.get();
    if (!secret) throw this.notFound();
    this.secret = secret;
    const ann = annotationsOf(secret);
    const format = ann[ANNOTATIONS.format];
    if (!isFleetManaged(secret.metadata.labels) || !format || !ann[ANNOTATIONS.cluster]) {
      throw new NotFleetsError(
        `hub ${this.hub.context.contextName}: ${this.where} was not written by fleet creds generate (no managed-by label or credential annotations)`,
      );
    }
    const codec = codecOf(format, `hub ${this.hub.context.contextName}: ${this.where}`);
    const held = codec.decode(secret);
    if (!held) throw new FleetError('config', `${this.where}: no kubeconfig in the ${format} keys`);
    const d = describe(
      this.where,
      ann[ANNOTATIONS.method],
      ann[ANNOTATIONS.identity],
      held.user,
      ann[ANNOTATIONS.anchor],
      short(`secret:${this.self.namespace}/${this.self.name}:${format}`),
    );
    this.stored = {
      ...d,
      format: codec.format,
      clusterName: ann[ANNOTATIONS.cluster],
      recorded: recordedCluster(ann, 'secret', held.cluster),
      held,
      old: { fingerprint: fp(ann[ANNOTATIONS.fingerprint]), expires: ann[ANNOTATIONS.expires], anchor: d.anchor },
      lifetime: ann[ANNOTATIONS.lifetime],
      state: readState(ann),
      anchorKey: short(`${this.self.namespace}/${this.self.name}`),
    };
    return this.stored;
  }

  /** PUT with the resourceVersion the object was read at: 409 means someone else wrote it since. */
  private async put(s: Secret): Promise<void> {
    try {
      this.secret = await updateObject<Secret>(
        this.hub,
        { ...s, apiVersion: 'v1', kind: 'Secret' },
        { what: `replace ${this.where}` },
      );
    } catch (error) {
      if (statusOf(error) === CONFLICT) throw new Conflict(`${this.where} changed since it was read`);
      throw error;
    }
  }

  async claim(state: RotationState): Promise<void> {
    await this.put(withAnnotations(this.secret!, { ...annotationsOf(this.secret!), ...stateAnnotations(state) }));
  }

  async grant(target: KubeClient) {
    const ann = annotationsOf(this.secret!);
    const namespaces = parseScope(ann[ANNOTATIONS.scope]);
    return { rules: await grantedRules(target, ann[ANNOTATIONS.access], this.stored!.id, namespaces), namespaces };
  }

  anchorAnnotations(): Record<string, string> {
    const ann = annotationsOf(this.secret!);
    return {
      [ANNOTATIONS.method]: this.stored!.method,
      [ANNOTATIONS.identity]: this.stored!.identity,
      [ANNOTATIONS.scope]: ann[ANNOTATIONS.scope] ?? '',
      [ANNOTATIONS.access]: ann[ANNOTATIONS.access] ?? '',
    };
  }

  async replace(n: NewCredential, state: RotationState): Promise<void> {
    const s = this.secret!;
    const st = this.stored!;
    // The display name (Argo CD's `name`) is kept as it is: generate's choice, or a person's since.
    const rebuilt = destinationSecret(codecOf(st.format!, this.where).destination(s), {
      kubeconfig: n.kubeconfig,
      cluster: st.held.cluster,
      user: n.user,
      clusterName: st.clusterName!,
      displayName: secretText(s, 'name'),
      annotations: {},
    });
    const annotations = {
      ...annotationsOf(s),
      ...(n.anchor ? { [ANNOTATIONS.anchor]: n.anchor } : {}),
      [ANNOTATIONS.expires]: n.expires ?? 'never',
      [ANNOTATIONS.fingerprint]: kubeconfigSha256(n.kubeconfig),
      ...(n.identity ? identityRecord(n.identity, 'secret') : {}),
      ...(n.lifetimeSeconds ? { [ANNOTATIONS.lifetime]: String(n.lifetimeSeconds) } : {}),
      ...stateAnnotations(state),
    };
    const data = { ...(s.data ?? {}), ...(rebuilt.data as Record<string, string>) };
    if (st.format === 'argocd') data.config = keepArgocdConfig(s.data?.config, data.config);
    await this.put({ ...withAnnotations(s, annotations), data });
  }

  async current() {
    const s = await this.get();
    if (!s) return undefined;
    this.secret = s;
    const a = annotationsOf(s);
    return {
      state: readState(a),
      anchor: a[ANNOTATIONS.anchor],
      expires: a[ANNOTATIONS.expires],
      fingerprint: fp(a[ANNOTATIONS.fingerprint]),
    };
  }

  async release(claimed: RotationState): Promise<void> {
    const now = await this.current();
    const st = now?.state;
    if (!st || st.phase !== 'claimed' || st.run !== claimed.run || ref(st.newAnchor) !== ref(claimed.newAnchor)) return;
    await this.put(withAnnotations(this.secret!, withoutState(annotationsOf(this.secret!))));
  }

  /** Clears the rotation annotations, re-reading on conflict (the data is never touched here). */
  async finish(): Promise<void> {
    for (let i = 0; i < 5; i++) {
      const now = await this.current();
      if (!now?.state) return;
      try {
        await this.put(withAnnotations(this.secret!, withoutState(annotationsOf(this.secret!))));
        return;
      } catch (error) {
        if (!(error instanceof Conflict)) throw error;
      }
    }
    throw new FleetError('server', `${this.where}: could not clear the rotation annotations (kept changing)`);
  }
}

const ref = (r: { namespace: string; name: string } | undefined) => (r ? `${r.namespace}/${r.name}` : undefined);

// ---------------------------------------------------------------------------------------------------------------------
// A kubeconfig file creds generate --out wrote

type Facts = Record<string, string>;

export const stateFacts = (s: RotationState): Facts =>
  Object.fromEntries(Object.entries(stateAnnotations(s)).map(([k, v]) => [factKey(k), v]));
function clearedFacts(f: Facts): Facts {
  const out = { ...f };
  for (const k of Object.values(ROTATION)) delete out[factKey(k)];
  return out;
}

/** The context fleet's record names (an adopted file's `context` fact), else the current one (a file generate wrote). */
function currentOf(doc: KubeconfigDoc, facts: Facts | undefined) {
  const name = recordedContext(doc, facts);
  const ctx = doc.contexts?.find((c) => c.name === name)?.context;
  const user = doc.users?.find((x) => x.name === ctx?.user);
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  return { name, ctx, user, cluster };
}

/** The grant fleet applied for this identity, found by its label: rules, and namespaces (empty: cluster-wide). */
async function grantOnCluster(
  target: KubeClient,
  id: Identity,
): Promise<{ rules: PolicyRule[]; namespaces: string[] }> {
  const labelSelector = `${CREDENTIAL_LABEL}=${credentialId(id)}`;
  type Binding = Wire<V1ClusterRoleBinding | V1RoleBinding> & { metadata: ObjectMeta };
  const crbs = await listObjects<Binding>(target, CLUSTER_ROLE_BINDING, { labelSelector });
  const rbs = await listObjects<Binding>(target, ROLE_BINDING, { labelSelector });
  const b = crbs[0] ?? rbs[0];
  if (!b)
    throw new FleetError(
      'config',
      `no RBAC binding labelled for ${credentialId(id)} on the cluster: nothing to verify a new credential against`,
    );
  const role =
    b.roleRef.kind === 'ClusterRole'
      ? await getObject<Wire<V1ClusterRole>>(target, CLUSTER_ROLE, b.roleRef.name)
      : await getObject<Wire<V1Role>>(target, ROLE, b.roleRef.name, { namespace: b.metadata.namespace });
  return {
    rules: role?.rules ?? [],
    namespaces: crbs.length > 0 ? [] : [...new Set(rbs.map((x) => x.metadata.namespace!))],
  };
}

/**
 * The one way a kubeconfig file fleet keeps is written: only if it still holds `expected` (compared by SHA-256, so a
 * kubectl or editor write since it was read is never overwritten: a Conflict), atomically, and through a symlink to
 * the file it leads to (the link stays a link, as kubectl writes through it). The file written keeps the owner and
 * group of the one it replaces, as kubectl's write in place does: root adopting a user's linked ~/.kube/config left it
 * root's and 0600, which its owner could no longer read. The mode is the replaced file's owner bits with read and write
 * (0600 for 0600 and 0644: a credential is not for group or others; 0700 stays 0700), unless `mode` names one (an
 * undo puts the original back). Writing a file of another owner needs root; anyone else is refused with one line.
 */
export async function writeKubeconfigIfUnchanged(
  path: string,
  expected: string,
  next: string | Uint8Array,
  mode?: number,
): Promise<void> {
  const target = await writeTarget(path);
  // Through base's reader: a regular file of at most 1 MiB, as adopt read it; a FIFO or device swapped in since then is
  // refused (a Conflict), never opened for a blocking read.
  const now = await readNamedFile(target)
    .then((b) => b.toString('utf8'))
    .catch(() => undefined);
  if (now === undefined || kubeconfigSha256(now) !== kubeconfigSha256(expected))
    throw new Conflict(`${path} changed since it was read`);
  const st = await stat(target).catch(() => undefined);
  if (!st) throw new Conflict(`${path} changed since it was read`);
  // The effective ids: they decide what this process may write and chown.
  const uid = process.geteuid?.();
  const owner = uid === undefined || (st.uid === uid && st.gid === process.getegid?.()) ? undefined : st;
  await writeFileAtomic(target, next, {
    mode: mode ?? (st.mode & 0o700) | 0o600,
    ...(owner ? { owner: { uid: owner.uid, gid: owner.gid } } : {}),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPERM') throw error;
    throw new ConfigError(
      `${target}: owned by uid ${st.uid} gid ${st.gid}, and this user (uid ${uid}) cannot write it keeping that owner: run as its owner (or root); nothing was written`,
      { cause: error },
    );
  });
}

/** An exclusive lock file beside the kubeconfig (O_EXCL, the holder's pid); a dead holder's lock is taken over. */
async function lockFile(path: string): Promise<() => Promise<void>> {
  const lockPath = `${path}.fleet-rotate.lock`;
  for (let i = 0; i < 2; i++) {
    try {
      const h = await open(lockPath, 'wx', 0o600);
      await h.writeFile(String(process.pid));
      await h.close();
      return () => unlink(lockPath).catch(() => undefined);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(await readFile(lockPath, 'utf8').catch(() => ''));
      let alive: boolean;
      try {
        if (pid) process.kill(pid, 0);
        alive = Boolean(pid);
      } catch {
        alive = false;
      }
      if (alive) throw new FleetError('server', `${path}: another fleet run (pid ${pid}) is rotating this file`);
      // The holder died (a crash): its lock is stale; the file's recorded phase says what is left to do.
      await unlink(lockPath).catch(() => undefined);
    }
  }
  throw new FleetError('server', `${path}: could not take the rotation lock ${lockPath}`);
}

export class FileStore implements RotationStore {
  readonly kind = 'file';
  private doc?: KubeconfigDoc;
  private facts?: Facts;
  private stored?: Stored;
  /** The bytes last read: every write is made only if the file still holds them (writeKubeconfigIfUnchanged). */
  private text?: string;

  /** `where` is the absolute path. */
  constructor(readonly where: string) {}

  async lock() {
    // A file on this machine has no Lease: the lock file is always taken (and makes every claim this run's to finish).
    return { exclusive: true, release: await lockFile(this.where) };
  }

  private async load(): Promise<{ text: string; doc: KubeconfigDoc; facts?: Facts }> {
    let text: string;
    try {
      text = await readFile(this.where, 'utf8');
    } catch (error) {
      throw new FleetError('config', `${this.where}: ${(error as Error).message}`);
    }
    const doc = yaml.load(text) as KubeconfigDoc;
    this.text = text;
    return { text, doc, facts: fileFacts(doc) };
  }

  async read(): Promise<Stored> {
    const { text, doc, facts } = await this.load();
    if (!facts)
      throw new NotFleetsError(
        `--file ${this.where} was not written by fleet creds generate (no ${KUBECONFIG_EXTENSION} extension)`,
      );
    const cur = currentOf(doc, facts);
    if (!cur.user || !cur.cluster)
      throw new FleetError('config', `${this.where}: context ${cur.name ?? '(none)'} has no user or cluster`);
    this.doc = doc;
    this.facts = facts;
    const fileKey = short(`file:${this.where}`);
    const d = describe(this.where, facts.method, facts.identity, cur.user.user, facts.anchor, fileKey);
    this.stored = {
      ...d,
      clusterName: facts.cluster,
      recorded: recordedCluster(facts, 'file', cur.cluster),
      held: {
        kubeconfig: text,
        cluster: cur.cluster,
        user: cur.user.user,
        names: { cluster: cur.name ?? 'cluster', user: cur.user.name, namespace: cur.ctx?.namespace },
      },
      context: cur.name,
      old: { fingerprint: `sha256:${kubeconfigSha256(text)}`, expires: facts.expires, anchor: d.anchor },
      lifetime: facts.lifetime,
      state: fileState(facts),
      anchorKey: fileKey,
    };
    return this.stored;
  }

  private async write(doc: KubeconfigDoc, facts: Facts): Promise<void> {
    const next = withFileFacts(doc, facts);
    await writeKubeconfigIfUnchanged(this.where, this.text!, next);
    this.text = next;
    this.doc = doc;
    this.facts = facts;
  }

  async claim(state: RotationState): Promise<void> {
    await this.write(this.doc!, { ...this.facts!, ...stateFacts(state) });
  }

  async grant(target: KubeClient) {
    // An adopted file records its grant as a Secret does (the identity's own binding need not carry fleet's label).
    const f = this.facts!;
    const access = f[factKey(ANNOTATIONS.access)];
    if (!access) return grantOnCluster(target, this.stored!.id);
    const namespaces = parseScope(f[factKey(ANNOTATIONS.scope)]);
    return { rules: await grantedRules(target, access, this.stored!.id, namespaces), namespaces };
  }

  anchorAnnotations(): Record<string, string> {
    return { [ANNOTATIONS.method]: this.stored!.method, [ANNOTATIONS.identity]: this.stored!.identity };
  }

  async replace(n: NewCredential, state: RotationState): Promise<void> {
    const userName = this.stored!.held.names.user;
    const users = (this.doc!.users ?? []).map((u) => (u.name === userName ? { name: u.name, user: n.user } : u));
    await this.write(
      { ...this.doc!, users },
      {
        ...this.facts!,
        ...(n.identity ? identityRecord(n.identity, 'file') : {}),
        ...stateFacts(state),
        expires: n.expires ?? 'never',
        ...(n.lifetimeSeconds ? { lifetime: String(n.lifetimeSeconds) } : {}),
        ...(n.anchor ? { anchor: n.anchor } : {}),
      },
    );
  }

  async current() {
    const { text, doc, facts } = await this.load();
    if (!facts) return undefined;
    this.doc = doc;
    this.facts = facts;
    return {
      state: fileState(facts),
      anchor: facts.anchor,
      expires: facts.expires,
      fingerprint: `sha256:${kubeconfigSha256(text)}`,
    };
  }

  async release(claimed: RotationState): Promise<void> {
    const now = await this.current();
    const st = now?.state;
    if (!st || st.phase !== 'claimed' || st.run !== claimed.run) return;
    await this.write(this.doc!, clearedFacts(this.facts!));
  }

  async finish(): Promise<void> {
    const now = await this.current();
    if (now?.state) await this.write(this.doc!, clearedFacts(this.facts!));
  }
}
