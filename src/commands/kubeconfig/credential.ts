import { Flags } from '@oclif/core';

import { FleetError, UsageError } from '../../base/errors.js';
import { pluginGlobalFlags } from '../../cli/flags.js';
import { BaseCommand } from '../../cli/base-command.js';
import { CredentialCache, cacheEnd } from '../../export/credential-cache.js';
import { execCredentialJson } from '../../export/exec-info.js';
import { execRequest } from '../../export/exec-view.js';
import { credentialIdentity } from '../../export/credential-fast.js';
import type { Fetched } from '../../export/credential.js';
import { isoSeconds } from '../../kubeconfig/credentials.js';

/**
 * The exec credential plugin behind every context `fleet kubeconfig export` writes: stdout carries only the
 * ExecCredential, raw (the protocol; allowed in scripts/check-layers.mjs as `wi token` is); every error is the base
 * command's one scrubbed line on stderr and a non-zero exit, which client-go shows. It is on kubectl's hot path, so a
 * cached credential is answered from the cache file alone: the providers, the connector and the HTTP client are loaded
 * only when the cache has nothing to give.
 */
export default class KubeconfigCredential extends BaseCommand<typeof KubeconfigCredential> {
  static enableJsonFlag = false;

  static baseFlags = {
    ...pluginGlobalFlags,
    // Only the file the exec entry names: FLEET_CONFIG, ./fleet.yaml or the user's config dir where kubectl happens to run
    // must not change which cluster (or hub) answers.
    'fleet-config': Flags.string({
      description: 'The fleet configuration the export used (no other is looked for).',
      helpGroup: 'GLOBAL',
    }),
  };

  static summary =
    'Exec credential plugin for the contexts fleet kubeconfig export writes (run by kubectl, not by hand).';
  static description = `What an exported context's user runs (exec: {command: fleet, args: [kubeconfig, credential, --cluster, ID, --provider, NAME, ...]}): finds the cluster through the same provider now, with the export's fleet configuration, kubeconfig files and hub context written in its arguments, and prints an ExecCredential on stdout: the provider's own credential for it (a hub Secret's token or client certificate read with your hub identity, a ClusterProfile access provider's plugin, a workload-identity token, or your kubeconfig's own token, certificate or exec plugin). Plugins obey the trust policy (docs/security.md).

A credential is given only for the cluster the provider names: kubectl must pass the cluster it connects to (provideClusterInfo: true, as export writes it), and its server, CA and TLS settings must be the provider's, else the command refuses (exit 2). A client that passes nothing (KUBERNETES_EXEC_INFO unset: @kubernetes/client-node, fabric8) gets a credential only when every context of its default kubeconfig files (KUBECONFIG, else ~/.kube/config) whose user runs this entry names the provider's cluster.

Credentials are cached per cluster in $XDG_CACHE_HOME/fleet/credentials (else ~/.cache/fleet/credentials), 0600: one with an expiry until 30s before it, one without for 60s, so a rotation or revocation on the hub reaches kubectl within a minute. A credential the server refused is not handed out again. See docs/kubeconfig.md.`;

  static examples = [
    '<%= config.bin %> kubeconfig credential --cluster prod --provider secrets --fleet-config /home/me/fleet.yaml',
  ];

  static flags = {
    // Not `required`: oclif's "Missing required flag cluster" says nothing of what this command is to someone who ran it
    // by hand (run() says it).
    cluster: Flags.string({ description: 'The cluster, as its provider names it (required).' }),
  };

  async run(): Promise<void> {
    const { flags } = this;
    if (!flags.cluster) {
      throw new UsageError(
        '--cluster is missing: fleet kubeconfig credential is the exec credential plugin that fleet kubeconfig export writes into kubeconfig entries, run by kubectl with the arguments written there, not by hand',
      );
    }
    if (flags.output && flags.output !== 'json')
      throw new UsageError(`-o ${flags.output}: fleet kubeconfig credential prints the ExecCredential, which is JSON`);
    // The cluster kubectl connects to (KUBERNETES_EXEC_INFO), or for a client that does not say (client-node, fabric8)
    // the one its kubeconfig files name for this entry; anything fleet would refuse is refused here, exit 2, before the
    // cache or any provider is read.
    const request = await execRequest(process.env, flags);
    // The same identity the launcher's fast path (export/credential-fast.ts) looks a cached credential up by: it binds
    // an entry to the server, CA and TLS settings checked against the provider below before anything was stored.
    const cache = new CredentialCache(credentialIdentity(flags, request.cluster));
    // kubectl: client-go's exec runner is the parent, and asks twice before the end only after a 401.
    const caller = process.ppid;
    const cached = await cache.take(flags.cluster, caller);
    if (cached) return this.answer(request.apiVersion, cached.credential, cached.expires);

    const now = Date.now();
    let fetched: Fetched;
    try {
      // Loaded only now: the providers, the hub client and the exec runner are what a cached answer does without.
      const { credentialFor } = await import('../../export/credential.js');
      fetched = await credentialFor(
        {
          cluster: flags.cluster,
          provider: flags.provider,
          fleetConfig: flags['fleet-config'],
          kubeconfig: this.fleet.kubeconfigPaths,
          context: flags.context,
          destination: request.cluster,
        },
        this.fleet.connector,
        this.fleet.execRunner,
      );
      // The provider still gives the credential just dropped as refused: asked at the server before it is handed out again.
      if ((await cache.suspected(fetched.credential)) && (await fetched.refusedByServer())) {
        throw new FleetError(
          'unauthorized',
          `${flags.cluster}: the server refuses this credential and the provider still holds the same one (revoked, or not rotated yet)`,
        );
      }
    } catch (error) {
      // A revoked credential (its source gone, or refused) is said once to each kubectl process: it runs the plugin
      // again after a failure and shows every stderr line. A request refused as misdirected (exit 2) leaves nothing in
      // the cache directory, so it is said each time.
      const repeats = error instanceof FleetError && (error.kind === 'not-found' || error.kind === 'unauthorized');
      if (repeats && !(await cache.firstFailure(caller))) this.exit(error.exitCode);
      throw error;
    }
    const fresh = fetched.credential;
    const end = cacheEnd(fresh.expirationTimestamp, now);
    await cache.store(flags.cluster, fresh, end, caller, now);
    this.answer(request.apiVersion, fresh, isoSeconds(new Date(end)));
  }

  private answer(
    apiVersion: string,
    credential: { token?: string; clientCertificateData?: string; clientKeyData?: string },
    expires: string,
  ): void {
    // Raw on stdout, past render() and its scrubber on purpose: it is the secret asked for (OUTPUT_ALLOWED).
    process.stdout.write(execCredentialJson(apiVersion, credential, expires));
  }
}
