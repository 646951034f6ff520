import yaml from 'js-yaml';

import { ConfigError, FleetError } from '../base/errors.js';

/**
 * The target's structured authentication configuration (`--authentication-config`): generating the jwt entry that
 * trusts the hub, and reading a user's file to check it statically. apiserver.config.k8s.io/v1 is served from 1.34,
 * v1beta1 from 1.30 (on by default), v1alpha1 from 1.29 (behind a feature gate).
 */
export const AUTHENTICATION_CONFIGURATION = 'AuthenticationConfiguration';

export interface JwtAuthenticator {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: string;
  };
  claimValidationRules?: unknown[];
  claimMappings: {
    username: { claim?: string; prefix?: string; expression?: string };
    groups?: { claim?: string; prefix?: string; expression?: string };
    uid?: { claim?: string; expression?: string };
    extra?: unknown[];
  };
  userValidationRules?: unknown[];
}

export interface AuthenticationConfiguration {
  apiVersion: string;
  kind: typeof AUTHENTICATION_CONFIGURATION;
  jwt: JwtAuthenticator[];
  [key: string]: unknown;
}

export interface ServerVersion {
  gitVersion: string;
  major: number;
  minor: number;
}

/** Major and minor from /version (`minor` can carry a `+` on vendor builds). */
export function parseVersion(body: { gitVersion?: string; major?: string; minor?: string }): ServerVersion {
  const gitVersion = body.gitVersion ?? '';
  let major = Number.parseInt(body.major ?? '', 10);
  let minor = Number.parseInt(body.minor ?? '', 10);
  if (Number.isNaN(major) || Number.isNaN(minor)) {
    const m = /^v?(\d+)\.(\d+)/.exec(gitVersion);
    if (!m)
      throw new FleetError('server', `cannot read the Kubernetes version from /version (gitVersion "${gitVersion}")`);
    major = Number(m[1]);
    minor = Number(m[2]);
  }
  return { gitVersion, major, minor };
}

/** Which apiVersion of AuthenticationConfiguration a kube-apiserver of this version reads without feature gates. */
export function authenticationConfigApiVersion(v: ServerVersion): string {
  if (v.major !== 1) throw new FleetError('server', `unexpected Kubernetes major version ${v.major} (${v.gitVersion})`);
  if (v.minor >= 34) return 'apiserver.config.k8s.io/v1';
  if (v.minor >= 30) return 'apiserver.config.k8s.io/v1beta1';
  throw new FleetError(
    'server',
    `the target runs ${v.gitVersion}: structured authentication configuration needs Kubernetes 1.30 or later (1.29 only behind the StructuredAuthenticationConfiguration feature gate)`,
  );
}

export interface JwtEntryInput {
  issuer: string;
  audiences: string[];
  caPem?: string;
  prefix: string;
}

export function jwtEntry(i: JwtEntryInput): JwtAuthenticator {
  return {
    issuer: {
      url: i.issuer,
      audiences: i.audiences,
      // More than one audience requires an explicit policy; MatchAny is the only one there is.
      ...(i.audiences.length > 1 ? { audienceMatchPolicy: 'MatchAny' } : {}),
      ...(i.caPem ? { certificateAuthority: i.caPem } : {}),
    },
    claimMappings: { username: { claim: 'sub', prefix: i.prefix } },
  };
}

export function authenticationConfiguration(
  apiVersion: string,
  entries: JwtAuthenticator[],
): AuthenticationConfiguration {
  return { apiVersion, kind: AUTHENTICATION_CONFIGURATION, jwt: entries };
}

/** YAML as a person would put it in a file; block scalars keep the CA readable. */
export function toYaml(config: AuthenticationConfiguration): string {
  return yaml.dump(config, { lineWidth: -1, noRefs: true });
}

/** Reads a user's AuthenticationConfiguration file; a file that is not one is a configuration error naming the file. */
export function parseAuthenticationConfiguration(text: string, file: string): AuthenticationConfiguration {
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch (error) {
    throw new ConfigError(`${file}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const d = doc as Partial<AuthenticationConfiguration> | undefined;
  if (!d || typeof d !== 'object') throw new ConfigError(`${file}: empty, expected kind AuthenticationConfiguration`);
  if (d.kind !== AUTHENTICATION_CONFIGURATION)
    throw new ConfigError(`${file}: kind is "${String(d.kind)}", expected AuthenticationConfiguration`);
  if (!/^apiserver\.config\.k8s\.io\/(v1|v1beta1|v1alpha1)$/.test(String(d.apiVersion))) {
    throw new ConfigError(
      `${file}: apiVersion "${String(d.apiVersion)}" is not apiserver.config.k8s.io/v1, v1beta1 or v1alpha1`,
    );
  }
  if (d.jwt !== undefined && !Array.isArray(d.jwt)) throw new ConfigError(`${file}: jwt must be a list`);
  const jwt = (d.jwt ?? []).map((e, i) => {
    if (!e || typeof e !== 'object' || !e.issuer || typeof e.issuer.url !== 'string')
      throw new ConfigError(`${file}: jwt[${i}].issuer.url is missing`);
    return e;
  });
  return { ...(d as AuthenticationConfiguration), jwt };
}

/** The username a jwt entry's claim mapping makes of the token's claims; undefined when it uses a CEL expression. */
export function usernameFor(
  entry: JwtAuthenticator,
  claims: Record<string, unknown>,
): { username?: string; why?: string } {
  const m = entry.claimMappings?.username;
  if (!m) return { why: 'claimMappings.username is missing' };
  if (m.expression)
    return { why: `claimMappings.username uses a CEL expression (${m.expression}); fleet does not evaluate CEL` };
  const claim = m.claim ?? '';
  const value = claims[claim];
  if (typeof value !== 'string') return { why: `the token has no string claim "${claim}"` };
  // An absent prefix is rejected by the API server when claim is set; "" means none.
  return { username: (m.prefix ?? '') + value };
}
