import { type ErrorInfo, toErrorInfo } from '../base/errors.js';
import { type CredentialList, type ListHub, hubLabel, listCredentials } from '../creds/list.js';
import { resolveHubContext } from '../kube/connector.js';
import type { ExecCredentialRunner } from '../kube/exec-credential.js';
import { type RunOptions, runOverClusters } from '../fleet/runner.js';
import type { CacheCounts, HubObjects } from '../providers/hub/watch-cache.js';
import type { ClusterRef, ProviderFailure } from '../providers/types.js';
import type { Policy } from '../verify/policy.js';
import { FleetVerifier, type VerifyItem, type VerifyReport } from '../verify/report.js';

/**
 * One collection of `fleet exporter`: what `clusters verify` (with the exporter's policy) and `creds list --live` answer
 * over the clusters the providers list now, gathered with the same services those commands call, so a metric says what
 * the command would have said at that moment. Nothing here is cached between collections but the exec runner's
 * credentials (a plugin's token is used until it expires, as by kubectl).
 */
export interface Collection {
  /** When it started and ended (ms since the epoch). */
  startedAt: number;
  finishedAt: number;
  /** The providers (by name) that listed, and those that could not, with why. */
  sources: SourceState[];
  verify: VerifyReport;
  credentials: CredentialList;
  /** Lists and watch events of the hub objects so far, per hub and resource (cumulative: the cache's counts). */
  hubReads?: CacheCounts[];
}

export interface SourceState {
  /** `provider`: a provider of the fleet configuration (its clusters); `hub`: a hub whose consumer Secrets were read. */
  kind: 'provider' | 'hub';
  name: string;
  up: boolean;
  error?: ErrorInfo;
}

/** What the clusters are, this time: the refs selected from a freshly built provider, and the providers that failed. */
export interface Listing {
  refs: ClusterRef[];
  failures: ProviderFailure[];
  /** Every provider of the configuration by name, also one that listed no cluster. */
  providers: string[];
}

export interface CollectInputs {
  /** Lists the clusters anew (a provider built for this collection: hub Secrets added since the last one are seen). */
  list: () => Promise<Listing>;
  hubs: ListHub[];
  /** Read hub objects in these namespaces only (--hub-namespace). */
  hubNamespaces?: string[];
  /** Hub Secrets and ClusterProfiles, kept by watch from one collection to the next. */
  hubObjects?: HubObjects;
  policy: Policy;
  exec: ExecCredentialRunner;
  run: RunOptions;
  /** Asked between the steps: a stop (SIGTERM) ends the collection there; it is then not published. */
  signal?: AbortSignal;
}

/** Whether the cluster answered ready: its reachable check passed (fleet_cluster_up, the log line, --once's table). */
export function clusterUp(item: VerifyItem): boolean {
  return item.checks?.find((k) => k.name === 'reachable')?.status === 'pass';
}

/**
 * The hubs the exporter reads at every collection. A hub guessed from the loading rules (none configured) that cannot
 * even be found (no KUBECONFIG, no ~/.kube/config, not a Pod) is dropped once, at start, with a note: a fleet of
 * kubeconfig files alone has no hub, and a source down at every collection would be noise, not news. A configured
 * hub, or a guessed one that exists, stays a source whatever happens to it later.
 */
export async function hubsToRead(hubs: ListHub[], env = process.env): Promise<{ hubs: ListHub[]; notes: string[] }> {
  const kept: ListHub[] = [];
  const notes: string[] = [];
  for (const h of hubs) {
    const found =
      !h.guessed ||
      (await resolveHubContext(h, env).then(
        () => true,
        (error: unknown) => {
          notes.push(`no hub Secrets read: ${toErrorInfo(error).message}`);
          return false;
        },
      ));
    if (found) kept.push(h);
  }
  return { hubs: kept, notes };
}

export async function collect(o: CollectInputs): Promise<Collection> {
  const startedAt = Date.now();
  const listing = await o.list();
  const { refs, failures } = listing;
  o.signal?.throwIfAborted();
  const verifier = new FleetVerifier(o.policy, { exec: o.exec, strict: false });
  await verifier.prepare(refs);
  const results = await runOverClusters(refs, verifier.work, o.run);
  const verify = verifier.report(results, refs);
  o.signal?.throwIfAborted();
  const credentials = await listCredentials(refs, o.hubs, {
    connector: o.run.connector,
    live: true,
    concurrency: o.run.concurrency,
    hubNamespaces: o.hubNamespaces,
    hubObjects: o.hubObjects,
  });
  const failed = new Set(failures.map((f) => f.provider));
  // A provider that listed nothing answered all the same: it is up (a provider of one shard's run included).
  const providers = [...new Set([...listing.providers, ...refs.map((r) => r.provider)])].filter((p) => !failed.has(p));
  const hubErrors = new Map(credentials.errors.map((e) => [e.hub, e.error]));
  const sources: SourceState[] = [
    ...providers.map((name): SourceState => ({ kind: 'provider', name, up: true })),
    ...failures.map((f): SourceState => ({
      kind: 'provider',
      name: f.provider,
      up: false,
      error: toErrorInfo(f.error),
    })),
    ...o.hubs.map((h): SourceState => {
      const error = hubErrors.get(hubLabel(h));
      return { kind: 'hub', name: hubLabel(h), up: !error, ...(error ? { error } : {}) };
    }),
  ];
  const hubReads = o.hubObjects?.counts?.();
  return { startedAt, finishedAt: Date.now(), sources, verify, credentials, ...(hubReads ? { hubReads } : {}) };
}
