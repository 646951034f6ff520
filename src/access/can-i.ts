import { UsageError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import {
  type AccessDecision,
  type NonResourceAttributes,
  type ResourceAttributes,
  accessReview,
} from './access-review.js';
import { type DiscoveredResource, discoverResources, resolveTyped } from './discovery.js';

/** One question, as typed: `VERB RESOURCE[.GROUP][/NAME] [NAME] [--subresource S]` or `VERB /non/resource/url`. */
export interface AccessQuery {
  verb: string;
  nonResourceURL?: string;
  /** As typed (lower-cased), without the group. */
  resource?: string;
  /** The group typed after the first dot; undefined when none was typed (then the cluster's discovery decides). */
  group?: string;
  subresource?: string;
  name?: string;
}

/** Verbs the built-in authorizers know; anything else is most likely a typo (kubectl warns too). */
export const KNOWN_VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'use',
  'bind',
  'escalate',
  'impersonate',
  'approve',
  'sign',
  'attest',
  '*',
];
export const HTTP_VERBS = ['get', 'put', 'post', 'head', 'options', 'delete', 'patch', '*'];

export function parseAccessQuery(input: {
  verb: string;
  resource: string;
  name?: string;
  subresource?: string;
}): AccessQuery {
  const verb = input.verb.trim();
  if (verb === '') throw new UsageError('VERB must not be empty');
  const arg = input.resource.trim();
  if (arg === '') throw new UsageError('RESOURCE must not be empty');
  if (arg.startsWith('/')) {
    if (input.name) throw new UsageError(`NAME cannot be given with a non-resource URL (${arg})`);
    if (input.subresource) throw new UsageError(`--subresource cannot be given with a non-resource URL (${arg})`);
    return { verb, nonResourceURL: arg };
  }
  const slash = arg.indexOf('/');
  let typed = arg;
  let name = input.name;
  if (slash !== -1) {
    // kubectl reads RESOURCE/NAME as the object's name.
    if (name) throw new UsageError(`give the name either as ${arg} or as NAME, not both`);
    typed = arg.slice(0, slash);
    name = arg.slice(slash + 1);
    if (name === '' || name.includes('/')) throw new UsageError(`cannot read "${arg}" as RESOURCE/NAME`);
  }
  typed = typed.toLowerCase();
  const dot = typed.indexOf('.');
  const query: AccessQuery = { verb, resource: dot === -1 ? typed : typed.slice(0, dot) };
  if (dot !== -1) query.group = typed.slice(dot + 1);
  if (input.subresource) query.subresource = input.subresource;
  if (name) query.name = name;
  return query;
}

/** Warnings about the question itself, the same on every cluster. */
export function queryWarnings(q: AccessQuery): string[] {
  if (q.nonResourceURL) {
    return HTTP_VERBS.includes(q.verb.toLowerCase())
      ? []
      : [
          `"${q.verb}" is not an HTTP verb; non-resource URLs are checked with get, post, put, patch, delete, head or options`,
        ];
  }
  return KNOWN_VERBS.includes(q.verb)
    ? []
    : [`"${q.verb}" is not a known verb (known: ${KNOWN_VERBS.filter((v) => v !== '*').join(', ')})`];
}

export interface AccessAnswer extends AccessDecision {
  /** What was asked, after the cluster's discovery resolved the resource (the SelfSubjectAccessReview spec). */
  attributes: { resourceAttributes: ResourceAttributes } | { nonResourceAttributes: NonResourceAttributes };
  warnings: string[];
}

/** A resource question as the authorizer gets it on one cluster, and where it applies. */
export interface ResolvedResource {
  attributes: ResourceAttributes;
  /**
   * `namespace`: in the namespace asked about (only RoleBindings there and ClusterRoleBindings count); `cluster`: a
   * cluster-scoped resource, asked with no namespace (ClusterRoleBindings only); `own-namespace`: a Namespace object by
   * name, which the API server files under that namespace.
   */
  scope: 'namespace' | 'cluster' | 'own-namespace';
  warnings: string[];
}

/**
 * Turns a resource question into the attributes the authorizer sees, with the cluster's discovery (`resources`; not
 * read for a bare `*`): `deploy` means deployments.apps, and a cluster-scoped resource (in discovery, or one of the
 * virtual resources impersonation and certificate signers use, which discovery does not list) is asked about with no
 * namespace, because a RoleBinding cannot grant it. `namespace` is "" for all namespaces.
 */
export function resolveResource(resources: DiscoveredResource[], q: AccessQuery, namespace: string): ResolvedResource {
  const warnings: string[] = [];
  const attrs: ResourceAttributes = { namespace, verb: q.verb, group: q.group ?? '', resource: q.resource! };
  let scope: ResolvedResource['scope'] = 'namespace';
  if (q.resource === '*') {
    // "*" on its own means every group too; kubectl sends the core group, which would ask a narrower question.
    attrs.group = q.group ?? '*';
  } else {
    const found = resolveTyped(resources, q.resource!, q.group);
    if (found) {
      attrs.group = found.group;
      attrs.resource = found.resource;
      if (!found.namespaced) {
        // The API server files a request for one namespace object under that namespace (GET /api/v1/namespaces/x has
        // namespace x), so a RoleBinding there can allow it; kubectl asks the same way.
        const own = found.group === '' && found.resource === 'namespaces' && q.name !== undefined && q.name !== '';
        attrs.namespace = own ? q.name! : '';
        scope = own ? 'own-namespace' : 'cluster';
      }
    } else {
      warnings.push(
        `the server has no resource type "${q.resource}"${q.group === undefined ? '' : ` in group "${q.group}"`}`,
      );
    }
  }
  if (q.subresource) attrs.subresource = q.subresource;
  if (q.name) attrs.name = q.name;
  return { attributes: attrs, scope, warnings };
}

/** The cluster's discovery, when the question needs it (a bare `*` does not). */
export async function resourcesFor(client: KubeClient, q: AccessQuery): Promise<DiscoveredResource[]> {
  return q.resource === '*' ? [] : discoverResources(client);
}

/**
 * Asks one cluster. `namespace` is "" for all namespaces. The resource is resolved as `resolveResource` says, so a
 * cluster-scoped resource is asked about cluster-wide (kubectl's habit of sending the namespace anyway can answer yes
 * where the API server would say no).
 */
export async function canI(client: KubeClient, q: AccessQuery, namespace: string): Promise<AccessAnswer> {
  if (q.nonResourceURL) {
    const attrs = { path: q.nonResourceURL, verb: q.verb };
    return {
      ...(await accessReview(client, { nonResource: attrs })),
      attributes: { nonResourceAttributes: attrs },
      warnings: [],
    };
  }
  const { attributes, warnings } = resolveResource(await resourcesFor(client, q), q, namespace);
  return {
    ...(await accessReview(client, { resource: attributes })),
    attributes: { resourceAttributes: attributes },
    warnings,
  };
}
