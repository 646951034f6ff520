import type { KubeClient } from '../kube/client.js';
import { SELF_SUBJECT_REVIEW } from '../kube/resources.js';
import { describeCertificate } from '../kubeconfig/credentials.js';
import type { ClusterSource } from '../providers/types.js';
import { type IdentityNote, identityNotes } from './front-proxy.js';
import { accessReview } from './access-review.js';
import { createReview, isRecord, isStringList, optionalField, wrongShape } from './review.js';
import type { UserInfo } from './user-info.js';

/** Who the server says the credential is (UserInfo), with warnings when that identity holds unrestricted power. */
export type { UserInfo } from './user-info.js';

export type WhoAmIWarningCode = 'system-masters' | 'cluster-admin';

export interface WhoAmIWarning {
  code: WhoAmIWarningCode;
  message: string;
}

export interface WhoAmI {
  user: UserInfo;
  warnings: WhoAmIWarning[];
  /** Why the answer may not be the whole identity (a kcp front proxy's dropped groups). */
  notes: IdentityNote[];
}

/** kubectl's order: GA first, then the older versions still served by 1.26–1.27 clusters. */
export const SELF_SUBJECT_REVIEW_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];

export const MASTERS_GROUP = 'system:masters';

/** Who the API server says the credential is (SelfSubjectReview, newest version the server serves). */
export async function selfSubjectReview(client: KubeClient): Promise<UserInfo> {
  const review = await createReview<unknown>(client, {
    resource: SELF_SUBJECT_REVIEW,
    versions: SELF_SUBJECT_REVIEW_VERSIONS,
  });
  return toUserInfo(review.status);
}

const SSR = 'SelfSubjectReview';

/**
 * The UserInfo of a SelfSubjectReview's status, checked field by field: an answer of the wrong shape fails the cluster
 * with one line saying what is wrong, never a success with an empty user. uid, groups and extra are omitempty;
 * username is what the review is for (the API server always sets it, system:anonymous included).
 */
export function toUserInfo(status: unknown): UserInfo {
  if (!isRecord(status)) throw wrongShape(SSR, 'status is not an object');
  const info = status.userInfo;
  if (!isRecord(info)) throw wrongShape(SSR, `status.userInfo is ${info === undefined ? 'missing' : 'not an object'}`);
  const at = 'status.userInfo';
  if (typeof info.username !== 'string') throw wrongShape(SSR, `${at}.username is not a string`);
  optionalField(SSR, info, at, 'uid', (v) => typeof v === 'string', 'a string');
  optionalField(SSR, info, at, 'groups', isStringList, 'a list of strings');
  optionalField(
    SSR,
    info,
    at,
    'extra',
    (v) => isRecord(v) && Object.values(v).every(isStringList),
    'a map of string lists',
  );
  return {
    username: info.username,
    uid: (info.uid as string | undefined) ?? '',
    groups: (info.groups as string[] | undefined) ?? [],
    extra: (info.extra as Record<string, string[]> | undefined) ?? {},
  };
}

/** `source`: where the provider found the cluster (a kcp workspace gets the front proxy's notes). */
export async function whoami(client: KubeClient, source?: ClusterSource): Promise<WhoAmI> {
  // The cluster-admin review waits for the SelfSubjectReview on purpose: asked at once they took a second connection
  // (a TLS handshake) per cluster, and whoami --all over 100 clusters was slower, 562 ms against 476 ms (bench/run.ts).
  const user = await selfSubjectReview(client);
  const warnings = await powerWarnings(client, user);
  // Acting as someone else (--as), the answer holds that identity's groups, not the certificate's: nothing to compare.
  return { user, warnings, notes: identityNotes(source, user, client.impersonation ? [] : certificateGroups(client)) };
}

/** The groups the client certificate the server just saw asserts (its O fields); none without a certificate. */
function certificateGroups(client: KubeClient): string[] {
  const pem = client.presentedCertificate;
  try {
    return pem ? describeCertificate(pem).organizations : [];
  } catch {
    // The server accepted it; a certificate Node cannot parse leaves nothing to compare.
    return [];
  }
}

/**
 * system:masters is checked from the groups. "Amounts to cluster-admin" is asked of the authorizer itself: may this
 * identity do every verb on every resource of every group, cluster-wide? That is authoritative (webhook authorizers
 * included) and, unlike a rules review, which is per namespace, does not mistake a namespace admin for a cluster admin.
 * If the question cannot be asked, no warning is invented.
 */
async function powerWarnings(client: KubeClient, user: UserInfo): Promise<WhoAmIWarning[]> {
  const warnings: WhoAmIWarning[] = [];
  if (user.groups.includes(MASTERS_GROUP)) {
    warnings.push({
      code: 'system-masters',
      message: `member of ${MASTERS_GROUP}: every request is allowed and RBAC cannot restrict it`,
    });
  }
  const all = await accessReview(client, { resource: { verb: '*', group: '*', resource: '*', namespace: '' } }).catch(
    () => undefined,
  );
  if (all?.allowed) {
    warnings.push({
      code: 'cluster-admin',
      message: 'may do anything: every verb on every resource in every API group, cluster-wide',
    });
  }
  return warnings;
}
