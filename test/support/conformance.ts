// The provider conformance suite's vocabulary (test/e2e/providers-conformance.test.ts runs it): the features a provider
// may have, what an entry of the provider table declares, and the fixture-maker every entry supplies. The entries
// themselves are in conformance-providers.ts, one per provider.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { applyYaml, createServiceAccountToken, kubectl, type ControlPlaneHandle } from './fixture.js';
import { writeKubeconfig } from './kubeconfig.js';

/** Every case of the suite is about one feature; a provider either has it or says why it does not apply. */
export const FEATURES = {
  list: 'listing: every cluster with its name, provider, server, auth, ready, source and the fleet.dev/auth label',
  names: 'names: `<provider>#<name>` among several providers, the name alone when unambiguous, exit 2 otherwise',
  'short-names': 'short names: a shorter alias (the context name, the bare object name) that finds the cluster',
  labels: "labels: the object's labels on the cluster, selectable with -l",
  'not-ready': 'ready and reasons: a cluster listed not ready with the reason; --strict exits 1',
  'refused-plugin': 'an exec plugin the trust policy refuses: not ready, named, never run',
  removal: 'a cluster removed between two lists is gone from the second, and its name is not found',
  'wrong-shape': 'an object of the wrong shape is named with what is wrong, and hides nothing else',
  paging: 'paging: more clusters than one page (500) are all listed, read page by page',
  'hub-gone':
    'the hub (or a program: its run) going away mid-list: one failed row for the provider, none of its clusters, the rest listed',
} as const;

export type Feature = keyof typeof FEATURES;
export const FEATURE_NAMES = Object.keys(FEATURES) as Feature[];

/** Where an API server is, for the proxy of `hub-gone` and `paging`: its URL, CA and a bearer token that may list. */
export interface HubAccess {
  url: string;
  caFile: string;
  token: string;
}

export type ClusterSpec = {
  /** DNS-1123 label, unique in its scope. */
  id: string;
  labels?: Record<string, string>;
} & (
  | { state?: 'ready' }
  | { state: 'not-ready' }
  /** A cluster whose credential runs `plugin`, which the trust policy must refuse (the case sets the policy). */
  | { state: 'refused-plugin'; plugin: string }
  | { state: 'wrong-shape' }
);

export interface Cluster {
  id: string;
  /** The name the provider lists it under (alone, without `<provider>#`). */
  name: string;
  /** A shorter name that finds it (`short-names`). */
  alias?: string;
  /** Ready clusters: the server and auth kind the listing must show. */
  server?: string;
  auth?: string;
  /** Not-ready, refused and wrong-shape clusters: what the reason must say. */
  reason?: RegExp;
}

/** A fresh, isolated place for clusters of one provider: a namespace on the hub, a directory, a kcp workspace. */
export interface Scope {
  /** The provider's fleet.yaml entry (without `name`) listing this scope only; `via` reaches its hub through a proxy. */
  entry(via?: HubAccess): Record<string, unknown>;
  /** Environment fleet needs for this scope (kind's stand-in directory). */
  env?: Record<string, string>;
  /** Names an empty scope lists (kcp: the scope's own workspace). */
  baseline: string[];
  add(spec: ClusterSpec): Promise<Cluster>;
  remove(cluster: Cluster): Promise<void>;
  /** `paging`: n clusters made at once; their names. */
  addMany?(n: number): Promise<string[]>;
  /** Undo what the scope made that teardown of the control plane would not (finalizers, namespaces). */
  cleanup?(): Promise<void>;
  /** `hub-gone` of a provider without a hub (exec): the ways its source fails in the middle of a list. */
  failures?(): SourceFailure[];
}

/**
 * One way a provider's source without a hub fails mid-list (a program cut off, killed, failing, hanging): `start()` makes
 * the next list fail that way, `stop()` puts the source back. The provider's failed row must match `reason`; `secret`
 * (what the source wrote on stderr) must appear nowhere in fleet's output; `check()` is what else must hold afterwards.
 */
export interface SourceFailure {
  what: string;
  reason: RegExp;
  secret?: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  check?(): void | Promise<void>;
}

/** What an entry starts once for the suite. */
export interface Kit {
  scope(id: string): Promise<Scope>;
  /** The API server the provider lists from (`paging`, `hub-gone`). */
  hub?: HubAccess;
  /** Plugins the provider's good clusters run, which a kuberc refusing the case's plugin must still allow. */
  allowedPlugins?: string[];
  /** Secrets the entry's fixtures hold (beyond the suite's tokens): never in fleet's output either. */
  secrets?: string[];
  stop?(): Promise<void>;
}

export interface SuiteEnv {
  cp: ControlPlaneHandle;
  /** Unique per run: prefixes namespaces and names. */
  run: string;
  /** Scratch directory of this run. */
  dir: string;
}

/** One line of the provider table. */
export interface ProviderEntry {
  /** `type:` in fleet.yaml (PROVIDERS in src/config/fleet-config.ts); the table's key. */
  type: string;
  /** `source.kind` of its clusters. */
  sourceKind: string;
  /** The features it has. */
  features: Feature[];
  /** Every feature it lacks, with the reason the case does not apply (reported as skipped with that reason). */
  notApplicable: Partial<Record<Feature, string>>;
  /** Who wrote the kubeconfig a plugin comes from: `data` (a hub's: refused by default) or `user` (refused by a kuberc). */
  pluginTrust?: 'data' | 'user';
  /** What an object of the wrong shape does: a not-ready row (default), or the provider fails with it (a file). */
  wrongShape?: 'row' | 'provider-fails';
  /**
   * With `paging` not applicable (one answer, no pages): the scope's `addMany(600)` is still listed, all of it, by a case
   * of its own (`paging (no pages)`), so a provider without pages still shows it holds a fleet of that size.
   */
  manyWhole?: boolean;
  /** Starts what the provider needs (once per suite run). */
  start(env: SuiteEnv): Promise<Kit>;
}

// ---- helpers the entries share ----

let heavy: Promise<unknown> = Promise.resolve();
/**
 * Applies many objects at once (paging fixtures), one such apply at a time across the suite and with a long time limit:
 * several providers' hundreds of objects at once would only make each apply slower on a shared 2-core machine.
 */
export function applyMany(env: SuiteEnv, objects: object[]): Promise<void> {
  const run = heavy.then(() =>
    kubectl(env.cp.hub, ['apply', '--server-side', '--force-conflicts', '--field-manager=fleet-e2e', '-f', '-'], {
      stdin: objects.map((o) => JSON.stringify(o)).join('\n---\n'),
      timeoutMs: 300_000,
    }),
  );
  heavy = run.catch(() => undefined);
  return run.then(() => undefined);
}

const memo = new Map<string, Promise<unknown>>();
function once<T>(key: string, make: () => Promise<T>): Promise<T> {
  let p = memo.get(key) as Promise<T> | undefined;
  if (!p) memo.set(key, (p = make()));
  return p;
}

/** A bearer token of a ServiceAccount bound to cluster-admin on the hub: what the proxy forwards for hub providers. */
export function hubAdminAccess(env: SuiteEnv): Promise<HubAccess> {
  return once(`hub-admin:${env.run}`, async () => {
    const ns = `${env.run}-admin`;
    const token = await createServiceAccountToken(env.cp.hub, ns, 'conformance', { duration: '2h' });
    await applyYaml(
      env.cp.hub,
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${env.run}-admin` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'conformance', namespace: ns }],
      }),
    );
    return { url: env.cp.hub.url, caFile: env.cp.hub.caFile, token };
  });
}

/** Removes what hubAdminAccess made. */
export async function dropHubAdminAccess(env: SuiteEnv): Promise<void> {
  if (!memo.has(`hub-admin:${env.run}`)) return;
  await kubectl(env.cp.hub, ['delete', 'clusterrolebinding', `${env.run}-admin`, '--ignore-not-found']);
  await kubectl(env.cp.hub, ['delete', 'namespace', `${env.run}-admin`, '--wait=false', '--ignore-not-found']);
}

/** A kubeconfig (0600) that reaches `via` with its token; `path` is appended to the server (kcp: `/clusters/<ws>`). */
export function viaKubeconfig(dir: string, name: string, via: HubAccess, path = ''): string {
  return writeKubeconfig({
    path: join(dir, `${name}.via-${new URL(via.url).port}.kubeconfig`),
    server: `${via.url}${path}`,
    caFile: via.caFile,
    context: name,
    user: { token: via.token },
  });
}

/** An exec plugin that leaves `marker` behind if it is ever run (a refused plugin must not be). */
export function markerPlugin(dir: string, name: string): { command: string; marker: string } {
  const command = join(dir, `${name}-plugin.sh`);
  const marker = join(dir, `${name}-plugin.ran`);
  writeFileSync(
    command,
    `#!/bin/sh\ntouch '${marker}'\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"conformance-never-used"}}'\n`,
  );
  chmodSync(command, 0o755);
  return { command, marker };
}

/** A kubeconfig's text for a user of member-1 (its ready clusters), or one whose user runs `plugin`. */
export function memberKubeconfigText(
  env: SuiteEnv,
  context: string,
  user: { token: string } | { exec: { command: string } },
): string {
  const m1 = env.cp.members[0];
  const dir = join(env.dir, 'texts');
  mkdirSync(dir, { recursive: true });
  const path = writeKubeconfig({
    path: join(dir, `${context}-${++written}.kubeconfig`),
    server: m1.url,
    caFile: m1.caFile,
    context,
    user,
  });
  return readFileSync(path, 'utf8');
}
let written = 0;
