import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';

import { toErrorInfo } from '../base/errors.js';
import type { KubeClient } from './client.js';
import { parseStatus } from './errors.js';
import { OIDC_CONFIGURATION_PATH, SERVICE_ACCOUNT_JWKS_PATH } from './paths.js';

export type SignatureResult = { ok: true; kid?: string } | { ok: false; reason: string };

/** Verifies the token's signature (only the signature: expiry and audience are separate checks) against the JWKS. */
export async function verifySignature(token: string, jwks: unknown): Promise<SignatureResult> {
  const set = jwks as JSONWebKeySet;
  if (!set || !Array.isArray(set.keys)) return { ok: false, reason: 'the JWKS has no "keys" array' };
  try {
    const verified = await compactVerify(token, createLocalJWKSet(set));
    return { ok: true, kid: verified.protectedHeader.kid };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const reason =
      e.code === 'ERR_JWKS_NO_MATCHING_KEY'
        ? "no key in the JWKS matches the token's kid/alg (the hub rotated its signing key, or this is another issuer's token)"
        : e.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'
          ? 'the signature does not verify with the published key'
          : (e.message ?? String(error));
    return { ok: false, reason };
  }
}

/** A cluster's service account issuer as it publishes itself: its discovery document's issuer and its keys. */
export interface IssuerKeys {
  /** `issuer` of /.well-known/openid-configuration, when the server serves one. */
  issuer?: string;
  jwks?: unknown;
  /** Why the keys could not be read (the request, the status and the server's words). */
  error?: string;
}

/**
 * Reads the keys a cluster verifies its service account tokens with, through a client the caller chose (the
 * operator's own context for that cluster: the keys are the cluster's word only when asked of the cluster itself).
 * The JWKS is read from the server's own path, never from the discovery document's `jwks_uri`, which may name another
 * host.
 */
export async function readIssuerKeys(client: KubeClient): Promise<IssuerKeys> {
  const get = async (path: string): Promise<{ value?: unknown; error?: string }> => {
    try {
      // The API server serves the JWKS only as application/jwk-set+json (406 for a plain JSON accept).
      const res = await client.request('GET', path, undefined, {
        accept: 'application/json, application/jwk-set+json',
      });
      if (res.status !== 200) {
        const said = (parseStatus(res.body)?.message ?? res.body.trim().split('\n')[0] ?? '')
          .replace(/\s+/g, ' ')
          .slice(0, 200);
        return { error: `GET ${path}: HTTP ${res.status}${said ? `: ${said}` : ''}` };
      }
      try {
        return { value: JSON.parse(res.body) as unknown };
      } catch {
        return { error: `GET ${path}: the answer is not JSON` };
      }
    } catch (error) {
      return { error: `GET ${path}: ${toErrorInfo(error).message}` };
    }
  };
  const [discovery, jwks] = await Promise.all([get(OIDC_CONFIGURATION_PATH), get(SERVICE_ACCOUNT_JWKS_PATH)]);
  const doc = discovery.value as { issuer?: unknown } | undefined;
  return {
    ...(typeof doc?.issuer === 'string' ? { issuer: doc.issuer } : {}),
    ...(jwks.value !== undefined ? { jwks: jwks.value } : { error: jwks.error }),
  };
}
