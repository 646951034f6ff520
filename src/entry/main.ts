// The bundle's entry (scripts/bundle.mjs bundles this with every command into dist/bundle/cli.mjs). oclif finds
// commands through its explicit strategy: dist/bundle/package.json names COMMANDS below, so it never scans a
// directory. COMMANDS starts empty and the init hook (PRELOAD) loads only the command this run needs: a bundled
// command's module graph (ajv, xmlbuilder2, @peculiar/x509, jose, ...) is evaluated only when that command runs, and
// help, which oclif answers from the manifest, loads none.
import {type Command, type Hook, execute} from '@oclif/core'

import notFound from '../hooks/command-not-found.js'

export type CommandLoader = () => Promise<Command.Class>

/** oclif's explicit command table: filled by PRELOAD (or loadAll) before oclif looks a command up. */
export const COMMANDS: Record<string, Command.Class> = {}
let loaders: Record<string, CommandLoader> = {}

/** The init hook: runs after oclif has read the manifest and before it loads the command named by the arguments. */
export const PRELOAD: Hook<'init'> = async function ({id}) {
  if (!id) return
  // An alias resolves to the command's own id, which is what oclif asks COMMANDS for.
  const key = this.config.findCommand(id)?.id ?? id
  if (loaders[key] && !COMMANDS[key]) COMMANDS[key] = await loaders[key]()
}

export const COMMAND_NOT_FOUND = notFound

/** Every command loaded: for writing the manifest at build time, never at start-up. */
export async function loadAll(table: Record<string, CommandLoader>): Promise<Record<string, Command.Class>> {
  loaders = table
  for (const [id, load] of Object.entries(table)) COMMANDS[id] ??= await load()
  return COMMANDS
}

/** Runs the CLI; `dir` is the bundle's own URL, whose directory holds the package.json and manifest oclif reads. */
export async function run(table: Record<string, CommandLoader>, dir: string): Promise<void> {
  loaders = table
  await execute({dir})
}
