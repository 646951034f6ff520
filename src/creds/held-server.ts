import { ConfigError } from '../base/errors.js';
import { requireNamedFile } from '../base/files.js';
import { type Destination, certificateVerifies, destinationCa } from '../kube/destination.js';
import { serverKey } from '../kubeconfig/server.js';
import type { ClusterEntry } from '../kubeconfig/types.js';
import { caFingerprint } from './cluster-identity.js';

/**
 * The server a consumer Secret (or a file) names against the cluster fleet mints on (docs/security.md, "Where a
 * credential goes"). The new credential is written into the Secret's own cluster entry (the consumer connects as it
 * did), so that entry must reach the member and nothing else:
 * - data that turns TLS verification off, or names a proxy, is refused: whoever wrote it would read the credential;
 * - a CA the Secret names must be one of the member's (by certificate): the consumer verifies the server with it;
 * - the server must be the member's as kubectl dials it (serverKey), or (another name for the same cluster: an
 *   in-cluster or load-balancer address) one whose certificate verifies against the member's CA, as the operator's
 *   configuration holds it, for the name the consumer checks: a TLS handshake, no credential sent. With no CA in the
 *   operator's entry (system roots) only the same URL counts: a public CA would vouch for anyone's server.
 * Checked before anything is minted; each refusal is one line naming both servers (exit 2).
 */
export interface HeldServer {
  /** The server the new credential is written for (the Secret's). */
  server: string;
  /** Where fleet mints and verifies it (the member's server from the operator's configuration). */
  verifiedAt: string;
  /** How the two were found to be one cluster: `same URL`, or `certificate verified against <cluster>'s CA`. */
  by: string;
}

export async function checkHeldServer(
  held: ClusterEntry,
  dest: Destination,
  what: string,
  verb: 'adopt' | 'rotate',
  o: { userFiles?: boolean; signal?: AbortSignal } = {},
): Promise<HeldServer> {
  const not = verb === 'adopt' ? 'not adoptable' : 'not rotated';
  const server = held.server ?? '';
  if (!server) throw new ConfigError(`${what}: its cluster entry names no server; ${not}`);
  if (held['insecure-skip-tls-verify'] === true)
    throw new ConfigError(
      `${what}: its cluster entry turns TLS verification off (insecure-skip-tls-verify), so whoever answers at ${server} would get the credential; ${not} (give it ${dest.name}'s CA instead)`,
    );
  if (held['proxy-url'])
    throw new ConfigError(
      `${what}: its cluster entry sends the credential through a proxy it names (proxy-url ${held['proxy-url']}); ${not} (fleet sends credentials only through the proxy of ${dest.name} in the operator's configuration)`,
    );
  const same =
    serverKey(server) === serverKey(dest.server) &&
    (held['tls-server-name'] ?? '') === (dest.cluster['tls-server-name'] ?? '');
  const why = same ? undefined : await certificateVerifies(dest, server, held['tls-server-name'], undefined, o.signal);
  if (why)
    throw new ConfigError(
      `${what}: its server ${server} is not ${dest.name}'s server ${dest.server}: ${why}; ${not} (name the cluster whose server it is with --cluster)`,
    );
  const destCa = await destinationCa(dest);
  const caFile = held['certificate-authority'];
  const heldCa =
    held['certificate-authority-data'] ||
    (o.userFiles && caFile
      ? (await requireNamedFile(caFile, `certificate-authority ${caFile}`)).toString('base64')
      : undefined);
  if (caFile && !heldCa)
    throw new ConfigError(
      `${what}: its cluster entry names a CA file (${held['certificate-authority']}) fleet does not read from data; ${not}`,
    );
  if (heldCa) {
    const mine = caFingerprint(destCa?.toString('base64'));
    const theirs = caFingerprint(heldCa);
    const ok = Boolean(mine && theirs && theirs.split(',').every((fp) => mine.split(',').includes(fp)));
    if (!ok)
      throw new ConfigError(
        `${what}: its cluster entry names a CA that is not ${dest.name}'s (a consumer would trust servers that CA vouches for); ${not}`,
      );
  }
  return { server, verifiedAt: dest.server, by: same ? 'same URL' : `certificate verified against ${dest.name}'s CA` };
}
