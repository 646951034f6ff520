import { UsageError } from '../base/errors.js';
import { type HubSpec, loadFleetConfig } from '../config/fleet-config.js';
import type { TrustPolicy } from '../kubeconfig/trust.js';

/**
 * The one hub rule of `creds generate`, `creds list` and `creds rotate` (docs/creds.md "Which hub"):
 * 1. `--hub-kubeconfig` / `--hub-context`;
 * 2. else the fleet configuration's hub and every provider's own hub (the configuration the command would read: an
 *    explicit `--kubeconfig` without `--provider` is kubectl's view, as for the clusters, and reads none);
 * 3. else the current context of the loading rules every other command uses: `--kubeconfig`, `--context`, KUBECONFIG,
 *    ~/.kube/config, then a Pod's in-cluster configuration (resolveHubContext in kube/connector.ts, client-go's order; Connector.hub connects).
 */
export interface HubFlags {
  /** --hub-kubeconfig (a ":"-list) and --hub-context. */
  hubKubeconfig?: string;
  hubContext?: string;
  /** The command's --kubeconfig (split) and --context: the loading rules of step 3. */
  kubeconfig?: string[];
  context?: string;
  /** --provider: with it, --kubeconfig names that provider's hub and the fleet configuration is read. */
  provider?: string;
  fleetConfig?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The command's trust policy: the fleet configuration's file-wide allowlists apply to what these hubs hold. */
  trust?: TrustPolicy;
}

/** A hub and the step of the rule that chose it (`loading-rules`: the current context, a guess rather than a setting). */
export interface HubChoice {
  spec: HubSpec;
  origin: 'flags' | 'fleet-config' | 'loading-rules';
}

/** The hubs by the rule, first the one generate and rotate use; never empty (step 3 always names one). */
export async function credsHubs(f: HubFlags): Promise<HubChoice[]> {
  if (f.hubKubeconfig !== undefined || f.hubContext !== undefined) {
    const files = f.hubKubeconfig?.split(':').filter(Boolean);
    if (f.hubKubeconfig !== undefined && !files?.length) throw new UsageError('--hub-kubeconfig: no path given');
    // --hub-context alone picks a context of the loading rules (the command's --kubeconfig when given).
    return [{ spec: { kubeconfig: files ?? f.kubeconfig, context: f.hubContext }, origin: 'flags' }];
  }
  const kubectlView = f.kubeconfig !== undefined && !f.provider;
  const config = kubectlView ? undefined : await loadFleetConfig({ path: f.fleetConfig, env: f.env, cwd: f.cwd });
  if (config && f.trust) f.trust.configPath = config.path;
  if (config?.allow) f.trust?.allow(undefined, config.allow);
  const hubs: HubChoice[] = [];
  const add = (h: HubSpec | undefined) => {
    if (!h || (!h.kubeconfig && !h.context)) return;
    const key = JSON.stringify(h);
    if (!hubs.some((x) => JSON.stringify(x.spec) === key)) hubs.push({ spec: h, origin: 'fleet-config' });
  };
  add(config?.hub);
  for (const p of config?.providers ?? []) if ('hub' in p && p.type !== 'namespace') add(p.hub ?? config?.hub);
  if (hubs.length === 0) hubs.push({ spec: { kubeconfig: f.kubeconfig, context: f.context }, origin: 'loading-rules' });
  return hubs;
}
