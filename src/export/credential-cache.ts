import { constants } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';

import { homeDir } from '../base/paths.js';
import { writeFileAtomic } from '../kubeconfig/atomic-write.js';
import { isoSeconds } from '../kubeconfig/credentials.js';
import { parseJson } from '../base/json.js';

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
 *
 * The reader rule, the same in cmd/fleet-credential/cache (Go) byte for byte, and the one way an entry is read
 * (docs/decisions.md, "A credential for the named server only; one cache rule"):
 * - opened without following a link and without blocking (O_NOFOLLOW | O_NONBLOCK), then fstat: a regular file of at
 *   most ENTRY_MAX_BYTES, read to at most that many bytes; anything else is no entry;
 * - valid UTF-8, one JSON object that is exactly the text this module writes for it (canonicalEntry: these keys, this
 *   order, no spaces, JSON.stringify's escapes, no trailing byte), with every field of its type and shape: so unknown,
 *   miscased or repeated keys, other spellings of a number or string, and another version are all no entry;
 * - every handover is a file of its own, `<entry>.handed-<id>-<pid>`, made with O_CREAT | O_EXCL: the one atomic step
 *   that both records the handover and tells whether this parent had it before, so concurrent readers (fleet and
 *   fleet-credential alike) lose none. A fresh entry gets a new random id, so the old handovers no longer count.
 */
export const STATIC_CREDENTIAL_SECONDS = 60;
export const EXPIRY_MARGIN_SECONDS = 30;
/** The size bound of an entry (a token, or a certificate and key, is a few KiB); fleet-credential's is the same. */
export const ENTRY_MAX_BYTES = 1024 * 1024;
export const ENTRY_VERSION = 2;
/** How long a failure said to one kubectl process is not said to it again (firstFailure). */
export const FAILURE_QUIET_MS = 60_000;

export interface CachedCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
}

export interface Entry {
  v: number;
  cluster: string;
  /** When the entry ends (RFC 3339, whole seconds): the expirationTimestamp printed. */
  expires: string;
  /** Random, per stored credential: its handovers are the files `<entry>.handed-<id>-<pid>`. */
  id: string;
  credential?: CachedCredential;
  /** The fingerprint (never the credential) of the one dropped because its parent asked again: probably refused. */
  suspect?: string;
}

/** $XDG_CACHE_HOME/fleet/credentials, else ~/.cache/fleet/credentials (a relative XDG_CACHE_HOME is ignored, per the spec). */
export function credentialCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homeDir(env), '.cache');
  return join(base, 'fleet', 'credentials');
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A credential's fingerprint: enough to know it again, nothing to use it with. */
export function credentialFingerprint(c: CachedCredential): string {
  return sha256(JSON.stringify([c.token ?? '', c.clientCertificateData ?? '', c.clientKeyData ?? '']));
}

/** When a fresh credential's entry ends (ms, whole seconds), by the policy above. */
export function cacheEnd(expirationTimestamp: string | undefined, now: number): number {
  const own = expirationTimestamp ? Date.parse(expirationTimestamp) : undefined;
  const end = own === undefined ? now + STATIC_CREDENTIAL_SECONDS * 1000 : own - EXPIRY_MARGIN_SECONDS * 1000;
  // A plugin's credential that ends within the margin is handed out until its own end, and not kept.
  return Math.floor((end > now ? end : (own ?? now)) / 1000) * 1000;
}

const CREDENTIAL_KEYS = ['token', 'clientCertificateData', 'clientKeyData'] as const;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;
/** No lone surrogate (with the u flag a pair is one code point, so only a lone half is in \p{Cs}): such a string has no UTF-8. */
const wellFormed = (s: string) => !/\p{Cs}/u.test(s);
const SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** An RFC 3339 time in whole seconds, UTC, that names a real instant (no Feb 30, no 24:00, no leap second). */
const validExpires = (s: string) =>
  SECONDS.test(s) && !Number.isNaN(Date.parse(s)) && new Date(Date.parse(s)).toISOString() === `${s.slice(0, -1)}.000Z`;

/** The only credential an entry holds: of the three fields at least one, each a non-empty string without lone surrogates. */
function credentialOf(c: CachedCredential): CachedCredential | undefined {
  const out: CachedCredential = {};
  for (const key of CREDENTIAL_KEYS) {
    const value = c[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '' || !wellFormed(value)) return undefined;
    out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The text of an entry: the one spelling either reader accepts. */
export function canonicalEntry(e: Entry): string {
  return JSON.stringify({
    v: e.v,
    cluster: e.cluster,
    expires: e.expires,
    id: e.id,
    ...(e.credential ? { credential: credentialOf(e.credential) } : {}),
    ...(e.suspect === undefined ? {} : { suspect: e.suspect }),
  });
}

/** An entry's bytes by the reader rule (above), or undefined. */
export function decodeEntry(bytes: Uint8Array): Entry | undefined {
  let value: unknown;
  let text: string;
  try {
    // fatal: invalid UTF-8 is no entry; ignoreBOM: a BOM is kept, and then not JSON.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    value = parseJson(text);
  } catch {
    return undefined;
  }
  const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!object(value)) return undefined;
  const { v, cluster, expires, id, credential, suspect } = value;
  if (v !== ENTRY_VERSION || typeof cluster !== 'string' || !wellFormed(cluster)) return undefined;
  if (typeof expires !== 'string' || !validExpires(expires) || typeof id !== 'string' || !HEX32.test(id))
    return undefined;
  if (suspect !== undefined && (typeof suspect !== 'string' || !HEX64.test(suspect))) return undefined;
  if (credential !== undefined && (!object(credential) || !credentialOf(credential))) return undefined;
  const entry: Entry = {
    v,
    cluster,
    expires,
    id,
    ...(credential ? { credential: credential } : {}),
    ...(suspect === undefined ? {} : { suspect }),
  };
  return canonicalEntry(entry) === text ? entry : undefined;
}

/**
 * An entry file by the reader rule: never through a link, never waiting on a FIFO or device, never more than
 * ENTRY_MAX_BYTES read. Undefined for anything that is not such an entry (missing included).
 */
export async function readEntryFile(path: string): Promise<Entry | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > ENTRY_MAX_BYTES) return undefined;
    // Not zero-filled: only the bytes read are looked at.
    const buffer = Buffer.allocUnsafe(ENTRY_MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > ENTRY_MAX_BYTES) return undefined;
    }
    return decodeEntry(buffer.subarray(0, length));
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export class CredentialCache {
  readonly path: string;

  /**
   * `identity`: everything that tells two clusters apart (the pinned provider arguments, which include the fleet
   * configuration and the hub's kubeconfig and context, and the server, CA and TLS settings kubectl is connecting with):
   * two hubs, two fleet configurations, or two servers, never share an entry.
   */
  constructor(
    identity: unknown,
    private readonly dir = credentialCacheDir(),
  ) {
    this.path = join(dir, `${sha256(JSON.stringify(identity))}.json`);
  }

  /** The file that records the handover of entry `id` to `caller`. */
  private handed(id: string, caller: number): string {
    return join(dirname(this.path), `${basename(this.path, '.json')}.handed-${id}-${caller}`);
  }

  /**
   * The directory is ours and no one else's: a directory (not a link) of this user that group and others cannot write
   * to. Otherwise the cache is not used at all (every call fetches), since another user could plant an entry there.
   */
  private safe?: Promise<boolean>;
  private ours(): Promise<boolean> {
    this.safe ??= mkdir(this.dir, { recursive: true, mode: 0o700 })
      .then(() => lstat(this.dir))
      .then(
        (st) =>
          st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid()) && (st.mode & 0o022) === 0,
      )
      .catch(() => false);
    return this.safe;
  }

  private async read(): Promise<Entry | undefined> {
    return (await this.ours()) ? readEntryFile(this.path) : undefined;
  }

  /**
   * Replaces the entry, unless a directory is at its path: a directory may hold what is not fleet's, and a rename cannot
   * replace it anyway, so it is left where it is and the credential is handed out uncached, a miss every time, as with a
   * cache directory that is not ours. Before, the rename onto a directory failed (EISDIR) and so did every
   * `kubeconfig credential`, fleet-credential's too (it hands the miss over). Anything else (a stale entry, a link, a
   * FIFO or socket, which hold no data and would hang or fail a reader) is replaced by the rename, which follows nothing.
   */
  private async write(entry: Entry): Promise<void> {
    if (!(await this.ours())) return;
    const st = await lstat(this.path).catch(() => undefined);
    if (st?.isDirectory()) return;
    await writeFileAtomic(this.path, canonicalEntry(entry), { mode: 0o600, durable: false }).catch(
      (error: NodeJS.ErrnoException) => {
        // A directory made there since the look above: the same miss.
        if (error.code !== 'EISDIR' && error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      },
    );
  }

  /**
   * Records the handover of entry `id` to `caller`: true when this is the first (the file did not exist), false when
   * it was handed to this caller before; an error (a directory that will not take the file) is thrown.
   */
  private async record(id: string, caller: number): Promise<boolean> {
    try {
      await (
        await open(
          this.handed(id, caller),
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o600,
        )
      ).close();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  }

  /**
   * The cached credential of `cluster` for `caller` (the parent process), with its end; undefined when there is none,
   * it ended, or it was already handed to this caller, which means the server probably refused it (then it is dropped,
   * its fingerprint kept as the suspect). Handed out only once the handover is recorded.
   */
  async take(
    cluster: string,
    caller: number,
    now = Date.now(),
  ): Promise<{ credential: CachedCredential; expires: string } | undefined> {
    const entry = await this.read();
    if (!entry?.credential || entry.cluster !== cluster || Date.parse(entry.expires) <= now) return undefined;
    let first: boolean;
    try {
      first = await this.record(entry.id, caller);
    } catch {
      return undefined;
    }
    if (!first) {
      await this.write({
        v: entry.v,
        cluster: entry.cluster,
        expires: entry.expires,
        id: entry.id,
        suspect: credentialFingerprint(entry.credential),
      });
      return undefined;
    }
    return { credential: entry.credential, expires: entry.expires };
  }

  /**
   * Whether this failure is the first `caller` (the kubectl process) meets for this entry within FAILURE_QUIET_MS:
   * kubectl runs the plugin again after a failure (discovery, then the request itself; k9s on every refresh), and
   * client-go passes the plugin's stderr through each time, so the same line was printed two or more times, in k9s
   * over its screen. The first failure says it; a repeat for the same caller exits as it did, silently. Recorded as
   * `<entry>.failed-<caller>`, made with O_EXCL; an older record counts as none (a pid used again).
   */
  async firstFailure(caller: number, now = Date.now()): Promise<boolean> {
    if (!(await this.ours())) return true;
    // A revoked context's entry never gets a credential again (which clears its records): records past the quiet time
    // are swept here, or every kubectl process that ever met the failure would leave one file behind.
    await this.sweepFailures(now);
    const file = join(dirname(this.path), `${basename(this.path, '.json')}.failed-${caller}`);
    const create = () =>
      open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600).then((h) =>
        h.close(),
      );
    try {
      await create();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true;
    }
    const st = await lstat(file).catch(() => undefined);
    if (st && now - st.mtimeMs < FAILURE_QUIET_MS) return false;
    await unlink(file).catch(() => undefined);
    await create().catch(() => undefined);
    return true;
  }

  /** Removes this entry's failure records older than FAILURE_QUIET_MS (they count as none anyway). */
  private async sweepFailures(now: number): Promise<void> {
    const prefix = `${basename(this.path, '.json')}.failed-`;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(
      names
        .filter((n) => n.startsWith(prefix))
        .map(async (n) => {
          const st = await lstat(join(this.dir, n)).catch(() => undefined);
          if (st && now - st.mtimeMs >= FAILURE_QUIET_MS) await unlink(join(this.dir, n)).catch(() => undefined);
        }),
    );
  }

  /** Whether this is the credential last dropped as probably refused (a provider that hands out the same one again). */
  async suspected(credential: CachedCredential): Promise<boolean> {
    return (await this.read())?.suspect === credentialFingerprint(credential);
  }

  /**
   * Keeps a fresh credential until `expires` (nothing is kept when that is now or past, or it is not one an entry can
   * hold), handed to `caller`; the handovers of the entry it replaces are removed.
   */
  async store(
    cluster: string,
    credential: CachedCredential,
    expires: number,
    caller: number,
    now = Date.now(),
  ): Promise<void> {
    const held = credentialOf(credential);
    const entry: Entry = {
      v: ENTRY_VERSION,
      cluster,
      expires: isoSeconds(new Date(expires)),
      id: randomBytes(16).toString('hex'),
      credential: held,
    };
    if (
      expires <= now ||
      !held ||
      !wellFormed(cluster) ||
      !validExpires(entry.expires) ||
      Buffer.byteLength(canonicalEntry(entry)) > ENTRY_MAX_BYTES
    ) {
      return void (await unlink(this.path).catch(() => undefined));
    }
    if (!(await this.ours())) return;
    // Recorded before the entry is in place: a reader that finds the new entry also finds its first handover. Not
    // recorded, not kept (the credential is still handed out, uncached).
    if (!(await this.record(entry.id, caller).catch(() => false))) return;
    await this.write(entry);
    const prefix = `${basename(this.path, '.json')}.handed-`;
    const own = `${prefix}${entry.id}-`;
    // A credential fetched again ends the failures recorded before it: the next one is said again.
    const failed = `${basename(this.path, '.json')}.failed-`;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(
      names
        .filter((n) => (n.startsWith(prefix) && !n.startsWith(own)) || n.startsWith(failed))
        .map((n) => unlink(join(this.dir, n)).catch(() => undefined)),
    );
  }
}
