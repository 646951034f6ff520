// The plugin's command class itself: its package exports no path to it, so it is imported by file (bundled either way).
import PluginHelp from '../../node_modules/@oclif/plugin-help/lib/commands/help.js';
import { toConfiguredId } from '@oclif/core';

import { UsageError } from '../base/errors.js';
import { errorOutcome, writeErrorLines } from '../cli/exit-policy.js';
import { closestName } from '../cli/suggest.js';

/**
 * `fleet help [COMMAND]`: the plugin's command, except for a subject that names no command or topic. oclif answers that
 * with ` ›   Error: Command clustrs not found.` and no suggestion; fleet says it as it says every usage error, one line
 * with the closest command or topic, exit 2, as an unknown command gets (hooks/command-not-found.ts). Takes the place of
 * the plugin's command of the same id (scripts/bundle.mjs).
 */
export default class Help extends PluginHelp {
  async run(): Promise<void> {
    try {
      await super.run();
    } catch (error) {
      const subject = /^Command (.+) not found\.$/.exec(error instanceof Error ? error.message : '')?.[1];
      if (subject === undefined) throw error;
      const names = [
        ...this.config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]),
        ...this.config.topics.filter((t) => !t.hidden).map((t) => t.name),
      ];
      const best = closestName(subject, names);
      const hint = best ? `did you mean "${toConfiguredId(best, this.config)}"?` : `run "${this.config.bin} help"`;
      const typed = toConfiguredId(subject, this.config);
      // fleet's one error path (scrubbed, escaped for the terminal), as the base command prints a usage error.
      const usage = new UsageError(`"${typed}" is not a ${this.config.bin} command or topic; ${hint}`);
      writeErrorLines(usage, errorOutcome(usage), false);
      this.exit(usage.exitCode);
    }
  }
}
