import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  certSpanToLifetime,
  describeLifetime,
  lifetimeOf,
  lifetimeToAsk,
  recordedLifetime,
  shortenedWarning,
  tokenLifetimeSeconds,
} from '../../src/creds/lifetime.js';

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

/** What kube-controller-manager's signer writes for a lifetime (pkg/controller/certificates/signer, authority/policies.go). */
function kubeSignerSpan(ttl: number): number {
  const backdate = 300;
  return ttl < 8 * 3600 ? ttl + backdate : ttl;
}

describe('client certificate lifetimes: no drift from one rotation to the next', () => {
  it('reads back the lifetime the Kubernetes signer was asked for, short and long', () => {
    for (const ttl of [600, 3600, 7 * 3600 + 54 * 60, 8 * 3600, 24 * 3600, 30 * 86_400, 365 * 86_400]) {
      assert.equal(certSpanToLifetime(kubeSignerSpan(ttl)), ttl, `ttl ${ttl}`);
    }
  });
  it('asking again for what was read back gives the same certificate span, ten rotations in a row', () => {
    for (const first of [3600, 24 * 3600, 30 * 86_400, 8 * 3600 + 120, 7 * 3600 + 58 * 60 + 17]) {
      const spans: number[] = [];
      let ask = first;
      for (let i = 0; i < 10; i++) {
        const span = kubeSignerSpan(ask);
        spans.push(span);
        ask = certSpanToLifetime(span);
      }
      assert.equal(new Set(spans.slice(1)).size, 1, `spans drift for ${first}: ${spans.join(', ')}`);
      assert.ok(Math.abs(spans[9] - spans[0]) <= 60, `${first}: at most a minute's rounding, once`);
    }
  });
});

describe('what a rotation asks for', () => {
  const oldToken = { token: jwt({ iat: 1000, exp: 1000 + 7200 }) };
  it('--duration first, then the recorded request, then the old credential, then 24h', () => {
    assert.equal(lifetimeToAsk(3600, String(30 * 86_400), oldToken), 3600);
    assert.equal(
      lifetimeToAsk(undefined, String(30 * 86_400), oldToken),
      30 * 86_400,
      'the request, not what a server cut it to',
    );
    assert.equal(lifetimeToAsk(undefined, undefined, oldToken), 7200);
    assert.equal(lifetimeToAsk(undefined, 'garbage', oldToken), 7200);
    assert.equal(lifetimeToAsk(undefined, undefined, {}), 24 * 3600);
  });
  it('a recorded lifetime is whole seconds at the API minimum or more', () => {
    assert.equal(recordedLifetime('2592000'), 2_592_000);
    assert.equal(recordedLifetime('30d'), undefined);
    assert.equal(recordedLifetime('59'), undefined);
    assert.equal(recordedLifetime(undefined), undefined);
  });
  it('a token says its own lifetime (exp - iat)', () => {
    assert.equal(tokenLifetimeSeconds(jwt({ iat: 1000, exp: 1000 + 30 * 86_400 })), 30 * 86_400);
    assert.equal(tokenLifetimeSeconds('not-a-jwt'), undefined);
  });
});

describe('issued shorter than asked', () => {
  it('says so, with both lifetimes and the server setting that cuts tokens', () => {
    const l = lifetimeOf(30 * 86_400, { token: jwt({ iat: 5, exp: 5 + 7200 }) });
    assert.deepEqual(l, { requestedSeconds: 30 * 86_400, issuedSeconds: 7200, shortened: true });
    assert.equal(describeLifetime(l), '2h (asked 30d)');
    assert.equal(
      shortenedWarning(l, 'token'),
      'the server issued a lifetime of 2h, not the 30d asked for (kube-apiserver --service-account-max-token-expiration); rotations ask for 30d again',
    );
    assert.match(shortenedWarning(l, 'client-cert')!, /cluster-signing-duration/);
  });
  it('is quiet when the server issued what was asked', () => {
    const l = lifetimeOf(30 * 86_400, { token: jwt({ iat: 5, exp: 5 + 30 * 86_400 }) });
    assert.equal(l.shortened, false);
    assert.equal(shortenedWarning(l, 'token'), undefined);
    assert.equal(describeLifetime(l), '30d');
  });
});
