import { Args } from '@oclif/core';

import { BaseCommand } from '../../cli/base-command.js';

/**
 * Hidden: the values the completion scripts offer (src/cli/completion.ts), one per line: `clusters` for -c/--cluster,
 * --hub and --target (each cluster's name, and its short name when no other cluster has it), `contexts` for --context
 * (the kubeconfig contexts of the clusters fleet lists). Never an error on stderr: a shell is completing.
 */
export default class AutocompleteValues extends BaseCommand<typeof AutocompleteValues> {
  static hidden = true;
  static summary = 'Values for shell completion: cluster names or kubeconfig contexts.';
  static args = { what: Args.string({ options: ['clusters', 'contexts'], required: true }) };

  async run(): Promise<void> {
    let refs;
    try {
      refs = await this.fleet.provider.list();
    } catch {
      return;
    }
    const values = new Set<string>();
    if (this.args.what === 'contexts') {
      for (const r of refs) if (r.source.context) values.add(r.source.context);
    } else {
      const aliasCount = new Map<string, number>();
      for (const r of refs) for (const a of r.aliases) aliasCount.set(a, (aliasCount.get(a) ?? 0) + 1);
      for (const r of refs) {
        values.add(r.name);
        for (const a of r.aliases) if (aliasCount.get(a) === 1) values.add(a);
      }
    }
    for (const v of [...values].sort()) this.log(v);
  }
}
