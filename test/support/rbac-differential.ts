// Helpers of the access differential (test/e2e/auth-differential.test.ts): RBAC's own matching rules, written from the
// Kubernetes authorizer (k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go) and not from fleet, so that "this
// rule list allows that request" can be checked against a SubjectAccessReview; kubectl's `auth can-i --list` table read
// back into rules; SubjectAccessReviews over kept-alive connections; and a small bounded-concurrency map.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';

/** A resource rule or a non-resource rule, as RBAC objects and rules reviews write them. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface ResourceRequest {
  namespace: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export interface NonResourceRequest {
  path: string;
  verb: string;
}

export type Attributes = { resourceAttributes: ResourceRequest } | { nonResourceAttributes: NonResourceRequest };

const verbMatches = (r: PolicyRule, verb: string) => r.verbs.includes('*') || r.verbs.includes(verb);

// RBAC's ResourceMatches: `*`, the resource (with `/subresource`), or `*/subresource`.
function resourceMatches(r: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (r.resources ?? []).some((x) => x === '*' || x === combined || (!!subresource && x === `*/${subresource}`));
}

/** Does this resource rule allow the request (RBAC's RuleAllows)? */
export function ruleAllowsResource(r: PolicyRule, q: ResourceRequest): boolean {
  const names = r.resourceNames ?? [];
  return (
    verbMatches(r, q.verb) &&
    (r.apiGroups ?? []).some((g) => g === '*' || g === q.group) &&
    resourceMatches(r, q.resource, q.subresource) &&
    (names.length === 0 || names.includes(q.name ?? ''))
  );
}

/** Does this non-resource rule allow the request? A URL ending in `*` is a prefix. */
export function ruleAllowsUrl(r: PolicyRule, q: NonResourceRequest): boolean {
  return (
    verbMatches(r, q.verb) &&
    (r.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === q.path || (u.endsWith('*') && q.path.startsWith(u.slice(0, -1))),
    )
  );
}

export function rulesAllow(rules: PolicyRule[], a: Attributes): boolean {
  return 'resourceAttributes' in a
    ? rules.some((r) => ruleAllowsResource(r, a.resourceAttributes))
    : rules.some((r) => ruleAllowsUrl(r, a.nonResourceAttributes));
}

/**
 * Single grants, as kubectl's rbacutil.BreakdownRule splits a rule: one verb on one group, resource and name (`""`
 * when the rule names none), or one verb on one URL. Written `verb group resource[/sub] name` and `verb URL`.
 */
export function resourceGrants(rules: PolicyRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    const names = (r.resourceNames ?? []).length > 0 ? r.resourceNames! : [''];
    for (const verb of r.verbs)
      for (const group of r.apiGroups ?? [])
        for (const resource of r.resources ?? [])
          for (const name of names) out.add(`${verb} ${group} ${resource} ${name}`);
  }
  return out;
}

export function urlGrants(rules: PolicyRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules)
    for (const verb of r.verbs) for (const url of r.nonResourceURLs ?? []) out.add(`${verb} ${url}`);
  return out;
}

/**
 * kubectl auth can-i --list --no-headers, read back: one rule per line, `RESOURCE.GROUP[/SUB]  [URLS]  [NAMES]  [VERBS]`
 * (kubectl prints one resource per line after its breakdown, and the resource column empty for a URL line).
 */
export function parseKubectlList(stdout: string): { rules: PolicyRule[]; unread: string[] } {
  const rules: PolicyRule[] = [];
  const unread: string[] = [];
  const list = (s: string) => (s.trim() === '' ? [] : s.trim().split(/\s+/));
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const m = /^(\S*)\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s*$/.exec(line);
    if (!m) {
      unread.push(line);
      continue;
    }
    const [, column, urls, names, verbs] = m;
    if (column === '') {
      rules.push({ verbs: list(verbs), nonResourceURLs: list(urls) });
      continue;
    }
    // CombineResourceGroup: resource[.group][/subresource], the group being everything after the first dot.
    const slash = column.indexOf('/');
    const base = slash === -1 ? column : column.slice(0, slash);
    const sub = slash === -1 ? '' : column.slice(slash);
    const dot = base.indexOf('.');
    rules.push({
      verbs: list(verbs),
      apiGroups: [dot === -1 ? '' : base.slice(dot + 1)],
      resources: [(dot === -1 ? base : base.slice(0, dot)) + sub],
      resourceNames: list(names),
    });
  }
  return { rules, unread };
}

/** `fn` over `xs`, at most `n` at a time; results in input order. */
export async function mapLimit<T, R>(xs: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, xs.length) }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await fn(xs[i], i);
      }
    }),
  );
  return out;
}

/**
 * SubjectAccessReviews as the admin over kept-alive connections (the differential makes thousands), each distinct
 * question asked once: the same spec gets the same answer while the RBAC does not change.
 */
export class SubjectAccessReviews {
  private readonly agent: Agent;
  private readonly answers = new Map<string, Promise<boolean>>();
  private readonly url: URL;
  asked = 0;

  constructor(o: { url: string; caFile: string; certFile: string; keyFile: string }) {
    this.url = new URL('/apis/authorization.k8s.io/v1/subjectaccessreviews', o.url);
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: readFileSync(o.caFile),
      cert: readFileSync(o.certFile),
      key: readFileSync(o.keyFile),
    });
  }

  /** `spec`: user, groups, uid and resourceAttributes or nonResourceAttributes. */
  allowed(spec: object): Promise<boolean> {
    const key = JSON.stringify(spec);
    let answer = this.answers.get(key);
    if (!answer) {
      answer = this.post(spec);
      this.answers.set(key, answer);
    }
    return answer;
  }

  private post(spec: object): Promise<boolean> {
    this.asked++;
    const body = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });
    return new Promise((resolve, reject) => {
      const req = request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          timeout: 20_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 201)
              return reject(new Error(`SubjectAccessReview: HTTP ${res.statusCode}: ${text}`));
            resolve((JSON.parse(text) as { status?: { allowed?: boolean } }).status?.allowed === true);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`SubjectAccessReview: timeout (${this.url.host})`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
