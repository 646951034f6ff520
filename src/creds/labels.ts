/**
 * How fleet marks what it makes: the standard managed-by label (so `kubectl get -l` finds everything), and annotations
 * that describe a credential without containing it. Shared by generate (writes them) and list (reads them).
 */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'fleet';
/** The label every object fleet makes carries (spread it: a caller adds its own labels to a copy). */
export const MANAGED_BY_LABELS: Readonly<Record<string, string>> = { [MANAGED_BY_LABEL]: MANAGED_BY };
/** The label selector of everything fleet made, and the words messages use for that mark. */
export const MANAGED_BY_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

const PREFIX = 'fleet.dev/';
export const ANNOTATIONS = {
  method: `${PREFIX}credential-method`,
  identity: `${PREFIX}credential-identity`,
  scope: `${PREFIX}credential-scope`,
  access: `${PREFIX}credential-access`,
  expires: `${PREFIX}credential-expires`,
  anchor: `${PREFIX}credential-anchor`,
  cluster: `${PREFIX}credential-cluster`,
  fingerprint: `${PREFIX}kubeconfig-sha256`,
  format: `${PREFIX}credential-format`,
  // What identifies the credential's cluster from any invocation (cluster-identity.ts); `cluster` above is the name as typed.
  clusterServer: `${PREFIX}cluster-server`,
  clusterCaSha256: `${PREFIX}cluster-ca-sha256`,
  clusterId: `${PREFIX}cluster-id`,
  clusterIdSource: `${PREFIX}cluster-id-source`,
  clusterContext: `${PREFIX}cluster-context`,
  /** The lifetime asked for, in seconds (generate's --duration): what every rotation asks for again. */
  lifetime: `${PREFIX}credential-lifetime`,
} as const;

/**
 * What marks an adopted Secret or file (kept after the adoption, so `creds list`, the exporter and people can tell): the
 * old credential, and when. Written by creds adopt, read by creds list.
 */
export const ADOPTED_FROM = `${PREFIX}adopted-from`;
export const ADOPTED_AT = `${PREFIX}adopted`;

/** The same facts in a kubeconfig file's fleet.dev/credential extension: the annotation names without the prefix. */
export const factKey = (annotation: string) => annotation.slice(PREFIX.length);

/** The label that says which credential an RBAC object or anchor belongs to (a short hash, labels are 63 chars). */
export const CREDENTIAL_LABEL = `${PREFIX}credential`;

export function isFleetManaged(labels: Record<string, string> | undefined): boolean {
  return labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}
