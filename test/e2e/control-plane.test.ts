// Self-tests of the control-plane harness: if these fail, every other e2e failure is suspect.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  apiRequest,
  applyYaml,
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
  type ServerState,
} from '../support/fixture.js';

const cp = loadControlPlane();

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
}

async function whoami(ref: ServerState | string, kubeconfig: string): Promise<UserInfo> {
  const out = await kubectl(ref, ['auth', 'whoami', '-o', 'json'], { kubeconfig });
  return (JSON.parse(out) as { status: { userInfo: UserInfo } }).status.userInfo;
}

describe('control plane harness', () => {
  it('has a hub and at least one member', () => {
    assert.equal(cp.hub.name, 'hub');
    assert.ok(cp.members.length >= 1, 'no member apiservers');
    assert.deepEqual(
      cp.members.map((m) => m.name),
      cp.members.map((_, i) => `member-${i + 1}`),
    );
  });

  it('every apiserver reports the pinned Kubernetes version on /version to the admin certificate', async () => {
    const fromOwnBuild = !basename(cp.binDir).startsWith('linked-');
    for (const s of cp.servers) {
      const r = await apiRequest({
        url: s.url,
        path: '/version',
        caFile: s.caFile,
        certFile: cp.admin.certFile,
        keyFile: cp.admin.keyFile,
      });
      assert.equal(r.status, 200, `${s.name}: ${r.body}`);
      const v = JSON.parse(r.body) as { gitVersion: string; major: string; minor: string };
      if (fromOwnBuild) assert.equal(v.gitVersion, cp.version, `${s.name} gitVersion`);
      assert.equal(v.gitVersion, cp.serverVersion, `${s.name} gitVersion`);
      assert.match(v.gitVersion, /^v1\.\d+\.\d+/);
    }
  });

  it('admin kubeconfigs name their context after the server and reach it as system:masters', async () => {
    for (const s of cp.servers) {
      assert.equal((await kubectl(s, ['config', 'current-context'])).trim(), s.name);
      const me = await whoami(s, s.kubeconfig);
      assert.equal(me.username, 'fleet-admin');
      assert.ok(me.groups?.includes('system:masters'), `${s.name}: groups ${String(me.groups)}`);
    }
  });

  it('static token users authenticate with their exact name, uid and groups', async () => {
    for (const s of cp.servers) {
      for (const u of s.tokenUsers) {
        const me = await whoami(s, tokenUser(s, u.name).kubeconfigPath);
        assert.equal(me.username, u.name, `${u.name}@${s.name}`);
        assert.equal(me.uid, u.uid);
        assert.deepEqual(me.groups, [...u.groups, 'system:authenticated']);
      }
    }
  });

  it('a token user of one apiserver is unknown to another', async () => {
    const [a, b] = [cp.hub, cp.members[0]];
    const token = tokenUser(a, 'alice').token;
    const r = await kubectlResult(b, ['auth', 'whoami'], { kubeconfig: kubeconfigFor(b, { token }) });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized/);
  });

  it('a client-certificate user signed by the client CA authenticates with its groups on every server', async () => {
    const user = uniqueName('erin');
    const cert = await createCertUser(cp.members[0], { user, groups: ['devs', 'qa'] });
    for (const s of cp.servers) {
      const me = await whoami(s, kubeconfigFor(s, { certFile: cert.certFile, keyFile: cert.keyFile }));
      assert.equal(me.username, user);
      assert.deepEqual(me.groups, ['devs', 'qa', 'system:authenticated']);
    }
    assert.equal((await whoami(cp.members[0], cert.kubeconfigPath)).username, user);
  });

  it("a hub ServiceAccount token with a member's audience is user hub:system:serviceaccount:<ns>:<sa> on that member only", async () => {
    const ns = uniqueName('wi');
    for (const m of cp.members) {
      const token = await createServiceAccountToken(cp.hub, ns, 'reconciler', { audience: m.url, duration: '10m' });
      const me = await whoami(m, kubeconfigFor(m, { token }));
      assert.equal(me.username, `hub:system:serviceaccount:${ns}:reconciler`);
      assert.equal(m.hubUsernamePrefix, 'hub:');
      assert.equal(m.hubTokenAudience, m.url);
      // The audience pins the token to one member; the hub itself only accepts its own audience.
      for (const other of cp.servers.filter((s) => s !== m)) {
        const r = await kubectlResult(other, ['auth', 'whoami'], { kubeconfig: kubeconfigFor(other, { token }) });
        assert.notEqual(r.code, 0, `${other.name} accepted a token meant for ${m.name}`);
        assert.match(r.stderr, /Unauthorized/);
      }
    }
    await kubectl(cp.hub, ['delete', 'namespace', ns, '--wait=false']);
  });

  it("the hub's OIDC discovery document is public and names the hub issuer", async () => {
    const r = await apiRequest({ url: cp.hub.url, path: '/.well-known/openid-configuration', caFile: cp.hub.caFile });
    assert.equal(r.status, 200, r.body);
    const doc = JSON.parse(r.body) as { issuer: string; jwks_uri: string };
    assert.equal(doc.issuer, cp.hub.issuer);
    assert.equal(doc.jwks_uri, `${cp.hub.issuer}/openid/v1/jwks`);
  });

  it('the hub serves the fleet provider CRDs at the expected versions; members do not', async () => {
    const expect: Record<string, { versions: string[]; preferred: string }> = {
      'multicluster.x-k8s.io': { versions: ['v1alpha1'], preferred: 'v1alpha1' },
      'cluster.x-k8s.io': { versions: ['v1beta2', 'v1beta1'], preferred: 'v1beta2' },
      'about.k8s.io': { versions: ['v1beta1', 'v1alpha1'], preferred: 'v1beta1' },
    };
    for (const [group, want] of Object.entries(expect)) {
      const r = await apiRequest({
        url: cp.hub.url,
        path: `/apis/${group}`,
        caFile: cp.hub.caFile,
        certFile: cp.admin.certFile,
        keyFile: cp.admin.keyFile,
      });
      assert.equal(r.status, 200, `${group}: ${r.body}`);
      const g = JSON.parse(r.body) as { versions: { version: string }[]; preferredVersion: { version: string } };
      assert.deepEqual(g.versions.map((v) => v.version).sort(), [...want.versions].sort(), group);
      assert.equal(g.preferredVersion.version, want.preferred, group);
      const m = await apiRequest({
        url: cp.members[0].url,
        path: `/apis/${group}`,
        caFile: cp.hub.caFile,
        certFile: cp.admin.certFile,
        keyFile: cp.admin.keyFile,
      });
      assert.equal(m.status, 404, `${group} should not exist on ${cp.members[0].name}`);
    }
  });

  it('objects of each CRD can be written and read back, across served versions', async () => {
    const ns = uniqueName('crds');
    const name = uniqueName('c');
    await applyYaml(
      cp.hub,
      [
        `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}`,
        `apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: {displayName: ${name}, clusterManager: {name: fleet-e2e}}`,
        `apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: {controlPlaneEndpoint: {host: 127.0.0.1, port: ${cp.members[0].port}}}`,
        `apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: ${name}}\nspec: {value: ${name}-id}`,
      ].join('\n---\n'),
    );
    const v1beta1 = JSON.parse(
      await kubectl(cp.hub, ['get', `clusters.v1beta1.cluster.x-k8s.io/${name}`, '-n', ns, '-o', 'json']),
    ) as { apiVersion: string; spec: { controlPlaneEndpoint: { port: number } } };
    assert.equal(v1beta1.apiVersion, 'cluster.x-k8s.io/v1beta1');
    assert.equal(v1beta1.spec.controlPlaneEndpoint.port, cp.members[0].port);
    const prop = JSON.parse(
      await kubectl(cp.hub, ['get', `clusterproperties.v1beta1.about.k8s.io/${name}`, '-o', 'json']),
    ) as { spec: { value: string } };
    assert.equal(prop.spec.value, `${name}-id`);
    const bad = await kubectlResult(cp.hub, ['apply', '--server-side', '-f', '-'], {
      stdin: `apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: bad, namespace: ${ns}}\nspec: {displayName: no-manager}`,
    });
    assert.notEqual(bad.code, 0, 'a ClusterProfile without spec.clusterManager was accepted');
    await kubectl(cp.hub, ['delete', 'clusterproperty', name]);
    await kubectl(cp.hub, ['delete', 'namespace', ns, '--wait=false']);
  });

  it('the controller manager signs approved kube-apiserver-client CSRs with the client CA', async () => {
    const s = cp.members[cp.members.length - 1];
    const user = uniqueName('csr-user');
    const dir = scratchDir();
    const keyFile = join(dir, `${user}.key`);
    const csrFile = join(dir, `${user}.csr`);
    await promisify(execFile)('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      csrFile,
      '-subj',
      `/CN=${user}/O=csr-group`,
    ]);
    const name = uniqueName('csr');
    await applyYaml(
      s,
      [
        'apiVersion: certificates.k8s.io/v1',
        'kind: CertificateSigningRequest',
        `metadata: {name: ${name}}`,
        'spec:',
        `  request: ${readFileSync(csrFile).toString('base64')}`,
        '  signerName: kubernetes.io/kube-apiserver-client',
        '  expirationSeconds: 3600',
        '  usages: [client auth]',
      ].join('\n'),
    );
    await kubectl(s, ['certificate', 'approve', name]);
    let pem = '';
    for (let i = 0; i < 100 && !pem; i++) {
      pem = Buffer.from(
        await kubectl(s, ['get', 'csr', name, '-o', 'jsonpath={.status.certificate}']),
        'base64',
      ).toString();
      if (!pem) await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(pem, /BEGIN CERTIFICATE/, 'the CSR was not signed within 20 s');
    const certFile = join(dir, `${user}.crt`);
    writeFileSync(certFile, pem);
    const me = await whoami(s, kubeconfigFor(s, { certFile, keyFile }));
    assert.equal(me.username, user);
    assert.deepEqual(me.groups, ['csr-group', 'system:authenticated']);
  });

  it('the controller manager finishes namespace deletion and fills the aggregated view role', async () => {
    const s = cp.hub;
    const ns = uniqueName('gone');
    await kubectl(s, ['create', 'namespace', ns]);
    await kubectl(s, ['delete', 'namespace', ns, '--timeout=60s']);
    const rules = JSON.parse(await kubectl(s, ['get', 'clusterrole', 'view', '-o', 'jsonpath={.rules}'])) as unknown[];
    assert.ok(rules.length > 0, 'ClusterRole view has no rules: clusterrole-aggregation-controller is not running');
  });
});
