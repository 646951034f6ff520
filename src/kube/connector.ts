import { ConfigError, FleetError } from '../base/errors.js';
import type { HubSpec } from '../config/fleet-config.js';
import { inClusterAvailable, inClusterContext, useInCluster } from '../kubeconfig/in-cluster.js';
import { type ResolvedContext, loadMerged, precedence, resolveContext } from '../kubeconfig/loading-rules.js';
import { TrustPolicy } from '../kubeconfig/trust.js';
import type { Impersonation, KubeClient } from './client.js';
import { type Destination, credentialUser, makeDestination } from './destination.js';
import type { UserEntry } from '../kubeconfig/types.js';
import type { ExecCredentialRunner } from './exec-credential.js';
import type { RequestLog } from './request-log.js';

/** What every connection of one command shares; the base command builds it once (src/cli/base-command.ts). */
export interface ConnectorOptions {
  /** --request-timeout: the time limit of each request. */
  timeoutMs: number;
  /** The command's one exec credential runner (its cache and its one-run-per-credential rule are per command). */
  exec: ExecCredentialRunner;
  /** kubectl-style request logging (-v 6 and up); nothing is logged without it. */
  log?: RequestLog;
  /** Ends every request of the clients it makes (a cluster's --cluster-timeout). */
  signal?: AbortSignal;
  /** --as: every cluster's requests act as this identity; never a hub's (the hub lists clusters as the caller). */
  impersonate?: Impersonation;
  /**
   * Which plugins may run and which files hub data may name (the kuberc, the fleet configuration's allowlists). Without
   * one, the strictest: no kuberc, nothing allowed to hub data.
   */
  trust?: TrustPolicy;
  /** The command reports skipped TLS verification itself (see ClientOptions.reportsSkippedTls). */
  reportsSkippedTls?: boolean;
}

/**
 * A cluster as a provider hands it out: a name for messages and a context to resolve. A structural type, since kube/
 * sits below providers/ (ClusterRef satisfies it).
 */
export interface NamedContext {
  name: string;
  resolve(): Promise<ResolvedContext>;
}

/**
 * The one way fleet connects: to a context it resolved, to a provider's cluster, or to the hub by the one hub rule
 * (the only place that knows a Pod's in-cluster configuration). Services get a Connector instead of the loose time
 * limit, exec runner and request log, so nothing below the command can make a second exec runner.
 */
export class Connector {
  constructor(private readonly options: ConnectorOptions) {
    this.trust = options.trust ?? TrustPolicy.strict();
  }

  /** The command's one trust policy: providers judge their clusters with it, and every connection passes it first. */
  readonly trust: TrustPolicy;

  /** The same connector with another abort signal or identity (a cluster's time limit, --as). */
  with(changes: Pick<ConnectorOptions, 'signal' | 'impersonate'>): Connector {
    return new Connector({ ...this.options, trust: this.trust, ...changes });
  }

  /** A client for a context; `name` names the cluster in errors. */
  async context(context: ResolvedContext, name: string): Promise<KubeClient> {
    // The last gate before anything is read or run for a context: whatever path led here (a provider, a credential read
    // from a hub by creds or wi), a plugin or a file the policy refuses is never used.
    const approval = await this.trust.approve(context);
    // Exit 1, not 2: one cluster's data (or one plugin) refused, while the others go on.
    if (approval.refusal) throw new FleetError(approval.refusal.kind, approval.refusal.message, { exitCode: 1 });
    // Loaded on the first connection, not with this module: commands that only list clusters never load the HTTP
    // client (node:https, node:tls) at start-up (docs/decisions.md, "What is left at start-up").
    const { KubeClient } = await import('./client.js');
    const { timeoutMs, exec, log, signal, impersonate, reportsSkippedTls } = this.options;
    // The approved context (files as resolved) and plugin (the exact invocation) are what the client uses.
    return KubeClient.connect(approval.context, {
      timeoutMs,
      clusterName: name,
      exec,
      plugin: approval.plugin,
      log,
      signal,
      impersonate,
      reportsSkippedTls,
    });
  }

  /** A client for a provider's cluster (a ClusterRef). */
  async cluster(ref: NamedContext): Promise<KubeClient> {
    return this.context(await ref.resolve(), ref.name);
  }

  /**
   * Where a credential for a provider's cluster may go: its server, CA, TLS server name and proxy as the context the
   * provider resolved holds them, after the trust policy approved it (files as resolved). The only maker of a
   * Destination (src/kube/destination.ts).
   */
  async destination(ref: NamedContext): Promise<Destination> {
    const approval = await this.trust.approve(await ref.resolve());
    if (approval.refusal) throw new FleetError(approval.refusal.kind, approval.refusal.message, { exitCode: 1 });
    return makeDestination(ref.name, approval.context);
  }

  /**
   * A client for a credential fleet did not read from the operator's configuration (one it minted, or the one a hub
   * Secret or a file being adopted holds): connected to the destination only, never to a server, CA or proxy named
   * beside the credential. Inline data only (a token, a client certificate): no file, no plugin.
   */
  withCredential(
    destination: Destination,
    user: UserEntry,
    what: string,
    o: { userFiles?: boolean } = {},
  ): Promise<KubeClient> {
    return this.context(destination.contextFor(credentialUser(user, what, o.userFiles)), destination.name);
  }

  /**
   * A client for the hub a HubSpec names (the one hub rule), named `hub <context>` in errors. Never impersonated: the
   * hub is where fleet reads and writes as the caller (docs/decisions.md, "Access as another identity").
   */
  async hub(spec: HubSpec | undefined, env: NodeJS.ProcessEnv = process.env): Promise<KubeClient> {
    return this.hubClient(await resolveHubContext(spec ?? {}, env));
  }

  /**
   * A client for a hub context already resolved by resolveHubContext (a provider's hub names itself before it
   * connects); `server` rewrites the context's server (kcp: the server's base, paths then name the workspace).
   */
  hubClient(ctx: ResolvedContext, server?: (server: string) => string): Promise<KubeClient> {
    const context =
      server && ctx.cluster.server ? { ...ctx, cluster: { ...ctx.cluster, server: server(ctx.cluster.server) } } : ctx;
    return this.with({ impersonate: undefined }).context(context, `hub ${ctx.contextName}`);
  }
}

/**
 * The one hub rule's last step, shared by every hub fleet reads or writes (providers, creds generate/list/rotate,
 * wi): the given files (they must exist, as with --kubeconfig) and context, or else the loading rules (KUBECONFIG,
 * else ~/.kube/config) and their current context, or else, when those find nothing at all, the in-cluster
 * configuration of a Pod (client-go's order). With nothing found the message says what was looked for.
 */
export async function resolveHubContext(
  spec: HubSpec = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedContext> {
  if (spec.kubeconfig?.length) {
    const merged = await loadMerged(spec.kubeconfig, { explicit: true });
    const name = spec.context ?? merged.currentContext;
    if (!name)
      throw new ConfigError(
        `no hub context: ${spec.kubeconfig.join(':')} sets no current-context; name one with --hub-context (or --context), or hub.context in the fleet configuration`,
      );
    return resolveContext(merged, name);
  }
  const { paths } = precedence(env);
  const merged = await loadMerged(paths);
  if (!spec.context && (await useInCluster(env))) return inClusterContext(env);
  if (merged.files.length === 0) {
    const looked = env.KUBECONFIG
      ? `none of the files in KUBECONFIG=${env.KUBECONFIG} exists`
      : `KUBECONFIG is unset and ${paths[0]} does not exist`;
    const pod = inClusterAvailable(env) ? '' : ', and this is not a Pod (KUBERNETES_SERVICE_HOST is unset)';
    throw new ConfigError(`no kubeconfig found: ${looked}${pod}; pass --kubeconfig or --hub-kubeconfig`);
  }
  const name = spec.context ?? merged.currentContext;
  if (!name) {
    const where = merged.files.map((f) => f.path).join(':');
    throw new ConfigError(
      `no hub context: ${where} sets no current-context; name one with --hub-context (or --context), or hub.context in the fleet configuration`,
    );
  }
  return resolveContext(merged, name);
}
