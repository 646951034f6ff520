import { UsageError } from '../base/errors.js';
import { checkReadableFile } from '../base/files.js';
import { type NamespacedName, namespacedName } from '../base/names.js';
import type { ErrorInfo, ErrorKind } from '../base/errors.js';
import type { HubChoice } from '../creds/hubs.js';
import type { HubSpec } from '../config/fleet-config.js';
import type { ClusterRef } from '../providers/types.js';
import { precedence } from '../kubeconfig/loading-rules.js';
import type { DeleteGuard } from '../creds/still-used.js';
import type { Fleet } from './fleet-run.js';

/**
 * What `creds rotate` and `creds revoke` act on, named the same way in both: hub Secrets as NAMESPACE/NAME arguments
 * and kubeconfig files as --file, each checked before any cluster or hub is touched.
 */
export interface CredentialTargets {
  names: NamespacedName[];
  files: string[];
}

/**
 * The arguments and --file values as targets: a name that is not NAMESPACE/NAME is a usage error, and so is a --file
 * that is a directory or unreadable (one line each). `missingFileOk`: a --file that does not exist is left to the
 * service (revoke reports it as not found, already revoked, as kubectl delete does); otherwise it is refused here.
 */
export async function credentialTargets(
  names: string[],
  files: string[] | undefined,
  o: { missingFileOk: boolean },
): Promise<CredentialTargets> {
  const refs = names.map((n) => {
    const ref = namespacedName(n);
    if (!ref) throw new UsageError(`"${n}": expected NAMESPACE/NAME of a hub Secret`);
    return ref;
  });
  for (const file of files ?? [])
    await checkReadableFile(file, `--file ${file}`, 'a kubeconfig file', { missingOk: o.missingFileOk });
  return { names: refs, files: files ?? [] };
}

/** Where rotate and revoke find what a credential names: the hub, the clusters by name, every cluster, --cluster. */
export interface CredentialScope {
  hub?: HubSpec;
  cluster: (name: string) => Promise<ClusterRef>;
  clusters: () => Promise<ClusterRef[]>;
  clusterOverride?: string;
}

/** The scope of a rotate or revoke run over this command's fleet: the first hub of the one hub rule, when one is needed. */
export function credentialScope(fleet: Fleet, hubs: HubChoice[], clusterOverride: string | undefined): CredentialScope {
  return {
    hub: hubs[0]?.spec,
    cluster: (name) => fleet.provider.get(name),
    clusters: () => fleet.provider.list(),
    clusterOverride,
  };
}

/**
 * What adopt --revoke-old, rotate and revoke look at before deleting a token Secret (creds/still-used.ts): --force, and
 * the user's own kubeconfig files as kubectl's loading rules name them (--kubeconfig, else KUBECONFIG, else ~/.kube/config).
 */
export function deleteGuard(fleet: Fleet, force: boolean | undefined): DeleteGuard {
  return { force: Boolean(force), kubeconfigs: fleet.kubeconfigPaths ?? precedence(process.env).paths };
}

/** The flag every command that deletes a token Secret has: what it overrides is said in its help and in each refusal. */
export const FORCE_DESCRIPTION =
  "Delete a token Secret even when something else still uses it (the operator's own kubeconfig, a workload that mounts or references it, another hub Secret holding the same token); each user is still named.";

/** An item of a rotate or revoke report: a hub Secret or a file. */
export interface CredentialItem {
  secret?: { namespace: string; name: string };
  file?: { path: string };
  status: string;
  reason?: string;
  error?: ErrorInfo;
}

/** The item's Secret NAMESPACE/NAME or file path, as the table, -o name and the messages show it. */
export const credentialWhere = (i: CredentialItem): string =>
  i.secret ? `${i.secret.namespace}/${i.secret.name}` : (i.file?.path ?? '');

/** -o name: `secret/NAMESPACE/NAME` for a hub Secret, the path for a file. */
export const credentialName = (i: CredentialItem): string =>
  i.secret ? `secret/${credentialWhere(i)}` : credentialWhere(i);

/**
 * A failed item as one `error:` line of render(): its message, naming its Secret or file unless it already does, and
 * the error kind (`fallback` when the item carries none).
 */
export function credentialFailure(i: CredentialItem, message: string, fallback: ErrorKind): { error: ErrorInfo } {
  const where = credentialWhere(i);
  return {
    error: { kind: i.error?.kind ?? fallback, message: message.includes(where) ? message : `${where}: ${message}` },
  };
}
