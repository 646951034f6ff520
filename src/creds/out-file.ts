import { createHash } from 'node:crypto';

import { ConfigError } from '../base/errors.js';
import { readOptional } from '../base/files.js';
import { kernelPath } from '../base/paths.js';
import { loadYamlIfValid } from '../base/yaml.js';
import type { KubeconfigDoc } from '../kubeconfig/types.js';
import type { ClusterRef } from '../providers/types.js';
import { normalServer, recordedCluster } from './cluster-identity.js';
import { certNotAfter, identityOf } from './credential-record.js';
import { fileFacts, recordedContext } from './kubeconfig-out.js';
import { METHODS, type Method, anchorName, legacySecretName } from './methods.js';
import { type Identity, credentialId, username } from './rbac.js';
import { ownAnchors } from './revoke.js';

/**
 * `creds generate --out FILE` over a file that is there already. A file fleet did not write is never replaced without
 * --force (it may be someone's only kubeconfig). A file fleet wrote holds a credential that `creds revoke --file FILE`
 * revokes through what the file records (its cluster, identity, method, and the anchor or token Secret its token
 * names): replacing the file with another credential would leave that one valid with nothing left that names it, so
 * the file may be replaced only by the same credential (same cluster, identity, method and Secret: revoke then still
 * finds it), and otherwise only with --force, which says what stays valid and how to revoke it.
 */

/** The credential a file fleet wrote holds, as `creds revoke --file` reads it. */
export interface HeldFileCredential {
  path: string;
  cluster: string;
  /** The recorded server of the cluster (a cluster reached under another name is the same one). */
  server?: string;
  identity: string;
  id?: Identity;
  method: Method;
  /** The Secrets whose deletion revokes it (the anchor of a bound token, a legacy token's Secret; a rotation's too). */
  secrets: Array<{ namespace: string; name: string }>;
  /** When it stops working: a token's expiry, a certificate's NotAfter; absent for a legacy token (never). */
  expires?: string;
  /** The fleet.dev/credential label value of the identity (what fleet labelled the RBAC it made with). */
  label?: string;
  /** Contexts of the file beside the credential's: an adopted file keeps the user's other contexts. */
  otherContexts: string[];
}

const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** What the file fleet wrote holds; undefined for a file without fleet's record or whose record names no method. */
export function heldFileCredential(doc: KubeconfigDoc, path: string): HeldFileCredential | undefined {
  const facts = fileFacts(doc);
  if (!facts?.method || !facts.cluster || !METHODS.includes(facts.method as Method)) return undefined;
  const abs = kernelPath(path);
  const method = facts.method as Method;
  const context = recordedContext(doc, facts);
  const ctx = doc.contexts?.find((c) => c.name === context)?.context;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user ?? {};
  const id = identityOf(method, facts.identity, user);
  const held = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  return {
    path: abs,
    cluster: facts.cluster,
    server: recordedCluster(facts, 'file', held).server ?? held?.server,
    identity: facts.identity ?? '',
    ...(id ? { id, label: credentialId(id) } : {}),
    method,
    secrets: id ? ownAnchors(id, method, facts, user.token, short(`file:${abs}`)) : [],
    expires: method === 'client-cert' ? (certNotAfter(user) ?? facts.expires) : facts.expires,
    otherContexts: (doc.contexts ?? []).map((c) => c.name).filter((n) => n !== context),
  };
}

/** The credential generate is about to write to the file. */
export interface NewFileCredential {
  ref: Pick<ClusterRef, 'name' | 'server'>;
  identity: Identity;
  method: Method;
  path: string;
}

/** The Secret the new credential hangs on (generate's own naming for a file destination); none for a certificate. */
function newSecret(n: NewFileCredential): string | undefined {
  if (n.identity.kind !== 'ServiceAccount' || n.method === 'client-cert') return undefined;
  const key = short(`file:${kernelPath(n.path)}`);
  const name = n.method === 'token' ? anchorName(n.identity.name, key) : legacySecretName(n.identity.name, key);
  return `${n.identity.namespace}/${name}`;
}

/** Whether writing `n` over the file leaves what `held` named revocable by `creds revoke --file` (it is the same). */
export function sameCredential(held: HeldFileCredential, n: NewFileCredential): boolean {
  const sameCluster =
    held.cluster === n.ref.name ||
    (held.server !== undefined &&
      n.ref.server !== undefined &&
      normalServer(held.server) === normalServer(n.ref.server));
  if (!sameCluster || held.method !== n.method || held.identity !== username(n.identity)) return false;
  const secret = newSecret(n);
  return held.secrets.every((s) => `${s.namespace}/${s.name}` === secret);
}

const secretOf = (h: HeldFileCredential) =>
  h.secrets.length > 0 ? h.secrets.map((s) => `${s.namespace}/${s.name}`).join(', ') : undefined;

/** `the bound token of system:serviceaccount:a:b on cluster member-1 (anchor Secret a/b-fleet-anchor-1234)` */
export function describeHeld(h: HeldFileCredential): string {
  const secret = secretOf(h);
  const what =
    h.method === 'token'
      ? `the bound token of ${h.identity}`
      : h.method === 'legacy-token'
        ? `the legacy token of ${h.identity}`
        : `the client certificate of ${h.identity}`;
  const detail =
    h.method === 'token' && secret
      ? ` (anchor Secret ${secret})`
      : h.method === 'legacy-token' && secret
        ? ` (token Secret ${secret})`
        : '';
  return `${what} on cluster ${h.cluster}${detail}`;
}

/** For --force: what stays valid once the file no longer names it, and the command that revokes it. */
export function stillValidWarning(h: HeldFileCredential, dryRun = false): string {
  const held = `--out ${h.path} held ${describeHeld(h)}, ${dryRun ? 'which would be ' : ''}replaced (--force)`;
  const deleteSecrets = h.secrets.map((s) => `kubectl -n ${s.namespace} delete secret ${s.name}`).join('; ');
  if (h.method === 'client-cert') {
    // The RBAC is the identity's, shared with its other credentials: named, not offered as a delete.
    const rbac = h.label
      ? `; what it may do is the RBAC fleet made for ${h.identity} on cluster ${h.cluster} (labelled fleet.dev/credential=${h.label}), which its other credentials may share`
      : '';
    return `${held}: it stays valid until ${h.expires ?? 'its NotAfter'} (a certificate cannot be revoked)${rbac}`;
  }
  const until =
    h.method === 'legacy-token'
      ? 'it stays valid (a legacy token never expires) until its Secret is deleted'
      : `it stays valid until ${h.expires ?? 'it expires'}, or until its anchor Secret is deleted`;
  const how = deleteSecrets
    ? `; fleet creds revoke --file can no longer find it: to revoke it, on cluster ${h.cluster}: ${deleteSecrets}`
    : '; fleet creds revoke --file can no longer find it';
  return `${held}: ${until}${how}`;
}

/** `2 other contexts (prod, dev)`: a file's contexts beside the credential's, named (at most three). */
const counted = (contexts: string[]) =>
  `${contexts.length} other context${contexts.length === 1 ? '' : 's'} (${contexts.slice(0, 3).join(', ')}${contexts.length > 3 ? `, and ${contexts.length - 3} more` : ''})`;

/** What --force replaces in a file fleet wrote: a credential the write leaves valid, the user's other contexts. */
export interface OutFileReplaced {
  stillValid?: HeldFileCredential;
  contexts: string[];
}

/** One warning line each, for the result of a run with --force. */
export function replacedWarnings(r: OutFileReplaced | undefined, path: string, dryRun = false): string[] {
  if (!r) return [];
  const out: string[] = [];
  if (r.stillValid) out.push(stillValidWarning(r.stillValid, dryRun));
  if (r.contexts.length > 0)
    out.push(
      `--out ${path}: ${dryRun ? 'would replace' : 'replaced'} ${counted(r.contexts)} fleet did not write (--force)`,
    );
  return out;
}

/**
 * The --out check of `creds generate`, before anything is contacted: a file fleet did not write, one with contexts
 * fleet did not write beside its credential (an adopted file), or one holding another credential is refused without
 * --force (exit 2, one line: what it holds, and how to revoke it first). Returns, with --force, the credential the
 * file held that the write leaves valid.
 */
export async function checkOutFile(
  n: NewFileCredential,
  force: boolean | undefined,
): Promise<OutFileReplaced | undefined> {
  const path = n.path;
  const text = await readOptional(path, 'a kubeconfig file', `--out ${path}`);
  if (text === undefined) return undefined;
  const doc = loadYamlIfValid(text) as KubeconfigDoc | undefined;
  if (fileFacts(doc) === undefined) {
    if (force) return undefined;
    throw new ConfigError(`--out ${path}: the file exists and was not written by fleet; pass --force to replace it`);
  }
  const held = heldFileCredential(doc!, path);
  const stillValid = held && !sameCredential(held, n) ? held : undefined;
  const contexts = held?.otherContexts ?? [];
  if (!stillValid && contexts.length === 0) return undefined;
  if (force) return { ...(stillValid ? { stillValid } : {}), contexts };
  const parts: string[] = [];
  if (stillValid) parts.push(describeHeld(stillValid));
  if (contexts.length > 0) parts.push(`${counted(contexts)} fleet did not write`);
  const ways = stillValid
    ? `; replacing it would leave that credential valid and no longer revocable with creds revoke --file: revoke it first (fleet creds revoke --file ${path}), or pass --force to replace it`
    : '; pass --force to replace it';
  throw new ConfigError(`--out ${path}: the file holds ${parts.join(' and ')}${ways}`);
}
