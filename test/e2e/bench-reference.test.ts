// The bench's reference (bench/reference: client-go, issue 23) is only a fair yardstick if it asks what fleet asks.
// Against the sandbox's three API servers, for each command it stands in for, both request logs (fleet -v 6, the
// reference's -log) hold the same requests per cluster in the same order, and both get the same answers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

import { runFleet } from '../support/cli.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import { kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigObject } from '../support/kubeconfig.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const root = fileURLToPath(new URL('../..', import.meta.url));
let reference: string;
let kubeconfig: string;
const tokens: string[] = [];

before(() => {
  reference = buildScriptOutput(join(root, 'bench/reference/build.sh'));
  // One kubeconfig, one context per API server (alice's static token on each), as the bench's fleets are written.
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': '',
  };
  for (const s of [cp.hub, ...cp.members]) {
    const alice = s.tokenUsers.find((u) => u.name === 'alice')!;
    tokens.push(alice.token);
    const one = kubeconfigObject({
      path: '',
      server: s.url,
      caFile: s.caFile,
      context: `alice@${s.name}`,
      user: { token: alice.token },
    }) as typeof merged;
    merged.clusters.push(...one.clusters);
    merged.users.push(...one.users);
    merged.contexts.push(...one.contexts);
  }
  kubeconfig = join(scratchDir(), `${uniqueName('ref')}.kubeconfig`);
  writeFileSync(kubeconfig, yaml.dump(merged), { mode: 0o600 });
});

/**
 * "METHOD /path content-type" per server, in order. fleet's -v 8 log has a line "METHOD https://host:port/path[?query]
 * STATUS ..." per request, then its request and response headers; the reference's has "... content-type=TYPE" on the
 * request line. The answer's content type says which document the server sent (aggregated discovery or the plain
 * group list), so the two cannot differ in what they asked for behind the same path.
 */
function requests(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let last: { server: string; index: number } | undefined;
  let inResponse = false;
  for (const line of log.split('\n')) {
    const m = /^(GET|POST|PUT|PATCH|DELETE) (https:\/\/[^/\s]+)(\/[^?\s]*)\S* (?:.*content-type=(\S*))?/.exec(line);
    if (m) {
      const list = out.get(m[2]) ?? [];
      list.push(`${m[1]} ${m[3]}${m[4] !== undefined ? ` ${m[4]}` : ''}`);
      out.set(m[2], list);
      last = { server: m[2], index: list.length - 1 };
      inResponse = false;
      continue;
    }
    if (/^Response headers:/.test(line)) inResponse = true;
    else if (/^Request headers:/.test(line)) inResponse = false;
    const ct = /^\s+content-type: (\S+)/i.exec(line);
    if (ct && inResponse && last) out.get(last.server)![last.index] += ` ${ct[1]}`;
  }
  return out;
}

const COMMANDS: Array<[string, string[]]> = [
  ['whoami', ['auth', 'whoami']],
  ['can-i', ['auth', 'can-i', 'create', 'selfsubjectreviews.authentication.k8s.io']],
  ['verify', ['clusters', 'verify']],
];

describe('bench/reference sends what fleet sends', () => {
  for (const [command, args] of COMMANDS) {
    it(`${command}: the same requests per cluster, in order, and the same answers`, async () => {
      const fleet = await runFleet([...args, '--all', '--kubeconfig', kubeconfig, '-o', 'json', '-v', '8']);
      assert.ok(fleet.code === 0 || (command === 'verify' && fleet.code === 1), fleet.stderr);
      const ref = spawnSync(reference, ['-command', command, '-kubeconfig', kubeconfig, '-log'], { encoding: 'utf8' });
      assert.equal(ref.status, 0, ref.stderr);
      // fleet sends can-i's two discovery GETs at once, so their order in its log varies: compared as a set, before the review.
      const settle = (m: Map<string, string[]>) =>
        command === 'can-i'
          ? new Map(
              [...m].map(([k, v]) => [
                k,
                [...v.filter((r) => r.startsWith('GET')).sort(), ...v.filter((r) => !r.startsWith('GET'))],
              ]),
            )
          : m;
      const ours = settle(requests(fleet.stderr));
      const theirs = settle(requests(ref.stderr));
      assert.equal(ours.size, 3, `fleet's log names ${ours.size} servers:\n${fleet.stderr}`);
      // Every request carries the content type of its answer in both logs (a request without one would compare equal to
      // nothing in particular).
      for (const list of [...ours.values(), ...theirs.values()])
        for (const r of list) assert.match(r, /^\S+ \S+ (application\/json|text\/plain)/, r);
      if (command === 'can-i')
        for (const list of ours.values())
          assert.ok(
            list.some((r) => /^GET \/apis .*as=APIGroupDiscoveryList/.test(r)),
            `no aggregated discovery: ${list.join(', ')}`,
          );
      assert.deepEqual(theirs, ours);

      const fleetItems = fleet.json().items as Array<{
        cluster: string;
        user?: { username: string };
        username?: string;
        allowed?: boolean;
        version?: string;
      }>;
      const refItems = JSON.parse(ref.stdout).items as Array<{
        cluster: string;
        username?: string;
        allowed?: boolean;
        version?: string;
      }>;
      assert.equal(refItems.length, 3);
      for (const r of refItems) {
        const f = fleetItems.find((i) => i.cluster.endsWith(`+${r.cluster}`) || i.cluster === r.cluster);
        assert.ok(f, `fleet has no item for ${r.cluster}: ${fleetItems.map((i) => i.cluster).join(', ')}`);
        if (command === 'whoami') assert.equal(f.user?.username, r.username);
        if (command === 'can-i') assert.equal(f.allowed, r.allowed);
        if (command === 'verify') assert.equal(f.username, r.username);
      }
      for (const t of tokens)
        assert.ok(
          !fleet.stdout.includes(t) && !fleet.stderr.includes(t) && !ref.stdout.includes(t) && !ref.stderr.includes(t),
        );
    });
  }
});

/**
 * creds rotate's requests per credential, made comparable: anchor names masked (the new one's suffix is random, and the
 * old one is generate's for the first run and the first run's for the second), the Lease renewals
 * (a GET then PUT of the Lease every 5 s while held: how many depends on how long the rotation took) dropped, and the
 * old token's confirm-revoked polls (SelfSubjectReviews until 401: as many as the token cache takes) counted once.
 */
function rotationRequests(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [server, list] of requests(log)) {
    const masked = list.map((r) => r.replace(/fleet-anchor-[0-9a-f]{8}(-[0-9a-f]{6})?/, 'fleet-anchor-ANCHOR'));
    // A renewal is timed (every 5 s in both programs), not a step: it runs beside the steps, so its GET and PUT may have
    // other requests between them. A GET of the Lease whose next request on that Lease is a PUT is a renewal: both go.
    const renewal = new Set<number>();
    for (let i = 0; i < masked.length; i++) {
      const lease = /^GET (\S*\/leases\/\S+) /.exec(masked[i]);
      if (!lease) continue;
      const next = masked.findIndex((r, j) => j > i && r.split(' ')[1] === lease[1]);
      if (next > 0 && masked[next].startsWith(`PUT ${lease[1]} `)) renewal.add(i).add(next);
    }
    const kept: string[] = [];
    for (let i = 0; i < masked.length; i++) {
      if (renewal.has(i)) continue;
      if (masked[i].startsWith('POST /apis/authentication.k8s.io/v1/selfsubjectreviews ') && kept.at(-1) === masked[i])
        continue;
      kept.push(masked[i]);
    }
    out.set(server, kept);
  }
  return out;
}

describe('bench/reference -command rotate sends what fleet creds rotate sends', () => {
  // A hub of this test's own, so that --all finds only its Secret (the shared hub holds other files' Secrets).
  let hub: ExtraApiserver;
  const m1 = cp.members[0];
  const nsSys = uniqueName('refrot');
  before(async () => {
    hub = await startExtraApiserver({ name: uniqueName('refhub') });
    await kubectl(hub, ['create', 'namespace', 'consumers']);
    const gen = await runFleet([
      'creds',
      'generate',
      '--kubeconfig',
      m1.kubeconfig,
      '-c',
      m1.context,
      '--hub-kubeconfig',
      hub.kubeconfig,
      '--service-account',
      `${nsSys}/sa`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '2h',
      '--secret',
      'consumers/member-1',
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(gen.code, 0, gen.stderr);
  });
  after(async () => {
    await kubectlResult(m1, ['delete', 'namespace', nsSys, '--wait=false']);
    await hub?.stop();
  });

  it('rotate: the same requests per credential on the hub and on the member, in order, and both rotate', async () => {
    const secret = async () =>
      JSON.parse(await kubectl(hub, ['get', 'secret', '-n', 'consumers', 'member-1', '-o', 'json']));
    const first = await secret();
    const fleet = await runFleet([
      'creds',
      'rotate',
      '--all',
      '--kubeconfig',
      m1.kubeconfig,
      '--hub-kubeconfig',
      hub.kubeconfig,
      '-o',
      'json',
      '-v',
      '8',
    ]);
    assert.equal(fleet.code, 0, fleet.stderr);
    assert.deepEqual(
      fleet.json().items.map((i: { status: string }) => i.status),
      ['rotated'],
    );
    const second = await secret();
    const ref = spawnSync(
      reference,
      ['-command', 'rotate', '-hub-kubeconfig', hub.kubeconfig, '-kubeconfig', m1.kubeconfig, '-log'],
      { encoding: 'utf8' },
    );
    assert.equal(ref.status, 0, ref.stderr);
    assert.deepEqual(
      JSON.parse(ref.stdout).items.map((i: { status: string }) => i.status),
      ['rotated'],
    );
    const third = await secret();
    // Each wrote a new credential and finished (no rotation annotation left).
    assert.notEqual(first.data.kubeconfig, second.data.kubeconfig);
    assert.notEqual(second.data.kubeconfig, third.data.kubeconfig);
    for (const s of [second, third])
      assert.deepEqual(
        Object.keys(s.metadata.annotations).filter((k) => k.startsWith('fleet.dev/rotation-')),
        [],
      );

    const ours = rotationRequests(fleet.stderr);
    const theirs = rotationRequests(ref.stderr);
    assert.equal(ours.size, 2, `fleet's log names ${ours.size} servers:\n${fleet.stderr}`);
    for (const list of [...ours.values(), ...theirs.values()])
      for (const r of list) assert.match(r, /^\S+ \S+ (application\/json|text\/plain)/, r);
    // Every step is there: the Lease, the claim, the anchor, the token, the verification, the revocation, the finish.
    const member = ours.get(new URL(m1.url).origin)!;
    for (const want of [
      /^PATCH \S+fleet-anchor-ANCHOR /,
      /^POST \S+\/serviceaccounts\/sa\/token /,
      /^DELETE \S+\/secrets\/sa-fleet-anchor-/,
    ])
      assert.ok(
        member.some((r) => want.test(r)),
        `${want}: ${member.join(', ')}`,
      );
    // The new anchor has a name of its own (the run's suffix), in both logs.
    for (const log of [fleet.stderr, ref.stderr])
      assert.match(log, /^PATCH \S+\/secrets\/sa-fleet-anchor-[0-9a-f]{8}-[0-9a-f]{6}\?/m);
    assert.deepEqual(theirs, ours);
    const token = (s: { data: { kubeconfig: string } }) =>
      (
        yaml.load(Buffer.from(s.data.kubeconfig, 'base64').toString('utf8')) as {
          users: Array<{ user: { token: string } }>;
        }
      ).users[0].user.token;
    for (const t of [first, second, third].map(token))
      assert.ok(
        ![fleet.stdout, fleet.stderr, ref.stdout, ref.stderr].some((o) => o.includes(t)),
        'a token in the output',
      );
  });
});
