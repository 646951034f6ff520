// The plugin's command class itself: its package exports no path to it, so it is imported by file (bundled either way).
import PluginCreate from '../../../node_modules/@oclif/plugin-autocomplete/lib/commands/autocomplete/create.js';
import { rewriteCompletionFiles } from '../../cli/completion.js';

/**
 * `autocomplete:create` (hidden): the plugin writes its setup scripts and completion functions, then fleet replaces the
 * bash function with its own and completes cluster and context flags in zsh (src/cli/completion.ts says why). Takes
 * the place of the plugin's command of the same id (scripts/bundle.mjs).
 */
export default class AutocompleteCreate extends PluginCreate {
  static hidden = true;

  async run(): Promise<void> {
    await super.run();
    await rewriteCompletionFiles(this.autocompleteCacheDir, this.cliBin, this.config.commands);
  }
}
