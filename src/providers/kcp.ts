import { FleetError } from '../base/errors.js';
import { mapLimit } from '../base/concurrency.js';
import { warnOnce } from '../base/warnings.js';
import type { KcpProviderConfig } from '../config/fleet-config.js';
import { resourcePath, workspacePath } from '../kube/paths.js';
import { KCP_SHARD, KCP_WORKSPACE } from '../kube/resources.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { CachedProvider } from './cached-provider.js';
import { Hub, type HubOptions } from './hub/client.js';
import type { ObjectMeta } from './hub/objects.js';
import { makeRef } from './ref.js';
import type { ClusterRef } from './types.js';

/**
 * kcp workspaces as clusters. One kcp server serves many logical clusters, each under `<server>/clusters/<path>`; the
 * workspaces of a workspace are `tenancy.kcp.io/v1alpha1` Workspaces in it. The tree is walked from a root path, and
 * each workspace is reached with the context's own credential at its URL. Names are workspace paths (`root:org:team`).
 */

/** Levels are listed in parallel, a few workspaces at a time: one kcp server answers them all. */
const CONCURRENCY = 8;

export interface Workspace {
  metadata: ObjectMeta;
  spec?: { URL?: string; cluster?: string; type?: { name?: string; path?: string } };
  status?: {
    phase?: string;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
    initializers?: string[];
  };
}

interface Shard {
  metadata: ObjectMeta;
  spec?: { baseURL?: string; externalURL?: string };
}

/** The server without its `/clusters/<path>` (and the path, when there is one): kcp kubeconfigs point into a workspace. */
export function splitWorkspaceServer(server: string): { base: string; path?: string } {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    // Not a URL: left as it is for the client, whose error names the kubeconfig and the cluster entry (so below).
    return { base: server };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { base: server };
  const m = url.pathname.match(/^(.*?)\/clusters\/([^/]+)\/?$/);
  if (!m) return { base: server.replace(/\/+$/, '') };
  url.pathname = m[1] || '/';
  return { base: url.toString().replace(/\/+$/, ''), path: decodeURIComponent(m[2]) };
}

/** Why a workspace is not usable yet: its phase, with the condition or initializers holding it. */
export function workspaceNotReady(ws: Workspace): string | undefined {
  const phase = ws.status?.phase;
  if (phase === 'Ready') return undefined;
  const held = ws.status?.conditions?.find((c) => c.status === 'False' && c.message);
  const initializers = ws.status?.initializers?.length
    ? `initializers pending: ${ws.status.initializers.join(', ')}`
    : undefined;
  const detail = held ? `${held.type}: ${held.message}` : initializers;
  return `workspace phase is ${phase ?? 'not set'}${detail ? ` (${detail})` : ''}`;
}

/** Tree order: a workspace right before its children, siblings by name. */
export function comparePaths(a: string, b: string): number {
  const x = a.split(':');
  const y = b.split(':');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

/** Whether `url` lies under `prefix` (same origin, path below), the way a shard's URL prefixes its workspaces' URLs. */
export function underUrl(url: string, prefix: string | undefined): boolean {
  if (!prefix) return false;
  try {
    const u = new URL(url);
    const p = new URL(prefix);
    const base = p.pathname.replace(/\/+$/, '');
    return u.origin === p.origin && (u.pathname === base || u.pathname.startsWith(`${base}/`));
  } catch {
    return false;
  }
}

/**
 * Whether a workspace URL goes through a front proxy, from the Shards: a shard's baseURL is reached directly; its
 * externalURL, when it differs, is the front proxy. Undefined when the URL matches neither or the Shards are unknown.
 */
export function viaFrontProxy(url: string, shards: Shard[] | undefined): boolean | undefined {
  if (!shards) return undefined;
  if (shards.some((s) => underUrl(url, s.spec?.baseURL))) return false;
  if (
    shards.some(
      (s) => s.spec?.externalURL && s.spec.externalURL !== s.spec.baseURL && underUrl(url, s.spec.externalURL),
    )
  )
    return true;
  return undefined;
}

interface Found {
  path: string;
  workspace?: Workspace;
}

export class KcpProvider extends CachedProvider {
  private readonly hub: Hub;

  constructor(
    private readonly config: KcpProviderConfig,
    options: HubOptions,
  ) {
    super(config.name, config.type);
    // The client talks to the server's base: every request names its workspace (`/clusters/<path>/...`).
    this.hub = new Hub(
      config.hub,
      options,
      `kcp provider "${config.name}"`,
      (server) => splitWorkspaceServer(server).base,
    );
  }

  protected async build(): Promise<ClusterRef[]> {
    const ctx = await this.hub.context();
    const { base, path: contextPath } = splitWorkspaceServer(ctx.cluster.server ?? '');
    const root = this.config.root ?? contextPath ?? 'root';
    const forbidden: string[] = [];
    const found = await this.walk(root, forbidden);
    if (forbidden.length > 0) {
      // Not an error (kcp's own tree view does the same), but never silent: part of the tree is not shown.
      const shown = forbidden.sort(comparePaths);
      warnOnce(
        `${this.describe()}: the credential may not list the workspaces inside ${shown.slice(0, 5).join(', ')}${shown.length > 5 ? ` and ${shown.length - 5} more` : ''} (403): the tree below ${shown.length === 1 ? 'it' : 'them'} is not shown`,
      );
    }
    // A Workspace's spec.URL is data: it chooses where the user's kcp credential goes. One outside the context's server is
    // used only when the root's Shards (written by kcp's administrators) name it; the Shards are read for that too.
    const offServer =
      this.config.server !== 'context' &&
      found.some((f) => f.workspace?.spec?.URL && !underUrl(f.workspace.spec.URL, base));
    const shards = this.config.frontProxy === undefined || offServer ? await this.shards() : undefined;
    return found.sort((a, b) => comparePaths(a.path, b.path)).map((f) => this.ref(ctx, base, f, shards));
  }

  /** The root, then each level's Ready workspaces' children, down to `depth`. */
  private async walk(root: string, forbidden: string[]): Promise<Found[]> {
    // The root's own listing must work: it is the provider's one question, and its failure is the provider's.
    const out: Found[] = [{ path: root }];
    let level = (await this.children(root, true, forbidden)).map((ws) => ({
      path: `${root}:${ws.metadata.name}`,
      workspace: ws,
    }));
    for (let depth = 1; level.length > 0 && (this.config.depth === undefined || depth <= this.config.depth); depth++) {
      out.push(...level);
      const ready = level.filter((f) => !workspaceNotReady(f.workspace));
      const next = await mapLimit(ready, CONCURRENCY, async (f) =>
        (await this.children(f.path, false, forbidden)).map((ws) => ({
          path: `${f.path}:${ws.metadata.name}`,
          workspace: ws,
        })),
      );
      level = next.flat();
    }
    return out;
  }

  /**
   * The Workspaces in one workspace. Below the root, a workspace whose content the credential may not read (403) is
   * listed without children (and recorded in `forbidden` for a warning), as kcp's own tree view does; any other failure
   * fails the provider.
   */
  private async children(path: string, isRoot: boolean, forbidden: string[]): Promise<Workspace[]> {
    try {
      return await this.hub.listObjects<Workspace>(KCP_WORKSPACE, `list Workspaces in ${path}`, { workspace: path });
    } catch (error) {
      if (!isRoot && error instanceof FleetError && error.kind === 'forbidden') {
        forbidden.push(path);
        return [];
      }
      if (isRoot && error instanceof FleetError && error.kind === 'api-missing') {
        // A plain Kubernetes API server answers 404 under /clusters/: say what that most likely means.
        const ctx = await this.hub.context();
        throw new FleetError(
          'api-missing',
          `${this.describe()}: ${splitWorkspaceServer(ctx.cluster.server ?? '').base} serves no workspace "${path}" (${resourcePath(KCP_WORKSPACE)} under ${workspacePath(path)} is not found): is it a kcp server, and is the root path right?`,
        );
      }
      throw error;
    }
  }

  /** The Shards of the root, to tell front-proxy URLs from shard URLs; undefined when they cannot be read (not an admin). */
  private async shards(): Promise<Shard[] | undefined> {
    return this.hub.listObjects<Shard>(KCP_SHARD, 'list Shards in root', { workspace: 'root' }).catch(() => undefined);
  }

  private ref(ctx: ResolvedContext, base: string, f: Found, shards: Shard[] | undefined): ClusterRef {
    const spec = f.workspace?.spec;
    const url = this.config.server !== 'context' && spec?.URL ? spec.URL : `${base}${workspacePath(f.path)}`;
    const frontProxy = this.config.frontProxy ?? viaFrontProxy(url, shards);
    const elsewhere =
      underUrl(url, base) || shards?.some((s) => underUrl(url, s.spec?.baseURL) || underUrl(url, s.spec?.externalURL))
        ? undefined
        : new Error(
            `Workspace ${f.path}: spec.URL ${url} is neither on the context's server ${base} nor on a Shard of the root, and would receive the kcp credential; use server: context in the provider's entry to reach it through ${base}`,
          );
    if (elsewhere)
      return makeRef(
        {
          name: f.path,
          provider: this.name,
          labels: f.workspace?.metadata.labels ?? {},
          source: { kind: 'kcp-workspace', workspace: f.path, hub: ctx.contextName, context: ctx.contextName },
        },
        elsewhere,
      );
    return makeRef(
      {
        name: f.path,
        provider: this.name,
        labels: f.workspace?.metadata.labels ?? {},
        source: {
          kind: 'kcp-workspace',
          workspace: f.path,
          hub: ctx.contextName,
          context: ctx.contextName,
          ...(spec?.cluster ? { logicalCluster: spec.cluster } : {}),
          ...(frontProxy === undefined ? {} : { frontProxy }),
        },
        ...(spec?.cluster ? { clusterId: spec.cluster, clusterIdSource: 'Workspace' } : {}),
      },
      { ...ctx, cluster: { ...ctx.cluster, server: url } },
      f.workspace ? workspaceNotReady(f.workspace) : undefined,
    );
  }
}
