import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { parseFleetConfig } from '../../src/config/fleet-config.js';
import {
  comparePaths,
  splitWorkspaceServer,
  underUrl,
  viaFrontProxy,
  workspaceNotReady,
} from '../../src/providers/kcp.js';
import { droppedByKcpFrontProxy, identityNotes } from '../../src/access/front-proxy.js';
import type { ClusterSource } from '../../src/providers/types.js';

// The kcp provider's pure parts; listing, whoami and the front proxy run against a real kcp in test/e2e/kcp.test.ts.

const parse = (text: string) => parseFleetConfig(text, '/etc/fleet/fleet.yaml', { HOME: '/home/u' }, '/work');

describe('kcp provider configuration', () => {
  it('reads every setting', () => {
    const c = parse(`kind: FleetConfig
providers:
- type: kcp
  hub: {kubeconfig: kcp.kubeconfig, context: admin}
  root: root:org
  depth: 2
  server: context
  frontProxy: true
`);
    assert.deepEqual(c.providers[0], {
      type: 'kcp',
      name: 'kcp',
      origin: '/etc/fleet/fleet.yaml: providers[0]',
      hub: { kubeconfig: ['/etc/fleet/kcp.kubeconfig'], context: 'admin' },
      root: 'root:org',
      depth: 2,
      server: 'context',
      frontProxy: true,
    });
  });

  it('rejects a root that is not a workspace path, a negative or fractional depth, an unknown server source', () => {
    const bad: Array<[string, RegExp]> = [
      ['root: /clusters/root', /providers\[0\]\.root: "\/clusters\/root" is not a workspace path/],
      ['root: "root::org"', /is not a workspace path/],
      ['depth: -1', /providers\[0\]\.depth: must be a whole number/],
      ['depth: 1.5', /providers\[0\]\.depth: must be a whole number/],
      ['server: shard', /providers\[0\]\.server:/],
      ['frontproxy: true', /unknown field \(did you mean "frontProxy"\?\)/],
    ];
    for (const [line, message] of bad) {
      assert.throws(
        () => parse(`providers:\n- type: kcp\n  ${line}\n`),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        line,
      );
    }
  });
});

describe('kcp workspace URLs', () => {
  it('splits a workspace server into the base and the path', () => {
    assert.deepEqual(splitWorkspaceServer('https://kcp.example:6443/clusters/root:org'), {
      base: 'https://kcp.example:6443',
      path: 'root:org',
    });
    assert.deepEqual(splitWorkspaceServer('https://kcp.example/clusters/root/'), {
      base: 'https://kcp.example',
      path: 'root',
    });
    // A front proxy mapped under a prefix keeps it.
    assert.deepEqual(splitWorkspaceServer('https://proxy.example/kcp/clusters/root:a'), {
      base: 'https://proxy.example/kcp',
      path: 'root:a',
    });
    assert.deepEqual(splitWorkspaceServer('https://kcp.example:6443/'), { base: 'https://kcp.example:6443' });
    assert.deepEqual(splitWorkspaceServer('https://kcp.example:6443'), { base: 'https://kcp.example:6443' });
    assert.deepEqual(
      splitWorkspaceServer('kcp.example:6443/clusters/root'),
      { base: 'kcp.example:6443/clusters/root' },
      'not a URL: for the client to report',
    );
    assert.deepEqual(splitWorkspaceServer(''), { base: '' });
  });

  it('orders a tree with each workspace right before its children', () => {
    const paths = ['root:org-x', 'root:org:b', 'root', 'root:org', 'root:org:a:deep', 'root:org:a'];
    assert.deepEqual(paths.sort(comparePaths), [
      'root',
      'root:org',
      'root:org:a',
      'root:org:a:deep',
      'root:org:b',
      'root:org-x',
    ]);
  });

  it('tells front-proxy URLs from shard URLs by the Shards', () => {
    const shards = [
      {
        metadata: { name: 'root' },
        spec: { baseURL: 'https://10.0.0.1:6443', externalURL: 'https://kcp.example:443' },
      },
      { metadata: { name: 'alone' }, spec: { baseURL: 'https://10.0.0.2:6443', externalURL: 'https://10.0.0.2:6443' } },
    ];
    assert.equal(viaFrontProxy('https://kcp.example/clusters/root:org', shards), true);
    assert.equal(viaFrontProxy('https://10.0.0.1:6443/clusters/root:org', shards), false);
    assert.equal(viaFrontProxy('https://10.0.0.2:6443/clusters/root:b', shards), false);
    assert.equal(viaFrontProxy('https://elsewhere:6443/clusters/root', shards), undefined);
    assert.equal(viaFrontProxy('https://kcp.example/clusters/root', undefined), undefined);
    assert.equal(underUrl('https://a:1/x/clusters/r', 'https://a:1/x'), true);
    assert.equal(underUrl('https://a:1/xy/clusters/r', 'https://a:1/x'), false);
    assert.equal(underUrl('https://a:2/x', 'https://a:1/x'), false);
  });

  it('says why a workspace is not ready', () => {
    assert.equal(workspaceNotReady({ metadata: { name: 'a' }, status: { phase: 'Ready' } }), undefined);
    assert.equal(
      workspaceNotReady({
        metadata: { name: 'a' },
        status: { phase: 'Initializing', initializers: ['root:with-init'] },
      }),
      'workspace phase is Initializing (initializers pending: root:with-init)',
    );
    assert.equal(
      workspaceNotReady({
        metadata: { name: 'a' },
        status: {
          phase: 'Scheduling',
          conditions: [{ type: 'WorkspaceScheduled', status: 'False', message: 'no shard' }],
        },
      }),
      'workspace phase is Scheduling (WorkspaceScheduled: no shard)',
    );
    assert.equal(workspaceNotReady({ metadata: { name: 'a' } }), 'workspace phase is not set');
  });
});

describe('identity notes for the kcp front proxy', () => {
  const user = (groups: string[]) => ({ username: 'u', uid: '', groups, extra: {} });
  const ws = (frontProxy?: boolean): ClusterSource => ({
    kind: 'kcp-workspace',
    workspace: 'root:org',
    ...(frontProxy === undefined ? {} : { frontProxy }),
  });

  it('knows the groups the proxy drops by default, prefixes included', () => {
    for (const g of [
      'system:masters',
      'system:kcp:logical-cluster-admin',
      'system:kcp:initializer:abc',
      'system:kcp:terminator:x',
    ])
      assert.ok(droppedByKcpFrontProxy(g), g);
    for (const g of ['system:kcp:admin', 'system:authenticated', 'system:master'])
      assert.ok(!droppedByKcpFrontProxy(g), g);
  });

  it('notes the dropped groups through the proxy, hedges when unknown, says nothing on the shard', () => {
    assert.deepEqual(
      identityNotes(ws(true), user(['system:authenticated'])).map((n) => n.code),
      ['kcp-front-proxy'],
    );
    assert.match(
      identityNotes(ws(true), user([]))[0].message,
      /drops the groups system:masters, system:kcp:logical-cluster-admin/,
    );
    assert.match(identityNotes(ws(undefined), user([]))[0].message, /^if this URL is a kcp front proxy/);
    assert.deepEqual(identityNotes(ws(false), user(['system:masters'])), []);
    assert.deepEqual(identityNotes({ kind: 'kubeconfig-file' }, user(['system:masters']), ['system:masters']), []);
  });

  it('notes certificate groups the server answered without, and who dropped them', () => {
    const through = identityNotes(ws(true), user(['system:authenticated']), ['system:masters']);
    assert.deepEqual(
      through.map((n) => n.code),
      ['kcp-front-proxy', 'groups-dropped'],
    );
    assert.match(
      through[1].message,
      /names the group system:masters, but the server answered without it: the kcp front proxy dropped it$/,
    );
    const plain = identityNotes({ kind: 'kubeconfig-file' }, user(['system:authenticated']), ['team-a']);
    assert.match(
      plain[0].message,
      /the group team-a, but the server answered without it: a proxy in between dropped it$/,
    );
    const two = identityNotes({ kind: 'kubeconfig-file' }, user(['system:authenticated']), ['team-a', 'team-b']);
    assert.match(
      two[0].message,
      /the groups team-a, team-b, but the server answered without them: a proxy in between dropped them$/,
    );
    const unknownProxy = identityNotes({ kind: 'kubeconfig-file' }, user([]), ['system:masters']);
    assert.match(unknownProxy[0].message, /a kcp front proxy drops exactly this one$/);
    // A kcp workspace whose Shards could not be read: the dropped group itself shows the proxy is there.
    const inferred = identityNotes(ws(undefined), user(['system:authenticated']), [
      'system:masters',
      'system:authenticated',
    ]);
    assert.deepEqual(
      inferred.map((n) => n.code),
      ['kcp-front-proxy', 'groups-dropped'],
    );
    assert.match(inferred[0].message, /^reached through the kcp front proxy/);
    assert.match(inferred[1].message, /the kcp front proxy dropped it$/);
  });
});
