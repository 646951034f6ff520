// certificateVerifies (src/kube/destination.ts): the TLS handshake that decides whether a consumer Secret's server is the
// member's. An interrupt ends a handshake that stalls at once, with the interrupt's own error (adopt and rotate then
// undo), instead of being honoured only when the 10 s limit passes (issue 46, left from item 1).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Interrupted } from '../../src/base/errors.js';
import { certificateVerifies, makeDestination } from '../../src/kube/destination.js';
import { makeCa } from '../support/pki.js';

const dir = mkdtempSync(join(tmpdir(), 'fleet-destination-'));
let server: Server;
let port = 0;
let ca = '';
const sockets: Socket[] = [];
const closed: Socket[] = [];

before(async () => {
  // A CA of the member's: any certificate will do, the server never gets as far as presenting one.
  ca = (await makeCa(dir, 'ca', 'member-ca')).certFile;
  // Accepts TCP and never answers the ClientHello: a stalled TLS server.
  server = createServer((s) => {
    sockets.push(s);
    s.on('close', () => closed.push(s));
    s.on('error', () => {});
    // Read (and drop) the ClientHello, so that the client's close reaches 'close' here.
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
after(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

const dest = () =>
  makeDestination('member-1', {
    contextName: 'member-1',
    clusterName: 'member-1',
    cluster: {
      server: 'https://127.0.0.1:6443',
      'certificate-authority-data': readFileSync(ca).toString('base64'),
    },
    user: {},
  } as never);

describe('certificateVerifies against a stalled server', () => {
  it('without an interrupt: the time limit ends it, naming the server', async () => {
    const why = await certificateVerifies(dest(), `https://127.0.0.1:${port}`, undefined, 300);
    assert.equal(why, `no TLS handshake with https://127.0.0.1:${port} within 0.3s`);
  });

  it('an interrupt ends it with the Interrupted error long before its limit, and closes the connection', async () => {
    const ac = new AbortController();
    const before = sockets.length;
    const check = certificateVerifies(dest(), `https://127.0.0.1:${port}`, undefined, 600_000, ac.signal);
    // Once the server holds the connection, the user presses Ctrl-C.
    while (sockets.length === before) await new Promise((r) => setTimeout(r, 10));
    ac.abort(new Interrupted('SIGINT'));
    await assert.rejects(check, (e: unknown) => e instanceof Interrupted && e.signalName === 'SIGINT');
    const mine = sockets[sockets.length - 1];
    while (!closed.includes(mine)) await new Promise((r) => setTimeout(r, 10));
  });

  it('an interrupt that came first: nothing is dialled', async () => {
    const ac = new AbortController();
    ac.abort(new Interrupted('SIGTERM'));
    const before = sockets.length;
    await assert.rejects(
      certificateVerifies(dest(), `https://127.0.0.1:${port}`, undefined, 600_000, ac.signal),
      (e: unknown) => e instanceof Interrupted && e.signalName === 'SIGTERM',
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sockets.length, before, 'a connection was made after the interrupt');
  });
});
