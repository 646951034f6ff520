import { serverKey } from '../kubeconfig/server.js';
import { ConfigError, FleetError } from '../base/errors.js';
import { fileError, requireNamedFile } from '../base/files.js';
import type { Connector } from '../kube/connector.js';
import { CORE_API_PATH } from '../kube/paths.js';
import type { ExecCredentialRunner } from '../kube/exec-credential.js';
import { bearerToken } from '../kubeconfig/credentials.js';
import { exportMarkerOf } from '../kubeconfig/export-marker.js';
import { EXPORT_GONE_ADVICE, exportGoneLine } from '../kubeconfig/export-source.js';
import { registerSecret, registerUserSecrets } from '../kubeconfig/redact.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import type { ApprovedExec } from '../kubeconfig/trust.js';
import type { ClusterEntry, UserEntry } from '../kubeconfig/types.js';
import { ClusterNotFoundError } from '../providers/not-found.js';
import { fleetProvider } from '../providers/registry.js';
import type { ClusterRef } from '../providers/types.js';
import type { ExecCluster } from './exec-info.js';

/** A credential as the provider's kubeconfig gives it, PEM text for certificates (as an ExecCredential carries them). */
export interface FetchedCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** The plugin's own expirationTimestamp; absent for a credential held as data (a Secret's token, a certificate). */
  expirationTimestamp?: string;
}

/** The one comparison of servers (src/kubeconfig/server.ts): as kubectl dials them, the host as written. */
export { serverKey };

/** The CA bytes a cluster entry names (data or file), empty when it names none: the system roots. */
async function caBytes(c: ClusterEntry): Promise<Buffer> {
  if (c['certificate-authority-data']) return Buffer.from(c['certificate-authority-data'], 'base64');
  const file = c['certificate-authority'];
  return file ? requireNamedFile(file, `certificate-authority ${file}`) : Buffer.alloc(0);
}

/**
 * Refuses (one line, exit 2) unless kubectl is connecting where the provider says the cluster is, as it would verify
 * it: the same server (serverKey), the same CA bytes (none on both sides meaning the system roots), the same TLS
 * server name, and no skipped verification the provider does not skip itself. A provider that skips verification
 * (insecure-skip-tls-verify) has no CA to compare: then the server alone binds the credential, as it does for the
 * provider's own connections.
 */
export async function checkDestination(name: string, own: ClusterEntry, to: ExecCluster): Promise<void> {
  const again = 'run fleet kubeconfig export again';
  // kubectl says where it connects (KUBERNETES_EXEC_INFO); for a client that does not, the context it reads does.
  const who = to.from ?? 'kubectl';
  if (!own.server) throw new ConfigError(`${name}: its provider names no server`);
  if (serverKey(to.server) !== serverKey(own.server))
    throw new ConfigError(
      `${name}: ${who} is connecting to ${to.server}, but its provider names ${own.server}; ${again}`,
    );
  if (to.insecure && !own['insecure-skip-tls-verify'])
    throw new ConfigError(
      `${name}: ${who} skips TLS verification (insecure-skip-tls-verify), which its provider does not; ${again}`,
    );
  if ((to.tlsServerName ?? '') !== (own['tls-server-name'] ?? ''))
    throw new ConfigError(
      `${name}: ${who} verifies the server as "${to.tlsServerName ?? ''}", but its provider names tls-server-name "${own['tls-server-name'] ?? ''}"; ${again}`,
    );
  const theirs = Buffer.from(to.caData ?? '', 'base64');
  if (!theirs.equals(await caBytes(own)))
    throw new ConfigError(`${name}: ${who} verifies ${to.server} with another CA than its provider names; ${again}`);
}

/**
 * The credential behind an exported context, fetched now through the provider that lists the cluster: the user's own
 * file (token, tokenFile, client certificate, or its exec plugin), a hub Secret read with the user's hub identity (so
 * hub RBAC decides, and a rotated or deleted Secret takes effect here), a ClusterProfile's access-provider plugin. The
 * trust policy judges the context first, as for any connection: a plugin or file it refuses is never used.
 * `destination`: the cluster kubectl is connecting to (KUBERNETES_EXEC_INFO); a credential is only fetched for the
 * server and CA its provider names (checkDestination), so an edited context cannot send it elsewhere.
 */
export async function fetchCredential(
  ref: ClusterRef,
  connector: Connector,
  exec: ExecCredentialRunner,
  destination: ExecCluster,
): Promise<Fetched> {
  if (!ref.ready && !ref.server) throw new FleetError('config', `${ref.name}: ${ref.reason ?? 'not ready'}`);
  const ctx = await ref.resolve();
  if (exportMarkerOf(ctx.user)) {
    throw new ConfigError(
      `${ref.name}: its user is an entry fleet kubeconfig export wrote (it would call fleet again); export from the kubeconfig that holds the cluster's own credential`,
    );
  }
  const approval = await connector.trust.approve(ctx);
  if (approval.refusal) throw new FleetError(approval.refusal.kind, approval.refusal.message);
  // The destination is checked against the approved context: a CA file hub data names is read from its approved path.
  await checkDestination(ref.name, approval.context.cluster, destination);
  const credential = await readCredential(ref, approval.context, approval.plugin, exec);
  return { credential, refusedByServer: () => refusedByServer(ref, ctx, credential, connector) };
}

/** A fresh credential, and how to ask its server whether it refuses it (only when it is the one dropped as refused). */
export interface Fetched {
  credential: FetchedCredential;
  refusedByServer: () => Promise<boolean>;
}

/**
 * Whether the server answers 401 to this very credential: one GET /api with it alone (no plugin run again, as
 * KubeClient would after a 401), through the connector and its trust policy like any connection.
 */
async function refusedByServer(
  ref: ClusterRef,
  ctx: ResolvedContext,
  c: FetchedCredential,
  connector: Connector,
): Promise<boolean> {
  const b64 = (pem: string | undefined) => (pem ? Buffer.from(pem).toString('base64') : undefined);
  const user: UserEntry = {
    token: c.token,
    'client-certificate-data': b64(c.clientCertificateData),
    'client-key-data': b64(c.clientKeyData),
  };
  try {
    const client = await connector.context({ ...ctx, user, userName: ctx.userName }, ref.name);
    await client.json('GET', CORE_API_PATH);
    return false;
  } catch (error) {
    return error instanceof FleetError && error.kind === 'unauthorized';
  }
}

async function readCredential(
  ref: ClusterRef,
  ctx: ResolvedContext,
  plugin: ApprovedExec | undefined,
  exec: ExecCredentialRunner,
): Promise<FetchedCredential> {
  const user = ctx.user;
  registerUserSecrets(user);
  if (user.exec) {
    // The plugin the trust policy approved for this very context, started as approved.
    if (!plugin)
      throw new FleetError(
        'plugin',
        `${ref.name}: exec plugin ${user.exec.command ?? ''} not approved by the trust policy`,
      );
    const c = await exec.get(plugin, ctx.cluster);
    return {
      token: c.token,
      clientCertificateData: c.clientCertificateData,
      clientKeyData: c.clientKeyData,
      expirationTimestamp: c.expirationTimestamp,
    };
  }
  const who = `${ref.name}: user "${ctx.userName ?? ''}"`;
  if (user['auth-provider'])
    throw new FleetError(
      'plugin',
      `${who} uses auth-provider "${user['auth-provider'].name ?? ''}", which fleet does not pass on; use an exec plugin`,
    );
  const out: FetchedCredential = {};
  const cert = await pem(user, 'client-certificate');
  const key = await pem(user, 'client-key');
  if (Boolean(cert) !== Boolean(key))
    throw new ConfigError(`${who}: a client certificate needs both certificate and key`);
  if (cert && key) {
    registerSecret(key);
    out.clientCertificateData = cert;
    out.clientKeyData = key;
  }
  const token = await bearerToken(user).catch((error) => {
    throw fileError(`${who}: tokenFile ${user.tokenFile}`, error);
  });
  if (token) out.token = token;
  if (!out.token && !out.clientCertificateData) {
    if (user.username || user.password)
      throw new FleetError('plugin', `${who} uses basic authentication, which an exec credential cannot carry`);
    throw new ConfigError(`${who} holds no credential`);
  }
  return out;
}

/** A client certificate or key as PEM text, from its data (base64) or its file. */
async function pem(user: UserEntry, field: 'client-certificate' | 'client-key'): Promise<string | undefined> {
  const data = user[`${field}-data`];
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  const file = user[field];
  return file ? (await requireNamedFile(file, `${field} ${file}`)).toString('utf8') : undefined;
}

/** What the exec entry's arguments say (credentialArgs), and the cluster kubectl is connecting to. */
export interface CredentialRequest {
  cluster: string;
  provider?: string;
  fleetConfig?: string;
  kubeconfig?: string[];
  context?: string;
  /** The cluster kubectl is connecting to. */
  destination: ExecCluster;
}

/**
 * The cluster found again the way the export found it: only the fleet configuration the arguments name (none is looked
 * for in the working directory or the user's config dir), the provider by name, its files and hub pinned.
 */
export async function credentialFor(
  request: CredentialRequest,
  connector: Connector,
  exec: ExecCredentialRunner,
): Promise<Fetched> {
  let ref: ClusterRef;
  try {
    const provider = fleetProvider({
      kubeconfig: request.kubeconfig,
      context: request.context,
      provider: request.provider,
      fleetConfig: request.fleetConfig,
      findFleetConfig: false,
      connector,
    });
    ref = await provider.get(request.cluster);
  } catch (error) {
    throw (await goneError(request, error)) ?? error;
  }
  return fetchCredential(ref, connector, exec, request.destination);
}

/**
 * The one line kubectl shows when the cluster an exported context stands for is gone (after `creds revoke`, most
 * often): what is gone, and what to do, instead of the provider's own wording (a missing kubeconfig file, a cluster
 * "not found"), which names neither the revocation nor the context. Undefined for any other failure.
 */
async function goneError(request: CredentialRequest, error: unknown): Promise<FleetError | undefined> {
  const gone = await exportGoneLine({
    fleetConfig: request.fleetConfig,
    kubeconfig: request.kubeconfig,
    context: request.context,
    cluster: request.cluster,
  });
  if (gone) return new FleetError('not-found', `${request.cluster}: ${gone}`);
  if (error instanceof ClusterNotFoundError) {
    const file = request.kubeconfig?.find((f) => request.cluster.startsWith(`${f}+`));
    if (file)
      return new FleetError(
        'not-found',
        `${request.cluster}: ${file} no longer has its context (removed from the file); ${EXPORT_GONE_ADVICE}`,
      );
    const who = request.provider ? `provider "${request.provider}"` : 'its provider';
    return new FleetError(
      'not-found',
      `${request.cluster}: ${who} no longer lists it (its hub Secret deleted, as fleet creds revoke does, or the cluster removed); ${EXPORT_GONE_ADVICE}`,
    );
  }
  return undefined;
}
