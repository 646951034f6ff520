import { createHash } from 'node:crypto';

import { FleetError } from '../base/errors.js';
import { readClusterId } from '../clusters/ids.js';
import type { KubeClient } from '../kube/client.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { serverKey } from '../kubeconfig/server.js';
import type { ClusterEntry } from '../kubeconfig/types.js';
import type { ClusterRef } from '../providers/types.js';
import { portableCluster } from './kubeconfig-out.js';
import { ANNOTATIONS, factKey } from './labels.js';

/**
 * A credential's cluster, recorded so that any invocation finds it again: another spelling of the kubeconfig path,
 * KUBECONFIG vs --kubeconfig, a fleet configuration, a CronJob on the hub with another file layout, another machine.
 * The name fleet gave the cluster (`merged.yaml+member-1`) depends on how it was reached, so it is only a hint; what
 * identifies the cluster is its server URL, the SHA-256 of its CA certificates (DER), and its KEP-2149 cluster ID
 * (ClusterProperty cluster.clusterset.k8s.io, else the kube-system namespace UID) where readable.
 *
 * Rotation needs more than the credential being rotated can do (an anchor, a TokenRequest, a CSR approval), so the
 * target is reached through a cluster fleet knows with a privileged credential: the one whose server and CA match (and
 * whose ID matches, checked once connected) and that may mint. `--cluster` overrides; Secrets and files written before
 * these facts were recorded are found by their name, then by the server and CA of the credential they hold.
 */
export interface ClusterIdentityFacts {
  server?: string;
  /** sha256 hex of each CA certificate's DER, sorted, comma-separated. */
  caSha256?: string;
  clusterId?: string;
  clusterIdSource?: string;
  /** The kubeconfig context it was reached through when generated: a hint, like the name. */
  context?: string;
}

export interface RecordedCluster extends ClusterIdentityFacts {
  /** The cluster's fleet name when generated (`fleet.dev/credential-cluster`). */
  name?: string;
  /** Written before the facts were recorded: server and CA come from the credential itself. */
  legacy: boolean;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

/** The fingerprint of a CA bundle (base64 of PEM, as in certificate-authority-data): each certificate's DER hashed. */
export function caFingerprint(caData: string | undefined): string | undefined {
  if (!caData) return undefined;
  const pem = Buffer.from(caData, 'base64').toString('utf8');
  const ders = [...pem.matchAll(PEM_BLOCK)].map((m) => Buffer.from(m[1].replace(/\s+/g, ''), 'base64'));
  // Not PEM: the bytes as given (a DER CA), so the same bytes still compare equal.
  const parts = ders.length > 0 ? ders : [Buffer.from(caData, 'base64')];
  return [...new Set(parts.map((d) => createHash('sha256').update(d).digest('hex')))].sort().join(',');
}

/**
 * A server URL as compared: as kubectl dials it (src/kubeconfig/server.ts, the one comparison): `127.1` or a trailing
 * dot is another server than `127.0.0.1`, a default port or the host's case is not.
 */
export function normalServer(server: string | undefined): string | undefined {
  return server ? serverKey(server) : undefined;
}

const sameCa = (a: string | undefined, b: string | undefined) =>
  Boolean(a && b && a.split(',').some((x) => b.split(',').includes(x)));

/** What generate records about the target it connected to (the ID is read live; unreadable is left out). */
export async function identityFacts(
  ctx: ResolvedContext,
  client: KubeClient,
  ref: ClusterRef,
): Promise<ClusterIdentityFacts> {
  const cluster = await portableCluster(ctx);
  const id = await readClusterId(client).catch(() => ({ clusterId: undefined, clusterIdSource: undefined }));
  return {
    server: cluster.server,
    caSha256: caFingerprint(cluster['certificate-authority-data']),
    clusterId: id.clusterId,
    clusterIdSource: id.clusterIdSource,
    context: ref.source.context ?? ctx.contextName,
  };
}

const KEYS = {
  server: ANNOTATIONS.clusterServer,
  caSha256: ANNOTATIONS.clusterCaSha256,
  clusterId: ANNOTATIONS.clusterId,
  clusterIdSource: ANNOTATIONS.clusterIdSource,
  context: ANNOTATIONS.clusterContext,
} as const;

/** The facts as Secret annotations (`secret`) or as keys of a file's fleet.dev/credential extension (`file`). */
export function identityRecord(f: ClusterIdentityFacts, where: 'secret' | 'file'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, annotation] of Object.entries(KEYS)) {
    const v = f[k as keyof ClusterIdentityFacts];
    if (v) out[where === 'secret' ? annotation : factKey(annotation)] = v;
  }
  return out;
}

/** What a Secret's annotations (or a file's facts) say about its cluster; the held credential's cluster fills in old ones. */
export function recordedCluster(
  values: Record<string, string>,
  where: 'secret' | 'file',
  held: ClusterEntry | undefined,
): RecordedCluster {
  const get = (annotation: string) => values[where === 'secret' ? annotation : factKey(annotation)] || undefined;
  // A file has always kept the name as `cluster` in its extension (generate's facts), a Secret in the annotation.
  const rec: RecordedCluster = {
    name: (where === 'secret' ? values[ANNOTATIONS.cluster] : values.cluster) || undefined,
    legacy: false,
  };
  for (const [k, annotation] of Object.entries(KEYS)) rec[k as keyof ClusterIdentityFacts] = get(annotation);
  if (!rec.server) {
    rec.legacy = true;
    rec.server = held?.server;
    rec.caSha256 ??= caFingerprint(held?.['certificate-authority-data']);
  }
  return rec;
}

export interface ClusterLookup {
  /** A cluster by name (ClusterNotFoundError when none). */
  get(name: string): Promise<ClusterRef>;
  /** Every cluster the command's providers know. */
  list(): Promise<ClusterRef[]>;
}

export interface ResolveOptions {
  /** --cluster: this cluster, whatever was recorded (its ID is still checked). */
  override?: string;
  clusters: ClusterLookup;
  connect: (ref: ClusterRef) => Promise<KubeClient>;
  /** Whether the credential of a candidate may mint the new credential (the target needs a privileged one). */
  mayMint: (client: KubeClient) => Promise<boolean>;
  /** Candidates never to use (the consumer Secret being rotated, read back by a hub provider). */
  exclude?: (ref: ClusterRef) => boolean;
  /** Names the credential in errors (`Secret ns/name`, a file path). */
  what: string;
}

export interface ResolvedTarget {
  ref: ClusterRef;
  client: KubeClient;
  /** How it was found: `--cluster`, `name`, `server+CA`, `CA+cluster ID`. */
  by: string;
}

const short = (fp: string | undefined) => (fp ? `sha256:${fp.split(',')[0].slice(0, 12)}…` : 'none recorded');

function describe(rec: RecordedCluster): string {
  const parts = [`server ${rec.server ?? 'unknown'}`, `CA ${short(rec.caSha256)}`];
  if (rec.clusterId) parts.push(`cluster ID ${rec.clusterId}`);
  if (rec.name) parts.push(`generated as "${rec.name}"`);
  return parts.join(', ');
}

async function checkId(client: KubeClient, rec: RecordedCluster): Promise<string | undefined> {
  if (!rec.clusterId) return undefined;
  const live = await readClusterId(client);
  if (live.clusterId && live.clusterId !== rec.clusterId)
    return `its cluster ID is ${live.clusterId}, the credential's is ${rec.clusterId}`;
  return undefined;
}

/** Server and CA of a candidate, or undefined when its context cannot be resolved (it is then no candidate). */
async function factsOf(ref: ClusterRef): Promise<{ server?: string; ca?: string } | undefined> {
  try {
    const cluster = await portableCluster(await ref.resolve());
    return { server: normalServer(cluster.server), ca: caFingerprint(cluster['certificate-authority-data']) };
  } catch {
    return undefined;
  }
}

/** The first candidate that did not answer (unreachable, timed out, a 5xx such as a stalled etcd), kept as the cause. */
interface Silent {
  first?: { ref: ClusterRef; error: FleetError };
}

/** Whether the error says the server did not answer (then recorded in `silent`), as opposed to answering no. */
function noAnswer(error: unknown, ref: ClusterRef, silent: Silent): boolean {
  if (
    !(error instanceof FleetError) ||
    !(error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server')
  )
    return false;
  silent.first ??= { ref, error };
  return true;
}

/**
 * Whether the candidate's credential may mint: true, false (the server said no), or undefined when the question could
 * not be asked (the reason is pushed to `rejected`; a server that did not answer is kept in `silent` as the cause).
 */
async function askMayMint(
  o: ResolveOptions,
  client: KubeClient,
  ref: ClusterRef,
  rejected: string[],
  silent: Silent,
): Promise<boolean | undefined> {
  try {
    return await o.mayMint(client);
  } catch (error) {
    rejected.push(
      `${ref.name} (${noAnswer(error, ref, silent) ? 'did not answer' : 'could not be asked whether it may mint'}: ${(error as Error).message})`,
    );
    return undefined;
  }
}

const fileBased = (ref: ClusterRef) => (ref.source.kind === 'kubeconfig-file' || ref.source.kind === 'kind' ? 0 : 1);

/**
 * The cluster to mint on, and a client for it. Never touches the credential: a caller resolves before it claims, so a
 * failure here leaves nothing behind. Errors name what was looked for and each candidate with why it was not used.
 */
export async function resolveCredentialCluster(rec: RecordedCluster, o: ResolveOptions): Promise<ResolvedTarget> {
  if (o.override) {
    const ref = await o.clusters.get(o.override);
    const client = await o.connect(ref);
    const wrong = await checkId(client, rec);
    if (wrong)
      throw new FleetError('config', `${o.what}: --cluster ${o.override} is not the credential's cluster: ${wrong}`);
    return { ref, client, by: '--cluster' };
  }
  const rejected: string[] = [];
  const silent: Silent = {};
  const server = normalServer(rec.server);
  // Written the old way: the name it was generated with, when that still names the same server.
  if (rec.legacy && rec.name) {
    const ref = await o.clusters.get(rec.name).catch(() => undefined);
    if (ref) {
      const f = await factsOf(ref);
      if (f && (!server || f.server === server)) {
        const client = await o.connect(ref).catch((error) => {
          rejected.push(`${ref.name} (${(error as Error).message})`);
          return undefined;
        });
        const may = client ? await askMayMint(o, client, ref, rejected, silent) : undefined;
        if (client && may) return { ref, client, by: 'name' };
        if (client && may === false) rejected.push(`${ref.name} (its credential may not mint the new one)`);
      }
    }
  }
  if (!server)
    throw new FleetError(
      'config',
      `${o.what}: no server recorded for its cluster and none in the credential; name the cluster with --cluster`,
    );
  let refs: ClusterRef[] = [];
  try {
    refs = await o.clusters.list();
  } catch (error) {
    rejected.push(`(the clusters could not be listed: ${(error as Error).message})`);
  }
  const strong: ClusterRef[] = [];
  const byCa: ClusterRef[] = [];
  for (const ref of refs) {
    if (o.exclude?.(ref)) continue;
    const f = await factsOf(ref);
    if (!f) continue;
    const caOk = !rec.caSha256 || !f.ca || sameCa(rec.caSha256, f.ca);
    if (f.server === server && caOk) strong.push(ref);
    // Another address for the same cluster (the CronJob's in-cluster DNS name): only with a recorded ID to prove it.
    else if (rec.clusterId && sameCa(rec.caSha256, f.ca)) byCa.push(ref);
  }
  const hinted = (r: ClusterRef) => (r.name === rec.name || (rec.context && r.source.context === rec.context) ? 0 : 1);
  strong.sort((a, b) => hinted(a) - hinted(b) || fileBased(a) - fileBased(b));
  byCa.sort((a, b) => hinted(a) - hinted(b) || fileBased(a) - fileBased(b));
  const accepted: Array<ResolvedTarget & { id?: string }> = [];
  for (const [tier, list] of [
    ['server+CA', strong],
    ['CA+cluster ID', byCa],
  ] as const) {
    for (const ref of list.slice(0, 16)) {
      let client: KubeClient;
      try {
        client = await o.connect(ref);
      } catch (error) {
        noAnswer(error, ref, silent);
        rejected.push(`${ref.name} (${(error as Error).message})`);
        continue;
      }
      let live: { clusterId?: string };
      try {
        live = await readClusterId(client);
      } catch (error) {
        // A server that does not answer is not a server whose ID is unreadable: it is said as what it is (below).
        if (noAnswer(error, ref, silent)) {
          rejected.push(`${ref.name} (did not answer: ${(error as Error).message})`);
          continue;
        }
        live = { clusterId: undefined };
      }
      if (rec.clusterId && live.clusterId !== rec.clusterId && (tier !== 'server+CA' || live.clusterId)) {
        rejected.push(
          `${ref.name} (cluster ID ${live.clusterId ?? 'unreadable'}, the credential's is ${rec.clusterId})`,
        );
        continue;
      }
      const may = await askMayMint(o, client, ref, rejected, silent);
      if (may === undefined) continue;
      if (!may) {
        rejected.push(`${ref.name} (its credential may not mint the new one)`);
        continue;
      }
      accepted.push({ ref, client, by: tier, id: live.clusterId });
      // With a recorded ID the first that proves it is the cluster; without, every candidate is looked at for ambiguity.
      if (rec.clusterId) return accepted[0];
    }
    if (accepted.length > 0) break;
  }
  const ids = new Set(accepted.map((a) => a.id ?? a.ref.name));
  if (accepted.length > 0 && ids.size === 1) return accepted[0];
  if (accepted.length > 1) {
    throw new FleetError(
      'config',
      `${o.what}: ${accepted.length} clusters match ${describe(rec)} and they are not the same cluster: ${accepted.map((a) => `${a.ref.name} (cluster ID ${a.id ?? 'unreadable'})`).join(', ')}; name one with --cluster`,
    );
  }
  // The cluster is there but did not answer (down, restarting, its etcd stalled): that is the cause, not the
  // configuration; the item keeps its old credential and the next run tries again. Not exit 2: nothing to fix.
  if (silent.first) {
    const { ref, error } = silent.first;
    throw new FleetError(error.kind, `${o.what}: its cluster ${ref.name} did not answer (${error.message})`, {
      cause: error,
    });
  }
  const seen =
    rejected.length > 0
      ? `candidates: ${rejected.join('; ')}`
      : `none of the ${refs.length} clusters fleet knows has that server and CA`;
  throw new FleetError(
    'config',
    `${o.what}: no cluster to rotate on matches ${describe(rec)}; ${seen}; name it with --cluster`,
  );
}
