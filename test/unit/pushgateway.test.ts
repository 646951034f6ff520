// --pushgateway (src/cli/pushgateway.ts): the URL checked before anything runs, and the metrics PUT where a Prometheus
// Pushgateway takes them (/metrics/job/<job>[/<label>/<value>]) in its text format, user and password as Basic
// authentication and never in a message; a refusal or a dead gateway is one line.
import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';

import { parsePushgateway, pushMetrics } from '../../src/cli/pushgateway.js';
import type { MetricFamily } from '../../src/cli/prometheus.js';

interface Received {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const families: MetricFamily[] = [
  {
    name: 'fleet_rotation_status',
    help: 'Outcome of each credential rotation.',
    samples: [{ labels: { hub: 'in-cluster', namespace: 'fx', name: 's1', status: 'rotated' }, value: 1 }],
  },
];

describe('--pushgateway', () => {
  const received: Received[] = [];
  let status = 200;
  let base = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? '' : 'pushed metrics are invalid or inconsistent with existing metrics\nmore');
    });
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => server.close());

  it('refuses what is not an http(s) URL of a gateway, naming the flag (exit 2)', () => {
    for (const bad of ['pushgateway:9091', 'ftp://h:21', 'http://h:9091/?x=1', 'http://h:9091/#a', ''])
      assert.throws(
        () => parsePushgateway('--pushgateway', bad),
        (e: Error & { exitCode?: number }) => {
          assert.match(e.message, /^--pushgateway: /);
          assert.equal(e.exitCode, 2);
          return true;
        },
      );
    assert.equal(
      parsePushgateway('--pushgateway', 'https://u:p@gw.example:9091/prefix/').shown,
      'https://gw.example:9091/prefix',
    );
  });

  it('PUTs the metrics in the text format to the job and shard group, with Basic authentication from the URL', async () => {
    received.length = 0;
    const gw = parsePushgateway('--pushgateway', `${base.replace('//', '//rot:s3cret@')}/gw/`);
    await pushMetrics(
      gw,
      [
        ['job', 'fleet_creds_rotate'],
        ['shard', '2'],
      ],
      families,
    );
    assert.equal(received.length, 1);
    const [r] = received;
    assert.equal(r.method, 'PUT');
    assert.equal(r.url, '/gw/metrics/job/fleet_creds_rotate/shard/2');
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(r.headers.authorization, `Basic ${Buffer.from('rot:s3cret').toString('base64')}`);
    assert.match(r.body, /^# TYPE fleet_rotation_status gauge$/m);
    assert.match(r.body, /^fleet_rotation_status\{hub="in-cluster",namespace="fx",name="s1",status="rotated"\} 1$/m);
  });

  it('a refusal and a gateway that is not there are one line each, without the password', async () => {
    status = 400;
    const gw = parsePushgateway('--pushgateway', `${base.replace('//', '//rot:s3cret@')}`);
    await assert.rejects(pushMetrics(gw, [['job', 'j']], families), (e: Error) => {
      assert.equal(
        e.message,
        `pushing the metrics to ${base}: HTTP 400: pushed metrics are invalid or inconsistent with existing metrics`,
      );
      return true;
    });
    status = 200;
    // A port nothing listens on (one just freed).
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const dead = parsePushgateway('--pushgateway', `http://rot:s3cret@127.0.0.1:${port}`);
    await assert.rejects(pushMetrics(dead, [['job', 'j']], families), (e: Error) => {
      assert.equal(e.message, `pushing the metrics to http://127.0.0.1:${port}: ECONNREFUSED`);
      assert.ok(!e.message.includes('s3cret'));
      return true;
    });
  });
});
