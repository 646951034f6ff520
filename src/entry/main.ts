// The bundle's entry (scripts/bundle.mjs bundles this with every command into dist/bundle/). oclif finds commands
// through its explicit strategy: dist/bundle/package.json names COMMANDS below, so it never scans a directory.
// COMMANDS starts empty and a command is put in just before oclif loads it (run() below): a command's module graph
// (ajv, xmlbuilder2, @peculiar/x509, jose, ...) is read and evaluated only when that command runs, and help, which
// oclif answers from the manifest, loads none.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, Config, type Interfaces, execute } from '@oclif/core';

import notFound from '../hooks/command-not-found.js';

export type CommandLoader = () => Promise<Command.Class>;

/** oclif's explicit command table: filled on demand by run(), or all at once by loadAll(). */
export const COMMANDS: Record<string, Command.Class> = {};

export const COMMAND_NOT_FOUND = notFound;

/** Every command loaded: for writing the manifest at build time, never at start-up. */
export async function loadAll(table: Record<string, CommandLoader>): Promise<Record<string, Command.Class>> {
  for (const [id, load] of Object.entries(table)) COMMANDS[id] ??= await load();
  return COMMANDS;
}

let loaded: Config | undefined;

/**
 * Whether this run's help was themed, and where oclif looks for the user's theme: the launcher stores help oclif
 * printed for a later run without oclif only when no theme applied, and serves it only while that file is absent.
 */
export function helpTheme(): { themed: boolean; file: string } | undefined {
  return loaded && { themed: loaded.theme !== undefined, file: resolve(loaded.configDir, 'theme.json') };
}

/** Runs the CLI; `dir` is the bundle's own URL, whose directory holds the package.json and manifest oclif reads. */
export async function run(table: Record<string, CommandLoader>, dir: string): Promise<void> {
  const config = await Config.load(fileURLToPath(dir));
  loaded = config;
  // Every load of a command goes through the root plugin's findCommand(id) with the command's own id, whoever asks
  // (the command line, an alias, plugin-not-found running the command it suggested): the module is imported there.
  const plugin = config.plugins.get(config.name) as Interfaces.Plugin;
  const find = plugin.findCommand.bind(plugin);
  plugin.findCommand = async (id, opts) => {
    if (table[id] && !COMMANDS[id]) COMMANDS[id] = await table[id]();
    return find(id, opts as { must: true });
  };
  await execute({ loadOptions: config });
}
