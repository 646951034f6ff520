/**
 * Risk rules: pure functions that name the dangerous grants in a set of RBAC-style rules (as a SelfSubjectRulesReview
 * returns them). Matching follows RBAC's own semantics: "*" matches every verb, group or resource (subresources too),
 * "*\/sub" matches that subresource of any resource, and "pods" does not cover "pods/exec".
 *
 * A rule's scope decides what it can reach: a cluster-wide grant (a ClusterRoleBinding) holds everywhere; a grant only in
 * a namespace (a RoleBinding) holds only for requests in that namespace, so it never reaches what the API server checks
 * with no namespace: cluster-scoped resources (nodes/proxy, CSRs, ClusterRoles), the virtual resources of impersonation
 * (users, groups, uids, userextras) and certificate signers. `*` on `*.*` there is a namespace admin, not cluster-admin.
 */
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

export type RiskCode =
  | 'cluster-admin'
  | 'namespace-admin'
  | 'wildcard-verbs'
  | 'wildcard-resources'
  | 'wildcard-groups'
  | 'read-secrets'
  | 'escalate'
  | 'bind'
  | 'impersonate'
  | 'create-token'
  | 'pods-exec'
  | 'nodes-proxy'
  | 'csr-approval';

export type Severity = 'critical' | 'high' | 'medium';

/**
 * Where a grant holds: `cluster` (a ClusterRoleBinding: every namespace, and cluster-scoped resources) or `namespace`
 * (a RoleBinding: only requests in the namespace reviewed).
 */
export type RuleScope = 'cluster' | 'namespace';

export interface RiskFinding {
  code: RiskCode;
  severity: Severity;
  message: string;
  /** Index of the rule in the review's resourceRules. */
  rule: number;
  /** Set when the rule is limited to these object names: narrower, but still the same power over them. */
  resourceNames?: string[];
  /** Where the rule holds, when the caller knew (auth rules does): `namespace` for a grant of a RoleBinding only. */
  scope?: RuleScope;
}

const ALL = '*';
const RBAC = 'rbac.authorization.k8s.io';
const CERTS = 'certificates.k8s.io';
const AUTHN = 'authentication.k8s.io';

/** Which of `verbs` the rule grants (all of them when it grants "*"). */
export function grantedVerbs(rule: ResourceRule, verbs: string[]): string[] {
  if (rule.verbs.includes(ALL)) return verbs;
  return verbs.filter((v) => rule.verbs.includes(v));
}

export function coversGroup(rule: ResourceRule, group: string): boolean {
  return rule.apiGroups.includes(ALL) || rule.apiGroups.includes(group);
}

/** Whether the rule covers `resource` ("name" or "name/subresource"). */
export function coversResource(rule: ResourceRule, resource: string): boolean {
  const slash = resource.indexOf('/');
  const sub = slash === -1 ? '' : resource.slice(slash + 1);
  return rule.resources.some((r) => r === ALL || r === resource || (sub !== '' && r === `${ALL}/${sub}`));
}

/** The verbs of `verbs` the rule grants on group/resource (empty when none). */
export function grants(rule: ResourceRule, verbs: string[], group: string, resource: string): string[] {
  if (!coversGroup(rule, group) || !coversResource(rule, resource)) return [];
  return grantedVerbs(rule, verbs);
}

interface Check {
  code: RiskCode;
  severity: Severity;
  /** A message when the rule, holding at `scope`, matches; undefined otherwise. */
  test(rule: ResourceRule, scope: RuleScope): string | undefined;
}

const list = (xs: string[]) => xs.join(', ');
const everything = (r: ResourceRule) => r.verbs.includes(ALL) && r.resources.includes(ALL) && r.apiGroups.includes(ALL);

const CHECKS: Check[] = [
  {
    code: 'cluster-admin',
    severity: 'critical',
    test: (r, scope) =>
      scope === 'cluster' && everything(r) ? 'every verb on every resource in every API group' : undefined,
  },
  {
    code: 'namespace-admin',
    severity: 'high',
    test: (r, scope) =>
      scope === 'namespace' && everything(r)
        ? 'every verb on every resource in every API group of this namespace (a RoleBinding): a namespace admin, nothing cluster-wide'
        : undefined,
  },
  {
    code: 'wildcard-verbs',
    severity: 'medium',
    test: (r) => (r.verbs.includes(ALL) ? 'verbs include "*" (today\'s and future verbs)' : undefined),
  },
  {
    code: 'wildcard-resources',
    severity: 'medium',
    test: (r) =>
      r.resources.includes(ALL)
        ? 'resources include "*" (every resource and subresource, including ones added later)'
        : undefined,
  },
  {
    code: 'wildcard-groups',
    severity: 'medium',
    test: (r) =>
      r.apiGroups.includes(ALL) ? 'apiGroups include "*" (every API group, including CRDs added later)' : undefined,
  },
  {
    code: 'read-secrets',
    severity: 'high',
    test: (r) => {
      const v = grants(r, ['get', 'list', 'watch'], '', 'secrets');
      return v.length > 0 ? `may read Secrets (${list(v)})` : undefined;
    },
  },
  {
    code: 'escalate',
    severity: 'high',
    test: (r, scope) => {
      // A ClusterRole is written with no namespace: escalate on clusterroles in a namespace reaches none.
      const kinds = scope === 'cluster' ? ['roles', 'clusterroles'] : ['roles'];
      const on = kinds.filter((res) => grants(r, ['escalate'], RBAC, res).length > 0);
      return on.length > 0 ? `may grant permissions it does not hold (escalate on ${list(on)})` : undefined;
    },
  },
  {
    code: 'bind',
    severity: 'high',
    test: (r) => {
      const on = ['roles', 'clusterroles'].filter((res) => grants(r, ['bind'], RBAC, res).length > 0);
      return on.length > 0 ? `may bind roles it does not hold (bind on ${list(on)})` : undefined;
    },
  },
  {
    code: 'impersonate',
    severity: 'high',
    test: (r, scope) => {
      // The impersonation filter asks about users, groups, uids and extras with no namespace (only a ServiceAccount is
      // asked in its namespace), so in a namespace only serviceaccounts count.
      const core = scope === 'cluster' ? ['users', 'groups', 'serviceaccounts'] : ['serviceaccounts'];
      const on = core.filter((res) => grants(r, ['impersonate'], '', res).length > 0);
      if (scope === 'cluster' && grants(r, ['impersonate'], AUTHN, 'uids').length > 0) on.push('uids');
      // Extra fields are impersonated per key, as userextras/<key>.
      const extras =
        scope === 'cluster' &&
        coversGroup(r, AUTHN) &&
        r.resources.some((x) => x === ALL || x === 'userextras' || x.startsWith('userextras/'));
      if (extras && grantedVerbs(r, ['impersonate']).length > 0) on.push('userextras');
      return on.length > 0 ? `may act as other identities (impersonate ${list(on)})` : undefined;
    },
  },
  {
    code: 'create-token',
    severity: 'high',
    test: (r) =>
      grants(r, ['create'], '', 'serviceaccounts/token').length > 0
        ? 'may mint ServiceAccount tokens (create serviceaccounts/token)'
        : undefined,
  },
  {
    code: 'pods-exec',
    severity: 'high',
    test: (r) => {
      // GET is enough for exec over WebSockets, so it counts as much as CREATE.
      const v = grants(r, ['create', 'get'], '', 'pods/exec');
      return v.length > 0 ? `may run commands in containers (${list(v)} pods/exec)` : undefined;
    },
  },
  {
    code: 'nodes-proxy',
    severity: 'high',
    test: (r, scope) => {
      // Nodes are cluster-scoped: a RoleBinding never reaches them.
      if (scope !== 'cluster') return undefined;
      const v = grants(r, ['get', 'create', 'update', 'patch', 'delete'], '', 'nodes/proxy');
      return v.length > 0
        ? `may reach the kubelet API directly, bypassing admission and audit of pod operations (${list(v)} nodes/proxy)`
        : undefined;
    },
  },
  {
    code: 'csr-approval',
    severity: 'high',
    test: (r, scope) => {
      // CertificateSigningRequests and signers are cluster-scoped: a RoleBinding never reaches them.
      if (scope !== 'cluster') return undefined;
      const parts: string[] = [];
      const approval = grants(r, ['update', 'patch'], CERTS, 'certificatesigningrequests/approval');
      if (approval.length > 0) parts.push(`${list(approval)} certificatesigningrequests/approval`);
      if (grants(r, ['approve'], CERTS, 'signers').length > 0) parts.push('approve on signers');
      return parts.length > 0
        ? `may approve certificate requests, e.g. client certificates for any user (${parts.join('; ')})`
        : undefined;
    },
  },
];

export const RISK_CODES: RiskCode[] = CHECKS.map((c) => c.code);

/**
 * Every risk the rules carry, in rule order, then in the order of RISK_CODES. `scopes[i]` is where rule i holds; without
 * them every rule is taken as cluster-wide (a role about to be bound cluster-wide, a ClusterRole read as such), and the
 * findings carry no scope.
 */
export function assessRules(rules: ResourceRule[], scopes?: RuleScope[]): RiskFinding[] {
  const findings: RiskFinding[] = [];
  rules.forEach((rule, index) => {
    const scope = scopes?.[index] ?? 'cluster';
    for (const check of CHECKS) {
      const message = check.test(rule, scope);
      if (message === undefined) continue;
      const finding: RiskFinding = { code: check.code, severity: check.severity, message, rule: index };
      if (rule.resourceNames.length > 0) finding.resourceNames = [...rule.resourceNames];
      if (scopes) finding.scope = scope;
      findings.push(finding);
    }
  });
  return findings;
}

/**
 * The distinct codes of a list of findings, most severe first. "cluster-admin" stands for everything it implies;
 * "namespace-admin" for everything else granted in that namespace only, so what is listed beside it is cluster-wide.
 */
export function summarizeRisks(findings: RiskFinding[]): RiskCode[] {
  let codes = new Set(findings.map((f) => f.code));
  if (codes.has('cluster-admin')) return ['cluster-admin'];
  if (codes.has('namespace-admin'))
    codes = new Set(findings.filter((f) => f.code === 'namespace-admin' || f.scope !== 'namespace').map((f) => f.code));
  const order: Severity[] = ['critical', 'high', 'medium'];
  return RISK_CODES.filter((c) => codes.has(c)).sort(
    (a, b) =>
      order.indexOf(CHECKS.find((c) => c.code === a)!.severity) -
      order.indexOf(CHECKS.find((c) => c.code === b)!.severity),
  );
}
