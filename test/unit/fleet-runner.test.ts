import assert from 'node:assert/strict';
import { type Server, type Socket, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { FleetError } from '../../src/base/errors.js';
import { runOverClusters, type RunOptions } from '../../src/fleet/runner.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import type { ClusterRef } from '../../src/providers/types.js';

function ref(name: string, server = 'https://127.0.0.1:1', extra: Partial<ClusterRef> = {}): ClusterRef {
  const context: ResolvedContext = {
    contextName: name,
    clusterName: name,
    cluster: { server, 'insecure-skip-tls-verify': true },
    user: {},
    contextFile: '/dev/null',
    clusterFile: '/dev/null',
  };
  return {
    name,
    provider: 'test',
    aliases: [],
    server,
    auth: 'none',
    source: { kind: 'kubeconfig-file' },
    labels: {},
    ready: true,
    resolve: async () => context,
    ...extra,
  };
}

const EXEC = new ExecCredentialRunner();
const OPTIONS: RunOptions = {
  concurrency: 4,
  clusterTimeoutMs: 0,
  connector: new Connector({ timeoutMs: 0, exec: EXEC }),
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP server that accepts connections and never says a word: the hang a real API server cannot produce on demand. */
let silent: Server;
let silentUrl: string;
const sockets = new Set<Socket>();
/** Every connection the silent server accepted: when, and when it was closed. */
const connections: Array<{ openedAt: number; closedAt?: number }> = [];
before(async () => {
  silent = createServer((s) => {
    sockets.add(s);
    const conn: { openedAt: number; closedAt?: number } = { openedAt: Date.now() };
    connections.push(conn);
    // Flowing, so the client's FIN is read and 'close' fires.
    s.resume();
    s.on('close', () => {
      sockets.delete(s);
      conn.closedAt = Date.now();
    });
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentUrl = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
after(() => {
  for (const s of sockets) s.destroy();
  silent.close();
});

describe('fleet runner', () => {
  it('returns results in input order whatever order they finish in', async () => {
    const delays: Record<string, number> = { a: 60, b: 5, c: 30, d: 0, e: 15 };
    const results = await runOverClusters(
      Object.keys(delays).map((n) => ref(n)),
      async ({ ref }) => {
        await sleep(delays[ref.name]);
        return ref.name.toUpperCase();
      },
      OPTIONS,
    );
    assert.deepEqual(
      results.map((r) => [r.cluster, r.ok, r.value]),
      [
        ['a', true, 'A'],
        ['b', true, 'B'],
        ['c', true, 'C'],
        ['d', true, 'D'],
        ['e', true, 'E'],
      ],
    );
    assert.ok(results.every((r) => typeof r.durationMs === 'number'));
  });

  it('never has more clusters in flight than --concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const refs = Array.from({ length: 20 }, (_, i) => ref(`c${i}`));
    const results = await runOverClusters(
      refs,
      async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(10);
        inFlight--;
        return true;
      },
      { ...OPTIONS, concurrency: 3 },
    );
    assert.equal(peak, 3);
    assert.equal(results.length, 20);
  });

  it('a failing cluster does not stop the others, and keeps its error kind and message', async () => {
    const results = await runOverClusters(
      [ref('ok-1'), ref('bad'), ref('boom'), ref('ok-2')],
      async ({ ref }) => {
        if (ref.name === 'bad') throw new FleetError('forbidden', 'create selfsubjectreviews: forbidden by policy');
        if (ref.name === 'boom') throw new TypeError('x is undefined');
        return 1;
      },
      OPTIONS,
    );
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, false, false, true],
    );
    assert.deepEqual(results[1].error, {
      kind: 'forbidden',
      message: 'create selfsubjectreviews: forbidden by policy',
    });
    assert.deepEqual(results[2].error, { kind: 'internal', message: 'x is undefined' });
  });

  it('a cluster that cannot be resolved is a config error; the work never runs for it', async () => {
    let ran = 0;
    const results = await runOverClusters(
      [
        ref('broken', undefined, {
          server: undefined,
          ready: false,
          reason: 'context "x" refers to user "y", which is not defined',
        }),
        ref('unresolvable', 'https://127.0.0.1:1', {
          resolve: async () => {
            throw new FleetError('config', 'kubeconfig.yaml: cluster "z" is not defined');
          },
        }),
      ],
      async () => ++ran,
      OPTIONS,
    );
    assert.equal(ran, 0);
    assert.deepEqual(
      results.map((r) => r.error?.kind),
      ['config', 'config'],
    );
    // The result carries the cluster name; the message is the reason alone, so it is not printed twice.
    assert.equal(results[0].cluster, 'broken');
    assert.equal(results[0].error!.message, 'context "x" refers to user "y", which is not defined');
  });

  it('a refused connection is unreachable', async () => {
    const [r] = await runOverClusters([ref('down')], ({ client }) => client.request('GET', '/version'), OPTIONS);
    assert.equal(r.error?.kind, 'unreachable');
    assert.equal(r.error?.message, 'https://127.0.0.1:1: connection refused');
  });

  it('a server that never answers is a timeout after --request-timeout', async () => {
    const started = Date.now();
    const [r] = await runOverClusters([ref('hang', silentUrl)], ({ client }) => client.request('GET', '/version'), {
      ...OPTIONS,
      connector: new Connector({ timeoutMs: 300, exec: EXEC }),
    });
    assert.equal(r.error?.kind, 'timeout');
    assert.equal(r.error?.message, `${silentUrl}: no answer within 300ms (--request-timeout)`);
    assert.ok(Date.now() - started < 2000);
  });

  it("--cluster-timeout ends the cluster's work and closes its connections", async () => {
    const started = Date.now();
    const [r, other] = await runOverClusters(
      [ref('slow', silentUrl), ref('fast')],
      async ({ ref, client }) => {
        if (ref.name === 'fast') return 'done';
        return client.request('GET', '/version');
      },
      { ...OPTIONS, clusterTimeoutMs: 300 },
    );
    assert.equal(r.error?.kind, 'timeout');
    assert.equal(r.error?.message, 'no result within 300ms (--cluster-timeout)');
    assert.ok(r.durationMs >= 290 && r.durationMs < 1500, `took ${r.durationMs} ms`);
    assert.equal(other.value, 'done');
    const mine = () => connections.filter((c) => c.openedAt >= started);
    for (let i = 0; i < 20 && mine().some((c) => c.closedAt === undefined); i++) await sleep(50);
    assert.equal(mine().length, 1);
    assert.ok(mine()[0].closedAt !== undefined, 'the hanging connection was not closed');
    assert.ok(mine()[0].closedAt! - started < 1500);
  });

  it('with no clusters, returns no results', async () => {
    assert.deepEqual(await runOverClusters([], async () => 1, OPTIONS), []);
  });
});
