import type { AuthenticationV1TokenRequest } from '@kubernetes/client-node';

import { FleetError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { TOKEN_REQUEST } from '../kube/resources.js';
import { createObject } from '../kube/typed.js';
import { decodeJwt, jwtAudiences, jwtTime } from '../kubeconfig/credentials.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { ServiceAccountRef } from './service-account.js';

/** What fleet shows of a token: its claims, never the token. */
export interface TokenClaims {
  iss?: string;
  aud: string[];
  sub?: string;
  /** RFC 3339. */
  exp?: string;
  iat?: string;
  nbf?: string;
  /** Header fields: the key id and algorithm the signature claims. */
  kid?: string;
  alg?: string;
}

export interface MintedToken {
  token: string;
  expirationTimestamp?: string;
}

/** TokenRequest on the hub for `sa`, with these audiences; the token is registered with the scrubber at once. */
export async function requestToken(
  hub: KubeClient,
  sa: ServiceAccountRef,
  audiences: string[],
  expirationSeconds: number,
): Promise<MintedToken> {
  const request = {
    apiVersion: TOKEN_REQUEST.apiVersion,
    kind: TOKEN_REQUEST.kind,
    spec: { audiences, expirationSeconds },
  } satisfies Wire<AuthenticationV1TokenRequest>;
  const body = await createObject<Wire<AuthenticationV1TokenRequest>>(hub, TOKEN_REQUEST.resource, request, {
    namespace: sa.namespace,
    name: sa.name,
    subresource: TOKEN_REQUEST.subresource,
    what: `TokenRequest for ${sa.namespace}/${sa.name}`,
    ok: [201, 200],
  });
  const token = body.status?.token;
  if (!token) throw new FleetError('server', 'TokenRequest: the answer holds no token');
  registerSecret(token);
  return { token, expirationTimestamp: body.status?.expirationTimestamp };
}

/** Decodes (without verifying) the claims fleet reasons about; throws a FleetError when the token is not a JWT. */
export function readClaims(token: string): TokenClaims {
  const jwt = decodeJwt(token);
  if (!jwt)
    throw new FleetError('config', 'the token is not a JWT (three base64url parts with JSON header and claims)');
  const { header, claims: payload } = jwt;
  const claims: TokenClaims = { aud: jwtAudiences(payload) ?? [] };
  if (typeof payload.iss === 'string') claims.iss = payload.iss;
  if (typeof payload.sub === 'string') claims.sub = payload.sub;
  for (const k of ['exp', 'iat', 'nbf'] as const) {
    const v = jwtTime(payload[k]);
    if (v) claims[k] = v;
  }
  if (typeof header.kid === 'string') claims.kid = header.kid;
  if (typeof header.alg === 'string') claims.alg = header.alg;
  return claims;
}
