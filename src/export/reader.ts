import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';

import { UsageError } from '../base/errors.js';
import { IN_EXECUTABLE } from '../base/self.js';
import { lookPath } from '../kubeconfig/kuberc.js';

/**
 * fleet-credential (cmd/fleet-credential, a small Go program built beside the executable): it answers an exported
 * entry from fleet's credential cache in a millisecond or two and hands every other call to fleet. kubectl runs the
 * exec entry before every invocation's first request, and Node alone costs ~20 ms before fleet runs a line, which is
 * more than the whole budget issue 30 gives a cache hit (docs/decisions.md, "The cache hit without Node").
 */
export const READER_NAME = 'fleet-credential';

/**
 * The fleet the exec entries run when --command is not given. From npm (`node bin/run.js` behind an npm link or a
 * global install) that is `fleet`, the package's bin name. The single executable is run under whatever name it was
 * installed as: `fleet` in README's install, `kubectl-fleet_cli` as the krew plugin (krew puts that, and no `fleet`, on
 * PATH), or from a download directory by its path. So: the name it is found by on PATH when that is this very file,
 * else its absolute path; an entry naming `fleet` would otherwise call another program, or nothing.
 */
export function defaultFleetCommand(
  env: NodeJS.ProcessEnv = process.env,
  exe = IN_EXECUTABLE ? process.execPath : undefined,
): string {
  if (exe === undefined) return 'fleet';
  const name = basename(exe);
  const found = lookPath(name, env);
  const same = (a: string, b: string) => {
    try {
      return realpathSync(a) === realpathSync(b);
    } catch {
      return false;
    }
  };
  return !found.error && same(found.path, exe) ? name : exe;
}

/** What an exec entry runs: `command ...prefix kubeconfig credential ...`. */
export interface CredentialRunner {
  command: string;
  prefix: string[];
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
export function credentialRunner(
  fleet: string,
  reader: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): CredentialRunner {
  const through = (command: string) => ({ command, prefix: ['--fleet', fleet] });
  if (reader === 'none') return { command: fleet, prefix: [] };
  if (reader !== undefined) {
    if (!isAbsolute(reader)) throw new UsageError(`--credential-reader: ${reader} is not an absolute path (or "none")`);
    const found = lookPath(reader, env);
    if (found.error) throw new UsageError(`--credential-reader: ${found.error}`);
    return through(reader);
  }
  const fleetFile = lookPath(fleet, env);
  if (fleetFile.error) return { command: fleet, prefix: [] };
  const beside = join(dirname(fleetFile.path), READER_NAME);
  if (lookPath(beside, env).error) return { command: fleet, prefix: [] };
  if (fleet.includes('/')) return through(beside);
  const onPath = lookPath(READER_NAME, env);
  return through(!onPath.error && onPath.path === beside ? READER_NAME : beside);
}
