// fleet wi token's inputs and outputs without a cluster: KUBERNETES_EXEC_INFO as client-go writes it, the flags and the
// cluster's exec config together, the ExecCredential it prints, how fleet recognises an exec user that runs it, and
// the shapes wi setup writes for each consumer (the e2e test runs each through the consumer's own code).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import { describeUser } from '../../src/creds/list.js';
import { EXEC_CLUSTER_CONFIG_EXTENSION as EXEC_EXTENSION } from '../../src/kubeconfig/types.js';
import {
  argocdSecret,
  pluginArgs,
  pluginKubeconfig,
  providerFileFor,
  tokenRequesterRbac,
} from '../../src/workload-identity/consumers.js';
import { checkConsumerFlags } from '../../src/workload-identity/setup-consumer.js';
import {
  execCredential,
  parseExecInfo,
  planTokenRequest,
  pluginTarget,
  wiTokenExec,
} from '../../src/workload-identity/plugin.js';
import type { Cluster } from '../../src/workload-identity/connect.js';

const info = (cluster?: Record<string, unknown>, apiVersion = 'client.authentication.k8s.io/v1') =>
  JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false, ...(cluster ? { cluster } : {}) } });

const target = {
  name: 'prod-eu',
  context: {
    contextName: 'prod-eu',
    clusterName: 'prod-eu',
    cluster: {
      server: 'https://prod.example:6443',
      'certificate-authority-data': Buffer.from('PEM').toString('base64'),
    },
    user: {},
    contextFile: 'x',
    clusterFile: 'x',
  },
  client: undefined,
} as unknown as Cluster;

describe('wi token: KUBERNETES_EXEC_INFO and flags', () => {
  it('reads the server and the cluster config; the audience is the server exactly as written', () => {
    const i = parseExecInfo(info({ server: 'https://Prod.example:443/', config: { serviceAccount: 'ns/app' } }));
    assert.deepEqual(planTokenRequest(i, {}), {
      apiVersion: 'client.authentication.k8s.io/v1',
      serviceAccount: { namespace: 'ns', name: 'app' },
      audience: 'https://Prod.example:443/',
      expirationSeconds: 3600,
    });
  });

  it('takes the audience and lifetime from the config or the flags, and refuses a disagreement', () => {
    const i = parseExecInfo(
      info({ server: 'https://a', config: { serviceAccount: 'ns/app', audience: 'aud', expirationSeconds: 900 } }),
    );
    assert.equal(planTokenRequest(i, {}).audience, 'aud');
    assert.equal(planTokenRequest(i, {}).expirationSeconds, 900);
    assert.equal(planTokenRequest(i, { serviceAccount: 'ns/app', audience: 'aud' }).audience, 'aud');
    assert.throws(
      () => planTokenRequest(i, { serviceAccount: 'ns/other' }),
      /--service-account ns\/other and the cluster's exec config .* ns\/app disagree/,
    );
    assert.throws(() => planTokenRequest(i, { audience: 'x' }), /--audience x and .* aud disagree/);
  });

  it('answers v1beta1 in v1beta1; without KUBERNETES_EXEC_INFO (run by hand) it answers v1 and needs --audience', () => {
    assert.equal(
      planTokenRequest(parseExecInfo(info({ server: 'https://a' }, 'client.authentication.k8s.io/v1beta1')), {
        serviceAccount: 'n/s',
      }).apiVersion,
      'client.authentication.k8s.io/v1beta1',
    );
    assert.throws(() => planTokenRequest(parseExecInfo(undefined), { serviceAccount: 'n/s' }), /no audience/);
    assert.equal(planTokenRequest(parseExecInfo(undefined), { serviceAccount: 'n/s', audience: 'a' }).audience, 'a');
  });

  it('refuses bad input with a one-line configuration error (exit 2) naming where it is', () => {
    const cases: Array<[string | undefined, RegExp]> = [
      ['{', /KUBERNETES_EXEC_INFO: not valid JSON/],
      ['{"kind":"Other"}', /not an ExecCredential/],
      [info({ server: 'https://a', config: 'ns/app' }), /spec\.cluster\.config: expected a mapping/],
      [info({ server: 'https://a', config: { serviceAccount: 'ns/app', extra: 1 } }), /unknown key "extra"/],
      [info({ server: 'https://a', config: { serviceAccount: 'ns/app', expirationSeconds: 60 } }), /at least 600/],
      [info({ server: 'https://a', config: { serviceAccount: '' } }), /serviceAccount must be a non-empty string/],
    ];
    for (const [raw, re] of cases) {
      assert.throws(
        () => parseExecInfo(raw),
        (e: Error & { exitCode?: number }) => re.test(e.message) && e.exitCode === 2 && !e.message.includes('\n'),
        String(raw),
      );
    }
    assert.throws(() => planTokenRequest(parseExecInfo(info({ server: 'https://a' })), {}), /no ServiceAccount/);
    assert.throws(
      () => planTokenRequest(parseExecInfo(info({ server: 'https://a', config: { serviceAccount: 'nope' } })), {}),
      /spec\.cluster\.config\.serviceAccount: expected NAMESPACE\/NAME/,
    );
  });

  it('prints exactly the ExecCredential', () => {
    assert.equal(
      execCredential('client.authentication.k8s.io/v1', 't0k', '2030-01-01T00:00:00Z'),
      '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k","expirationTimestamp":"2030-01-01T00:00:00Z"}}\n',
    );
  });
});

describe('recognising fleet wi token in an exec user', () => {
  it('finds the plugin by its arguments, whatever the command, and reads its settings', () => {
    assert.equal(wiTokenExec({ command: 'aws', args: ['eks', 'get-token'] }), undefined);
    assert.deepEqual(
      wiTokenExec({
        command: '/usr/local/bin/fleet',
        args: ['wi', 'token', '--service-account', 'a/b', '--hub-kubeconfig=/h', '--hub-context', 'hub'],
      }),
      { serviceAccount: 'a/b', audience: undefined, hubKubeconfig: '/h', hubContext: 'hub' },
    );
    assert.deepEqual(
      wiTokenExec({ command: 'node', args: ['run.js', 'wi', 'token'] }, { serviceAccount: 'c/d', audience: 'x' }),
      { serviceAccount: 'c/d', audience: 'x', hubKubeconfig: undefined, hubContext: undefined },
    );
  });

  it('creds list calls it workload-identity, with the hub ServiceAccount and no expiry', async () => {
    const d = await describeUser({ exec: { command: 'fleet', args: ['wi', 'token', '--service-account', 'a/b'] } });
    assert.deepEqual(d, {
      method: 'workload-identity',
      identity: 'hub ServiceAccount a/b',
      noCredentialId: 'minted at each use: its credential-id changes with every token',
      problems: [],
    });
    assert.equal((await describeUser({ exec: { command: 'aws', args: ['eks'] } })).method, 'exec');
  });

  it('wi doctor reads the plugin of a target: ServiceAccount, audience (default the server), hub, env on top of ours', () => {
    const ctx = {
      user: {
        exec: {
          command: 'fleet',
          args: ['wi', 'token'],
          provideClusterInfo: true,
          env: [{ name: 'KUBECONFIG', value: '/hub' }],
        },
      },
      cluster: { server: 'https://m', extensions: [{ name: EXEC_EXTENSION, extension: { serviceAccount: 'n/s' } }] },
    };
    const p = pluginTarget('m', ctx, { HOME: '/h' });
    assert.deepEqual(
      [p.serviceAccountRef, p.audience, p.env.KUBECONFIG, p.env.HOME],
      [{ namespace: 'n', name: 's' }, 'https://m', '/hub', '/h'],
    );
    // Without provideClusterInfo the plugin never sees the cluster's config: neither does the doctor.
    assert.throws(
      () => pluginTarget('m', { ...ctx, user: { exec: { ...ctx.user.exec, provideClusterInfo: false } } }),
      /names no ServiceAccount/,
    );
    assert.throws(
      () => pluginTarget('m', { user: { exec: { command: 'aws' } }, cluster: {} }),
      /does not run fleet wi token; name the hub and the ServiceAccount with --hub and --service-account/,
    );
  });
});

describe('wi setup --consumer: what each consumer gets', () => {
  const input = { target, serviceAccount: { namespace: 'ns', name: 'app' }, plugin: { command: 'fleet' } };

  it('the provider file runs the plugin with provideClusterInfo, as --clusterprofile-provider-file reads it', () => {
    assert.deepEqual(providerFileFor({ command: 'fleet' }), {
      providers: [
        {
          name: 'fleet-workload-identity',
          execConfig: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'fleet',
            args: ['wi', 'token'],
            env: [],
            provideClusterInfo: true,
          },
        },
      ],
    });
    assert.deepEqual(pluginArgs({ command: 'fleet', hub: { kubeconfig: ['/a', '/b'], context: 'hub' } }), [
      'wi',
      'token',
      '--hub-kubeconfig',
      '/a:/b',
      '--hub-context',
      'hub',
    ]);
  });

  it("the kubeconfig holds no credential, only the exec user, and is marked as fleet's", async () => {
    const doc = yaml.load(await pluginKubeconfig(input, 'prod-eu')) as any;
    assert.deepEqual(Object.keys(doc.users[0].user), ['exec']);
    assert.deepEqual(doc.users[0].user.exec, {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'fleet',
      args: ['wi', 'token', '--service-account', 'ns/app'],
      env: [],
      provideClusterInfo: true,
      interactiveMode: 'Never',
    });
    assert.equal(doc.clusters[0].cluster.server, 'https://prod.example:6443');
    assert.equal(doc.extensions[0].name, 'fleet.dev/workload-identity');
  });

  it('the Argo CD Secret: execProviderConfig with provideClusterInfo and config, and the same settings as arguments for older Argo CD', async () => {
    const s = (await argocdSecret(input, {
      namespace: 'argocd',
      name: 'fleet-wi-prod-eu',
      clusterName: 'prod-eu',
    })) as any;
    assert.equal(s.metadata.labels['argocd.argoproj.io/secret-type'], 'cluster');
    const config = JSON.parse(Buffer.from(s.data.config, 'base64').toString());
    assert.deepEqual(config.execProviderConfig, {
      command: 'fleet',
      args: ['wi', 'token', '--service-account', 'ns/app', '--audience', 'https://prod.example:6443'],
      apiVersion: 'client.authentication.k8s.io/v1',
      provideClusterInfo: true,
      config: { serviceAccount: 'ns/app' },
    });
    assert.deepEqual(config.tlsClientConfig, { insecure: false, caData: Buffer.from('PEM').toString('base64') });
  });

  it("the plugin's own identity may create tokens for exactly that ServiceAccount", () => {
    const [role, binding] = tokenRequesterRbac(
      { namespace: 'ns', name: 'app' },
      { namespace: 'argocd', name: 'ctrl' },
    ) as any[];
    assert.deepEqual(role.rules, [
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: ['app'] },
    ]);
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'ctrl', namespace: 'argocd' }]);
  });

  it('consumer flags are checked before any cluster is touched', async () => {
    const base = { argocdNamespace: 'argocd', pluginCommand: 'fleet' };
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'cluster-inventory' }),
      /needs --profile NAMESPACE\/NAME/,
    );
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'cluster-inventory', profile: 'x' }),
      /--profile: expected NAMESPACE\/NAME, got "x"/,
    );
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'kubeconfig', out: '/nonexistent-dir/x' }),
      /directory \/nonexistent-dir does not exist/,
    );
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'flux', out: 'x' }),
      /--out is for --consumer kubeconfig/,
    );
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'flux', pluginIdentity: ['a/b'] }),
      /Flux mints its own tokens/,
    );
    await assert.rejects(
      checkConsumerFlags({ ...base, consumer: 'argocd', pluginIdentity: ['nope'] }),
      /--plugin-identity: expected NAMESPACE\/NAME/,
    );
    assert.equal((await checkConsumerFlags({ ...base, consumer: 'argocd' })).name, 'argocd');
  });
});
