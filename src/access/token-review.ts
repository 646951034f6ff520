import type { KubeClient } from '../kube/client.js';
import { TOKEN_REVIEW } from '../kube/resources.js';
import { createReview, isRecord, isStringList, wrongShape } from './review.js';

/** What the cluster's authenticators say of a bearer token: who it is, or that it is not accepted (and why). */
export type TokenReviewAnswer =
  { authenticated: true; username: string; groups: string[] } | { authenticated: false; error?: string };

/**
 * Who a token belongs to, asked of the cluster `client` reaches with the caller's own credential (TokenReview,
 * authentication.k8s.io/v1): the token is judged by that cluster, whatever server the object holding it names.
 */
export async function tokenReview(client: KubeClient, token: string): Promise<TokenReviewAnswer> {
  const review = await createReview<unknown>(client, { resource: TOKEN_REVIEW, spec: { token } });
  const status = review.status ?? {};
  if (!isRecord(status)) throw wrongShape('TokenReview', 'status is not an object');
  if (status.authenticated !== true)
    return { authenticated: false, ...(typeof status.error === 'string' ? { error: status.error } : {}) };
  const user = status.user;
  if (!isRecord(user) || typeof user.username !== 'string')
    throw wrongShape('TokenReview', 'status.user.username is not a string');
  return {
    authenticated: true,
    username: user.username,
    groups: isStringList(user.groups) ? user.groups : [],
  };
}
