import type { V1SubjectAccessReviewSpec, V1SubjectAccessReviewStatus } from '@kubernetes/client-node';
import { mapLimit } from '../base/concurrency.js';
import { FleetError, UsageError, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  NAMESPACE,
  ROLE,
  ROLE_BINDING,
  type Resource,
  SUBJECT_ACCESS_REVIEW,
} from '../kube/resources.js';
import { getObject, listObjects } from '../kube/typed.js';
import type { ClusterSource } from '../providers/types.js';
import type { NonResourceAttributes, ResourceAttributes } from './access-review.js';
import { type AccessQuery, parseAccessQuery, resolveResource, resourcesFor } from './can-i.js';
import {
  type ClusterRole,
  type ClusterRoleBinding,
  type Grant,
  type Question,
  type RbacSnapshot,
  type Role,
  type RoleBinding,
  type Subject,
  evaluate,
  serviceAccountUsername,
} from './rbac-eval.js';
import { createReview } from './review.js';

/**
 * `auth who-can`: the subjects RBAC allows to do something on one cluster, each with the bindings that allow it, each
 * confirmed by a SubjectAccessReview (the authorizer's own answer for that subject). What RBAC objects cannot show
 * (other authorizers, system:masters, bindings the caller may not list) is said in notes and warnings.
 */

/**
 * Parses `VERB RESOURCE [NAME]` for who-can. Unlike `auth can-i` (kubectl's RESOURCE/NAME), `RESOURCE/SUB` is a
 * subresource here, written as RBAC rules write it (`pods/exec`), because the name has its own argument.
 */
export function parseWhoCanQuery(input: {
  verb: string;
  resource: string;
  name?: string;
  subresource?: string;
}): AccessQuery {
  const arg = input.resource.trim();
  if (arg.startsWith('/')) return parseAccessQuery({ ...input, resource: arg });
  const slash = arg.indexOf('/');
  if (slash === -1) return parseAccessQuery({ ...input, resource: arg });
  const resource = arg.slice(0, slash);
  const sub = arg.slice(slash + 1);
  if (sub === '' || sub.includes('/')) throw new UsageError(`cannot read "${arg}" as RESOURCE/SUBRESOURCE`);
  if (input.subresource && input.subresource !== sub)
    throw new UsageError(`give the subresource either as ${arg} or as --subresource, not both`);
  return parseAccessQuery({ ...input, resource, subresource: sub });
}

export interface SubjectAnswer extends Subject {
  grants: Grant[];
  /** The SubjectAccessReview's answer for this subject (absent with --no-confirm or when it could not be asked). */
  confirmed?: boolean;
  /** The authorizer's reason, when it gave one. */
  reason?: string;
  /** The namespace the review asked about ("" cluster-wide): where the subject's first grant applies. */
  confirmedIn?: string;
}

export interface LimitNote {
  code: 'system-masters' | 'node-authorizer' | 'other-authorizers' | 'kcp-authorizers';
  message: string;
}

export interface WhoCan {
  /** The question as the authorizer gets it, after discovery resolved the resource. */
  attributes: { resourceAttributes: ResourceAttributes } | { nonResourceAttributes: NonResourceAttributes };
  /** true when RoleBindings of every namespace were read (-A with a namespaced resource). */
  allNamespaces: boolean;
  subjects: SubjectAnswer[];
  /** done: every subject asked; skipped: --no-confirm; failed: the reviews could not be made (confirmationError). */
  confirmation: 'done' | 'skipped' | 'failed';
  confirmationError?: string;
  /** Some RBAC objects could not be read: subjects granted through them are missing (see warnings). */
  incomplete: boolean;
  /**
   * false when the one namespace asked about does not exist on this cluster (a typo, or not created there yet): only
   * ClusterRoleBindings grant anything in it, which is what is listed, and it is said. Absent when it exists or could not be
   * read.
   */
  namespaceExists?: false;
  /** Bindings or roles that could not be read or resolved, subjects confirmation did not agree with. */
  warnings: string[];
  /** What RBAC objects cannot show on this cluster. */
  notes: LimitNote[];
}

export interface WhoCanOptions {
  /** One namespace, or undefined for all namespaces. */
  namespace: string | undefined;
  confirm: boolean;
  source?: ClusterSource;
  /** SubjectAccessReviews in flight at once on this cluster. */
  concurrency?: number;
}

/** A list, or the reason it could not be read (403 and 404 only: anything else fails the cluster). */
interface Listed<T> {
  items?: T[];
  warning?: string;
}

/** Whether a namespace exists: undefined when that cannot be read (a caller who may not get Namespaces). */
async function namespaceExists(client: KubeClient, ns: string): Promise<boolean | undefined> {
  try {
    return (await getObject(client, NAMESPACE, ns, { what: `get namespace ${ns}` })) !== undefined;
  } catch (error) {
    if (error instanceof FleetError && error.kind === 'forbidden') return undefined;
    throw error;
  }
}

/** `namespace`: one namespace, or '' for all of them (a cluster-scoped resource has none). */
async function list<T>(client: KubeClient, r: Resource, namespace: string, what: string): Promise<Listed<T>> {
  try {
    return { items: await listObjects<T>(client, r, { namespace, what: `list ${what}` }) };
  } catch (error) {
    // 403 and 404 only (httpError's forbidden and not-found): anything else fails the cluster.
    if (error instanceof FleetError && (error.kind === 'forbidden' || error.kind === 'not-found'))
      return { warning: `${error.message}: subjects granted through them are not shown` };
    throw error;
  }
}

/** Resolves the question on this cluster (discovery), as `auth can-i` does. */
async function question(
  client: KubeClient,
  q: AccessQuery,
  namespace: string | undefined,
  warnings: string[],
): Promise<{ question: Question; clusterWide: boolean; oneNamespace?: boolean }> {
  if (q.nonResourceURL)
    return { question: { nonResource: { path: q.nonResourceURL, verb: q.verb } }, clusterWide: true };
  const resolved = resolveResource(await resourcesFor(client, q), q, namespace ?? '');
  warnings.push(...resolved.warnings);
  return {
    question: { resource: resolved.attributes },
    clusterWide: resolved.scope === 'cluster',
    // The question is about one namespace whatever was asked (a Namespace object by name).
    oneNamespace: resolved.scope === 'own-namespace',
  };
}

export async function whoCan(client: KubeClient, q: AccessQuery, o: WhoCanOptions): Promise<WhoCan> {
  const warnings: string[] = [];
  const { question: asked, clusterWide, oneNamespace } = await question(client, q, o.namespace, warnings);
  const allNamespaces = !clusterWide && !oneNamespace && asked.resource !== undefined && o.namespace === undefined;
  const ns = asked.resource?.namespace ?? '';
  const readRoles = asked.resource !== undefined && (allNamespaces || ns !== '');
  const scope = allNamespaces ? '' : ns;
  const [exists, crs, crbs, roles, rbs] = await Promise.all([
    readRoles && !allNamespaces ? namespaceExists(client, ns) : Promise.resolve(undefined),
    list<ClusterRole>(client, CLUSTER_ROLE, '', 'clusterroles'),
    list<ClusterRoleBinding>(client, CLUSTER_ROLE_BINDING, '', 'clusterrolebindings'),
    readRoles
      ? list<Role>(client, ROLE, scope, allNamespaces ? 'roles in all namespaces' : `roles in namespace ${ns}`)
      : Promise.resolve({ items: [] } as Listed<never>),
    readRoles
      ? list<RoleBinding>(
          client,
          ROLE_BINDING,
          scope,
          allNamespaces ? 'rolebindings in all namespaces' : `rolebindings in namespace ${ns}`,
        )
      : Promise.resolve({ items: [] } as Listed<never>),
  ]);
  const unreadable = [crs, crbs, roles, rbs].filter((l) => l.warning !== undefined);
  // Nothing could be read: nothing was checked, which must not look like "nobody may".
  if (!crbs.items && !(readRoles && rbs.items)) {
    throw new FleetError(
      'forbidden',
      `cannot read any RBAC binding: ${[crbs, rbs]
        .map((l) => l.warning)
        .filter(Boolean)
        .join('; ')}`,
    );
  }
  if (exists === false)
    warnings.push(`namespace "${ns}" does not exist: only ClusterRoleBindings grant anything in it`);
  warnings.push(...unreadable.map((l) => l.warning!));
  const snapshot: RbacSnapshot = {
    clusterRoles: crs.items,
    clusterRoleBindings: crbs.items,
    roles: roles.items,
    roleBindings: rbs.items,
  };
  const kcp = o.source?.kind === 'kcp-workspace';
  const evaluation = evaluate(snapshot, asked, {
    allNamespaces,
    ...(kcp
      ? {
          clusterRolesElsewhere:
            'kcp may resolve it from its bootstrap policy (logical cluster system:admin), which is not readable from a workspace',
        }
      : {}),
  });
  warnings.push(...evaluation.warnings);
  const subjects: SubjectAnswer[] = evaluation.subjects;
  const result: WhoCan = {
    attributes: asked.resource ? { resourceAttributes: asked.resource } : { nonResourceAttributes: asked.nonResource },
    allNamespaces,
    ...(exists === false ? { namespaceExists: false as const } : {}),
    subjects,
    confirmation: o.confirm ? 'done' : 'skipped',
    incomplete: unreadable.length > 0 || evaluation.incomplete === true,
    warnings,
    notes: limitNotes(o.source),
  };
  if (o.confirm) {
    try {
      await mapLimit(subjects, o.concurrency ?? 8, async (s) => {
        const where = confirmNamespace(s, asked);
        const answer = await subjectAccessReview(client, s, asked, where);
        s.confirmed = answer.allowed;
        if (answer.reason) s.reason = answer.reason;
        if (asked.resource) s.confirmedIn = where;
      });
    } catch (error) {
      // The reviews need "create subjectaccessreviews"; without it the subjects stand unconfirmed, and that is said.
      for (const s of subjects) delete s.confirmed;
      result.confirmation = 'failed';
      result.confirmationError = toErrorInfo(error).message;
    }
    for (const s of subjects) {
      if (s.confirmed === false)
        warnings.push(
          `${describeSubject(s)}: RBAC's bindings allow it, but the authorizer said no${s.reason ? ` (${s.reason})` : ''}`,
        );
    }
  }
  return result;
}

/** A subject's first grant decides where it is asked about: cluster-wide if any grant is, else that RoleBinding's namespace. */
function confirmNamespace(s: SubjectAnswer, q: Question): string {
  if (!q.resource) return '';
  if (s.grants.some((g) => g.namespace === '')) return q.resource.namespace;
  return q.resource.namespace !== '' ? q.resource.namespace : s.grants[0].namespace;
}

/** The SubjectAccessReview spec for a subject: a user by name, a group as a group, a ServiceAccount by its username. */
export function reviewSubject(s: Subject): { user?: string; groups?: string[] } {
  if (s.kind === 'Group') return { groups: [s.name] };
  if (s.kind === 'ServiceAccount') return { user: serviceAccountUsername(s.namespace!, s.name) };
  return { user: s.name };
}

export async function subjectAccessReview(
  client: KubeClient,
  s: Subject,
  q: Question,
  namespace: string,
): Promise<{ allowed: boolean; reason?: string }> {
  const spec = {
    ...reviewSubject(s),
    ...(q.resource
      ? { resourceAttributes: dropEmpty({ ...q.resource, namespace }) }
      : { nonResourceAttributes: { ...q.nonResource } }),
  } satisfies Wire<V1SubjectAccessReviewSpec>;
  const review = await createReview<Partial<Wire<V1SubjectAccessReviewStatus>>>(client, {
    resource: SUBJECT_ACCESS_REVIEW,
    spec,
  });
  return { allowed: review.status.allowed === true, ...(review.status.reason ? { reason: review.status.reason } : {}) };
}

function dropEmpty(a: ResourceAttributes): Partial<ResourceAttributes> {
  const out: Partial<ResourceAttributes> = { ...a };
  if (!out.subresource) delete out.subresource;
  if (!out.name) delete out.name;
  return out;
}

export function describeSubject(s: Subject): string {
  return s.kind === 'ServiceAccount' ? `ServiceAccount ${s.namespace}/${s.name}` : `${s.kind} ${s.name}`;
}

/** What the RBAC objects of a cluster cannot show: said on every answer, never left for the reader to guess. */
export function limitNotes(source?: ClusterSource): LimitNote[] {
  const notes: LimitNote[] = [
    {
      code: 'system-masters',
      message:
        'members of group system:masters are allowed everything before any authorizer runs, whatever the bindings say',
    },
    {
      code: 'node-authorizer',
      message:
        'kubelets (group system:nodes) are also authorized by the Node authorizer for objects bound to their node; those grants are not RBAC objects and are not listed',
    },
    {
      code: 'other-authorizers',
      message:
        'a webhook (or ABAC) authorizer configured on the API server may allow more; it is not visible through the API',
    },
  ];
  if (source?.kind === 'kcp-workspace') {
    notes.push({
      code: 'kcp-authorizers',
      message:
        "kcp also authorizes with workspace access (verb access on /), its bootstrap policy and APIExport maximal permission policies; only this workspace's RBAC objects are listed",
    });
  }
  return notes;
}
