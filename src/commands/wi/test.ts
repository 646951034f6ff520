import { WiProbeCommand, type WorkloadIdentityReport } from '../../cli/wi-command.js';
import { wiFlags } from '../../cli/wi-format.js';
import type { Probe, ProbeResult } from '../../workload-identity/probe.js';
import { testWorkloadIdentity } from '../../workload-identity/wi-test.js';

export default class WiTest extends WiProbeCommand<typeof WiTest> {
  static summary = 'Test workload identity: a hub ServiceAccount token presented to a target cluster.';
  static description = `Requests a token for the hub ServiceAccount with TokenRequest (audience: the target's server URL exactly as written in its kubeconfig, unless --audience), presents it to the target, and shows the identity the target maps it to (SelfSubjectReview) and the token's claims (never the token). --expect-user and --can-i add expectations. One check per step; when a step fails, the checks of \`fleet wi doctor\` follow. Exit 0 only when every step passes.`;

  static examples = [
    '<%= config.bin %> wi test --hub hub --service-account flux-system/reconciler --target prod-eu --expect-user hub:system:serviceaccount:flux-system:reconciler',
    '<%= config.bin %> wi test --hub hub --service-account tenant-a/deployer --all --can-i "create deployments.apps -n tenant-a" -o json',
  ];

  static flags = { ...wiFlags };

  protected readonly reportKind = 'WorkloadIdentityTest' as const;

  protected probe(p: Probe): Promise<ProbeResult> {
    return testWorkloadIdentity(p);
  }

  async run(): Promise<WorkloadIdentityReport> {
    return this.report(this.flags);
  }
}
