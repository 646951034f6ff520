import {createHash} from 'node:crypto'
import {lstat, mkdir, unlink} from 'node:fs/promises'
import {isAbsolute, join} from 'node:path'

import {readOptional} from '../base/files.js'
import {homeDir} from '../base/paths.js'
import {writeFileAtomic} from '../kubeconfig/atomic-write.js'
import {isoSeconds} from '../kubeconfig/credentials.js'

/**
 * The credential cache of `fleet kubeconfig credential`, one 0600 file per cluster under the user's cache directory,
 * so that every kubectl call after the first costs only fleet's start-up. The policy, in one place:
 * - a credential that expires (an exec plugin's with expirationTimestamp) is kept until EXPIRY_MARGIN_SECONDS before
 *   its own expiry;
 * - one that does not say when it expires (a hub Secret's token or client certificate, a user file's token, a plugin's
 *   answer without expirationTimestamp) is kept STATIC_CREDENTIAL_SECONDS: a rotation or revocation on the hub reaches
 *   every laptop within that bound, while a burst of kubectl calls (a script, k9s refreshing) reads the hub once;
 * - the ExecCredential printed always carries expirationTimestamp = the cache entry's end, so client-go asks again
 *   exactly when the cache would fetch again;
 * - a credential a server refused is never handed out again. client-go keeps one credential per exec entry per process
 *   and runs the plugin again before that expiry only after a 401 (plugin/pkg/client/auth/exec/exec.go:
 *   maybeRefreshCreds). So a second call from the same parent process (kubectl) for the same entry before the end means
 *   the first was probably refused: it is dropped, its fingerprint kept as the suspect, and a fresh one is fetched. A
 *   fresh one equal to the suspect is asked about at the server before it is handed out (another client in the same
 *   process, say a library that runs the plugin per client, must not turn a good credential into an error), and
 *   refused there, it is an error, not a loop (docs/decisions.md, "One kubeconfig for every tool").
 */
export const STATIC_CREDENTIAL_SECONDS = 60
export const EXPIRY_MARGIN_SECONDS = 30
const VERSION = 1

export interface CachedCredential {
  token?: string
  clientCertificateData?: string
  clientKeyData?: string
}

interface Entry {
  v: number
  cluster: string
  /** When the entry ends (RFC 3339, whole seconds): the expirationTimestamp printed. */
  expires: string
  credential?: CachedCredential
  /** The parent processes (kubectl) it was handed to. */
  handedTo: number[]
  /** The fingerprint (never the credential) of the one dropped because its parent asked again: probably refused. */
  suspect?: string
}

/** $XDG_CACHE_HOME/fleet/credentials, else ~/.cache/fleet/credentials (a relative XDG_CACHE_HOME is ignored, per the spec). */
export function credentialCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homeDir(env), '.cache')
  return join(base, 'fleet', 'credentials')
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A credential's fingerprint: enough to know it again, nothing to use it with. */
export function credentialFingerprint(c: CachedCredential): string {
  return sha256(JSON.stringify([c.token ?? '', c.clientCertificateData ?? '', c.clientKeyData ?? '']))
}

/** When a fresh credential's entry ends (ms, whole seconds), by the policy above. */
export function cacheEnd(expirationTimestamp: string | undefined, now: number): number {
  const own = expirationTimestamp ? Date.parse(expirationTimestamp) : undefined
  const end = own === undefined ? now + STATIC_CREDENTIAL_SECONDS * 1000 : own - EXPIRY_MARGIN_SECONDS * 1000
  // A plugin's credential that ends within the margin is handed out until its own end, and not kept.
  return Math.floor((end > now ? end : (own ?? now)) / 1000) * 1000
}

export class CredentialCache {
  readonly path: string

  /**
   * `identity`: everything that tells two clusters apart (the pinned provider arguments, which include the fleet
   * configuration and the hub's kubeconfig and context, and the server and CA kubectl is connecting to): two hubs, or
   * two fleet configurations, never share an entry.
   */
  constructor(
    identity: unknown,
    private readonly dir = credentialCacheDir(),
  ) {
    this.path = join(dir, `${sha256(JSON.stringify(identity))}.json`)
  }

  /**
   * The directory is ours and no one else's: a directory (not a link) of this user that group and others cannot write
   * to. Otherwise the cache is not used at all (every call fetches), since another user could plant an entry there.
   */
  private safe?: Promise<boolean>
  private ours(): Promise<boolean> {
    this.safe ??= mkdir(this.dir, {recursive: true, mode: 0o700})
      .then(() => lstat(this.dir))
      .then((st) => st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid()) && (st.mode & 0o022) === 0)
      .catch(() => false)
    return this.safe
  }

  private async read(): Promise<Entry | undefined> {
    if (!(await this.ours())) return undefined
    const text = await readOptional(this.path, 'a credential cache file', `credential cache ${this.path}`).catch(() => undefined)
    if (text === undefined) return undefined
    try {
      const entry = JSON.parse(text) as Entry
      return entry?.v === VERSION && Array.isArray(entry.handedTo) ? entry : undefined
    } catch {
      // A file that is not ours any more (or a future version's): treated as no entry, and replaced.
      return undefined
    }
  }

  private async write(entry: Entry): Promise<void> {
    if (!(await this.ours())) return
    await writeFileAtomic(this.path, JSON.stringify(entry), {mode: 0o600, durable: false})
  }

  /**
   * The cached credential for `caller` (the parent process), with its end; undefined when there is none, it ended, or
   * it was already handed to this caller, which means the server probably refused it (then it is dropped, its
   * fingerprint kept as the suspect).
   */
  async take(caller: number, now = Date.now()): Promise<{credential: CachedCredential; expires: string} | undefined> {
    const entry = await this.read()
    if (!entry?.credential || Date.parse(entry.expires) <= now) return undefined
    if (entry.handedTo.includes(caller)) {
      await this.write({...entry, credential: undefined, handedTo: [], suspect: credentialFingerprint(entry.credential)})
      return undefined
    }
    await this.write({...entry, handedTo: [...entry.handedTo, caller]})
    return {credential: entry.credential, expires: entry.expires}
  }

  /** Whether this is the credential last dropped as probably refused (a provider that hands out the same one again). */
  async suspected(credential: CachedCredential): Promise<boolean> {
    return (await this.read())?.suspect === credentialFingerprint(credential)
  }

  /** Keeps a fresh credential until `expires` (nothing is kept when that is now or past), handed to `caller`. */
  async store(cluster: string, credential: CachedCredential, expires: number, caller: number, now = Date.now()): Promise<void> {
    if (expires <= now) return void (await unlink(this.path).catch(() => undefined))
    await this.write({v: VERSION, cluster, expires: isoSeconds(new Date(expires)), credential, handedTo: [caller]})
  }
}
