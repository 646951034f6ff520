// The argocd provider's reading of one Argo CD cluster Secret (src/providers/hub/argocd.ts), without a cluster: which
// credential Argo CD's RawRestConfig would use, how `config` of the wrong shape is reported, the in-cluster entry, and
// what Argo CD keeps beside the credential. The same Secrets written by Argo CD's own code are read on the real control
// plane in test/e2e/provider-argocd.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  argocdEntries,
  parseArgocdConfig,
  refFromArgocdSecret,
  ARGOCD_IN_CLUSTER_SERVER,
} from '../../src/providers/hub/argocd.js';
import type { Secret } from '../../src/providers/hub/objects.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const CA = b64('-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');

function secret(name: string, data: Record<string, string>, labels: Record<string, string> = {}): Secret {
  return {
    metadata: { name, namespace: 'argocd', labels: { 'argocd.argoproj.io/secret-type': 'cluster', ...labels } },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

const hubContext: ResolvedContext = {
  contextName: 'hub-admin',
  clusterName: 'hub',
  userName: 'admin',
  cluster: { server: 'https://hub.example:6443', 'certificate-authority-data': CA },
  user: { token: 'hub-user-token' },
  contextFile: '/home/u/.kube/config',
  clusterFile: '/home/u/.kube/config',
  userFile: '/home/u/.kube/config',
};
// The operator opted in to the in-cluster entry (fleet.yaml `inCluster: true`); the cases without it are below.
const o = {
  provider: 'argo',
  hub: 'hub-admin',
  hubContext,
  inClusterEnabled: true,
  inCluster: true,
  configPath: '/etc/fleet/fleet.yaml',
};

describe('argocd provider: one cluster Secret', () => {
  it('is named by its `name` key, keeps its labels and Argo CD settings, and connects with the bearer token', async () => {
    const ref = refFromArgocdSecret(
      secret(
        'cluster-prod-123',
        {
          name: 'prod-eu',
          server: 'https://prod.example:6443/',
          config: JSON.stringify({ bearerToken: 'tok', tlsClientConfig: { insecure: false, caData: CA } }),
          project: 'team-a',
          namespaces: 'a, b,,c',
          clusterResources: 'true',
          shard: '3',
        },
        { env: 'prod' },
      ),
      o,
    );
    assert.equal(ref.name, 'prod-eu');
    assert.deepEqual(ref.aliases, ['cluster-prod-123']);
    assert.equal(ref.ready, true, ref.reason);
    assert.equal(ref.server, 'https://prod.example:6443');
    assert.equal(ref.auth, 'token');
    assert.equal(ref.labels.env, 'prod');
    assert.equal(ref.labels['argocd.argoproj.io/secret-type'], 'cluster');
    assert.deepEqual(ref.source.argocd, {
      server: 'https://prod.example:6443',
      project: 'team-a',
      namespaces: ['a', 'b', 'c'],
      clusterResources: true,
      shard: 3,
    });
    const ctx = await ref.resolve();
    assert.equal(ctx.user.token, 'tok');
    assert.equal(ctx.cluster['certificate-authority-data'], CA);
    assert.equal(ctx.origin?.object, 'Secret argocd/cluster-prod-123 key config');
    assert.equal(ctx.origin?.provider, 'argo');
  });

  it('follows RawRestConfig: awsAuthConfig, then execProviderConfig, then the token; a client certificate with any', () => {
    const tls = { caData: CA, certData: b64('cert'), keyData: b64('key') };
    const aws = argocdEntries('https://s', {
      bearerToken: 'ignored',
      awsAuthConfig: { clusterName: 'c', roleARN: 'arn', profile: 'p' },
      execProviderConfig: { command: 'ignored' },
      tlsClientConfig: tls,
    });
    assert.equal(aws.method, 'aws');
    assert.equal(aws.user.token, undefined);
    assert.equal(aws.user.exec?.command, 'argocd-k8s-auth');
    assert.deepEqual(aws.user.exec?.args, ['aws', '--cluster-name', 'c', '--role-arn', 'arn', '--profile', 'p']);
    assert.equal(aws.user.exec?.apiVersion, 'client.authentication.k8s.io/v1beta1');
    assert.equal(aws.user['client-certificate-data'], tls.certData);
    const exec = argocdEntries('https://s', {
      bearerToken: 'ignored',
      execProviderConfig: { command: '/opt/tok', args: ['x'], env: { B: '2', A: '1' }, apiVersion: 'v' },
    });
    assert.equal(exec.method, 'exec');
    assert.equal(exec.user.token, undefined);
    assert.deepEqual(exec.user.exec?.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
    assert.equal(exec.user.exec?.interactiveMode, 'Never');
    const basic = argocdEntries('https://s', { username: 'u', password: 'p', proxyUrl: 'http://proxy:3128' });
    assert.equal(basic.user.username, 'u');
    assert.equal(basic.cluster['proxy-url'], 'http://proxy:3128');
  });

  it('a config Go would not decode is listed not ready, naming the field; an absent one is the zero config', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"bearerToken": ', /key config: not valid JSON/],
      ['[1]', /key config: must be a JSON object/],
      ['{"bearerToken": 5}', /key config: bearerToken must be a string/],
      ['{"tlsClientConfig": {"caData": "not base64!"}}', /tlsClientConfig\.caData must be base64 text/],
      ['{"execProviderConfig": {"env": {"A": 1}}}', /execProviderConfig\.env must be a mapping/],
    ];
    for (const [config, reason] of cases) {
      const ref = refFromArgocdSecret(secret('s', { name: 'n', server: 'https://s', config }), o);
      assert.equal(ref.ready, false, config);
      assert.match(ref.reason!, reason, config);
      assert.match(ref.reason!, /^Secret argocd\/s key config: /);
      await assert.rejects(ref.resolve());
    }
    assert.deepEqual(parseArgocdConfig(undefined), {});
    assert.deepEqual(parseArgocdConfig('null'), {});
    const noServer = refFromArgocdSecret(secret('s', { name: 'n', config: '{}' }), o);
    assert.match(noServer.reason!, /has no data key "server"/);
  });

  it('without a name key, Argo CD names it by its server', () => {
    const ref = refFromArgocdSecret(secret('s', { server: 'https://x.example', config: '{}' }), o);
    assert.equal(ref.name, 'https://x.example');
    assert.deepEqual(ref.aliases, ['s']);
  });

  it('the in-cluster address is the hub itself: its context, or the Secret token over the hub server', async () => {
    const plain = refFromArgocdSecret(
      secret('in', {
        name: 'local',
        server: ARGOCD_IN_CLUSTER_SERVER,
        config: '{"tlsClientConfig":{"insecure":true}}',
      }),
      o,
    );
    assert.equal(plain.ready, true, plain.reason);
    // It borrows the hub's credential: listed as Argo CD's default in-cluster entry, not as its author named it.
    assert.equal(plain.name, 'in-cluster');
    assert.equal(plain.source.argocd?.argocdName, 'local');
    assert.equal(plain.server, 'https://hub.example:6443');
    assert.equal(plain.source.argocd?.inCluster, true);
    const ctx = await plain.resolve();
    assert.equal(ctx.user.token, 'hub-user-token');
    assert.equal(ctx.origin, undefined); // the user's own credential
    const withToken = await refFromArgocdSecret(
      secret('in', { name: 'local', server: ARGOCD_IN_CLUSTER_SERVER, config: '{"bearerToken":"sa"}' }),
      o,
    ).resolve();
    assert.equal(withToken.user.token, 'sa');
    // Its own credential, not the hub's: named as Argo CD names it.
    assert.equal(withToken.contextName, 'local');
    assert.equal(withToken.cluster.server, 'https://hub.example:6443');
    assert.equal(withToken.origin?.object, 'Secret argocd/in key config');
    const off = refFromArgocdSecret(secret('in', { name: 'local', server: ARGOCD_IN_CLUSTER_SERVER, config: '' }), {
      ...o,
      inClusterEnabled: false,
    });
    assert.equal(off.ready, false);
    assert.match(off.reason!, /cluster\.inClusterEnabled: "false"/);
  });

  it('a Secret for the in-cluster address without a credential of its own never takes its name and labels to the hub credential', async () => {
    const forged = secret(
      'prod',
      { name: 'prod-eu', server: ARGOCD_IN_CLUSTER_SERVER, config: '{}' },
      { env: 'prod', team: 'payments' },
    );
    const refused = refFromArgocdSecret(forged, { ...o, inCluster: false });
    assert.equal(refused.ready, false);
    assert.equal(refused.name, 'in-cluster');
    assert.deepEqual(refused.aliases, []);
    assert.equal(refused.labels.env, undefined);
    assert.equal(refused.labels.team, undefined);
    assert.equal(
      refused.reason,
      `Secret argocd/prod (server ${ARGOCD_IN_CLUSTER_SERVER}, no credential of its own) is reached with the hub's own credential (context hub-admin), which fleet uses only when its configuration says so; to allow it, add inCluster: true to provider "argo" in /etc/fleet/fleet.yaml`,
    );
    await assert.rejects(refused.resolve(), /add inCluster: true to provider "argo"/);
    // Opted in: reached with the hub's context, still as in-cluster with no labels of the Secret's.
    const allowed = refFromArgocdSecret(forged, o);
    assert.equal(allowed.ready, true, allowed.reason);
    assert.equal(allowed.name, 'in-cluster');
    assert.deepEqual(allowed.aliases, []);
    assert.equal(allowed.labels.env, undefined);
    assert.equal(allowed.source.argocd?.argocdName, 'prod-eu');
    assert.equal((await allowed.resolve()).user.token, 'hub-user-token');
    // A Secret with its own token borrows nothing: it keeps Argo CD's name and labels without the opt-in.
    const own = refFromArgocdSecret(
      secret(
        'own',
        { name: 'prod-eu', server: ARGOCD_IN_CLUSTER_SERVER, config: '{"bearerToken":"sa"}' },
        { env: 'prod' },
      ),
      { ...o, inCluster: false },
    );
    assert.equal(own.ready, true, own.reason);
    assert.equal(own.name, 'prod-eu');
    assert.equal(own.labels.env, 'prod');
    assert.equal((await own.resolve()).user.token, 'sa');
    // Without a fleet configuration, the refusal says where the line goes.
    const none = refFromArgocdSecret(forged, { ...o, inCluster: false, configPath: undefined });
    assert.match(none.reason!, /add inCluster: true to provider "argo" in a fleet configuration \(--fleet-config\)$/);
  });

  it('an unparsable shard is ignored, as Argo CD ignores it', () => {
    const ref = refFromArgocdSecret(secret('s', { name: 'n', server: 'https://s', config: '{}', shard: 'x' }), o);
    assert.equal(ref.source.argocd?.shard, undefined);
  });
});
