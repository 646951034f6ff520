import { randomBytes } from 'node:crypto';
import { mkdir, open, readlink, realpath, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ConfigError } from '../base/errors.js';

/**
 * Writes a file so that readers see either the old content or the new, never a part: a temp file beside the target
 * (same filesystem, so rename is atomic), fsync, rename, then fsync of the directory so the rename survives a crash.
 * The temp file is created with the final mode, so a credential is never readable by others even for a moment.
 * `durable: false` skips both fsyncs, for a cache: still all or nothing (the rename), but a crash may lose the write,
 * which costs only a fetch, while the two fsyncs cost milliseconds on every kubectl call (kubeconfig credential).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number; durable?: boolean; gate?: WriteGate; owner?: { uid: number; gid: number } } = {},
): Promise<void> {
  const durable = options.durable ?? true;
  const mode = options.mode ?? 0o600;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', mode);
  let renamed = false;
  try {
    await handle.writeFile(data);
    // The file replaced keeps its owner (kubectl writes in place, so the owner never changes): before the mode, since
    // a change of owner may clear mode bits. Only root may give a file away; anyone else is refused (EPERM) here,
    // before anything is renamed.
    if (options.owner) await handle.chown(options.owner.uid, options.owner.gid);
    // The mode argument of open is filtered by the umask; set it explicitly.
    await handle.chmod(mode);
    if (durable) await handle.sync();
    await handle.close();
    await options.gate?.ready?.();
    // decide() and the rename's system call are issued in one turn of the event loop: a signal handler (which runs
    // between turns) sees the file either not yet renamed, when decide() throws, or renamed, never in between.
    options.gate?.decide();
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {});
      await unlink(tmp).catch(() => {});
    }
  }
  if (!durable) return options.gate?.written?.();
  const dirHandle = await open(dir, 'r').catch(() => undefined);
  if (dirHandle) {
    await dirHandle.sync().catch(() => {});
    await dirHandle.close();
  }
  await options.gate?.written?.();
}

/**
 * What a command that may be interrupted holds a write to (kubeconfig export): the last moment nothing is written is
 * the rename, so the decision whether to write is taken there. `ready` is awaited once the temp file holds the data
 * (a test hook pauses here); `decide` is called synchronously right before the rename, in the same turn of the event
 * loop, and throws to write nothing (the temp file is removed); `written` is awaited after the rename.
 */
export interface WriteGate {
  ready?(): Promise<void>;
  decide(): void;
  written?(): Promise<void>;
}

/**
 * The file a write to `path` must replace: where its symlinks lead, so that a file kept in a dotfiles repository and
 * linked into ~/.kube stays a link (an atomic rename onto the link itself would replace the link with a file). A link
 * whose destination does not exist yet leads to that destination, which the write creates (as kubectl's plain write
 * through the link would). A path that is no link is itself.
 */
export async function writeTarget(path: string): Promise<string> {
  const real = await realpath(path).catch(() => undefined);
  if (real !== undefined) return real;
  let at = path;
  // The kernel's own bound on a chain of links (ELOOP).
  for (let hops = 0; hops < 40; hops++) {
    const next = await readlink(at).catch(() => undefined);
    if (next === undefined) return at;
    at = resolve(dirname(at), next);
  }
  throw new ConfigError(`${path}: too many levels of symbolic links`);
}

/**
 * Runs `work` holding kubectl's lock on a kubeconfig file: `FILE.lock`, created exclusively, as client-go takes it
 * before it writes (`kubectl config use-context` and friends), so the two never interleave a read and a write. A lock
 * that exists is another writer at work (or one that died): one line naming it, exit 2, and nothing is read or written.
 * `waitMs`: first wait up to that long for the lock to be released, for files only fleet's short writes lock (a kuberc:
 * concurrent `--write-kuberc` runs then all land, one after the other, instead of all but one failing).
 * The file's directory is made first, as client-go makes it (a newcomer has no ~/.kube), but 0700: it will hold
 * credentials.
 */
export async function withKubeconfigLock<T>(
  path: string,
  label: string,
  work: () => Promise<T>,
  options: { waitMs?: number } = {},
): Promise<T> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 }).catch(() => {});
  const lock = `${path}.lock`;
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    const handle = await open(lock, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST' && Date.now() < deadline) return undefined;
      if (error.code === 'EEXIST')
        throw new ConfigError(
          `${label}: ${lock} exists: another program is writing the file (remove the lock if none is)`,
          { cause: error },
        );
      throw new ConfigError(
        `${label}: cannot lock ${lock}: ${error.code === 'EACCES' ? 'permission denied' : error.message}`,
        { cause: error },
      );
    });
    if (handle) {
      await handle.close();
      break;
    }
    // Jittered, so that waiting writers do not retry in step.
    await sleep(5 + Math.random() * 20);
  }
  try {
    return await work();
  } finally {
    await unlink(lock).catch(() => {});
  }
}
