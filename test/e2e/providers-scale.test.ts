// How hub-backed listing scales: hundreds of kubeconfig Secrets and Cluster API Clusters on the hub are read in a few
// requests (pages of 500), not one per cluster. The times are reported as test diagnostics; the bound is loose on
// purpose (a shared 2-core machine), it catches a per-object round trip, not a few percent.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import { runFleet } from '../support/cli.js';
import { applyYaml, kubectl, loadControlPlane, scratchDir, tokenUser, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const SECRETS = 600;
const CLUSTERS = 300;

const run = uniqueName('prov-scale');
const b64 = (s: string) => Buffer.from(s).toString('base64');
let fleetYaml: string;

before(async () => {
  const kubeconfig = b64(readFileSync(tokenUser(m1, 'bob').kubeconfigPath, 'utf8'));
  const docs: object[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: run } }];
  for (let i = 0; i < SECRETS; i++) {
    docs.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `c-${i}`, namespace: run, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
      data: { kubeconfig },
    });
  }
  for (let i = 0; i < CLUSTERS; i++) {
    docs.push({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: `w-${i}`, namespace: run },
      spec: {},
    });
    docs.push({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: { name: `w-${i}-kubeconfig`, namespace: run },
      data: { value: kubeconfig },
    });
  }
  await applyYaml(hub, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  fleetYaml = join(scratchDir(), `${run}-fleet.yaml`);
  writeFileSync(
    fleetYaml,
    `hub: {kubeconfig: ${hub.kubeconfig}}\nproviders:\n  - {name: secrets, type: kubeconfig, namespace: ${run}}\n  - {name: capi, type: cluster-api, namespace: ${run}}\n`,
  );
});

after(async () => {
  await kubectl(hub, ['delete', 'namespace', run, '--wait=false']);
});

async function timed(args: string[]) {
  const started = performance.now();
  const res = await runFleet(args);
  return { res, ms: Math.round(performance.now() - started) };
}

describe('hub-backed providers at scale', () => {
  it(`lists ${SECRETS} kubeconfig Secrets and ${CLUSTERS} Clusters in a few requests`, async (t) => {
    const baseline = await timed(['clusters', 'list', '--kubeconfig', hub.kubeconfig, '-o', 'json']);
    const secrets = await timed([
      'clusters',
      'list',
      '--fleet-config',
      fleetYaml,
      '--provider',
      'secrets',
      '-o',
      'json',
    ]);
    const capi = await timed(['clusters', 'list', '--fleet-config', fleetYaml, '--provider', 'capi', '-o', 'json']);
    const both = await timed(['clusters', 'list', '--fleet-config', fleetYaml, '-o', 'json']);
    t.diagnostic(
      `one kubeconfig file: ${baseline.ms} ms; ${SECRETS} Secrets: ${secrets.ms} ms; ${CLUSTERS} CAPI Clusters: ${capi.ms} ms; both: ${both.ms} ms`,
    );
    for (const { res } of [secrets, capi, both]) assert.equal(res.code, 0, res.stderr);
    assert.equal(secrets.res.json().items.length, SECRETS);
    assert.ok(
      capi.res.json<ClusterList>().items.every((i) => i.server === m1.url && !i.ready),
      'CAPI Clusters without status are listed, not ready, with their server',
    );
    assert.equal(both.res.json().items.length, SECRETS + CLUSTERS);
    assert.ok(both.ms < 20_000, `listing took ${both.ms} ms`);
  });
});
