import { Flags } from '@oclif/core';

import { WiProbeCommand, type WorkloadIdentityReport } from '../../cli/wi-command.js';
import { wiFlags } from '../../cli/wi-format.js';
import { diagnose } from '../../workload-identity/doctor.js';
import type { Probe, ProbeResult } from '../../workload-identity/probe.js';

export default class WiDoctor extends WiProbeCommand<typeof WiDoctor> {
  static summary = 'Explain why a target cluster rejects (or would reject) a hub ServiceAccount token.';
  static description = `Checks every cause of a failing workload identity that can be seen from outside, each with its fix: the hub's discovery document and JWKS readable without credentials, their issuer equal to the token's iss, the signature verified against the JWKS, the audience against the target's URL (":443", trailing slash, case), expiry and clock skew, the CA the target needs, whether the target has an authenticator for the issuer (from its metrics, when your credentials may read them), what the target answered, and the RBAC on the target for the mapped user (401 and 403 told apart). With --authentication-config FILE, the target's configuration is also checked statically. Exit 0 only when nothing fails.`;

  static examples = [
    '<%= config.bin %> wi doctor --hub hub --service-account flux-system/reconciler --target prod-eu',
    '<%= config.bin %> wi doctor --hub hub --service-account flux-system/reconciler --target prod-eu --authentication-config ./auth-config.yaml',
    '<%= config.bin %> wi doctor --hub hub --service-account flux-system/reconciler --target prod-eu --token-file ./token',
  ];

  static flags = {
    ...wiFlags,
    'authentication-config': Flags.string({
      description:
        "The target's AuthenticationConfiguration file (what its API server reads with --authentication-config), checked statically.",
    }),
  };

  protected readonly reportKind = 'WorkloadIdentityDiagnosis' as const;

  protected probe(p: Probe): Promise<ProbeResult> {
    return diagnose(p);
  }

  async run(): Promise<WorkloadIdentityReport> {
    return this.report(this.flags, this.flags['authentication-config']);
  }
}
