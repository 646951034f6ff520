// A bare HTTPS client for the harness's own probes (readiness, /version, SelfSubjectReview with a token). It verifies the
// server CA like any real client would; no Kubernetes client library, so the harness does not depend on the code under test.
import { request } from 'node:https';
import { readFileSync } from 'node:fs';

export interface ApiRequest {
  url: string; // https://127.0.0.1:<port>
  path: string;
  method?: string;
  body?: unknown;
  caFile: string;
  /** Client certificate identity. */
  certFile?: string;
  keyFile?: string;
  token?: string;
  timeoutMs?: number;
}

export interface ApiResponse {
  status: number;
  body: string;
}

const fileCache = new Map<string, Buffer>();
const readCached = (f: string) => {
  let b = fileCache.get(f);
  if (!b) fileCache.set(f, (b = readFileSync(f)));
  return b;
};

export function apiRequest(r: ApiRequest): Promise<ApiResponse> {
  const target = new URL(r.path, r.url);
  const payload = r.body === undefined ? undefined : JSON.stringify(r.body);
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: r.method ?? (payload ? 'POST' : 'GET'),
        ca: readCached(r.caFile),
        cert: r.certFile ? readCached(r.certFile) : undefined,
        key: r.keyFile ? readCached(r.keyFile) : undefined,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json' } : {}),
          ...(r.token ? { authorization: `Bearer ${r.token}` } : {}),
        },
        timeout: r.timeoutMs ?? 10_000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${r.timeoutMs ?? 10_000} ms: ${target.href}`)));
    req.on('error', reject);
    req.end(payload);
  });
}
