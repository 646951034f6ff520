/**
 * Limits fleet states once. The shortest token the API server issues: a TokenRequest's or a CertificateSigningRequest's
 * expirationSeconds below 10 minutes is refused (creds --duration, wi --expiration, the hub plugin's config).
 */
export const MIN_TOKEN_SECONDS = 600;

/** The time limit of one request to a cluster when nothing sets one (the --request-timeout default, 10s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The largest response body fleet reads from a server (64 MiB), unless FLEET_MAX_RESPONSE_BYTES says otherwise: a
 * server that streams gigabytes ends its own request, not the run (every other cluster's answer included). The API
 * server's own largest answers are lists, which fleet pages (providers/hub/client.ts).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The environment variable that overrides DEFAULT_MAX_RESPONSE_BYTES (bytes, or with a Ki, Mi or Gi suffix). */
export const MAX_RESPONSE_BYTES_ENV = 'FLEET_MAX_RESPONSE_BYTES';

/**
 * How deep a server's JSON may nest (arrays and objects): deeper is refused before anything parses it, so no output
 * format (JSON.stringify, YAML, the table) runs out of stack on it. Kubernetes objects nest a few dozen levels (an
 * OpenAPI schema in a CRD perhaps a hundred).
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * The largest file a kubeconfig may name (certificate-authority, client-certificate, client-key, tokenFile): 1 MiB. A
 * whole system CA bundle (/etc/ssl/certs/ca-certificates.crt) is about 200 KB; a certificate, key or token is a few KB.
 * Such a file must also be a regular file (base/files.ts `readNamedFile`), so /dev/zero or a FIFO is refused at once.
 */
export const MAX_NAMED_FILE_BYTES = 1024 * 1024;

/**
 * The largest kubeconfig (or other configuration file) fleet reads: 64 MiB. Kubeconfig files may be pipes
 * (`--kubeconfig <(cmd)`), so this is counted while reading; 10,000 contexts with embedded certificates take ~40 MB.
 */
export const MAX_CONFIG_FILE_BYTES = 64 * 1024 * 1024;

/**
 * How deep a YAML or JSON document fleet reads may nest, aliases expanded: 100 levels (js-yaml's own default for what
 * it composes). A kubeconfig nests 6 levels; deeper input is refused before any walk or output could run out of stack.
 */
export const MAX_DOCUMENT_DEPTH = 100;

/**
 * How many nodes YAML aliases may add to a document beyond what its text writes: 1,000,000 (a string counts one node
 * per 64 characters). js-yaml shares an aliased node by reference, so "billion laughs" (9 levels of 9 aliases) parses
 * in a moment and expands to 387 million nodes only later (JSON output, a walk); 2,000 users sharing one exec block
 * through an anchor add ~20,000.
 */
export const MAX_ALIAS_EXPANSION = 1_000_000;

/**
 * How much a program fleet runs (an exec credential plugin, kind) may write on stdout, and on stderr: 4 MiB each. An
 * ExecCredential with a certificate chain is a few KB; one that streams without end is killed instead of filling memory.
 */
export const MAX_PROCESS_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * How soon after its anchor's deletion the API server usually refuses a token: it keeps a token it authenticated for up
 * to 10 s (its token cache), and the old credential is polled every 2 s at most (confirmDead). Said to the user while
 * fleet waits (the live line, an interrupt's acknowledgement); the wait's own limit is longer (30 s).
 */
export const TOKEN_REFUSED_USUALLY_WITHIN_MS = 12_000;
