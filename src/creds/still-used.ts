import { createHash, timingSafeEqual } from 'node:crypto';

import { toErrorInfo } from '../base/errors.js';
import { readNamedFile } from '../base/files.js';
import type { KubeClient } from '../kube/client.js';
import {
  CRON_JOB,
  DAEMON_SET,
  DEPLOYMENT,
  JOB,
  POD,
  REPLICA_SET,
  type Resource,
  SECRET,
  STATEFUL_SET,
} from '../kube/resources.js';
import { getObject, listObjects, listPage } from '../kube/typed.js';
import { type ResolvedContext, loadMerged, precedence, resolveContext } from '../kubeconfig/loading-rules.js';
import { registerSecret } from '../kubeconfig/redact.js';
import { type Secret, secretText } from '../providers/hub/objects.js';
import type { ClusterRef } from '../providers/types.js';

/**
 * Nothing deleted that something else still uses (issue 46, item 4). Before `creds adopt --revoke-old`, `creds revoke`
 * or `creds rotate` deletes a token Secret (a legacy `kubernetes.io/service-account-token` Secret, or the anchor a bound
 * token hangs on) on a member, fleet looks for whoever else still holds or mounts what that deletion ends:
 *   - the operator's own configuration: every context of the user's kubeconfig files (--kubeconfig, else KUBECONFIG,
 *     else ~/.kube/config) and of the command's file providers (fleet.yaml) whose user holds the same token bytes;
 *   - workloads on the member, in the Secret's namespace: Pods and the pod templates of Deployments, StatefulSets,
 *     DaemonSets, ReplicaSets, Jobs and CronJobs that mount it (a secret or projected volume) or reference it (env
 *     secretKeyRef, envFrom secretRef, imagePullSecrets);
 *   - other hub Secrets that hold the same token (any key, any format), the one being adopted, rotated or revoked aside.
 * Each is named (`Deployment NS/NAME (volume V)`, `kubeconfig FILE (context C)`, `hub Secret NS/NAME (key K)`); what
 * could not be looked at (no list permission, no hub in this run) is said in `unchecked`, never passed over. Tokens are
 * compared by their bytes and never written anywhere. A service: it decides and says, the caller deletes or refuses.
 */

/** The command's part: --force, and the user's own kubeconfig files. */
export interface DeleteGuard {
  /** --force: delete even what is still used (the users are still named). */
  force: boolean;
  /** The user's kubeconfig files as kubectl's loading rules name them (--kubeconfig, else KUBECONFIG, else ~/.kube/config). */
  kubeconfigs?: string[];
}

/** One deletion about to be made on a member. */
export interface TokenSecretDeletion {
  /** The Secret to delete, on the member. */
  secret: { namespace: string; name: string };
  /** The member, reached with the operator's credential (the one that would delete). */
  member: KubeClient;
  memberName: string;
  /** Tokens the deletion ends that the caller knows (the old credential's); the Secret's own `token` is added. */
  tokens: Array<string | undefined>;
  /** The hub whose Secrets are searched, or why this run has none. */
  hub: { client: KubeClient; name: string } | { none: string };
  /** The command's clusters (its providers): their kubeconfig-file contexts are the operator's configuration too. */
  clusters?: () => Promise<ClusterRef[]>;
  /**
   * Whether workloads are looked at (default yes). A rotation's old anchor of a bound token holds no token (an Opaque
   * Secret the token is bound to), and fleet names it: no workload gets a credential from it, so rotate skips them.
   */
  workloads?: boolean;
  /** What this run is replacing or revoking, which is not another holder: a hub Secret, or a file's user. */
  self?: { hubSecret?: { namespace: string; name: string }; file?: { paths: string[]; user?: string } };
}

/** What the checks found. The JSON shape of `stillUsed` / `unchecked` wherever a deletion is reported (docs/security.md). */
export interface StillUsed {
  /** Who still uses what the deletion ends, one entry each. */
  users: string[];
  /** What could not be looked at, with why (each a place and a reason). */
  unchecked: string[];
}

const digest = (t: string) => createHash('sha256').update(t, 'utf8').digest();

/** A set of tokens compared by their bytes (through their digests), so no comparison leaves a token anywhere. */
class Tokens {
  private readonly digests: Buffer[] = [];
  readonly plain: string[] = [];
  add(t: string | undefined) {
    if (!t) return;
    registerSecret(t);
    const d = digest(t);
    if (this.digests.some((x) => timingSafeEqual(x, d))) return;
    this.digests.push(d);
    this.plain.push(t);
  }
  has(t: string | undefined): boolean {
    if (!t) return false;
    const d = digest(t);
    return this.digests.some((x) => timingSafeEqual(x, d));
  }
  get size() {
    return this.digests.length;
  }
}

export async function stillUsed(d: TokenSecretDeletion, guard: DeleteGuard | undefined): Promise<StillUsed> {
  const out: StillUsed = { users: [], unchecked: [] };
  const tokens = new Tokens();
  for (const t of d.tokens) tokens.add(t);
  let uid: string | undefined;
  try {
    const s = await getObject<Secret>(d.member, SECRET, d.secret.name, { namespace: d.secret.namespace });
    if (!s) return out; // already gone: nothing is deleted, nothing to look for
    uid = s.metadata.uid;
    tokens.add(secretText(s, 'token'));
  } catch (error) {
    out.unchecked.push(
      `the token in Secret ${d.secret.namespace}/${d.secret.name} on ${d.memberName} (${toErrorInfo(error).message})`,
    );
  }
  if (d.workloads !== false) await workloads(d, out);
  if (tokens.size > 0) {
    await ownConfiguration(d, tokens, guard, out);
    await hubSecrets(d, tokens, uid, out);
  }
  return out;
}

/** The refusal, or (with --force) what the deletion overrode, in one wording for every command. */
export function usedText(what: string, used: StillUsed, forced: boolean): string {
  const by = used.users.join(', ');
  return forced
    ? `${what} was deleted although still used by ${by} (--force)`
    : `${what} is still used by ${by}: not deleted; --force deletes it anyway`;
}

/** The unchecked places as one note. */
export function uncheckedText(what: string, used: StillUsed): string {
  return `not checked before deleting ${what}: ${used.unchecked.join('; ')}`;
}

// ---- workloads on the member

interface PodSpecLike {
  volumes?: Array<{
    name?: string;
    secret?: { secretName?: string };
    projected?: { sources?: Array<{ secret?: { name?: string } }> };
  }>;
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
  ephemeralContainers?: ContainerLike[];
  imagePullSecrets?: Array<{ name?: string }>;
}
interface ContainerLike {
  name?: string;
  env?: Array<{ name?: string; valueFrom?: { secretKeyRef?: { name?: string } } }>;
  envFrom?: Array<{ secretRef?: { name?: string } }>;
}
interface Workload {
  metadata: { name: string; namespace?: string };
  spec?: {
    template?: { spec?: PodSpecLike };
    jobTemplate?: { spec?: { template?: { spec?: PodSpecLike } } };
  } & PodSpecLike;
}

const WORKLOADS: Array<{ r: Resource; spec: (w: Workload) => PodSpecLike | undefined }> = [
  { r: POD, spec: (w) => w.spec },
  { r: DEPLOYMENT, spec: (w) => w.spec?.template?.spec },
  { r: STATEFUL_SET, spec: (w) => w.spec?.template?.spec },
  { r: DAEMON_SET, spec: (w) => w.spec?.template?.spec },
  { r: REPLICA_SET, spec: (w) => w.spec?.template?.spec },
  { r: JOB, spec: (w) => w.spec?.template?.spec },
  { r: CRON_JOB, spec: (w) => w.spec?.jobTemplate?.spec?.template?.spec },
];

/** How a pod spec uses the Secret `name`: each mount or reference, named for a person. */
export function secretUses(spec: PodSpecLike | undefined, name: string): string[] {
  if (!spec) return [];
  const uses: string[] = [];
  for (const v of spec.volumes ?? []) {
    if (v.secret?.secretName === name) uses.push(`volume ${v.name ?? ''}`);
    if ((v.projected?.sources ?? []).some((s) => s.secret?.name === name))
      uses.push(`projected volume ${v.name ?? ''}`);
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const e of c.env ?? [])
      if (e.valueFrom?.secretKeyRef?.name === name) uses.push(`env ${e.name ?? ''} of container ${c.name ?? ''}`);
    if ((c.envFrom ?? []).some((e) => e.secretRef?.name === name)) uses.push(`envFrom of container ${c.name ?? ''}`);
  }
  if ((spec.imagePullSecrets ?? []).some((s) => s.name === name)) uses.push('imagePullSecrets');
  return uses;
}

async function workloads(d: TokenSecretDeletion, out: StillUsed): Promise<void> {
  const { namespace, name } = d.secret;
  for (const w of WORKLOADS) {
    let items: Workload[];
    try {
      items = await listObjects<Workload>(d.member, w.r, {
        namespace,
        limit: 500,
        what: `list ${w.r.plural} in ${namespace} on ${d.memberName}`,
      });
    } catch (error) {
      out.unchecked.push(`${w.r.plural} in ${namespace} on ${d.memberName} (${toErrorInfo(error).message})`);
      continue;
    }
    for (const item of items) {
      const uses = secretUses(w.spec(item), name);
      if (uses.length > 0)
        out.users.push(`${w.r.kind} ${namespace}/${item.metadata.name} on ${d.memberName} (${uses.join(', ')})`);
    }
  }
}

// ---- the operator's own configuration

/** The token a context's user sends: its `token`, else its `tokenFile` (read as client-go reads it, spaces trimmed). */
async function userToken(ctx: ResolvedContext): Promise<string | undefined> {
  if (ctx.user.token) return ctx.user.token;
  if (!ctx.user.tokenFile) return undefined;
  return (await readNamedFile(ctx.user.tokenFile)).toString('utf8').trim();
}

async function ownConfiguration(
  d: TokenSecretDeletion,
  tokens: Tokens,
  guard: DeleteGuard | undefined,
  out: StillUsed,
): Promise<void> {
  const contexts: ResolvedContext[] = [];
  const paths = guard?.kubeconfigs ?? precedence(process.env).paths;
  try {
    const merged = await loadMerged(paths);
    for (const name of merged.contexts.keys()) {
      try {
        contexts.push(resolveContext(merged, name));
      } catch {
        // A context naming a user or cluster that is not there sends no credential (kubectl refuses it too).
      }
    }
  } catch (error) {
    out.unchecked.push(`kubeconfig ${paths.join(':')} (${toErrorInfo(error).message})`);
  }
  if (d.clusters) {
    try {
      for (const ref of await d.clusters())
        if (ref.source.kind === 'kubeconfig-file') contexts.push(await ref.resolve());
    } catch (error) {
      out.unchecked.push(`the clusters of fleet's providers (${toErrorInfo(error).message})`);
    }
  }
  const seen = new Set<string>();
  const self = d.self?.file;
  for (const ctx of contexts) {
    const key = `${ctx.contextFile}\0${ctx.contextName}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // The file and user this run replaces: its credential is being changed, not held by someone else.
    if (self && ctx.userFile && self.paths.includes(ctx.userFile) && ctx.userName === self.user) continue;
    let token: string | undefined;
    try {
      token = await userToken(ctx);
    } catch (error) {
      out.unchecked.push(
        `kubeconfig ${ctx.contextFile} (context ${ctx.contextName}): its tokenFile (${toErrorInfo(error).message})`,
      );
      continue;
    }
    if (tokens.has(token)) out.users.push(`kubeconfig ${ctx.contextFile} (context ${ctx.contextName})`);
  }
}

// ---- other hub Secrets

/**
 * The hub's Secrets, listed once for a few seconds: `creds rotate --all` looks for copies of each old token among the
 * same Secrets, and one list per credential would make a run over n Secrets read n² of them. A copy made in those
 * seconds is missed; the list is the one the run started from.
 */
const HUB_LIST_MS = 30_000;
const HELM_RELEASE = 'helm.sh/release.v1';
const hubLists = new WeakMap<KubeClient, { at: number; list: Promise<Secret[]> }>();
function hubList(hub: KubeClient, name: string): Promise<Secret[]> {
  const cached = hubLists.get(hub);
  if (cached && Date.now() - cached.at < HUB_LIST_MS) return cached.list;
  const list = (async () => {
    const kept: Secret[] = [];
    let cont: string | undefined;
    do {
      const page = await listPage<Secret>(hub, SECRET, {
        limit: 100,
        continue: cont,
        what: `list Secrets on hub ${name}`,
      });
      // Helm's release records (gzipped, up to 1 MiB each) are no credential's consumer, and a token in them is compressed.
      kept.push(...page.items.filter((s) => s.type !== HELM_RELEASE));
      cont = page.metadata.continue || undefined;
    } while (cont);
    return kept;
  })();
  hubLists.set(hub, { at: Date.now(), list });
  list.catch(() => hubLists.delete(hub));
  return list;
}

async function hubSecrets(d: TokenSecretDeletion, tokens: Tokens, uid: string | undefined, out: StillUsed) {
  if ('none' in d.hub) {
    out.unchecked.push(`hub Secrets (${d.hub.none})`);
    return;
  }
  let items: Secret[];
  try {
    items = await hubList(d.hub.client, d.hub.name);
  } catch (error) {
    out.unchecked.push(`Secrets on hub ${d.hub.name} (${toErrorInfo(error).message})`);
    return;
  }
  const self = d.self?.hubSecret;
  for (const s of items) {
    const ns = s.metadata.namespace ?? '';
    if (self && ns === self.namespace && s.metadata.name === self.name) continue;
    // The hub is the member (one cluster): the Secret being deleted is not another holder of its own token.
    if (uid && s.metadata.uid === uid) continue;
    const keys = Object.keys(s.data ?? {}).filter((k) => {
      const text = secretText(s, k);
      return text !== undefined && tokens.plain.some((t) => text.includes(t));
    });
    if (keys.length > 0) out.users.push(`hub Secret ${ns}/${s.metadata.name} (key ${keys.join(', ')})`);
  }
}
