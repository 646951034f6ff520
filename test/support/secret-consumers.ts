// The consumers' own readers of the Secret formats fleet writes and adopts (test/secret-consumers, built from their Go
// modules): Cluster API's remote cluster client (`<cluster>-kubeconfig`, key `value`), multicluster-runtime's kubeconfig
// provider (labelled Secret, key `kubeconfig`) and Flux's runtime Impersonator (`spec.kubeConfig.secretRef`, key `value`
// or `value.yaml`). Each builds its rest.Config from the hub Secret as the consumer does and asks the member who it is.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { buildScriptOutput } from './binaries.js';
import { type ServerRef, server } from './fixture.js';

export const SECRET_CONSUMERS_BUILD = fileURLToPath(new URL('../secret-consumers/build.sh', import.meta.url));

/** capi: the Cluster's name (the Secret is `<name>-kubeconfig`); mcr and flux: the Secret's name. */
export type ConsumerFormat = 'capi' | 'mcr' | 'flux';

let binary: string | undefined;
/** The secret-consumers binary (built on first use, cached across runs by its build script). */
export function secretConsumers(): string {
  binary ??= buildScriptOutput(SECRET_CONSUMERS_BUILD);
  return binary;
}

/** Who the member says the consumer is, connecting with the hub Secret through the consumer's own code. */
export function consumerWhoami(
  format: ConsumerFormat,
  hub: ServerRef,
  ns: string,
  name: string,
  o: { key?: string } = {},
): Promise<{ username: string; groups: string[] }> {
  const args = ['-format', format, '-hub-kubeconfig', server(hub).kubeconfig, '-namespace', ns, '-name', name];
  if (o.key) args.push('-key', o.key);
  return new Promise((resolve, reject) => {
    execFile(secretConsumers(), args, { timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`secret-consumers ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as { username: string; groups: string[] });
    });
  });
}

/** The username the member sees for the consumer's own connection with the Secret. */
export async function consumerReads(
  format: ConsumerFormat,
  hub: ServerRef,
  ns: string,
  name: string,
  o: { key?: string } = {},
): Promise<string> {
  return (await consumerWhoami(format, hub, ns, name, o)).username;
}
