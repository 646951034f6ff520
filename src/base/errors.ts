/**
 * One error model for the whole CLI. Every failure a user can see is a FleetError with a kind (what went wrong, in the
 * vocabulary of the per-cluster results) and an exit code (2 for usage and configuration, 1 for a failed check or cluster).
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
] as const
/** Every kind is listed in README "Exit codes and errors" (a unit test keeps the two in step). */
export type ErrorKind = (typeof ERROR_KINDS)[number]

export const EXIT_FAILED = 1
export const EXIT_USAGE = 2

export class FleetError extends Error {
  readonly kind: ErrorKind
  readonly exitCode: number

  constructor(kind: ErrorKind, message: string, options: {cause?: unknown; exitCode?: number} = {}) {
    super(message, {cause: options.cause})
    this.name = 'FleetError'
    this.kind = kind
    this.exitCode = options.exitCode ?? (kind === 'config' || kind === 'usage' ? EXIT_USAGE : EXIT_FAILED)
  }
}

/** Bad configuration: a kubeconfig, a fleet config, a flag value that names something that does not exist. Exit 2. */
export class ConfigError extends FleetError {
  constructor(message: string, options: {cause?: unknown} = {}) {
    super('config', message, {...options, exitCode: EXIT_USAGE})
    this.name = 'ConfigError'
  }
}

export class UsageError extends FleetError {
  constructor(message: string) {
    super('usage', message, {exitCode: EXIT_USAGE})
    this.name = 'UsageError'
  }
}

/** The error as it appears in JSON output and per-cluster results. */
export interface ErrorInfo {
  kind: ErrorKind
  message: string
}

export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof FleetError) return {kind: err.kind, message: err.message}
  return {kind: 'internal', message: err instanceof Error ? err.message : String(err)}
}

/** Whatever was thrown, as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}
