import { ConfigError, FleetError } from '../base/errors.js';
import type { Resource } from './resources.js';

/**
 * The one place REST paths are built. Every name, namespace and kcp workspace is encoded here, so a value with `/`,
 * `?`, `#`, `%` or a space (from a flag, a config file or a hub's answer) stays one path segment and never changes which
 * object a request is about. Services name a resource (kube/resources.ts) and these fields; they never write a path.
 */
export interface Where {
  /** For a namespaced resource: the namespace; undefined or '' lists across all namespaces. */
  namespace?: string;
  name?: string;
  /** status, approval, token, ... (only with a name). */
  subresource?: string;
  /** kcp: the logical cluster (workspace path such as `root:org:team`) the request is for, as `/clusters/<path>`. */
  workspace?: string;
}

/** Query parameters, in the order given; undefined and false are left out, true is sent as `true`. */
export type Query = Record<string, string | number | boolean | undefined>;

/**
 * One path segment. `.` and `..` would be read as a step in the path by whatever normalises it, so client-go refuses
 * them as names, and so does fleet (with the resource and the field, since the value may be a flag's or a file's).
 */
function segment(value: string, what: string): string {
  if (value === '') throw new FleetError('internal', `${what} is empty`);
  if (value === '.' || value === '..')
    throw new ConfigError(`${what} "${value}" is not a valid name (it may not be "." or "..")`);
  return encodeURIComponent(value);
}

const SUBRESOURCE = /^[a-z]+$/;

/** `/api/v1` or `/apis/group/version`, under `/clusters/<workspace>` for kcp. */
function prefix(r: Resource, workspace: string | undefined): string {
  const base = r.group
    ? `/apis/${segment(r.group, 'API group')}/${segment(r.version, 'API version')}`
    : `/api/${segment(r.version, 'API version')}`;
  return workspace === undefined ? base : `${workspacePath(workspace)}${base}`;
}

/** `/clusters/<path>`: kcp's workspace paths keep their colons (a colon is a valid path character; kcp reads it as is). */
export function workspacePath(workspace: string): string {
  return `/clusters/${segment(workspace, 'kcp workspace').replace(/%3A/g, ':')}`;
}

/** The path of a resource's collection (no name) or of one object and perhaps its subresource, with a query. */
export function resourcePath(r: Resource, where: Where = {}, query?: Query): string {
  const { name, subresource } = where;
  let path = prefix(r, where.workspace);
  if (r.namespaced) {
    // A named object of a namespaced resource is always in a namespace: `default` when none is given, as kubectl does.
    const ns = where.namespace || (name === undefined ? undefined : 'default');
    if (ns !== undefined) path += `/namespaces/${segment(ns, 'namespace')}`;
  }
  path += `/${r.plural}`;
  if (name !== undefined) path += `/${segment(name, `${r.kind} name`)}`;
  if (subresource !== undefined) {
    if (name === undefined || !SUBRESOURCE.test(subresource))
      throw new FleetError(
        'internal',
        `subresource "${subresource}" of ${r.plural} needs a name and lower-case letters`,
      );
    path += `/${subresource}`;
  }
  return path + queryString(query);
}

/** `?a=1&b=2` (form-encoded, as URLSearchParams writes it), or '' when nothing is set. */
export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== false) params.append(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}

// Discovery and health: where the API server says what it serves and how it is. Named here so that no other file
// writes `/api` or `/apis`.

/** The server's version (`/version`). */
export const VERSION_PATH = '/version';
/** The server's readiness (`/readyz`; `?verbose` lists each check). */
export const READYZ_PATH = '/readyz';
/** The service account issuer's OpenID discovery document, as the API server publishes it. */
export const OIDC_CONFIGURATION_PATH = '/.well-known/openid-configuration';
/** The keys the API server verifies service account tokens with (`--service-account-key-file`'s public keys), as a JWKS. */
export const SERVICE_ACCOUNT_JWKS_PATH = '/openid/v1/jwks';
/** The API server's Prometheus metrics. */
export const METRICS_PATH = '/metrics';

/** The core group's versions (`/api`). */
export const CORE_API_PATH = '/api';
/** The API groups (`/apis`). */
export const API_GROUPS_PATH = '/apis';

/** One group's versions: `/apis/<group>`. */
export const groupPath = (group: string): string => `/apis/${segment(group, 'API group')}`;

/** The resources of one group version: `/api/v1` for the core group's `v1`, `/apis/<group>/<version>` otherwise. */
export function groupVersionPath(groupVersion: string): string {
  const slash = groupVersion.indexOf('/');
  if (slash < 0) return `/api/${segment(groupVersion, 'API version')}`;
  return `/apis/${segment(groupVersion.slice(0, slash), 'API group')}/${segment(groupVersion.slice(slash + 1), 'API version')}`;
}
