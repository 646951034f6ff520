/**
 * Limits fleet states once. The shortest token the API server issues: a TokenRequest's or a CertificateSigningRequest's
 * expirationSeconds below 10 minutes is refused (creds --duration, wi --expiration, the hub plugin's config).
 */
export const MIN_TOKEN_SECONDS = 600

/** The time limit of one request to a cluster when nothing sets one (the --request-timeout default, 10s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
