import { isSea } from 'node:sea';

/**
 * How to run this fleet again, for the programs fleet starts or writes down (its spawner, the exec entry of a
 * credential): run by Node (`node bin/run.js`), process.execPath is Node and process.argv[1] fleet's script; as its
 * single executable (scripts/executable.mjs), process.execPath is fleet itself and Node reads no options or script from
 * its arguments, which all go to fleet.
 */
export const IN_EXECUTABLE = isSea();

/** The command and the first arguments that run fleet: [node, bin/run.js] or [the executable]. */
export function fleetCommand(): { command: string; args: string[] } {
  return IN_EXECUTABLE
    ? { command: process.execPath, args: [] }
    : { command: process.execPath, args: [process.argv[1]] };
}
