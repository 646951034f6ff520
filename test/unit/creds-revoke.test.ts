// fleet creds revoke without a cluster: the token claims that name an anchor, and the checks made before anything is
// touched (usage errors, a file fleet did not write, a file that does not exist), through the CLI as a user runs it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { tokenSecret } from '../../src/creds/revoke.js';
import { runFleet } from '../support/cli.js';

const jwt = (claims: object) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('creds revoke: the Secret a token names', () => {
  it('a bound token names its bound Secret; a legacy token its own Secret; anything else nothing', () => {
    assert.equal(
      tokenSecret(
        jwt({
          'kubernetes.io': {
            namespace: 'ns',
            secret: { name: 'sa-fleet-anchor-1', uid: 'u' },
            serviceaccount: { name: 'sa' },
          },
        }),
      ),
      'ns/sa-fleet-anchor-1',
    );
    assert.equal(
      tokenSecret(
        jwt({
          iss: 'kubernetes/serviceaccount',
          'kubernetes.io/serviceaccount/namespace': 'ns',
          'kubernetes.io/serviceaccount/secret.name': 'sa-fleet-token-2',
        }),
      ),
      'ns/sa-fleet-token-2',
    );
    // Bound to a Pod (a token fleet did not mint), an opaque static token, garbage: no anchor from the token.
    assert.equal(tokenSecret(jwt({ 'kubernetes.io': { namespace: 'ns', pod: { name: 'p' } } })), undefined);
    assert.equal(tokenSecret('static-token'), undefined);
    assert.equal(tokenSecret('a.!!!.c'), undefined);
    assert.equal(tokenSecret(undefined), undefined);
  });
});

describe('creds revoke: checked before any cluster is touched', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-revoke-'));

  it('names nothing, or a malformed name: one-line usage error, exit 2', async () => {
    for (const [args, pattern] of [
      [[], /^error: name at least one hub Secret NAMESPACE\/NAME or --file PATH to revoke\n$/],
      [['just-a-name'], /^error: "just-a-name": expected NAMESPACE\/NAME of a hub Secret\n$/],
      [['a/b/c'], /^error: "a\/b\/c": expected NAMESPACE\/NAME of a hub Secret\n$/],
    ] as const) {
      const res = await runFleet(['creds', 'revoke', ...args]);
      assert.equal(res.code, 2, res.stderr);
      assert.match(res.stderr, pattern);
      assert.equal(res.stdout, '');
    }
  });

  it('a kubeconfig file fleet did not write is refused (exit 2) and left as it was', async () => {
    const path = join(dir, 'mine.kubeconfig');
    const text =
      'apiVersion: v1\nkind: Config\nclusters: []\nusers: [{name: u, user: {token: not-fleets}}]\ncontexts: []\n';
    writeFileSync(path, text, { mode: 0o600 });
    const res = await runFleet(['creds', 'revoke', '--file', path]);
    assert.equal(res.code, 2, res.stderr);
    assert.equal(
      res.stderr,
      `error: --file ${path} was not written by fleet creds generate (no fleet.dev/credential extension): fleet revokes only what it made; nothing was deleted\n`,
    );
    assert.equal(readFileSync(path, 'utf8'), text);
    const json = await runFleet(['creds', 'revoke', '--file', path, '-o', 'json']);
    assert.equal(json.code, 2);
    assert.equal(json.json().error.kind, 'config');
  });

  it('a file that does not exist is not-found: exit 1 naming it, exit 0 with --ignore-not-found', async () => {
    const path = join(dir, 'gone.kubeconfig');
    const res = await runFleet(['creds', 'revoke', '--file', path, '-o', 'json']);
    assert.equal(res.code, 1, res.stderr);
    const report = res.json();
    assert.equal(report.kind, 'CredentialRevocation');
    assert.deepEqual(report.items[0].file, { path });
    assert.equal(report.items[0].status, 'not-found');
    assert.equal(res.stderr, `error: ${path} does not exist: nothing to revoke (already revoked, or never written)\n`);
    const ignored = await runFleet(['creds', 'revoke', '--file', path, '--ignore-not-found']);
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.match(ignored.stdout, /not-found/);
    assert.match(ignored.stderr, /already revoked, or never written\) \(--ignore-not-found\)/);
    const named = await runFleet(['creds', 'revoke', '--file', path, '--ignore-not-found', '-o', 'name']);
    assert.equal(named.code, 0);
    assert.equal(named.stdout, '', 'a file that was not found is not named as revoked');
  });
});
