import { Flags } from '@oclif/core';

import { parseLifetime } from '../../base/duration.js';
import { FleetError, UsageError } from '../../base/errors.js';
import { pluginGlobalFlags } from '../../cli/flags.js';
import { BaseCommand, type BaseFlags } from '../../cli/base-command.js';
import { checkHubFiles, hubFlags } from '../../cli/hubs.js';
import { expirationSeconds } from '../../workload-identity/inputs.js';
import {
  type TokenRequestPlan,
  execCredential,
  parseExecInfo,
  planTokenRequest,
} from '../../workload-identity/plugin.js';
import { requestToken } from '../../workload-identity/token.js';

/**
 * The exec credential plugin (client.authentication.k8s.io/v1): stdout carries only the ExecCredential, written raw
 * (the one other place besides `creds generate --out -` where fleet prints a secret, because that is the protocol);
 * every error is the base command's one line on stderr, scrubbed, and a non-zero exit, which client-go shows.
 */
export default class WiToken extends BaseCommand<typeof WiToken> {
  static enableJsonFlag = false;

  static baseFlags = pluginGlobalFlags;

  static summary = 'Exec credential plugin: a hub ServiceAccount token for the cluster client-go is connecting to.';
  static description = `Run by client-go (kubectl, controllers, Argo CD) as a kubeconfig exec user, not by hand. Reads KUBERNETES_EXEC_INFO (with provideClusterInfo: true: the target's server and the config of its client.authentication.k8s.io/exec extension), requests a token for the hub ServiceAccount with TokenRequest, audience = the target's server URL exactly as written (or the configured audience), and prints only the ExecCredential (token and expirationTimestamp) on stdout. The ServiceAccount comes from --service-account or the cluster's exec config (serviceAccount: NS/NAME; also audience, expirationSeconds). The hub is found by the one hub rule: --hub-kubeconfig/--hub-context, the fleet configuration's hub, the current context of KUBECONFIG or ~/.kube/config, else a Pod's in-cluster configuration (a controller's own ServiceAccount, which needs "create" on serviceaccounts/token). Nothing is stored; the token lives as long as client-go caches it. A kubeconfig user running it (what fleet wi setup --consumer kubeconfig writes): exec: {apiVersion: client.authentication.k8s.io/v1, command: fleet, args: [wi, token, --service-account, NS/NAME], provideClusterInfo: true, interactiveMode: Never}. See docs/workload-identity.md.`;

  static examples = [
    '<%= config.bin %> wi token --service-account flux-system/reconciler',
    '<%= config.bin %> wi token --service-account demo/app --audience https://prod-eu.example:6443 --hub-kubeconfig hub.kubeconfig',
  ];

  static flags = {
    'service-account': Flags.string({
      description: "The hub ServiceAccount, NAMESPACE/NAME (default: serviceAccount in the cluster's exec config).",
    }),
    audience: Flags.string({
      description:
        "Audience to request (default: the cluster's exec config audience, else its server URL exactly as written).",
    }),
    expiration: Flags.string({
      description: "Lifetime to request (default: the cluster's exec config expirationSeconds, else 1h; at least 10m).",
    }),
    ...hubFlags(),
  };

  async run(): Promise<void> {
    const { flags } = this;
    // The hub kubeconfig the user named is checked first: a missing file is what to fix, whatever else is missing.
    await checkHubFiles(flags);
    const plan = tokenOptions(flags, process.env);
    const [hub] = await this.credsHubs(flags);
    const client = await this.fleet.connector.hub(hub.spec);
    const minted = await requestToken(client, plan.serviceAccount, [plan.audience], plan.expirationSeconds).catch(
      (error: unknown) => {
        // Which hub refused matters most when the hub came from a rule rather than a flag.
        if (error instanceof FleetError)
          throw new FleetError(error.kind, `hub ${client.context.contextName}: ${error.message}`, {
            cause: error,
            exitCode: error.exitCode,
          });
        throw error;
      },
    );
    // The ExecCredential kubectl reads: raw on stdout, past render() and its scrubber on purpose (it is the secret asked
    // for); allowed in scripts/check-layers.mjs (OUTPUT_ALLOWED).
    process.stdout.write(execCredential(plan.apiVersion, minted.token, minted.expirationTimestamp));
  }
}

/**
 * What the plugin asks the hub for, from its flags and KUBERNETES_EXEC_INFO (the environment client-go sets). Everything
 * local is checked here, before the hub is contacted: a bad setting never costs a round trip.
 */
export function tokenOptions(flags: BaseFlags<typeof WiToken>, env: NodeJS.ProcessEnv): TokenRequestPlan {
  if (flags.output && flags.output !== 'json')
    throw new UsageError(`-o ${flags.output}: fleet wi token prints the ExecCredential, which is JSON`);
  const info = parseExecInfo(env.KUBERNETES_EXEC_INFO);
  return planTokenRequest(info, {
    serviceAccount: flags['service-account'],
    audience: flags.audience,
    expirationSeconds:
      flags.expiration === undefined ? undefined : expirationSeconds(parseLifetime(flags.expiration, '--expiration')),
  });
}
