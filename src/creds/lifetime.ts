import { formatLifetime } from '../base/duration.js';
import { MIN_TOKEN_SECONDS } from '../base/limits.js';
import { describeCertificate, jwtClaims } from '../kubeconfig/credentials.js';
import type { UserEntry } from '../kubeconfig/types.js';

/**
 * The lifetime of a credential: what was asked, what the server issued, and what a rotation asks for again.
 *
 * The server may issue less than asked: a TokenRequest is cut to kube-apiserver's --service-account-max-token-expiration,
 * a CSR to the signer's maximum (kube-controller-manager's --cluster-signing-duration, 1 year by default). Rotation asks
 * for what generate was asked for (recorded in the fleet.dev/credential-lifetime annotation, or the file's extension),
 * not for what was issued, so a raised server maximum is picked up and nothing shrinks from one rotation to the next.
 */
export interface Lifetime {
  requestedSeconds: number;
  /** What the credential itself says (JWT exp - iat; the certificate's validity without the signer's backdating). */
  issuedSeconds?: number;
  /** The server issued noticeably less than asked (more than a minute). */
  shortened: boolean;
}

/** How a client certificate's validity is written by kube-controller-manager's signer (pkg/controller/certificates/signer). */
const SIGNER_BACKDATE_SECONDS = 300;
const SIGNER_SHORT_SECONDS = 8 * 3600;

/** A recorded lifetime (annotation or file fact): whole seconds, at least the API minimum; anything else is ignored. */
export function recordedLifetime(text: string | undefined): number | undefined {
  if (!text || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n >= MIN_TOKEN_SECONDS ? n : undefined;
}

/** A bound token's own lifetime (exp - iat, both set by the server as it issued it); at least the API minimum. */
export function tokenLifetimeSeconds(token: string | undefined): number | undefined {
  const c = jwtClaims(token);
  const iat = c?.iat;
  const exp = c?.exp;
  return typeof iat === 'number' && typeof exp === 'number' && iat > 0 && exp > iat
    ? Math.max(MIN_TOKEN_SECONDS, exp - iat)
    : undefined;
}

/**
 * The lifetime a certificate was issued with, from NotBefore and NotAfter. The Kubernetes signer backdates NotBefore by
 * 5 minutes; for a lifetime of 8h or more it also ends NotAfter 5 minutes early, so NotAfter - NotBefore is the lifetime
 * itself; below 8h it is the lifetime plus 5 minutes. Subtracting 5 minutes always (as fleet once did) shortened every
 * rotated certificate by 5 minutes. Rounded to whole minutes, so another signer's few seconds of skew do not drift either:
 * asking again for this value gives a certificate that reads back as the same value.
 */
export function certLifetimeSeconds(user: UserEntry): number | undefined {
  const data = user['client-certificate-data'];
  if (!data) return undefined;
  const c = describeCertificate(Buffer.from(data, 'base64').toString('utf8'));
  if (!c.notBefore || !c.notAfter) return undefined;
  return certSpanToLifetime((Date.parse(c.notAfter) - Date.parse(c.notBefore)) / 1000);
}

/**
 * NotAfter - NotBefore (seconds) to the lifetime asked for (see certLifetimeSeconds). A span from 8h to 8h5m could be
 * either kind (7h55m-8h asked, or 8h-8h5m); it is read as the long kind, and asking for that again gives the same span.
 */
export function certSpanToLifetime(spanSeconds: number): number {
  const lifetime = spanSeconds < SIGNER_SHORT_SECONDS ? spanSeconds - SIGNER_BACKDATE_SECONDS : spanSeconds;
  return Math.max(MIN_TOKEN_SECONDS, Math.round(lifetime / 60) * 60);
}

/** The lifetime the credential in a kubeconfig user was issued with (legacy tokens and unknown credentials: undefined). */
export function issuedLifetimeSeconds(user: UserEntry): number | undefined {
  if (user['client-certificate-data']) return certLifetimeSeconds(user);
  return tokenLifetimeSeconds(user.token);
}

/**
 * What a rotation asks for: --duration if given; else the recorded request; else what the old credential was issued
 * with (a Secret or file written before the lifetime was recorded); else 24h.
 */
export function lifetimeToAsk(flag: number | undefined, recorded: string | undefined, old: UserEntry): number {
  return flag ?? recordedLifetime(recorded) ?? issuedLifetimeSeconds(old) ?? 24 * 3600;
}

/** Asked vs issued; a minute of slack for signers that round. */
export function lifetimeOf(requestedSeconds: number, issued: UserEntry): Lifetime {
  const issuedSeconds = issuedLifetimeSeconds(issued);
  return {
    requestedSeconds,
    issuedSeconds,
    shortened: issuedSeconds !== undefined && issuedSeconds < requestedSeconds - 60,
  };
}

/** The warning line for a shortened lifetime, naming the server setting that usually caused it. */
export function shortenedWarning(l: Lifetime, method: string): string | undefined {
  if (!l.shortened || l.issuedSeconds === undefined) return undefined;
  const why =
    method === 'client-cert'
      ? "the signer's maximum, e.g. kube-controller-manager --cluster-signing-duration"
      : 'kube-apiserver --service-account-max-token-expiration';
  return `the server issued a lifetime of ${formatLifetime(l.issuedSeconds)}, not the ${formatLifetime(l.requestedSeconds)} asked for (${why}); rotations ask for ${formatLifetime(l.requestedSeconds)} again`;
}

/** "30d", or "2h (asked 30d)" when the server issued less. */
export function describeLifetime(l: Lifetime | undefined): string {
  if (!l) return '';
  if (l.issuedSeconds === undefined) return `${formatLifetime(l.requestedSeconds)} (asked)`;
  return l.shortened
    ? `${formatLifetime(l.issuedSeconds)} (asked ${formatLifetime(l.requestedSeconds)})`
    : formatLifetime(l.issuedSeconds);
}
