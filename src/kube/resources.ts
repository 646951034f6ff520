import { FleetError } from '../base/errors.js';

/**
 * What a REST path is made of: the API group ('' for the core group), its version, the resource (plural, as in the
 * URL), whether objects live in a namespace, and the kind objects of it carry. Every request fleet sends for an object
 * starts from one of these (kube/paths.ts builds and encodes the path), so a group or a plural is written once.
 */
export interface Resource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly kind: string;
}

const resource = (group: string, version: string, plural: string, kind: string, namespaced: boolean): Resource =>
  Object.freeze({ group, version, plural, namespaced, kind });

/** `v1` for the core group, `group/version` otherwise: an object's apiVersion. */
export const apiVersionOf = (r: Resource): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** The same resource at another version (reviews and ClusterProperty are tried at several; Cluster API at the hub's). */
export const atVersion = (r: Resource, version: string): Resource =>
  version === r.version ? r : resource(r.group, version, r.plural, r.kind, r.namespaced);

/** A resource fleet knows only at run time (a Flux kind, a group named in configuration). */
export const customResource = resource;

const RBAC = 'rbac.authorization.k8s.io';

export const NAMESPACE = resource('', 'v1', 'namespaces', 'Namespace', false);
export const SECRET = resource('', 'v1', 'secrets', 'Secret', true);
export const CONFIG_MAP = resource('', 'v1', 'configmaps', 'ConfigMap', true);
export const SERVICE_ACCOUNT = resource('', 'v1', 'serviceaccounts', 'ServiceAccount', true);
export const ROLE = resource(RBAC, 'v1', 'roles', 'Role', true);
export const ROLE_BINDING = resource(RBAC, 'v1', 'rolebindings', 'RoleBinding', true);
export const CLUSTER_ROLE = resource(RBAC, 'v1', 'clusterroles', 'ClusterRole', false);
export const CLUSTER_ROLE_BINDING = resource(RBAC, 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false);
export const LEASE = resource('coordination.k8s.io', 'v1', 'leases', 'Lease', true);
// What may mount or reference a Secret (creds/still-used.ts looks before a token Secret is deleted).
export const POD = resource('', 'v1', 'pods', 'Pod', true);
export const DEPLOYMENT = resource('apps', 'v1', 'deployments', 'Deployment', true);
export const STATEFUL_SET = resource('apps', 'v1', 'statefulsets', 'StatefulSet', true);
export const DAEMON_SET = resource('apps', 'v1', 'daemonsets', 'DaemonSet', true);
export const REPLICA_SET = resource('apps', 'v1', 'replicasets', 'ReplicaSet', true);
export const JOB = resource('batch', 'v1', 'jobs', 'Job', true);
export const CRON_JOB = resource('batch', 'v1', 'cronjobs', 'CronJob', true);
export const CERTIFICATE_SIGNING_REQUEST = resource(
  'certificates.k8s.io',
  'v1',
  'certificatesigningrequests',
  'CertificateSigningRequest',
  false,
);

/** ServiceAccount's subresource that mints a token (a TokenRequest is POSTed to it). */
export const TOKEN_REQUEST = {
  resource: SERVICE_ACCOUNT,
  subresource: 'token',
  kind: 'TokenRequest',
  apiVersion: 'authentication.k8s.io/v1',
} as const;

// Reviews: created (POST), never stored; the answer is the object with its status filled in.
export const SELF_SUBJECT_REVIEW = resource(
  'authentication.k8s.io',
  'v1',
  'selfsubjectreviews',
  'SelfSubjectReview',
  false,
);
export const SELF_SUBJECT_ACCESS_REVIEW = resource(
  'authorization.k8s.io',
  'v1',
  'selfsubjectaccessreviews',
  'SelfSubjectAccessReview',
  false,
);
export const SELF_SUBJECT_RULES_REVIEW = resource(
  'authorization.k8s.io',
  'v1',
  'selfsubjectrulesreviews',
  'SelfSubjectRulesReview',
  false,
);
export const SUBJECT_ACCESS_REVIEW = resource(
  'authorization.k8s.io',
  'v1',
  'subjectaccessreviews',
  'SubjectAccessReview',
  false,
);

/** KEP-2149's ClusterProperty (about.k8s.io; served as v1beta1 or v1alpha1). */
export const CLUSTER_PROPERTY = resource('about.k8s.io', 'v1beta1', 'clusterproperties', 'ClusterProperty', false);
/** The Cluster Inventory API's ClusterProfile (sigs.k8s.io/cluster-inventory-api). */
export const CLUSTER_PROFILE = resource('multicluster.x-k8s.io', 'v1alpha1', 'clusterprofiles', 'ClusterProfile', true);
/** Cluster API's Cluster; the version is whichever the hub serves (providers/hub/cluster-api.ts asks). */
export const CAPI_CLUSTER = resource('cluster.x-k8s.io', 'v1beta1', 'clusters', 'Cluster', true);

// kcp: the objects of a workspace are under /clusters/<workspace path> (Where.workspace in kube/paths.ts).
export const KCP_WORKSPACE = resource('tenancy.kcp.io', 'v1alpha1', 'workspaces', 'Workspace', false);
export const KCP_LOGICAL_CLUSTER = resource('core.kcp.io', 'v1alpha1', 'logicalclusters', 'LogicalCluster', false);
export const KCP_SHARD = resource('core.kcp.io', 'v1alpha1', 'shards', 'Shard', false);

/** The resources objects fleet writes are looked up in by kind (apply, update and delete of a KubeObject). */
const BY_KIND: ReadonlyMap<string, Resource> = new Map(
  [
    NAMESPACE,
    SECRET,
    CONFIG_MAP,
    SERVICE_ACCOUNT,
    ROLE,
    ROLE_BINDING,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    LEASE,
    CERTIFICATE_SIGNING_REQUEST,
    CLUSTER_PROFILE,
  ].map((r) => [r.kind, r]),
);

/** The resource of an object fleet writes, from its kind (and apiVersion, when given, for the version). */
export function resourceOf(o: { kind: string; apiVersion?: string }): Resource {
  const r = BY_KIND.get(o.kind);
  // An object fleet builds with a kind it has no resource for is fleet's own mistake, not the user's.
  if (!r) throw new FleetError('internal', `no resource for kind ${o.kind}`);
  if (o.apiVersion === undefined || o.apiVersion === apiVersionOf(r)) return r;
  const slash = o.apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : o.apiVersion.slice(0, slash);
  if (group !== r.group) throw new FleetError('internal', `kind ${o.kind} is not in ${o.apiVersion}`);
  return atVersion(r, o.apiVersion.slice(slash + 1));
}
/** Who a bearer token is, asked by a credential that may (create tokenreviews): what the authenticators say of it. */
export const TOKEN_REVIEW = resource('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false);
