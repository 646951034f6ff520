/**
 * One error model for the whole CLI. Every failure a user can see is a FleetError with a kind (what went wrong, in the
 * vocabulary of the per-cluster results) and an exit code (2 for usage and configuration, 1 for a failed check or cluster,
 * 130 or 143 when interrupted by SIGINT or SIGTERM).
 */
export const ERROR_KINDS = [
  'unreachable',
  'tls',
  'unauthorized',
  'forbidden',
  'timeout',
  'not-found',
  'api-missing',
  'plugin',
  'config',
  'usage',
  'server',
  'internal',
  'interrupted',
] as const;
/** Every kind is listed in README "Exit codes and errors" (a unit test keeps the two in step). */
export type ErrorKind = (typeof ERROR_KINDS)[number];

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** SIGINT (Ctrl-C): 128 + 2, what a shell reports for a program a signal ended. */
export const EXIT_INTERRUPTED = 130;
/** SIGTERM (a CronJob's Pod stopped, `kill`): 128 + 15. */
export const EXIT_TERMINATED = 143;

export class FleetError extends Error {
  readonly kind: ErrorKind;
  readonly exitCode: number;

  constructor(kind: ErrorKind, message: string, options: { cause?: unknown; exitCode?: number } = {}) {
    super(message, { cause: options.cause });
    this.name = 'FleetError';
    this.kind = kind;
    this.exitCode = options.exitCode ?? (kind === 'config' || kind === 'usage' ? EXIT_USAGE : EXIT_FAILED);
  }
}

/** Bad configuration: a kubeconfig, a fleet config, a flag value that names something that does not exist. Exit 2. */
export class ConfigError extends FleetError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('config', message, { ...options, exitCode: EXIT_USAGE });
    this.name = 'ConfigError';
  }
}

export class UsageError extends FleetError {
  constructor(message: string) {
    super('usage', message, { exitCode: EXIT_USAGE });
    this.name = 'UsageError';
  }
}

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

/**
 * The user (or whatever runs fleet) interrupted the command with SIGINT or SIGTERM. A command that makes things undoes
 * what it made first, as on a failure; the message says what happened to them. Exit 130 (SIGINT) or 143 (SIGTERM).
 */
export class Interrupted extends FleetError {
  constructor(
    readonly signalName: InterruptSignal,
    message = `interrupted (${signalName})`,
  ) {
    super('interrupted', message, { exitCode: signalName === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED });
    this.name = 'Interrupted';
  }
}

/** The error as it appears in JSON output and per-cluster results. */
export interface ErrorInfo {
  kind: ErrorKind;
  message: string;
}

export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof FleetError) return { kind: err.kind, message: err.message };
  return { kind: 'internal', message: err instanceof Error ? err.message : String(err) };
}

/** Whatever was thrown, as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
