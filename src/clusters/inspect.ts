import { UsageError, toErrorInfo } from '../base/errors.js';
import type { Connector } from '../kube/connector.js';
import type { ClusterProvider } from '../providers/types.js';
import { type ProbeResult, probe } from './probe.js';
import { type ClusterDetails, describeRef } from './summary.js';

/** The stable JSON shape of `clusters inspect` (documented in README "Output shapes"). */
export interface ClusterInspection extends ClusterDetails {
  kind: 'ClusterInspection';
  live?: ProbeResult;
}

export interface InspectOptions {
  /** The cluster's name or an unambiguous alias; the current context when absent. */
  name?: string;
  /** --context: the context that is "current" when no name is given. */
  context?: string;
  /** Do not contact the cluster. */
  offline?: boolean;
  /** The command's connector (its time limit, exec runner and request log). */
  connector: Connector;
}

/**
 * Everything known about one cluster without the network and, unless offline, a live probe. A configuration error
 * (a missing file, a context that does not resolve) is thrown: the cluster cannot even be described. A cluster that
 * does not answer is a result with `live.ok` false and the classified error.
 */
export async function inspectCluster(provider: ClusterProvider, options: InspectOptions): Promise<ClusterInspection> {
  let ref;
  if (options.name) ref = await provider.get(options.name);
  else if (provider.current) ref = await provider.current(options.context);
  else throw new UsageError('name a cluster to inspect');
  // A reference that cannot be resolved (missing cluster or user) is a configuration error with the file named.
  const context = await ref.resolve();
  const result: ClusterInspection = { kind: 'ClusterInspection', ...(await describeRef(ref)) };
  if (options.offline) return result;
  try {
    const client = await options.connector.context(context, ref.name);
    result.live = await probe(client);
  } catch (error) {
    const info = toErrorInfo(error);
    if (info.kind === 'config') throw error;
    result.live = { ok: false, error: info };
  }
  return result;
}
