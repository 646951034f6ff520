// Argo CD cluster Secrets whose `config` is not a bearer token or a client certificate, as teams have them: basic
// auth (`username`/`password`, which kube-apiserver stopped accepting in 1.19), `awsAuthConfig` (Argo CD's own
// argocd-k8s-auth plugin) and a field of the wrong type. creds list and creds adopt read them with the argocd provider's
// decoder (the one Argo CD's Cluster.RawRestConfig mirrors), so each is described as Argo CD would use it, and none of
// them is taken over by adopt on a false premise. No password or token appears in any output.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { type CliResult, runFleet } from '../support/cli.js';
import { applyYaml, kubectl, loadControlPlane, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const ns = uniqueName('argocfg');
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const password = `pw-${randomBytes(12).toString('hex')}`;
const ignoredToken = `tok-${randomBytes(12).toString('hex')}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const outputs: string[] = [];

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000 });
  outputs.push(res.stdout + res.stderr);
  return res;
}

/** An Argo CD cluster Secret (as Argo CD's declarative setup has them) for member-1 with this config. */
function clusterSecret(name: string, config: unknown): string {
  const caData = b64(readFileSync(m1.caFile, 'utf8'));
  const withCa = { ...(config as object), tlsClientConfig: { caData } };
  return [
    'apiVersion: v1',
    'kind: Secret',
    `metadata: {name: ${name}, namespace: ${ns}, labels: {argocd.argoproj.io/secret-type: cluster}}`,
    'stringData:',
    `  name: ${name}`,
    `  server: ${m1.url}`,
    `  config: '${JSON.stringify(withCa)}'`,
  ].join('\n');
}

interface Item {
  source: { namespace?: string; name?: string };
  method: string;
  identity?: string;
  problems?: string[];
  noCredentialId?: string;
  managedByFleet: boolean;
}

describe('creds list and adopt over Argo CD configs that are not a token or certificate', () => {
  before(async () => {
    await kubectl(hub, ['create', 'namespace', ns]);
    await applyYaml(
      hub,
      [
        clusterSecret('basic', { username: 'ops', password }),
        clusterSecret('aws', {
          bearerToken: ignoredToken,
          awsAuthConfig: { clusterName: 'prod', roleARN: 'arn:aws:iam::111122223333:role/argocd' },
        }),
        clusterSecret('wrongtype', { bearerToken: 7 }),
        clusterSecret('nocred', {}),
      ].join('\n---\n'),
    );
  });
  after(async () => {
    await kubectl(hub, ['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('creds list describes each as Argo CD would use it', async () => {
    const res = await fleet(['creds', 'list', ...HUB, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const items = (JSON.parse(res.stdout) as { items: Item[] }).items.filter((i) => i.source.namespace === ns);
    const by = Object.fromEntries(items.map((i) => [i.source.name, i]));
    assert.deepEqual(Object.keys(by).sort(), ['aws', 'basic', 'nocred', 'wrongtype']);
    assert.equal(by.basic.method, 'basic');
    assert.equal(by.basic.identity, 'ops');
    assert.match(by.basic.noCredentialId ?? '', /basic authentication/);
    assert.deepEqual(by.basic.problems, [
      'basic authentication: kube-apiserver has not accepted it since 1.19 (requests with it are anonymous)',
    ]);
    // awsAuthConfig wins over the bearer token beside it, as in Argo CD: the credential is its plugin, not the token.
    assert.equal(by.aws.method, 'exec');
    assert.equal(by.aws.identity, 'argocd-k8s-auth');
    assert.equal(by.nocred.method, 'none');
    assert.equal(by.wrongtype.method, 'none');
    assert.deepEqual(by.wrongtype.problems, ['config: bearerToken must be a string']);
    for (const i of items) assert.equal(i.managedByFleet, false);

    // The reasons are in the wide table's problems column.
    const table = await fleet(['creds', 'list', ...HUB, '-o', 'wide']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /wrongtype .*bearerToken must be a string/);
    assert.match(table.stdout, /basic .*has not accepted it since 1\.19/);
  });

  it('creds adopt refuses the plugin and the wrong-typed config, and fails the basic credential the server refuses', async () => {
    const aws = await fleet(['creds', 'adopt', `${ns}/aws`, '--kubeconfig', m1.kubeconfig, ...HUB, '--yes']);
    assert.equal(aws.code, 2, aws.stdout + aws.stderr);
    assert.match(aws.stderr, new RegExp(`${ns}/aws.*the credential is a plugin \\(exec\\)`));

    const bad = await fleet(['creds', 'adopt', `${ns}/wrongtype`, '--kubeconfig', m1.kubeconfig, ...HUB, '--yes']);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /the config key cannot be read: bearerToken must be a string/);

    // Basic authentication is gone from kube-apiserver (1.19): refused before the member is asked, nothing is made.
    const basic = await fleet(['creds', 'adopt', `${ns}/basic`, '--kubeconfig', m1.kubeconfig, ...HUB, '--yes']);
    assert.equal(basic.code, 2, basic.stdout + basic.stderr);
    assert.match(basic.stderr, /basic authentication \(username\/password\), which kube-apiserver has not accepted/);
    // Only a CA: the member takes the requests as system:anonymous, which is no identity to adopt.
    const none = await fleet(['creds', 'adopt', `${ns}/nocred`, '--kubeconfig', m1.kubeconfig, ...HUB, '--yes']);
    assert.equal(none.code, 1, none.stdout + none.stderr);
    assert.match(none.stderr, /nocred: the API server does not accept the credential \(its requests are anonymous\)/);
    const after = JSON.parse(await kubectl(hub, ['get', 'secret', 'basic', '-n', ns, '-o', 'json'])) as {
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    };
    assert.deepEqual(after.metadata.labels, { 'argocd.argoproj.io/secret-type': 'cluster' });
    assert.equal(after.metadata.annotations?.['fleet.dev/rotation-phase'], undefined);
  });

  it('no password or token appears in any output', () => {
    assert.ok(outputs.length >= 6);
    for (const o of outputs) {
      assert.ok(!o.includes(password), 'the basic-auth password leaked');
      assert.ok(!o.includes(ignoredToken), 'the bearer token leaked');
    }
  });
});
