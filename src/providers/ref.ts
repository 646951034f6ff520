import { ConfigError, FleetError } from '../base/errors.js';
import { wrapperIn } from '../base/interpreter.js';
import { type AuthKind, authKind } from '../kubeconfig/credentials.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import type { TrustPolicy } from '../kubeconfig/trust.js';
import type { ClusterRef } from './types.js';

/**
 * The label every cluster gets with the kind of its kubeconfig user (`client-cert`, `token`, `exec`, `auth-provider`,
 * `basic`, `none`; `unknown` when no context could be built): policy rules and `-l` select by it (docs/verify.md). The
 * provider's own labels cannot override it: it says what fleet found, like the other fleet.dev/ labels.
 */
export const AUTH_LABEL = 'fleet.dev/auth';

/** The labels of a ref: the provider's, and the auth kind. */
export function withAuthLabel(labels: Record<string, string>, auth: AuthKind | 'unknown'): Record<string, string> {
  return { ...labels, [AUTH_LABEL]: auth };
}

/** The parts of a ClusterRef a provider decides; the rest follows from the resolved context (or the failure). */
export type RefFields = Pick<ClusterRef, 'name' | 'provider' | 'source' | 'labels'> &
  Partial<Pick<ClusterRef, 'aliases' | 'clusterId' | 'clusterIdSource'>>;

/**
 * Builds a ref from what the provider found: a context to connect with (ready unless `notReady` says why not), or the
 * error that prevented one (not ready, with the error as the reason; resolve() fails with it).
 */
export function makeRef(fields: RefFields, found: ResolvedContext | Error, notReady?: string): ClusterRef {
  const base = { aliases: [], ...fields };
  if (found instanceof Error) {
    return {
      ...base,
      labels: withAuthLabel(base.labels, 'unknown'),
      auth: 'none',
      ready: false,
      reason: found.message,
      resolve: async () => {
        throw found instanceof FleetError ? found : new ConfigError(found.message);
      },
    };
  }
  const server = found.cluster.server;
  const reason = server ? notReady : `${found.clusterFile}: cluster "${found.clusterName}" has no server`;
  const auth = authKind(found.user);
  return {
    ...base,
    labels: withAuthLabel(base.labels, auth),
    server,
    auth,
    ready: !reason,
    reason,
    resolve: async () => found,
  };
}

/**
 * A ref as the run's trust policy sees it (src/kubeconfig/trust.ts): a cluster whose kubeconfig would run a plugin, or
 * read a file, that the policy refuses is not ready, with the one-line reason, and resolving it fails with that reason,
 * so nothing is run or read for it; the plugin it names is recorded either way (`fleet auth plugins`). Deciding reads
 * nothing: every provider resolves its refs without the network (a hub's objects were read when it listed them).
 */
export async function guardRef(ref: ClusterRef, trust: TrustPolicy): Promise<ClusterRef> {
  let ctx: ResolvedContext;
  try {
    ctx = await ref.resolve();
  } catch {
    return ref;
  }
  const exec = ctx.user.exec;
  if (!ctx.origin && !exec) return ref;
  const refusal = await trust.problem(ctx);
  let plugin: ClusterRef['plugin'];
  if (exec && typeof exec.command === 'string' && exec.command !== '') {
    const v = await trust.plugin(exec.command, ctx.origin, (exec.args ?? []).map(String));
    const from = ctx.origin
      ? ctx.origin.commandFromUser
        ? (ctx.userFile ?? ctx.origin.object)
        : ctx.origin.object
      : (ctx.userFile ?? ctx.contextFile);
    plugin = {
      command: exec.command,
      from,
      trust: ctx.origin && !ctx.origin.commandFromUser ? 'data' : 'file',
      allowed: v.allowed && !refusal,
      reason: refusal?.message ?? v.reason,
      allowWith: v.allowWith,
    };
    const wrapper = wrapperIn((exec.args ?? []).map(String));
    if (wrapper) plugin.wrapper = wrapper;
  }
  // Recorded on the provider's own ref (one judged ref per ref: DeferredProvider keeps them), not on a copy: copying a
  // thousand refs of exec users was most of what judging them cost.
  if (!refusal) {
    if (plugin) ref.plugin = plugin;
    return ref;
  }
  const error = new FleetError(refusal.kind, refusal.message, { exitCode: 1 });
  return {
    ...ref,
    plugin,
    ready: false,
    reason: refusal.message,
    resolve: async () => {
      throw error;
    },
  };
}
