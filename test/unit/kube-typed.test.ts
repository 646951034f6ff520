// The typed object API (src/kube/typed.ts, paths.ts, resources.ts, apply-log.ts) against a small real HTTPS server:
// the exact request line each call sends (method, path, query, encoding), its body and content type, and how each
// answer (200, 201, 404, 409, 403) comes back.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { ConfigError, FleetError } from '../../src/base/errors.js';
import { ApplyLog } from '../../src/kube/apply-log.js';
import type { KubeClient } from '../../src/kube/client.js';
import { statusOf } from '../../src/kube/errors.js';
import { groupPath, groupVersionPath, resourcePath, workspacePath } from '../../src/kube/paths.js';
import {
  CAPI_CLUSTER,
  CLUSTER_PROFILE,
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  KCP_SHARD,
  KCP_WORKSPACE,
  LEASE,
  NAMESPACE,
  ROLE,
  SECRET,
  SELF_SUBJECT_REVIEW,
  SERVICE_ACCOUNT,
  TOKEN_REQUEST,
  CERTIFICATE_SIGNING_REQUEST,
  atVersion,
  resourceOf,
} from '../../src/kube/resources.js';
import {
  applyObject,
  createObject,
  deleteObject,
  getObject,
  listObjects,
  listPage,
  updateObject,
} from '../../src/kube/typed.js';
import {
  type ApiDouble,
  type DoubleAnswer as Answer,
  type SeenRequest as Seen,
  startApiDouble,
} from '../support/api-double.js';

let api: ApiDouble;
let client: KubeClient;

before(async () => {
  api = await startApiDouble('typed-test');
  client = api.client;
});
after(() => api.close());
beforeEach(() => {
  api.seen.length = 0;
});

const status = (code: number, message: string): Answer => ({
  status: code,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code },
});
const lines = () => api.seen.map((s) => `${s.method} ${s.url}`);

describe('resourcePath', () => {
  it('core and group resources, namespaced and cluster-scoped, collections and objects', () => {
    assert.equal(resourcePath(SECRET, { namespace: 'ns', name: 's' }), '/api/v1/namespaces/ns/secrets/s');
    assert.equal(resourcePath(SECRET), '/api/v1/secrets');
    assert.equal(resourcePath(SECRET, { namespace: '' }), '/api/v1/secrets');
    assert.equal(resourcePath(SECRET, { namespace: 'ns' }), '/api/v1/namespaces/ns/secrets');
    assert.equal(resourcePath(NAMESPACE, { name: 'kube-system' }), '/api/v1/namespaces/kube-system');
    assert.equal(
      resourcePath(CLUSTER_ROLE_BINDING, { name: 'b' }),
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/b',
    );
    // A cluster-scoped resource has no namespace in its path, whatever the caller passed.
    assert.equal(
      resourcePath(CLUSTER_ROLE, { namespace: 'ns', name: 'r' }),
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/r',
    );
    assert.equal(resourcePath(ROLE, { namespace: 'ns' }), '/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles');
    assert.equal(
      resourcePath(LEASE, { namespace: 'fleet', name: 'l' }),
      '/apis/coordination.k8s.io/v1/namespaces/fleet/leases/l',
    );
    assert.equal(
      resourcePath(CLUSTER_PROFILE, { namespace: 'fleet-system', name: 'p', subresource: 'status' }),
      '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet-system/clusterprofiles/p/status',
    );
    assert.equal(
      resourcePath(atVersion(CAPI_CLUSTER, 'v1beta2'), { namespace: 'capi' }),
      '/apis/cluster.x-k8s.io/v1beta2/namespaces/capi/clusters',
    );
  });

  it('a named object of a namespaced resource without a namespace is in default, as kubectl has it', () => {
    assert.equal(resourcePath(SERVICE_ACCOUNT, { name: 'sa' }), '/api/v1/namespaces/default/serviceaccounts/sa');
  });

  it('encodes names and namespaces so that each stays one path segment', () => {
    assert.equal(
      resourcePath(SECRET, { namespace: 'team/a', name: 'x y?z#w%' }),
      '/api/v1/namespaces/team%2Fa/secrets/x%20y%3Fz%23w%25',
    );
    assert.equal(resourcePath(NAMESPACE, { name: 'ü' }), '/api/v1/namespaces/%C3%BC');
    assert.equal(
      resourcePath(CLUSTER_ROLE, { name: 'system:auth-delegator' }),
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aauth-delegator',
    );
  });

  it('refuses "." and ".." as names (a path step, not a segment), naming the field', () => {
    assert.throws(
      () => resourcePath(NAMESPACE, { name: '..' }),
      (e: unknown) =>
        e instanceof ConfigError && e.message === 'Namespace name ".." is not a valid name (it may not be "." or "..")',
    );
    assert.throws(
      () => resourcePath(SECRET, { namespace: '.', name: 's' }),
      (e: unknown) =>
        e instanceof ConfigError && e.message === 'namespace "." is not a valid name (it may not be "." or "..")',
    );
  });

  it("a subresource needs a name, and an empty name is fleet's own mistake", () => {
    assert.throws(
      () => resourcePath(SECRET, { namespace: 'ns', subresource: 'status' }),
      (e: unknown) => e instanceof FleetError && e.kind === 'internal',
    );
    assert.throws(
      () => resourcePath(SECRET, { namespace: 'ns', name: '' }),
      (e: unknown) => e instanceof FleetError && e.kind === 'internal',
    );
  });

  it('kcp workspaces: /clusters/<path> with its colons, other characters encoded', () => {
    assert.equal(
      resourcePath(KCP_WORKSPACE, { workspace: 'root:org' }),
      '/clusters/root:org/apis/tenancy.kcp.io/v1alpha1/workspaces',
    );
    assert.equal(resourcePath(KCP_SHARD, { workspace: 'root' }), '/clusters/root/apis/core.kcp.io/v1alpha1/shards');
    assert.equal(workspacePath('root:a/b'), '/clusters/root:a%2Fb');
  });

  it('queries in the order given, form-encoded; false and undefined left out', () => {
    assert.equal(
      resourcePath(SECRET, {}, { limit: 500, labelSelector: 'a=b,c in (x y)', fieldSelector: undefined, watch: false }),
      '/api/v1/secrets?limit=500&labelSelector=a%3Db%2Cc+in+%28x+y%29',
    );
    assert.equal(resourcePath(SECRET, {}, {}), '/api/v1/secrets');
  });

  it('discovery paths, with a group version from a server answer kept to its two segments', () => {
    assert.equal(groupPath('cluster.x-k8s.io'), '/apis/cluster.x-k8s.io');
    assert.equal(groupVersionPath('v1'), '/api/v1');
    assert.equal(groupVersionPath('apps/v1'), '/apis/apps/v1');
    assert.equal(groupVersionPath('evil/../../x'), '/apis/evil/..%2F..%2Fx');
  });

  it("resourceOf finds the resource of a kind, at the object's version", () => {
    assert.equal(resourceOf({ kind: 'Secret', apiVersion: 'v1' }), SECRET);
    assert.equal(
      resourceOf({ kind: 'ClusterProfile', apiVersion: 'multicluster.x-k8s.io/v1alpha2' }).version,
      'v1alpha2',
    );
    assert.throws(() => resourceOf({ kind: 'Secret', apiVersion: 'apps/v1' }), /kind Secret is not in apps\/v1/);
    assert.throws(() => resourceOf({ kind: 'Pod' }), /no resource for kind Pod/);
  });
});

describe('typed requests', () => {
  it('get: the object; undefined on 404; a 403 names the object and the context', async () => {
    api.handler = (s) =>
      s.url.endsWith('/there')
        ? { status: 200, body: { kind: 'Secret', metadata: { name: 'there' } } }
        : s.url.endsWith('/gone')
          ? status(404, 'not found')
          : status(403, 'secrets "no" is forbidden');
    assert.deepEqual(await getObject(client, SECRET, 'there', { namespace: 'a b' }), {
      kind: 'Secret',
      metadata: { name: 'there' },
    });
    assert.equal(await getObject(client, SECRET, 'gone', { namespace: 'ns' }), undefined);
    await assert.rejects(
      getObject(client, SECRET, 'no', { namespace: 'ns' }),
      (e: unknown) =>
        e instanceof FleetError &&
        e.kind === 'forbidden' &&
        e.message === 'get Secret ns/no on double: secrets "no" is forbidden',
    );
    await assert.rejects(
      getObject(client, CLUSTER_ROLE, 'no', { what: 'read ClusterRole no on t' }),
      (e: unknown) => e instanceof FleetError && e.message === 'read ClusterRole no on t: secrets "no" is forbidden',
    );
    assert.deepEqual(lines(), [
      'GET /api/v1/namespaces/a%20b/secrets/there',
      'GET /api/v1/namespaces/ns/secrets/gone',
      'GET /api/v1/namespaces/ns/secrets/no',
      'GET /apis/rbac.authorization.k8s.io/v1/clusterroles/no',
    ]);
  });

  it('get with ok: another 2xx than those listed is no answer', async () => {
    api.handler = () => ({ status: 203, body: {} });
    await assert.rejects(getObject(client, NAMESPACE, 'x', { ok: [200] }), (e: unknown) => statusOf(e) === 203);
  });

  it('list: follows continue tokens page by page with the selectors on every page', async () => {
    api.handler = (s) => {
      const cont = new URL(s.url, 'https://x').searchParams.get('continue');
      return cont === null
        ? { status: 200, body: { items: [{ n: 1 }, { n: 2 }], metadata: { continue: 'tok/1+' } } }
        : { status: 200, body: { items: [{ n: 3 }], metadata: {} } };
    };
    const items = await listObjects(client, SECRET, {
      namespace: 'ns',
      labelSelector: 'fleet.dev/managed-by=fleet,!x',
      fieldSelector: 'type=Opaque',
      limit: 2,
    });
    assert.deepEqual(items, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual(lines(), [
      'GET /api/v1/namespaces/ns/secrets?limit=2&labelSelector=fleet.dev%2Fmanaged-by%3Dfleet%2C%21x&fieldSelector=type%3DOpaque',
      'GET /api/v1/namespaces/ns/secrets?limit=2&labelSelector=fleet.dev%2Fmanaged-by%3Dfleet%2C%21x&fieldSelector=type%3DOpaque&continue=tok%2F1%2B',
    ]);
  });

  it('list without a limit is one request; a list with no items field is empty', async () => {
    api.handler = () => ({ status: 200, body: { metadata: { continue: 'ignored' } } });
    assert.deepEqual(await listObjects(client, CLUSTER_ROLE_BINDING), []);
    assert.deepEqual(await listPage(client, KCP_WORKSPACE, { workspace: 'root:team' }), {
      items: [],
      metadata: { continue: 'ignored' },
    });
    assert.deepEqual(lines(), [
      'GET /apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      'GET /clusters/root:team/apis/tenancy.kcp.io/v1alpha1/workspaces',
    ]);
  });

  it('apply: PATCH as apply-patch+yaml, field manager fleet, force and dry run when asked', async () => {
    api.handler = (s) => ({ status: 200, body: s.body });
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { a: 'b' } };
    assert.deepEqual(await applyObject(client, obj, { force: true }), obj);
    await applyObject(client, obj, { dryRun: true });
    await applyObject(
      client,
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' } },
      { fieldManager: 'other' },
    );
    assert.deepEqual(lines(), [
      'PATCH /api/v1/namespaces/n/configmaps/c?fieldManager=fleet&force=true',
      'PATCH /api/v1/namespaces/n/configmaps/c?fieldManager=fleet&dryRun=All',
      'PATCH /apis/rbac.authorization.k8s.io/v1/clusterrolebindings/b?fieldManager=other',
    ]);
    assert.equal(api.seen[0].contentType, 'application/apply-patch+yaml');
    assert.deepEqual(api.seen[0].body, obj);
  });

  it("apply: a conflict is the server's 409, named by the object", async () => {
    api.handler = () => status(409, 'Apply failed with 1 conflict');
    await assert.rejects(
      applyObject(client, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' } }),
      (e: unknown) => statusOf(e) === 409 && (e as Error).message === 'apply Secret n/s: Apply failed with 1 conflict',
    );
  });

  it('create: POST to the collection, or to a subresource (TokenRequest), and reviews', async () => {
    api.handler = (s) => ({ status: 201, body: { ...s.body, status: { token: 'minted-token-abcdef' } } });
    await createObject(client, LEASE, { metadata: { name: 'l', namespace: 'fleet' } }, { fieldManager: 'fleet' });
    const tr = await createObject<{ status: { token: string } }>(
      client,
      TOKEN_REQUEST.resource,
      { apiVersion: TOKEN_REQUEST.apiVersion, kind: TOKEN_REQUEST.kind },
      { namespace: 'ns', name: 'sa', subresource: TOKEN_REQUEST.subresource },
    );
    assert.equal(tr.status.token, 'minted-token-abcdef');
    await createObject(client, atVersion(SELF_SUBJECT_REVIEW, 'v1beta1'), {});
    await createObject(client, SECRET, { metadata: { name: 'x' } }, { namespace: 'other', dryRun: true });
    assert.deepEqual(lines(), [
      'POST /apis/coordination.k8s.io/v1/namespaces/fleet/leases?fieldManager=fleet',
      'POST /api/v1/namespaces/ns/serviceaccounts/sa/token',
      'POST /apis/authentication.k8s.io/v1beta1/selfsubjectreviews',
      'POST /api/v1/namespaces/other/secrets?dryRun=All',
    ]);
    assert.equal(api.seen[1].contentType, 'application/json');
  });

  it('create: an existing object is a 409 the caller can tell apart', async () => {
    api.handler = () => status(409, 'leases.coordination.k8s.io "l" already exists');
    await assert.rejects(
      createObject(client, LEASE, { metadata: { name: 'l', namespace: 'fleet' } }),
      (e: unknown) =>
        statusOf(e) === 409 &&
        (e as Error).message === 'create Lease fleet/l: leases.coordination.k8s.io "l" already exists',
    );
  });

  it('update: PUT with the resourceVersion precondition in the body; a subresource; a stale version is a 409', async () => {
    api.handler = (s) =>
      s.body.metadata.resourceVersion === 'stale'
        ? status(409, 'the object has been modified')
        : { status: 200, body: s.body };
    const obj = {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: { name: 'p', namespace: 'fleet', resourceVersion: '7' },
    };
    await updateObject(client, obj);
    await updateObject(client, obj, { resourceVersion: '9', subresource: 'status' });
    await assert.rejects(
      updateObject(client, obj, { resourceVersion: 'stale' }),
      (e: unknown) =>
        statusOf(e) === 409 && (e as Error).message === 'update ClusterProfile fleet/p: the object has been modified',
    );
    assert.deepEqual(lines(), [
      'PUT /apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles/p',
      'PUT /apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles/p/status',
      'PUT /apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles/p',
    ]);
    assert.deepEqual(
      api.seen.map((s) => s.body.metadata.resourceVersion),
      ['7', '9', 'stale'],
    );
  });

  it('delete: no body unless preconditions or propagation; 404 is absent; a 409 throws', async () => {
    api.handler = (s) =>
      s.url.includes('/gone')
        ? status(404, 'not found')
        : s.url.includes('/moved')
          ? status(409, 'Precondition failed: UID in precondition: u1')
          : { status: 200, body: {} };
    assert.equal(await deleteObject(client, SECRET, 's', { namespace: 'n' }), 'deleted');
    assert.equal(await deleteObject(client, SECRET, 'gone', { namespace: 'n' }), 'absent');
    assert.equal(
      await deleteObject(client, NAMESPACE, 'x', { propagationPolicy: 'Foreground', dryRun: true }),
      'deleted',
    );
    await assert.rejects(
      deleteObject(client, SECRET, 'moved', { namespace: 'n', preconditions: { uid: 'u1', resourceVersion: '5' } }),
      (e: unknown) =>
        statusOf(e) === 409 &&
        (e as Error).message === 'delete Secret n/moved: Precondition failed: UID in precondition: u1',
    );
    assert.deepEqual(lines(), [
      'DELETE /api/v1/namespaces/n/secrets/s',
      'DELETE /api/v1/namespaces/n/secrets/gone',
      'DELETE /api/v1/namespaces/x?dryRun=All',
      'DELETE /api/v1/namespaces/n/secrets/moved',
    ]);
    assert.equal(api.seen[0].body, undefined);
    assert.deepEqual(api.seen[2].body, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' });
    assert.deepEqual(api.seen[3].body, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: 'u1', resourceVersion: '5' },
    });
  });
});

describe('ApplyLog', () => {
  // A tiny object store behind the double: enough of an API server for apply, get, put and delete of ConfigMaps.
  const store = new Map<string, any>();
  let version = 0;
  const storeHandler = (s: Seen): Answer => {
    const path = s.url.split('?')[0];
    const found = store.get(path);
    if (s.method === 'GET') return found ? { status: 200, body: found } : status(404, 'not found');
    if (s.method === 'DELETE') return store.delete(path) ? { status: 200, body: {} } : status(404, 'not found');
    if (s.method === 'PUT' && found?.metadata.resourceVersion !== s.body.metadata.resourceVersion)
      return status(409, 'the object has been modified');
    const next = { ...s.body, metadata: { ...s.body.metadata, resourceVersion: String(++version) } };
    store.set(path, next);
    return { status: found ? 200 : 201, body: next };
  };

  it('rolls back: deletes what it created, puts back what it changed (twice, for the managed fields), newest first', async () => {
    api.handler = storeHandler;
    store.set('/api/v1/namespaces/n/configmaps/old', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'old', namespace: 'n', resourceVersion: '0' },
      data: { v: 'before' },
    });
    const log = new ApplyLog<'hub' | 'cluster'>();
    await log.apply(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new', namespace: 'n' }, data: { v: '1' } },
      'hub',
    );
    await log.apply(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: 'n' }, data: { v: 'after' } },
      'cluster',
    );
    assert.deepEqual(
      log.applied.map((a) => `${a.on} ${a.kind} ${a.namespace}/${a.name} ${a.action}`),
      ['hub ConfigMap n/new created', 'cluster ConfigMap n/old configured'],
    );
    assert.deepEqual(log.pending(), ['ConfigMap n/old on double (changed, not put back)', 'ConfigMap n/new on double']);
    api.seen.length = 0;
    assert.deepEqual(await log.rollback(), []);
    assert.deepEqual(lines(), [
      'PUT /api/v1/namespaces/n/configmaps/old',
      'PUT /api/v1/namespaces/n/configmaps/old',
      'DELETE /api/v1/namespaces/n/configmaps/new',
    ]);
    assert.equal(store.get('/api/v1/namespaces/n/configmaps/old').data.v, 'before');
    assert.equal(store.has('/api/v1/namespaces/n/configmaps/new'), false);
    assert.deepEqual(log.pending(), []);
  });

  it('does not overwrite a change someone else made since: reported, not thrown', async () => {
    api.handler = storeHandler;
    store.clear();
    store.set('/api/v1/namespaces/n/configmaps/c', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'n', resourceVersion: '0' },
      data: { v: 'before' },
    });
    const log = new ApplyLog();
    await log.apply(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { v: 'fleet' } },
      'hub',
    );
    store.get('/api/v1/namespaces/n/configmaps/c').metadata.resourceVersion = 'someone-else';
    assert.deepEqual(await log.rollback(), [
      'ConfigMap n/c (not restored): restore ConfigMap n/c (changed by someone else since fleet applied it): the object has been modified',
    ]);
  });

  it('records an object created some other way (a CSR) for rollback', async () => {
    api.handler = () => ({ status: 200, body: {} });
    const log = new ApplyLog();
    log.recordCreated(client, CERTIFICATE_SIGNING_REQUEST, 'csr-1', 'cluster');
    assert.deepEqual(await log.rollback(), []);
    assert.deepEqual(lines(), ['DELETE /apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1']);
  });
});
