import type { V1SelfSubjectAccessReviewSpec, V1SubjectAccessReviewStatus } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { SELF_SUBJECT_ACCESS_REVIEW } from '../kube/resources.js';
import { createReview, optionalField, wrongShape } from './review.js';

/** The attributes of one SelfSubjectAccessReview, in the API's own field names. */
export interface ResourceAttributes {
  /** "" asks about all namespaces (and is the only right value for cluster-scoped resources). */
  namespace: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export interface NonResourceAttributes {
  path: string;
  verb: string;
}

export type AccessAttributes =
  | { resource: ResourceAttributes; nonResource?: undefined }
  | { nonResource: NonResourceAttributes; resource?: undefined };

export interface AccessDecision {
  allowed: boolean;
  /** An authorizer explicitly said no (as opposed to no authorizer saying yes). */
  denied: boolean;
  reason?: string;
  evaluationError?: string;
}

export async function accessReview(client: KubeClient, attributes: AccessAttributes): Promise<AccessDecision> {
  const spec = (
    attributes.resource
      ? { resourceAttributes: dropEmpty({ ...attributes.resource }) }
      : { nonResourceAttributes: { ...attributes.nonResource } }
  ) satisfies Wire<V1SelfSubjectAccessReviewSpec>;
  const review = await createReview<Partial<Wire<V1SubjectAccessReviewStatus>>>(client, {
    resource: SELF_SUBJECT_ACCESS_REVIEW,
    spec,
  });
  const s = review.status;
  // allowed is the answer (never omitted by the API server); a string "true" or a missing field is no answer, not a "no".
  const SSAR = 'SelfSubjectAccessReview';
  if (typeof s.allowed !== 'boolean') throw wrongShape(SSAR, 'status.allowed is not a boolean');
  optionalField(SSAR, s, 'status', 'denied', (v) => typeof v === 'boolean', 'a boolean');
  optionalField(SSAR, s, 'status', 'reason', (v) => typeof v === 'string', 'a string');
  optionalField(SSAR, s, 'status', 'evaluationError', (v) => typeof v === 'string', 'a string');
  return {
    allowed: s.allowed === true,
    denied: s.denied === true,
    ...(s.reason ? { reason: s.reason } : {}),
    ...(s.evaluationError ? { evaluationError: s.evaluationError } : {}),
  };
}

// Optional attributes are left out rather than sent empty; namespace "" is meaningful (all namespaces) and is kept.
function dropEmpty(a: ResourceAttributes): Partial<ResourceAttributes> {
  const out: Partial<ResourceAttributes> = { ...a };
  if (!out.subresource) delete out.subresource;
  if (!out.name) delete out.name;
  return out;
}
