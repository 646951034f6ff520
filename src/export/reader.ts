import {dirname, isAbsolute, join} from 'node:path'

import {UsageError} from '../base/errors.js'
import {lookPath} from '../kubeconfig/kuberc.js'

/**
 * fleet-credential (cmd/fleet-credential, a small Go program built beside the executable): it answers an exported
 * entry from fleet's credential cache in a millisecond or two and hands every other call to fleet. kubectl runs the
 * exec entry before every invocation's first request, and Node alone costs ~20 ms before fleet runs a line, which is
 * more than the whole budget issue 30 gives a cache hit (docs/decisions.md, "The cache hit without Node").
 */
export const READER_NAME = 'fleet-credential'

/** What an exec entry runs: `command ...prefix kubeconfig credential ...`. */
export interface CredentialRunner {
  command: string
  prefix: string[]
}

/**
 * The exec entries' program, from --command (fleet) and --credential-reader:
 * - `none`: fleet itself;
 * - an absolute path: that reader, which must be an executable file;
 * - unset: fleet-credential when it is installed beside the fleet the entries run (the same directory), named the way
 *   --command is (a bare name when both are found on PATH there, else the absolute path); otherwise fleet itself.
 * The reader is given fleet's command, which it runs in its place on every call it does not answer. A reader from
 * another release reads no entry it does not know (the cache file carries its format's version) and hands it to fleet.
 */
export function credentialRunner(fleet: string, reader: string | undefined, env: NodeJS.ProcessEnv = process.env): CredentialRunner {
  const through = (command: string) => ({command, prefix: ['--fleet', fleet]})
  if (reader === 'none') return {command: fleet, prefix: []}
  if (reader !== undefined) {
    if (!isAbsolute(reader)) throw new UsageError(`--credential-reader: ${reader} is not an absolute path (or "none")`)
    const found = lookPath(reader, env)
    if (found.error) throw new UsageError(`--credential-reader: ${found.error}`)
    return through(reader)
  }
  const fleetFile = lookPath(fleet, env)
  if (fleetFile.error) return {command: fleet, prefix: []}
  const beside = join(dirname(fleetFile.path), READER_NAME)
  if (lookPath(beside, env).error) return {command: fleet, prefix: []}
  if (fleet.includes('/')) return through(beside)
  const onPath = lookPath(READER_NAME, env)
  return through(!onPath.error && onPath.path === beside ? READER_NAME : beside)
}
