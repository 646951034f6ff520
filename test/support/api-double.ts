// A small real HTTPS server standing in for an API server, for what a real one cannot be made to do on demand (an old
// release, a wrong answer) and for asserting the exact requests fleet sends. Its own CA; a KubeClient that trusts it.
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { KubeClient } from '../../src/kube/client.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { makeCa, makeLeaf } from './pki.js';

/** One request as the double received it: the raw request line's path (query and encoding as sent), its body parsed. */
export interface SeenRequest {
  method: string;
  url: string;
  contentType?: string;
  body?: any;
}

export interface DoubleAnswer {
  status: number;
  body?: unknown;
}

export interface ApiDouble {
  client: KubeClient;
  /** Every request so far, oldest first (clear with `seen.length = 0`). */
  seen: SeenRequest[];
  /** Answers each request; replace it per test. */
  handler: (r: SeenRequest) => DoubleAnswer;
  close(): void;
}

export async function startApiDouble(name: string): Promise<ApiDouble> {
  const dir = await mkdtemp(join(tmpdir(), `fleet-${name}-`));
  const ca = await makeCa(dir, 'ca', `${name}-ca`);
  const leaf = await makeLeaf({ ca, dir, base: 'server', cn: 'localhost', usage: 'server', ips: ['127.0.0.1'] });
  const double = { seen: [] as SeenRequest[], handler: (() => ({ status: 404 })) as ApiDouble['handler'] };
  const server = createServer(
    { cert: await readFile(leaf.certFile), key: await readFile(leaf.keyFile) },
    (req, res) => {
      let text = '';
      req.on('data', (d) => (text += d));
      req.on('end', () => {
        const r: SeenRequest = {
          method: req.method!,
          url: req.url!,
          contentType: req.headers['content-type'],
          body: text ? JSON.parse(text) : undefined,
        };
        double.seen.push(r);
        const answer = double.handler(r);
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body ?? {}));
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  const client = await KubeClient.connect(
    {
      contextName: 'double',
      clusterName: 'double',
      contextFile: '',
      clusterFile: '',
      cluster: { server: url, 'certificate-authority-data': (await readFile(ca.certFile)).toString('base64') },
      user: { token: `double-token-${name}-123456` },
    },
    { timeoutMs: 5000, clusterName: 'double', exec: new ExecCredentialRunner() },
  );
  return Object.assign(double, { client, close: () => server.close() });
}
