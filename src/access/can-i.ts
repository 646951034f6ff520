import { UsageError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import {
  type AccessDecision,
  type NonResourceAttributes,
  type ResourceAttributes,
  accessReview,
} from './access-review.js';
import { discoverResources, matchTyped } from './discovery.js';

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

/**
 * Asks one cluster. `namespace` is "" for all namespaces. The resource is resolved through the cluster's discovery, so
 * `deploy` means deployments.apps, and a cluster-scoped resource is asked about cluster-wide (a RoleBinding cannot grant
 * it, so kubectl's habit of sending the namespace anyway can answer yes where the API server would say no).
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
  const warnings: string[] = [];
  const attrs: ResourceAttributes = { namespace, verb: q.verb, group: q.group ?? '', resource: q.resource! };
  if (q.resource === '*') {
    // "*" on its own means every group too; kubectl sends the core group, which would ask a narrower question.
    attrs.group = q.group ?? '*';
  } else {
    const found = matchTyped(await discoverResources(client), q.resource!, q.group);
    if (found) {
      attrs.group = found.group;
      attrs.resource = found.resource;
      // The API server files a request for one namespace object under that namespace (GET /api/v1/namespaces/x has
      // namespace x), so a RoleBinding there can allow it; kubectl asks the same way.
      if (!found.namespaced)
        attrs.namespace = found.group === '' && found.resource === 'namespaces' && q.name ? q.name : '';
    } else {
      warnings.push(
        `the server has no resource type "${q.resource}"${q.group === undefined ? '' : ` in group "${q.group}"`}`,
      );
    }
  }
  if (q.subresource) attrs.subresource = q.subresource;
  if (q.name) attrs.name = q.name;
  return { ...(await accessReview(client, { resource: attrs })), attributes: { resourceAttributes: attrs }, warnings };
}
