import type { Resource } from '../../kube/resources.js';
import type { Hub } from './client.js';

/** Which objects of a hub: a resource, a namespace (or all) and the selectors of one list. */
export interface HubQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** How a reader of hub objects gets them: listed each time (HubObjects.direct), or kept by watch (HubObjectCache). */
export interface HubObjects {
  list<T>(hub: Hub, r: Resource, what: string, q: HubQuery): Promise<T[]>;
  /** What a cache did so far (none for direct lists). */
  counts?(): CacheCounts[];
}

/** Every call a list: what `creds list` does once per run. */
export const DIRECT_HUB_OBJECTS: HubObjects = {
  list: (hub, r, what, q) => hub.listObjects(r, what, q),
};

interface Meta {
  metadata?: { namespace?: string; name?: string; resourceVersion?: string };
}

interface Entry {
  objects: Map<string, unknown>;
  resourceVersion: string;
}

/** What the cache did, per hub and resource: lists (the first, and each relist after a 410) and events applied. */
export interface CacheCounts {
  hub: string;
  resource: string;
  lists: number;
  events: Record<'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', number>;
}

const key = (o: Meta) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Hub objects followed the way an informer follows them: listed once, with the resourceVersion kept, then brought up
 * to date at each read by the changes since that version (watchSince: the server replays them from its watch cache),
 * and listed again only when the server says the version is too old (410). For a long-running reader (fleet exporter):
 * a collection over 10,000 hub Secrets costs the changes since the last one, not 10,000 objects. The watch is asked
 * for at read time and taken as complete once the server's replay pauses (watchSince, WATCH_QUIET_MS) rather than
 * held open: between two collections nothing reads the cache, so nothing needs to be current then, and no connection
 * stays open per query. (Waiting out the server's end instead, timeoutSeconds=1, cost a second per query and made a
 * collection of 20 clusters 2.2 s instead of 0.36 s: bench/exporter.ts.)
 *
 * A read that fails (hub down, forbidden) throws as a list would and keeps the entry: the next read goes on from the
 * same version. Entries are keyed by hub context, resource and query; one cache per process.
 */
export class HubObjectCache implements HubObjects {
  private readonly entries = new Map<string, Entry>();
  private readonly counted = new Map<string, CacheCounts>();

  async list<T>(hub: Hub, r: Resource, what: string, q: HubQuery): Promise<T[]> {
    const ctx = await hub.context();
    const hubName = ctx.contextName;
    const id = JSON.stringify([
      hubName,
      ctx.cluster.server,
      r.group,
      r.plural,
      q.namespace ?? '',
      q.labelSelector ?? '',
      q.fieldSelector ?? '',
    ]);
    const counts = this.countsOf(hubName, r);
    let entry = this.entries.get(id);
    if (entry) {
      const { events, gone } = await hub.watchSince<Meta>(r, what.replace(/^list/, 'watch'), {
        ...q,
        resourceVersion: entry.resourceVersion,
      });
      if (gone) entry = undefined;
      else
        for (const e of events) {
          counts.events[e.type]++;
          const rv = e.object.metadata?.resourceVersion;
          if (rv) entry.resourceVersion = rv;
          if (e.type === 'ADDED' || e.type === 'MODIFIED') entry.objects.set(key(e.object), e.object);
          else if (e.type === 'DELETED') entry.objects.delete(key(e.object));
        }
    }
    if (!entry) {
      const listed = await hub.listVersioned<Meta>(r, what, q);
      counts.lists++;
      entry = { objects: new Map(listed.items.map((o) => [key(o), o])), resourceVersion: listed.resourceVersion };
      this.entries.set(id, entry);
    }
    return [...entry.objects.values()] as T[];
  }

  private countsOf(hub: string, r: Resource): CacheCounts {
    const resource = r.group ? `${r.plural}.${r.group}` : r.plural;
    const id = `${hub}\u0000${resource}`;
    let c = this.counted.get(id);
    if (!c)
      this.counted.set(
        id,
        (c = { hub, resource, lists: 0, events: { ADDED: 0, MODIFIED: 0, DELETED: 0, BOOKMARK: 0 } }),
      );
    return c;
  }

  /** Lists and events so far, per hub and resource (the exporter's fleet_exporter_hub_* counters). */
  counts(): CacheCounts[] {
    return [...this.counted.values()].map((c) => ({ ...c, events: { ...c.events } }));
  }
}
