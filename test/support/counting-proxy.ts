// A pass-through HTTPS proxy in front of a real API server that counts the requests it forwards, by method and path.
// Every answer is the real server's; the proxy only terminates TLS (with its own CA) and counts, so a test can show how
// many requests a command makes. Credentials must be bearer tokens (a client certificate ends at the proxy).
import { readFileSync } from 'node:fs';
import { type Server, createServer, request } from 'node:https';

import { makeCa, makeLeaf } from './pki.js';
import { scratchDir, uniqueName } from './fixture.js';

export interface CountingProxy {
  url: string;
  caFile: string;
  /** `METHOD /path` (no query) → how many times it was forwarded. */
  counts: Map<string, number>;
  /** Resolves when a request `hold` matched has reached the proxy (and is held there, not forwarded). */
  held: Promise<string>;
  close(): Promise<void>;
}

/**
 * `hold`: a request it matches (`METHOD /path`) is not forwarded (a request in flight that never ends, until close), so
 * a test can act while a command waits for that answer.
 */
export async function startCountingProxy(
  upstream: { url: string; caFile: string },
  options: { hold?: (request: string) => boolean } = {},
): Promise<CountingProxy> {
  const dir = scratchDir();
  const ca = await makeCa(dir, uniqueName('proxy-ca'), 'counting-proxy-ca');
  const leaf = await makeLeaf({
    ca,
    dir,
    base: uniqueName('proxy'),
    cn: '127.0.0.1',
    usage: 'server',
    ips: ['127.0.0.1'],
  });
  const upstreamCa = readFileSync(upstream.caFile);
  const counts = new Map<string, number>();
  let onHeld: (request: string) => void = () => undefined;
  const held = new Promise<string>((resolve) => (onHeld = resolve));
  const server: Server = createServer(
    { cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) },
    (req, res) => {
      const key = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (options.hold?.(key)) {
        onHeld(key);
        return;
      }
      const target = new URL(req.url ?? '/', upstream.url);
      const headers = { ...req.headers, host: target.host };
      const out = request(target, { method: req.method, headers, ca: upstreamCa }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', (e) => res.writeHead(502).end(e.message));
      req.pipe(out);
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: ca.certFile,
    counts,
    held,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
