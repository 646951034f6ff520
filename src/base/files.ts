import { constants, type Stats } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

import { ConfigError, Interrupted } from './errors.js';
import { MAX_CONFIG_FILE_BYTES, MAX_NAMED_FILE_BYTES } from './limits.js';

/** A file fleet refuses to read for what it is (not a regular file, too large); its message is the problem itself. */
class RefusedFile extends Error {}

const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;
const tooLarge = (limit: number) => new RefusedFile(`larger than ${mebibytes(limit)}`);
const isDirectory = () => Object.assign(new Error('is a directory'), { code: 'EISDIR' });

function refuseKind(info: Stats): void {
  if (info.isDirectory()) throw isDirectory();
  if (!info.isFile()) throw new RefusedFile('not a regular file');
}

/**
 * The one way fleet reads a file someone named: at most `limit` bytes, read from the descriptor it checked, so that
 * /dev/zero or a file that grows ends with one line instead of eating memory. With `regularOnly` anything but a regular
 * file is refused, and nothing can block: the path is looked at before it is opened (opening a device may do something
 * by itself), and opened O_NONBLOCK, so a FIFO swapped in since cannot hold the open (nor one of libuv's pool threads,
 * which process.exit waits for at teardown); the fstat of what was opened is the check that counts. Without it (a
 * kubeconfig, which people pass as `<(cmd)`) a pipe is read as it comes, up to the limit.
 */
async function readBounded(path: string, limit: number, regularOnly: boolean): Promise<Buffer> {
  if (regularOnly) refuseKind(await stat(path));
  const handle = await open(path, regularOnly ? constants.O_RDONLY | constants.O_NONBLOCK : constants.O_RDONLY);
  try {
    const info = await handle.stat();
    if (regularOnly) refuseKind(info);
    else if (info.isDirectory()) throw isDirectory();
    if (info.isFile() && info.size > limit) throw tooLarge(limit);
    // One byte past the limit tells a file that grew since the fstat (or a pipe that goes on) from one that fits.
    const chunk = info.isFile() ? Math.min(info.size, limit) + 1 : 64 * 1024;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(chunk, limit + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      chunks.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) throw tooLarge(limit);
      // A short read of a regular file is its end: no second read to be told so (one call less per CA file).
      if (info.isFile() && bytesRead < buffer.length) break;
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/**
 * A file a kubeconfig names (certificate-authority, client-certificate, client-key, tokenFile, the CA an exec plugin
 * is given): its bytes if it is a regular file of at most MAX_NAMED_FILE_BYTES (1 MiB). The error is left for
 * `fileProblem` / `fileError` to word (`not a regular file`, `larger than 1 MiB`, `file not found`), so callers that
 * collect problems (readiness, describeCredentials) and those that stop (`requireNamedFile`) agree.
 */
export function readNamedFile(path: string): Promise<Buffer> {
  return readBounded(path, MAX_NAMED_FILE_BYTES, true);
}

/** `readNamedFile`, or a ConfigError `<label>: <problem>` (`certificate-authority /dev/zero: not a regular file`). */
export async function requireNamedFile(path: string, label: string): Promise<Buffer> {
  try {
    return await readNamedFile(path);
  } catch (error) {
    throw fileError(label, error);
  }
}

/**
 * The one wording for a file fleet could not read: `<what> <path>: file not found` (or `permission denied`,
 * `is a directory, not <what>`, or the system's own message). Every reader of a user-named file goes through here so
 * the messages agree wherever the path came from (a kubeconfig, a fleet configuration, a flag).
 */
export function fileProblem(error: unknown, what?: string): string {
  if (error instanceof RefusedFile) return error.message;
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'file not found';
  if (e.code === 'EACCES') return 'permission denied';
  if (e.code === 'EISDIR') return what ? `is a directory, not ${what}` : 'is a directory';
  return `cannot read: ${e.message}`;
}

/** `certificate-authority /x: file not found`: the label names the field (or the kind of file) and the path. */
export function fileError(label: string, error: unknown, what?: string): ConfigError {
  return new ConfigError(`${label}: ${fileProblem(error, what)}`, { cause: error });
}

/**
 * A file that must exist: its bytes, or a ConfigError worded by `fileError` (`what` names it in "is a directory, not
 * ..."). At most MAX_CONFIG_FILE_BYTES (64 MiB); a pipe is read as it comes.
 */
export async function readRequired(path: string, label: string = path, what?: string): Promise<Buffer> {
  try {
    return await readBounded(path, MAX_CONFIG_FILE_BYTES, false);
  } catch (error) {
    throw fileError(label, error, what);
  }
}

/**
 * A file a flag names that fleet will read later: checked now, before any cluster is touched, with the wording of
 * `fileError` (missing, a directory, unreadable). `label` is the flag and the path: `--file ./a.kubeconfig`.
 */
export async function checkReadableFile(
  path: string,
  label: string,
  what?: string,
  options: { missingOk?: boolean } = {},
): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (options.missingOk && error.code === 'ENOENT') return undefined;
    throw fileError(label, error, what);
  });
  if (!info) return;
  if (info.isDirectory()) throw fileError(label, Object.assign(new Error('is a directory'), { code: 'EISDIR' }), what);
  await access(path, constants.R_OK).catch((error: unknown) => {
    throw fileError(label, error, what);
  });
}

/**
 * A file a flag names that fleet will write (atomically: a temporary file beside it, then a rename), checked before any
 * cluster is touched so that a run never does its work and then loses the result: its directory exists and is
 * writable, and the path is not itself a directory. One line naming the flag and the path.
 */
export async function checkWritableFile(path: string, label: string, what = 'a file'): Promise<void> {
  const dir = dirname(path);
  const parent = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR')
      throw new ConfigError(`${label}: directory ${dir} does not exist`, { cause: error });
    throw fileError(label, error);
  });
  if (!parent.isDirectory()) throw new ConfigError(`${label}: ${dir} is not a directory`);
  const target = await stat(path).catch(() => undefined);
  if (target?.isDirectory()) throw new ConfigError(`${label}: is a directory, not ${what}`);
  await access(dir, constants.W_OK | constants.X_OK).catch((error: unknown) => {
    throw new ConfigError(`${label}: directory ${dir} is not writable (${fileProblem(error)})`, { cause: error });
  });
}

/** The wording of a failed write to a path a flag names (the check above came first; this covers what changed since). */
export function writeError(label: string, path: string, error: unknown, what = 'a file'): ConfigError | Interrupted {
  // A write an interrupt stopped before its rename (WriteGate) did not fail: it is the interrupt, as it was thrown.
  if (error instanceof Interrupted) return error;
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'EISDIR') return new ConfigError(`${label}: is a directory, not ${what}`, { cause: error });
  if (e.code === 'ENOENT' || e.code === 'ENOTDIR')
    return new ConfigError(`${label}: directory ${dirname(path)} does not exist`, { cause: error });
  if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS')
    return new ConfigError(`${label}: permission denied`, { cause: error });
  return new ConfigError(`${label}: cannot write: ${e.message}`, { cause: error });
}

/**
 * A file that may be absent (a kubeconfig, a fleet configuration): its text, or undefined when there is no such file
 * (the caller decides whether that is an error); at most MAX_CONFIG_FILE_BYTES (64 MiB), a pipe read as it comes. Any
 * other failure is a ConfigError worded by `fileError` with `label` (the path, or the flag and the path)
 * and `what` the file was meant to be.
 */
export async function readOptional(path: string, what: string, label: string = path): Promise<string | undefined> {
  return (await readOptionalBytes(path, what, label))?.toString('utf8');
}

/**
 * readOptional for a file that must be a regular one (never blocks: a FIFO, a device or a socket is refused in one
 * line): a kubeconfig fleet reads only to decide something, which a pipe's writer must not be able to hold or feed
 * (exec-view.ts: the files a client read before it ran the plugin).
 */
export async function readOptionalRegular(
  path: string,
  what: string,
  label: string = path,
): Promise<string | undefined> {
  try {
    return (await readBounded(path, MAX_CONFIG_FILE_BYTES, true)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError(label, error, what);
  }
}

/** readOptional's bytes, undecoded: for a caller that must see what UTF-8 decoding would hide (a UTF-16 BOM). */
export async function readOptionalBytes(path: string, what: string, label: string = path): Promise<Buffer | undefined> {
  try {
    return await readBounded(path, MAX_CONFIG_FILE_BYTES, false);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError(label, error, what);
  }
}
