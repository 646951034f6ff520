import { createHash } from 'node:crypto';

import { ConfigError } from '../base/errors.js';
import { readOptionalRegular, requireNamedFile } from '../base/files.js';
import { kernelPath } from '../base/paths.js';
import { precedence, resolveClusterPaths } from '../kubeconfig/loading-rules.js';
import { type KubeconfigFile, parseKubeconfig } from '../kubeconfig/parse.js';
import { EXEC_API_VERSION, EXEC_API_VERSIONS, type ClusterEntry, type ExecConfig } from '../kubeconfig/types.js';
import { CREDENTIAL_FLAGS, type CredentialFlags, exportedFlags } from './credential-fast.js';
import { type ExecCluster, type ExecRequest, readExecRequest } from './exec-info.js';

/**
 * Where the credential goes when the client does not say (issue 46, item 6). kubectl, Helm, k9s, client-go, the Python
 * and Rust clients pass the cluster they connect to in KUBERNETES_EXEC_INFO; @kubernetes/client-node and fabric8's Java
 * client set no such variable. For those, the cluster is read from the kubeconfig files the client itself loads by
 * default (KUBECONFIG, else ~/.kube/config: the same loading rules, the plugin inherits the client's environment):
 * every context there whose user runs this very entry (`kubeconfig credential` with the same --cluster, --provider,
 * --fleet-config, --kubeconfig and --context) is a place this credential may be sent, so all of them must name one and
 * the same cluster (server, CA, TLS server name, verification), which is then checked against the provider exactly as
 * KUBERNETES_EXEC_INFO's is (checkDestination). None found (the client loaded a file by a path the plugin cannot see),
 * two that differ, or a file that cannot be read: refused, exit 2, nothing fetched.
 *
 * What this does not cover, and why it is still the rule: a client that loads a kubeconfig from a path outside that
 * view, while the view holds a faithful copy of the entry, is trusted with the view's cluster. Such clients run any
 * exec command a kubeconfig names (they have no allowlist), so a kubeconfig they are handed is code they already run;
 * an edited server in the files they read is what this refuses (docs/kubeconfig.md, docs/security.md).
 */
export async function execRequest(env: NodeJS.ProcessEnv, flags: CredentialFlags): Promise<ExecRequest> {
  const raw = env.KUBERNETES_EXEC_INFO;
  if (raw !== undefined && raw.trim() !== '') return readExecRequest(raw);
  return requestFromView(env, flags);
}

/** The exported flags an exec entry runs with (`... kubeconfig credential --cluster ...`), or undefined. */
export function entryFlags(exec: ExecConfig | undefined | null): CredentialFlags | undefined {
  const args = Array.isArray(exec?.args) ? exec.args : [];
  for (let i = 0; i + 1 < args.length; i++) {
    if (args[i] === 'kubeconfig' && args[i + 1] === 'credential') {
      const flags = exportedFlags(args.slice(i + 2));
      if (flags) return flags;
    }
  }
  return undefined;
}

function sameFlags(a: CredentialFlags, b: CredentialFlags): boolean {
  return CREDENTIAL_FLAGS.every((k) => (a[k] ?? undefined) === (b[k] ?? undefined));
}

/** One context of the view that runs this entry, with the cluster it names as the client would connect to it. */
interface ViewDestination {
  where: string;
  cluster: ExecCluster;
  apiVersion: string;
}

async function viewCluster(entry: ClusterEntry, file: string, where: string): Promise<ExecCluster> {
  if (typeof entry.server !== 'string' || entry.server === '')
    throw new ConfigError(`${where}: its cluster names no server`);
  const resolved = resolveClusterPaths(entry, file);
  let caData: string | undefined;
  if (resolved['certificate-authority-data']) caData = resolved['certificate-authority-data'];
  else if (resolved['certificate-authority']) {
    const path = resolved['certificate-authority'];
    caData = (await requireNamedFile(path, `${where}: certificate-authority ${path}`)).toString('base64');
  }
  const name = resolved['tls-server-name'];
  return {
    server: entry.server,
    ...(caData ? { caData, caHash: createHash('sha256').update(caData).digest('hex') } : {}),
    insecure: resolved['insecure-skip-tls-verify'] === true,
    ...(typeof name === 'string' && name !== '' ? { tlsServerName: name } : {}),
    from: where,
  };
}

/** Same destination as client and cache see it: the fields KUBERNETES_EXEC_INFO would carry. */
function destinationKey(c: ExecCluster): string {
  return JSON.stringify([c.server, c.caHash ?? '', c.insecure, c.tlsServerName ?? '']);
}

async function requestFromView(env: NodeJS.ProcessEnv, flags: CredentialFlags): Promise<ExecRequest> {
  const paths = precedence(env).paths.map((p) => kernelPath(p));
  const files: KubeconfigFile[] = [];
  for (const path of paths) {
    // Regular files only: the client has read them already, and a pipe here could block the plugin or feed it another
    // text than the client saw.
    const text = await readOptionalRegular(path, 'a kubeconfig file');
    if (text !== undefined) files.push(parseKubeconfig(text, path));
  }
  const view = paths.join(':');
  // Users (by name, in any file) that run this entry; a context in any file naming one of them may be the one the
  // client uses, whichever file's entry wins its merge (client libraries do not all merge as client-go does).
  const users = new Map<string, string>();
  for (const file of files)
    for (const [name, user] of file.users) {
      const theirs = entryFlags(user?.exec);
      if (theirs && sameFlags(theirs, flags)) {
        const version = user.exec?.apiVersion;
        users.set(
          name,
          typeof version === 'string' && EXEC_API_VERSIONS.includes(version) ? version : EXEC_API_VERSION,
        );
      }
    }
  const found: ViewDestination[] = [];
  for (const file of files)
    for (const [contextName, context] of file.contexts) {
      const userName = context?.user;
      if (typeof userName !== 'string' || !users.has(userName) || typeof context.cluster !== 'string') continue;
      const where = `context "${contextName}" of ${file.path}`;
      for (const other of files) {
        const entry = other.clusters.get(context.cluster);
        if (entry) {
          const at = other === file ? where : `${where} (cluster "${context.cluster}" of ${other.path})`;
          found.push({
            where: at,
            cluster: await viewCluster(entry, other.path, at),
            apiVersion: users.get(userName)!,
          });
        }
      }
    }
  if (found.length === 0) {
    throw new ConfigError(
      `KUBERNETES_EXEC_INFO is not set (kubectl sets it; this client does not), and no context in the kubeconfig files it reads by default (${view || 'none'}) runs this entry (--cluster ${flags.cluster}): a client that does not pass the cluster it connects to gets a credential only for a context in KUBECONFIG or ~/.kube/config; set KUBECONFIG to the exported file`,
    );
  }
  const first = found[0];
  const other = found.find((d) => destinationKey(d.cluster) !== destinationKey(first.cluster));
  if (other) {
    const a = first.cluster;
    const b = other.cluster;
    const what =
      a.server !== b.server
        ? 'different clusters'
        : (a.caHash ?? '') !== (b.caHash ?? '')
          ? 'one server with different CAs'
          : a.insecure !== b.insecure
            ? 'one server, one of them skipping TLS verification'
            : 'one server with different TLS server names';
    throw new ConfigError(
      `KUBERNETES_EXEC_INFO is not set, and two contexts that run this entry (--cluster ${flags.cluster}) name ${what}: ${first.where} (${first.cluster.server}) and ${other.where} (${other.cluster.server}); no credential is given when the client may connect to either; run fleet kubeconfig export again`,
    );
  }
  return { apiVersion: first.apiVersion, cluster: first.cluster };
}
