import { UsageError } from '../base/errors.js';
import { parseNamespacedName } from '../base/names.js';

/** A hub ServiceAccount, as typed on the command line (`NS/NAME`). */
export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function parseServiceAccount(value: string, flag = '--service-account'): ServiceAccountRef {
  const { namespace, name } = parseNamespacedName(value, flag);
  if (!DNS_LABEL.test(namespace) || namespace.length > 63)
    throw new UsageError(`${flag}: "${namespace}" is not a valid namespace name`);
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253)
    throw new UsageError(`${flag}: "${name}" is not a valid ServiceAccount name`);
  return { namespace, name };
}

/** The `sub` claim (and the username on the hub itself) of a ServiceAccount token. */
export function serviceAccountSubject(sa: ServiceAccountRef): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/** The username a target with `claimMappings.username: {claim: sub, prefix}` gives a hub token of `sa`. */
export function mappedUsername(sa: ServiceAccountRef, prefix: string): string {
  return prefix + serviceAccountSubject(sa);
}
