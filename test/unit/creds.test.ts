import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { ClusterRef } from '../../src/providers/types.js';

import { makeClientKeyAndCsr } from '../../src/creds/csr.js';
import { fluxKey } from '../../src/creds/flux-refs.js';
import { displayName } from '../../src/creds/generate.js';
import { FORMATS, destinationSecret, secretName } from '../../src/creds/codecs/index.js';
import { secretreaderAccessProvider } from '../../src/creds/codecs/kubeconfig-secretreader.js';
import { buildKubeconfig, kubeconfigSha256 } from '../../src/creds/kubeconfig-out.js';
import { describeUser, markExpiring, profileShapeWarnings, type CredentialItem } from '../../src/creds/list.js';
import { CREDENTIAL_ID_EXTRA, parseCredentialId } from '../../src/kubeconfig/credentials.js';
import { PRESETS, findPreset } from '../../src/creds/presets.js';
import { rbacObjects, safeName } from '../../src/creds/rbac.js';
import { assessGrant, refuseRisky } from '../../src/creds/risk-gate.js';
import { parseRules } from '../../src/creds/rules-file.js';
import { deniedProbe, grantedProbe } from '../../src/creds/verify.js';

const jwt = (claims: object) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2lnbmF0dXJlc2lnbmF0dXJl`;

describe('creds presets and risk', () => {
  it("the display name (Argo CD's cluster name): --display-name, else the context of a kubeconfig cluster, else the fleet name", () => {
    const ref = (kind: 'kubeconfig-file' | 'secret', name: string, context?: string) =>
      ({ name, source: { kind, context } }) as unknown as ClusterRef;
    assert.equal(displayName({ ref: ref('kubeconfig-file', '/home/me/.kube/config+prod-eu', 'prod-eu') }), 'prod-eu');
    assert.equal(
      displayName({ ref: ref('secret', 'prod-eu', 'reader@member') }),
      'prod-eu',
      "a hub Secret's cluster: its name, not the context inside",
    );
    assert.equal(
      displayName({ ref: ref('kubeconfig-file', '/k+prod-eu', 'prod-eu'), displayName: 'Production (EU)' }),
      'Production (EU)',
    );
  });

  it('every preset passes the risk rules per namespace; only secrets-reader is refused cluster-wide', () => {
    for (const p of PRESETS) assert.deepEqual(assessGrant(p.rules, false).blocking, [], p.name);
    const wide = PRESETS.filter((p) => assessGrant(p.rules, true).blocking.length > 0).map((p) => p.name);
    assert.deepEqual(wide, ['namespace-admin', 'secrets-reader']);
  });

  it('refuses naming the rule, and counts the rest', () => {
    const rules = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    assert.throws(
      () => refuseRisky(assessGrant(rules, false), 'to grant x'),
      /risk rule "cluster-admin" \(rule 1\).*and 10 more: wildcard-verbs, wildcard-resources, wildcard-groups, escalate, bind, impersonate/,
    );
    assert.throws(
      () =>
        refuseRisky(
          assessGrant([{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }], false),
          'to grant x',
        ),
      /nodes-proxy/,
    );
    assert.throws(() => findPreset('root'), /no preset "root"; presets: view, edit/);
  });
});

describe('creds rules file', () => {
  it('accepts a list or a mapping with rules:, and names the file and line of a bad rule', () => {
    assert.equal(parseRules('- apiGroups: [""]\n  resources: [pods]\n  verbs: [get]\n', 'r.yaml').length, 1);
    assert.equal(
      parseRules(
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nrules:\n- apiGroups: [""]\n  resources: [pods]\n  verbs: [get]\n',
        'r.yaml',
      ).length,
      1,
    );
    assert.throws(
      () =>
        parseRules(
          'rules:\n- apiGroups: [""]\n  resources: [pods]\n  verbs: [get]\n- resources: [pods]\n  verbs: [get]\n',
          'r.yaml',
        ),
      /^ConfigError: r\.yaml:5: rules\[1\]: apiGroups is required/,
    );
    assert.throws(
      () => parseRules('- apiGroups: [""]\n  resources: [pods]\n  verbs: [get]\n  verb: [list]\n', 'r.yaml'),
      /r\.yaml:1: rules\[0\]: unknown field "verb"/,
    );
    assert.throws(() => parseRules('- a: [\n', 'r.yaml'), /r\.yaml:2: not valid YAML/);
    assert.throws(() => parseRules('[]', 'r.yaml'), /r\.yaml:1: the rules list is empty/);
  });
});

describe('creds RBAC objects', () => {
  it('per namespace a Role and RoleBinding; cluster-wide a ClusterRole and binding; a named ClusterRole only a binding carrying its name', () => {
    const sa = { kind: 'ServiceAccount' as const, namespace: 'sys', name: 'bot' };
    const access = { kind: 'preset' as const, name: 'view', rules: findPreset('view').rules };
    assert.deepEqual(
      rbacObjects(sa, access, ['a', 'b'], 'token').map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`),
      [
        'Role a/fleet-creds-sys-bot',
        'RoleBinding a/fleet-creds-sys-bot',
        'Role b/fleet-creds-sys-bot',
        'RoleBinding b/fleet-creds-sys-bot',
      ],
    );
    assert.deepEqual(
      rbacObjects(sa, access, [], 'token').map((o) => o.kind),
      ['ClusterRole', 'ClusterRoleBinding'],
    );
    const bound = rbacObjects(
      { kind: 'User', name: 'CI:Bot@x', groups: [] },
      { kind: 'cluster-role', name: 'view', rules: [] },
      [],
      'client-cert',
    );
    assert.deepEqual(
      bound.map((o) => [o.kind, o.metadata.name, (o as any).roleRef.name, (o as any).subjects[0].kind]),
      [['ClusterRoleBinding', 'fleet-creds-user-ci-bot-x-view', 'view', 'User']],
    );
    assert.equal(bound[0].metadata.labels!['app.kubernetes.io/managed-by'], 'fleet');
    assert.equal(safeName('..A:b..'), 'a-b');
  });
});

describe('creds verification probes', () => {
  it('granted: the first concrete permission; denied: the same outside the namespaces, or a cluster power no rule covers', () => {
    const rules = [
      { apiGroups: ['*'], resources: ['*'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['*', 'patch'] },
    ];
    const g = grantedProbe(rules, ['team'])!;
    assert.deepEqual(g.attributes, {
      namespace: 'team',
      verb: 'patch',
      group: 'apps',
      resource: 'deployments',
      subresource: 'scale',
    });
    assert.equal(deniedProbe(rules, ['team'], g)!.attributes.namespace, 'kube-system');
    assert.equal(deniedProbe(rules, ['kube-system'], g)!.attributes.namespace, 'default');
    const wide = deniedProbe([{ apiGroups: [''], resources: ['namespaces'], verbs: ['delete'] }], [])!;
    assert.equal(wide.text, 'create clusterrolebindings.rbac.authorization.k8s.io cluster-wide');
    assert.equal(deniedProbe([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], []), undefined);
  });
});

describe('creds formats', () => {
  const cluster = { server: 'https://x:6443', 'certificate-authority-data': 'Q0E=' };
  const kubeconfig = buildKubeconfig({
    name: 'm1',
    userName: 'u',
    cluster,
    user: { token: 'tok-secret-123' },
    facts: { method: 'token' },
  });

  it('one Secret per format with the names, labels, type and key its consumer reads', () => {
    const shape = (format: (typeof FORMATS)[number]) => {
      const s = destinationSecret(
        { namespace: 'hub', name: 'm1', format, consumer: 'c1' },
        { kubeconfig, cluster, user: { token: 'tok-secret-123' }, clusterName: 'm1', annotations: {} },
      );
      return {
        name: s.metadata.name,
        type: s.type,
        keys: Object.keys(s.data as object).sort(),
        labels: s.metadata.labels,
      };
    };
    assert.deepEqual(shape('multicluster-runtime'), {
      name: 'm1',
      type: 'Opaque',
      keys: ['kubeconfig'],
      labels: { 'app.kubernetes.io/managed-by': 'fleet', 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' },
    });
    assert.deepEqual(shape('cluster-api'), {
      name: 'm1-kubeconfig',
      type: 'cluster.x-k8s.io/secret',
      keys: ['value'],
      labels: { 'app.kubernetes.io/managed-by': 'fleet', 'cluster.x-k8s.io/cluster-name': 'm1' },
    });
    assert.deepEqual(shape('cluster-inventory').keys, ['Config']);
    assert.deepEqual(shape('cluster-inventory').labels, {
      'app.kubernetes.io/managed-by': 'fleet',
      'x-k8s.io/cluster-inventory-consumer': 'c1',
      'x-k8s.io/cluster-profile': 'm1',
    });
    assert.deepEqual(shape('kubeconfig-secretreader').keys, ['kubeconfig']);
    assert.deepEqual(shape('flux').keys, ['value']);
    assert.deepEqual(shape('argocd').keys, ['config', 'name', 'server']);
    const argo = destinationSecret(
      { namespace: 'hub', name: 'm1', format: 'argocd' },
      { kubeconfig, cluster, user: { token: 'tok-secret-123' }, clusterName: 'm1', annotations: {} },
    );
    assert.deepEqual(JSON.parse(Buffer.from((argo.data as any).config, 'base64').toString()), {
      bearerToken: 'tok-secret-123',
      tlsClientConfig: { insecure: false, caData: 'Q0E=' },
    });
    assert.equal(
      Buffer.from((argo.data as any).name, 'base64').toString(),
      'm1',
      'without a display name, the cluster name',
    );
    const named = destinationSecret(
      { namespace: 'hub', name: 'm1', format: 'argocd' },
      {
        kubeconfig,
        cluster,
        user: { token: 't' },
        clusterName: '/k/a.kubeconfig+m1',
        displayName: 'EU prod',
        annotations: {},
      },
    );
    assert.equal(
      Buffer.from((named.data as any).name, 'base64').toString(),
      'EU prod',
      "Argo CD's name is the display name",
    );
    assert.equal(secretName({ namespace: 'n', name: 'c', format: 'cluster-api' }), 'c-kubeconfig');
    assert.deepEqual(
      secretreaderAccessProvider({ namespace: 'hub', name: 'm1', format: 'kubeconfig-secretreader' }, cluster).cluster
        .extensions,
      [{ name: 'client.authentication.k8s.io/exec', extension: { name: 'm1', namespace: 'hub', key: 'kubeconfig' } }],
    );
  });

  it("a one-context kubeconfig marked as fleet's, fingerprinted by its bytes", () => {
    const doc = yaml.load(kubeconfig) as any;
    assert.equal(doc['current-context'], 'm1');
    assert.deepEqual(doc.extensions, [{ name: 'fleet.dev/credential', extension: { method: 'token' } }]);
    assert.match(kubeconfigSha256(kubeconfig), /^[0-9a-f]{64}$/);
  });
});

describe('creds list descriptions', () => {
  it('bound, plain and legacy ServiceAccount tokens, static tokens and client certificates', async () => {
    const bound = await describeUser({
      token: jwt({
        iss: 'https://i',
        sub: 'system:serviceaccount:a:b',
        iat: 1_800_000_000,
        exp: 1_800_003_600,
        'kubernetes.io': { namespace: 'a', secret: { name: 's', uid: 'u' } },
      }),
    });
    assert.deepEqual(bound, {
      method: 'bound-token',
      identity: 'system:serviceaccount:a:b',
      issued: '2027-01-15T08:00:00Z',
      expires: '2027-01-15T09:00:00Z',
      noCredentialId: 'a JWT without a jti claim: the API server records no credential-id for it',
      problems: [],
    });
    assert.equal((await describeUser({ token: jwt({ iss: 'https://i', sub: 's', exp: 1 }) })).method, 'token');
    const legacy = await describeUser({
      token: jwt({
        iss: 'kubernetes/serviceaccount',
        'kubernetes.io/serviceaccount/namespace': 'a',
        'kubernetes.io/serviceaccount/service-account.name': 'b',
      }),
    });
    assert.deepEqual(
      [legacy.method, legacy.identity, legacy.expires],
      ['legacy-token', 'system:serviceaccount:a:b', undefined],
    );
    assert.equal((await describeUser({ token: 'opaque-static-token' })).method, 'static-token');
    assert.equal((await describeUser({ exec: { command: 'aws' } })).method, 'exec');
  });

  it('the credential-id kube-apiserver records for each (audit user.extra), or why there is none', async () => {
    const jti = '5f0c2d2e-6a6b-4f5e-9c1e-3b0a8f1d2c4e';
    const bound = await describeUser({
      token: jwt({ iss: 'https://i', sub: 'system:serviceaccount:a:b', jti, 'kubernetes.io': { pod: {} } }),
    });
    assert.deepEqual(
      [bound.method, bound.credentialId, bound.noCredentialId],
      ['bound-token', `JTI=${jti}`, undefined],
    );
    // The legacy authenticator records none even if the claims held a jti.
    const legacy = await describeUser({
      token: jwt({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:a:b', jti }),
    });
    assert.deepEqual(
      [legacy.method, legacy.credentialId, legacy.noCredentialId],
      ['legacy-token', undefined, 'a legacy ServiceAccount token: the API server records no credential-id for it'],
    );
    assert.equal(
      (await describeUser({ token: 'opaque' })).noCredentialId,
      'a static token (not a JWT): the API server records no credential-id for it',
    );
    assert.match((await describeUser({ exec: { command: 'aws' } })).noCredentialId ?? '', /minted by the exec plugin/);
    // A certificate: SHA-256 of its DER (the PEM body), in lowercase hex; of the first certificate of a chain, the one
    // a client presents.
    const selfSigned = (cn: string) =>
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          '/dev/null',
        ].concat(['-subj', `/CN=${cn}`, '-days', '1']),
        { stdio: ['ignore', 'pipe', 'ignore'] },
      ).toString();
    const [leaf, other] = [selfSigned('ci'), selfSigned('intermediate')];
    const der = Buffer.from(leaf.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const expected = `X509SHA256=${createHash('sha256').update(der).digest('hex')}`;
    const cert = await describeUser({ 'client-certificate-data': Buffer.from(leaf + other).toString('base64') });
    assert.deepEqual([cert.method, cert.credentialId], ['client-cert', expected]);
  });

  it('--credential-id takes the value an audit event shows, and nothing else', () => {
    const hex = 'AB'.repeat(32);
    assert.equal(parseCredentialId(`X509SHA256=${hex}`, '--credential-id'), `X509SHA256=${hex.toLowerCase()}`);
    assert.equal(parseCredentialId(' JTI=abc-1 ', '--credential-id'), 'JTI=abc-1');
    for (const bad of ['abc', 'JTI=', 'X509SHA256=ab', 'jti=abc', 'JTI=a b', `X509SHA256=${'g'.repeat(64)}`])
      assert.throws(() => parseCredentialId(bad, '--credential-id'), {
        message: `--credential-id: expected JTI=<jti> or X509SHA256=<64 hex digits> (user.extra["${CREDENTIAL_ID_EXTRA}"] of an audit event), got ${JSON.stringify(bad)}`,
      });
  });

  it('marks what expires within the window, expired included', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const items = [
      { expires: '2026-01-01T01:00:00Z' },
      { expires: '2025-12-31T00:00:00Z' },
      { expires: '2026-01-05T00:00:00Z' },
      {},
    ] as CredentialItem[];
    assert.equal(markExpiring(items, 2 * 3600_000, now), 2);
    assert.deepEqual(
      items.map((i) => i.expiring),
      [true, true, false, false],
    );
  });
});

describe('creds client certificate request', () => {
  it('ECDSA P-256, CN = user, O = groups, self-signature valid; a comma in the name adds no attribute', async () => {
    const { keyPem, csrPem } = await makeClientKeyAndCsr('alice,O=system:masters', ['devs']);
    // The key is a P-256 key in SEC1 form (fabric8 reads no PKCS#8 EC key: src/creds/csr.ts), and it is the key the
    // request was signed for.
    assert.match(keyPem, /^-----BEGIN EC PRIVATE KEY-----\n[^]+\n-----END EC PRIVATE KEY-----\n$/);
    const key = createPrivateKey(keyPem);
    assert.equal(key.asymmetricKeyType, 'ec');
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(
      createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64'),
      createPublicKey(execFileSync('openssl', ['req', '-noout', '-pubkey'], { input: csrPem }).toString())
        .export({ type: 'spki', format: 'der' })
        .toString('base64'),
    );
    const text = execFileSync('openssl', ['req', '-noout', '-text', '-verify'], {
      input: csrPem,
      stdio: ['pipe', 'pipe', 'pipe'],
    }).toString();
    assert.match(text, /Subject: CN\s*=\s*"alice,O=system:masters", O\s*=\s*devs/);
    assert.match(text, /prime256v1|P-256/);
  });
});

describe('creds list: Flux references', () => {
  const ref = (key?: string) => ({
    namespace: 'flux-system',
    name: 'prod',
    ...(key ? { key } : {}),
    referencedBy: ['Kustomization flux-system/apps'],
  });
  const secret = (...keys: string[]) => ({
    metadata: { name: 'prod', namespace: 'flux-system' },
    data: Object.fromEntries(keys.map((k) => [k, 'eA=='])),
  });
  it("reads the key the reference names, else value, else value.yaml (Flux's order)", () => {
    assert.equal(fluxKey(ref('kubeconfig'), secret('value', 'kubeconfig')), 'kubeconfig');
    assert.equal(fluxKey(ref(), secret('value', 'value.yaml')), 'value');
    assert.equal(fluxKey(ref(), secret('value.yaml')), 'value.yaml');
    assert.equal(
      fluxKey(ref(), secret('other')),
      'value',
      'neither: value, so the problem names the key Flux wants first',
    );
  });
});

describe('creds list: ClusterProfiles of the wrong shape', () => {
  const p = (name: string, status: unknown) => ({ metadata: { namespace: 'inv', name }, status });
  it('one warning per malformed profile, naming the hub, the profile and the field; none for a good one or a provider without a cluster', () => {
    const secretreader = {
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { name: 's', key: 'k' } }],
    };
    assert.deepEqual(
      profileShapeWarnings(
        [
          p('good', { accessProviders: [{ name: 'kubeconfig-secretreader', cluster: secretreader }] }),
          p('no-status', undefined),
          p('no-cluster', { accessProviders: [{ name: 'kubeconfig-secretreader' }] }),
          p('mapping', { accessProviders: { 'kubeconfig-secretreader': { cluster: secretreader } } }),
          p('number-name', { accessProviders: [{ name: 7, cluster: secretreader }] }),
          p('old-api', { credentialProviders: [{ name: 'x', cluster: 'https://10.0.0.1' }] }),
          p('status-list', ['token-abc']),
        ],
        'hub',
      ),
      [
        'ClusterProfile hub:inv/mapping: status.accessProviders must be a list, got a mapping; the credentials its access providers name were not read',
        'ClusterProfile hub:inv/number-name: status.accessProviders[0] must be a mapping with a string name; the credentials its access providers name were not read',
        'ClusterProfile hub:inv/old-api: status.credentialProviders[0].cluster must be a mapping, got string; the credentials its access providers name were not read',
        'ClusterProfile hub:inv/status-list: status must be a mapping, got a list; the credentials its access providers name were not read',
      ],
    );
  });
  it('repeats no value of the profile (a token misplaced in it stays out of the warning)', () => {
    const w = profileShapeWarnings([p('leak', { accessProviders: { token: 'sekret-token-value' } })], 'hub');
    assert.equal(w.length, 1);
    assert.doesNotMatch(w[0], /sekret/);
  });
});
