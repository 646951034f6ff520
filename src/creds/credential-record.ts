import { describeCertificate } from '../kubeconfig/credentials.js';
import type { UserEntry } from '../kubeconfig/types.js';
import type { Method } from './methods.js';
import type { Identity } from './rbac.js';

/**
 * The identity a fleet credential's record names, read the same way by rotation (rotation-store.ts) and revocation
 * (revoke.ts): a ServiceAccount by its username, a certificate's user by the name with the old certificate's groups.
 */
export function parseIdentity(text: string | undefined): (Identity & { kind: 'ServiceAccount' }) | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(text ?? '');
  return m ? { kind: 'ServiceAccount', namespace: m[1], name: m[2] } : undefined;
}

export function identityOf(method: Method, identity: string | undefined, user: UserEntry): Identity | undefined {
  if (method !== 'client-cert') return parseIdentity(identity);
  const pem = user['client-certificate-data']
    ? Buffer.from(user['client-certificate-data'], 'base64').toString('utf8')
    : undefined;
  if (!pem || !identity) return undefined;
  // The groups are the old certificate's organizations: the new one says the same.
  return { kind: 'User', name: identity, groups: describeCertificate(pem).organizations };
}

/** A client certificate's NotAfter: until when a certificate, which cannot be revoked, stays valid. */
export function certNotAfter(user: UserEntry): string | undefined {
  const data = user['client-certificate-data'];
  return data ? describeCertificate(Buffer.from(data, 'base64').toString('utf8')).notAfter : undefined;
}
