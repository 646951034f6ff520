import {constants} from 'node:fs'
import {access, readFile, stat} from 'node:fs/promises'
import {dirname} from 'node:path'

import {ConfigError} from './errors.js'

/**
 * The one wording for a file fleet could not read: `<what> <path>: file not found` (or `permission denied`,
 * `is a directory, not <what>`, or the system's own message). Every reader of a user-named file goes through here so
 * the messages agree wherever the path came from (a kubeconfig, a fleet configuration, a flag).
 */
export function fileProblem(error: unknown, what?: string): string {
  const e = error as NodeJS.ErrnoException
  if (e.code === 'ENOENT') return 'file not found'
  if (e.code === 'EACCES') return 'permission denied'
  if (e.code === 'EISDIR') return what ? `is a directory, not ${what}` : 'is a directory'
  return `cannot read: ${e.message}`
}

/** `certificate-authority /x: file not found`: the label names the field (or the kind of file) and the path. */
export function fileError(label: string, error: unknown, what?: string): ConfigError {
  return new ConfigError(`${label}: ${fileProblem(error, what)}`, {cause: error})
}

/** A file that must exist: its bytes, or a ConfigError worded by `fileError` (`what` names it in "is a directory, not ..."). */
export async function readRequired(path: string, label: string = path, what?: string): Promise<Buffer> {
  try {
    return await readFile(path)
  } catch (error) {
    throw fileError(label, error, what)
  }
}

/**
 * A file a flag names that fleet will read later: checked now, before any cluster is touched, with the wording of
 * `fileError` (missing, a directory, unreadable). `label` is the flag and the path: `--file ./a.kubeconfig`.
 */
export async function checkReadableFile(path: string, label: string, what?: string, options: {missingOk?: boolean} = {}): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (options.missingOk && error.code === 'ENOENT') return undefined
    throw fileError(label, error, what)
  })
  if (!info) return
  if (info.isDirectory()) throw fileError(label, Object.assign(new Error('is a directory'), {code: 'EISDIR'}), what)
  await access(path, constants.R_OK).catch((error: unknown) => {
    throw fileError(label, error, what)
  })
}

/**
 * A file a flag names that fleet will write (atomically: a temporary file beside it, then a rename), checked before any
 * cluster is touched so that a run never does its work and then loses the result: its directory exists and is
 * writable, and the path is not itself a directory. One line naming the flag and the path.
 */
export async function checkWritableFile(path: string, label: string, what = 'a file'): Promise<void> {
  const dir = dirname(path)
  const parent = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new ConfigError(`${label}: directory ${dir} does not exist`, {cause: error})
    throw fileError(label, error)
  })
  if (!parent.isDirectory()) throw new ConfigError(`${label}: ${dir} is not a directory`)
  const target = await stat(path).catch(() => undefined)
  if (target?.isDirectory()) throw new ConfigError(`${label}: is a directory, not ${what}`)
  await access(dir, constants.W_OK | constants.X_OK).catch((error: unknown) => {
    throw new ConfigError(`${label}: directory ${dir} is not writable (${fileProblem(error)})`, {cause: error})
  })
}

/** The wording of a failed write to a path a flag names (the check above came first; this covers what changed since). */
export function writeError(label: string, path: string, error: unknown, what = 'a file'): ConfigError {
  const e = error as NodeJS.ErrnoException
  if (e.code === 'EISDIR') return new ConfigError(`${label}: is a directory, not ${what}`, {cause: error})
  if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return new ConfigError(`${label}: directory ${dirname(path)} does not exist`, {cause: error})
  if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS') return new ConfigError(`${label}: permission denied`, {cause: error})
  return new ConfigError(`${label}: cannot write: ${e.message}`, {cause: error})
}

/**
 * A file that may be absent: its text, or undefined when there is no such file (the caller decides whether that is an
 * error); any other failure is a ConfigError worded by `fileError` with `label` (the path, or the flag and the path)
 * and `what` the file was meant to be.
 */
export async function readOptional(path: string, what: string, label: string = path): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw fileError(label, error, what)
  }
}
