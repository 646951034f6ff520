// The GitHub Action's `args` input split into arguments (action/args.mjs): white space, quotes, backslashes, and an
// unclosed quote refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

// @ts-expect-error plain JavaScript without declarations: the action has no build step
import { splitArgs } from '../../action/args.mjs';

describe('the action args input', () => {
  it('splits on any white space, including line breaks', () => {
    assert.deepEqual(splitArgs('  --all\t--strict\n-l env=prod  '), ['--all', '--strict', '-l', 'env=prod']);
    assert.deepEqual(splitArgs(''), []);
    assert.deepEqual(splitArgs(' \n '), []);
  });

  it('keeps quoted spaces and the other quote in one argument; an empty quoted argument stays', () => {
    assert.deepEqual(splitArgs(`-l 'tier in (a, b)' --x="it's" ''`), ['-l', 'tier in (a, b)', `--x=it's`, '']);
    assert.deepEqual(splitArgs(`a"b c"d`), ['ab cd']);
  });

  it('takes the character after a backslash as it is, except inside single quotes', () => {
    assert.deepEqual(splitArgs(String.raw`a\ b "c\"d" 'e\f'`), ['a b', 'c"d', String.raw`e\f`]);
  });

  it('refuses an unclosed quote, naming the input', () => {
    assert.throws(() => splitArgs(`-l 'env=prod`), /^Error: input args: a ' quote is not closed: -l 'env=prod$/);
    assert.throws(() => splitArgs(`"x`), /input args: a " quote is not closed/);
  });
});
