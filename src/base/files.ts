import {readFile} from 'node:fs/promises'

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

/** A file that must exist: its bytes, or a ConfigError worded by `fileError`. */
export async function readRequired(path: string, label: string = path): Promise<Buffer> {
  try {
    return await readFile(path)
  } catch (error) {
    throw fileError(label, error)
  }
}

/**
 * A file that may be absent: its text, or undefined when there is no such file (the caller decides whether that is an
 * error); any other failure is a ConfigError naming the path and `what` the file was meant to be.
 */
export async function readOptional(path: string, what: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw fileError(path, error, what)
  }
}
