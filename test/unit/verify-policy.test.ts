import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { RISK_CODES } from '../../src/access/risk.js';
import { ConfigError } from '../../src/base/errors.js';
import { DEFAULT_POLICY, SCHEMA_URL, effectivePolicy, lifetimeMs, parsePolicy } from '../../src/verify/policy.js';

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/policy.yaml', import.meta.url));
const head = 'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\n';

/** The one-line error parsePolicy throws for `text`. */
function errorOf(text: string): string {
  try {
    parsePolicy(text, 'p.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.exitCode, 2);
    const message = (error as Error).message;
    assert.equal(message.split('\n').length, 1, 'one line');
    return message;
  }
  assert.fail('expected the policy to be rejected');
}

describe('verify policy: loading', () => {
  it('the documented example is valid, and so is its schema reference', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const policy = parsePolicy(text, EXAMPLE);
    assert.ok(policy.rules.length > 0);
    const line = text.split('\n').find((l) => l.startsWith('# yaml-language-server: $schema='));
    assert.ok(line, 'the example names its schema for editors');
    const target = new URL(line.slice(line.indexOf('=') + 1), new URL(`file://${EXAMPLE}`));
    assert.equal(target.href, SCHEMA_URL.href, 'the example points at the shipped schema');
  });

  it('the schema lists exactly the risk codes of auth rules', () => {
    const schema = JSON.parse(readFileSync(SCHEMA_URL, 'utf8'));
    assert.deepEqual(schema.definitions.checks.properties.forbiddenPower.properties.risks.items.enum, RISK_CODES);
  });

  it('names file, line and field for a misspelt field', () => {
    assert.equal(
      errorOf(`${head}checks:\n  tls:\n    allowInsecur: true\n`),
      'p.yaml:5: checks.tls.allowInsecur: unknown field (did you mean "allowInsecure"?)',
    );
  });

  it('suggests the field meant at every level, and none for a word not near any', () => {
    assert.equal(
      errorOf(`${head}chekcs:\n  reachable: true\n`),
      'p.yaml:3: chekcs: unknown field (did you mean "checks"?)',
    );
    assert.equal(
      errorOf(`${head}rules:\n  - selector: env=prod\n    checks:\n      permisions: []\n`),
      'p.yaml:6: rules[0].checks.permisions: unknown field (did you mean "permissions"?)',
    );
    assert.equal(errorOf(`${head}zzzzzzzz: 1\n`), 'p.yaml:3: zzzzzzzz: unknown field');
  });

  it('a kubeconfig or another kind given as the policy is named as such', () => {
    assert.equal(
      errorOf('apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n'),
      'p.yaml: not a VerifyPolicy but a Config (expected apiVersion: fleet/v1alpha1, kind: VerifyPolicy)',
    );
    assert.equal(
      errorOf('apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n'),
      'p.yaml: not a VerifyPolicy but a Secret (expected apiVersion: fleet/v1alpha1, kind: VerifyPolicy)',
    );
  });

  it('names file, line and field for a wrong type, a wrong enum, a bad duration', () => {
    assert.equal(
      errorOf(`${head}checks:\n  permissions:\n    - verb: 3\n      resource: pods\n`),
      'p.yaml:5: checks.permissions[0].verb: must be a string',
    );
    assert.equal(
      errorOf(
        `${head}rules:\n  - selector: env=prod\n    checks:\n      forbiddenPower:\n        risks: [read-secret]\n`,
      ),
      'p.yaml:7: rules[0].checks.forbiddenPower.risks[0]: must be one of ' + RISK_CODES.join(', '),
    );
    assert.equal(
      errorOf(`${head}checks:\n  credentials:\n    minLifetime: 1 day\n`),
      'p.yaml:5: checks.credentials.minLifetime: must be a duration such as 24h, 7d or 90m',
    );
  });

  it('a missing required field, a wrong kind, YAML that does not parse, an empty file', () => {
    assert.equal(errorOf(`${head}rules:\n  - checks: {}\n`), 'p.yaml:4: rules[0]: selector is required');
    assert.equal(errorOf('apiVersion: fleet/v1alpha1\nkind: Policy\n'), 'p.yaml:2: kind: must be "VerifyPolicy"');
    assert.match(errorOf(`${head}checks: [\n`), /^p\.yaml:\d+: not valid YAML: /);
    assert.match(
      errorOf(`${head}checks:\n  tls: {}\n  tls: {}\n`),
      /^p\.yaml:5: not valid YAML: duplicated mapping key$/,
    );
    assert.match(errorOf(''), /^p\.yaml: the policy is empty/);
    assert.equal(errorOf('- a\n- b\n'), 'p.yaml:1: the policy: must be a mapping');
    assert.equal(
      errorOf(`${head}checks:\n  permissions:\n    - {verb: get, resource: ""}\n`),
      'p.yaml:5: checks.permissions[0].resource: must not be empty',
    );
  });

  it('what the schema cannot say: a regular expression, a selector, a version range, a permission', () => {
    assert.match(
      errorOf(`${head}checks:\n  identity:\n    pattern: "ci-("\n`),
      /^p\.yaml:5: checks\.identity\.pattern: not a valid regular expression/,
    );
    assert.match(
      errorOf(`${head}rules:\n  - selector: "env in prod"\n    checks: {}\n`),
      /^p\.yaml:4: rules\[0\]\.selector: cannot parse "env in prod"/,
    );
    assert.equal(
      errorOf(`${head}checks:\n  version:\n    range: "1.30 or so"\n`),
      'p.yaml:5: checks.version.range: not a valid version range: "1.30 or so" (e.g. ">=1.30 <1.36")',
    );
    assert.equal(
      errorOf(`${head}checks:\n  permissions:\n    - verb: get\n`),
      'p.yaml:5: checks.permissions[0]: give exactly one of resource and nonResourceURL',
    );
    assert.equal(
      errorOf(`${head}checks:\n  permissions:\n    - verb: get\n      nonResourceURL: healthz\n`),
      'p.yaml:6: checks.permissions[0].nonResourceURL: must start with /',
    );
  });

  it('the line of a field past comments and blank lines, in block and flow lists, and a key named like an earlier value', () => {
    // js-yaml gives positions only through its listener (src/verify/policy.ts finds each node again); these held with
    // the yaml library fleet used before and must hold still.
    const risks = 'must be one of ' + RISK_CODES.join(', ');
    assert.equal(
      errorOf(`${head}# c\nchecks:\n  # comment\n\n  tls:\n    allowInsecure: yes\n`),
      'p.yaml:8: checks.tls.allowInsecure: must be a boolean',
    );
    assert.equal(
      errorOf(`${head}checks:\n  forbiddenPower:\n    risks:\n      - escalate\n      # x\n      - bogus\n`),
      `p.yaml:8: checks.forbiddenPower.risks[1]: ${risks}`,
    );
    assert.equal(
      errorOf(`${head}checks:\n  forbiddenPower:\n    risks: [escalate,\n      bogus]\n`),
      `p.yaml:6: checks.forbiddenPower.risks[1]: ${risks}`,
    );
    assert.equal(
      errorOf(
        `${head}rules:\n  - selector: a=b\n    checks: {}\n  -\n    selector: checks\n    checks:\n      bogus: 1\n`,
      ),
      'p.yaml:9: rules[1].checks.bogus: unknown field',
    );
    assert.equal(
      errorOf(
        `${head}checks:\n  permissions:\n    - {verb: get, resource: pods}\n    - {verb: get, resource: pods, bogus: 1}\n`,
      ),
      'p.yaml:6: checks.permissions[1].bogus: unknown field',
    );
    assert.equal(
      errorOf(`${head}checks:\n  identity:\n    groups:\n    - a\n    - 3\n`),
      'p.yaml:7: checks.identity.groups[1]: must be a string',
    );
    // YAML 1.2's core schema: a date is text (a range that does not parse, not "must be a string").
    assert.equal(
      errorOf(`${head}checks:\n  version:\n    range: 2026-01-01\n`),
      'p.yaml:5: checks.version.range: not a valid version range: "2026-01-01" (e.g. ">=1.30 <1.36")',
    );
  });
});

describe('verify policy: what applies to a cluster', () => {
  it('defaults without a policy: TLS verified, stored credentials 30m to fail and 7d to warn, warn on system:masters, nothing else', () => {
    const e = effectivePolicy(DEFAULT_POLICY, {});
    assert.equal(e.allowInsecure, false);
    assert.equal(e.minLifetimeMs, 30 * 60_000);
    assert.equal(e.minLifetime, '30m');
    assert.equal(e.warnLifetimeMs, 7 * 86_400_000);
    assert.equal(e.warnLifetime, '7d');
    assert.equal(e.systemMasters, 'warn');
    assert.equal(e.clusterAdmin, 'allow');
    assert.deepEqual(e.permissions, []);
    assert.deepEqual(e.risks, []);
    assert.equal(e.identity, undefined);
    assert.equal(e.versionRange, undefined);
  });

  it('rules apply by label selector, in order: lists add up, settings replace', () => {
    const policy = parsePolicy(
      `${head}checks:
  credentials: {minLifetime: 7d}
  permissions: [{verb: list, resource: namespaces}]
  forbiddenPower: {risks: [impersonate]}
rules:
  - name: prod
    selector: env=prod
    checks:
      credentials: {minLifetime: 30d}
      permissions: [{verb: create, resource: deployments.apps, namespace: apps}]
      forbiddenPower: {systemMasters: fail, risks: [read-secrets]}
      identity: {pattern: "system:serviceaccount:ci:.*"}
  - selector: "tier in (edge)"
    checks:
      tls: {allowInsecure: true}
`,
      'p.yaml',
    );
    const dev = effectivePolicy(policy, { env: 'dev' });
    assert.equal(dev.minLifetime, '7d');
    assert.deepEqual(
      dev.permissions.map((p) => p.text),
      ['list namespaces (all namespaces)'],
    );
    assert.deepEqual(dev.rules, []);
    const prod = effectivePolicy(policy, { env: 'prod', tier: 'edge' });
    assert.deepEqual(prod.rules, ['prod', 'tier in (edge)']);
    assert.equal(prod.minLifetimeMs, 30 * 86_400_000);
    assert.deepEqual(
      prod.permissions.map((p) => p.text),
      ['list namespaces (all namespaces)', 'create deployments.apps in namespace apps'],
    );
    assert.deepEqual(prod.risks, ['impersonate', 'read-secrets']);
    assert.equal(prod.systemMasters, 'fail');
    assert.equal(prod.allowInsecure, true);
    assert.ok(prod.identity?.pattern?.test('system:serviceaccount:ci:deployer'));
    assert.ok(!prod.identity?.pattern?.test('x-system:serviceaccount:ci:deployer'), 'the whole username must match');
  });

  it('lifetimes: days, hours, combinations', () => {
    assert.equal(lifetimeMs('7d'), 7 * 86_400_000);
    assert.equal(lifetimeMs('1h30m'), 90 * 60_000);
  });
});
