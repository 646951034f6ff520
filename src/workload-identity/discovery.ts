import { toErrorInfo, type ErrorInfo } from '../base/errors.js';
import { parseStatus } from '../kube/errors.js';
import type { Connector } from '../kube/connector.js';
import { OIDC_CONFIGURATION_PATH } from '../kube/paths.js';
import { connectAnonymous } from './connect.js';

/**
 * The issuer side as a target's API server sees it: `{issuer}/.well-known/openid-configuration` and its `jwks_uri`, both
 * fetched without credentials and trusting only the CA the target would be given.
 */
export interface Fetched<T> {
  url: string;
  /** HTTP status, when an answer came. */
  status?: number;
  value?: T;
  /** Transport failure (TLS, unreachable, timeout) or an unreadable answer. */
  error?: ErrorInfo;
  /** The server's own words on an HTTP error (e.g. the RBAC denial). */
  serverMessage?: string;
}

export interface DiscoveryDocument {
  issuer?: string;
  jwks_uri?: string;
  [key: string]: unknown;
}

/** go-oidc's rule, which the API server uses: the issuer without a trailing slash, then the well-known path. */
export function discoveryUrl(issuer: string): string {
  return issuer.replace(/\/$/, '') + OIDC_CONFIGURATION_PATH;
}

export async function fetchAnonymous<T>(
  url: string,
  caPem: string | undefined,
  connector: Connector,
): Promise<Fetched<T>> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, error: { kind: 'config', message: `"${url}" is not a URL` } };
  }
  if (parsed.protocol !== 'https:')
    return { url, error: { kind: 'config', message: `${url}: the API server only fetches https URLs` } };
  try {
    const client = await connectAnonymous(parsed.origin, caPem, connector);
    // The API server serves the JWKS only as application/jwk-set+json (406 for a plain JSON accept).
    const res = await client.request('GET', parsed.pathname + parsed.search, undefined, {
      accept: 'application/json, application/jwk-set+json',
    });
    const out: Fetched<T> = { url, status: res.status };
    if (res.status !== 200) {
      out.serverMessage = (parseStatus(res.body)?.message ?? res.body.trim().split('\n')[0])
        .replace(/\s+/g, ' ')
        .slice(0, 200);
      return out;
    }
    try {
      out.value = JSON.parse(res.body) as T;
    } catch {
      out.error = { kind: 'server', message: `${url}: the answer is not JSON` };
    }
    return out;
  } catch (error) {
    return { url, error: toErrorInfo(error) };
  }
}

// One verifier for every token fleet checks against an issuer's keys (wi doctor, creds list --credential-id --live).
export { type SignatureResult, verifySignature } from '../kube/service-account-keys.js';
