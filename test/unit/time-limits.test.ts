// Every time limit holds (issue 21, item 2): --request-timeout bounds each request (connection, TLS handshake,
// response headers, body) of every command family, --cluster-timeout a cluster's whole work. The servers are real
// local sockets that accept and then never finish (test/support/stall-servers.ts). Each run forces a garbage
// collection every 100 ms: a collection once dropped the request's timeout signal, and a 10 s limit ran to 30 s.
// The assertions are on the error kind and on the limit the error names; the measured time is in their messages.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliResult, runFleet } from '../support/cli.js';
import { type StallServer, blackhole, silentTls, stalledBody } from '../support/stall-servers.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-time-limits-'));
const gcPreload = join(dir, 'gc.cjs');
writeFileSync(gcPreload, 'setInterval(() => globalThis.gc(), 100).unref()\n');
const TOKEN = 'time-limit-test-token-0123456789';

let hole: StallServer;
let silent: StallServer;
let body: StallServer;
let kubeconfig: string;

before(async () => {
  [hole, silent, body] = await Promise.all([blackhole(), silentTls(), stalledBody()]);
  const entries = [
    ['blackhole', hole],
    ['silent', silent],
    ['stalled', body],
  ] as const;
  kubeconfig = join(dir, 'kubeconfig.yaml');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: entries.map(([name, s]) => ({ name, cluster: { server: s.url, 'insecure-skip-tls-verify': true } })),
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: entries.map(([name]) => ({ name, context: { cluster: name, user: 'u' } })),
      'current-context': 'blackhole',
    }),
    { mode: 0o600 },
  );
});
after(async () => {
  await Promise.all([hole?.close(), silent?.close(), body?.close()]);
});

interface Timed {
  res: CliResult;
  seconds: number;
}

async function fleet(args: string[]): Promise<Timed> {
  const started = performance.now();
  const res = await runFleet([...args, '--kubeconfig', kubeconfig], {
    env: { HOME: dir, NODE_OPTIONS: `--expose-gc --require ${gcPreload}` },
    timeoutMs: 60_000,
  });
  const seconds = Math.round(performance.now() - started) / 1000;
  assert.ok(!res.stdout.includes(TOKEN) && !res.stderr.includes(TOKEN), 'the token was printed');
  return { res, seconds };
}

/**
 * The error of an item or of the run (`kind` is the error kind), or the failed check of a report (`kind` is the
 * check's name): it must be the expected one and name the limit as it was given. The measured time is in the message.
 */
function assertLimit(
  t: Timed,
  error: { kind?: string; message?: string } | undefined,
  expected: { kind: string; limit: string },
  what: string,
): void {
  const context = `${what}: took ${t.seconds}s; error ${JSON.stringify(error)}; stderr ${t.res.stderr.trim()}`;
  assert.equal(error?.kind, expected.kind, context);
  assert.ok(error?.message?.includes(expected.limit), `${context}: the error does not name ${expected.limit}`);
  console.log(`measured: ${what}: ${t.seconds}s (${expected.limit})`);
}

/** The first failed check of a report's first item, as {kind: check name, message}. */
function failedCheck(json: any): { kind?: string; message?: string } | undefined {
  const check = json.items?.[0]?.checks?.find((c: { status: string }) => c.status === 'fail');
  return check && { kind: check.name, message: check.message };
}

const request = (limit: string, kind = 'timeout') => ({ kind, limit: `no answer within ${limit} (--request-timeout)` });

describe('--request-timeout and --cluster-timeout hold in every command family', () => {
  it('clusters inspect: a server that accepts TCP and never answers (TLS handshake)', async () => {
    const t = await fleet(['clusters', 'inspect', 'blackhole', '--request-timeout', '2s', '-o', 'json']);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(t, t.res.json().live?.error, request('2s'), 'clusters inspect, blackhole, --request-timeout 2s');
  });

  it('clusters verify: a server that completes TLS and never answers (response headers)', async () => {
    const t = await fleet(['clusters', 'verify', '-c', 'silent', '--request-timeout', '3s', '-o', 'json']);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(
      t,
      failedCheck(t.res.json()),
      request('3s', 'reachable'),
      'clusters verify, silent TLS, --request-timeout 3s',
    );
  });

  it('auth whoami: the documented case, a blackhole (TLS handshake), with --request-timeout 3s', async () => {
    const t = await fleet(['auth', 'whoami', '-c', 'blackhole', '--request-timeout', '3s', '-o', 'json']);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(t, t.res.json().items[0].error, request('3s'), 'auth whoami, blackhole, --request-timeout 3s');
    assert.match(
      t.res.stderr,
      /^error: .*blackhole: https:\/\/127\.0\.0\.1:\d+: no answer within 3s \(--request-timeout\)$/m,
    );
  });

  it('auth can-i: headers sent, then the body stalls', async () => {
    const t = await fleet(['auth', 'can-i', 'get', 'pods', '-c', 'stalled', '--request-timeout', '2s', '-o', 'json']);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(t, t.res.json().items[0].error, request('2s'), 'auth can-i, stalled body, --request-timeout 2s');
  });

  it('auth whoami: --cluster-timeout bounds the cluster when requests have no limit of their own', async () => {
    const t = await fleet([
      'auth',
      'whoami',
      '-c',
      'silent',
      '--request-timeout',
      '0',
      '--cluster-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(
      t,
      t.res.json().items[0].error,
      { kind: 'timeout', limit: 'no result within 2s (--cluster-timeout)' },
      'auth whoami, silent TLS, --request-timeout 0 --cluster-timeout 2s',
    );
  });

  it('creds generate: the target never answers', async () => {
    const t = await fleet([
      'creds',
      'generate',
      '-c',
      'silent',
      '--service-account',
      'ns/sa',
      '--role',
      'view',
      '--out',
      join(dir, 'out.kubeconfig'),
      '--request-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(t, t.res.json().error, request('2s'), 'creds generate, silent TLS, --request-timeout 2s');
  });

  it('creds list: the hub never answers', async () => {
    const t = await fleet([
      'creds',
      'list',
      '--hub-context',
      'blackhole',
      '--hub-kubeconfig',
      kubeconfig,
      '--request-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    const json = t.res.json();
    const error = json.errors?.[0]?.error;
    assertLimit(t, error, request('2s'), 'creds list, blackhole hub, --request-timeout 2s');
    // Every format prints one stderr line per failure, JSON included.
    assert.match(t.res.stderr, /^error: .*no answer within 2s \(--request-timeout\)$/m);
  });

  it('wi test: the hub never answers the token request', async () => {
    const t = await fleet([
      'wi',
      'test',
      '--hub',
      'silent',
      '--target',
      'stalled',
      '--service-account',
      'ns/sa',
      '--request-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(
      t,
      failedCheck(t.res.json()),
      request('2s', 'token-request'),
      'wi test, silent TLS hub, --request-timeout 2s',
    );
  });

  it('wi doctor: the hub sends headers, then its body stalls', async () => {
    const t = await fleet([
      'wi',
      'doctor',
      '--hub',
      'stalled',
      '--target',
      'blackhole',
      '--service-account',
      'ns/sa',
      '--request-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(
      t,
      failedCheck(t.res.json()),
      request('2s', 'token-request'),
      'wi doctor, stalled hub body, --request-timeout 2s',
    );
  });

  it("wi test: --cluster-timeout bounds each target's probe", async () => {
    const t = await fleet([
      'wi',
      'test',
      '--hub',
      'silent',
      '--target',
      'blackhole',
      '--service-account',
      'ns/sa',
      '--request-timeout',
      '0',
      '--cluster-timeout',
      '2s',
      '-o',
      'json',
    ]);
    assert.equal(t.res.code, 1, t.res.stderr);
    assertLimit(
      t,
      t.res.json().items[0].error,
      { kind: 'timeout', limit: 'no result within 2s (--cluster-timeout)' },
      'wi test, silent hub, --request-timeout 0 --cluster-timeout 2s',
    );
    // The failed target is one stderr line, in JSON too.
    assert.match(t.res.stderr, /^error: .*blackhole: no result within 2s \(--cluster-timeout\)$/m);
  });
});
