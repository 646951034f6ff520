import { formatDuration } from '../base/duration.js';
import { ConfigError, FleetError, asError } from '../base/errors.js';
import { MAX_CONFIG_FILE_BYTES } from '../base/limits.js';
import {
  ProcessOutputTooLarge,
  type ProcessResult,
  ProcessStartError,
  ProcessTimeout,
  runProcess,
} from '../base/subprocess.js';
import { LABEL_KEY } from '../config/fleet-config.js';
import { Fields, isMapping } from '../config/fields.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import { registerUserSecrets } from '../kubeconfig/redact.js';
import { approveUserProgram } from '../kubeconfig/trust.js';
import { EXEC_API_VERSION, EXEC_API_VERSIONS, type ExecConfig, type UserEntry } from '../kubeconfig/types.js';
import { CachedProvider } from './cached-provider.js';
import { makeRef } from './ref.js';
import type { ClusterRef } from './types.js';
import { JsonTooDeep, parseJson } from '../base/json.js';

/**
 * The exec provider: a program the user's fleet configuration names prints the clusters as a ClusterList (a versioned
 * JSON document, docs/providers.md "exec"), for inventories fleet cannot know itself (a cloud account, Rancher, a
 * company CMDB). The program is the user's word (resolved and run as kind's command is); what it prints is data: an
 * exec credential or a kubeconfig in it is judged by the trust policy like a hub Secret's, so it runs a plugin or reads
 * a file only where fleet.yaml allows that command or file for this provider.
 */
export const CLUSTER_LIST_API_VERSION = 'fleet.dev/v1alpha1';
export const CLUSTER_LIST_KIND = 'ClusterList';
/** How long the program may take when the entry sets no `timeout`: a cloud API listing a few hundred clusters. */
export const DEFAULT_EXEC_PROVIDER_TIMEOUT_MS = 60_000;
/** A cluster's name: what `-c` and `<provider>#<cluster>` use, so no spaces, no `#`, no control characters. */
export const EXEC_CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,252}$/;

const TOP_FIELDS = ['apiVersion', 'kind', 'clusters'];
const CLUSTER_FIELDS = ['name', 'server', 'certificateAuthorityData', 'tlsServerName', 'labels', 'exec', 'kubeconfig'];
const EXEC_FIELDS = ['command', 'args', 'env', 'apiVersion', 'provideClusterInfo', 'installHint'];

export interface ExecProviderOptions {
  name: string;
  /** The program, as fleet.yaml names it (a path already resolved against the file; a bare name looked up on PATH). */
  command: string;
  args?: string[];
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** One entry of the program's ClusterList: its name and labels, and the context to connect with or why there is none. */
export interface ExecCluster {
  name: string;
  labels: Record<string, string>;
  found: ResolvedContext | Error;
}

export class ExecProvider extends CachedProvider {
  constructor(private readonly options: ExecProviderOptions) {
    super(options.name, 'exec');
  }

  /** `exec provider "eks" (/home/me/bin/eks-clusters)`: every failure of the program names it. */
  private get program(): string {
    return `${this.describe()} (${[this.options.command, ...(this.options.args ?? [])].join(' ')})`;
  }

  private async run(): Promise<string> {
    const env = this.options.env ?? process.env;
    const { command } = this.options;
    const approved = approveUserProgram(command, {
      args: this.options.args ?? [],
      env,
      cwd: this.options.cwd ?? process.cwd(),
    });
    if (approved.error !== undefined)
      throw new ConfigError(
        `${this.program}: ${approved.error}${approved.dot ? ' (ErrDot); put an absolute directory on PATH or set "command" to an absolute path' : ''}`,
      );
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_EXEC_PROVIDER_TIMEOUT_MS;
    let r: ProcessResult;
    try {
      // A fleet of thousands with their CAs is a few MB: the program's output is held to a configuration file's limit.
      r = await runProcess(approved.invocation, { timeoutMs, maxOutputBytes: MAX_CONFIG_FILE_BYTES });
    } catch (error) {
      if (error instanceof ProcessTimeout)
        throw new FleetError('plugin', `${this.program}: no answer within ${formatDuration(timeoutMs)}`);
      if (error instanceof ProcessOutputTooLarge)
        throw new FleetError('plugin', `${this.program}: wrote more than ${error.limit} bytes on ${error.stream}`);
      if (error instanceof ProcessStartError)
        throw new ConfigError(`${this.program}: could not be started: ${error.code ?? error.message}`);
      throw new FleetError('plugin', `${this.program}: ${asError(error).message}`);
    }
    // Its stderr is not shown: a cloud CLI's error may carry keys or tokens fleet does not know to scrub.
    if (r.code !== 0)
      throw new FleetError(
        'plugin',
        `${this.program}: exited with ${r.code ?? r.signal ?? 'a signal'} (its stderr is not shown, as it may hold secrets: run the program yourself to see it)`,
      );
    return r.stdout;
  }

  protected async build(): Promise<ClusterRef[]> {
    const clusters = parseClusterList(await this.run(), { provider: this.name, program: this.program });
    const program = this.options.command;
    return clusters.map((c) =>
      makeRef(
        {
          name: c.name,
          provider: this.name,
          labels: c.labels,
          source: { kind: 'exec', name: c.name, program },
        },
        c.found,
      ),
    );
  }
}

/**
 * The program's stdout as a ClusterList (fleet.dev/v1alpha1). What makes the whole document unusable (not JSON, another
 * apiVersion or kind, no `clusters` list, a cluster without a usable or unique name) fails the listing with one line
 * naming the program; what is wrong with one cluster (a missing server, both or neither of exec and kubeconfig, an
 * unknown field) makes that cluster not ready with the reason, and the others are listed. Secrets in it are registered
 * for scrubbing; its exec credentials and kubeconfigs carry the provider as their origin (data: TrustPolicy judges them).
 */
export function parseClusterList(stdout: string, o: { provider: string; program: string }): ExecCluster[] {
  const fail = (problem: string) => new FleetError('plugin', `${o.program}: ${problem}`);
  let doc: unknown;
  try {
    doc = parseJson(stdout);
  } catch (error) {
    if (error instanceof JsonTooDeep)
      throw fail(`output is ${error.message}; expected a ${CLUSTER_LIST_KIND} (${CLUSTER_LIST_API_VERSION})`);
    // The parser's message quotes the text around the error, which may be a secret: only where it is, not what.
    const at = /position (\d+)/.exec(asError(error).message)?.[1];
    throw fail(
      stdout.trim() === ''
        ? `printed nothing; expected a ${CLUSTER_LIST_KIND} (${CLUSTER_LIST_API_VERSION}) in JSON`
        : `output is not valid JSON${at ? ` (at byte ${at})` : ''}; expected a ${CLUSTER_LIST_KIND} (${CLUSTER_LIST_API_VERSION})`,
    );
  }
  if (!isMapping(doc)) throw fail(`output is not a JSON object; expected a ${CLUSTER_LIST_KIND}`);
  const version = doc.apiVersion;
  const kind = doc.kind;
  if (version !== CLUSTER_LIST_API_VERSION || kind !== CLUSTER_LIST_KIND)
    throw fail(
      `output is ${typeof version === 'string' ? `apiVersion "${version}"` : 'without an apiVersion'} ${typeof kind === 'string' ? `kind "${kind}"` : 'without a kind'}; fleet reads apiVersion ${CLUSTER_LIST_API_VERSION} kind ${CLUSTER_LIST_KIND}`,
    );
  // Opaque: a wrong value is named by its field and type, never quoted (the output may hold secrets fleet cannot tell).
  const root = new Fields('output', '', doc, true);
  let entries: Fields[];
  try {
    root.only(TOP_FIELDS);
    if (!Array.isArray(doc.clusters)) throw root.error('clusters', 'is required: a list (empty when there are none)');
    entries = root.list('clusters');
  } catch (error) {
    throw fail(asError(error).message);
  }
  const seen = new Map<string, number>();
  const out: ExecCluster[] = [];
  entries.forEach((entry, i) => {
    const name = entry.value.name;
    if (typeof name !== 'string' || !EXEC_CLUSTER_NAME.test(name))
      throw fail(
        `output: clusters[${i}].name: ${typeof name === 'string' ? `"${name}" is not a cluster name (letters, digits and . _ : @ / -, starting with a letter or digit, at most 253)` : 'is required (a string)'}`,
      );
    const before = seen.get(name);
    if (before !== undefined)
      throw fail(
        `output: clusters[${i}].name: "${name}" is also the name of clusters[${before}]; names must be unique`,
      );
    seen.set(name, i);
    let labels: Record<string, string> = {};
    let found: ResolvedContext | Error;
    try {
      labels = readLabels(entry);
      found = clusterContext(entry, name, o);
    } catch (error) {
      found = asError(error);
    }
    out.push({ name, labels, found });
  });
  return out;
}

function readLabels(entry: Fields): Record<string, string> {
  const m = entry.mapping('labels');
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(m?.value ?? {})) {
    if (!LABEL_KEY.test(k)) throw m!.error(k, 'is not a valid label key');
    if (typeof v !== 'string') throw m!.error(k, 'label values must be strings');
    labels[k] = v;
  }
  return labels;
}

/** The context of one entry: a kubeconfig's current-context, or the server, CA and exec credential given. */
function clusterContext(entry: Fields, name: string, o: { provider: string; program: string }): ResolvedContext {
  entry.only(CLUSTER_FIELDS);
  const object = `exec provider "${o.provider}" cluster "${name}"`;
  const origin = { object, provider: o.provider };
  const hasExec = entry.has('exec');
  const kubeconfig = entry.string('kubeconfig');
  if (hasExec === (kubeconfig !== undefined))
    throw entry.error(undefined, 'give either exec (a credential plugin) or kubeconfig, not both nor neither');
  if (kubeconfig !== undefined) {
    for (const key of ['server', 'certificateAuthorityData', 'tlsServerName'])
      if (entry.has(key)) throw entry.error(key, 'comes from the kubeconfig when kubeconfig is given; leave it out');
    return contextFromKubeconfigText(kubeconfig, `${o.program} output: ${entry.path}.kubeconfig`, origin);
  }
  const server = entry.requiredString('server');
  if (!/^https?:\/\/[^\s/]/.test(server)) throw entry.error('server', 'must be an https:// (or http://) URL');
  const ca = entry.string('certificateAuthorityData');
  // Only its shape: what the bytes are is judged where fleet connects, as for a kubeconfig's certificate-authority-data.
  if (ca !== undefined && !/^[A-Za-z0-9+/]+={0,2}$/.test(ca.replace(/\s/g, '')))
    throw entry.error(
      'certificateAuthorityData',
      'must be base64 (of PEM certificates, as certificate-authority-data)',
    );
  const tlsServerName = entry.string('tlsServerName');
  const user: UserEntry = { exec: readExec(entry.mapping('exec')!) };
  registerUserSecrets(user);
  const where = `${o.program} output: ${entry.path}`;
  return {
    contextName: name,
    clusterName: name,
    userName: name,
    cluster: {
      server,
      ...(ca !== undefined ? { 'certificate-authority-data': ca } : {}),
      ...(tlsServerName !== undefined ? { 'tls-server-name': tlsServerName } : {}),
    },
    user,
    contextFile: where,
    clusterFile: where,
    userFile: where,
    origin,
  };
}

/** An exec credential as a kubeconfig's exec entry; non-interactive, since a provider's clusters are used unattended. */
function readExec(f: Fields): ExecConfig {
  f.only(EXEC_FIELDS);
  const args = f.value.args;
  if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
    throw f.error('args', 'must be a list of strings');
  const env = f.list('env').map((e) => {
    e.only(['name', 'value']);
    const value = e.value.value;
    if (typeof value !== 'string') throw e.error('value', 'is required (a string)');
    return { name: e.requiredString('name'), value };
  });
  const installHint = f.string('installHint');
  const provideClusterInfo = f.boolean('provideClusterInfo');
  return {
    apiVersion: f.oneOf('apiVersion', EXEC_API_VERSIONS) ?? EXEC_API_VERSION,
    command: f.requiredString('command'),
    ...(args !== undefined ? { args: args as string[] } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(provideClusterInfo !== undefined ? { provideClusterInfo } : {}),
    ...(installHint !== undefined ? { installHint } : {}),
    interactiveMode: 'Never',
  };
}
