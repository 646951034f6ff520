import { type ErrorInfo, toErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { httpError } from '../kube/errors.js';
import { READYZ_PATH, VERSION_PATH } from '../kube/paths.js';

/** What a live look at one API server shows: its version, its readiness, how TLS went and how long a round trip takes. */
export interface ProbeResult {
  ok: boolean;
  version?: { gitVersion: string; platform?: string; goVersion?: string };
  readyz?: { ok: boolean; status: number; message: string };
  tls?: { verified: boolean; mode: 'verified' | 'skipped' | 'failed'; error?: string };
  latencyMs?: number;
  error?: ErrorInfo;
}

export async function probe(client: KubeClient): Promise<ProbeResult> {
  const insecure = client.context.cluster['insecure-skip-tls-verify'] === true;
  const out: ProbeResult = { ok: false };
  try {
    const res = await client.request('GET', VERSION_PATH);
    out.latencyMs = Math.round(res.elapsedMs * 10) / 10;
    out.tls = {
      verified: res.tlsAuthorized,
      mode: insecure ? 'skipped' : 'verified',
      error: res.tlsAuthorized ? undefined : res.tlsError,
    };
    if (res.status !== 200) throw httpError(res.status, res.body, `${client.serverUrl}/version`);
    const v = JSON.parse(res.body) as { gitVersion: string; platform?: string; goVersion?: string };
    out.version = { gitVersion: v.gitVersion, platform: v.platform, goVersion: v.goVersion };
    const ready = await client.request('GET', READYZ_PATH, undefined, { accept: 'text/plain' });
    if (ready.status === 401 || ready.status === 403)
      throw httpError(ready.status, ready.body, `${client.serverUrl}/readyz`);
    out.readyz = { ok: ready.status === 200, status: ready.status, message: ready.body.trim().split('\n').pop() ?? '' };
    out.ok = out.readyz.ok;
    if (!out.ok) out.error = { kind: 'server', message: `${client.serverUrl}/readyz: ${out.readyz.message}` };
  } catch (error) {
    out.error = toErrorInfo(error);
    if (out.error.kind === 'tls') out.tls = { verified: false, mode: 'failed', error: out.error.message };
  }
  return out;
}
