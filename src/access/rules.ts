import type { V1SelfSubjectRulesReviewSpec, V1SubjectRulesReviewStatus } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { SELF_SUBJECT_RULES_REVIEW } from '../kube/resources.js';
import { createReview, isRecord, isStringList, optionalField, wrongShape } from './review.js';
import { type ResourceRule, type RiskFinding, type RuleScope, assessRules } from './risk.js';

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/**
 * Not a valid namespace name (dots), so no RoleBinding can be in it: its rules review holds only cluster-wide grants
 * (those of ClusterRoleBindings).
 */
export const CLUSTER_WIDE_PROBE = 'cluster-wide.fleet.invalid';

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

/**
 * The rules that hold in `namespace`, each risk assessed where it holds. A SelfSubjectRulesReview for a namespace mixes
 * the rules of its RoleBindings with those of ClusterRoleBindings, so a second one, for CLUSTER_WIDE_PROBE, says which
 * are cluster-wide: the others hold only in the namespace, where they cannot reach cluster-scoped power (`*` on `*.*`
 * there is a namespace admin, not cluster-admin), and their non-resource URLs grant nothing (a URL request has no
 * namespace, so the authorizer reads no RoleBinding for it).
 */
export async function rulesReview(client: KubeClient, namespace: string): Promise<RulesReview> {
  const [inNamespace, clusterWide] = await Promise.all([
    readRulesStatus(client, namespace),
    readRulesStatus(client, CLUSTER_WIDE_PROBE),
  ]);
  return toRulesReview(namespace, inNamespace, clusterWide);
}

/** One SelfSubjectRulesReview as the server answered it, every rule taken as it is listed (auth diff reads two). */
export async function singleRulesReview(client: KubeClient, namespace: string): Promise<RulesReview> {
  return toRulesReview(namespace, await readRulesStatus(client, namespace));
}

async function readRulesStatus(client: KubeClient, namespace: string): Promise<RawStatus> {
  const review = await createReview<RawStatus>(client, {
    resource: SELF_SUBJECT_RULES_REVIEW,
    spec: { namespace } satisfies Wire<V1SelfSubjectRulesReviewSpec>,
  });
  checkRulesShape(review.status);
  return review.status;
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

const resourceRulesOf = (s: RawStatus): ResourceRule[] =>
  (s.resourceRules ?? []).map((r) => ({
    verbs: r.verbs ?? [],
    apiGroups: r.apiGroups ?? [],
    resources: r.resources ?? [],
    resourceNames: r.resourceNames ?? [],
  }));
const nonResourceRulesOf = (s: RawStatus): NonResourceRule[] =>
  (s.nonResourceRules ?? []).map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs ?? [] }));
const ruleKey = (r: object) => JSON.stringify(r);

/**
 * Normalises the API's answer (omitted lists become empty) and assesses it. With `clusterWide` (the review of
 * CLUSTER_WIDE_PROBE), a rule it also lists holds cluster-wide and any other only in the namespace, and non-resource
 * rules are the cluster-wide ones only. Without it every rule is taken as listed, cluster-wide (the probe's own review).
 */
export function toRulesReview(namespace: string, s: RawStatus, clusterWide?: RawStatus): RulesReview {
  const resourceRules = resourceRulesOf(s);
  let nonResourceRules = nonResourceRulesOf(s);
  let scopes: RuleScope[] | undefined;
  let incomplete = s.incomplete === true;
  let evaluationError = s.evaluationError ?? '';
  if (clusterWide) {
    const wide = new Set(resourceRulesOf(clusterWide).map(ruleKey));
    scopes = resourceRules.map((r) => (wide.has(ruleKey(r)) ? 'cluster' : 'namespace'));
    const wideUrls = new Set(nonResourceRulesOf(clusterWide).map(ruleKey));
    nonResourceRules = nonResourceRules.filter((r) => wideUrls.has(ruleKey(r)));
    incomplete ||= clusterWide.incomplete === true;
    evaluationError = [...new Set([evaluationError, clusterWide.evaluationError ?? ''])].filter(Boolean).join('; ');
  }
  return {
    namespace,
    incomplete,
    ...(evaluationError ? { evaluationError } : {}),
    resourceRules,
    nonResourceRules,
    risks: assessRules(resourceRules, scopes),
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
