import { type ResourceAttributes, accessReview } from '../access/access-review.js';
import { grants } from '../access/risk.js';
import { whoami } from '../access/whoami.js';
import type { Check } from '../base/checks.js';
import { FleetError, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { PolicyRule } from './rules-file.js';

/**
 * Proves a new credential before fleet reports it: the server says who it is (SelfSubjectReview), an access review
 * confirms one permission that was granted, and another confirms one that must not be (outside the namespaces granted,
 * or a cluster-scoped power no rule covers). RBAC changes reach the authorizer through an informer, so the granted check
 * is retried briefly.
 */
export interface Probe {
  attributes: ResourceAttributes;
  text: string;
}

const describe = (a: ResourceAttributes) =>
  `${a.verb} ${a.group ? `${a.resource}.${a.group}` : a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.namespace ? ` in ${a.namespace}` : ' cluster-wide'}`;

function concrete(
  rule: PolicyRule,
): { verb: string; group: string; resource: string; subresource?: string } | undefined {
  const verb = rule.verbs.find((v) => v !== '*');
  const group = rule.apiGroups?.find((g) => g !== '*');
  const res = rule.resources?.find((r) => r !== '*' && !r.startsWith('*/'));
  if (!verb || group === undefined || !res || rule.resourceNames?.length) return undefined;
  const [resource, subresource] = res.split('/');
  return { verb, group, resource, subresource };
}

/** One granted permission to check, in the first namespace of the grant (or cluster-wide). */
export function grantedProbe(rules: PolicyRule[], namespaces: string[]): Probe | undefined {
  for (const rule of rules) {
    const c = concrete(rule);
    if (!c) continue;
    const attributes: ResourceAttributes = { namespace: namespaces[0] ?? '', ...c };
    return { attributes, text: describe(attributes) };
  }
  return undefined;
}

const CLUSTER_POWERS: ResourceAttributes[] = [
  { namespace: '', verb: 'delete', group: '', resource: 'namespaces' },
  { namespace: '', verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
  { namespace: '', verb: 'get', group: '', resource: 'secrets' },
  { namespace: '', verb: 'impersonate', group: '', resource: 'users' },
];

/** One permission that must be denied: the granted one outside the granted namespaces, else a cluster power no rule covers. */
export function deniedProbe(rules: PolicyRule[], namespaces: string[], granted?: Probe): Probe | undefined {
  if (namespaces.length > 0 && granted) {
    const outside = ['kube-system', 'default', 'kube-public'].find((n) => !namespaces.includes(n));
    if (outside) {
      const attributes = { ...granted.attributes, namespace: outside };
      return { attributes, text: describe(attributes) };
    }
  }
  const covered = (a: ResourceAttributes) =>
    rules.some(
      (r) =>
        grants(
          { verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], resourceNames: [] },
          [a.verb],
          a.group,
          a.resource,
        ).length > 0,
    );
  const attributes = CLUSTER_POWERS.find((a) => namespaces.length > 0 || !covered(a));
  return attributes ? { attributes, text: describe(attributes) } : undefined;
}

/**
 * A server that did not answer (unreachable, timed out, a 5xx such as a stalled etcd) says nothing about the credential:
 * that is thrown as it is, so the caller reports the outage, not a credential that "failed verification".
 */
function unanswered(error: unknown): void {
  if (
    error instanceof FleetError &&
    (error.kind === 'unreachable' || error.kind === 'timeout' || error.kind === 'server')
  )
    throw error;
}

export async function verifyCredential(
  client: KubeClient,
  expected: { username: string; rules: PolicyRule[]; namespaces: string[] },
  options: { settleMs?: number } = {},
): Promise<Check[]> {
  const checks: Check[] = [];
  try {
    const me = await whoami(client);
    const ok = me.user.username === expected.username;
    checks.push({
      name: 'identity',
      status: ok ? 'pass' : 'fail',
      message: ok
        ? `the server sees ${me.user.username}`
        : `the server sees ${me.user.username || '(nobody)'}, expected ${expected.username}`,
    });
    if (me.warnings.length > 0)
      checks.push({ name: 'power', status: 'warn', message: me.warnings.map((w) => w.message).join('; ') });
  } catch (error) {
    unanswered(error);
    checks.push({
      name: 'identity',
      status: 'fail',
      message: `SelfSubjectReview failed: ${toErrorInfo(error).message}`,
    });
    return checks;
  }
  const granted = grantedProbe(expected.rules, expected.namespaces);
  if (granted) {
    const deadline = Date.now() + (options.settleMs ?? 10_000);
    let allowed = false;
    let failure: string | undefined;
    for (;;) {
      try {
        allowed = (await accessReview(client, { resource: granted.attributes })).allowed;
        failure = undefined;
      } catch (error) {
        if (Date.now() > deadline) unanswered(error);
        failure = toErrorInfo(error).message;
      }
      if (allowed || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    checks.push({
      name: 'granted',
      status: allowed ? 'pass' : 'fail',
      message: allowed
        ? `may ${granted.text}`
        : `may not ${granted.text}${failure ? `: ${failure}` : ''}, though it was granted`,
    });
  } else {
    checks.push({
      name: 'granted',
      status: 'skip',
      message: 'no concrete permission to check (wildcards or resourceNames only)',
    });
  }
  const denied = deniedProbe(expected.rules, expected.namespaces, granted);
  if (denied) {
    try {
      const allowed = (await accessReview(client, { resource: denied.attributes })).allowed;
      checks.push({
        name: 'denied',
        status: allowed ? 'fail' : 'pass',
        message: allowed ? `may ${denied.text}, which was not granted` : `may not ${denied.text}`,
      });
    } catch (error) {
      unanswered(error);
      checks.push({ name: 'denied', status: 'fail', message: `access review failed: ${toErrorInfo(error).message}` });
    }
  } else {
    checks.push({ name: 'denied', status: 'skip', message: 'the grant covers every permission fleet probes' });
  }
  return checks;
}
