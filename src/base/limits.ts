/**
 * Limits fleet states once. The shortest token the API server issues: a TokenRequest's or a CertificateSigningRequest's
 * expirationSeconds below 10 minutes is refused (creds --duration, wi --expiration, the hub plugin's config).
 */
export const MIN_TOKEN_SECONDS = 600

/** The time limit of one request to a cluster when nothing sets one (the --request-timeout default, 10s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000

/**
 * The largest response body fleet reads from a server (64 MiB), unless FLEET_MAX_RESPONSE_BYTES says otherwise: a
 * server that streams gigabytes ends its own request, not the run (every other cluster's answer included). The API
 * server's own largest answers are lists, which fleet pages (providers/hub/client.ts).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024

/** The environment variable that overrides DEFAULT_MAX_RESPONSE_BYTES (bytes, or with a Ki, Mi or Gi suffix). */
export const MAX_RESPONSE_BYTES_ENV = 'FLEET_MAX_RESPONSE_BYTES'

/**
 * How deep a server's JSON may nest (arrays and objects): deeper is refused before anything parses it, so no output
 * format (JSON.stringify, YAML, the table) runs out of stack on it. Kubernetes objects nest a few dozen levels (an
 * OpenAPI schema in a CRD perhaps a hundred).
 */
export const MAX_JSON_DEPTH = 1000
