import { realpath, stat, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';

import type { Cancellation } from '../base/cancel.js';
import { mapLimit } from '../base/concurrency.js';
import { ConfigError, FleetError } from '../base/errors.js';
import { formatLifetime } from '../base/duration.js';
import { readOptional, writeError } from '../base/files.js';
import type { Connector } from '../kube/connector.js';
import type { ExecCredentialRunner } from '../kube/exec-credential.js';
import { VERSION_PATH } from '../kube/paths.js';
import { apiVersionOf, SELF_SUBJECT_REVIEW } from '../kube/resources.js';
import { sendObject } from '../kube/typed.js';
import { withKubeconfigLock, writeFileAtomic } from '../kubeconfig/atomic-write.js';
import { describeCredentials } from '../kubeconfig/credentials.js';
import { KubeconfigEdit } from '../kubeconfig/edit.js';
import {
  type ResolvedContext,
  mergeKubeconfigs,
  resolveClusterPaths,
  resolveUserPaths,
} from '../kubeconfig/loading-rules.js';
import { type KubeconfigFile, readKubeconfig } from '../kubeconfig/parse.js';
import { exportMarkerOf } from '../kubeconfig/export-marker.js';
import { type RecordedSource, exportSourceGone, recordedSource } from '../kubeconfig/export-source.js';
import { isFleetWritten } from '../kubeconfig/merge.js';
import type { ContextOrigin } from '../kubeconfig/types.js';
import { ClusterNotFoundError } from '../providers/not-found.js';
import type { ClusterProvider } from '../providers/types.js';
import { FailureRecords } from './prune-state.js';
import { kernelPath } from '../base/paths.js';

/**
 * `fleet kubeconfig prune [FILE]`: the contexts of one kubeconfig file that are certainly dead, found and (after the
 * command's confirmation) removed with the clusters and users only they used. Every context is judged over the view
 * kubectl has (the file with every other KUBECONFIG file, client-go's merge rules: kubeconfig/loading-rules.ts), so a
 * cluster or user defined in another of those files is there. A context goes when:
 * - `gone`: its cluster is defined in none of those files; or (fleet's export entries) what it was exported from no
 *   longer exists: the file provider's kubeconfig file or the fleet configuration the entry names is not there
 *   (ENOENT: `creds revoke` deletes the file), or the run's provider, built from the same configuration, answered and
 *   does not list the cluster (a hub Secret deleted). A hub that did not answer has deleted nothing;
 * - `expired`: its credential's expiry has passed (a client certificate's notAfter, a JWT's exp, an exec plugin's
 *   expirationTimestamp when the plugin may run);
 * - `unreachable`: its server failed to answer (refused, no route, reset, no answer within the time limit) in this run
 *   and in earlier runs, the first of them at least `unreachableForMs` ago, with no answer in between (the records of
 *   prune-state.ts). One run never removes anything as unreachable; a host name that does not resolve (off the VPN)
 *   and a proxy that does not connect are not the server's failures and are not counted. An HTTP answer of any status
 *   is reachable and clears the record.
 *
 * The file is data: an exec plugin it names runs only when the trust policy allows it as it would allow hub data (the
 * kuberc's Allowlist, or fleet.yaml's credentialPluginAllowlist). Fleet's own export entries never run (their cluster is
 * judged by the provider that exported it); any other exec user that may not run is judged by /version, with no
 * credential, and its expiry is not known. Nothing is removed for a reason fleet could not establish.
 */

export type PruneReason = 'gone' | 'expired' | 'unreachable';

/** One context of the file and what prune does with it. The `-o json` item shape (docs/kubeconfig.md). */
export interface PruneItem {
  context: string;
  cluster?: string;
  user?: string;
  /** Written by `fleet kubeconfig export` (it carries the fleet.dev/export extension). */
  fleet: boolean;
  action: 'remove' | 'keep';
  /** Why it is removed; absent when kept. */
  reason?: PruneReason;
  /** One line: why it goes, or what was found (reachable, not judged and why). */
  message: string;
}

export interface PrunePlan {
  file: string;
  /** The file's text the plan was made from: applying refuses a file that changed since. */
  text: string;
  items: PruneItem[];
  /** What goes: the contexts, and the clusters and users only they named. */
  remove: { contexts: string[]; clusters: string[]; users: string[] };
  currentContext?: string;
}

export interface PruneInputs {
  /** The path as given (messages name it) and the file it resolves to. */
  file: string;
  connector: Connector;
  /** The command's exec runner, for plugins the trust policy allows (their expirationTimestamp). */
  exec: ExecCredentialRunner;
  /** The run's providers, asked only when the file holds fleet's export entries. */
  provider?: ClusterProvider;
  /**
   * What the run's providers are built from (absolute paths), read once the provider is loaded: an export entry is
   * judged `gone` only when it was exported from the same (see sameSource).
   */
  source?: () => Promise<RunSource>;
  concurrency: number;
  now?: () => number;
  /**
   * The other files of kubectl's view (KUBECONFIG's, or ~/.kube/config), in precedence order: the file is judged with
   * them (missing ones skipped, as kubectl skips them). The file itself may be among them; when it is not, it comes
   * first, and the rest still count: a cluster defined in any of them is not gone.
   */
  kubeconfigPaths?: string[];
  /** The failures of earlier runs (prune-state.ts), updated with this run's; saved by the caller. */
  failures?: FailureRecords;
  /** How long a server must have failed, across runs, before its contexts go as `unreachable` (default a day). */
  unreachableForMs?: number;
}

/** The default of --unreachable-for: a day, so that a night off the VPN or a weekend's paused VM is not a death. */
export const DEFAULT_UNREACHABLE_FOR_MS = 24 * 3600 * 1000;

interface Verdict {
  reason?: PruneReason;
  message: string;
  /** What the request found of the server, for the failure records: answered, failed, or a name that did not resolve. */
  server?: { url: string; outcome: 'reached' | 'failed' | 'unresolved' };
}

/** Reads the file and judges every context (see the module comment). Nothing is written. */
export async function planPrune(inputs: PruneInputs): Promise<PrunePlan> {
  const target = await realpath(inputs.file).catch(() => inputs.file);
  const text = await readOptional(target, 'a kubeconfig file', inputs.file);
  if (text === undefined) throw new ConfigError(`${inputs.file}: kubeconfig file not found`);
  const edit = new KubeconfigEdit(text, inputs.file);
  const file = edit.file;
  const { merged, others } = await kubectlView(file, target, inputs.kubeconfigPaths ?? []);
  const now = inputs.now ?? Date.now;
  const runAt = now();

  const judge = async (name: string): Promise<{ item: PruneItem; verdict: Verdict }> => {
    const entry = file.contexts.get(name)!;
    const found = {
      context: name,
      cluster: entry.cluster || undefined,
      user: entry.user || undefined,
      fleet: isFleetWritten(entry),
    };
    const verdict = await judgeContext(name, found, merged, inputs, now).catch((error: unknown): Verdict => ({
      message: `not judged: ${error instanceof Error ? error.message : String(error)}`,
    }));
    // Built in one go so that -o json always lists the fields in this order.
    return { item: { ...found, action: 'keep', message: verdict.message }, verdict };
  };
  const judged = await mapLimit([...file.contexts.keys()], inputs.concurrency, judge);
  const items = decideUnreachable(
    judged,
    inputs.failures ?? FailureRecords.empty(),
    runAt,
    inputs.unreachableForMs ?? DEFAULT_UNREACHABLE_FOR_MS,
  );
  const gone = new Set(items.filter((i) => i.action === 'remove').map((i) => i.context));
  // Contexts of the other files use clusters and users of this one too (kubectl merges them): those stay.
  const remaining = [
    ...[...file.contexts].filter(([name]) => !gone.has(name)).map(([, c]) => c),
    ...others.flatMap((f) => [...f.contexts.values()]),
  ];
  const orphans = (key: 'cluster' | 'user', defined: Map<string, unknown>) => {
    const used = new Set(remaining.map((c) => c[key]).filter(Boolean));
    const named = new Set(
      items
        .filter((i) => gone.has(i.context))
        .map((i) => i[key])
        .filter((n): n is string => Boolean(n)),
    );
    return [...named].filter((n) => !used.has(n) && defined.has(n));
  };
  return {
    file: inputs.file,
    text,
    items,
    remove: { contexts: [...gone], clusters: orphans('cluster', file.clusters), users: orphans('user', file.users) },
    currentContext: file.currentContext,
  };
}

/**
 * The files kubectl reads with this one, merged by client-go's rules: the loading rules' files in their order, the file
 * itself where it stands among them (or first, when it is not one of them), the missing ones skipped. A file of them
 * that kubectl could not read either stops prune (exit 2) before any cluster is asked.
 */
async function kubectlView(
  file: KubeconfigFile,
  target: string,
  paths: string[],
): Promise<{ merged: ReturnType<typeof mergeKubeconfigs>; others: KubeconfigFile[] }> {
  const same = async (p: string) => (await realpath(p).catch(() => resolve(p))) === target;
  const ordered: KubeconfigFile[] = [];
  const others: KubeconfigFile[] = [];
  let placed = false;
  for (const path of paths) {
    if (await same(path)) {
      if (!placed) ordered.push(file);
      placed = true;
      continue;
    }
    const other = await readKubeconfig(kernelPath(path));
    if (!other) continue;
    ordered.push(other);
    others.push(other);
  }
  if (!placed) ordered.unshift(file);
  return { merged: mergeKubeconfigs(ordered), others };
}

/**
 * The `unreachable` rule over the whole run (see the module comment): a server any context reached clears its record;
 * one that failed is recorded once per run, and its contexts go only when its record began at least `forMs` before this
 * run, in an earlier run. Every other context keeps its verdict.
 */
function decideUnreachable(
  judged: Array<{ item: PruneItem; verdict: Verdict }>,
  records: FailureRecords,
  runAt: number,
  forMs: number,
): PruneItem[] {
  const reached = new Set(
    judged.filter((j) => j.verdict.server?.outcome === 'reached').map((j) => j.verdict.server!.url),
  );
  for (const url of reached) records.reached(url);
  const prior = new Map<string, ReturnType<FailureRecords['get']>>();
  const recorded = new Set<string>();
  return judged.map(({ item, verdict }) => {
    const server = verdict.server;
    const decided = (reason: PruneReason | undefined, message: string): PruneItem => ({
      ...item,
      action: reason ? 'remove' : 'keep',
      ...(reason ? { reason } : {}),
      message,
    });
    if (!server || server.outcome === 'reached') return decided(verdict.reason, verdict.message);
    if (server.outcome === 'unresolved')
      return decided(
        undefined,
        `${verdict.message}: a name that does not resolve (off the VPN?) is not counted as a failure`,
      );
    if (reached.has(server.url))
      return decided(undefined, `${verdict.message}; another context reached the same server in this run`);
    if (!prior.has(server.url)) prior.set(server.url, records.get(server.url));
    const before = prior.get(server.url);
    if (!recorded.has(server.url)) {
      recorded.add(server.url);
      records.failed(server.url, runAt, verdict.message);
    }
    const since = before ? Date.parse(before.since) : runAt;
    const lasted = runAt - since;
    if (before && Date.parse(before.last) < runAt && lasted >= forMs) {
      return decided(
        'unreachable',
        `${verdict.message}; failing since ${before.since} (${before.runs + 1} runs), longer than --unreachable-for ${formatLifetime(forMs / 1000)}`,
      );
    }
    const first = before ? `failing since ${before.since} (${before.runs + 1} runs)` : 'first failure recorded';
    return decided(
      undefined,
      `${verdict.message}; ${first}, removed once it has failed for ${formatLifetime(forMs / 1000)} (--unreachable-for)`,
    );
  });
}

async function judgeContext(
  name: string,
  item: Pick<PruneItem, 'cluster' | 'user' | 'fleet'>,
  merged: ReturnType<typeof mergeKubeconfigs>,
  inputs: PruneInputs,
  now: () => number,
): Promise<Verdict> {
  const where = inputs.file;
  const entry = merged.files.find((f) => f.path === where)!.contexts.get(name)!;
  const cluster = item.cluster ? merged.clusters.get(item.cluster) : undefined;
  const view = merged.files.length > 1 ? `${where} or the other KUBECONFIG files` : where;
  if (!item.cluster) return { reason: 'gone', message: 'the context names no cluster' };
  if (!cluster) return { reason: 'gone', message: `cluster "${item.cluster}" is not defined in ${view}` };
  const user = item.user ? merged.users.get(item.user) : undefined;
  if (item.user && !user) return { message: `not judged: user "${item.user}" is not defined in ${view}` };

  const ctx: ResolvedContext = {
    contextName: name,
    namespace: entry.namespace || undefined,
    clusterName: item.cluster,
    userName: item.user,
    cluster: resolveClusterPaths(cluster.entry, cluster.file.path),
    user: user ? resolveUserPaths(user.entry, user.file.path) : {},
    contextFile: where,
    clusterFile: cluster.file.path,
    userFile: user?.file.path,
  };

  if (item.fleet) {
    const gone = await goneFromProvider(exportMarkerOf(entry), user?.entry.exec?.args, inputs);
    if (gone.gone) return { reason: 'gone', message: gone.gone };
    const version = await reachability(inputs.connector, { ...ctx, user: {} }, name, 'version');
    // The server's outcome goes on with the note: a failure is recorded (and judged over runs) as for any context.
    return gone.note ? { ...version, message: `${version.message}; ${gone.note}` } : version;
  }

  const exec = ctx.user.exec;
  if (exec?.command) {
    const origin: ContextOrigin = { object: `${where}: user "${item.user}"` };
    const withOrigin = { ...ctx, origin };
    // The whole judgement of data, not only the command: a variable that picks what runs (LD_PRELOAD, PATH) or a
    // local file the entry names refuses it too. Nothing is run or read to decide.
    const approval = await inputs.connector.trust.approve(withOrigin);
    const refused = approval.refusal;
    if (refused) {
      const r = await reachability(inputs.connector, { ...ctx, user: {} }, name, 'version');
      const why = refused.kind === 'plugin' ? 'not in an allowlist' : refused.message;
      return r.server?.outcome === 'reached'
        ? { ...r, message: `${r.message}; exec plugin "${exec.command}" not run (${why}), expiry not known` }
        : r;
    }
    const plugin = approval.plugin;
    const credential = plugin
      ? await inputs.exec.get(plugin, approval.context.cluster).catch((error: unknown) => error as Error)
      : new Error('no exec plugin approved');
    if (credential instanceof Error) return { message: `not judged: ${credential.message}` };
    const expiry = credential.expirationTimestamp;
    if (expiry && Date.parse(expiry) <= now())
      return { reason: 'expired', message: `exec credential expired at ${expiry}` };
    return reachability(inputs.connector, withOrigin, name, 'review');
  }

  const described = await describeCredentials(ctx.cluster, ctx.user, { tokens: false });
  if (described.expires && Date.parse(described.expires) <= now()) {
    const what = described.certificate?.notAfter === described.expires ? 'client certificate' : 'token';
    return { reason: 'expired', message: `${what} expired at ${described.expires}` };
  }
  return reachability(inputs.connector, ctx, name, described.auth === 'none' ? 'version' : 'review');
}

/** The configuration a run's providers come from: its fleet configuration, or (without one) its kubeconfig files. */
export interface RunSource {
  fleetConfig?: string;
  kubeconfig?: string[];
}

/**
 * Whether an export entry was made from the configuration this run has: the same fleet configuration file, or (for a
 * kubeconfig file export without one) the same files. Only then does "this run's provider does not list it" mean the
 * cluster is gone; a context exported with another configuration would look gone to any other. The entry's own
 * arguments are never used to build a provider: they are data, and a fleet configuration or a hub kubeconfig they
 * named could run programs.
 */
function sameSource(recorded: RecordedSource, run: RunSource): boolean {
  if (recorded.fleetConfig !== undefined) return recorded.fleetConfig === run.fleetConfig;
  if (recorded.context !== undefined || recorded.kubeconfig === undefined || run.fleetConfig !== undefined)
    return false;
  return recorded.kubeconfig.join(':') === (run.kubeconfig ?? []).join(':');
}

/**
 * Why an export entry's cluster is gone: the run's provider, built from the configuration the export used, answers and
 * does not have it (the lookup `kubeconfig credential --cluster` makes). Otherwise a note why that was not judged, or
 * nothing when the cluster is listed: a hub that does not answer has not deleted anything.
 */
async function goneFromProvider(
  marker: ReturnType<typeof exportMarkerOf>,
  args: string[] | undefined,
  inputs: PruneInputs,
): Promise<{ gone?: string; note?: string }> {
  const provider = inputs.provider;
  if (!marker) return { note: 'not checked against its provider (no export marker)' };
  const files = await exportSourceGone(recordedSource(args));
  if (files) return { gone: files };
  if (!provider || !inputs.source) return { note: 'not checked against its provider (no provider in this run)' };
  try {
    await provider.get(marker.cluster);
    return {};
  } catch (error) {
    if (!(error instanceof ClusterNotFoundError))
      return {
        note: `its provider could not say whether it lists the cluster: ${error instanceof Error ? error.message : String(error)}`,
      };
    const recorded = recordedSource(args);
    if (!sameSource(recorded, await inputs.source())) {
      const from = recorded.fleetConfig
        ? `--fleet-config ${recorded.fleetConfig}`
        : recorded.kubeconfig
          ? `--kubeconfig ${recorded.kubeconfig.join(':')}`
          : 'another configuration';
      return { note: `not checked against its provider: exported with ${from}, which this run does not use` };
    }
    const failed = (await provider.failures?.()) ?? [];
    if (failed.some((f) => marker.provider === undefined || f.provider === marker.provider))
      return { note: `provider "${marker.provider ?? ''}" could not list its clusters` };
    return {
      gone: `${marker.provider ? `provider "${marker.provider}"` : 'the fleet'} no longer lists cluster "${marker.cluster}"`,
    };
  }
}

/**
 * One request: SelfSubjectReview (who the credential is) or /version (no credential). A failure to connect is
 * `unreachable`; an HTTP answer, whatever its status, is a server that is there.
 */
async function reachability(
  connector: Connector,
  ctx: ResolvedContext,
  name: string,
  how: 'review' | 'version',
): Promise<Verdict> {
  const url = ctx.cluster.server ?? '';
  try {
    const client = await connector.context(ctx, name);
    const response =
      how === 'version'
        ? await client.request('GET', VERSION_PATH)
        : await sendObject(
            client,
            'POST',
            SELF_SUBJECT_REVIEW,
            {},
            { body: { apiVersion: apiVersionOf(SELF_SUBJECT_REVIEW), kind: SELF_SUBJECT_REVIEW.kind } },
          );
    const status = response.status;
    const server = { url, outcome: 'reached' as const };
    if (how === 'review' && status === 401)
      return { message: 'reachable; the server refused the credential (401), kept: nothing says it expired', server };
    return {
      message: `reachable (${how === 'version' ? '/version' : 'SelfSubjectReview'} answered ${status})`,
      server,
    };
  } catch (error) {
    if (error instanceof FleetError && (error.kind === 'unreachable' || error.kind === 'timeout')) {
      // Not the server's failure: a name the resolver does not know now (off the VPN, a resolver down), or a proxy
      // that did not connect (the server was never asked).
      const unresolved =
        error.kind === 'unreachable' &&
        (DNS_CODES.has(codeOf(error)) || / the API server .* was not contacted$/.test(error.message));
      return { message: error.message, server: { url, outcome: unresolved ? 'unresolved' : 'failed' } };
    }
    throw error;
  }
}

/** The resolver's answers for a name it cannot resolve now: getaddrinfo's ENOTFOUND (no such name) and EAI_AGAIN (try again). */
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN']);

/** The system error code under a transport error (kube/errors.ts keeps the original as its cause). */
function codeOf(error: unknown): string {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string') return e.code;
  }
  return '';
}

/** What applying a plan did. */
export interface PruneApplied {
  /** The copy of the file as it was before, 0600. */
  backup: string;
}

/**
 * Removes what the plan says, under kubectl's lock: the file must still be the text the plan was made from (else one
 * line, exit 2: run prune again). A backup of the file as it was (FILE.bak-<UTC time>, 0600) is written first; the file
 * keeps its mode. An interrupt before the file is replaced removes the backup again and changes nothing.
 */
export async function applyPrune(
  plan: PrunePlan,
  options: { cancel?: Cancellation; now?: () => number } = {},
): Promise<PruneApplied> {
  const target = await realpath(plan.file).catch(() => plan.file);
  return withKubeconfigLock(target, plan.file, async () => {
    const text = await readOptional(target, 'a kubeconfig file', plan.file);
    if (text !== plan.text)
      throw new ConfigError(`${plan.file}: the file changed while prune was checking it; run prune again`);
    const edit = new KubeconfigEdit(text, plan.file);
    for (const name of plan.remove.contexts) edit.remove('contexts', name);
    for (const name of plan.remove.clusters) edit.remove('clusters', name);
    for (const name of plan.remove.users) edit.remove('users', name);
    const out = edit.result();
    const mode = (await stat(target)).mode & 0o7777;
    const backup = await freeBackupName(target, (options.now ?? Date.now)());
    options.cancel?.check();
    await writeFileAtomic(backup, text, { mode: 0o600 }).catch((error: unknown) => {
      throw writeError(`backup ${backup}`, backup, error);
    });
    try {
      options.cancel?.check();
      await writeFileAtomic(target, out, { mode });
    } catch (error) {
      // Interrupted (or the write failed): the file is as it was, so the backup of it is not needed.
      await unlink(backup).catch(() => {});
      if (error instanceof FleetError) throw error;
      throw writeError(plan.file, target, error, 'a kubeconfig file');
    }
    return { backup };
  });
}

/** FILE.bak-20261126T031500Z, or with -2, -3... when a prune in the same second already wrote one. */
async function freeBackupName(target: string, at: number): Promise<string> {
  const stamp = new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  for (let n = 1; ; n++) {
    const name = `${target}.bak-${stamp}${n === 1 ? '' : `-${n}`}`;
    if (
      !(await stat(name).then(
        () => true,
        () => false,
      ))
    )
      return name;
  }
}
