import { X509Certificate, createHash } from 'node:crypto';

import { UsageError } from '../base/errors.js';
import { fileProblem, readNamedFile } from '../base/files.js';
import { registerSecret, registerUserSecrets } from './redact.js';
import type { ClusterEntry, UserEntry } from './types.js';
import { parseJson } from '../base/json.js';

/**
 * What can be known about a cluster's credentials without the network: the kind of auth, how the server's CA is
 * trusted, and the identity and expiry carried by a client certificate or a JWT bearer token. Secrets are read only to
 * describe them and are registered for scrubbing; the description never contains them.
 */
export type AuthKind = 'client-cert' | 'token' | 'exec' | 'auth-provider' | 'basic' | 'none';
export type CaKind = 'embedded' | 'file' | 'insecure' | 'system';

export function authKind(user: UserEntry): AuthKind {
  if (user.exec) return 'exec';
  if (user['auth-provider']) return 'auth-provider';
  if (user['client-certificate'] || user['client-certificate-data']) return 'client-cert';
  if (user.token || user.tokenFile) return 'token';
  if (user.username || user.password) return 'basic';
  return 'none';
}

export function caKind(cluster: ClusterEntry): CaKind {
  if (cluster['insecure-skip-tls-verify']) return 'insecure';
  if (cluster['certificate-authority-data']) return 'embedded';
  if (cluster['certificate-authority']) return 'file';
  return 'system';
}

export interface CertificateInfo {
  subject: string;
  issuer: string;
  commonName?: string;
  organizations: string[];
  notBefore: string;
  notAfter: string;
  fingerprintSHA256: string;
}

export interface TokenInfo {
  /** Short fingerprint (SHA-256 prefix) so two tokens can be told apart without showing either. */
  fingerprint: string;
  jwt: boolean;
  issuer?: string;
  subject?: string;
  audiences?: string[];
  expires?: string;
  issuedAt?: string;
}

export interface ExecInfo {
  command: string;
  apiVersion?: string;
  args: number;
  provideClusterInfo: boolean;
  interactiveMode?: string;
}

export interface CredentialDescription {
  auth: AuthKind;
  ca: CaKind;
  certificate?: CertificateInfo;
  token?: TokenInfo;
  exec?: ExecInfo;
  authProvider?: string;
  username?: string;
  /** The earliest expiry known without calling the server (certificate NotAfter or JWT exp). */
  expires?: string;
  /** Things that could not be read (a missing certificate file, a malformed PEM); never fatal for a description. */
  problems: string[];
}

function dnField(dn: string, key: string): string[] {
  return dn
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith(key + '='))
    .map((l) => l.slice(key.length + 1));
}

export function describeCertificate(pem: string | Buffer): CertificateInfo {
  const cert = new X509Certificate(pem);
  return {
    subject: cert.subject.split('\n').join(', '),
    issuer: cert.issuer.split('\n').join(', '),
    commonName: dnField(cert.subject, 'CN')[0],
    organizations: dnField(cert.subject, 'O'),
    notBefore: isoSeconds(new Date(cert.validFrom)),
    notAfter: isoSeconds(new Date(cert.validTo)),
    fingerprintSHA256: cert.fingerprint256,
  };
}

export function fingerprint(secret: string): string {
  return 'sha256:' + createHash('sha256').update(secret).digest('hex').slice(0, 16);
}

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value = parseJson(Buffer.from(segment, 'base64url').toString('utf8'));
    // A JOSE header and a claims set are JSON objects (RFC 7519 section 7.2), never arrays.
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The key of user.extra under which kube-apiserver records which credential authenticated a request: in every audit
 * event's `user.extra` and in a SelfSubjectReview's answer (`fleet auth whoami -o wide`). The values are made by the
 * API server's authenticators (k8s.io/apiserver 1.34): `JTI=<jti claim>` for a JWT that carries a jti (bound
 * ServiceAccount tokens, pkg/authentication/token/jwt; OIDC tokens), `X509SHA256=<lowercase hex SHA-256 of the leaf
 * certificate's DER>` for a client certificate (pkg/authentication/request/x509). Legacy ServiceAccount tokens, static
 * tokens and anything without a jti get none.
 */
export const CREDENTIAL_ID_EXTRA = 'authentication.kubernetes.io/credential-id';

/** The credential-id the API server records for a JWT: `JTI=` and its jti claim; undefined without one. */
export function jwtCredentialId(claims: Record<string, unknown>): string | undefined {
  return typeof claims.jti === 'string' && claims.jti !== '' ? `JTI=${claims.jti}` : undefined;
}

/** The credential-id the API server records for a client certificate (the first in the PEM, the one presented). */
export function certificateCredentialId(pem: string | Buffer): string {
  return `X509SHA256=${createHash('sha256').update(new X509Certificate(pem).raw).digest('hex')}`;
}

/**
 * A credential-id as an audit event shows it, checked (one line naming the flag), with a certificate's hex in the
 * lowercase the API server writes.
 */
export function parseCredentialId(value: string, flag: string): string {
  const v = value.trim();
  const cert = /^X509SHA256=([0-9A-Fa-f]{64})$/.exec(v);
  if (cert) return `X509SHA256=${cert[1].toLowerCase()}`;
  if (/^JTI=[^\s]+$/.test(v)) return v;
  throw new UsageError(
    `${flag}: expected JTI=<jti> or X509SHA256=<64 hex digits> (user.extra["${CREDENTIAL_ID_EXTRA}"] of an audit event), got ${JSON.stringify(value)}`,
  );
}

/** RFC 3339 to the second, as Kubernetes writes timestamps. */
export const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
/** A JWT time claim (seconds since the epoch) in RFC 3339; undefined when it is not a number. */
export const jwtTime = (v: unknown) => (typeof v === 'number' ? isoSeconds(new Date(v * 1000)) : undefined);

/** Describes a bearer token; JWT claims are decoded without verifying (fleet does not hold the issuer's keys). */
export function describeToken(token: string): TokenInfo {
  const info: TokenInfo = { fingerprint: fingerprint(token), jwt: false };
  const claims = jwtClaims(token);
  if (!claims) return info;
  info.jwt = true;
  if (typeof claims.iss === 'string') info.issuer = claims.iss;
  if (typeof claims.sub === 'string') info.subject = claims.sub;
  const audiences = jwtAudiences(claims);
  if (audiences) info.audiences = audiences;
  info.expires = jwtTime(claims.exp);
  info.issuedAt = jwtTime(claims.iat);
  return info;
}

/**
 * The header and claims of a token shaped as a JWT (three segments, the first two JSON objects), not verified: the one
 * decoder (credentials, creds list/revoke, workload identity's readClaims).
 */
export function decodeJwt(
  token: string | undefined,
): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const parts = token?.split('.') ?? [];
  if (parts.length !== 3) return undefined;
  const header = decodeSegment(parts[0]);
  const claims = decodeSegment(parts[1]);
  return header && claims ? { header, claims } : undefined;
}

/** The `aud` claim as a list (a JWT may write one audience as a string); undefined when the claim is absent. */
export function jwtAudiences(claims: Record<string, unknown>): string[] | undefined {
  if (typeof claims.aud === 'string') return [claims.aud];
  return Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : undefined;
}

/** The claims of a token shaped as a JWT (decodeJwt), not verified. */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  return decodeJwt(token)?.claims;
}

/** When a JWT bearer token expires (describeToken's `expires`), without the fingerprint's hash: readiness needs no more. */
export function tokenExpires(token: string): string | undefined {
  return jwtTime(jwtClaims(token)?.exp);
}

async function readText(path: string): Promise<string> {
  return (await readNamedFile(path)).toString('utf8').trim();
}

/** Loads the client certificate PEM of a user, from data or file. */
export async function clientCertificatePem(user: UserEntry): Promise<string | undefined> {
  if (user['client-certificate-data']) return Buffer.from(user['client-certificate-data'], 'base64').toString('utf8');
  if (user['client-certificate']) return (await readNamedFile(user['client-certificate'])).toString('utf8');
  return undefined;
}

/** The bearer token of a user (inline or tokenFile), registered for scrubbing. */
export async function bearerToken(user: UserEntry): Promise<string | undefined> {
  const token = user.token || (user.tokenFile ? await readText(user.tokenFile) : undefined);
  registerSecret(token);
  return token;
}

/**
 * `tokens: false` leaves out the token's description (its fingerprint hashes the token), keeping what the kind, the CA
 * and the expiry need: for `clusters list`, which shows no more.
 */
export async function describeCredentials(
  cluster: ClusterEntry,
  user: UserEntry,
  options: { tokens?: boolean } = {},
): Promise<CredentialDescription> {
  const out: CredentialDescription = { auth: authKind(user), ca: caKind(cluster), problems: [] };
  const expiries: string[] = [];

  if (user['client-certificate'] || user['client-certificate-data']) {
    try {
      const pem = await clientCertificatePem(user);
      if (pem) {
        out.certificate = describeCertificate(pem);
        expiries.push(out.certificate.notAfter);
      }
    } catch (error) {
      const where = user['client-certificate']
        ? `client-certificate ${user['client-certificate']}`
        : 'client-certificate-data';
      out.problems.push(
        `${where}: ${error instanceof Error && /certificate|PEM|asn1|decod/i.test(error.message) ? 'not a valid PEM certificate' : fileProblem(error)}`,
      );
    }
  }
  registerUserSecrets(user);

  if (user.token || user.tokenFile) {
    try {
      const token = await bearerToken(user);
      if (token && options.tokens === false) {
        const expires = tokenExpires(token);
        if (expires) expiries.push(expires);
      } else if (token) {
        out.token = describeToken(token);
        if (out.token.expires) expiries.push(out.token.expires);
      }
    } catch (error) {
      out.problems.push(`tokenFile ${user.tokenFile}: ${fileProblem(error)}`);
    }
  }

  if (user.exec) {
    out.exec = {
      command: user.exec.command ?? '',
      apiVersion: user.exec.apiVersion,
      args: user.exec.args?.length ?? 0,
      provideClusterInfo: user.exec.provideClusterInfo === true,
      interactiveMode: user.exec.interactiveMode,
    };
    if (!user.exec.command) out.problems.push('exec: no command');
  }
  if (user['auth-provider']) {
    out.authProvider = user['auth-provider'].name;
  }
  if (user.username) out.username = user.username;

  if (cluster['certificate-authority'] && !cluster['insecure-skip-tls-verify']) {
    try {
      await readNamedFile(cluster['certificate-authority']);
    } catch (error) {
      out.problems.push(`certificate-authority ${cluster['certificate-authority']}: ${fileProblem(error)}`);
    }
  }
  out.expires = expiries.sort()[0];
  return out;
}
