// The live line of long work (src/cli/progress.ts) and its one rule (progressShown): drawn only at a terminal with
// human output outside CI, erased when nothing is in progress; what a first Ctrl-C is told (acknowledgement), also
// when nothing is drawn. And the services' reports in order: creds revoke counts n/total over its items.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ProgressBoard, progressShown } from '../../src/cli/progress.js';

const ESC = '\u001B';

function board(shown = true, columns?: number) {
  let out = '';
  let now = 1_000_000;
  const b = new ProgressBoard({
    shown,
    timer: false,
    now: () => now,
    stream: { write: (s: string) => ((out += s), true), columns },
  });
  return { b, out: () => out, advance: (ms: number) => (now += ms), at: () => now };
}

describe('progressShown: the one rule', () => {
  const tty = { isTTY: true };
  it('a terminal with human output outside CI: shown', () => {
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { TERM: 'xterm' } }), true);
  });
  it('not with -o json/yaml (machine output), not off a terminal, not CI=true, not TERM=dumb', () => {
    assert.equal(progressShown({ machineOutput: true, stream: tty, env: {} }), false);
    assert.equal(progressShown({ machineOutput: false, stream: { isTTY: false }, env: {} }), false);
    assert.equal(progressShown({ machineOutput: false, stream: {}, env: {} }), false);
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { CI: 'true' } }), false);
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { CI: '1' } }), false);
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { TERM: 'dumb' } }), false);
    // CI=false or empty is not CI.
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { CI: 'false' } }), true);
    assert.equal(progressShown({ machineOutput: false, stream: tty, env: { CI: '' } }), true);
  });
});

describe('ProgressBoard', () => {
  it('counts n/total in place, with the failed, and erases the line when all are done', () => {
    const { b, out } = board();
    const p = b.port('credentials');
    for (let done = 0; done <= 3; done++) p.count({ done, total: 3, failed: done > 1 ? 1 : 0 });
    assert.equal(
      out(),
      `\r${ESC}[2K[0/3] credentials\r${ESC}[2K[1/3] credentials\r${ESC}[2K[2/3] credentials, 1 failed\r${ESC}[2K`,
    );
  });

  it('one item is not counted; its step and then its wait are, with the elapsed seconds; gone when done', () => {
    const { b, out, advance, at } = board();
    const p = b.port('credentials');
    p.count({ done: 0, total: 1, failed: 0 });
    assert.equal(out(), '');
    p.doing('Secret ns/a', 'minting the new credential');
    assert.equal(b.line(), 'Secret ns/a: minting the new credential...');
    const end = p.wait({
      text: 'Secret ns/a: waiting for the API server to refuse the old token (up to 30s)',
      deadline: at() + 30_000,
      usually: at() + 12_000,
      finishing: 'the rotation of Secret ns/a',
      leaves: 'Secret ns/a for the next run',
    });
    assert.equal(b.line(), 'Secret ns/a: waiting for the API server to refuse the old token (up to 30s)...');
    advance(4_200);
    b.tick();
    assert.match(out(), /\(up to 30s\)\.\.\. 4s$/);
    end();
    p.doing('Secret ns/a', undefined);
    p.count({ done: 1, total: 1, failed: 0 });
    assert.equal(b.line(), undefined);
    assert.ok(out().endsWith(`\r${ESC}[2K`), JSON.stringify(out()));
  });

  it('never wider than the terminal (a wrapped line could not be erased); data in it is escaped', () => {
    const { b, out } = board(true, 40);
    b.port('credentials').doing(`Secret ns/${'x'.repeat(80)}\u001b[31m`, 'reading it');
    const drawn = out().slice(`\r${ESC}[2K`.length);
    assert.ok([...drawn].length <= 39, drawn);
    assert.ok(!drawn.includes('\u001b[31m'));
  });

  it('clear() erases before another stderr line; close() draws nothing more', () => {
    const { b, out } = board();
    const p = b.port('clusters');
    p.count({ done: 1, total: 4, failed: 0 });
    b.clear();
    assert.ok(out().endsWith(`\r${ESC}[2K`));
    b.close();
    p.count({ done: 2, total: 4, failed: 0 });
    assert.ok(out().endsWith(`\r${ESC}[2K`));
  });

  it('not shown: nothing is written, but the acknowledgement still names the wait, how long it may take and what a second Ctrl-C leaves', () => {
    const { b, out, at, advance } = board(false);
    const p = b.port('credentials', 'one not yet replaced is put back');
    assert.equal(b.acknowledgement(), undefined, 'nothing in progress: no acknowledgement');
    p.count({ done: 0, total: 2, failed: 0 });
    p.doing('Secret ns/a', 'minting the new credential');
    assert.equal(
      b.acknowledgement(),
      'interrupt: stopping after the step in progress of Secret ns/a (minting the new credential), a few seconds: one not yet replaced is put back; press Ctrl-C again to stop now',
    );
    p.wait({
      text: 'w',
      deadline: at() + 30_000,
      usually: at() + 12_000,
      finishing: 'the rotation of Secret ns/a (waiting for the old token to be refused)',
      leaves: 'Secret ns/a holding the new credential',
    });
    advance(3_000);
    assert.equal(
      b.acknowledgement(),
      'interrupt: finishing the rotation of Secret ns/a (waiting for the old token to be refused), up to 9 s; press Ctrl-C again to stop now and leave Secret ns/a holding the new credential',
    );
    advance(10_000);
    assert.match(b.acknowledgement() ?? '', /up to 17 s;/, 'past the usual time: the deadline');
    assert.equal(out(), '');
  });
});
