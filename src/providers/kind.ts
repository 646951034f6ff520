import { mapLimit } from '../base/concurrency.js';
import { formatDuration } from '../base/duration.js';
import { ConfigError, FleetError, asError } from '../base/errors.js';
import type { Invocation } from '../base/invocation.js';
import { type ProcessResult, ProcessStartError, ProcessTimeout, runProcess } from '../base/subprocess.js';
import { approveUserProgram } from '../kubeconfig/trust.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import { makeRef } from './ref.js';
import { CachedProvider } from './cached-provider.js';
import type { ClusterRef } from './types.js';

/**
 * multicluster-runtime's kind provider, through the `kind` command: `kind get clusters` names the clusters (a prefix
 * only filters them), `kind get kubeconfig --name N` gives each one's kubeconfig.
 */
export interface KindOptions {
  /** The kind executable (default `kind`, looked up on PATH). */
  command?: string;
  prefix?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export class KindProvider extends CachedProvider {
  constructor(
    name: string,
    private readonly options: KindOptions = {},
  ) {
    super(name, 'kind');
  }

  private get command(): string {
    return this.options.command ?? 'kind';
  }

  /**
   * The kind program, resolved once per run as Go's exec would (a bare name through PATH, ErrDot included; a path as
   * written, against the working directory), and run by that absolute path: kind's command is the user's configuration.
   */
  private invocation(args: string[]): Invocation {
    const env = this.options.env ?? process.env;
    const approved = approveUserProgram(this.command, { args, env, cwd: process.cwd() });
    if (approved.error !== undefined) {
      if (approved.dot)
        throw new ConfigError(
          `${this.describe()}: the "${this.command}" command: ${approved.error} (ErrDot); put an absolute directory on PATH or set "command" to an absolute path`,
        );
      throw new ProcessStartError(this.command, /not found/.test(approved.error) ? 'ENOENT' : 'EACCES', approved.error);
    }
    return approved.invocation;
  }

  private async run(args: string[]): Promise<ProcessResult> {
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    try {
      return await runProcess(this.invocation(args), { timeoutMs });
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      if (error instanceof ProcessTimeout) {
        throw new FleetError(
          'plugin',
          `${this.describe()}: ${this.command} ${args.join(' ')}: no answer within ${formatDuration(timeoutMs)}`,
        );
      }
      if (error instanceof ProcessStartError && error.code === 'ENOENT') {
        throw new ConfigError(
          `${this.describe()}: the "${this.command}" command was not found${this.command.includes('/') ? '' : ' on PATH'}; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or set "command" for this provider in the fleet config`,
        );
      }
      throw new FleetError('plugin', `${this.describe()}: ${this.command}: ${(error as Error).message}`);
    }
  }

  private failure(args: string[], r: ProcessResult): Error {
    const last = r.stderr.trim().split('\n').pop();
    return new FleetError(
      'plugin',
      `${this.command} ${args.join(' ')} exited with ${r.code ?? 'a signal'}${last ? `: ${last}` : ''}`,
    );
  }

  protected async build(): Promise<ClusterRef[]> {
    const args = ['get', 'clusters'];
    const r = await this.run(args);
    if (r.code !== 0) throw new FleetError('plugin', `${this.describe()}: ${this.failure(args, r).message}`);
    const names = parseKindClusters(r.stdout).filter((n) => !this.options.prefix || n.startsWith(this.options.prefix));
    return mapLimit(names, 4, (name) => this.ref(name));
  }

  private async ref(name: string): Promise<ClusterRef> {
    const args = ['get', 'kubeconfig', '--name', name];
    const fields = { name, provider: this.name, labels: {}, source: { kind: 'kind' as const, name } };
    let found;
    try {
      const r = await this.run(args);
      if (r.code !== 0) throw this.failure(args, r);
      // kind's own output, from the kind the user configured: the user's, like a kubeconfig file.
      found = contextFromKubeconfigText(r.stdout, `kind cluster ${name}`, 'user');
    } catch (error) {
      return makeRef(fields, asError(error));
    }
    return makeRef({ ...fields, source: { ...fields.source, context: found.contextName } }, found);
  }
}

/** One cluster name per line; kind says "No kind clusters found." on stderr, so stdout is simply empty then. */
export function parseKindClusters(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^No kind clusters found/.test(l));
}
