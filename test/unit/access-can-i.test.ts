import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseAccessQuery, queryWarnings } from '../../src/access/can-i.js';
import { type DiscoveredResource, matchResource, matchTyped } from '../../src/access/discovery.js';
import { UsageError } from '../../src/base/errors.js';

describe('can-i arguments', () => {
  it('reads RESOURCE, RESOURCE.GROUP, RESOURCE/NAME and a separate NAME like kubectl', () => {
    assert.deepEqual(parseAccessQuery({ verb: 'get', resource: 'pods' }), { verb: 'get', resource: 'pods' });
    assert.deepEqual(parseAccessQuery({ verb: 'create', resource: 'Deployments.apps' }), {
      verb: 'create',
      resource: 'deployments',
      group: 'apps',
    });
    assert.deepEqual(parseAccessQuery({ verb: 'get', resource: 'certificatesigningrequests.certificates.k8s.io' }), {
      verb: 'get',
      resource: 'certificatesigningrequests',
      group: 'certificates.k8s.io',
    });
    assert.deepEqual(parseAccessQuery({ verb: 'delete', resource: 'pods/web-0' }), {
      verb: 'delete',
      resource: 'pods',
      name: 'web-0',
    });
    assert.deepEqual(parseAccessQuery({ verb: 'get', resource: 'pods', name: 'web-0', subresource: 'log' }), {
      verb: 'get',
      resource: 'pods',
      subresource: 'log',
      name: 'web-0',
    });
    assert.deepEqual(parseAccessQuery({ verb: '*', resource: '*' }), { verb: '*', resource: '*' });
  });

  it('a leading slash is a non-resource URL, which takes no name or subresource', () => {
    assert.deepEqual(parseAccessQuery({ verb: 'get', resource: '/healthz' }), {
      verb: 'get',
      nonResourceURL: '/healthz',
    });
    assert.throws(
      () => parseAccessQuery({ verb: 'get', resource: '/logs', name: 'x' }),
      (e) => e instanceof UsageError && /NAME cannot be given with a non-resource URL/.test(e.message),
    );
    assert.throws(
      () => parseAccessQuery({ verb: 'get', resource: '/logs', subresource: 'x' }),
      /--subresource cannot be given/,
    );
  });

  it('refuses two names and empty parts', () => {
    assert.throws(
      () => parseAccessQuery({ verb: 'get', resource: 'pods/a', name: 'b' }),
      /either as pods\/a or as NAME, not both/,
    );
    assert.throws(() => parseAccessQuery({ verb: 'get', resource: 'pods/' }), /cannot read "pods\/" as RESOURCE\/NAME/);
    assert.throws(() => parseAccessQuery({ verb: ' ', resource: 'pods' }), /VERB must not be empty/);
  });

  it('warns about verbs no built-in authorizer knows', () => {
    assert.deepEqual(queryWarnings(parseAccessQuery({ verb: 'get', resource: 'pods' })), []);
    assert.match(queryWarnings(parseAccessQuery({ verb: 'reed', resource: 'pods' }))[0], /^"reed" is not a known verb/);
    assert.deepEqual(queryWarnings(parseAccessQuery({ verb: 'post', resource: '/api' })), []);
    assert.match(queryWarnings(parseAccessQuery({ verb: 'list', resource: '/api' }))[0], /not an HTTP verb/);
  });
});

describe('resource names through discovery', () => {
  const r = (
    group: string,
    resource: string,
    singular: string,
    kind: string,
    shortNames: string[],
    namespaced = true,
  ): DiscoveredResource => ({ group, resource, singular, kind, shortNames, namespaced, versions: ['v1'] });
  const RESOURCES = [
    r('', 'pods', 'pod', 'Pod', ['po']),
    r('', 'events', 'event', 'Event', ['ev']),
    r('', 'nodes', 'node', 'Node', ['no'], false),
    r('apps', 'deployments', 'deployment', 'Deployment', ['deploy']),
    r('events.k8s.io', 'events', 'event', 'Event', ['ev']),
    r('example.com', 'widgets', 'widget', 'Widget', ['deploy']),
  ];

  it('plural, singular, short name or kind, any case', () => {
    for (const typed of ['deployments', 'deployment', 'deploy', 'Deployment', 'DEPLOY']) {
      assert.equal(matchResource(RESOURCES, typed)?.group, 'apps', typed);
    }
    assert.equal(matchResource(RESOURCES, 'no')?.namespaced, false);
  });

  it('the core group wins a tie unless a group is typed; a typed group must match exactly', () => {
    assert.equal(matchResource(RESOURCES, 'events')?.group, '');
    assert.equal(matchResource(RESOURCES, 'events', 'events.k8s.io')?.group, 'events.k8s.io');
    assert.equal(matchResource(RESOURCES, 'deploy', 'example.com')?.resource, 'widgets');
    assert.equal(matchResource(RESOURCES, 'deployments', 'events.k8s.io'), undefined);
    assert.equal(matchResource(RESOURCES, 'gadgets'), undefined);
  });

  it('resource.version.group as kubectl reads it, then the whole rest as a group (groups may hold dots)', () => {
    const withVersions = [...RESOURCES, { ...r('v2.example.com', 'gizmos', 'gizmo', 'Gizmo', []), versions: ['v1'] }];
    assert.deepEqual(
      [
        matchTyped(withVersions, 'deployments', 'v1.apps')?.group,
        matchTyped(withVersions, 'deployments', 'v1.apps')?.resource,
      ],
      ['apps', 'deployments'],
    );
    assert.equal(matchTyped(withVersions, 'deployments', 'v2.apps'), undefined, 'a version the group does not serve');
    assert.equal(matchTyped(withVersions, 'events', 'v1.events.k8s.io')?.group, 'events.k8s.io');
    assert.equal(matchTyped(withVersions, 'events', 'events.k8s.io')?.group, 'events.k8s.io');
    assert.equal(matchTyped(withVersions, 'gizmos', 'v2.example.com')?.group, 'v2.example.com');
    assert.equal(matchTyped(withVersions, 'pods', undefined)?.group, '');
  });

  it("an exact plural beats another resource's short name", () => {
    const clash = [r('a.example', 'things', 'thing', 'Thing', ['deployments']), ...RESOURCES];
    assert.equal(matchResource(clash, 'deployments')?.group, 'apps');
  });
});
