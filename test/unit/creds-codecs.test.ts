import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  CODECS,
  FORMATS,
  type SecretFormat,
  codecOf,
  destinationSecret,
  detectFormat,
} from '../../src/creds/codecs/index.js';
import { buildKubeconfig } from '../../src/creds/kubeconfig-out.js';
import type { Secret } from '../../src/providers/hub/objects.js';

// The consumer Secret table (src/creds/codecs/): every format written, found, recognised and read back by its own codec.
const cluster = { server: 'https://x:6443', 'certificate-authority-data': 'Q0E=', 'tls-server-name': 'api.x' };
const user = { token: 'tok-codec-secret' };
const kubeconfig = buildKubeconfig({ name: 'm1', userName: 'u', cluster, user });
const destination = (format: SecretFormat) => ({
  namespace: 'hub',
  name: 'm1',
  format,
  ...(format === 'cluster-inventory' ? { consumer: 'c1', profile: 'p1' } : {}),
});
const written = (format: SecretFormat, annotations: Record<string, string> = {}) =>
  destinationSecret(destination(format), {
    kubeconfig,
    cluster,
    user,
    clusterName: 'm1',
    annotations,
  }) as unknown as Secret;

describe('consumer Secret codecs', () => {
  it('the table is keyed by format, in --format order, and each codec names its own key', () => {
    assert.deepEqual(FORMATS, [
      'multicluster-runtime',
      'cluster-api',
      'cluster-inventory',
      'kubeconfig-secretreader',
      'argocd',
      'flux',
    ]);
    for (const f of FORMATS) assert.equal(CODECS[f].format, f);
  });

  it('every format reads back the credential it wrote (the cluster and the user)', () => {
    for (const f of FORMATS) {
      const held = CODECS[f].decode(written(f));
      assert.ok(held, f);
      assert.deepEqual(held.user, user, f);
      assert.equal(held.cluster.server, cluster.server, f);
      assert.equal(held.cluster['certificate-authority-data'], cluster['certificate-authority-data'], f);
      assert.equal(held.cluster['tls-server-name'], cluster['tls-server-name'], f);
    }
  });

  it('every format gives back the destination it was written for (rotation writes it again from the Secret)', () => {
    for (const f of FORMATS) assert.deepEqual(CODECS[f].destination(written(f)), destination(f), f);
  });

  it('a Secret is recognised by its mark, fleet annotation first; formats found by references carry none', () => {
    for (const f of FORMATS) {
      const s = written(f);
      const marked = CODECS[f].find !== 'references';
      assert.equal(CODECS[f].detect(s), marked, f);
      assert.deepEqual(detectFormat(s), marked ? { format: f } : undefined, f);
      assert.deepEqual(detectFormat(written(f, { 'fleet.dev/credential-format': f })), { format: f }, `${f} annotated`);
    }
  });

  it('a format fleet does not know is reported, never passed over', () => {
    const s = written('flux', { 'fleet.dev/credential-format': 'rancher' });
    assert.deepEqual(detectFormat(s), {
      format: 'unknown',
      reason: `fleet.dev/credential-format: "rancher" is not a format fleet knows (${FORMATS.join(', ')})`,
    });
    assert.throws(() => codecOf('rancher', 'hub h: Secret hub/m1'), {
      name: 'UnknownFormatError',
      exitCode: 2,
      message: `hub h: Secret hub/m1: unknown consumer Secret format "rancher" (fleet knows ${FORMATS.join(', ')})`,
    });
    assert.equal(codecOf('flux', 'x'), CODECS.flux);
  });

  it('an empty key is no credential; an unmarked Secret is no consumer Secret', () => {
    const empty = { ...written('multicluster-runtime'), data: {} } as Secret;
    assert.equal(CODECS['multicluster-runtime'].decode(empty), undefined);
    assert.equal(
      detectFormat({
        metadata: { name: 'anchor', namespace: 'n', labels: { 'app.kubernetes.io/managed-by': 'fleet' } },
      }),
      undefined,
    );
  });

  it("Argo CD's exec config becomes an exec user and the plugin's cluster config, as client-go runs it", () => {
    const config = {
      execProviderConfig: {
        command: 'fleet',
        args: ['wi', 'token'],
        apiVersion: 'client.authentication.k8s.io/v1',
        env: { A: 'b' },
        config: { serviceAccount: 'n/s' },
      },
      tlsClientConfig: { insecure: false },
    };
    const s = {
      metadata: { name: 'c', namespace: 'argocd' },
      data: { server: btoa('https://y'), config: btoa(JSON.stringify(config)) },
    } as unknown as Secret;
    const held = CODECS.argocd.decode(s)!;
    assert.deepEqual(held.user.exec, {
      command: 'fleet',
      args: ['wi', 'token'],
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
      env: [{ name: 'A', value: 'b' }],
    });
    assert.deepEqual(held.cluster, {
      server: 'https://y',
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { serviceAccount: 'n/s' } }],
    });
    assert.match(held.kubeconfig, /command: fleet/);
    assert.throws(() => CODECS.argocd.decode({ ...s, data: { config: btoa('{not json') } }), /not valid JSON/);
  });

  it("Argo CD's basic auth, awsAuthConfig, proxy and a wrong-typed field read as the argocd provider reads them", () => {
    const secret = (config: unknown, server = 'https://y') =>
      ({
        metadata: { name: 'c', namespace: 'argocd' },
        data: { server: btoa(server), config: btoa(JSON.stringify(config)) },
      }) as unknown as Secret;
    const basic = CODECS.argocd.decode(
      secret({ username: 'u', password: 'p', proxyUrl: 'http://proxy:3128', tlsClientConfig: { caData: 'Q0E=' } }),
    )!;
    assert.deepEqual(basic.user, { username: 'u', password: 'p' });
    assert.deepEqual(basic.cluster, {
      server: 'https://y',
      'certificate-authority-data': 'Q0E=',
      'proxy-url': 'http://proxy:3128',
    });
    // awsAuthConfig is Argo CD's own plugin, and wins over a bearer token beside it (Cluster.RawRestConfig's order).
    const aws = CODECS.argocd.decode(
      secret({ bearerToken: 'ignored', awsAuthConfig: { clusterName: 'prod', roleARN: 'arn:aws:iam::1:role/r' } }),
    )!;
    assert.equal(aws.user.token, undefined);
    assert.deepEqual(aws.user.exec?.args, ['aws', '--cluster-name', 'prod', '--role-arn', 'arn:aws:iam::1:role/r']);
    assert.equal(aws.user.exec?.command, 'argocd-k8s-auth');
    // A field of the wrong type fails the Secret, as Go's decoder (and so Argo CD) refuses it.
    assert.throws(() => CODECS.argocd.decode(secret({ bearerToken: 7 })), /bearerToken must be a string/);
    assert.throws(() => CODECS.argocd.decode(secret([1])), /must be a JSON object/);
  });

  it('cluster-inventory needs its consumer label before anything is contacted', () => {
    assert.throws(
      () => CODECS['cluster-inventory'].check({ namespace: 'n', name: 'm', format: 'cluster-inventory' }),
      /--format cluster-inventory needs --consumer NAME/,
    );
    assert.doesNotThrow(() => CODECS['cluster-inventory'].check(destination('cluster-inventory') as never));
  });
});
