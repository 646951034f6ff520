// A fleet configuration that reads every consumer Secret format fleet writes on the hub, for the creds e2e tests:
// multicluster-runtime Secrets, Cluster API Clusters, ClusterProfiles with the Secret strategy, and ClusterProfiles whose
// access provider is cluster-inventory-api's reference kubeconfig-secretreader plugin (built from upstream; it finds the
// hub through KUBECONFIG and the Secret through the exec extension fleet writes into the profile).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { kubeconfigFor, loadControlPlane } from './fixture.js';
import { buildScriptOutput } from './binaries.js';

const PLUGINS_BUILD = fileURLToPath(new URL('../providers-plugins/build.sh', import.meta.url));

/** Writes `<dir>/<run>-fleet.yaml` (and the access-provider file it names) and returns its path. */
export function writeConsumerFleet(o: { dir: string; run: string; hubNs: string; consumer: string }): string {
  const cp = loadControlPlane();
  const pluginsDir = buildScriptOutput(PLUGINS_BUILD);
  const pluginHub = kubeconfigFor(
    cp.hub,
    { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
    { name: `${o.run}-plugin-hub`, namespace: o.hubNs },
  );
  const accessFile = join(o.dir, `${o.run}-access.json`);
  const execConfig = {
    apiVersion: 'client.authentication.k8s.io/v1',
    command: join(pluginsDir, 'kubeconfig-secretreader'),
    args: [],
    env: [{ name: 'KUBECONFIG', value: pluginHub }],
    provideClusterInfo: true,
  };
  writeFileSync(accessFile, JSON.stringify({ providers: [{ name: 'kubeconfig-secretreader', execConfig }] }));
  const fleetYaml = join(o.dir, `${o.run}-fleet.yaml`);
  writeFileSync(
    fleetYaml,
    [
      `hub: {kubeconfig: ${cp.hub.kubeconfig}}`,
      'providers:',
      `  - {name: mcr, type: kubeconfig, namespace: ${o.hubNs}}`,
      `  - {name: capi, type: cluster-api, namespace: ${o.hubNs}}`,
      `  - {name: inv, type: cluster-inventory, namespace: ${o.hubNs}, consumer: ${o.consumer}}`,
      `  - {name: access, type: cluster-inventory, namespace: ${o.hubNs}, providerFile: ${accessFile}}`,
      '',
    ].join('\n'),
  );
  return fleetYaml;
}
