import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs the built CLI (bin/run.js over dist/) as a user would: a separate process, no TTY, CI set unless overridden. */
export const FLEET_BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

let empty: string | undefined;
function emptyDir(): string {
  empty ??= mkdtempSync(join(tmpdir(), 'fleet-cwd-'));
  return empty;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws with the output shown if it is not JSON). */
  json<T = any>(): T;
}

/**
 * The environment fleet runs with in tests: not a terminal's (CI, no colour), and never the developer's own kubeconfig,
 * home, fleet.yaml or FLEET_CONFIG unless `extra` names them.
 */
export function fleetTestEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    NO_COLOR: '1',
    KUBECONFIG: '',
    HOME: process.env.FLEET_TEST_HOME ?? '/nonexistent-fleet-test-home',
    XDG_CONFIG_HOME: '/nonexistent-fleet-test-config',
    ...extra,
  };
  if (!('FLEET_CONFIG' in extra)) delete env.FLEET_CONFIG;
  // Tables fit COLUMNS when it is set (src/cli/width.ts): a test pins a width by naming it, never by inheriting one.
  if (!('COLUMNS' in extra)) delete env.COLUMNS;
  return env;
}

export async function runFleet(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number; executable?: string } = {},
): Promise<CliResult> {
  const env = fleetTestEnv(options.env);
  return new Promise((resolve, reject) => {
    // executable: fleet's single executable (scripts/executable.mjs) instead of `node bin/run.js`.
    const [cmd, argv] = options.executable ? [options.executable, args] : [process.execPath, [FLEET_BIN, ...args]];
    const child = spawn(cmd, argv, {
      env,
      // An empty directory by default, so a fleet.yaml in the repository cannot change what a test sees.
      cwd: options.cwd ?? emptyDir(),
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json<T>() {
          try {
            return JSON.parse(stdout) as T;
          } catch {
            throw new Error(
              `fleet ${args.join(' ')}: stdout is not JSON (exit ${code})\nstdout: ${stdout}\nstderr: ${stderr}`,
            );
          }
        },
      }),
    );
    child.stdin.end(options.input ?? '');
  });
}

const shellQuote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * Runs fleet with a pty for stdin, stdout and stderr (util-linux `script`), returning every byte it wrote: what a person
 * at a terminal sees (colour, the progress line). No CI, NO_COLOR, FORCE_COLOR or TERM unless `env` sets them.
 */
export function inTerminal(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Promise<string> {
  const command = [process.execPath, FLEET_BIN, ...args].map(shellQuote).join(' ');
  const clean: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: '',
    HOME: '/nonexistent-fleet-test-home',
    XDG_CONFIG_HOME: '/nonexistent-fleet-test-config',
  };
  for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TERM', 'FLEET_CONFIG']) delete clean[k];
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: options.cwd ?? emptyDir(),
      env: { ...clean, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** Environment of a person at a terminal: an empty HOME, nothing else that names a kubeconfig, hub or fleet config. */
export function cleanEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    HOME: home,
    KUBECONFIG: undefined,
    XDG_CONFIG_HOME: undefined,
    KUBERNETES_SERVICE_HOST: undefined,
    KUBERNETES_SERVICE_PORT: undefined,
    FLEET_IN_CLUSTER_TOKEN_FILE: undefined,
    FLEET_IN_CLUSTER_CA_FILE: undefined,
    ...extra,
  };
}
