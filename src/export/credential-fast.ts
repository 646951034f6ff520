import { CredentialCache, credentialCacheDir } from './credential-cache.js';
import { type ExecCluster, execCredentialJson, readExecRequest } from './exec-info.js';

/**
 * `fleet kubeconfig credential` with a cached credential, answered by the launcher (dist/bundle/fleet.mjs) before the
 * CLI is loaded: kubectl runs it before each context's first request, so a cache hit costs Node's start and this file
 * only. Anything it does not read exactly as the exec entries export writes them (every flag `--name value`, no other
 * argument), and every miss, refusal or error, goes to the full command, which decides the same way (the same cache
 * identity, credentialIdentity) and says what is wrong.
 */
export const CREDENTIAL_FLAGS = ['cluster', 'provider', 'fleet-config', 'kubeconfig', 'context'] as const;
export type CredentialFlags = Partial<Record<(typeof CREDENTIAL_FLAGS)[number], string>>;

/**
 * What tells two exported clusters apart in the cache: the pinned arguments, and the server, CA and TLS settings
 * kubectl connects with. So an entry is bound to the very destination the full command checked against the provider
 * before it stored it: a call for another server, CA, TLS name, or with verification skipped, finds no entry.
 */
export function credentialIdentity(flags: CredentialFlags, cluster: ExecCluster): unknown {
  return {
    cluster: flags.cluster,
    provider: flags.provider,
    fleetConfig: flags['fleet-config'],
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    server: cluster.server,
    ca: cluster.caHash,
    ...(cluster.insecure ? { insecure: true } : {}),
    tlsServerName: cluster.tlsServerName,
  };
}

/** The flags of `kubeconfig credential ARGS`, or undefined when they are not exactly the exported form. */
export function exportedFlags(args: string[]): CredentialFlags | undefined {
  const flags: CredentialFlags = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : '';
    const value = args[i + 1];
    if (!(CREDENTIAL_FLAGS as readonly string[]).includes(name) || value === undefined || value.startsWith('-'))
      return undefined;
    const key = name as keyof CredentialFlags;
    if (flags[key] !== undefined) return undefined;
    flags[key] = value;
  }
  return flags.cluster === undefined ? undefined : flags;
}

/**
 * Prints the cached ExecCredential and returns true, or returns false (the full command runs). Never throws.
 * `caller`: the process the handover is recorded for (kubectl: the parent).
 */
export async function answerFromCache(
  args: string[],
  env: NodeJS.ProcessEnv,
  write: (text: string) => void,
  caller = process.ppid,
): Promise<boolean> {
  try {
    const flags = exportedFlags(args);
    if (flags?.cluster === undefined) return false;
    // No cluster info, or one fleet would refuse: the full command says why (exit 2).
    const request = readExecRequest(env.KUBERNETES_EXEC_INFO);
    const cached = await new CredentialCache(credentialIdentity(flags, request.cluster), credentialCacheDir(env)).take(
      flags.cluster,
      caller,
    );
    if (!cached) return false;
    write(execCredentialJson(request.apiVersion, cached.credential, cached.expires));
    return true;
  } catch {
    return false;
  }
}
