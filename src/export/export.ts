import { FleetError } from '../base/errors.js';
import { requireNamedFile } from '../base/files.js';
import { warnOnce } from '../base/warnings.js';
import type { Connector } from '../kube/connector.js';
import { exportMarkerExtension, exportMarkerOf } from '../kubeconfig/export-marker.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import {
  type ClusterEntry,
  EXEC_API_VERSION,
  type ExecConfig,
  type KubeconfigDoc,
  type UserEntry,
} from '../kubeconfig/types.js';
import type { ClusterRef } from '../providers/types.js';

/** What kubectl says when the command is missing (client-go prints installHint with its "executable not found"). */
export const INSTALL_HINT = `This context's credential comes from fleet ("fleet kubeconfig credential", or fleet-credential in front of it), which was not found.
Install fleet (its README: the executable and fleet-credential, or npm link), or export again with --command /absolute/path/to/fleet.`;

/** One cluster's entries, as they go into the exported file (context, cluster and user share `name`). */
export interface ExportedCluster {
  /** The fleet cluster id. */
  cluster: string;
  provider: string;
  /** The context name (also the cluster and user entry names). */
  name: string;
  server: string;
  namespace?: string;
  clusterEntry: ClusterEntry;
  userEntry: UserEntry;
}

export interface ExportSettings {
  /** The command kubectl runs (`fleet`, or an absolute path). */
  command: string;
  /** The arguments after the command that find this cluster again (credentialArgs). */
  args: (ref: ClusterRef) => string[];
  /** The context name of a cluster (the --name-template). */
  name: (ref: ClusterRef) => string;
}

/**
 * One cluster's exported entries: server and CA as the provider knows them (the CA inline, also when the provider's
 * kubeconfig names a file), and a user that is an exec entry calling fleet, so the file holds no token, key or password.
 * The context is judged by the trust policy first, as for a connection: hub data naming a local file is refused here
 * too. Undefined for a context fleet exported itself (a merged file read back by the file provider).
 */
export async function exportCluster(
  ref: ClusterRef,
  connector: Connector,
  settings: ExportSettings,
): Promise<ExportedCluster | undefined> {
  if (!ref.ready && !ref.server) throw new FleetError('config', ref.reason ?? 'not ready');
  const ctx = await ref.resolve();
  if (exportMarkerOf(ctx.user) || exportMarkerOf(ctx.cluster)) return undefined;
  const refused = await connector.trust.problem(ctx);
  if (refused) throw new FleetError(refused.kind, refused.message, { exitCode: 1 });
  const server = ctx.cluster.server;
  if (!server) throw new FleetError('config', `cluster "${ctx.clusterName}" has no server`);
  const name = settings.name(ref);
  // Said once per cluster on stderr, as whoami says it: the exported context will send the credential unverified.
  if (ctx.cluster['insecure-skip-tls-verify'])
    warnOnce(
      `${ref.name}: the exported context skips TLS verification (insecure-skip-tls-verify): kubectl will send its credential to whatever answers at ${server}`,
    );
  const marker = [exportMarkerExtension({ cluster: ref.name, provider: ref.provider })];
  const exec: ExecConfig = {
    apiVersion: EXEC_API_VERSION,
    command: settings.command,
    args: settings.args(ref),
    // Required by the credential command: without the cluster kubectl connects to, it gives no credential.
    provideClusterInfo: true,
    interactiveMode: 'Never',
    installHint: INSTALL_HINT,
  };
  return {
    cluster: ref.name,
    provider: ref.provider,
    name,
    server,
    ...(ctx.namespace ? { namespace: ctx.namespace } : {}),
    clusterEntry: { ...(await clusterEntry(ctx)), extensions: marker },
    userEntry: { exec, extensions: marker },
  };
}

/** The connection settings kubectl needs, nothing that authenticates: a proxy URL with a password is refused. */
async function clusterEntry(ctx: ResolvedContext): Promise<ClusterEntry> {
  const c = ctx.cluster;
  const out: ClusterEntry = { server: c.server };
  const caFile = c['certificate-authority'];
  const ca =
    c['certificate-authority-data'] ??
    (caFile ? (await requireNamedFile(caFile, `certificate-authority ${caFile}`)).toString('base64') : undefined);
  if (ca) out['certificate-authority-data'] = ca;
  if (c['insecure-skip-tls-verify']) out['insecure-skip-tls-verify'] = true;
  if (c['tls-server-name']) out['tls-server-name'] = c['tls-server-name'];
  if (c['disable-compression']) out['disable-compression'] = true;
  const proxy = c['proxy-url'];
  if (proxy) {
    let password = false;
    try {
      password = new URL(proxy).password !== '';
    } catch {
      // Not a URL: kubectl refuses it itself, as it would the original.
    }
    if (password)
      throw new FleetError(
        'config',
        `cluster "${ctx.clusterName}": proxy-url carries a password, which an exported file does not hold`,
      );
    out['proxy-url'] = proxy;
  }
  return out;
}

/** The exported kubeconfig: one context, cluster and user per cluster, in the order given; no current-context. */
export function exportedKubeconfig(clusters: ExportedCluster[]): KubeconfigDoc {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: clusters.map((c) => ({ name: c.name, cluster: c.clusterEntry })),
    users: clusters.map((c) => ({ name: c.name, user: c.userEntry })),
    contexts: clusters.map((c) => ({
      name: c.name,
      context: {
        cluster: c.name,
        user: c.name,
        ...(c.namespace ? { namespace: c.namespace } : {}),
        extensions: c.clusterEntry.extensions,
      },
    })),
  };
}

/**
 * Two clusters the template gave one name: refused before anything is written, naming both and the template (the
 * default one too: a newcomer who passed no --name-template must see which names clashed and why).
 */
export function duplicateName(
  clusters: Array<{ cluster: string; name: string }>,
  template: string,
): string | undefined {
  const seen = new Map<string, string>();
  for (const c of clusters) {
    const other = seen.get(c.name);
    if (other !== undefined)
      return `--name-template ${JSON.stringify(template)}: clusters "${other}" and "${c.cluster}" both get the context name "${c.name}"; use a template with {id}`;
    seen.set(c.name, c.cluster);
  }
  return undefined;
}
