// Issue 29: data is not code. A kubeconfig read from a cluster (hub data) never runs a program nor names a local file
// unless the operator allowed it; the user's own kubeconfigs are judged only by the kuberc. Each rule is checked where a
// provider hands out the cluster (not ready, with the one-line reason) and where the connector would connect.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { FleetError } from '../../src/base/errors.js';
import { parseFleetConfig } from '../../src/config/fleet-config.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { contextFromKubeconfigText } from '../../src/kubeconfig/from-text.js';
import { TrustPolicy } from '../../src/kubeconfig/trust.js';
import { parseAccessConfig } from '../../src/providers/hub/access-providers.js';
import { type ClusterProfile, refFromProfile } from '../../src/providers/hub/cluster-inventory.js';
import { refFromKubeconfigSecret } from '../../src/providers/hub/kubeconfig-secret.js';
import type { Secret } from '../../src/providers/hub/objects.js';
import { guardRef } from '../../src/providers/ref.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'fleet-trust-'));
const marker = join(dir, 'ran');

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
}

const shExec = {
  exec: {
    apiVersion: 'client.authentication.k8s.io/v1',
    interactiveMode: 'Never',
    command: '/bin/sh',
    args: ['-c', `touch ${marker}; exit 1`],
  },
};

function secret(name: string, text: string): Secret {
  return { metadata: { name, namespace: 'fleet-system', labels: {} }, data: { kubeconfig: b64(text) } };
}

const o = { provider: 'secrets', key: 'kubeconfig', hub: 'hub-admin' };
const strict = () => new TrustPolicy({ loadKuberc: async () => undefined, env: { PATH: '/usr/bin:/bin' } });

describe('hub data may not run programs', () => {
  it('a Secret whose kubeconfig runs /bin/sh is not ready, naming the Secret, the command and the line that allows it', async () => {
    const ref = await guardRef(refFromKubeconfigSecret(secret('evil', kubeconfig(shExec)), o), strict());
    assert.equal(ref.ready, false);
    assert.equal(
      ref.reason,
      // An interpreter runs for data only with exact arguments: the line names them at once (issue 46 follow-up: a line
      // without them led only to the next refusal).
      'Secret fleet-system/evil key kubeconfig: exec plugin "/bin/sh" is named by hub data, and hub data may not run programs; to allow it, add credentialPluginAllowlist: [{command: /bin/sh, args: [its 2 arguments as Secret fleet-system/evil key kubeconfig writes them]}] to provider "secrets" in the fleet configuration',
    );
    assert.deepEqual(
      { command: ref.plugin?.command, trust: ref.plugin?.trust, allowed: ref.plugin?.allowed },
      { command: '/bin/sh', trust: 'data', allowed: false },
    );
    await assert.rejects(
      ref.resolve(),
      (e: FleetError) => e.kind === 'plugin' && e.exitCode === 1 && e.message === ref.reason,
    );
    assert.equal(existsSync(marker), false, 'nothing ran');
  });

  it('the connector refuses it too, whatever path led there, and the plugin never starts', async () => {
    const exec = new ExecCredentialRunner();
    const connector = new Connector({ timeoutMs: 1000, exec, trust: strict() });
    const ctx = contextFromKubeconfigText(kubeconfig(shExec), 'secret fleet-system/evil key kubeconfig', {
      object: 'Secret fleet-system/evil key kubeconfig',
    });
    await assert.rejects(connector.context(ctx, 'evil'), /hub data may not run programs/);
    // A connector made without a policy is the strictest one.
    await assert.rejects(
      new Connector({ timeoutMs: 1000, exec }).context(ctx, 'evil'),
      /hub data may not run programs/,
    );
    assert.equal(exec.runs, 0);
    assert.equal(existsSync(marker), false);
  });

  it('allowed by the provider entry, by the file-wide list, or by a kuberc Allowlist; never by AllowAll', async () => {
    const ref = refFromKubeconfigSecret(secret('ok', kubeconfig(shExec)), o);
    // /bin/sh is an interpreter: an entry allows it for data only with the exact arguments data gives it.
    const shAllowed = { command: '/bin/sh', env: [], args: [...shExec.exec.args] };
    const byProvider = strict();
    byProvider.allow('secrets', {
      credentialPluginAllowlist: [shAllowed],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: providers[0]',
    });
    const a = await guardRef(ref, byProvider);
    assert.equal(a.ready, true);
    assert.deepEqual(
      { allowed: a.plugin?.allowed, reason: a.plugin?.reason },
      { allowed: true, reason: 'credentialPluginAllowlist of /etc/fleet.yaml: providers[0]' },
    );

    const otherProvider = strict();
    otherProvider.allow('capi', {
      credentialPluginAllowlist: [shAllowed],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: providers[1]',
    });
    assert.equal((await guardRef(ref, otherProvider)).ready, false, "another provider's list does not apply");

    const fileWide = strict();
    fileWide.allow(undefined, {
      credentialPluginAllowlist: [shAllowed],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: top level',
    });
    assert.equal((await guardRef(ref, fileWide)).ready, true);

    const noArgs = strict();
    noArgs.allow(undefined, {
      credentialPluginAllowlist: [{ command: '/bin/sh', env: [] }],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: top level',
    });
    const refusedNoArgs = await guardRef(ref, noArgs);
    assert.equal(refusedNoArgs.ready, false, 'an entry without args does not let data give a shell a script');
    assert.match(refusedNoArgs.reason!, /"\/bin\/sh" is an interpreter \(a shell.*2 arguments of its own/);
    assert.doesNotMatch(refusedNoArgs.reason!, /touch/, 'the arguments are never shown');

    const otherArgs = strict();
    otherArgs.allow(undefined, {
      credentialPluginAllowlist: [{ command: '/bin/sh', env: [], args: ['-c', 'exit 0'] }],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: top level',
    });
    assert.equal((await guardRef(ref, otherArgs)).ready, false, 'other arguments than those allowed are refused');

    const kubercList = new TrustPolicy({
      loadKuberc: async () => ({ path: '/home/u/.kube/kuberc', policy: 'Allowlist', allowlist: ['/bin/sh'] }),
      env: {},
    });
    const byKuberc = await guardRef(ref, kubercList);
    assert.equal(byKuberc.ready, false, 'a kuberc entry allows a program, never a script data gives a shell');
    assert.match(byKuberc.reason!, /is an interpreter/);
    const okExec = { exec: { ...shExec.exec, command: '/usr/bin/true', args: ['--token'] } };
    const okRef = refFromKubeconfigSecret(secret('ok2', kubeconfig(okExec)), o);
    const kubercTrue = new TrustPolicy({
      loadKuberc: async () => ({ path: '/home/u/.kube/kuberc', policy: 'Allowlist', allowlist: ['/usr/bin/true'] }),
      env: {},
    });
    assert.equal((await guardRef(okRef, kubercTrue)).ready, true, 'a kuberc Allowlist entry allows a program');

    const allowAll = new TrustPolicy({
      loadKuberc: async () => ({ path: '/home/u/.kube/kuberc', policy: 'AllowAll', allowlist: [] }),
      env: {},
    });
    assert.equal(
      (await guardRef(ref, allowAll)).ready,
      false,
      'AllowAll is the default for the user’s own files, not a say-so for hub data',
    );
  });

  it('allowed for data, a command is still refused by the kuberc, naming it', async () => {
    const trust = new TrustPolicy({
      loadKuberc: async () => ({ path: '/home/u/.kube/kuberc', policy: 'DenyAll', allowlist: [] }),
      env: {},
    });
    trust.allow('secrets', {
      credentialPluginAllowlist: [{ command: '/bin/sh', env: [], args: [...shExec.exec.args] }],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: providers[0]',
    });
    const ref = await guardRef(refFromKubeconfigSecret(secret('ok', kubeconfig(shExec)), o), trust);
    assert.equal(ref.ready, false);
    assert.match(
      ref.reason!,
      /^Secret fleet-system\/ok key kubeconfig: .*"\/bin\/sh".*DenyAll.*\/home\/u\/\.kube\/kuberc/,
    );
  });
});

describe('hub data may not read local files', () => {
  for (const [field, where, value] of [
    ['certificate-authority', 'cluster', '/etc/passwd'],
    ['client-certificate', 'user', '/home/u/.ssh/id_rsa'],
    ['client-key', 'user', '/home/u/.ssh/id_rsa'],
    ['tokenFile', 'user', '/var/run/secrets/kubernetes.io/serviceaccount/token'],
  ] as const) {
    it(`${field}: ${value} is refused, naming the field, the file and the line that allows it`, async () => {
      const text =
        where === 'cluster'
          ? kubeconfig({ token: 'x' }, { [field]: value })
          : kubeconfig({ [field]: value, ...(field === 'client-key' ? { 'client-certificate-data': 'eA==' } : {}) });
      const ref = await guardRef(refFromKubeconfigSecret(secret('files', text), o), strict());
      assert.equal(ref.ready, false);
      assert.equal(
        ref.reason,
        `Secret fleet-system/files key kubeconfig: ${field} names the local file ${value}, and hub data may not read local files; to allow it, add localFileAllowlist: [${value}] to provider "secrets" in the fleet configuration`,
      );
      await assert.rejects(ref.resolve(), (e: FleetError) => e.kind === 'config' && e.exitCode === 1);
    });
  }

  it('a localFileAllowlist directory allows the files under it, and no others (.. does not escape)', async () => {
    const trust = strict();
    trust.allow('secrets', {
      credentialPluginAllowlist: [],
      localFileAllowlist: ['/var/run/secrets/tokens/'],
      where: 'fleet.yaml: providers[0]',
    });
    const ok = await guardRef(
      refFromKubeconfigSecret(secret('a', kubeconfig({ tokenFile: '/var/run/secrets/tokens/member' })), o),
      trust,
    );
    assert.equal(ok.ready, true);
    const escape = await guardRef(
      refFromKubeconfigSecret(secret('b', kubeconfig({ tokenFile: '/var/run/secrets/tokens/../../../etc/shadow' })), o),
      trust,
    );
    assert.equal(escape.ready, false);
    const relative = await guardRef(
      refFromKubeconfigSecret(secret('c', kubeconfig({ tokenFile: 'tokens/member' })), o),
      trust,
    );
    assert.equal(relative.ready, false, 'a relative path has no base in a Secret: never allowed');
  });
});

describe('a ClusterProfile adds arguments and variables to the user’s command, never what runs', () => {
  const access = parseAccessConfig(
    JSON.stringify({
      providers: [
        {
          name: 'p',
          execConfig: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/true' },
          profileSourcedCLIArgsPolicy: 'Append',
          profileSourcedEnvVarsPolicy: 'AppendIfNotExists',
        },
      ],
    }),
    join(dir, 'access.json'),
  );
  const profile = (envs: Record<string, string>): ClusterProfile => ({
    metadata: { name: 'm', namespace: 'inv' },
    status: {
      conditions: [{ type: 'ControlPlaneHealthy', status: 'True' }],
      accessProviders: [
        {
          name: 'p',
          cluster: {
            server: 'https://127.0.0.1:1',
            extensions: [
              { name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args', extension: ['--region', 'eu'] },
              { name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs', extension: envs },
            ],
          },
        },
      ],
    },
  });

  it('arguments pass as upstream passes them (the command is the file’s); a variable only by a fleet.yaml entry’s env', async () => {
    const refused = await guardRef(
      refFromProfile(profile({ REGION: 'eu' }), { kind: 'access', config: access }, { provider: 'inv' }),
      strict(),
    );
    assert.equal(refused.ready, false, 'no entry names REGION: data may not set it, whatever its name');
    assert.equal(
      refused.reason,
      'ClusterProfile inv/m: hub data sets REGION for exec plugin "/bin/true", and no credentialPluginAllowlist entry for that command allows it (variables reach a plugin from hub data only by name, per command; a kuberc cannot allow any); to allow it, add credentialPluginAllowlist: [{command: /bin/true, env: [REGION]}] to provider "inv" in the fleet configuration',
    );
    const trust = strict();
    trust.allow('inv', {
      credentialPluginAllowlist: [{ command: '/bin/true', env: ['REGION'] }],
      localFileAllowlist: [],
      where: '/etc/fleet.yaml: providers[0]',
    });
    const ref = await guardRef(
      refFromProfile(profile({ REGION: 'eu' }), { kind: 'access', config: access }, { provider: 'inv' }),
      trust,
    );
    assert.equal(ref.ready, true, ref.reason);
    assert.deepEqual({ trust: ref.plugin?.trust, allowed: ref.plugin?.allowed }, { trust: 'file', allowed: true });
    const ctx = await ref.resolve();
    assert.deepEqual(ctx.user.exec?.args, ['--region', 'eu']);
    assert.deepEqual(
      ctx.user.exec?.env?.find((e) => e.name === 'REGION'),
      { name: 'REGION', value: 'eu' },
    );
    const other = await guardRef(
      refFromProfile(
        profile({ REGION: 'eu', CLOUDSDK_CONFIG: '/tmp/x' }),
        { kind: 'access', config: access },
        { provider: 'inv' },
      ),
      trust,
    );
    assert.equal(other.ready, false);
    assert.match(
      other.reason!,
      /hub data sets CLOUDSDK_CONFIG for exec plugin "\/bin\/true".*add env: \[CLOUDSDK_CONFIG\] to the entry for \/bin\/true in \/etc\/fleet\.yaml: providers\[0\]$/,
    );
  });

  for (const name of ['LD_PRELOAD', 'PATH', 'DYLD_INSERT_LIBRARIES', 'NODE_OPTIONS']) {
    it(`${name} from the profile makes the cluster not ready`, async () => {
      const ref = await guardRef(
        refFromProfile(profile({ [name]: '/tmp/evil.so' }), { kind: 'access', config: access }, { provider: 'inv' }),
        strict(),
      );
      assert.equal(ref.ready, false);
      assert.equal(
        ref.reason,
        `ClusterProfile inv/m: hub data sets ${name} for exec plugin "/bin/true", which hub data may never set (it chooses what runs)`,
      );
    });
  }
});

describe('the user’s own kubeconfigs are judged by the kuberc only', () => {
  const file = join(dir, 'user.kubeconfig');
  writeFileSync(file, kubeconfig(shExec));
  const userCtx = () => ({ ...contextFromKubeconfigText(kubeconfig(shExec), file, 'user'), userFile: file });

  it('no kuberc: a plugin in the user’s file may run (kubectl’s default)', async () => {
    assert.equal(await strict().problem(userCtx()), undefined);
  });

  it('DenyAll: refused with one line naming the context, the command and the kuberc file', async () => {
    const trust = new TrustPolicy({
      loadKuberc: async () => ({ path: '/home/u/.kube/kuberc', policy: 'DenyAll', allowlist: [] }),
      env: {},
    });
    const refusal = await trust.problem(userCtx());
    assert.equal(refusal?.kind, 'plugin');
    assert.match(
      refusal.message,
      new RegExp(`^context "c" \\(${file}\\): .*"/bin/sh".*DenyAll.*/home/u/\\.kube/kuberc$`),
    );
  });
});

describe('fleet.yaml: where the operator allows hub data a plugin or a file', () => {
  const f = '/etc/fleet/fleet.yaml';
  const parse = (text: string) => parseFleetConfig(text, f, { HOME: '/home/op' }, '/work');

  it('file-wide and per hub-backed provider, in kuberc’s spelling', () => {
    const c =
      parse(`credentialPluginAllowlist: [{command: kubelogin}, {command: gke-gcloud-auth-plugin, env: [USE_GKE_GCLOUD_AUTH_PLUGIN]}, {command: bash, args: [-c, /opt/tok.sh]}]
localFileAllowlist: [~/tokens/]
providers:
  - {name: secrets, type: kubeconfig, credentialPluginAllowlist: [{command: /usr/local/bin/aws-iam-authenticator}]}
`);
    assert.deepEqual(c.allow, {
      credentialPluginAllowlist: [
        { command: 'kubelogin', env: [] },
        { command: 'gke-gcloud-auth-plugin', env: ['USE_GKE_GCLOUD_AUTH_PLUGIN'] },
        { command: 'bash', env: [], args: ['-c', '/opt/tok.sh'] },
      ],
      localFileAllowlist: ['/home/op/tokens/'],
      where: `${f}: top level`,
    });
    assert.deepEqual(c.providers[0].allow, {
      credentialPluginAllowlist: [{ command: '/usr/local/bin/aws-iam-authenticator', env: [] }],
      localFileAllowlist: [],
      where: `${f}: providers[0]`,
    });
  });

  it('a file provider has no hub data: the fields are unknown there; a relative file is refused; entries need a command', () => {
    assert.throws(
      () => parse('providers:\n  - {name: local, type: file, credentialPluginAllowlist: [{command: x}]}\n'),
      /providers\[0\]\.credentialPluginAllowlist: unknown field/,
    );
    assert.throws(() => parse('localFileAllowlist: [tokens/]\nproviders: [{type: file}]\n'), {
      message: `${f}: localFileAllowlist[0]: "tokens/" must be an absolute path (a directory ends in /)`,
    });
    assert.throws(
      () => parse('credentialPluginAllowlist: [{name: x}]\nproviders: [{type: file}]\n'),
      /credentialPluginAllowlist\[0\]\.name: unknown field/,
    );
  });

  it('an entry cannot allow a variable that chooses what runs, nor a name that is not one; args is a list of strings', () => {
    for (const [name, why] of [
      ['CLOUDSDK_CONFIG', undefined],
      ['CLOUDSDK_PYTHON', 'chooses what runs'],
      ['CLOUDSDK_PYTHON_ARGS', 'chooses what runs'],
      ['PYTHONSTARTUP', 'chooses what runs'],
      ['ld_preload', 'chooses what runs'],
      ['BASH_FUNC_x%%', 'is not a portable variable name'],
    ] as const) {
      const text = `credentialPluginAllowlist: [{command: gke-gcloud-auth-plugin, env: ["${name}"]}]\nproviders: [{type: file}]\n`;
      if (!why) {
        assert.deepEqual(parse(text).allow?.credentialPluginAllowlist, [
          { command: 'gke-gcloud-auth-plugin', env: [name] },
        ]);
        continue;
      }
      assert.throws(
        () => parse(text),
        (e: Error) => {
          assert.match(e.message, new RegExp(`^${f}: credentialPluginAllowlist\\[0\\]\\.env\\[0\\]: .*${why}`));
          return true;
        },
      );
    }
    assert.throws(
      () => parse('credentialPluginAllowlist: [{command: bash, args: -c}]\nproviders: [{type: file}]\n'),
      /credentialPluginAllowlist\[0\]\.args: must be a list of strings/,
    );
  });
});
