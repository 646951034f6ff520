import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { type ExecProviderConfig, parseFleetConfig } from '../../src/config/fleet-config.js';
import { FleetError } from '../../src/base/errors.js';
import {
  CLUSTER_LIST_API_VERSION,
  CLUSTER_LIST_KIND,
  ExecProvider,
  parseClusterList,
} from '../../src/providers/exec.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { createProvider } from '../../src/providers/registry.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';

// The exec provider's ClusterList (docs/providers.md, "exec"): what makes the document unusable fails the listing in one
// line naming the program; what is wrong with one cluster makes that cluster not ready with the reason.

const o = { provider: 'inv', program: 'exec provider "inv" (/opt/list-clusters)' };
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
const list = (clusters: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: CLUSTER_LIST_API_VERSION, kind: CLUSTER_LIST_KIND, clusters, ...extra });
const execCluster = (over: Record<string, unknown> = {}) => ({
  name: 'prod-eu',
  server: 'https://prod.example:6443',
  certificateAuthorityData: CA,
  labels: { env: 'prod', 'example.com/region': 'eu-west-1' },
  exec: { command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'prod-eu'] },
  ...over,
});
const one = (cluster: Record<string, unknown>) => parseClusterList(list([cluster]), o)[0];
const reason = (cluster: Record<string, unknown>) => {
  const found = one(cluster).found;
  assert.ok(found instanceof Error, 'expected the cluster to be refused');
  return found.message;
};
const failsWith = (stdout: string, message: string | RegExp) =>
  assert.throws(
    () => parseClusterList(stdout, o),
    (e: unknown) => {
      assert.ok(e instanceof FleetError);
      assert.equal(e.kind, 'plugin');
      assert.doesNotMatch(e.message, /\n/, 'one line');
      if (typeof message === 'string') assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    },
  );

describe('exec provider: the ClusterList a program prints', () => {
  it('an exec credential becomes a non-interactive exec user of the given server and CA, with its origin as data', () => {
    const c = one(execCluster({ tlsServerName: 'prod.internal' }));
    assert.equal(c.name, 'prod-eu');
    assert.deepEqual(c.labels, { env: 'prod', 'example.com/region': 'eu-west-1' });
    const ctx = c.found as ResolvedContext;
    assert.deepEqual(ctx.cluster, {
      server: 'https://prod.example:6443',
      'certificate-authority-data': CA,
      'tls-server-name': 'prod.internal',
    });
    assert.deepEqual(ctx.user.exec, {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'aws',
      args: ['eks', 'get-token', '--cluster-name', 'prod-eu'],
      interactiveMode: 'Never',
    });
    // Data: the trust policy judges its plugin against provider "inv"'s allowlist (not the user's own command).
    assert.deepEqual(ctx.origin, { object: 'exec provider "inv" cluster "prod-eu"', provider: 'inv' });
  });

  it('exec apiVersion v1beta1 (aws eks get-token prints it), env and provideClusterInfo are kept', () => {
    const ctx = one(
      execCluster({
        exec: {
          command: 'aws',
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          env: [{ name: 'AWS_PROFILE', value: 'prod' }],
          provideClusterInfo: true,
        },
      }),
    ).found as ResolvedContext;
    assert.equal(ctx.user.exec?.apiVersion, 'client.authentication.k8s.io/v1beta1');
    assert.deepEqual(ctx.user.exec?.env, [{ name: 'AWS_PROFILE', value: 'prod' }]);
    assert.equal(ctx.user.exec?.provideClusterInfo, true);
  });

  it('a kubeconfig is used at its current-context, as hub data is', () => {
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://k.example"}}]',
      'users: [{name: u, user: {token: abc.def.ghi}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n');
    const ctx = one({ name: 'rancher/c-m-1', kubeconfig, labels: { team: 'a' } }).found as ResolvedContext;
    assert.equal(ctx.cluster.server, 'https://k.example');
    assert.equal(ctx.user.token, 'abc.def.ghi');
    assert.equal(ctx.origin?.provider, 'inv');
  });

  it('an empty list is a fleet of none; several clusters keep their order', () => {
    assert.deepEqual(parseClusterList(list([]), o), []);
    const names = parseClusterList(list([execCluster({ name: 'b' }), execCluster({ name: 'a' })]), o).map(
      (c) => c.name,
    );
    assert.deepEqual(names, ['b', 'a']);
  });

  it('a document fleet cannot read fails the listing in one line naming the program, never quoting the output', () => {
    const secret = 'AKIAEXAMPLESECRET0001';
    failsWith(
      `{"token": "${secret}"`,
      /^exec provider "inv" \(\/opt\/list-clusters\): output is not valid JSON( \(at byte \d+\))?; expected a ClusterList \(fleet.dev\/v1alpha1\)$/,
    );
    failsWith(`oops ${secret}`, /^exec provider "inv" \(\/opt\/list-clusters\): output is not valid JSON/);
    assert.doesNotMatch(
      (() => {
        try {
          parseClusterList(`{"a": "${secret}" x`, o);
        } catch (e) {
          return (e as Error).message;
        }
        return '';
      })(),
      new RegExp(secret),
    );
    failsWith(
      '  \n',
      'exec provider "inv" (/opt/list-clusters): printed nothing; expected a ClusterList (fleet.dev/v1alpha1) in JSON',
    );
    failsWith('[]', 'exec provider "inv" (/opt/list-clusters): output is not a JSON object; expected a ClusterList');
    failsWith(
      JSON.stringify({ apiVersion: 'fleet.dev/v1', kind: 'ClusterList', clusters: [] }),
      'exec provider "inv" (/opt/list-clusters): output is apiVersion "fleet.dev/v1" kind "ClusterList"; fleet reads apiVersion fleet.dev/v1alpha1 kind ClusterList',
    );
    failsWith(
      JSON.stringify({ clusters: [] }),
      'exec provider "inv" (/opt/list-clusters): output is without an apiVersion without a kind; fleet reads apiVersion fleet.dev/v1alpha1 kind ClusterList',
    );
    failsWith(
      JSON.stringify({ apiVersion: CLUSTER_LIST_API_VERSION, kind: 'List', clusters: [] }),
      /output is apiVersion "fleet.dev\/v1alpha1" kind "List"; fleet reads/,
    );
    failsWith(
      JSON.stringify({ apiVersion: CLUSTER_LIST_API_VERSION, kind: CLUSTER_LIST_KIND }),
      'exec provider "inv" (/opt/list-clusters): output: clusters: is required: a list (empty when there are none)',
    );
    failsWith(
      list([], { items: [] }),
      'exec provider "inv" (/opt/list-clusters): output: items: unknown field (known: apiVersion, kind, clusters)',
    );
    failsWith(list(['x']), /output: clusters\[0\]: must be a mapping, got a string$/);
  });

  it('a cluster without a usable, unique name fails the listing (it could not be named to be left out)', () => {
    failsWith(list([execCluster({ name: undefined })]), /output: clusters\[0\]\.name: is required \(a string\)$/);
    failsWith(list([execCluster({ name: 'a b' })]), /output: clusters\[0\]\.name: "a b" is not a cluster name/);
    failsWith(list([execCluster({ name: 'x#y' })]), /"x#y" is not a cluster name/);
    failsWith(
      list([execCluster({ name: 'a' }), execCluster({ name: 'b' }), execCluster({ name: 'a' })]),
      'exec provider "inv" (/opt/list-clusters): output: clusters[2].name: "a" is also the name of clusters[0]; names must be unique',
    );
  });

  it('what is wrong with one cluster makes it not ready, with the field named; the others are listed', () => {
    const both = parseClusterList(list([execCluster({ name: 'ok' }), execCluster({ name: 'bad', server: 'x' })]), o);
    assert.ok(!(both[0].found instanceof Error));
    assert.equal((both[1].found as Error).message, 'output: clusters[1].server: must be an https:// (or http://) URL');
    assert.equal(
      reason(execCluster({ exec: undefined })),
      'output: clusters[0]: give either exec (a credential plugin) or kubeconfig, not both nor neither',
    );
    assert.equal(
      reason(execCluster({ kubeconfig: 'apiVersion: v1' })),
      'output: clusters[0]: give either exec (a credential plugin) or kubeconfig, not both nor neither',
    );
    assert.equal(
      reason({ name: 'k', kubeconfig: 'x', server: 'https://a' }),
      'output: clusters[0].server: comes from the kubeconfig when kubeconfig is given; leave it out',
    );
    assert.equal(reason(execCluster({ server: undefined })), 'output: clusters[0].server: is required');
    assert.equal(
      reason(execCluster({ certificateAuthorityData: '-----BEGIN CERTIFICATE-----' })),
      'output: clusters[0].certificateAuthorityData: must be base64 (of PEM certificates, as certificate-authority-data)',
    );
    assert.equal(
      reason(execCluster({ sever: 'x' })),
      'output: clusters[0].sever: unknown field (did you mean "server"?)',
    );
    assert.equal(
      reason(execCluster({ labels: { 'a b': 'x' } })),
      'output: clusters[0].labels.a b: is not a valid label key',
    );
    assert.equal(
      reason(execCluster({ labels: { a: 1 } })),
      'output: clusters[0].labels.a: label values must be strings',
    );
    assert.equal(
      reason(execCluster({ exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1alpha1' } })),
      'output: clusters[0].exec.apiVersion: must be one of client.authentication.k8s.io/v1, client.authentication.k8s.io/v1beta1; got "client.authentication.k8s.io/v1alpha1"',
    );
    assert.equal(reason(execCluster({ exec: { args: [] } })), 'output: clusters[0].exec.command: is required');
    assert.equal(
      reason(execCluster({ exec: { command: 'aws', args: 'eks get-token' } })),
      'output: clusters[0].exec.args: must be a list of strings',
    );
    assert.equal(
      reason(execCluster({ exec: { command: 'aws', interactiveMode: 'Always' } })),
      'output: clusters[0].exec.interactiveMode: unknown field (known: command, args, env, apiVersion, provideClusterInfo, installHint)',
    );
    assert.match(reason({ name: 'k', kubeconfig: 'clusters: 3' }), /clusters\[0\]\.kubeconfig/);
  });

  it('a value of the wrong type is named by its field and type, never quoted: the output may hold secrets', () => {
    const key = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY';
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        execCluster({ exec: { command: 'aws', env: [key] } }),
        'clusters[0].exec.env[0]: must be a mapping, got a string',
      ],
      [execCluster({ exec: { command: 'aws', env: key } }), 'clusters[0].exec.env: must be a list, got a string'],
      [execCluster({ exec: `aws --token ${key}` }), 'clusters[0].exec: must be a mapping, got a string'],
      [
        execCluster({ exec: { command: 'aws', provideClusterInfo: key } }),
        'clusters[0].exec.provideClusterInfo: must be true or false, got a string',
      ],
      [execCluster({ tlsServerName: 12345678901 }), 'clusters[0].tlsServerName: must be a string, got a number'],
    ];
    for (const [cluster, message] of cases) assert.equal(reason(cluster), `output: ${message}`);
    // An entry that is not an object has no name to be listed under: the listing fails, still without the value.
    failsWith(
      list([key]),
      'exec provider "inv" (/opt/list-clusters): output: clusters[0]: must be a mapping, got a string',
    );
  });
});

const PROGRAM = fileURLToPath(new URL('../fixtures/providers/cluster-list.mjs', import.meta.url));

describe('exec provider: running the program', () => {
  const provider = (args: string[], timeoutMs?: number) =>
    new ExecProvider({ name: 'inv', command: PROGRAM, args, timeoutMs, env: process.env });

  it('lists what the program printed, each cluster under the provider with its labels and the program as source', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'exec-provider-'));
    const file = join(dir, 'list.json');
    await writeFile(file, list([execCluster(), execCluster({ name: 'b', server: undefined })]));
    const counter = join(dir, 'runs');
    const p = provider(['--count', counter, file]);
    const refs = await p.list();
    assert.deepEqual(
      refs.map((r) => [r.name, r.provider, r.ready, r.server, r.labels.env, r.source]),
      [
        [
          'prod-eu',
          'inv',
          true,
          'https://prod.example:6443',
          'prod',
          { kind: 'exec', name: 'prod-eu', program: PROGRAM },
        ],
        ['b', 'inv', false, undefined, 'prod', { kind: 'exec', name: 'b', program: PROGRAM }],
      ],
    );
    assert.equal(refs[0].labels['fleet.dev/auth'], 'exec');
    assert.equal(refs[1].reason, 'output: clusters[1].server: is required');
    await p.get('prod-eu');
    assert.equal(readFileSync(counter, 'utf8'), 'ran\n', 'the program runs once per command');
  });

  it('a failing program is one line naming it and its exit code; what it wrote on stderr is not shown', async () => {
    const secret = 'AKIAEXAMPLESECRET0002';
    const p = new ExecProvider({
      name: 'inv',
      command: PROGRAM,
      args: ['--fail'],
      env: { ...process.env, CLUSTER_LIST_SECRET: secret },
    });
    await assert.rejects(p.list(), (e: Error) => {
      assert.equal(
        e.message,
        `exec provider "inv" (${PROGRAM} --fail): exited with 3 (its stderr is not shown, as it may hold secrets: run the program yourself to see it)`,
      );
      return true;
    });
  });

  it('a program that does not answer is ended at its timeout', async () => {
    const started = Date.now();
    await assert.rejects(provider(['--hang'], 300).list(), {
      message: `exec provider "inv" (${PROGRAM} --hang): no answer within 300ms`,
    });
    assert.ok(Date.now() - started < 10_000);
  });

  it('a program that is not there is a configuration error naming it', async () => {
    await assert.rejects(
      new ExecProvider({ name: 'inv', command: '/nonexistent/list-clusters' }).list(),
      (e: FleetError) => {
        assert.equal(e.kind, 'config');
        assert.match(e.message, /^exec provider "inv" \(\/nonexistent\/list-clusters\): /);
        return true;
      },
    );
  });
});

describe('exec provider: its fleet.yaml entry', () => {
  const parse = (entry: string) => parseFleetConfig(`providers:\n  - ${entry}\n`, '/etc/fleet/fleet.yaml', {}, '/w');

  it('command (a path relative to the file), args, timeout, and the allow fields its data needs', () => {
    const [p] = parse(
      '{name: eks, type: exec, command: bin/eks.py, args: [--region, eu-west-1], timeout: 2m, credentialPluginAllowlist: [{command: aws, env: [AWS_PROFILE]}]}',
    ).providers as ExecProviderConfig[];
    assert.equal(p.type, 'exec');
    assert.deepEqual(
      { command: p.command, args: p.args, timeoutMs: p.timeoutMs, allow: p.allow?.credentialPluginAllowlist },
      {
        command: '/etc/fleet/bin/eks.py',
        args: ['--region', 'eu-west-1'],
        timeoutMs: 120_000,
        allow: [{ command: 'aws', env: ['AWS_PROFILE'] }],
      },
    );
    assert.equal(
      (parse('{type: exec, command: list-clusters}').providers[0] as ExecProviderConfig).command,
      'list-clusters',
    );
  });

  it('--provider exec with nothing configured names no program: one line saying where to name it', async () => {
    await assert.rejects(
      createProvider({ type: 'exec', name: 'exec' }, undefined, {
        connector: new Connector({ timeoutMs: 1000, exec: new ExecCredentialRunner() }),
      }),
      {
        message:
          'provider "exec" (type exec) names no program: add one to your fleet configuration, e.g. {name: exec, type: exec, command: /path/to/list-clusters} (docs/providers.md)',
      },
    );
  });

  it('mistakes are one line naming the field', () => {
    assert.throws(() => parse('{type: exec}'), { message: '/etc/fleet/fleet.yaml: providers[0].command: is required' });
    assert.throws(() => parse('{type: exec, command: x, args: a b}'), {
      message: '/etc/fleet/fleet.yaml: providers[0].args: must be a list of strings',
    });
    assert.throws(() => parse('{type: exec, command: x, timeout: soon}'), {
      message:
        '/etc/fleet/fleet.yaml: providers[0].timeout: invalid duration "soon" (use forms like 30s, 1m, 500ms, or 0 for none)',
    });
    assert.throws(() => parse('{type: exec, command: x, timeout: "0"}'), {
      message: '/etc/fleet/fleet.yaml: providers[0].timeout: must be more than 0 (the program must answer within it)',
    });
  });
});
