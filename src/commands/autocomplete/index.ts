// The plugin's command class itself: its package exports no path to it, so it is imported by file (bundled either way).
import PluginAutocomplete from '../../../node_modules/@oclif/plugin-autocomplete/lib/commands/autocomplete/index.js';
import { rewriteCompletionFiles } from '../../cli/completion.js';

/**
 * `fleet autocomplete [SHELL]`: the plugin's command (it writes the completion files, calling its own create directly,
 * and prints the setup instructions), then fleet's bash function and zsh values over its files (src/cli/completion.ts).
 * Takes the place of the plugin's command of the same id (scripts/bundle.mjs).
 */
export default class Autocomplete extends PluginAutocomplete {
  static examples = [
    '<%= config.bin %> autocomplete',
    '<%= config.bin %> autocomplete bash',
    '<%= config.bin %> autocomplete zsh',
    '<%= config.bin %> autocomplete --refresh-cache',
  ];

  async run(): Promise<void> {
    await super.run();
    await rewriteCompletionFiles(this.autocompleteCacheDir, this.cliBin, this.config.commands);
  }
}
