/**
 * How fleet marks what it makes: the standard managed-by label (so `kubectl get -l` finds everything), and annotations
 * that describe a credential without containing it. Shared by generate (writes them) and list (reads them).
 */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by'
export const MANAGED_BY = 'fleet'
export const FIELD_MANAGER = 'fleet'

const PREFIX = 'fleet.dev/'
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
  /** The lifetime asked for, in seconds (generate's --duration): what every rotation asks for again. */
  lifetime: `${PREFIX}credential-lifetime`,
} as const

/** The label that says which credential an RBAC object or anchor belongs to (a short hash, labels are 63 chars). */
export const CREDENTIAL_LABEL = `${PREFIX}credential`

export function isFleetManaged(labels: Record<string, string> | undefined): boolean {
  return labels?.[MANAGED_BY_LABEL] === MANAGED_BY
}
