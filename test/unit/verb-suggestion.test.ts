// An unknown top-level word that is a verb of fleet (`fleet whoami`, `fleet verify`) names the commands that have it,
// exit 2 (issue 21, item 5), through the bundle as users run it (bin/run.js; its command table is explicit).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { verbMatches } from '../../src/hooks/command-not-found.js';
import { runFleet } from '../support/cli.js';

describe('a verb without its topic', () => {
  for (const [typed, suggestion] of [
    [['whoami'], '"fleet auth whoami"'],
    [['verify', '--all'], '"fleet clusters verify"'],
    [['doctor'], '"fleet wi doctor"'],
    [['list'], '"fleet clusters list" or "fleet creds list"'],
  ] as const) {
    it(`fleet ${typed.join(' ')}: suggests ${suggestion}, exit 2`, async () => {
      const res = await runFleet([...typed]);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(res.stderr, `error: "${typed[0]}" is not a fleet command; did you mean ${suggestion}?\n`);
      assert.equal(res.stdout, '');
    });
  }

  it('only a single word matches a verb; a misspelt topic keeps the closest-spelling rule', async () => {
    assert.deepEqual(verbMatches('whoami', ['auth:whoami', 'auth:can-i']), ['auth:whoami']);
    assert.deepEqual(verbMatches('auth:whoami', ['auth:whoami']), []);
    assert.deepEqual(verbMatches('auth', ['auth:whoami']), []);
    const res = await runFleet(['clustrs', 'list']);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^error: "clustrs list" is not a fleet command; did you mean "clusters list"\?\n$/);
  });
});
