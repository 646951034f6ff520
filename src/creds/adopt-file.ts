import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';

import { ConfigError, FleetError } from '../base/errors.js';
import { checkWritableFile, fileError, readNamedFile, readOptional } from '../base/files.js';
import { loadYamlIfValid } from '../base/yaml.js';
import { ApplyLog } from '../kube/apply-log.js';
import type { KubeClient } from '../kube/client.js';
import { SECRET } from '../kube/resources.js';
import { deleteObject } from '../kube/typed.js';
import { writeTarget } from '../kubeconfig/atomic-write.js';
import { type ResolvedContext, mergeKubeconfigs, resolveContext } from '../kubeconfig/loading-rules.js';
import { parseKubeconfig } from '../kubeconfig/parse.js';
import { registerUserSecrets } from '../kubeconfig/redact.js';
import type { KubeconfigDoc } from '../kubeconfig/types.js';
import {
  ADOPTED_AT,
  ADOPTED_FROM,
  type AdoptRequest,
  type AdoptedCredential,
  type AdoptionReport,
  type DeletionSite,
  adoptGrant,
  adoptionFailed,
  adoptedIdentity,
  inspectCredential,
  requireMayMint,
  legacyTokenSecret,
  oldFate,
  parseRef,
  planOldDeletion,
  rotateInto,
} from './adopt.js';
import { identityFacts, identityRecord, recordedCluster } from './cluster-identity.js';
import { checkHeldServer } from './held-server.js';
import { fileFacts, recordedContext, withFileFacts } from './kubeconfig-out.js';
import { ANNOTATIONS, factKey } from './labels.js';
import { anchorName } from './methods.js';
import { describeAnnotations, describeScope, username } from './rbac.js';
import { type RotationState, anchorSuffix, fileState, newRunId } from './rotation-state.js';
import {
  type RotateEnv,
  type RotateRequest,
  type Rotation,
  findTarget,
  newRotation,
  readStored,
  reachTarget,
  step,
  takeOver,
} from './rotation-steps.js';
import { Conflict, FileStore, stateFacts, writeKubeconfigIfUnchanged } from './rotation-store.js';
import { kernelPath } from '../base/paths.js';

/**
 * `fleet creds adopt --file PATH [--context NAME]`: a kubeconfig file fleet did not write is taken over the way a hub
 * Secret is (adopt.ts): the credential of one context is described with itself, a bound token is minted for the same
 * ServiceAccount or a new least-privilege identity, verified, and written into the same file in place of that context's
 * user credential only. The first write marks the file as fleet's (the `fleet.dev/credential` extension that `creds
 * generate --out` writes, with the context it keeps) together with a rotation claim, so the rest is rotation's own
 * steps through FileStore, and `creds rotate --file` / `creds revoke --file` treat the file as theirs afterwards.
 * Every write is conditional on the file's bytes being as read (writeKubeconfigIfUnchanged), atomic and 0600.
 */
export interface AdoptFileRequest extends Pick<
  AdoptRequest,
  'cluster' | 'clusters' | 'clusterOverride' | 'into' | 'durationSeconds' | 'revokeOld' | 'dryRun'
> {
  file: AdoptFile;
}

/** A kubeconfig file named by --file, read and checked before anything is contacted. */
export interface AdoptFile {
  /** The path as given, made absolute (a symlink stays the link: relative paths in it resolve beside the link, as kubectl does). */
  path: string;
  /** Where a write goes: the file a symlink leads to (the link itself is never replaced by a regular file). */
  target: string;
  text: string;
  bytes: Buffer;
  /** The file's mode, put back if an adoption is undone. */
  mode: number;
  doc: KubeconfigDoc;
  context: string;
  resolved: ResolvedContext;
  /** fleet's record, when fleet keeps this file already (generated, adopted, or an adoption left half-done). */
  facts?: Record<string, string>;
}

/**
 * Reads --file and picks the context (--context, else the current one), refusing in one line (exit 2) what cannot be
 * adopted: a path that is missing, a directory, a FIFO or other non-regular file; a context not in the file, without a
 * user, or whose user other contexts share (the new credential would become theirs too); a plugin (exec or
 * auth-provider), whose credential is the plugin's to make and renew; a user with no token or client certificate; and a
 * file fleet keeps for another context (a file carries one fleet record).
 */
export async function readAdoptFile(path: string, context: string | undefined): Promise<AdoptFile> {
  const label = `--file ${path}`;
  const abs = kernelPath(path);
  let bytes: Buffer;
  let mode: number;
  try {
    // Regular files only, looked at before they are opened: a FIFO is refused, never waited on.
    bytes = await readNamedFile(abs);
    mode = (await stat(abs)).mode & 0o777;
  } catch (error) {
    throw fileError(label, error, 'a kubeconfig file');
  }
  const text = bytes.toString('utf8');
  const file = parseKubeconfig(text, label);
  const name = context ?? file.currentContext;
  if (!name) throw new ConfigError(`${label}: the file sets no current-context: name the context with --context`);
  if (!file.contexts.has(name))
    throw new ConfigError(
      `${label}: no context "${name}" in the file (its contexts: ${[...file.contexts.keys()].join(', ') || 'none'})`,
    );
  const resolved = resolveContext(mergeKubeconfigs([{ ...file, path: abs }]), name);
  const user = resolved.user;
  registerUserSecrets(user);
  if (!resolved.userName) throw new ConfigError(`${label}: context "${name}" has no user: no credential to adopt`);
  const sharing = [...file.contexts].filter(([n, c]) => n !== name && c.user === resolved.userName).map(([n]) => n);
  if (sharing.length > 0)
    throw new ConfigError(
      `${label}: user "${resolved.userName}" of context "${name}" is also the user of ${sharing.map((n) => `"${n}"`).join(', ')}: the new credential would replace theirs too; give the context a user of its own`,
    );
  if (user.exec || user['auth-provider'])
    throw new ConfigError(
      `${label}: context "${name}" gets its credential from ${user.exec ? `the exec plugin ${user.exec.command ?? ''}` : `the ${user['auth-provider']?.name ?? ''} auth-provider`}, which makes and renews it: fleet holds no secret of it to take over or rotate`,
    );
  if (!user.token && !user.tokenFile && !user['client-certificate-data'] && !user['client-certificate'])
    throw new ConfigError(`${label}: context "${name}" has no token or client certificate: nothing fleet can adopt`);
  const facts = fileFacts(loadYamlIfValid(text) as KubeconfigDoc | undefined);
  if (facts) {
    const kept = recordedContext(file.doc, facts);
    if (kept !== name)
      throw new ConfigError(
        `${label}: fleet keeps context "${kept}" of this file already, and a file holds one fleet credential: adopt "${name}" into a file of its own`,
      );
  }
  return {
    path: abs,
    target: await writeTarget(abs),
    text,
    bytes,
    mode,
    doc: file.doc,
    context: name,
    resolved,
    ...(facts ? { facts } : {}),
  };
}

/** The checks of a write made before the cluster is touched: the file's directory must take a temp file and a rename. */
export async function checkAdoptFileWritable(f: AdoptFile): Promise<void> {
  await checkWritableFile(f.target, `--file ${f.path}`, 'a kubeconfig file');
}

const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

export async function adoptFile(r: AdoptFileRequest, env: RotateEnv): Promise<AdoptionReport> {
  const item = await adoptFileOne(r, env, newRunId());
  return { kind: 'CredentialAdoption', dryRun: r.dryRun, hub: '', items: [item] };
}

function rotateRequest(r: AdoptFileRequest): RotateRequest {
  return {
    names: [],
    files: [r.file.path],
    all: false,
    cluster: r.cluster,
    clusters: r.clusters,
    clusterOverride: r.clusterOverride,
    durationSeconds: r.durationSeconds,
    concurrency: 1,
  };
}

async function adoptFileOne(r: AdoptFileRequest, env: RotateEnv, run: string): Promise<AdoptedCredential> {
  const started = Date.now();
  let f = r.file;
  const item: AdoptedCredential = {
    file: { path: f.path, context: f.context },
    status: 'failed',
    verification: [],
    steps: [],
    durationMs: 0,
  };
  const store = new FileStore(f.path);
  const rot = newRotation(store, rotateRequest(r), env, run);
  const log = new ApplyLog<'cluster'>();
  const made: { claimed?: boolean } = {};
  let release: (() => Promise<void>) | undefined;
  try {
    if (!r.dryRun) {
      // The rotation lock (as creds rotate --file takes it), then the file read again: it is what the claim must match.
      ({ release } = await store.lock());
      rot.exclusive = true;
      f = await readAdoptFile(f.path, f.context);
    }
    if (f.facts) await resumeOrLeave(rot, f, item, r);
    else await adoptFresh(rot, f, item, r, log, made);
  } catch (error) {
    const adopting = f;
    await adoptionFailed(item, error, rot, env, {
      made: Boolean(made.claimed) || log.applied.length > 0,
      undo: () => undo(rot, adopting, log),
      afterReplace:
        'after the file got the new credential: the next creds adopt --file (or creds rotate --file) finishes it',
    });
  } finally {
    item.steps = rot.steps;
    await release?.().catch(() => undefined);
    item.durationMs = Date.now() - started;
    env.progress?.doing(store.where, undefined);
  }
  return item;
}

/** A file fleet keeps already: an adoption an earlier run left half-done is finished; a finished one is left. */
async function resumeOrLeave(rot: Rotation, f: AdoptFile, item: AdoptedCredential, r: AdoptFileRequest) {
  const facts = f.facts!;
  const from = facts[factKey(ADOPTED_FROM)];
  const s = await readStored(rot);
  if (!s.state) {
    item.status = 'unchanged';
    item.reason = from
      ? `adopted already (from ${from}); creds rotate --file keeps it fresh`
      : 'written by fleet creds generate: nothing to adopt (creds rotate --file keeps it fresh)';
    return;
  }
  if (r.dryRun) {
    item.status = 'planned';
    item.reason = `would finish the interrupted ${from ? 'adoption' : 'rotation'} (phase ${s.state.phase})`;
    return;
  }
  item.resumed = s.state.phase;
  const state = takeOver(rot, s.state);
  const found = await findTarget(rot, s);
  item.target = { cluster: found.ref.name, by: found.by };
  item.destination = await checkHeldServer(f.resolved.cluster, found.destination, f.path, 'adopt', {
    userFiles: true,
    signal: rot.env.cancel?.signal,
  });
  // Only a claim still holds the old credential in the file: then it can be probed once its Secret is deleted.
  const oldClient =
    state.phase === 'claimed'
      ? await rot.env.connector.withCredential(found.destination, f.resolved.user, `${f.path} (old credential)`, {
          userFiles: true,
        })
      : undefined;
  item.after = {
    identity: s.identity,
    method: s.method,
    access: facts[factKey(ANNOTATIONS.access)] ?? '',
    scope: facts[factKey(ANNOTATIONS.scope)] ?? '',
  };
  await rotateInto(rot, s, state, found.client, oldClient, item, found.destination, found.ref.name, fileSite(f));
  item.status = 'adopted';
}

async function adoptFresh(
  rot: Rotation,
  f: AdoptFile,
  item: AdoptedCredential,
  r: AdoptFileRequest,
  log: ApplyLog<'cluster'>,
  made: { claimed?: boolean },
): Promise<void> {
  const where = `${f.path} (context ${f.context})`;
  const method = 'token';
  // The cluster to mint on: the context's server and CA among the clusters fleet knows, with a credential that may
  // ask who the held token is (or mint for the identity named; with --kubeconfig FILE alone, the old credential
  // itself, when it may). The file's entry must reach that cluster (held-server.ts) before anything is sent.
  rot.at.step = 'target';
  const found = await reachTarget(rot.request, recordedCluster({}, 'file', f.resolved.cluster), rot.env, {
    what: where,
    method,
    id: r.into?.identity,
  });
  rot.at.target = found.client;
  const target = found.client;
  item.target = { cluster: found.ref.name, by: found.by };
  item.destination = await checkHeldServer(f.resolved.cluster, found.destination, where, 'adopt', {
    userFiles: true,
    signal: rot.env.cancel?.signal,
  });

  // Who the credential is, asked of the member, and what it may do there (auth rules' risk report).
  rot.at.step = 'inspect';
  const { before, oldClient } = await inspectCredential(found, f.resolved.user, r.into, where, rot.env.connector, {
    userFiles: true,
  });
  item.before = before;
  const id = adoptedIdentity(before, r.into, where);
  if (!r.into) await requireMayMint(target, id, found.ref.name, where);
  before.tokenSecret = await legacyTokenSecret(target, before.identity, f.resolved.user.token);
  const { access, namespaces, objects } = await adoptGrant(target, found.ref, id, r, f.resolved.cluster, where);
  const annotations = describeAnnotations(id, access, namespaces, method);
  item.after = {
    identity: username(id),
    method,
    access: annotations[ANNOTATIONS.access],
    scope: describeScope(namespaces),
  };
  item.old = oldFate(before, f.resolved, r.revokeOld);

  if (r.dryRun) {
    item.status = 'planned';
    const deletion = await planOldDeletion(rot, item, before, {
      target,
      cluster: found.ref.name,
      token: f.resolved.user.token,
      revokeOld: r.revokeOld,
      site: fileSite(f),
    });
    item.reason = `would mint a bound token for ${username(id)} (${annotations[ANNOTATIONS.access]}, ${describeScope(namespaces)}), verify it at ${item.destination.verifiedAt}, write it into ${where} (for server ${item.destination.server}, ${item.destination.by}) in place of user "${f.resolved.userName}"'s credential${deletion}`;
    return;
  }

  // From here the run changes things: a new identity's RBAC, then the file's mark with the rotation claim.
  for (const obj of objects) await log.apply(target, obj, 'cluster');
  rot.env.cancel?.check();
  item.objects = log.applied.map(({ kind, name, namespace, action }) => ({ kind, name, namespace, action }));
  const facts = await identityFacts(await found.ref.resolve(), target, found.ref);
  const state: RotationState = {
    phase: 'claimed',
    newAnchor: { namespace: id.namespace, name: anchorName(id.name, `${short(`file:${f.path}`)}-${anchorSuffix()}`) },
    oldAnchor: r.revokeOld && before.tokenSecret ? parseRef(before.tokenSecret) : undefined,
    run: rot.run,
    started: new Date().toISOString(),
  };
  // generate's file facts (method, identity, cluster, expires, lifetime, the cluster's identity), the grant as a
  // Secret records it (the adopted identity's own binding carries no fleet label), the context kept, and the old one.
  const recorded: Record<string, string> = {
    method,
    identity: username(id),
    cluster: found.ref.name,
    context: f.context,
    [factKey(ANNOTATIONS.access)]: annotations[ANNOTATIONS.access],
    [factKey(ANNOTATIONS.scope)]: annotations[ANNOTATIONS.scope],
    ...identityRecord(facts, 'file'),
    expires: before.expires,
    lifetime: String(r.durationSeconds),
    [factKey(ADOPTED_FROM)]: `${before.identity} (${before.method}, expires ${before.expires})`,
    [factKey(ADOPTED_AT)]: new Date().toISOString(),
    ...stateFacts(state),
  };
  await step(
    rot,
    'claim',
    async () => {
      try {
        await writeKubeconfigIfUnchanged(f.path, f.text, withFileFacts(f.doc, recorded));
      } catch (error) {
        if (error instanceof Conflict)
          throw new FleetError(
            'server',
            `${f.path} was changed by someone else since it was read; nothing was adopted`,
          );
        throw error;
      }
      made.claimed = true;
    },
    () => 'marked as fleet-managed, adoption claimed',
    'claimed',
  );
  const s = await readStored(rot);
  await rotateInto(rot, s, state, target, oldClient, item, found.destination, found.ref.name, fileSite(f));
  item.status = 'adopted';
}

/**
 * A failure or interrupt before the file got the new credential: the new anchor (and every token bound to it) is
 * deleted, the file's bytes and mode are put back as they were read (only while it still holds this run's claim), and
 * the RBAC a new identity got is removed. Says what it did.
 */
async function undo(rot: Rotation, f: AdoptFile, log: ApplyLog<'cluster'>): Promise<string | undefined> {
  const parts: string[] = [];
  rot.env.cancel?.undoing(() => [`the adoption mark on ${f.path}`, ...log.pending()]);
  const now = await readOptional(f.target, 'a kubeconfig file');
  const facts = now === undefined ? undefined : fileFacts(loadYamlIfValid(now) as KubeconfigDoc | undefined);
  const st = facts ? fileState(facts) : undefined;
  if (now !== undefined && st?.phase === 'claimed' && st.run === rot.run) {
    if (st.newAnchor && rot.at.target) {
      await deleteAnchor(rot.at.target, st.newAnchor);
      parts.push(`the new anchor ${st.newAnchor.namespace}/${st.newAnchor.name} deleted`);
    }
    await writeKubeconfigIfUnchanged(f.path, now, f.bytes, f.mode);
    parts.push(`${f.path} is as it was (the old credential in it, fleet's mark removed)`);
  } else if (!facts) parts.push(`${f.path} is unchanged`);
  const failed = await log.rollback();
  if (log.applied.some((o) => o.action === 'created'))
    parts.push(
      failed.length > 0 ? `could not remove: ${failed.join('; ')}` : 'the RBAC objects this run created were removed',
    );
  rot.at.phase = 'unchanged';
  return parts.join('; ') || undefined;
}

/**
 * Where a file's adoption looks for other holders of the old token: it connects to no hub (said in `unchecked`), and the
 * file's own user, whose credential this run replaces, is not another holder (the path as given and the file a link
 * leads to).
 */
function fileSite(f: AdoptFile): DeletionSite {
  return {
    hub: { none: 'creds adopt --file connects to no hub' },
    self: { file: { paths: [...new Set([f.path, f.target])], user: f.resolved.userName } },
  };
}

const deleteAnchor = (target: KubeClient, a: { namespace: string; name: string }) =>
  deleteObject(target, SECRET, a.name, { namespace: a.namespace }).catch(() => undefined);
