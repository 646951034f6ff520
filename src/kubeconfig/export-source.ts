import { lstat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';

/**
 * What an exported entry's exec arguments record of where its cluster came from (export/credential-args.ts writes
 * them): the fleet configuration, the kubeconfig files, the hub context, the cluster id.
 */
export interface RecordedSource {
  fleetConfig?: string;
  kubeconfig?: string[];
  context?: string;
  cluster?: string;
}

export function recordedSource(args: string[] | undefined): RecordedSource {
  const value = (flag: string) => {
    const i = args?.indexOf(flag) ?? -1;
    return i >= 0 ? args![i + 1] : undefined;
  };
  return {
    fleetConfig: value('--fleet-config'),
    kubeconfig: value('--kubeconfig')?.split(':'),
    context: value('--context'),
    cluster: value('--cluster'),
  };
}

/** Whether nothing is at `path` (lstat says ENOENT): the one absence counted as certain. */
async function absent(path: string): Promise<boolean> {
  return lstat(path).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  );
}

/**
 * Why an exported entry can never work again, from the files its own arguments name, looked at (lstat) and never read
 * or run: the fleet configuration it names is gone, or (a file provider's entry, `--cluster <file>+<context>`) the
 * kubeconfig file its cluster came from is gone, as `creds revoke --file` leaves a credential file it wrote. A file
 * that is there but unreadable, or any other error, decides nothing. The one rule for `kubeconfig prune`, `kubeconfig
 * credential` (its error) and `clusters list` (READY False), so the three never disagree.
 */
export async function exportSourceGone(recorded: RecordedSource): Promise<string | undefined> {
  return (await goneSource(recorded))?.message;
}

async function goneSource(recorded: RecordedSource): Promise<{ message: string; credentialFile: boolean } | undefined> {
  if (recorded.fleetConfig !== undefined && isAbsolute(recorded.fleetConfig) && (await absent(recorded.fleetConfig))) {
    return {
      message: `the fleet configuration it was exported with (${recorded.fleetConfig}) no longer exists`,
      credentialFile: false,
    };
  }
  // A hub's kubeconfig (--context given) going away says nothing about the cluster: the hub could not be asked.
  if (recorded.context !== undefined || !recorded.cluster || !recorded.kubeconfig) return undefined;
  const file = recorded.kubeconfig.find((f) => isAbsolute(f) && recorded.cluster!.startsWith(`${f}+`));
  if (file && (await absent(file)))
    return { message: `its kubeconfig file ${file} no longer exists`, credentialFile: true };
  return undefined;
}

/** What to do about an exported entry whose cluster is gone: one clause, the same wherever it is said. */
export const EXPORT_GONE_ADVICE = 'fleet kubeconfig prune removes this context, fleet kubeconfig export makes it again';

/**
 * The line said of an exported entry whose source is gone (exportSourceGone), for a person: what is gone, that a
 * credential file is gone because `creds revoke --file` deletes it (or someone removed it), and what to do. Undefined
 * when nothing is known to be gone.
 */
export async function exportGoneLine(recorded: RecordedSource): Promise<string | undefined> {
  const gone = await goneSource(recorded);
  if (!gone) return undefined;
  return `${gone.message}${gone.credentialFile ? ' (revoked by fleet creds revoke, or removed)' : ''}; ${EXPORT_GONE_ADVICE}`;
}
