import { Flags } from '@oclif/core';

import { checkReadableFile } from '../base/files.js';
import { type HubChoice, credsHubs } from '../creds/hubs.js';
import type { Fleet } from './fleet-run.js';

/** Where the one hub rule (creds/hubs.ts) looks when neither flag is given, for the flags' help. */
const ONE_HUB =
  'the fleet configuration hub, else the current context of --kubeconfig/--context, KUBECONFIG, ~/.kube/config, in-cluster';

/**
 * --hub-kubeconfig and --hub-context, defined once for every command that reaches a hub by the one hub rule. `purpose`
 * says when the hub is used where not always (" for --secret", ", when --hub is not given"); `defaultHub` replaces the rule's
 * description where the command reads more than one hub (creds list); `exclusive` names flags that pick the hub another
 * way (wi setup's --hub).
 */
export function hubFlags(o: { purpose?: string; defaultHub?: string; exclusive?: string[] } = {}) {
  const purpose = o.purpose ?? '';
  const exclusive = o.exclusive ? { exclusive: o.exclusive } : {};
  return {
    'hub-kubeconfig': Flags.string({
      description: `Hub kubeconfig${purpose} (default: ${o.defaultHub ?? ONE_HUB}).`,
      ...exclusive,
    }),
    'hub-context': Flags.string({ description: `Hub context${purpose}.`, ...exclusive }),
  };
}

/** The values of hubFlags, as every command that declares them has them. */
export interface HubFlagValues {
  'hub-kubeconfig'?: string;
  'hub-context'?: string;
}

/** The global flags the one hub rule reads besides the hub flags (the loading rules of its last step). */
export interface HubGlobals {
  context?: string;
  provider?: string;
  'fleet-config'?: string;
}

/**
 * Each --hub-kubeconfig file (a ":"-list): missing, a directory or unreadable is one line naming the flag and the path.
 * commandHubs checks them first; a command with other inputs to check (wi token's KUBERNETES_EXEC_INFO) calls this
 * before them, so the file the user named is the first thing it speaks of.
 */
export async function checkHubFiles(f: HubFlagValues): Promise<void> {
  for (const file of f['hub-kubeconfig']?.split(':').filter(Boolean) ?? []) {
    await checkReadableFile(file, `--hub-kubeconfig ${file}`, 'a kubeconfig file');
  }
}

/**
 * The hubs of the one hub rule (creds/hubs.ts credsHubs) for a command's flags, each --hub-kubeconfig file checked
 * first (checkHubFiles), before any hub is asked.
 */
export async function commandHubs(fleet: Fleet, globals: HubGlobals, f: HubFlagValues): Promise<HubChoice[]> {
  await checkHubFiles(f);
  return credsHubs({
    hubKubeconfig: f['hub-kubeconfig'],
    hubContext: f['hub-context'],
    kubeconfig: fleet.kubeconfigPaths,
    context: globals.context,
    provider: globals.provider,
    fleetConfig: globals['fleet-config'],
    trust: fleet.trust,
  });
}
