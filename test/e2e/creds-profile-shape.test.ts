// fleet creds list over ClusterProfiles (SIG Multicluster cluster inventory) whose status is of the wrong shape, written
// through the real hub API server. The test control plane's ClusterProfile CRD leaves status open
// (x-kubernetes-preserve-unknown-fields: its access fields were renamed across releases), so the server stores what a
// writer of ClusterProfiles sends: `status.accessProviders` as a mapping, an access provider whose name is a number.
// creds list follows ClusterProfile access providers to the kubeconfig-secretreader Secrets they name; it judges a
// profile's shape by the cluster-inventory provider's one rule (accessShapeProblem) and must then say which profile and
// which field, once, list the good profile's credential as before, keep its exit-code policy (a warning is not a
// failure; nothing found is) and print no credential.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { CredentialList } from '../../src/creds/list.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, tokenUser, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const hubNs = uniqueName('profshape');
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const b64 = (s: string) => Buffer.from(s).toString('base64');
const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets: string[] = [];

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 90_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}

/** A kubeconfig for member-1 with a static token, as a hand-made kubeconfig-secretreader Secret holds it. */
function memberKubeconfig(token: string): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'm1', cluster: { server: m1.url, 'certificate-authority-data': b64(readFileSync(m1.caFile, 'utf8')) } },
    ],
    users: [{ name: 'm1', user: { token } }],
    contexts: [{ name: 'm1', context: { cluster: 'm1', user: 'm1' } }],
    'current-context': 'm1',
  });
}

/** An access provider entry whose exec extension hands the Secret `secret` to kubeconfig-secretreader. */
const secretreader = (secret: string) => ({
  server: m1.url,
  extensions: [{ name: EXEC_EXTENSION, extension: { name: secret, key: 'kubeconfig' } }],
});

/** A ClusterProfile with this status, written as a cluster manager writes it (the status subresource). */
async function profile(name: string, status: object): Promise<void> {
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: { name, namespace: hubNs },
      spec: { clusterManager: { name: 'fleet-e2e' } },
    }),
  );
  await kubectl(hub, [
    'patch',
    'clusterprofiles',
    name,
    '-n',
    hubNs,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

const mine = (l: CredentialList) =>
  // A static token names no identity by itself (no --live): the row says what it is, not who.
  l.items.filter((i) => i.location.includes(`:${hubNs}/`)).map((i) => [i.location, i.format, i.method, i.identity]);
const myWarnings = (l: CredentialList) => (l.warnings ?? []).filter((w) => w.includes(`:${hubNs}/`));

const GOOD = `secret hub:${hubNs}/good-cred`;
const WARN_MAPPING = `ClusterProfile hub:${hubNs}/bad-mapping: status.accessProviders must be a list, got a mapping; the credentials its access providers name were not read`;
const WARN_NAME = `ClusterProfile hub:${hubNs}/bad-name: status.accessProviders[0] must be a mapping with a string name; the credentials its access providers name were not read`;

before(async () => {
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  const alice = tokenUser(m1, 'alice').token;
  const bob = tokenUser(m1, 'bob').token;
  secrets.push(alice, bob);
  for (const [name, token] of [
    ['good-cred', alice],
    ['bad-cred', bob],
  ])
    await applyYaml(
      hub,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: hubNs },
        data: { kubeconfig: b64(memberKubeconfig(token)) },
      }),
    );
  await profile('good', { accessProviders: [{ name: 'kubeconfig-secretreader', cluster: secretreader('good-cred') }] });
  // A mapping keyed by provider name instead of a list.
  await profile('bad-mapping', {
    accessProviders: { 'kubeconfig-secretreader': { cluster: secretreader('bad-cred') } },
  });
  // A list entry whose name is not a string.
  await profile('bad-name', { accessProviders: [{ name: 7, cluster: secretreader('bad-cred') }] });
  // An access provider with no cluster: allowed by the shape rule (nothing to follow, so nothing to say).
  await profile('no-cluster', { accessProviders: [{ name: 'kubeconfig-secretreader' }] });
  // The server stored what was sent (the test would prove nothing if it had refused or pruned it).
  const stored = JSON.parse(await kubectl(hub, ['get', 'clusterprofiles', 'bad-mapping', '-n', hubNs, '-o', 'json']));
  assert.equal(Array.isArray(stored.status.accessProviders), false);
  assert.equal(typeof stored.status.accessProviders, 'object');
  const named = JSON.parse(await kubectl(hub, ['get', 'clusterprofiles', 'bad-name', '-n', hubNs, '-o', 'json']));
  assert.equal(named.status.accessProviders[0].name, 7);
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
});

describe('fleet creds list over ClusterProfiles of the wrong shape', { concurrency: false }, () => {
  it('-o json: the good profile credential is listed; each malformed profile is one warning naming it and the field; exit 0', async () => {
    const res = await fleet(['creds', 'list', ...HUB, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const list = res.json<CredentialList>();
    assert.deepEqual(mine(list), [[GOOD, 'kubeconfig-secretreader', 'static-token', undefined]]);
    assert.deepEqual(myWarnings(list), [WARN_MAPPING, WARN_NAME]);
    assert.deepEqual(list.errors, []);
    // In JSON mode the warning is data, not a second copy on stderr.
    assert.doesNotMatch(res.stderr, new RegExp(hubNs));
  });

  it('-o yaml: the same shape', async () => {
    const res = await fleet(['creds', 'list', ...HUB, '-o', 'yaml']);
    assert.equal(res.code, 0, res.stderr);
    const list = yaml.load(res.stdout) as CredentialList;
    assert.deepEqual(mine(list), [[GOOD, 'kubeconfig-secretreader', 'static-token', undefined]]);
    assert.deepEqual(myWarnings(list), [WARN_MAPPING, WARN_NAME]);
  });

  it('the table: the good row, and one warning line per malformed profile on stderr', async () => {
    const res = await fleet(['creds', 'list', ...HUB]);
    assert.equal(res.code, 0, res.stderr);
    const rows = res.stdout.split('\n').filter((l) => l.includes(`:${hubNs}/`));
    assert.equal(rows.length, 1, res.stdout);
    assert.match(rows[0], new RegExp(`^${GOOD} +kubeconfig-secretreader +static-token(?: |$)`));
    const lines = res.stderr.split('\n').filter((l) => l.includes(`:${hubNs}/`));
    assert.deepEqual(lines, [`warning: ${WARN_MAPPING}`, `warning: ${WARN_NAME}`]);
  });

  it('--credential-id that nobody holds: exit 1 (nothing found), the warnings still say what was not read', async () => {
    const res = await fleet([
      'creds',
      'list',
      ...HUB,
      '--credential-id',
      'JTI=00000000-0000-4000-8000-000000000000',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 1, res.stderr);
    const list = res.json<CredentialList>();
    assert.deepEqual(list.items, []);
    assert.deepEqual(myWarnings(list), [WARN_MAPPING, WARN_NAME]);
  });

  it('no credential appears in any output', () => {
    assert.equal(outputs.length, 4);
    for (const { what, res } of outputs)
      for (const s of secrets) {
        assert.ok(!res.stdout.includes(s), `${what}: stdout holds a credential`);
        assert.ok(!res.stderr.includes(s), `${what}: stderr holds a credential`);
      }
  });
});
