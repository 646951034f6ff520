import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { TrustPolicy } from '../../src/kubeconfig/trust.js';
import { parseAccessConfig } from '../../src/providers/hub/access-providers.js';
import { type ClusterProfile, refFromProfile } from '../../src/providers/hub/cluster-inventory.js';
import { approvedContext } from '../support/approved.js';

const PLUGIN = fileURLToPath(new URL('../fixtures/providers/exec-info-plugin.mjs', import.meta.url));

/** The plugin a profile selects really runs, and gets what a controller's plugin would get. */
describe('cluster-inventory: the exec plugin sees the profile', () => {
  it('receives spec.cluster with the exec extension as config, the appended args and the merged env', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-inv-exec-'));
    const record = join(dir, 'record.jsonl');
    const access = parseAccessConfig(
      JSON.stringify({
        providers: [
          {
            name: 'test',
            execConfig: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: PLUGIN,
              args: ['--from-file'],
              env: [{ name: 'PLUGIN_MODE', value: 'file' }],
              provideClusterInfo: true,
            },
            profileSourcedCLIArgsPolicy: 'Append',
            profileSourcedEnvVarsPolicy: 'AppendIfNotExists',
          },
        ],
      }),
      join(dir, 'access.json'),
    );
    const profile: ClusterProfile = {
      metadata: { name: 'm1', namespace: 'inv' },
      status: {
        conditions: [{ type: 'ControlPlaneHealthy', status: 'True' }],
        accessProviders: [
          {
            name: 'test',
            cluster: {
              server: 'https://m1.example.com:6443',
              'certificate-authority-data': 'Zml4dHVyZS1jYQ==',
              'tls-server-name': 'not-passed.example.com',
              extensions: [
                {
                  name: 'client.authentication.k8s.io/exec',
                  extension: { token: 'fixture-token-from-profile', clusterName: 'm1' },
                },
                { name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args', extension: ['--cluster', 'm1'] },
                {
                  name: 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs',
                  extension: { PLUGIN_REGION: 'eu', PLUGIN_MODE: 'profile' },
                },
              ],
            },
          },
        ],
      },
    };
    const ctx = await refFromProfile(profile, { kind: 'access', config: access }, { provider: 'inv' }).resolve();
    const runner = new ExecCredentialRunner();
    const env = { ...process.env, EXEC_INFO_RECORD: record, EXEC_INFO_RECORD_ENV: 'PLUGIN_MODE,PLUGIN_REGION' };
    // The profile's variables reach the plugin only by an entry naming them (issue 46); PLUGIN_MODE is the file's own.
    await assert.rejects(approvedContext(ctx, env), /hub data sets PLUGIN_REGION for exec plugin/);
    const allowRegion = (policy: TrustPolicy) =>
      policy.allow('inv', {
        credentialPluginAllowlist: [{ command: PLUGIN, env: ['PLUGIN_REGION'] }],
        localFileAllowlist: [],
        where: 'fleet.yaml: providers[0]',
      });
    const cred = await runner.get(await approvedContext(ctx, env, allowRegion), ctx.cluster);
    assert.equal(cred.token, 'fixture-token-from-profile');

    const seen = JSON.parse((await readFile(record, 'utf8')).trim());
    assert.deepEqual(seen.args, ['--from-file', '--cluster', 'm1']);
    assert.deepEqual(seen.env, { PLUGIN_MODE: 'file', PLUGIN_REGION: 'eu' });
    assert.equal(seen.info.kind, 'ExecCredential');
    assert.equal(seen.info.spec.interactive, false);
    assert.equal(seen.info.spec.cluster.server, 'https://m1.example.com:6443');
    assert.equal(seen.info.spec.cluster['certificate-authority-data'], 'Zml4dHVyZS1jYQ==');
    assert.equal(seen.info.spec.cluster['tls-server-name'], undefined);
    assert.deepEqual(seen.info.spec.cluster.config, { token: 'fixture-token-from-profile', clusterName: 'm1' });
  });
});
