// NAMESPACE/NAME is parsed in one place (src/base/names.ts): flags (creds generate --secret, wi --service-account,
// --profile) share one error wording; names fleet reads back (rotation annotations) and hub Secret arguments (creds
// rotate/revoke) share one rule: exactly two non-empty parts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { UsageError } from '../../src/base/errors.js';
import { namespacedName, parseNamespacedName } from '../../src/base/names.js';

describe('NAMESPACE/NAME', () => {
  it('splits exactly two non-empty parts', () => {
    assert.deepEqual(namespacedName('fleet-system/hub-creds'), { namespace: 'fleet-system', name: 'hub-creds' });
    for (const bad of [undefined, '', 'a', 'a/', '/b', 'a/b/c', '/'])
      assert.equal(namespacedName(bad), undefined, String(bad));
  });

  it('a flag value that is not one is a usage error naming the flag and the value', () => {
    assert.deepEqual(parseNamespacedName('ns/sa', '--service-account'), { namespace: 'ns', name: 'sa' });
    assert.throws(
      () => parseNamespacedName('ns/sa/x', '--secret'),
      (e: unknown) => e instanceof UsageError && e.message === '--secret: expected NAMESPACE/NAME, got "ns/sa/x"',
    );
    assert.throws(
      () => parseNamespacedName('sa', '--profile'),
      (e: unknown) => e instanceof UsageError && e.message === '--profile: expected NAMESPACE/NAME, got "sa"',
    );
  });
});
