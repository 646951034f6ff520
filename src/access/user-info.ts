/**
 * Who the server says the credential is (a SelfSubjectReview's status.userInfo). Its own file because both whoami.ts
 * (which asks) and front-proxy.ts (which explains what a proxy dropped) need it, and they must not import each other.
 */
export interface UserInfo {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}
