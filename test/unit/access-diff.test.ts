// auth diff's normalisation and comparison: pure functions over rules reviews, so every RBAC spelling is checked here;
// the e2e test (test/e2e/auth-diff.test.ts) checks the same on real servers.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {type NormalRules, diffRules, normaliseReviews} from '../../src/access/diff.js'
import {toRulesReview} from '../../src/access/rules.js'

type Rule = {verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[]}
const review = (rules: Rule[], incomplete = false) =>
  toRulesReview('x', {
    incomplete,
    resourceRules: rules.filter((r) => !r.nonResourceURLs).map((r) => ({verbs: r.verbs, apiGroups: r.apiGroups ?? [''], resources: r.resources, resourceNames: r.resourceNames})),
    nonResourceRules: rules.filter((r) => r.nonResourceURLs).map((r) => ({verbs: r.verbs, nonResourceURLs: r.nonResourceURLs})),
  })
const normal = (ns: Rule[], wide: Rule[] = []): NormalRules => {
  const {rules, nonResourceRules} = normaliseReviews('team', review([...wide, ...ns]), review(wide))
  return {rules, nonResourceRules}
}

describe('auth diff: normalisation', () => {
  it('equivalent RBAC written differently is equal: split rules, repeated verbs, order, verbs covered by "*"', () => {
    const a = normal([{verbs: ['list', 'get', 'get'], resources: ['pods', 'configmaps']}, {verbs: ['*'], apiGroups: ['apps'], resources: ['deployments']}])
    const b = normal([
      {verbs: ['get'], resources: ['configmaps']},
      {verbs: ['list'], resources: ['configmaps']},
      {verbs: ['get', 'list'], resources: ['pods']},
      {verbs: ['get', 'update'], apiGroups: ['apps'], resources: ['deployments']},
      {verbs: ['*'], apiGroups: ['apps'], resources: ['deployments']},
    ])
    assert.deepEqual(a, b)
    assert.deepEqual(a.rules, [
      {scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: [], verbs: ['get', 'list']},
      {scope: 'namespace', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get', 'list']},
      {scope: 'namespace', apiGroup: 'apps', resource: 'deployments', resourceNames: [], verbs: ['*']},
    ])
  })

  it('named objects: one rule per object\'s verb set, objects with the same verbs together, dropped when every object is granted', () => {
    const n = normal([
      {verbs: ['get'], resources: ['configmaps'], resourceNames: ['b', 'a']},
      {verbs: ['get'], resources: ['configmaps'], resourceNames: ['c']},
      {verbs: ['update'], resources: ['configmaps'], resourceNames: ['a']},
      {verbs: ['get'], resources: ['secrets'], resourceNames: ['s']},
      {verbs: ['get'], resources: ['secrets']},
    ])
    assert.deepEqual(n.rules, [
      {scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: ['a'], verbs: ['get', 'update']},
      {scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: ['b', 'c'], verbs: ['get']},
      {scope: 'namespace', apiGroup: '', resource: 'secrets', resourceNames: [], verbs: ['get']},
    ])
  })

  it('cluster-wide grants are scope "cluster" and cover the same grant in the namespace; wildcards cover subresources', () => {
    const n = normal(
      [{verbs: ['get'], resources: ['pods', 'pods/log']}, {verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale']}],
      [{verbs: ['get', 'list'], resources: ['*']}, {verbs: ['update'], apiGroups: ['*'], resources: ['*/scale']}],
    )
    assert.deepEqual(n.rules, [
      {scope: 'cluster', apiGroup: '', resource: '*', resourceNames: [], verbs: ['get', 'list']},
      {scope: 'cluster', apiGroup: '*', resource: '*/scale', resourceNames: [], verbs: ['update']},
    ])
  })

  it('non-resource URLs: merged from both reviews, prefixes cover', () => {
    const n = normal([], [{verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*', '/api/v1']}, {verbs: ['get', 'post'], nonResourceURLs: ['/version']}])
    assert.deepEqual(n.nonResourceRules, [
      {url: '/api/*', verbs: ['get']},
      {url: '/healthz', verbs: ['get']},
      {url: '/version', verbs: ['get', 'post']},
    ])
  })

  it('an incomplete review is kept as incomplete, with its evaluation error', () => {
    const r = normaliseReviews('team', review([]), {...review([], true), evaluationError: 'webhook: no rules'})
    assert.equal(r.incomplete, true)
    assert.equal(r.evaluationError, 'webhook: no rules')
  })
})

describe('auth diff: comparison', () => {
  const a = normal([{verbs: ['get', 'list'], resources: ['pods']}, {verbs: ['get'], resources: ['configmaps']}])
  const b = normal([{verbs: ['list', 'get'], resources: ['pods']}])
  const c = normal([{verbs: ['*'], resources: ['pods']}, {verbs: ['get'], resources: ['configmaps']}], [{verbs: ['get'], nonResourceURLs: ['/metrics']}])

  it('without a baseline: what each grants that another does not, and the reverse', () => {
    const d = diffRules(new Map([['a', a], ['b', b], ['c', c]]))
    assert.deepEqual(d.get('a'), {
      extra: {rules: [{scope: 'namespace', apiGroup: '', resource: 'configmaps', resourceNames: [], verbs: ['get']}], nonResourceRules: []},
      missing: {rules: [{scope: 'namespace', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['*']}], nonResourceRules: [{url: '/metrics', verbs: ['get']}]},
    })
    assert.deepEqual(d.get('b')!.extra, {rules: [], nonResourceRules: []})
    assert.deepEqual(d.get('b')!.missing.rules.map((r) => `${r.resource}:${r.verbs}`), ['configmaps:get', 'pods:*'])
    // c's "*" on pods covers everyone's get/list on pods: nothing is missing there.
    assert.deepEqual(d.get('c')!.missing, {rules: [], nonResourceRules: []})
    assert.deepEqual(d.get('c')!.extra.rules.map((r) => `${r.resource}:${r.verbs}`), ['configmaps:get', 'pods:*'])
  })

  it('with a baseline: each cluster against it only; the baseline itself has no difference', () => {
    const d = diffRules(new Map([['a', a], ['b', b], ['c', c]]), 'b')
    assert.deepEqual(d.get('b'), {extra: {rules: [], nonResourceRules: []}, missing: {rules: [], nonResourceRules: []}})
    assert.deepEqual(d.get('a')!.extra.rules.map((r) => r.resource), ['configmaps'])
    assert.deepEqual(d.get('a')!.missing, {rules: [], nonResourceRules: []})
    assert.deepEqual(d.get('c')!.extra.nonResourceRules, [{url: '/metrics', verbs: ['get']}])
  })

  it('a grant held cluster-wide on one cluster and only in the namespace on another is a difference of scope', () => {
    const wide = normal([], [{verbs: ['get'], resources: ['pods']}])
    const local = normal([{verbs: ['get'], resources: ['pods']}])
    const d = diffRules(new Map([['wide', wide], ['local', local]]))
    assert.deepEqual(d.get('wide')!.extra.rules, [{scope: 'cluster', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get']}])
    assert.deepEqual(d.get('local')!.extra.rules, [])
    assert.deepEqual(d.get('local')!.missing.rules, [{scope: 'cluster', apiGroup: '', resource: 'pods', resourceNames: [], verbs: ['get']}])
  })
})
