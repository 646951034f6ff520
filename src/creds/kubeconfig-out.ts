import { createHash } from 'node:crypto';
import yaml from 'js-yaml';

import { requireNamedFile } from '../base/files.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import type { ClusterEntry, KubeconfigDoc, UserEntry } from '../kubeconfig/types.js';

/** Marks a kubeconfig file as written by fleet, so a second run may replace it and creds list can say it is fleet's. */
export const KUBECONFIG_EXTENSION = 'fleet.dev/credential';

/**
 * The cluster as the target's own context presents it (server, TLS name, CA): a file CA is embedded, so the kubeconfig
 * stands alone in a Secret or on another machine.
 */
export async function portableCluster(ctx: ResolvedContext): Promise<ClusterEntry> {
  const c = ctx.cluster;
  const out: ClusterEntry = { server: c.server };
  if (c['certificate-authority-data']) out['certificate-authority-data'] = c['certificate-authority-data'];
  else if (c['certificate-authority']) {
    const file = c['certificate-authority'];
    out['certificate-authority-data'] = (await requireNamedFile(file, `certificate-authority ${file}`)).toString(
      'base64',
    );
  }
  if (c['tls-server-name']) out['tls-server-name'] = c['tls-server-name'];
  if (c['insecure-skip-tls-verify']) out['insecure-skip-tls-verify'] = true;
  return out;
}

export interface KubeconfigParts {
  /** Cluster and context name inside the file. */
  name: string;
  userName: string;
  cluster: ClusterEntry;
  user: UserEntry;
  namespace?: string;
  /**
   * Non-secret facts recorded in the file's extensions, for files only: cluster-inventory-api's kubeconfig-secretreader
   * plugin refuses a kubeconfig with extensions, and a Secret is marked by its labels and annotations instead.
   */
  facts?: Record<string, string>;
}

/** A one-context kubeconfig. */
export function buildKubeconfig(p: KubeconfigParts): string {
  const doc: KubeconfigDoc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: p.name, cluster: p.cluster }],
    users: [{ name: p.userName, user: p.user }],
    contexts: [
      {
        name: p.name,
        context: { cluster: p.name, user: p.userName, ...(p.namespace ? { namespace: p.namespace } : {}) },
      },
    ],
    'current-context': p.name,
    ...(p.facts ? { extensions: [{ name: KUBECONFIG_EXTENSION, extension: p.facts }] } : {}),
  };
  return yaml.dump(doc, { noRefs: true, lineWidth: -1 });
}

/** The facts fleet recorded in a kubeconfig file it wrote (its fleet.dev/credential extension); undefined: not fleet's. */
export function fileFacts(doc: KubeconfigDoc | undefined): Record<string, string> | undefined {
  return doc?.extensions?.find((x) => x?.name === KUBECONFIG_EXTENSION)?.extension as
    Record<string, string> | undefined;
}

/**
 * The context whose user fleet's record describes: the one `creds adopt --file` recorded (an adopted file keeps its
 * other contexts), else the current one (a file `creds generate --out` wrote has one context).
 */
export function recordedContext(doc: KubeconfigDoc, facts: Record<string, string> | undefined): string | undefined {
  return facts?.context ?? doc['current-context'];
}

/** The file with its facts replaced (other extensions kept), as fleet writes it. */
export function withFileFacts(doc: KubeconfigDoc, facts: Record<string, string>): string {
  const extensions = [
    ...(doc.extensions ?? []).filter((x) => x.name !== KUBECONFIG_EXTENSION),
    { name: KUBECONFIG_EXTENSION, extension: facts },
  ];
  return yaml.dump({ ...doc, extensions }, { noRefs: true, lineWidth: -1 });
}

/** SHA-256 of the kubeconfig bytes: what multicluster-runtime compares to notice a changed credential. */
export const kubeconfigSha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The file without one context (revoking an adopted file's credential): the context goes, with its user and cluster
 * when no other context names them, and fleet's record (the file is not fleet's any more); a current-context that named
 * it is unset. Undefined when no other context is left: then the whole file is the credential's and is deleted.
 */
export function withoutContext(doc: KubeconfigDoc, name: string): string | undefined {
  const gone = doc.contexts?.find((c) => c.name === name)?.context;
  const contexts = (doc.contexts ?? []).filter((c) => c.name !== name);
  if (contexts.length === 0) return undefined;
  const named = (field: 'user' | 'cluster', value: string | undefined) =>
    value !== undefined && contexts.some((c) => c.context?.[field] === value);
  const users = (doc.users ?? []).filter((u) => u.name !== gone?.user || named('user', gone?.user));
  const clusters = (doc.clusters ?? []).filter((c) => c.name !== gone?.cluster || named('cluster', gone?.cluster));
  const extensions = (doc.extensions ?? []).filter((x) => x.name !== KUBECONFIG_EXTENSION);
  const { 'current-context': current, extensions: _drop, ...rest } = doc;
  void _drop;
  return yaml.dump(
    {
      ...rest,
      clusters,
      users,
      contexts,
      ...(current && current !== name ? { 'current-context': current } : {}),
      ...(extensions.length > 0 ? { extensions } : {}),
    },
    { noRefs: true, lineWidth: -1 },
  );
}
