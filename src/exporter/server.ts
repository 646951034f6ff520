import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { UsageError } from '../base/errors.js';
import { type Exposition, OPENMETRICS_TEXT, PROMETHEUS_TEXT } from './metrics.js';

/**
 * Inbound only: this module answers scrapers and sends nothing anywhere. Every request to a cluster or hub, and so
 * every credential, goes through the command's Connector (src/kube/connector.ts), which alone decides where.
 *
 * The exporter's HTTP endpoints: /metrics (the last published collection, Prometheus text or OpenMetrics as the
 * scraper's Accept header prefers), /healthz (the process serves: 200) and /readyz (200 once a collection was
 * published, 503 before). Nothing here waits for a cluster: every answer is built from what is already in memory.
 */
export interface ServerState {
  /** The last rendered exposition (undefined before the first collection ended). */
  exposition(): Exposition | undefined;
  /** Whether a collection was published. */
  ready(): boolean;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/**
 * --listen: `HOST:PORT`, `:PORT` (every address), `[IPv6]:PORT`; port 0 takes a free one (the line fleet prints names
 * it). Checked before anything is collected.
 */
export function parseListen(value: string, flag = '--listen'): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535)
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected HOST:PORT, :PORT or [IPv6]:PORT (port 0-65535)`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/**
 * Whether the scraper prefers OpenMetrics: its Accept header names application/openmetrics-text with a quality at
 * least that of text/plain (Prometheus asks for OpenMetrics first, q=1, and text/plain at q=0.5). No header, or only
 * text/plain or *\/*, gets the Prometheus text format, what every scraper reads.
 */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let om = 0;
  let plain = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (type === 'application/openmetrics-text') om = Math.max(om, q);
    else if (type === 'text/plain') plain = Math.max(plain, q);
  }
  return om > 0 && om >= plain;
}

function answer(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function handle(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return answer(res, 405, 'method not allowed\n');
  }
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') return answer(res, 200, 'ok\n');
  if (path === '/readyz')
    return state.ready() ? answer(res, 200, 'ok\n') : answer(res, 503, 'no collection has finished yet\n');
  if (path === '/metrics') {
    const text = state.exposition();
    if (!text) return answer(res, 503, 'no collection has finished yet\n');
    return wantsOpenMetrics(req.headers.accept)
      ? answer(res, 200, text.openMetrics, OPENMETRICS_TEXT)
      : answer(res, 200, text.prometheus, PROMETHEUS_TEXT);
  }
  if (path === '/') return answer(res, 200, 'fleet exporter: /metrics, /healthz, /readyz\n');
  return answer(res, 404, 'not found\n');
}

export interface Listening {
  server: Server;
  /** Where it listens, the port taken when 0 was asked. */
  address: ListenAddress;
  close(): Promise<void>;
}

/** Listens on `at`; a port in use or an address not on this host is one error naming --listen. */
export async function serve(state: ServerState, at: ListenAddress): Promise<Listening> {
  const server = createServer((req, res) => handle(state, req, res));
  // A scraper that holds a connection open must not keep the process alive after it was told to stop.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          `--listen ${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}: cannot listen: ${error.code ?? error.message}`,
        ),
      ),
    );
    server.listen(at.port, at.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    server,
    address: { host: a.address, port: a.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
