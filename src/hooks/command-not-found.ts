import { type Hook, toConfiguredId } from '@oclif/core';

import { canInteract } from '../cli/tty.js';
import { editDistance } from '../base/text.js';

/**
 * Unknown commands. At a terminal, @oclif/plugin-not-found offers the closest command and runs it if confirmed (a "no"
 * exits 2 like any usage error, not the plugin's 127). Anywhere
 * else (CI, pipes, scripts) it must not prompt, so fleet prints one line with the suggestion and exits 2 like every
 * other usage error (the plugin would exit 127 with colour codes in the log).
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  // `fleet whoami`, `fleet verify`: a verb without its topic. The commands that have it are the answer (at a terminal
  // too: the plugin's closest spelling would be a guess where the verb already says which command was meant).
  const verbOf = verbMatches(
    opts.id,
    opts.config.commands.filter((c) => !c.hidden).map((c) => c.id),
  );
  if (verbOf.length > 0) {
    const names = verbOf.map((id) => `"${opts.config.bin} ${toConfiguredId(id, opts.config)}"`);
    const choices = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
    process.stderr.write(
      `error: "${toConfiguredId(opts.id, opts.config)}" is not a ${opts.config.bin} command; did you mean ${choices}?\n`,
    );
    process.exit(2);
  }
  if (canInteract({ machineOutput: opts.argv?.includes('--json') ?? false })) {
    const notFound = (await import('@oclif/plugin-not-found')).default as Hook<'command_not_found'>;
    try {
      return await notFound.call(this, opts);
    } catch (error) {
      // Answering "no" (or Ctrl-C) is the plugin's exit 127; for fleet an unknown command is a usage error, exit 2.
      if ((error as { oclif?: { exit?: number } }).oclif?.exit !== 127) throw error;
      process.stderr.write(
        `error: "${toConfiguredId(opts.id, opts.config)}" is not a ${opts.config.bin} command; run "${opts.config.bin} help"\n`,
      );
      process.exit(2);
    }
  }
  const visible = opts.config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]);
  const best = visible.map((id) => ({ id, d: editDistance(opts.id, id) })).sort((a, b) => a.d - b.d)[0];
  const typed = toConfiguredId(opts.id, opts.config);
  const hint =
    best && best.d <= Math.max(2, Math.floor(opts.id.length / 3))
      ? `; did you mean "${toConfiguredId(best.id, opts.config)}"?`
      : `; run "${opts.config.bin} help"`;
  process.stderr.write(`error: "${typed}" is not a ${opts.config.bin} command${hint}\n`);
  process.exit(2);
};

/** The commands whose last word is `id`, when `id` is a single word (`whoami` → `auth:whoami`). */
export function verbMatches(id: string, commandIds: string[]): string[] {
  if (id === '' || id.includes(':')) return [];
  return commandIds.filter((c) => c.includes(':') && c.split(':').at(-1) === id).sort();
}

export default hook;
