// auth diff's normalisation and comparison: pure functions over rules reviews, so every RBAC spelling is checked here;
// the e2e test (test/e2e/auth-diff.test.ts) checks the same on real servers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type NormalRules, diffRules, normaliseReviews } from '../../src/access/diff.js';
import { grants } from '../../src/access/risk.js';
import { toRulesReview } from '../../src/access/rules.js';

type Rule = {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
};
const review = (rules: Rule[], incomplete = false) =>
  toRulesReview('x', {
    incomplete,
    resourceRules: rules
      .filter((r) => !r.nonResourceURLs)
      .map((r) => ({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [''],
        resources: r.resources,
        resourceNames: r.resourceNames,
      })),
    nonResourceRules: rules
      .filter((r) => r.nonResourceURLs)
      .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
  });
const normal = (ns: Rule[], wide: Rule[] = []): NormalRules => {
  const { rules, nonResourceRules } = normaliseReviews('team', review([...wide, ...ns]), review(wide));
  return { rules, nonResourceRules };
};

describe('auth diff: normalisation', () => {
  it('equivalent RBAC written differently is equal: split rules, repeated verbs, order, verbs covered by "*"', () => {
    const a = normal([
      { verbs: ['list', 'get', 'get'], resources: ['pods', 'configmaps'] },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
    ]);
    const b = normal([
      { verbs: ['get'], resources: ['configmaps'] },
      { verbs: ['list'], resources: ['configmaps'] },
      { verbs: ['get', 'list'], resources: ['pods'] },
      { verbs: ['get', 'update'], apiGroups: ['apps'], resources: ['deployments'] },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
    ]);
    assert.deepEqual(a, b);
    assert.deepEqual(a.rules, [
      { scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: [], verbs: ['get', 'list'] },
      { scope: 'namespace', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get', 'list'] },
      { scope: 'namespace', apiGroup: 'apps', resource: 'deployments', resourceNames: [], verbs: ['*'] },
    ]);
  });

  it("named objects: one rule per object's verb set, objects with the same verbs together, dropped when every object is granted", () => {
    const n = normal([
      { verbs: ['get'], resources: ['configmaps'], resourceNames: ['b', 'a'] },
      { verbs: ['get'], resources: ['configmaps'], resourceNames: ['c'] },
      { verbs: ['update'], resources: ['configmaps'], resourceNames: ['a'] },
      { verbs: ['get'], resources: ['secrets'], resourceNames: ['s'] },
      { verbs: ['get'], resources: ['secrets'] },
    ]);
    assert.deepEqual(n.rules, [
      { scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: ['a'], verbs: ['get', 'update'] },
      { scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: ['b', 'c'], verbs: ['get'] },
      { scope: 'namespace', apiGroup: '', resource: 'secrets', resourceNames: [], verbs: ['get'] },
    ]);
  });

  it('cluster-wide grants are scope "cluster" and cover the same grant in the namespace; wildcards cover subresources', () => {
    const n = normal(
      [
        { verbs: ['get'], resources: ['pods', 'pods/log'] },
        { verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'] },
      ],
      [
        { verbs: ['get', 'list'], resources: ['*'] },
        { verbs: ['update'], apiGroups: ['*'], resources: ['*/scale'] },
      ],
    );
    assert.deepEqual(n.rules, [
      { scope: 'cluster', apiGroup: '', resource: '*', resourceNames: [], verbs: ['get', 'list'] },
      { scope: 'cluster', apiGroup: '*', resource: '*/scale', resourceNames: [], verbs: ['update'] },
    ]);
  });

  it('non-resource URLs: only the cluster-wide review grants them; one a RoleBinding lists in the namespace is none', () => {
    // A ClusterRole with URLs bound by a RoleBinding: the namespace's rules review lists them, the authorizer never
    // applies them (a URL request has no namespace, so no RoleBinding is read for it).
    const healthz = { verbs: ['get'], nonResourceURLs: ['/healthz'] };
    const withRoleBinding = normaliseReviews(
      'team',
      review([healthz, { verbs: ['get', 'post'], nonResourceURLs: ['/only-in-a-rolebinding', '/healthz'] }]),
      review([healthz]),
    );
    assert.deepEqual(withRoleBinding.nonResourceRules, [{ url: '/healthz', verbs: ['get'] }]);
    // So a cluster that differs from another only by such a RoleBinding does not differ.
    const without = normaliseReviews('team', review([healthz]), review([healthz]));
    const d = diffRules(
      new Map([
        ['a', withRoleBinding],
        ['b', without],
      ]),
    );
    const same = { extra: { rules: [], nonResourceRules: [] }, missing: { rules: [], nonResourceRules: [] } };
    assert.deepEqual([d.get('a'), d.get('b')], [same, same]);
  });

  it('non-resource URLs: prefixes cover', () => {
    const n = normal(
      [],
      [
        { verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*', '/api/v1'] },
        { verbs: ['get', 'post'], nonResourceURLs: ['/version'] },
      ],
    );
    assert.deepEqual(n.nonResourceRules, [
      { url: '/api/*', verbs: ['get'] },
      { url: '/healthz', verbs: ['get'] },
      { url: '/version', verbs: ['get', 'post'] },
    ]);
  });

  it('an incomplete review is kept as incomplete, with its evaluation error', () => {
    const r = normaliseReviews('team', review([]), { ...review([], true), evaluationError: 'webhook: no rules' });
    assert.equal(r.incomplete, true);
    assert.equal(r.evaluationError, 'webhook: no rules');
  });
});

describe('auth diff: comparison', () => {
  const a = normal([
    { verbs: ['get', 'list'], resources: ['pods'] },
    { verbs: ['get'], resources: ['configmaps'] },
  ]);
  const b = normal([{ verbs: ['list', 'get'], resources: ['pods'] }]);
  const c = normal(
    [
      { verbs: ['*'], resources: ['pods'] },
      { verbs: ['get'], resources: ['configmaps'] },
    ],
    [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
  );

  it('without a baseline: each against the majority (a grant most share is the norm; one fewer than half share, an exception)', () => {
    const d = diffRules(
      new Map([
        ['a', a],
        ['b', b],
        ['c', c],
      ]),
    );
    const none = { rules: [], nonResourceRules: [] };
    // configmaps:get is held by a and c (2 of 3): the norm, missing on b. c's "*" on pods and /metrics are c's alone.
    assert.deepEqual(d.get('a'), { extra: none, missing: none });
    assert.deepEqual(d.get('b'), {
      extra: none,
      missing: {
        rules: [{ scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: [], verbs: ['get'] }],
        nonResourceRules: [],
      },
    });
    // c's "*" on pods covers everyone's get/list on pods: nothing is missing there.
    assert.deepEqual(d.get('c')!.missing, none);
    assert.deepEqual(d.get('c')!.extra, {
      rules: [{ scope: 'namespace', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['*'] }],
      nonResourceRules: [{ url: '/metrics', verbs: ['get'] }],
    });
  });

  it('two clusters that disagree have no norm: both sides report the grant, as before (issue 41 changes nothing for two)', () => {
    const d = diffRules(
      new Map([
        ['a', a],
        ['b', b],
      ]),
    );
    assert.deepEqual(
      d.get('a')!.extra.rules.map((r) => `${r.resource}:${r.verbs.join(',')}`),
      ['configmaps:get'],
    );
    assert.deepEqual(
      d.get('b')!.missing.rules.map((r) => `${r.resource}:${r.verbs.join(',')}`),
      ['configmaps:get'],
    );
  });

  it('with a baseline: each cluster against it only; the baseline itself has no difference', () => {
    const d = diffRules(
      new Map([
        ['a', a],
        ['b', b],
        ['c', c],
      ]),
      'b',
    );
    assert.deepEqual(d.get('b'), {
      extra: { rules: [], nonResourceRules: [] },
      missing: { rules: [], nonResourceRules: [] },
    });
    assert.deepEqual(
      d.get('a')!.extra.rules.map((r) => r.resource),
      ['configmaps'],
    );
    assert.deepEqual(d.get('a')!.missing, { rules: [], nonResourceRules: [] });
    assert.deepEqual(d.get('c')!.extra.nonResourceRules, [{ url: '/metrics', verbs: ['get'] }]);
  });

  it('a grant held cluster-wide on one cluster and only in the namespace on another is a difference of scope', () => {
    const wide = normal([], [{ verbs: ['get'], resources: ['pods'] }]);
    const local = normal([{ verbs: ['get'], resources: ['pods'] }]);
    const d = diffRules(
      new Map([
        ['wide', wide],
        ['local', local],
      ]),
    );
    assert.deepEqual(d.get('wide')!.extra.rules, [
      { scope: 'cluster', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get'] },
    ]);
    assert.deepEqual(d.get('local')!.extra.rules, []);
    assert.deepEqual(d.get('local')!.missing.rules, [
      { scope: 'cluster', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get'] },
    ]);
  });
});

describe("auth diff: randomised against RBAC's matching of concrete requests", () => {
  // Every concrete request in a small universe is decided from the raw rules with `auth rules`' matcher (risk.ts
  // `grants`) and resourceNames, then the normalised rules and the differences are checked against those decisions.
  type Scope = 'cluster' | 'namespace';
  type Raw = { scope: Scope; verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames: string[] };
  type Probe = { scope: Scope; group: string; resource: string; name?: string; verb: string };
  const probes: Probe[] = [];
  for (const scope of ['cluster', 'namespace'] as const)
    for (const group of ['', 'apps'])
      for (const resource of ['pods', 'pods/log', 'deployments', 'deployments/scale'])
        for (const name of [undefined, 'a', 'b'])
          for (const verb of ['get', 'list', 'delete'])
            probes.push({ scope, group, resource, ...(name ? { name } : {}), verb });
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const some = <T>(xs: T[]) => xs.filter(() => rand(3) === 0).concat(xs[rand(xs.length)]);
  const randomRule = (): Raw => ({
    scope: rand(2) ? 'cluster' : 'namespace',
    verbs: some(['get', 'list', 'delete', '*']),
    apiGroups: some(['', 'apps', '*']),
    resources: some(['pods', 'pods/log', 'deployments', 'deployments/scale', '*', '*/scale']),
    resourceNames: [[], [], ['a'], ['a', 'b']][rand(4)],
  });
  const allows = (rules: Raw[], p: Probe) =>
    rules.some(
      (r) =>
        (r.scope === 'cluster' || p.scope === 'namespace') &&
        grants(r, [p.verb], p.group, p.resource).length > 0 &&
        (r.resourceNames.length === 0 || (p.name !== undefined && r.resourceNames.includes(p.name))),
    );
  const raw = (n: NormalRules): Raw[] =>
    n.rules.map((r) => ({
      scope: r.scope,
      verbs: r.verbs,
      apiGroups: [r.apiGroup],
      resources: [r.resource],
      resourceNames: r.resourceNames,
    }));
  const normalOf = (rules: Raw[]): NormalRules => {
    const toReview = (rs: Raw[]) =>
      toRulesReview('x', {
        resourceRules: rs.map(({ verbs, apiGroups, resources, resourceNames }) => ({
          verbs,
          apiGroups,
          resources,
          resourceNames,
        })),
      });
    const { rules: r, nonResourceRules } = normaliseReviews(
      'x',
      toReview(rules),
      toReview(rules.filter((x) => x.scope === 'cluster')),
    );
    return { rules: r, nonResourceRules };
  };

  it('200 random fleets of 2-5 clusters: normalised rules allow exactly what the raw ones do; extra and missing report every difference and nothing else', () => {
    let checked = 0;
    for (let fleet = 0; fleet < 200; fleet++) {
      const names = Array.from({ length: 2 + rand(4) }, (_, i) => `c${i}`);
      const rawRules = new Map(names.map((n) => [n, Array.from({ length: rand(5) }, randomRule)]));
      const normal = new Map(names.map((n) => [n, normalOf(rawRules.get(n)!)]));
      const baseline = rand(2) ? names[rand(names.length)] : undefined;
      const diff = diffRules(normal, baseline);
      for (const c of names) {
        const mine = rawRules.get(c)!;
        const others = baseline === undefined ? names.filter((n) => n !== c) : c === baseline ? [] : [baseline];
        const { extra, missing } = diff.get(c)!;
        for (const p of probes) {
          const here = allows(mine, p);
          assert.equal(
            allows(raw(normal.get(c)!), p),
            here,
            `fleet ${fleet} ${c}: normalised rules decide ${JSON.stringify(p)} differently`,
          );
          const lackingElsewhere = others.some((o) => !allows(rawRules.get(o)!, p));
          const grantedElsewhere = others.some((o) => allows(rawRules.get(o)!, p));
          // Nothing else: a reported grant is this cluster's (extra), or another's (missing).
          if (allows(raw(extra), p))
            assert.ok(here, `fleet ${fleet} ${c}: extra allows ${JSON.stringify(p)}, which ${c} does not`);
          if (allows(raw(missing), p))
            assert.ok(
              grantedElsewhere,
              `fleet ${fleet} ${c}: missing allows ${JSON.stringify(p)}, which no other cluster does`,
            );
          if (baseline !== undefined) {
            if (here && lackingElsewhere)
              assert.ok(allows(raw(extra), p), `fleet ${fleet} ${c}: extra misses ${JSON.stringify(p)}`);
            if (!here && grantedElsewhere)
              assert.ok(allows(raw(missing), p), `fleet ${fleet} ${c}: missing misses ${JSON.stringify(p)}`);
          } else {
            const holders = names.filter((o) => allows(rawRules.get(o)!, p));
            // Held by at most half: an exception, always in the holder's extra.
            if (here && 2 * holders.length <= names.length)
              assert.ok(allows(raw(extra), p), `fleet ${fleet} ${c}: extra misses the exception ${JSON.stringify(p)}`);
            // Every difference is reported somewhere: in the holder's extra or in each non-holder's missing.
            if (holders.length > 0 && holders.length < names.length) {
              const inExtra = (o: string) => allows(raw(diff.get(o)!.extra), p);
              const inMissing = (o: string) => allows(raw(diff.get(o)!.missing), p);
              if (here)
                assert.ok(
                  inExtra(c) || names.filter((o) => !holders.includes(o)).every(inMissing),
                  `fleet ${fleet} ${c}: ${JSON.stringify(p)} is reported nowhere`,
                );
              else
                assert.ok(
                  inMissing(c) || holders.some(inExtra),
                  `fleet ${fleet} ${c}: ${JSON.stringify(p)} is reported nowhere`,
                );
            }
          }
          checked++;
        }
        if (others.length === 0)
          assert.deepEqual(
            [extra, missing],
            [
              { rules: [], nonResourceRules: [] },
              { rules: [], nonResourceRules: [] },
            ],
          );
      }
    }
    assert.ok(checked > 50_000, `${checked} decisions checked`);
  });

  it('200 random fleets of 3-6 clusters with one odd one out: only the odd one differs (issue 41: not every cluster)', () => {
    for (let fleet = 0; fleet < 200; fleet++) {
      const n = 3 + rand(4);
      const same = Array.from({ length: 1 + rand(5) }, randomRule);
      const odd = Array.from({ length: rand(5) }, randomRule);
      const normal = new Map(Array.from({ length: n }, (_, i) => [`c${i}`, normalOf(i === 0 ? odd : same)] as const));
      const diff = diffRules(normal);
      const none = { rules: [], nonResourceRules: [] };
      for (let i = 1; i < n; i++)
        assert.deepEqual(
          diff.get(`c${i}`),
          { extra: none, missing: none },
          `fleet ${fleet}: c${i} is like the majority`,
        );
    }
  });
});
