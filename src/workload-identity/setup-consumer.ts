import { constants, existsSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';

import { UsageError } from '../base/errors.js';
import { parseNamespacedName } from '../base/names.js';
import type { KubeObject } from '../kube/objects.js';
import { writeFileAtomic } from '../kubeconfig/atomic-write.js';
import type { Cluster } from './connect.js';
import {
  type AccessProvider,
  type Consumer,
  type ConsumerInput,
  type PluginInvocation,
  type ProviderFile,
  accessProviderFor,
  argocdSecret,
  checkKubeconfigOut,
  planProfile,
  pluginArgs,
  pluginKubeconfig,
  providerFileFor,
  tokenRequesterRbac,
  writeProfile,
} from './consumers.js';
import { type ServiceAccountRef, parseServiceAccount } from './service-account.js';
import { kernelPath } from '../base/paths.js';

/** `wi setup --consumer`: the flags checked before any cluster is touched, then what each consumer gets. */
export interface ConsumerChoice {
  name: Consumer;
  profile?: { namespace: string; name: string };
  out?: string;
  force: boolean;
  providerFileOut?: string;
  argocd: { namespace: string; secret?: string };
  pluginCommand: string;
  pluginHub?: { kubeconfig: string[]; context?: string };
  pluginIdentities: ServiceAccountRef[];
}

/** The stable JSON of the consumer part of `wi setup` (docs/workload-identity.md). */
export interface ConsumerOutput {
  name: Consumer;
  /** How the consumer runs the plugin (absent for flux, whose own generic provider needs none). */
  plugin?: { command: string; args: string[] };
  /** cluster-inventory: the entry of the ClusterProfile's status.accessProviders. */
  accessProvider?: AccessProvider;
  /** cluster-inventory: the access-provider file's providers (save `{providers}` as --clusterprofile-provider-file). */
  providers?: ProviderFile['providers'];
  profile?: {
    namespace: string;
    name: string;
    action: 'create' | 'update' | 'unchanged';
    result?: 'created' | 'configured' | 'unchanged' | 'dry-run';
  };
  /** kubeconfig: where it was written (written: false with --dry-run). */
  kubeconfig?: { path: string; written: boolean };
  providerFile?: { path: string; written: boolean };
  /** argocd: the cluster Secret NAMESPACE/NAME (one of the hub objects). */
  argocdSecret?: string;
  notes: string[];
}

export interface ConsumerFlags {
  consumer: Consumer;
  profile?: string;
  out?: string;
  force?: boolean;
  providerFileOut?: string;
  argocdNamespace: string;
  argocdSecret?: string;
  pluginCommand: string;
  pluginHubKubeconfig?: string;
  pluginHubContext?: string;
  pluginIdentity?: string[];
  fluxConfigMap?: string;
}

async function checkOutDir(path: string, flag: string): Promise<void> {
  const dir = dirname(kernelPath(path));
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new UsageError(`${flag} ${path}: directory ${dir} does not exist`);
  await access(dir, constants.W_OK).catch(() => {
    throw new UsageError(`${flag} ${path}: directory ${dir} is not writable`);
  });
}

export async function checkConsumerFlags(f: ConsumerFlags): Promise<ConsumerChoice> {
  const only = (set: unknown, flag: string, consumer: Consumer) => {
    if (set !== undefined && set !== false && f.consumer !== consumer)
      throw new UsageError(`${flag} is for --consumer ${consumer} (this is --consumer ${f.consumer})`);
  };
  only(f.profile, '--profile', 'cluster-inventory');
  only(f.providerFileOut, '--provider-file-out', 'cluster-inventory');
  only(f.out, '--out', 'kubeconfig');
  only(f.force, '--force', 'kubeconfig');
  only(f.argocdSecret, '--argocd-secret', 'argocd');
  only(f.fluxConfigMap, '--flux-configmap', 'flux');
  if (f.consumer === 'flux' && (f.pluginHubKubeconfig || f.pluginIdentity?.length)) {
    throw new UsageError(
      '--plugin-hub-kubeconfig and --plugin-identity are for the consumers that run fleet wi token (cluster-inventory, kubeconfig, argocd); Flux mints its own tokens',
    );
  }
  if (f.pluginHubContext && !f.pluginHubKubeconfig)
    throw new UsageError('--plugin-hub-context needs --plugin-hub-kubeconfig');
  if (f.consumer === 'cluster-inventory' && !f.profile)
    throw new UsageError(
      '--consumer cluster-inventory needs --profile NAMESPACE/NAME (the ClusterProfile of the target)',
    );
  if (f.consumer === 'kubeconfig' && !f.out) throw new UsageError('--consumer kubeconfig needs --out FILE');
  if (f.pluginCommand.trim() === '') throw new UsageError('--plugin-command: empty');
  if (f.out) {
    await checkOutDir(f.out, '--out');
    await checkKubeconfigOut(f.out, Boolean(f.force));
  }
  if (f.providerFileOut) await checkOutDir(f.providerFileOut, '--provider-file-out');
  const pluginHub = f.pluginHubKubeconfig
    ? {
        kubeconfig: f.pluginHubKubeconfig
          .split(':')
          .filter(Boolean)
          .map((p) => kernelPath(p)),
        context: f.pluginHubContext,
      }
    : undefined;
  if (pluginHub && pluginHub.kubeconfig.length === 0) throw new UsageError('--plugin-hub-kubeconfig: no path given');
  return {
    name: f.consumer,
    profile: f.profile ? parseNamespacedName(f.profile, '--profile') : undefined,
    out: f.out,
    force: Boolean(f.force),
    providerFileOut: f.providerFileOut,
    argocd: { namespace: f.argocdNamespace, secret: f.argocdSecret },
    pluginCommand: f.pluginCommand,
    pluginHub,
    pluginIdentities: (f.pluginIdentity ?? []).map((v) => parseServiceAccount(v, '--plugin-identity')),
  };
}

/**
 * Which hub the plugin reads: --plugin-hub-kubeconfig; for a kubeconfig (a person's laptop) the hub this command used,
 * by its file's absolute path, so the file works from any directory; otherwise none, the plugin's own hub rule (in a
 * Pod: its in-cluster configuration).
 */
export function pluginHubOf(c: ConsumerChoice, hub: Cluster): PluginInvocation {
  if (c.pluginHub) return { command: c.pluginCommand, hub: c.pluginHub };
  // The files that define the hub's context, cluster and user (one, usually; several when KUBECONFIG merged them). A
  // hub that is no file (in-cluster, a provider's object) gives the plugin no arguments: its own hub rule applies.
  const { contextFile, clusterFile, userFile } = hub.context;
  const files = [...new Set([contextFile, clusterFile, userFile])]
    .filter((f): f is string => Boolean(f) && isAbsolute(resolve(f!)) && existsSync(f!))
    .map((f) => resolve(f));
  if (c.name === 'kubeconfig' && files.length > 0 && existsSync(contextFile)) {
    return { command: c.pluginCommand, hub: { kubeconfig: files, context: hub.context.contextName } };
  }
  return { command: c.pluginCommand };
}

export interface ConsumerSide {
  hubObjects: KubeObject[];
  output: ConsumerOutput;
  /** Human output after the AuthenticationConfiguration: a title and a text each. */
  printed: Array<[string, string]>;
  writeProfile: (dryRun: boolean) => Promise<void>;
  files: Array<{ path: string; text: string; mode: number; record: { written: boolean } }>;
}

const slug = (v: string) =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(-40)
    .replace(/^-+/, '') || 'target';

export async function consumerHubSide(
  c: ConsumerChoice,
  i: ConsumerInput,
  shortName: string,
  hub: Cluster,
): Promise<ConsumerSide> {
  const output: ConsumerOutput = { name: c.name, notes: [] };
  const side: ConsumerSide = { hubObjects: [], output, printed: [], writeProfile: async () => {}, files: [] };
  if (c.name === 'flux') return side;
  output.plugin = { command: i.plugin.command, args: pluginArgs(i.plugin) };
  for (const requester of c.pluginIdentities) side.hubObjects.push(...tokenRequesterRbac(i.serviceAccount, requester));
  if (c.name === 'cluster-inventory') {
    const entry = await accessProviderFor(i);
    const profile = c.profile!;
    output.accessProvider = entry;
    output.providers = providerFileFor(i.plugin).providers;
    output.profile = { ...profile, action: await planProfile(hub.client, profile, entry) };
    side.writeProfile = async (dryRun) => {
      if (output.profile!.action === 'unchanged') {
        output.profile!.result = 'unchanged';
        return;
      }
      await writeProfile(hub.client, profile, entry, dryRun);
      output.profile!.result = dryRun ? 'dry-run' : output.profile!.action === 'create' ? 'created' : 'configured';
    };
    const file = JSON.stringify({ providers: output.providers }, null, 2) + '\n';
    side.printed.push([
      `ClusterProfile ${profile.namespace}/${profile.name} status.accessProviders entry`,
      JSON.stringify(entry, null, 2),
    ]);
    side.printed.push(["Access-provider file for the consumer's --clusterprofile-provider-file", file]);
    if (c.providerFileOut) {
      output.providerFile = { path: c.providerFileOut, written: false };
      side.files.push({ path: c.providerFileOut, text: file, mode: 0o644, record: output.providerFile });
    }
    output.notes.push(
      `the consumer runs ${i.plugin.command} ${pluginArgs(i.plugin).join(' ')}: ${i.plugin.hub ? 'with the hub kubeconfig named in its args' : 'in a Pod, as its own ServiceAccount (in-cluster), which needs --plugin-identity'}`,
    );
  }
  if (c.name === 'kubeconfig') {
    const text = await pluginKubeconfig(i, slug(shortName));
    output.kubeconfig = { path: c.out!, written: false };
    side.files.push({ path: c.out!, text, mode: 0o600, record: output.kubeconfig });
    side.printed.push([`kubeconfig ${c.out} (its user runs fleet wi token; no token in the file)`, text]);
  }
  if (c.name === 'argocd') {
    const name = c.argocd.secret ?? `fleet-wi-${slug(shortName)}`;
    side.hubObjects.push(await argocdSecret(i, { namespace: c.argocd.namespace, name, clusterName: shortName }));
    output.argocdSecret = `${c.argocd.namespace}/${name}`;
    output.notes.push(
      `Argo CD runs ${i.plugin.command} in its application controller and server: the fleet binary must be in the Argo CD image (or mounted into both), and their ServiceAccounts need --plugin-identity`,
    );
  }
  return side;
}

/** Files are written after the objects (never with --dry-run), atomically. */
export async function writeConsumer(side: ConsumerSide, o: { apply: boolean; dryRun: boolean }): Promise<void> {
  if (o.dryRun) return;
  for (const f of side.files) {
    await writeFileAtomic(kernelPath(f.path), f.text, { mode: f.mode });
    f.record.written = true;
  }
}
