import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { FleetError } from '../../src/base/errors.js';
import { scrub } from '../../src/kubeconfig/redact.js';
import {
  type CapiCluster,
  capiNotReady,
  chooseCapiVersion,
  refFromCapiCluster,
} from '../../src/providers/hub/cluster-api.js';
import { type ClusterProfile, profileNotReady, refFromProfile } from '../../src/providers/hub/cluster-inventory.js';
import { parseAccessConfig } from '../../src/providers/hub/access-providers.js';
import type { Secret } from '../../src/providers/hub/objects.js';
import { refFromKubeconfigSecret } from '../../src/providers/hub/kubeconfig-secret.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/providers/', import.meta.url));
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
  namespace = 'fleet-system',
): Secret {
  return {
    metadata: { name, namespace, labels },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

describe('kubeconfig provider: a Secret becomes a cluster', () => {
  const o = { provider: 'secrets', key: 'kubeconfig', hub: 'hub-admin' };

  it('is named after the Secret and reached through the kubeconfig current-context, paths kept as written', async () => {
    const ref = refFromKubeconfigSecret(
      secret('prod-eu', { kubeconfig: fixture('member.kubeconfig.yaml') }, { env: 'prod' }),
      o,
    );
    assert.equal(ref.name, 'prod-eu');
    assert.equal(ref.provider, 'secrets');
    assert.equal(ref.server, 'https://member.example.com:6443');
    assert.equal(ref.auth, 'token');
    assert.equal(ref.ready, true);
    // The Secret's labels, and fleet.dev/auth from the kubeconfig user it holds (policy rules and -l select by it).
    assert.deepEqual(ref.labels, { env: 'prod', 'fleet.dev/auth': 'token' });
    assert.deepEqual(ref.source, {
      kind: 'secret',
      namespace: 'fleet-system',
      name: 'prod-eu',
      hub: 'hub-admin',
      secret: 'fleet-system/prod-eu',
      key: 'kubeconfig',
      context: 'reader@member',
    });
    const ctx = await ref.resolve();
    assert.equal(ctx.namespace, 'apps');
    // A relative path in a Secret has no base directory: it is not resolved against anything.
    assert.equal(ctx.cluster['certificate-authority'], 'ca.crt');
    assert.equal(ctx.contextFile, 'secret fleet-system/prod-eu key kubeconfig');
    // The token was seen, so it can never be printed.
    assert.equal(scrub('token fixture-token-not-a-secret-0001'), 'token REDACTED');
  });

  it('a missing key, an unparsable kubeconfig or one without current-context is a row that is not ready, with the reason', async () => {
    const missing = refFromKubeconfigSecret(secret('empty', { other: 'x' }), o);
    assert.equal(missing.ready, false);
    assert.equal(missing.labels['fleet.dev/auth'], 'unknown', 'no kubeconfig user to tell the kind by');
    assert.equal(missing.reason, 'Secret fleet-system/empty has no data key "kubeconfig"');
    assert.equal(missing.server, undefined);
    await assert.rejects(missing.resolve(), { message: 'Secret fleet-system/empty has no data key "kubeconfig"' });

    const garbled = refFromKubeconfigSecret(
      secret('garbled', { kubeconfig: 'clusters:\n- name: a\n  cluster: {server: [\n' }),
      o,
    );
    assert.equal(garbled.ready, false);
    assert.match(garbled.reason!, /^secret fleet-system\/garbled key kubeconfig: not valid YAML \(line \d+\): /);

    const noCurrent = refFromKubeconfigSecret(
      secret('no-current', { kubeconfig: fixture('no-current-context.kubeconfig.yaml') }),
      o,
    );
    assert.equal(
      noCurrent.reason,
      'secret fleet-system/no-current key kubeconfig: the kubeconfig sets no current-context',
    );

    const dangling = refFromKubeconfigSecret(
      secret('dangling', { kubeconfig: 'contexts: [{name: c, context: {cluster: gone}}]\ncurrent-context: c\n' }),
      o,
    );
    assert.equal(
      dangling.reason,
      'secret fleet-system/dangling key kubeconfig: context "c" refers to cluster "gone", which is not defined',
    );
  });

  it('honours another data key', () => {
    const ref = refFromKubeconfigSecret(secret('custom', { 'value.yaml': fixture('member.kubeconfig.yaml') }), {
      ...o,
      key: 'value.yaml',
    });
    assert.equal(ref.ready, true);
    assert.equal(ref.source.key, 'value.yaml');
  });
});

describe('cluster-api provider', () => {
  it('reads v1beta2 when served, else v1beta1; says so when Cluster API is missing', () => {
    assert.equal(chooseCapiVersion(['v1beta2', 'v1beta1']), 'v1beta2');
    assert.equal(chooseCapiVersion(['v1beta1']), 'v1beta1');
    assert.equal(chooseCapiVersion(['v1beta2', 'v1beta1'], 'v1beta1'), 'v1beta1');
    assert.throws(
      () => chooseCapiVersion([]),
      (e: unknown) => e instanceof FleetError && e.kind === 'api-missing',
    );
    assert.throws(() => chooseCapiVersion(['v1beta1'], 'v1beta2'), {
      message: 'the hub does not serve cluster.x-k8s.io/v1beta2 (it serves v1beta1)',
    });
    assert.throws(() => chooseCapiVersion(['v1alpha4']), {
      message: 'the hub serves cluster.x-k8s.io v1alpha4; fleet reads v1beta2 or v1beta1',
    });
  });

  it('ready as upstream: v1beta2 controlPlaneInitialized, v1beta1 phase Provisioned', () => {
    const c = (status: CapiCluster['status']): CapiCluster => ({ metadata: { name: 'a', namespace: 'n' }, status });
    assert.equal(capiNotReady(c({ initialization: { controlPlaneInitialized: true } }), 'v1beta2'), undefined);
    assert.equal(
      capiNotReady(c({ phase: 'Provisioned' }), 'v1beta2'),
      'control plane not initialized (status.initialization.controlPlaneInitialized is not true; phase Provisioned)',
    );
    assert.equal(capiNotReady(c({ phase: 'Provisioned' }), 'v1beta1'), undefined);
    assert.equal(capiNotReady(c({ phase: 'Provisioning' }), 'v1beta1'), 'phase is Provisioning, not Provisioned');
    assert.equal(capiNotReady(c(undefined), 'v1beta1'), 'status.phase is not set (not Provisioned)');
  });

  it('names a Cluster <namespace>/<name>, reads Secret <name>-kubeconfig key value', async () => {
    const cluster: CapiCluster = {
      metadata: { name: 'work-1', namespace: 'capi', labels: { tier: 'gold' } },
      status: { initialization: { controlPlaneInitialized: true } },
    };
    const ref = refFromCapiCluster(
      cluster,
      secret('work-1-kubeconfig', { value: fixture('member.kubeconfig.yaml') }, {}, 'capi'),
      { provider: 'capi', version: 'v1beta2', hub: 'mgmt' },
    );
    assert.equal(ref.name, 'capi/work-1');
    assert.deepEqual(ref.aliases, ['work-1']);
    assert.equal(ref.ready, true);
    assert.equal(ref.server, 'https://member.example.com:6443');
    assert.deepEqual(ref.labels, { tier: 'gold', 'fleet.dev/auth': 'token' });
    assert.equal(ref.source.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.equal(ref.source.secret, 'capi/work-1-kubeconfig');

    const noSecret = refFromCapiCluster(cluster, undefined, { provider: 'capi', version: 'v1beta2' });
    assert.equal(noSecret.reason, 'kubeconfig Secret capi/work-1-kubeconfig not found');
    const noKey = refFromCapiCluster(cluster, secret('work-1-kubeconfig', { kubeconfig: 'x' }, {}, 'capi'), {
      provider: 'capi',
      version: 'v1beta2',
    });
    assert.equal(noKey.reason, 'Secret capi/work-1-kubeconfig has no data key "value"');
    // Not ready yet: say what upstream waits for, with what is missing after it.
    const early = refFromCapiCluster({ ...cluster, status: { phase: 'Pending' } }, undefined, {
      provider: 'capi',
      version: 'v1beta1',
    });
    assert.equal(early.reason, 'phase is Pending, not Provisioned; kubeconfig Secret capi/work-1-kubeconfig not found');
    // Not ready, but reachable: the row keeps the server so the operator can look.
    const provisioning = refFromCapiCluster(
      { ...cluster, status: {} },
      secret('work-1-kubeconfig', { value: fixture('member.kubeconfig.yaml') }, {}, 'capi'),
      { provider: 'capi', version: 'v1beta2' },
    );
    assert.equal(provisioning.ready, false);
    assert.equal(provisioning.server, 'https://member.example.com:6443');
  });
});

describe('cluster-inventory provider', () => {
  const profiles = JSON.parse(fixture('profiles.json')) as Record<string, ClusterProfile>;
  const fileConfig = parseAccessConfig(fixture('access-providers.json'), '/etc/fleet/access.json');
  const tokenFirst = { ...fileConfig, providers: [...fileConfig.providers].reverse() };

  it('ready when ControlPlaneHealthy is True, else the condition says why', () => {
    assert.equal(profileNotReady(profiles.healthy), undefined);
    assert.equal(profileNotReady(profiles.unhealthy), 'ControlPlaneHealthy is False (Unreachable): lease expired');
    assert.equal(profileNotReady(profiles.bare), 'no ControlPlaneHealthy condition');
  });

  it('uses the FIRST provider of the file that the profile offers, not the profile order', async () => {
    const ref = refFromProfile(
      profiles.healthy,
      { kind: 'access', config: fileConfig },
      { provider: 'inv', hub: 'hub' },
    );
    assert.equal(ref.name, 'fleet/eu-1');
    assert.deepEqual(ref.aliases, ['eu-1']);
    assert.equal(ref.source.accessProvider, 'oidc');
    assert.equal(ref.server, 'https://eu-1-oidc.example.com:6443');
    assert.equal(ref.auth, 'exec');
    assert.equal(ref.clusterId, '0b2c7d1e-eu-1');
    assert.equal(ref.clusterIdSource, 'ClusterProfile');
    const ctx = await ref.resolve();
    assert.deepEqual(ctx.user.exec, {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'kubelogin',
      args: ['get-token'],
      env: [],
      installHint: undefined,
      provideClusterInfo: true,
      interactiveMode: 'Never',
    });
  });

  it('accessProviders win over credentialProviders; the profile extensions apply as the policies allow', async () => {
    const ref = refFromProfile(profiles.healthy, { kind: 'access', config: tokenFirst }, { provider: 'inv' });
    assert.equal(ref.source.accessProvider, 'token');
    assert.equal(ref.server, 'https://eu-1.example.com:6443');
    const ctx = await ref.resolve();
    // Only what upstream's rest.Config carries: no TLS server name, never insecure; the exec extension stays for the plugin.
    assert.deepEqual(Object.keys(ctx.cluster).sort(), ['certificate-authority-data', 'extensions', 'server']);
    assert.deepEqual(ctx.cluster.extensions?.[0], {
      name: 'client.authentication.k8s.io/exec',
      extension: { clusterName: 'eu-1' },
    });
    assert.equal(ctx.user.exec?.command, '/etc/fleet/bin/token-plugin');
    assert.deepEqual(ctx.user.exec?.args, ['--verbose', '--region', 'eu']);
    // AppendIfNotExists: the file's MODE stays, the profile's REGION is added.
    assert.deepEqual(ctx.user.exec?.env, [
      { name: 'MODE', value: 'file' },
      { name: 'REGION', value: 'eu' },
    ]);
    assert.equal(ctx.userFile, '/etc/fleet/access.json');

    const replace = {
      ...tokenFirst,
      providers: tokenFirst.providers.map((p) => ({ ...p, envPolicy: 'Replace' as const })),
    };
    const replaced = await refFromProfile(
      profiles.healthy,
      { kind: 'access', config: replace },
      { provider: 'inv' },
    ).resolve();
    assert.deepEqual(replaced.user.exec?.env, [
      { name: 'MODE', value: 'profile' },
      { name: 'REGION', value: 'eu' },
    ]);

    const ignore = {
      ...tokenFirst,
      providers: tokenFirst.providers.map((p) => ({
        ...p,
        envPolicy: 'Ignore' as const,
        argsPolicy: 'Ignore' as const,
      })),
    };
    const ignored = await refFromProfile(
      profiles.healthy,
      { kind: 'access', config: ignore },
      { provider: 'inv' },
    ).resolve();
    assert.deepEqual(
      [ignored.user.exec?.args, ignored.user.exec?.env],
      [['--verbose'], [{ name: 'MODE', value: 'file' }]],
    );
  });

  it('a profile no provider matches, or an unhealthy one, is a row with the reason', () => {
    const unmatched = refFromProfile(profiles.unmatched, { kind: 'access', config: fileConfig }, { provider: 'inv' });
    assert.equal(unmatched.ready, false);
    assert.equal(
      unmatched.reason,
      'no access provider matches: the profile offers "azure", /etc/fleet/access.json configures "oidc", "token"',
    );
    const bare = refFromProfile(profiles.bare, { kind: 'access', config: fileConfig }, { provider: 'inv' });
    assert.equal(
      bare.reason,
      'no ControlPlaneHealthy condition; the profile lists no access providers (status.accessProviders is empty)',
    );
    const unhealthy = refFromProfile(profiles.unhealthy, { kind: 'access', config: fileConfig }, { provider: 'inv' });
    assert.equal(unhealthy.ready, false);
    assert.equal(unhealthy.server, 'https://us-1.example.com:6443');
    assert.equal(unhealthy.reason, 'ControlPlaneHealthy is False (Unreachable): lease expired');
  });

  it('access fields of the wrong shape make that profile a row with the reason, not the end of the listing', () => {
    // The status is open in the CRDs (its fields were renamed across releases): any value can be stored there.
    const cases: [unknown, string][] = [
      [{ name: 'token' }, 'status.accessProviders must be a list, got a mapping'],
      [5, 'status.accessProviders must be a list, got number'],
      [['token'], 'status.accessProviders[0] must be a mapping with a string name'],
      [[{ name: 'token', cluster: 'eu' }], 'status.accessProviders[0].cluster must be a mapping, got string'],
      [
        [{ name: 'token', cluster: { server: 'https://x', extensions: 7 } }],
        'status.accessProviders[0].cluster.extensions must be a list of {name, extension}',
      ],
    ];
    for (const [accessProviders, problem] of cases) {
      const bad = structuredClone(profiles.healthy);
      (bad.status as Record<string, unknown>).accessProviders = accessProviders;
      const ref = refFromProfile(bad, { kind: 'access', config: fileConfig }, { provider: 'inv' });
      assert.deepEqual([ref.ready, ref.reason], [false, `ClusterProfile fleet/eu-1: ${problem}`]);
    }
  });

  it('an extension of the wrong shape is reported, not applied', () => {
    const bad = structuredClone(profiles.healthy);
    bad.status!.accessProviders![0].cluster!.extensions![1].extension = '--region eu';
    const ref = refFromProfile(bad, { kind: 'access', config: tokenFirst }, { provider: 'inv' });
    assert.equal(
      ref.reason,
      'access provider "token": extension clusterprofiles.multicluster.x-k8s.io/exec/additional-args: must be a list of strings',
    );
  });

  it('Secret strategy: exactly one Secret labelled for the consumer and the profile, key Config', async () => {
    const labels = { 'x-k8s.io/cluster-inventory-consumer': 'argo', 'x-k8s.io/cluster-profile': 'eu-1' };
    const one = secret('eu-1-argo', { Config: fixture('member.kubeconfig.yaml') }, labels, 'fleet');
    const strategy = (list: Secret[]) => ({
      kind: 'secret' as const,
      consumer: 'argo',
      secrets: new Map([['fleet/eu-1', list]]),
    });
    const ref = refFromProfile(profiles.healthy, strategy([one]), { provider: 'inv' });
    assert.equal(ref.ready, true);
    assert.equal(ref.server, 'https://member.example.com:6443');
    assert.deepEqual([ref.source.secret, ref.source.key], ['fleet/eu-1-argo', 'Config']);
    assert.equal(
      refFromProfile(profiles.healthy, strategy([]), { provider: 'inv' }).reason,
      'no Secret labelled x-k8s.io/cluster-inventory-consumer=argo,x-k8s.io/cluster-profile=eu-1 in namespace fleet',
    );
    assert.equal(
      refFromProfile(
        profiles.healthy,
        strategy([one, { ...one, metadata: { ...one.metadata, name: 'eu-1-argo-2' } }]),
        { provider: 'inv' },
      ).reason,
      '2 Secrets labelled x-k8s.io/cluster-inventory-consumer=argo,x-k8s.io/cluster-profile=eu-1 in namespace fleet (eu-1-argo, eu-1-argo-2); expected one',
    );
    const lowercase = secret('eu-1-argo', { config: 'x' }, labels, 'fleet');
    assert.equal(
      refFromProfile(profiles.healthy, strategy([lowercase]), { provider: 'inv' }).reason,
      'Secret fleet/eu-1-argo has no data key "Config"',
    );
  });
});

describe('access-provider file', () => {
  it('ignores fields it does not know (the file is shared with controllers) and checks those it does', () => {
    const f = '/etc/fleet/access.json';
    assert.equal(parseAccessConfig(fixture('access-providers.json'), f).providers[1].argsPolicy, 'Append');
    assert.throws(() => parseAccessConfig('{"providers": [', f), {
      message: `${f}: not valid JSON: Unexpected end of JSON input`,
    });
    assert.throws(
      () =>
        parseAccessConfig(
          '{"providers": [{"name": "a", "execConfig": {"command": "x"}, "profileSourcedEnvVarsPolicy": "Merge"}]}',
          f,
        ),
      {
        message: `${f}: providers[0].profileSourcedEnvVarsPolicy: must be one of AppendIfNotExists, Replace, Ignore; got "Merge"`,
      },
    );
    assert.throws(() => parseAccessConfig('{"providers": [{"name": "a", "execConfig": {"args": []}}]}', f), {
      message: `${f}: providers[0].execConfig.command: is required`,
    });
    assert.throws(() => parseAccessConfig('{"providers": [{"execConfig": {"command": "x"}}]}', f), {
      message: `${f}: providers[0].name: is required`,
    });
    assert.throws(
      () =>
        parseAccessConfig('{"providers": [{"name": "a", "execConfig": {"command": "x", "env": [{"name": "A"}]}}]}', f),
      { message: `${f}: providers[0].execConfig.env[0]: must be {name: string, value: string}` },
    );
  });
});
