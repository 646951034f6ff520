import type { ClusterSource } from '../providers/types.js';
import type { UserInfo } from './user-info.js';

/**
 * Identities seen through a proxy. kcp's front proxy authenticates the client itself and forwards only some of its
 * groups to the shard: by default it drops system:masters, system:kcp:logical-cluster-admin and the synthetic
 * initializer/terminator groups (kcp pkg/proxy/options/authentication.go, v0.32). Who you are then depends on the URL
 * you came in by, which surprises an admin whose power comes from one of those groups.
 */
export const KCP_FRONT_PROXY_DROPPED_GROUPS = [
  'system:masters',
  'system:kcp:logical-cluster-admin',
  'system:kcp:initializer:*',
  'system:kcp:terminator:*',
];

export type IdentityNoteCode = 'kcp-front-proxy' | 'groups-dropped';

export interface IdentityNote {
  code: IdentityNoteCode;
  message: string;
}

export function droppedByKcpFrontProxy(group: string): boolean {
  return KCP_FRONT_PROXY_DROPPED_GROUPS.some((g) => (g.endsWith('*') ? group.startsWith(g.slice(0, -1)) : group === g));
}

/**
 * What to tell the user about the identity the server answered with:
 * - a kcp workspace reached through the front proxy (or possibly so, when the Shards could not be read): which groups
 *   never reach the shard;
 * - the client certificate names groups (its O fields) the answer lacks: something between client and server dropped
 *   them, and for the kcp front proxy's groups, that proxy.
 */
export function identityNotes(
  source: ClusterSource | undefined,
  user: UserInfo,
  certificateGroups: string[] = [],
): IdentityNote[] {
  const notes: IdentityNote[] = [];
  const kcp = source?.kind === 'kcp-workspace';
  const dropped = KCP_FRONT_PROXY_DROPPED_GROUPS.join(', ');
  const missing = certificateGroups.filter((g) => !user.groups.includes(g));
  // A certificate group the proxy drops by default, missing from a kcp workspace's answer, shows the proxy is there
  // even when the Shards could not be read to tell.
  const proxied =
    kcp && (source.frontProxy === true || (source.frontProxy === undefined && missing.some(droppedByKcpFrontProxy)));
  if (proxied) {
    notes.push({
      code: 'kcp-front-proxy',
      message: `reached through the kcp front proxy, which drops the groups ${dropped} before the shard sees the request: they grant nothing at this URL`,
    });
  } else if (kcp && source.frontProxy === undefined) {
    notes.push({
      code: 'kcp-front-proxy',
      message: `if this URL is a kcp front proxy (the Shards could not be read to tell), it drops the groups ${dropped} before the shard sees the request`,
    });
  }
  if (missing.length > 0) {
    const byProxy = missing.every(droppedByKcpFrontProxy);
    const one = missing.length === 1;
    const them = one ? 'it' : 'them';
    const who =
      proxied && byProxy
        ? `the kcp front proxy dropped ${them}`
        : byProxy
          ? `a kcp front proxy drops exactly ${one ? 'this one' : 'these'}`
          : `a proxy in between dropped ${them}`;
    notes.push({
      code: 'groups-dropped',
      message: `the client certificate names the group${one ? '' : 's'} ${missing.join(', ')}, but the server answered without ${them}: ${who}`,
    });
  }
  return notes;
}
