import { FleetError } from '../../base/errors.js';
import type { HubSpec } from '../../config/fleet-config.js';
import type { KubeClient } from '../../kube/client.js';
import { type Connector, resolveHubContext } from '../../kube/connector.js';
import { resourcePath } from '../../kube/paths.js';
import type { Resource } from '../../kube/resources.js';
import {
  type WatchEvent,
  getObject,
  listObjects,
  listVersioned,
  servedVersions,
  watchSince,
} from '../../kube/typed.js';
import type { ResolvedContext } from '../../kubeconfig/loading-rules.js';

/**
 * What hub-backed providers share: the hub is a kubeconfig context, read through fleet's own KubeClient; objects are
 * listed page by page; kubeconfigs found in Secrets are parsed so that errors name the Secret.
 */
export interface HubOptions {
  /** The command's connector: its time limit, and its one exec runner, so a plugin shared by the hub and its members runs once. */
  connector: Connector;
  env?: NodeJS.ProcessEnv;
}

const PAGE_SIZE = 500;

export class Hub {
  private contextPromise?: Promise<ResolvedContext>;
  private clientPromise?: Promise<KubeClient>;

  constructor(
    private readonly spec: HubSpec | undefined,
    private readonly options: HubOptions,
    /** Names the provider in errors. */
    private readonly owner: string,
    /** The server the client talks to, from the context's (kcp: the server's base, paths then name the workspace). */
    private readonly serverOf: (server: string) => string = (server) => server,
  ) {}

  context(): Promise<ResolvedContext> {
    this.contextPromise ??= resolveHubContext(this.spec, this.options.env).catch((error) => {
      throw this.wrap(error);
    });
    return this.contextPromise;
  }

  /** The hub's context name, for `source.hub`. */
  async name(): Promise<string> {
    return (await this.context()).contextName;
  }

  private client(): Promise<KubeClient> {
    this.clientPromise ??= this.context()
      .then((ctx) => this.options.connector.hubClient(ctx, this.serverOf))
      .catch((error) => {
        throw this.wrap(error);
      });
    return this.clientPromise;
  }

  private wrap(error: unknown): FleetError {
    const e = error instanceof FleetError ? error : new FleetError('internal', (error as Error).message);
    const prefix = `${this.owner}: `;
    if (e.message.startsWith(prefix)) return e;
    return new FleetError(e.kind, prefix + e.message, { cause: error, exitCode: e.exitCode });
  }

  /** One object, or undefined for 404. */
  async getObject<T>(r: Resource, name: string, namespace: string | undefined, what: string): Promise<T | undefined> {
    const client = await this.client();
    try {
      return await getObject<T>(client, r, name, { namespace, what: `${what} on hub ${client.context.contextName}` });
    } catch (error) {
      throw this.wrap(error);
    }
  }

  /** Every object of a resource (in one namespace, or all), page by page, so a big fleet is read in bounded pages. */
  async listObjects<T>(
    r: Resource,
    what: string,
    o: { namespace?: string; labelSelector?: string; fieldSelector?: string; workspace?: string } = {},
  ): Promise<T[]> {
    const client = await this.client();
    try {
      return await listObjects<T>(client, r, {
        ...o,
        limit: PAGE_SIZE,
        what: `${what} on hub ${client.context.contextName}`,
      });
    } catch (error) {
      // A list never 404s for lack of objects: the API itself is missing.
      if (error instanceof FleetError && error.kind === 'not-found') {
        const path = resourcePath(r, { namespace: o.namespace, workspace: o.workspace });
        throw this.wrap(
          new FleetError(
            'api-missing',
            `${what}: hub ${client.context.contextName} does not serve ${path} (is the API installed?)`,
          ),
        );
      }
      throw this.wrap(error);
    }
  }

  /** A list and the resourceVersion it was read at, for a watch to go on from (HubObjectCache). */
  async listVersioned<T>(
    r: Resource,
    what: string,
    o: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const client = await this.client();
    try {
      return await listVersioned<T>(client, r, {
        ...o,
        limit: PAGE_SIZE,
        what: `${what} on hub ${client.context.contextName}`,
      });
    } catch (error) {
      throw this.wrap(error);
    }
  }

  /** What changed since a resourceVersion (`gone`: too old, list again). */
  async watchSince<T>(
    r: Resource,
    what: string,
    o: { namespace?: string; labelSelector?: string; fieldSelector?: string; resourceVersion: string },
  ): Promise<{ events: WatchEvent<T>[]; gone: boolean }> {
    const client = await this.client();
    try {
      return await watchSince<T>(client, r, { ...o, what: `${what} on hub ${client.context.contextName}` });
    } catch (error) {
      throw this.wrap(error);
    }
  }

  /** The versions of an API group the hub serves (empty when it serves none). */
  async groupVersions(group: string): Promise<string[]> {
    const client = await this.client();
    try {
      return await servedVersions(client, group, `discover ${group} on hub ${client.context.contextName}`);
    } catch (error) {
      throw this.wrap(error);
    }
  }
}
