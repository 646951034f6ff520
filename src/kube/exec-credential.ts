import { createHash } from 'node:crypto';

import { requireNamedFile } from '../base/files.js';
import { formatDuration } from '../base/duration.js';
import { ConfigError, FleetError } from '../base/errors.js';
import {
  ProcessOutputTooLarge,
  ProcessStartError,
  ProcessStopped,
  ProcessTimeout,
  runProcess,
} from '../base/subprocess.js';
import type { Invocation } from '../base/invocation.js';
import { execConfigProblem } from '../kubeconfig/readiness.js';
import { ScrubbedLines, registerSecret } from '../kubeconfig/redact.js';
import type { ApprovedExec } from '../kubeconfig/trust.js';
import {
  type ClusterEntry,
  EXEC_API_VERSIONS,
  EXEC_CLUSTER_CONFIG_EXTENSION,
  type ExecConfig,
} from '../kubeconfig/types.js';
import { jsonProblem, parseJson } from '../base/json.js';

/**
 * Runs client-go exec credential plugins the way client-go does, which @kubernetes/client-node does not:
 * KUBERNETES_EXEC_INFO with spec.cluster when provideClusterInfo, interactiveMode honoured (never interactive without a
 * TTY), a timeout, one run shared by concurrent callers, a cache per (exec config, cluster) until expirationTimestamp,
 * and a refresh after a 401 that concurrent callers share too.
 */
export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

// Refresh a little before expiry so a credential does not lapse between the check and the request.
const EXPIRY_SKEW_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 60_000;

export interface ExecRunnerOptions {
  timeoutMs?: number;
  /** Whether a terminal is available for interactive plugins (stdin and stdout TTYs, not CI, not machine output). */
  interactiveAvailable?: boolean;
  /** Where the plugin's stderr goes (client-go passes it through). */
  stderr?: NodeJS.WritableStream;
  now?: () => number;
}

export interface GetOptions {
  /**
   * The credential the server just rejected (401). The plugin runs again only if the cache still holds that credential;
   * when another caller already refreshed it, or is refreshing it, that result is shared instead.
   */
  rejected?: ExecCredential;
  /**
   * The caller's time limit (the fleet runner's --cluster-timeout). The caller stops waiting when it aborts; the plugin
   * itself is ended once every caller waiting for that run has given up, so a hang never outlives the command.
   */
  signal?: AbortSignal;
}

interface CacheEntry {
  promise: Promise<ExecCredential>;
  credential?: ExecCredential;
  /** Callers still waiting for this run, and how to end it when none is left. */
  waiters: number;
  stop: AbortController;
}

export class ExecCredentialRunner {
  private readonly cache = new Map<string, CacheEntry>();
  /** How many plugin processes this runner started in total. */
  runs = 0;

  constructor(private readonly options: ExecRunnerOptions = {}) {}

  /** Two users with the same exec config talking to the same cluster share one credential, as in client-go. */
  static key(exec: ExecConfig, cluster: ClusterEntry): string {
    // Remembered per pair of entries (a kubeconfig's entries are not changed once read): every request of a cluster asks
    // for its credential, and hashing the two entries each time was 1% of a thousand-cluster verify.
    let byCluster = keys.get(exec);
    if (!byCluster) keys.set(exec, (byCluster = new WeakMap()));
    let key = byCluster.get(cluster);
    if (key === undefined)
      byCluster.set(
        cluster,
        (key = createHash('sha256')
          .update(stableJson([exec, cluster]))
          .digest('hex')),
      );
    return key;
  }

  /**
   * The credential of an approved plugin (TrustPolicy.approve): the runner starts the Invocation the policy approved,
   * never the command by name, so what runs is what was judged.
   */
  async get(plugin: ApprovedExec, cluster: ClusterEntry, options: GetOptions = {}): Promise<ExecCredential> {
    const exec = plugin.exec;
    const key = ExecCredentialRunner.key(exec, cluster);
    let entry = this.cache.get(key);
    if (entry?.credential) {
      const stale = options.rejected !== undefined && sameCredential(entry.credential, options.rejected);
      if (!stale && !this.expired(entry.credential)) return entry.credential;
      entry = undefined;
    }
    // A run in flight is shared, whether it is the first run or a refresh someone else started.
    if (!entry) entry = this.start(key, plugin, cluster);
    return this.wait(entry, exec, options.signal);
  }

  private start(key: string, plugin: ApprovedExec, cluster: ClusterEntry): CacheEntry {
    const stop = new AbortController();
    const entry: CacheEntry = { promise: this.run(plugin, cluster, stop.signal), waiters: 0, stop };
    this.cache.set(key, entry);
    entry.promise.then(
      (credential) => {
        entry.credential = credential;
      },
      () => {
        // A failure is not cached: the next caller tries again.
        if (this.cache.get(key) === entry) this.cache.delete(key);
      },
    );
    return entry;
  }

  /** Waits for a run, giving up when the caller's signal aborts; the last caller to give up ends the plugin. */
  private async wait(entry: CacheEntry, exec: ExecConfig, signal: AbortSignal | undefined): Promise<ExecCredential> {
    if (!signal) {
      // A caller without a time limit keeps the run alive however many others give up.
      entry.waiters++;
      try {
        return await entry.promise;
      } finally {
        entry.waiters--;
      }
    }
    if (signal.aborted) throw abortError(signal, exec);
    entry.waiters++;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortError(signal, exec));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([entry.promise, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
      aborted.catch(() => undefined);
      if (--entry.waiters === 0 && signal.aborted && !entry.credential) entry.stop.abort();
    }
  }

  private expired(cred: ExecCredential): boolean {
    const exp = cred.expirationTimestamp;
    if (!exp) return false;
    return Date.parse(exp) - EXPIRY_SKEW_MS <= (this.options.now ?? Date.now)();
  }

  private interactive(exec: ExecConfig): boolean {
    // client-go refuses a v1 exec config without interactiveMode; v1beta1 defaults it to IfAvailable.
    const missing = execConfigProblem(exec);
    if (missing) throw new ConfigError(`exec plugin ${exec.command}: ${missing}`);
    const mode = exec.interactiveMode ?? 'IfAvailable';
    const available = this.options.interactiveAvailable ?? false;
    if (mode === 'Always' && !available) {
      throw new FleetError(
        'plugin',
        `exec plugin ${exec.command}: interactiveMode is Always but no terminal is available`,
      );
    }
    return mode !== 'Never' && available;
  }

  private async execInfo(exec: ExecConfig, cluster: ClusterEntry, interactive: boolean): Promise<string> {
    const spec: Record<string, unknown> = { interactive };
    if (exec.provideClusterInfo) {
      let caData = cluster['certificate-authority-data'];
      const caFile = cluster['certificate-authority'];
      if (!caData && caFile)
        caData = (await requireNamedFile(caFile, `certificate-authority ${caFile}`)).toString('base64');
      const ext = cluster.extensions?.find((e) => e.name === EXEC_CLUSTER_CONFIG_EXTENSION);
      spec.cluster = {
        server: cluster.server,
        'tls-server-name': cluster['tls-server-name'],
        'insecure-skip-tls-verify': cluster['insecure-skip-tls-verify'],
        'certificate-authority-data': caData,
        'proxy-url': cluster['proxy-url'],
        'disable-compression': cluster['disable-compression'],
        config: ext?.extension,
      };
    }
    return JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec });
  }

  private async run(plugin: ApprovedExec, cluster: ClusterEntry, stop: AbortSignal): Promise<ExecCredential> {
    const exec = plugin.exec;
    const command = exec.command;
    if (!command) throw new FleetError('plugin', 'exec plugin: no command configured');
    if (!exec.apiVersion || !EXEC_API_VERSIONS.includes(exec.apiVersion)) {
      throw new FleetError('plugin', `exec plugin ${command}: unsupported apiVersion "${exec.apiVersion ?? ''}"`);
    }
    const interactive = this.interactive(exec);
    if (!plugin.invocation) {
      const hint = exec.installHint ? `; ${exec.installHint.trim().split('\n')[0]}` : '';
      throw new FleetError('plugin', `exec plugin ${command}: ${plugin.unresolved ?? 'not approved'}${hint}`);
    }
    const invocation = plugin.invocation.withVariable(
      'KUBERNETES_EXEC_INFO',
      await this.execInfo(exec, cluster, interactive),
    );
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.runs++;
    const stderr = this.options.stderr ?? process.stderr;
    // The plugin talks to the user on stderr (a login hint, a device code): passed through as client-go does, but
    // scrubbed a whole line at a time so a secret split across two reads is still recognised, and never put into an
    // error message (so never into JSON or YAML output). An interactive plugin talks to the user as it runs, and a
    // prompt without a newline is shown once it sits idle. Without a terminal the stderr is held until the answer is
    // read, so a token the plugin logs is registered with the scrubber before any of that text is passed on.
    const lines = new ScrubbedLines((text) => stderr.write(text), { idleFlushMs: interactive ? 150 : undefined });
    const held: string[] = [];
    const onStderr = interactive ? (text: string) => lines.write(text) : (text: string) => held.push(text);
    try {
      const stdout = await runPlugin(command, exec, invocation, { interactive, timeoutMs, onStderr, stop });
      registerAnswer(stdout);
      return parseExecOutput(stdout, exec.apiVersion, command);
    } finally {
      for (const text of held.splice(0)) lines.write(text);
      lines.end();
    }
  }
}

/** Best effort, before any validation: the secrets of an answer, even a malformed one, never reach the screen. */
function registerAnswer(stdout: string): void {
  try {
    const status = (parseJson(stdout) as { status?: { token?: unknown; clientKeyData?: unknown } } | null)?.status;
    if (status && typeof status === 'object') {
      if (typeof status.token === 'string') registerSecret(status.token);
      if (typeof status.clientKeyData === 'string') registerSecret(status.clientKeyData);
    }
  } catch {
    // Not JSON: parseExecOutput says so.
  }
}

function abortError(signal: AbortSignal, exec: ExecConfig): FleetError {
  const reason: unknown = signal.reason;
  if (reason instanceof FleetError) return reason;
  return new FleetError(
    'timeout',
    `exec plugin ${exec.command}: stopped waiting: ${reason instanceof Error ? reason.message : 'time limit reached'}`,
  );
}

async function runPlugin(
  command: string,
  exec: ExecConfig,
  invocation: Invocation,
  o: { interactive: boolean; timeoutMs: number; onStderr: (text: string) => void; stop: AbortSignal },
): Promise<string> {
  let result;
  try {
    result = await runProcess(invocation, {
      timeoutMs: o.timeoutMs,
      interactive: o.interactive,
      onStderr: o.onStderr,
      signal: o.stop,
    });
  } catch (error) {
    // A hang is a timeout (its own limit, or every caller's limit passed), never a half-read answer.
    if (error instanceof ProcessTimeout)
      throw new FleetError('timeout', `exec plugin ${command}: no answer within ${formatDuration(o.timeoutMs)}`);
    if (error instanceof ProcessStopped)
      throw new FleetError('timeout', `exec plugin ${command}: stopped after the time limit`);
    if (error instanceof ProcessOutputTooLarge)
      throw new FleetError(
        'plugin',
        `exec plugin ${command}: wrote more than ${error.limit / 1024 / 1024} MiB on ${error.stream}; it was killed`,
      );
    const code = error instanceof ProcessStartError ? error.code : undefined;
    const hint = exec.installHint ? `; ${exec.installHint.trim().split('\n')[0]}` : '';
    const why =
      code === 'ENOENT' ? 'executable not found' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new FleetError('plugin', `exec plugin ${command}: ${why}${hint}`);
  }
  if (result.code === 0) return result.stdout;
  // Whatever it printed may hold a credential even when it failed: registered before its stderr is shown.
  registerAnswer(result.stdout);
  const said = result.stderr.length > 0 ? ' (its messages are on stderr)' : '';
  throw new FleetError('plugin', `exec plugin ${command} exited with ${result.code ?? result.signal}${said}`);
}

const keys = new WeakMap<ExecConfig, WeakMap<ClusterEntry, string>>();

function sameCredential(a: ExecCredential, b: ExecCredential): boolean {
  return (
    a === b ||
    (a.token === b.token && a.clientCertificateData === b.clientCertificateData && a.clientKeyData === b.clientKeyData)
  );
}

/** JSON with object keys sorted, so the cache key does not depend on the order fields were written in a file. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function parseExecOutput(stdout: string, apiVersion: string, command: string): ExecCredential {
  let value: { kind?: unknown; apiVersion?: unknown; status?: Record<string, unknown> } | null;
  try {
    value = parseJson(stdout) as typeof value;
  } catch (error) {
    throw new FleetError('plugin', `exec plugin ${command}: output is ${jsonProblem(error, 'not valid JSON')}`);
  }
  if (!value || value.kind !== 'ExecCredential')
    throw new FleetError('plugin', `exec plugin ${command}: output is not an ExecCredential`);
  if (value.apiVersion !== apiVersion) {
    throw new FleetError(
      'plugin',
      `exec plugin ${command}: returned apiVersion "${String(value.apiVersion)}", expected "${apiVersion}"`,
    );
  }
  const status = value.status;
  if (!status || typeof status !== 'object')
    throw new FleetError('plugin', `exec plugin ${command}: output has no status`);
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const cred: ExecCredential = {
    token: text(status.token),
    clientCertificateData: text(status.clientCertificateData),
    clientKeyData: text(status.clientKeyData),
    expirationTimestamp: text(status.expirationTimestamp),
  };
  // Registered before any check can fail, so even an error message cannot carry them.
  registerSecret(cred.token);
  registerSecret(cred.clientKeyData);
  if (Boolean(cred.clientCertificateData) !== Boolean(cred.clientKeyData)) {
    throw new FleetError(
      'plugin',
      `exec plugin ${command}: clientCertificateData and clientKeyData must be given together`,
    );
  }
  if (!cred.token && !cred.clientCertificateData) {
    throw new FleetError('plugin', `exec plugin ${command}: status has neither a token nor a client certificate`);
  }
  if (cred.expirationTimestamp && Number.isNaN(Date.parse(cred.expirationTimestamp))) {
    throw new FleetError(
      'plugin',
      `exec plugin ${command}: expirationTimestamp "${cred.expirationTimestamp}" is not a time`,
    );
  }
  return cred;
}
