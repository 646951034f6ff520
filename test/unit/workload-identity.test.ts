import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

import { compareUrls, normaliseUrl } from '../../src/workload-identity/audience.js';
import {
  authenticationConfigApiVersion,
  authenticationConfiguration,
  jwtEntry,
  parseAuthenticationConfiguration,
  parseVersion,
  toYaml,
  usernameFor,
} from '../../src/workload-identity/auth-config.js';
import { discoveryUrl, verifySignature } from '../../src/workload-identity/discovery.js';
import { delta, issuerHash, parseAuthnMetrics } from '../../src/workload-identity/metrics.js';
import { mappedUsername, parseServiceAccount } from '../../src/workload-identity/service-account.js';
import { defaultFluxConfigMapName } from '../../src/workload-identity/setup.js';
import { parseCanI } from '../../src/workload-identity/target.js';
import { readClaims } from '../../src/workload-identity/token.js';
import { expirationSeconds } from '../../src/workload-identity/inputs.js';
import { junitSuitesOf } from '../../src/cli/wi-format.js';
import { junitSuites } from '../../src/verify/junit.js';
import { junitCases, junitSchemaErrors } from '../support/junit.js';

describe('workload identity: audiences and issuers', () => {
  it('tells exact, normalised and different addresses apart, naming the difference', () => {
    assert.deepEqual(compareUrls('https://a.example:6443', 'https://a.example:6443'), { kind: 'exact' });
    assert.deepEqual(compareUrls('https://a.example:443', 'https://a.example'), {
      kind: 'normalised',
      differences: ['explicit :443'],
    });
    assert.deepEqual(compareUrls('https://a.example/', 'https://a.example'), {
      kind: 'normalised',
      differences: ['trailing slash'],
    });
    assert.deepEqual(compareUrls('https://A.example', 'https://a.example'), {
      kind: 'normalised',
      differences: ['letter case'],
    });
    assert.deepEqual(compareUrls('https://b.example', 'https://a.example'), { kind: 'different' });
    assert.equal(normaliseUrl('HTTPS://Host:443/x/'), 'https://host/x');
  });

  it('discovery URL follows the API server (trailing slash trimmed before the well-known path)', () => {
    assert.equal(discoveryUrl('https://h:1/'), 'https://h:1/.well-known/openid-configuration');
    assert.equal(discoveryUrl('https://h:1'), 'https://h:1/.well-known/openid-configuration');
  });

  it('reads the JWT authenticator counts per issuer hash and the configuration hash, and their change', () => {
    const h = issuerHash('https://hub:1');
    assert.match(h, /^sha256:[0-9a-f]{64}$/);
    const text = (n: number) =>
      [
        '# TYPE apiserver_authentication_jwt_authenticator_latency_seconds histogram',
        `apiserver_authentication_jwt_authenticator_latency_seconds_bucket{jwt_issuer_hash="${h}",result="failure",le="0.001"} 0`,
        `apiserver_authentication_jwt_authenticator_latency_seconds_count{jwt_issuer_hash="${h}",result="failure"} ${n}`,
        `apiserver_authentication_jwt_authenticator_latency_seconds_count{jwt_issuer_hash="${h}",result="success"} 3`,
        'apiserver_authentication_config_controller_last_config_info{apiserver_id_hash="sha256:aa",hash="sha256:bb"} 1',
      ].join('\n');
    const m = parseAuthnMetrics(text(1));
    assert.deepEqual(m.issuers.get(h), { failure: 1, success: 3 });
    assert.deepEqual(m.configHashes, ['sha256:bb']);
    assert.deepEqual(delta({ readable: true, ...m }, { readable: true, ...parseAuthnMetrics(text(2)) }, h), {
      failure: 1,
      success: 0,
    });
    assert.equal(delta({ readable: true, ...m }, { readable: true, ...m }, issuerHash('https://other')), undefined);
  });
});

describe('workload identity: inputs', () => {
  it('parses NS/NAME and maps the username with the prefix', () => {
    const sa = parseServiceAccount('flux-system/reconciler');
    assert.equal(mappedUsername(sa, 'hub:'), 'hub:system:serviceaccount:flux-system:reconciler');
    assert.throws(
      () => parseServiceAccount('reconciler'),
      /--service-account: expected NAMESPACE\/NAME, got "reconciler"/,
    );
    assert.throws(() => parseServiceAccount('Bad_NS/x'), /not a valid namespace name/);
  });

  it('parses --can-i questions with -n and --all-namespaces; rejects unknown options', () => {
    const q = parseCanI('list configmaps -n team-a');
    assert.equal(q.namespace, 'team-a');
    assert.equal(q.query.verb, 'list');
    assert.equal(q.query.resource, 'configmaps');
    assert.equal(parseCanI('get pods web-0').query.name, 'web-0');
    assert.equal(parseCanI('list nodes --all-namespaces').namespace, '');
    assert.equal(parseCanI('get pods').namespace, 'default');
    assert.throws(() => parseCanI('get'), /expected "VERB RESOURCE/);
    assert.throws(() => parseCanI('get pods -x'), /unknown option -x/);
  });

  it('refuses token lifetimes the API server would refuse', () => {
    assert.equal(expirationSeconds(600_000), 600);
    assert.throws(() => expirationSeconds(60_000), /--expiration: at least 10m/);
  });

  it('names the Flux ConfigMap after the target, DNS-safe', () => {
    assert.equal(defaultFluxConfigMapName('Prod EU/1'), 'fleet-wi-prod-eu-1');
    assert.match(
      defaultFluxConfigMapName('/very/long/path/to/a/kubeconfig/file.kubeconfig+member-1'),
      /^fleet-wi-[a-z0-9-]{1,40}$/,
    );
  });
});

describe('workload identity: AuthenticationConfiguration', () => {
  it('v1 from 1.34, v1beta1 for 1.30-1.33, an error before', () => {
    assert.equal(
      authenticationConfigApiVersion(parseVersion({ gitVersion: 'v1.34.10', major: '1', minor: '34' })),
      'apiserver.config.k8s.io/v1',
    );
    assert.equal(
      authenticationConfigApiVersion(parseVersion({ gitVersion: 'v1.33.2-eks-1', major: '1', minor: '33+' })),
      'apiserver.config.k8s.io/v1beta1',
    );
    assert.equal(
      authenticationConfigApiVersion(parseVersion({ gitVersion: 'v1.30.0' })),
      'apiserver.config.k8s.io/v1beta1',
    );
    assert.throws(
      () => authenticationConfigApiVersion(parseVersion({ gitVersion: 'v1.29.5' })),
      /needs Kubernetes 1.30 or later/,
    );
  });

  it('generates a jwt entry with the inline CA and a username prefix; several audiences get MatchAny', () => {
    const one = jwtEntry({ issuer: 'https://hub:6443', audiences: ['https://t:6443'], caPem: 'PEM', prefix: 'hub:' });
    assert.deepEqual(one, {
      issuer: { url: 'https://hub:6443', audiences: ['https://t:6443'], certificateAuthority: 'PEM' },
      claimMappings: { username: { claim: 'sub', prefix: 'hub:' } },
    });
    assert.equal(
      jwtEntry({ issuer: 'https://h', audiences: ['a', 'b'], prefix: '' }).issuer.audienceMatchPolicy,
      'MatchAny',
    );
    const text = toYaml(authenticationConfiguration('apiserver.config.k8s.io/v1', [one]));
    const back = parseAuthenticationConfiguration(text, 'x.yaml');
    assert.deepEqual(back.jwt[0], one);
  });

  it("reads a user's file, naming the file in every error", () => {
    assert.throws(
      () => parseAuthenticationConfiguration('kind: Foo\napiVersion: v1', 'c.yaml'),
      /^ConfigError: c.yaml: kind is "Foo"/,
    );
    assert.throws(() => parseAuthenticationConfiguration('a: [', 'c.yaml'), /c.yaml: not valid YAML/);
    assert.throws(
      () =>
        parseAuthenticationConfiguration(
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {}\n',
          'c.yaml',
        ),
      /c.yaml: jwt\[0\].issuer.url is missing/,
    );
  });

  it('computes the mapped username; CEL expressions are not guessed', () => {
    const e = jwtEntry({ issuer: 'https://h', audiences: ['a'], prefix: 'hub:' });
    assert.deepEqual(usernameFor(e, { sub: 'system:serviceaccount:a:b' }), {
      username: 'hub:system:serviceaccount:a:b',
    });
    assert.match(
      usernameFor({ ...e, claimMappings: { username: { expression: 'claims.sub' } } }, { sub: 'x' }).why!,
      /CEL/,
    );
  });
});

describe('workload identity: tokens', () => {
  it('decodes claims without the token, and verifies signatures with jose against a JWKS', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const token = await new SignJWT({ sub: 'system:serviceaccount:a:b' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer('https://hub:1')
      .setAudience('https://t:2')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    const claims = readClaims(token);
    assert.equal(claims.iss, 'https://hub:1');
    assert.deepEqual(claims.aud, ['https://t:2']);
    assert.equal(claims.kid, 'k1');
    assert.match(claims.exp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(await verifySignature(token, { keys: [jwk] }), { ok: true, kid: 'k1' });
    const forged = await new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(other.privateKey);
    const bad = await verifySignature(forged, { keys: [jwk] });
    assert.equal(bad.ok, false);
    assert.match((bad as { reason: string }).reason, /does not verify/);
    const unknownKid = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'k2' }).sign(privateKey);
    assert.match(
      ((await verifySignature(unknownKid, { keys: [jwk] })) as { reason: string }).reason,
      /no key in the JWKS/,
    );
    assert.throws(() => readClaims('not-a-jwt'), /not a JWT/);
  });
});

describe('workload identity: JUnit report', () => {
  const report = {
    hub: 'hub',
    serviceAccount: 'demo/app',
    items: [
      {
        cluster: 'member-1',
        ok: true,
        passed: false,
        audience: 'https://m1:6443',
        claims: {
          iss: 'https://hub',
          aud: ['https://m1:6443'],
          sub: 'system:serviceaccount:demo:app',
          exp: '2026-11-22T10:00:00Z',
        },
        checks: [
          { name: 'token-request', status: 'pass' as const, message: 'ok' },
          {
            name: 'target-authenticates',
            status: 'fail' as const,
            message: 'member-1 answered 401 Unauthorized',
            fix: 'see the diagnosis',
          },
          { name: 'can-i', status: 'skip' as const, message: 'list pods: not asked' },
          { name: 'can-i', status: 'skip' as const, message: 'get pods: not asked' },
        ],
        diagnosis: [
          {
            name: 'audience',
            status: 'fail' as const,
            message: 'aud "x" is not the target\'s address',
            fix: 'request --audience https://m1:6443',
          },
          { name: 'clock-skew', status: 'warn' as const, message: '45 s apart', fix: 'NTP' },
        ],
      },
      { cluster: 'member-2 & <"x">', ok: false, error: { kind: 'unreachable', message: 'connect ECONNREFUSED' } },
    ],
  };

  it('one testsuite per target: the steps, the diagnosis as doctor/NAME, repeated checks numbered; valid against both schemas', async () => {
    const xml = junitSuites(junitSuitesOf(report as any, new Map([['member-1', 1500]])), {
      timestamp: new Date('2026-11-22T08:00:00Z'),
      host: 'ci',
    });
    assert.deepEqual(await junitSchemaErrors(xml), []);
    const cases = junitCases(xml);
    assert.deepEqual(
      cases.map((c) => [c.suite, c.name, c.outcome]),
      [
        ['member-1', 'token-request', 'passed'],
        ['member-1', 'target-authenticates', 'failure'],
        ['member-1', 'can-i', 'skipped'],
        ['member-1', 'can-i #2', 'skipped'],
        ['member-1', 'doctor/audience', 'failure'],
        ['member-1', 'doctor/clock-skew', 'passed'],
        ['member-2 & <"x">', 'connect', 'failure'],
      ],
    );
    assert.match(xml, /<property name="subject" value="system:serviceaccount:demo:app"\/>/);
    assert.match(xml, /<system-out>warn doctor\/clock-skew: 45 s apart \(fix: NTP\)<\/system-out>/);
    assert.match(xml, /<system-err>unreachable: connect ECONNREFUSED<\/system-err>/);
    assert.match(xml, /name="member-1"[^>]*tests="6" failures="2" errors="0" skipped="2" time="1.500"/);
  });
});
