// The scrubber finds registered secrets in one pass over the text (linear however many clusters' credentials were
// read). These check it against the plain definition: every occurrence of every registered secret is gone, the
// longest one wins where secrets share a beginning, and nothing else changes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { REDACTED, registerSecret, scrub, scrubValue } from '../../src/kubeconfig/redact.js';

let seed = 7;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const ALPHA = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const word = (len: number) => Array.from({ length: len }, () => ALPHA[rand(ALPHA.length)]).join('');

describe('scrub with many registered secrets', () => {
  it('redacts a secret and a longer one that starts with it, whichever was registered first', () => {
    const short = `sp1-${word(10)}`;
    const long = `${short}-tail-${word(6)}`;
    registerSecret(short);
    registerSecret(long);
    assert.equal(
      scrub(`a ${long} b ${short} c ${short}${long}`),
      `a ${REDACTED} b ${REDACTED} c ${REDACTED}${REDACTED}`,
    );
    const short2 = `sp2-${word(10)}`;
    const long2 = `${short2}${word(6)}`;
    registerSecret(long2);
    registerSecret(short2);
    assert.equal(scrub(`<${long2}>`), `<${REDACTED}>`);
  });

  it('agrees with the plain definition on random text holding some of 3,000 registered secrets', () => {
    const secrets = Array.from({ length: 3000 }, (_, i) => `${i % 7 === 0 ? 'shared-p' : ''}${word(8 + rand(30))}`);
    for (const s of secrets) registerSecret(s);
    for (let t = 0; t < 50; t++) {
      const parts: string[] = [];
      const expected: string[] = [];
      for (let k = 0; k < 40; k++) {
        if (rand(3) === 0) {
          const s = secrets[rand(secrets.length)];
          parts.push(s);
          expected.push(REDACTED);
        } else {
          // Filler from another alphabet never forms a secret by accident.
          const filler = ' .,;:!-_'.slice(0, 1 + rand(7)).repeat(1 + rand(3));
          parts.push(filler);
          expected.push(filler);
        }
      }
      assert.equal(scrub(parts.join('')), expected.join(''));
    }
    assert.deepEqual(scrubValue({ a: [secrets[5], 'x'], b: `token=${secrets[6]}` }), {
      a: [REDACTED, 'x'],
      b: `token=${REDACTED}`,
    });
  });
});
