import type { V1SelfSubjectRulesReviewSpec, V1SubjectRulesReviewStatus } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { SELF_SUBJECT_RULES_REVIEW } from '../kube/resources.js';
import { createReview, isRecord, isStringList, optionalField, wrongShape } from './review.js';
import { type ResourceRule, type RiskFinding, assessRules } from './risk.js';

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/**
 * What the server says this identity may do in one namespace (cluster-wide grants included), with the dangerous
 * grants named. A rules review is a summary for people: it may be incomplete (an authorizer that cannot list rules,
 * such as a webhook), and decisions belong to access reviews (`auth can-i`).
 */
export interface RulesReview {
  namespace: string;
  incomplete: boolean;
  evaluationError?: string;
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  risks: RiskFinding[];
}

/** Partial: createReview answers {} when the server sent no status. */
type RawStatus = Partial<Wire<V1SubjectRulesReviewStatus>>;

export async function rulesReview(client: KubeClient, namespace: string): Promise<RulesReview> {
  const review = await createReview<RawStatus>(client, {
    resource: SELF_SUBJECT_RULES_REVIEW,
    spec: { namespace } satisfies Wire<V1SelfSubjectRulesReviewSpec>,
  });
  checkRulesShape(review.status);
  return toRulesReview(namespace, review.status);
}

/** A rules review's status with fields of the wrong type is no answer (every field is omitempty). */
function checkRulesShape(s: RawStatus): void {
  const SSRR = 'SelfSubjectRulesReview';
  const status = s as Record<string, unknown>;
  optionalField(SSRR, status, 'status', 'incomplete', (v) => typeof v === 'boolean', 'a boolean');
  optionalField(SSRR, status, 'status', 'evaluationError', (v) => typeof v === 'string', 'a string');
  const lists = {
    resourceRules: ['verbs', 'apiGroups', 'resources', 'resourceNames'],
    nonResourceRules: ['verbs', 'nonResourceURLs'],
  };
  for (const [field, keys] of Object.entries(lists)) {
    const rules = status[field];
    if (rules === undefined) continue;
    if (!Array.isArray(rules)) throw wrongShape(SSRR, `status.${field} is not a list`);
    rules.forEach((rule: unknown, i) => {
      if (!isRecord(rule)) throw wrongShape(SSRR, `status.${field}[${i}] is not an object`);
      for (const key of keys)
        optionalField(SSRR, rule, `status.${field}[${i}]`, key, isStringList, 'a list of strings');
    });
  }
}

/** Normalises the API's answer (omitted lists become empty) and assesses it. */
export function toRulesReview(namespace: string, s: RawStatus): RulesReview {
  const resourceRules = (s.resourceRules ?? []).map((r) => ({
    verbs: r.verbs ?? [],
    apiGroups: r.apiGroups ?? [],
    resources: r.resources ?? [],
    resourceNames: r.resourceNames ?? [],
  }));
  const nonResourceRules = (s.nonResourceRules ?? []).map((r) => ({
    verbs: r.verbs ?? [],
    nonResourceURLs: r.nonResourceURLs ?? [],
  }));
  return {
    namespace,
    incomplete: s.incomplete === true,
    ...(s.evaluationError ? { evaluationError: s.evaluationError } : {}),
    resourceRules,
    nonResourceRules,
    risks: assessRules(resourceRules),
  };
}

/** kubectl's way of writing a resource with its group: "pods", "deployments.apps", "*.*". */
export function qualifiedResources(rule: ResourceRule): string[] {
  const out: string[] = [];
  for (const resource of rule.resources) {
    for (const group of rule.apiGroups.length > 0 ? rule.apiGroups : [''])
      out.push(group === '' ? resource : `${resource}.${group}`);
  }
  return out;
}

/**
 * `--fail-on-risk` passes only when every cluster's rules were read in full and none is risky: an incomplete review
 * (an authorizer that cannot list its rules) cannot rule a risk out, so it fails rather than pass vacuously.
 */
export function failsRiskCheck(items: Array<{ risks?: unknown[]; incomplete?: boolean }>): boolean {
  return items.length === 0 || items.some((i) => (i.risks?.length ?? 0) > 0 || i.incomplete === true);
}
