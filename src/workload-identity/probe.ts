import { type Check } from '../base/checks.js';
import { toErrorInfo } from '../base/errors.js';
import type { UserInfo } from '../access/whoami.js';
import type { AuthenticationConfiguration } from './auth-config.js';
import type { Connector } from '../kube/connector.js';
import { type Cluster } from './connect.js';
import { type ServiceAccountRef } from './service-account.js';
import type { CanIQuestion } from './target.js';
import { type TokenClaims, readClaims, requestToken } from './token.js';

/** Everything `wi test` and `wi doctor` need for one hub → target pair. */
export type Probe = ProbeSettings & {
  hub: Cluster;
  target: Cluster;
  /** The audience to request (default: the target's server URL exactly as written in its kubeconfig, as Flux does). */
  audience: string;
};

/** One target's outcome (the per-cluster item of `wi test` and `wi doctor`). */
export interface ProbeResult {
  audience: string;
  /** The token's claims (never the token). */
  claims?: TokenClaims;
  /** Who the target says the token is, when it authenticated. */
  user?: UserInfo;
  checks: Check[];
  /** `wi test` only: what `wi doctor` found, when a step failed. */
  diagnosis?: Check[];
  passed: boolean;
}

export interface Credential {
  token?: string;
  claims?: TokenClaims;
  check: Check;
}

export function describeClaims(c: TokenClaims): string {
  return `iss=${c.iss ?? '(none)'} aud=${c.aud.join(',') || '(none)'} sub=${c.sub ?? '(none)'} exp=${c.exp ?? '(none)'}`;
}

/** A token for the pair: minted on the hub with TokenRequest, or read from --token-file. */
export async function obtainToken(p: Probe): Promise<Credential> {
  const sa = `${p.serviceAccount.namespace}/${p.serviceAccount.name}`;
  if (p.token) {
    try {
      const claims = readClaims(p.token.value);
      return {
        token: p.token.value,
        claims,
        check: { name: 'token', status: 'pass', message: `from ${p.token.file}: ${describeClaims(claims)}` },
      };
    } catch (error) {
      return {
        check: {
          name: 'token',
          status: 'fail',
          message: `${p.token.file}: ${toErrorInfo(error).message}`,
          fix: 'give a ServiceAccount token (a JWT), e.g. the file the workload mounts',
        },
      };
    }
  }
  try {
    const minted = await requestToken(p.hub.client, p.serviceAccount, [p.audience], p.expirationSeconds);
    const claims = readClaims(minted.token);
    return {
      token: minted.token,
      claims,
      check: {
        name: 'token-request',
        status: 'pass',
        message: `hub ${p.hub.name} issued a token for ${sa}: ${describeClaims(claims)}`,
      },
    };
  } catch (error) {
    const e = toErrorInfo(error);
    const fix =
      e.kind === 'not-found'
        ? `create ServiceAccount ${sa} on the hub (fleet wi setup creates it), or name an existing one`
        : e.kind === 'forbidden' || e.kind === 'unauthorized'
          ? `your credentials for ${p.hub.name} need "create" on serviceaccounts/token in namespace ${p.serviceAccount.namespace}`
          : `check that hub ${p.hub.name} is reachable`;
    return { check: { name: 'token-request', status: 'fail', message: `hub ${p.hub.name}: ${e.message}`, fix } };
  }
}

export interface ProbeSettings {
  serviceAccount: ServiceAccountRef;
  audience?: string;
  expirationSeconds: number;
  expectUser?: string;
  canI: CanIQuestion[];
  /** A token the user already has (`--token-file`), diagnosed instead of a new one. */
  token?: { value: string; file: string };
  /** The target's AuthenticationConfiguration, if the user has it (`--authentication-config`). */
  authConfig?: { file: string; raw: string; config: AuthenticationConfiguration };
  options: Connector;
}

export function probeFor(hub: Cluster, target: Cluster, s: ProbeSettings): Probe {
  return { ...s, hub, target, audience: s.audience ?? target.context.cluster.server ?? '' };
}
