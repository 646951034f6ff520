import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { whoami } from '../../src/access/whoami.js';
import { FleetError } from '../../src/base/errors.js';
import type { KubeClient } from '../../src/kube/client.js';
import { type ApiDouble, startApiDouble } from '../support/api-double.js';

// An API server double for what the real one cannot be made to do on demand: be an old release that serves
// SelfSubjectReview only as v1alpha1, or none at all.
/** A request body as the double received it: a Kubernetes object (apiVersion, kind, the rest as sent). */
type SentObject = { apiVersion?: string; kind?: string; [field: string]: unknown };
type Handler = (method: string, path: string, body: SentObject) => { status: number; body: unknown };
let handler: Handler;
let api: ApiDouble;
let client: KubeClient;
const seen = () => api.seen.map((r) => `${r.method} ${r.url}`);

before(async () => {
  api = await startApiDouble('review-test');
  api.handler = (r) => handler(r.method, r.url, r.body);
  client = api.client;
});
after(() => api.close());

const notFound = {
  status: 404,
  body: {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    code: 404,
  },
};

describe('review API versions', () => {
  it('falls back from v1 to v1beta1 to v1alpha1 for SelfSubjectReview, as kubectl does', async () => {
    api.seen.length = 0;
    let sentKind = '';
    handler = (method, path, body) => {
      if (path === '/apis/authentication.k8s.io/v1alpha1/selfsubjectreviews') {
        sentKind = `${body.apiVersion} ${body.kind}`;
        return {
          status: 201,
          body: { ...body, status: { userInfo: { username: 'old-timer', groups: ['system:authenticated'] } } },
        };
      }
      if (path.startsWith('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'))
        return { status: 201, body: { ...body, status: { allowed: false } } };
      return notFound;
    };
    const me = await whoami(client);
    assert.deepEqual(me, {
      user: { username: 'old-timer', uid: '', groups: ['system:authenticated'], extra: {} },
      warnings: [],
      notes: [],
    });
    assert.equal(sentKind, 'authentication.k8s.io/v1alpha1 SelfSubjectReview');
    assert.deepEqual(seen().slice(0, 3), [
      'POST /apis/authentication.k8s.io/v1/selfsubjectreviews',
      'POST /apis/authentication.k8s.io/v1beta1/selfsubjectreviews',
      'POST /apis/authentication.k8s.io/v1alpha1/selfsubjectreviews',
    ]);
  });

  it('no version served is api-missing, naming what was tried', async () => {
    handler = () => notFound;
    await assert.rejects(whoami(client), (e) => {
      assert.ok(e instanceof FleetError);
      assert.equal(e.kind, 'api-missing');
      assert.equal(
        e.message,
        'the server does not serve selfsubjectreviews (tried authentication.k8s.io/v1, authentication.k8s.io/v1beta1, authentication.k8s.io/v1alpha1)',
      );
      return true;
    });
  });

  it("other refusals keep their kind and the server's message", async () => {
    handler = () => ({
      status: 403,
      body: {
        kind: 'Status',
        message: 'selfsubjectreviews.authentication.k8s.io is forbidden: denied by policy',
        code: 403,
      },
    });
    await assert.rejects(
      whoami(client),
      (e) =>
        e instanceof FleetError &&
        e.kind === 'forbidden' &&
        e.message ===
          'create selfsubjectreviews.authentication.k8s.io: selfsubjectreviews.authentication.k8s.io is forbidden: denied by policy',
    );
    handler = () => ({ status: 401, body: { kind: 'Status', message: 'Unauthorized', code: 401 } });
    await assert.rejects(whoami(client), (e) => e instanceof FleetError && e.kind === 'unauthorized');
  });

  it('a cluster-admin check that cannot be asked adds no warning and no failure', async () => {
    handler = (_m, path, body) =>
      path.includes('selfsubjectreviews')
        ? { status: 201, body: { ...body, status: { userInfo: { username: 'u', groups: ['system:masters'] } } } }
        : { status: 500, body: { kind: 'Status', message: 'etcd down' } };
    const me = await whoami(client);
    assert.deepEqual(
      me.warnings.map((w) => w.code),
      ['system-masters'],
    );
  });
});
