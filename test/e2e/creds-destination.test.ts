// Where a credential goes (issue 46 item 1), against the real control plane, as an attacker who may write one hub
// Secret: fleet mints, verifies, rotates and hands out member-1's credentials only to member-1's server with member-1's
// CA, as the operator's kubeconfig holds them, never to the server, CA or proxy the Secret (or KUBERNETES_EXEC_INFO)
// names. Each case fails on 87abe4f:
// (a) a Secret pointing at a capture HTTPS server on 127.0.0.1 that answers SelfSubjectReview as a cluster-admin
//     ServiceAccount of member-1, adopted with --cluster member-1 --yes: refused (exit 2, both servers named) before any
//     mint; the capture server gets no request at all, and nothing is minted on member-1 (no anchor for that SA);
// (b) member-1's exact URL with insecure-skip-tls-verify and a proxy-url naming a capture CONNECT proxy: not adoptable,
//     the proxy gets no connection;
// (c) member-1 reached by another name (https://localhost:P, a SAN of its serving certificate, against
//     https://127.0.0.1:P): adopted, the plan and the result say the server it is written for and where it is verified;
// (d) that adopted Secret's server changed afterwards to the capture server: creds rotate refuses, nothing is sent;
// (e) kubeconfig credential with 127.1, 0x7f.0.0.1, 2130706433 and 127.0.0.1. spellings of the provider's server:
//     refused, nothing handed out (fleet, and fleet-credential, which hands the request to fleet on a cache miss).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { buildScriptOutput } from '../support/binaries.js';
import { type CliResult, FLEET_BIN, fleetTestEnv, runFleet } from '../support/cli.js';
import {
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';
import { type HostileServer, hostileServer, selfSubjectReview, serverPki } from '../support/hostile-servers.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('dest');
const hubNs = `${run}-hub`;
const apps = `${run}-apps`;
const powerful = `powerful-${run}`;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const ADOPT = ['creds', 'adopt', '--kubeconfig', m1.kubeconfig, ...HUB];
const FLEET_CREDENTIAL_BUILD = fileURLToPath(new URL('../../cmd/fleet-credential/build.sh', import.meta.url));
const b64 = (s: string) => Buffer.from(s).toString('base64');
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');
const caPem = readFileSync(m1.caFile, 'utf8');
const port = new URL(m1.url).port;

const outputs: Array<{ what: string; text: string }> = [];
const secrets = new Set<string>();
let dir: string;
let capture: HostileServer;
/** Every request the capture server saw with an Authorization header (a credential sent to it). */
const credentialsSent = () => capture.requests.filter((r) => r.headers.authorization !== undefined);

async function fleet(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 180_000, env });
  outputs.push({ what: args.join(' '), text: res.stdout + res.stderr });
  return res;
}

function kubeconfigText(cluster: Record<string, unknown>, user: Record<string, string>): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'u@c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'u@c',
  });
}

/** A multicluster-runtime kubeconfig Secret on the hub with this cluster entry and token. */
async function consumerSecret(name: string, cluster: Record<string, unknown>, token: string): Promise<void> {
  await applyYaml(
    hub,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
      data: { kubeconfig: b64(kubeconfigText(cluster, { token })) },
    }),
  );
}

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

/** Anchor Secrets fleet made on member-1 for a ServiceAccount (what a mint leaves). */
async function anchorsOf(ns: string, sa: string): Promise<string[]> {
  const out = await kubectl(m1, ['get', 'secrets', '-n', ns, '-o', 'json']);
  return (JSON.parse(out).items as any[])
    .map((s) => s.metadata.name as string)
    .filter((n) => n.startsWith(`${sa}-fleet-anchor-`));
}

/** A plain HTTP proxy on 127.0.0.1 that records every connection and CONNECT and forwards nothing. */
async function captureProxy(): Promise<{
  url: string;
  connections: number;
  connects: string[];
  close(): Promise<void>;
}> {
  const state = { connections: 0, connects: [] as string[] };
  const sockets = new Set<Socket>();
  const server = http.createServer((_req, res) => res.writeHead(502).end());
  server.on('connection', (s: Socket) => {
    state.connections++;
    sockets.add(s);
    s.on('error', () => {});
  });
  server.on('connect', (req: http.IncomingMessage, socket: Socket) => {
    state.connects.push(req.url ?? '');
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return state.connections;
    },
    connects: state.connects,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  await applyYaml(m1, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: apps } }));
  // The cluster-admin ServiceAccount an attacker would like a token of.
  await applyYaml(
    m1,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: powerful, namespace: 'kube-system' } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: powerful },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: powerful, namespace: 'kube-system' }],
        },
      ],
    }),
  );
  // The attacker's API server: answers every review as the powerful ServiceAccount, and records what it is sent.
  const pki = await serverPki();
  capture = await hostileServer(pki, (req, res) => {
    const body = (req.url ?? '').includes('selfsubjectreviews')
      ? selfSubjectReview(`system:serviceaccount:kube-system:${powerful}`, ['system:authenticated'])
      : (req.url ?? '').includes('selfsubjectrulesreviews')
        ? {
            kind: 'SelfSubjectRulesReview',
            apiVersion: 'authorization.k8s.io/v1',
            status: { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [] },
          }
        : { kind: 'Status', apiVersion: 'v1', status: 'Success' };
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  (capture as HostileServer & { caData: string }).caData = pki.caData;
});

after(async () => {
  await capture?.close();
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', apps, '--wait=false']);
  await kubectlResult(m1, ['delete', 'clusterrolebinding', powerful, '--ignore-not-found']);
  await kubectlResult(m1, ['delete', 'serviceaccount', powerful, '-n', 'kube-system', '--ignore-not-found']);
  const names = (await kubectl(m1, ['get', 'clusterrole,clusterrolebinding', '-o', 'name'])).split('\n');
  const ours = names.filter((n) => n.includes(`fleet-creds-${apps}-`));
  if (ours.length > 0) await kubectlResult(m1, ['delete', '--ignore-not-found', ...ours]);
});

describe('where a credential goes', { concurrency: false }, () => {
  const captureCa = () => (capture as HostileServer & { caData: string }).caData;

  it("(a) a Secret naming an attacker's server, adopted with --cluster member-1 --yes: exit 2 naming both servers, nothing sent there, nothing minted", async () => {
    const name = `${run}-attacker`;
    const junk = `junk-${run}-token`;
    secrets.add(junk);
    await consumerSecret(name, { server: capture.url, 'certificate-authority-data': captureCa() }, junk);
    const before = await hubSecret(name);
    for (const extra of [['--dry-run', '-o', 'json'], ['--yes']]) {
      const res = await fleet([...ADOPT, `${hubNs}/${name}`, '--cluster', m1.context, ...extra]);
      assert.equal(res.code, 2, res.stdout + res.stderr);
      const line = res.stderr.trim();
      assert.ok(line.includes(capture.url) && line.includes(m1.url), line);
      assert.match(line, /is not .*'s server .*not adoptable/, line);
    }
    assert.deepEqual(
      capture.requests.map((r) => `${r.method} ${r.path}`),
      [],
      'the attacker server was sent requests',
    );
    assert.deepEqual(await anchorsOf('kube-system', powerful), [], 'a token was minted for the powerful SA');
    const now = await hubSecret(name);
    assert.deepEqual(now.data, before.data);
    assert.deepEqual(now.metadata.labels, before.metadata.labels);
  });

  it("(b) member-1's exact URL with insecure-skip-tls-verify and a proxy-url: not adoptable, the proxy gets no connection", async () => {
    const proxy = await captureProxy();
    try {
      const alice = tokenUser(m1, 'alice').token;
      secrets.add(alice);
      const name = `${run}-proxied`;
      await consumerSecret(name, { server: m1.url, 'insecure-skip-tls-verify': true, 'proxy-url': proxy.url }, alice);
      const args = [`${hubNs}/${name}`, '--service-account', `${apps}/proxied`, '--role', 'pod-lister', '--yes'];
      const res = await fleet([...ADOPT, ...args]);
      assert.equal(res.code, 2, res.stdout + res.stderr);
      assert.match(res.stderr.trim(), /turns TLS verification off \(insecure-skip-tls-verify\).*not adoptable/);
      // Without the insecure flag, the proxy alone is the refusal.
      const name2 = `${run}-proxied2`;
      await consumerSecret(
        name2,
        { server: m1.url, 'certificate-authority-data': b64(caPem), 'proxy-url': proxy.url },
        alice,
      );
      const res2 = await fleet([...ADOPT, `${hubNs}/${name2}`, ...args.slice(1)]);
      assert.equal(res2.code, 2, res2.stdout + res2.stderr);
      assert.match(res2.stderr.trim(), new RegExp(`proxy-url ${proxy.url}.*not adoptable`));
      assert.equal(res2.stderr.trim().split('\n').length, 1, res2.stderr);
      assert.equal(
        proxy.connections,
        0,
        `the proxy got ${proxy.connections} connections (${proxy.connects.join(', ')})`,
      );
      assert.deepEqual(await anchorsOf(apps, 'proxied'), []);
    } finally {
      await proxy.close();
    }
  });

  const other = `${run}-other-name`;
  it("(c) member-1 reached by another name (localhost, whose certificate member-1's CA signed): planned and adopted, the plan names both servers", async () => {
    const server = `https://localhost:${port}`;
    const alice = tokenUser(m1, 'alice').token;
    secrets.add(alice);
    await consumerSecret(other, { server, 'certificate-authority-data': b64(caPem) }, alice);
    const args = [
      `${hubNs}/${other}`,
      '--cluster',
      m1.context,
      '--service-account',
      `${apps}/other`,
      '--role',
      'pod-lister',
    ];
    const plan = await fleet([...ADOPT, ...args, '--dry-run', '-o', 'json']);
    assert.equal(plan.code, 0, plan.stdout + plan.stderr);
    const planned = plan.json<any>().items[0];
    assert.equal(planned.status, 'planned', JSON.stringify(planned));
    assert.deepEqual(planned.destination, {
      server,
      verifiedAt: m1.url,
      // The cluster as fleet names it (FILE+context when several kubeconfig files are given).
      by: `certificate verified against ${planned.target.cluster}'s CA`,
    });
    assert.ok(String(planned.target.cluster).endsWith(m1.context), planned.target.cluster);
    assert.ok(
      planned.reason.includes(`for server ${server}`) && planned.reason.includes(`verify it at ${m1.url}`),
      planned.reason,
    );
    const text = await fleet([...ADOPT, ...args, '--dry-run']);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.includes(server) && text.stdout.includes(m1.url), text.stdout);

    const res = await fleet([...ADOPT, ...args, '--yes', '-o', 'json']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'adopted', JSON.stringify(item));
    assert.equal(item.destination.server, server);
    const kc = yaml.load(decode((await hubSecret(other)).data.kubeconfig)) as any;
    assert.equal(kc.clusters[0].cluster.server, server, 'the Secret keeps the name its consumer uses');
    const token = kc.users[0].user.token as string;
    secrets.add(token);
    const path = join(dir, 'other.kubeconfig');
    writeFileSync(path, kubeconfigText({ server: m1.url, 'certificate-authority-data': b64(caPem) }, { token }), {
      mode: 0o600,
    });
    const who = await kubectlResult(m1, [
      '--kubeconfig',
      path,
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username}',
    ]);
    assert.equal(who.stdout.trim(), `system:serviceaccount:${apps}:other`);
  });

  it("(d) that Secret's server changed to the attacker's afterwards: creds rotate refuses, sends nothing, mints nothing", async () => {
    const s = await hubSecret(other);
    const kc = yaml.load(decode(s.data.kubeconfig)) as any;
    kc.clusters[0].cluster = { server: capture.url, 'certificate-authority-data': captureCa() };
    await kubectl(hub, [
      'patch',
      'secret',
      other,
      '-n',
      hubNs,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ data: { kubeconfig: b64(yaml.dump(kc)) } }),
    ]);
    const anchors = await anchorsOf(apps, 'other');
    const seen = capture.requests.length;
    const res = await fleet([
      'creds',
      'rotate',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      `${hubNs}/${other}`,
      '--cluster',
      m1.context,
      '-o',
      'json',
    ]);
    assert.notEqual(res.code, 0, res.stdout + res.stderr);
    const item = res.json<any>().items[0];
    assert.equal(item.status, 'failed', JSON.stringify(item));
    assert.ok(item.reason.includes(capture.url) && item.reason.includes(m1.url), item.reason);
    assert.match(item.reason, /not rotated/);
    assert.equal(capture.requests.length, seen, 'rotate sent requests to the attacker server');
    assert.deepEqual(credentialsSent(), []);
    assert.deepEqual(await anchorsOf(apps, 'other'), anchors, 'a new anchor was made');
    assert.equal(
      (yaml.load(decode((await hubSecret(other)).data.kubeconfig)) as any).users[0].user.token,
      kc.users[0].user.token,
    );
  });

  it('(e) kubeconfig credential for 127.1, 0x7f.0.0.1, 2130706433 and 127.0.0.1. spellings of the server: refused, nothing handed out', async () => {
    const alice = tokenUser(m1, 'alice');
    secrets.add(alice.token);
    const kubeconfig = alice.kubeconfigPath;
    const doc = yaml.load(readFileSync(kubeconfig, 'utf8')) as any;
    const cluster = doc.contexts[0].context.cluster as string;
    const info = (server: string) =>
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: { cluster: { server, 'certificate-authority-data': b64(caPem) } },
      });
    const cache = join(dir, 'cache');
    const args = ['kubeconfig', 'credential', '--cluster', cluster, '--kubeconfig', kubeconfig];
    const env = { KUBERNETES_EXEC_INFO: info(m1.url), XDG_CACHE_HOME: cache };
    const ok = await fleet(args, env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(ok.stdout.includes(alice.token), 'the right server gets the credential');
    outputs.pop();
    const reader = buildScriptOutput(FLEET_CREDENTIAL_BUILD);
    for (const host of ['127.1', '0x7f.0.0.1', '2130706433', '127.0.0.1.', '0177.0.0.1']) {
      const server = `https://${host}:${port}`;
      const res = await fleet(args, { ...env, KUBERNETES_EXEC_INFO: info(server) });
      assert.equal(res.code, 2, `${server}: ${res.stdout}${res.stderr}`);
      assert.equal(res.stdout, '', server);
      assert.ok(res.stderr.includes(`kubectl is connecting to ${server}`), res.stderr);
      // fleet-credential: the cache holds the credential for the provider's own server only; for this spelling it
      // hands the request to fleet, which refuses it.
      const viaReader = runReader(reader, ['--fleet', FLEET_BIN, ...args], {
        ...env,
        KUBERNETES_EXEC_INFO: info(server),
      });
      outputs.push({ what: `fleet-credential ${server}`, text: viaReader.out + viaReader.err });
      assert.equal(viaReader.code, 2, `fleet-credential ${server}: ${viaReader.out}${viaReader.err}`);
      assert.equal(viaReader.out, '', server);
    }
  });

  it('no credential appears in any output', () => {
    for (const o of outputs)
      for (const s of secrets) assert.ok(!o.text.includes(s), `a credential appears in ${o.what}`);
  });
});

/** fleet-credential as kubectl runs it (with fleet's test environment), waited for. */
function runReader(cmd: string, args: string[], env: NodeJS.ProcessEnv): { code: number; out: string; err: string } {
  const r = spawnSync(cmd, args, { env: fleetTestEnv(env), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}
