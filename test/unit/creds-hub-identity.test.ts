// The one hub rule (creds/hubs.ts, providers/hub/client.ts) and the recorded cluster identity (creds/cluster-identity.ts),
// offline: which hub each step of the rule picks, the message when nothing is found, how a CA and a server compare,
// and what an old-style Secret (only the name annotation) falls back to.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { caFingerprint, identityRecord, normalServer, recordedCluster } from '../../src/creds/cluster-identity.js';
import { credsHubs } from '../../src/creds/hubs.js';
import { resolveHubContext } from '../../src/kube/connector.js';

const pem = (body: Buffer) =>
  `-----BEGIN CERTIFICATE-----\n${body.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
const der1 = Buffer.from('first certificate DER bytes');
const der2 = Buffer.from('second certificate DER bytes');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

const kubeconfig = (current?: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://h:6443"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: hub, context: {cluster: c, user: u}}, {name: m1, context: {cluster: c, user: u}}]\n${current ? `current-context: ${current}\n` : ''}`;

describe('the one hub rule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-hub-rule-'));
  const empty = join(dir, 'empty-home');
  mkdirSync(empty);
  const merged = join(dir, 'merged.yaml');
  writeFileSync(merged, kubeconfig('hub'));

  it('--hub-kubeconfig/--hub-context first, then the fleet configuration, then the loading rules with --kubeconfig/--context', async () => {
    const env = { HOME: empty };
    assert.deepEqual(await credsHubs({ hubKubeconfig: 'a:b', hubContext: 'x', kubeconfig: [merged], env, cwd: dir }), [
      { spec: { kubeconfig: ['a', 'b'], context: 'x' }, origin: 'flags' },
    ]);
    // --hub-context alone: a context of the command's own --kubeconfig.
    assert.deepEqual(await credsHubs({ hubContext: 'm1', kubeconfig: [merged], env, cwd: dir }), [
      { spec: { kubeconfig: [merged], context: 'm1' }, origin: 'flags' },
    ]);
    assert.deepEqual(await credsHubs({ kubeconfig: [merged], context: 'm1', env, cwd: dir }), [
      { spec: { kubeconfig: [merged], context: 'm1' }, origin: 'loading-rules' },
    ]);
    const fleetYaml = join(dir, 'fleet.yaml');
    writeFileSync(
      fleetYaml,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nhub: {kubeconfig: ${merged}, context: hub}\nproviders:\n  - {name: mcr, type: kubeconfig, namespace: x}\n`,
    );
    assert.deepEqual(await credsHubs({ fleetConfig: fleetYaml, env, cwd: dir }), [
      { spec: { kubeconfig: [merged], context: 'hub' }, origin: 'fleet-config' },
    ]);
    // A fleet configuration without a hub (a CronJob's file provider): the loading rules, then in-cluster.
    const noHub = join(dir, 'nohub.yaml');
    writeFileSync(
      noHub,
      `apiVersion: fleet/v1alpha1\nkind: FleetConfig\nproviders:\n  - {name: files, type: file, kubeconfig: [${merged}]}\n`,
    );
    assert.deepEqual(await credsHubs({ fleetConfig: noHub, env, cwd: dir }), [
      { spec: { kubeconfig: undefined, context: undefined }, origin: 'loading-rules' },
    ]);
  });

  it('resolves the current context of --kubeconfig; with nothing at all, says what was looked for', async () => {
    assert.equal((await resolveHubContext({ kubeconfig: [merged] }, { HOME: empty })).contextName, 'hub');
    await assert.rejects(resolveHubContext({}, { HOME: empty }), (e: Error) => {
      assert.equal(
        e.message,
        `no kubeconfig found: KUBECONFIG is unset and ${join(empty, '.kube', 'config')} does not exist, and this is not a Pod (KUBERNETES_SERVICE_HOST is unset); pass --kubeconfig or --hub-kubeconfig`,
      );
      return true;
    });
    await assert.rejects(
      resolveHubContext({}, { HOME: empty, KUBECONFIG: join(dir, 'nope') }),
      /no kubeconfig found: none of the files in KUBECONFIG=.*nope exists/,
    );
    const noCurrent = join(dir, 'nocurrent.yaml');
    writeFileSync(noCurrent, kubeconfig());
    await assert.rejects(
      resolveHubContext({ kubeconfig: [noCurrent] }, { HOME: empty }),
      /no hub context: .*nocurrent.yaml sets no current-context/,
    );
  });

  it('in a Pod with no kubeconfig anywhere, the in-cluster configuration', async () => {
    writeFileSync(join(dir, 'token'), 'x');
    writeFileSync(join(dir, 'ca.crt'), 'x');
    const pod = {
      HOME: empty,
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      FLEET_IN_CLUSTER_TOKEN_FILE: join(dir, 'token'),
      FLEET_IN_CLUSTER_CA_FILE: join(dir, 'ca.crt'),
    };
    assert.equal((await resolveHubContext({}, pod)).contextName, 'in-cluster');
    // An explicit --kubeconfig is never overridden by the Pod's settings.
    assert.equal((await resolveHubContext({ kubeconfig: [merged] }, pod)).contextName, 'hub');
  });
});

describe('cluster identity', () => {
  it('fingerprints each CA certificate by its DER, whatever the PEM wrapping and order', () => {
    const one = caFingerprint(b64(pem(der1)));
    assert.equal(one, sha(der1));
    assert.equal(caFingerprint(b64(`\n${pem(der2)}${pem(der1)}`)), [sha(der1), sha(der2)].sort().join(','));
    assert.equal(caFingerprint(undefined), undefined);
  });

  it('compares servers by scheme, host (any case), port (explicit or default) and path', () => {
    assert.equal(normalServer('https://API.example.com/'), 'https://api.example.com:443');
    assert.equal(normalServer('https://api.example.com:443'), 'https://api.example.com:443');
    assert.equal(normalServer('https://127.0.0.1:6443/clusters/root'), 'https://127.0.0.1:6443/clusters/root');
  });

  it('records facts as annotations or file keys, and reads them back', () => {
    const facts = {
      server: 'https://h:6443',
      caSha256: sha(der1),
      clusterId: 'uid-1',
      clusterIdSource: 'kube-system',
      context: 'member-1',
    };
    const ann = { 'fleet.dev/credential-cluster': 'merged.yaml+member-1', ...identityRecord(facts, 'secret') };
    assert.deepEqual(Object.keys(ann).sort(), [
      'fleet.dev/cluster-ca-sha256',
      'fleet.dev/cluster-context',
      'fleet.dev/cluster-id',
      'fleet.dev/cluster-id-source',
      'fleet.dev/cluster-server',
      'fleet.dev/credential-cluster',
    ]);
    assert.deepEqual(recordedCluster(ann, 'secret', undefined), {
      name: 'merged.yaml+member-1',
      legacy: false,
      ...facts,
    });
    const file: Record<string, string> = { cluster: 'x', ...identityRecord(facts, 'file') };
    assert.equal(file['cluster-server'], 'https://h:6443');
    assert.deepEqual(recordedCluster(file, 'file', undefined), { name: 'x', legacy: false, ...facts });
  });

  it('an old-style Secret (only the name) takes server and CA from the credential it holds', () => {
    const rec = recordedCluster({ 'fleet.dev/credential-cluster': 'merged.yaml+member-1' }, 'secret', {
      server: 'https://h:6443',
      'certificate-authority-data': b64(pem(der1)),
    });
    assert.deepEqual(rec, {
      name: 'merged.yaml+member-1',
      legacy: true,
      server: 'https://h:6443',
      caSha256: sha(der1),
      clusterId: undefined,
      clusterIdSource: undefined,
      context: undefined,
    });
  });
});
