// The EKS example program of docs/providers.md (docs/examples/providers/eks-clusters.py, boto3) run by the exec
// provider against moto's EKS server (moto[server] from PyPI, in a venv test/moto/build.sh makes and caches): the
// clusters created in moto's account and region are the clusters fleet lists, with moto's endpoints and CAs, their
// tags that are label keys as labels, and each one's `aws eks get-token` exec credential, which runs only because the
// provider's entry allows `aws` (discovery only: moto's endpoints are not API servers, so nothing connects).
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { PluginList } from '../../src/commands/auth/plugins.js';
import { runFleet } from '../support/cli.js';
import { buildScriptOutput } from '../support/binaries.js';
import { scratchDir, uniqueName } from '../support/fixture.js';

const BUILD = fileURLToPath(new URL('../moto/build.sh', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../docs/examples/providers/eks-clusters.py', import.meta.url));
const run = uniqueName('eks');
const dir = join(scratchDir(), run);
let bin: string;
let moto: ChildProcess | undefined;
let endpoint: string;
// moto's certificateAuthority.data is random bytes, not a certificate: fleet lists the cluster and says so, as it says
// for any kubeconfig whose CA is not PEM (what a real EKS cluster gives is).
const NOT_PEM = 'certificate-authority: not a valid PEM certificate';
const awsEnv = () => ({
  AWS_ENDPOINT_URL: endpoint,
  AWS_ACCESS_KEY_ID: 'testing',
  AWS_SECRET_ACCESS_KEY: 'testing',
  AWS_CONFIG_FILE: '/nonexistent',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
});

/** Starts moto's server on a free port (it prints the URL it listens on) and waits until it answers. */
async function startMoto(): Promise<string> {
  const child = spawn(join(bin, 'moto_server'), ['-H', '127.0.0.1', '-p', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  moto = child;
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`moto_server did not start in 60s:\n${seen}`)), 60_000);
    const look = (d: Buffer) => {
      seen += d.toString();
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`moto_server exited with ${code}:\n${seen}`)));
  });
}

/** Clusters made in moto with boto3 (the venv's): two in eu-west-1, one in us-east-1; their describe_cluster answers. */
function createClusters(): Record<string, { endpoint: string; ca: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...awsEnv() };
  for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete env[k];
  const script = `
import boto3, json
made = {}
for region, name, tags in [
    ("eu-west-1", "prod-eu", {"env": "prod", "team": "payments", "aws:cloudformation:stack-name": "eks-prod"}),
    ("eu-west-1", "dev-eu", {"env": "dev"}),
    ("us-east-1", "prod-us", {"env": "prod"}),
]:
    eks = boto3.client("eks", region_name=region)
    eks.create_cluster(name=name, roleArn="arn:aws:iam::123456789012:role/eks", resourcesVpcConfig={"subnetIds": ["subnet-1"]}, tags=tags)
    c = eks.describe_cluster(name=name)["cluster"]
    made[name] = {"endpoint": c["endpoint"], "ca": c["certificateAuthority"]["data"]}
print(json.dumps(made))
`;
  return JSON.parse(execFileSync(join(bin, 'python'), ['-c', script], { env, encoding: 'utf8' })) as Record<
    string,
    { endpoint: string; ca: string }
  >;
}

before(async () => {
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  bin = buildScriptOutput(BUILD);
  const built = Date.now();
  endpoint = await startMoto();
  process.stderr.write(`moto venv ready in ${built - started} ms, moto_server up in ${Date.now() - built} ms\n`);
});

after(() => {
  moto?.kill();
});

describe('exec provider: the EKS example against moto (issue 39, item 4)', () => {
  it('lists the clusters of the region with their endpoints, CAs, labels and aws eks get-token credentials', async () => {
    const made = createClusters();
    const config = join(dir, 'fleet.yaml');
    /** The provider entry: the example with these arguments after its path, and one allowlist entry. */
    const writeConfig = (args: string, entry: string) =>
      writeFileSync(
        config,
        [
          'providers:',
          '  - name: eks',
          '    type: exec',
          `    command: ${join(bin, 'python')}`,
          `    args: [${EXAMPLE}, ${args}]`,
          `    credentialPluginAllowlist: [${entry}]`,
          '',
        ].join('\n'),
      );
    writeConfig('--region, eu-west-1', '{command: aws}');
    const list = await runFleet(['clusters', 'list', '--fleet-config', config, '-o', 'json'], { env: awsEnv() });
    assert.equal(list.code, 0, list.stderr);
    const items = list
      .json<ClusterList>()
      .items.slice()
      .sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(
      items.map((c) => [c.name, c.server, c.auth, c.reason, c.labels]),
      [
        [
          'dev-eu',
          made['dev-eu'].endpoint,
          'exec',
          NOT_PEM,
          { env: 'dev', region: 'eu-west-1', version: items[0].labels.version, 'fleet.dev/auth': 'exec' },
        ],
        [
          'prod-eu',
          made['prod-eu'].endpoint,
          'exec',
          NOT_PEM,
          {
            env: 'prod',
            team: 'payments',
            region: 'eu-west-1',
            version: items[1].labels.version,
            'fleet.dev/auth': 'exec',
          },
        ],
      ],
    );
    assert.match(items[0].labels.version, /^\d+\.\d+$/);

    // Each cluster's credential is `aws eks get-token`, named by the program's output (data) and allowed by fleet.yaml.
    const plugins = await runFleet(['auth', 'plugins', '--fleet-config', config, '-o', 'json'], { env: awsEnv() });
    assert.equal(plugins.code, 0, plugins.stderr);
    assert.deepEqual(
      plugins.json<PluginList>().items.map((p) => [p.command, p.trust, p.allowed, [...p.clusters].sort()]),
      [['aws', 'data', true, ['dev-eu', 'prod-eu']]],
    );

    // With --profile the output sets AWS_PROFILE for aws: a variable from data reaches the plugin only by the entry's env.
    const creds = join(dir, 'aws-credentials');
    writeFileSync(creds, '[ops]\naws_access_key_id = testing\naws_secret_access_key = testing\n', { mode: 0o600 });
    const profileEnv = { ...awsEnv(), AWS_SHARED_CREDENTIALS_FILE: creds };
    const withProfile = (entry: string) => writeConfig('--region, eu-west-1, --profile, ops', entry);
    withProfile('{command: aws}');
    const noEnv = await runFleet(['auth', 'plugins', '--fleet-config', config, '-o', 'json'], { env: profileEnv });
    assert.equal(noEnv.code, 1, noEnv.stderr);
    const aws = noEnv.json<PluginList>().items.find((p) => p.command === 'aws');
    assert.equal(aws?.allowed, false);
    assert.match(
      aws?.reason ?? '',
      /^hub data sets AWS_PROFILE for exec plugin "aws", and no credentialPluginAllowlist entry for that command allows it .*add env: \[AWS_PROFILE\] to the entry for aws in .*providers\[0\]$/,
    );
    withProfile('{command: aws, env: [AWS_PROFILE]}');
    const allowedEnv = await runFleet(['auth', 'plugins', '--fleet-config', config, '-o', 'json'], { env: profileEnv });
    assert.equal(allowedEnv.code, 0, allowedEnv.stderr);
    assert.deepEqual(
      allowedEnv.json<PluginList>().items.map((p) => [p.command, p.allowed, [...p.clusters].sort()]),
      [['aws', true, ['dev-eu', 'prod-eu']]],
    );

    // The other region's clusters are the other region's.
    writeFileSync(
      config,
      `providers:\n  - {name: eks, type: exec, command: ${join(bin, 'python')}, args: [${EXAMPLE}, --region, us-east-1]}\n`,
    );
    const us = await runFleet(['clusters', 'list', '--fleet-config', config, '-o', 'json'], { env: awsEnv() });
    assert.deepEqual(
      us.json<ClusterList>().items.map((c) => [c.name, c.server]),
      [['prod-us', made['prod-us'].endpoint]],
    );
  });
});
