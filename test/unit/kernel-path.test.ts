// kernelPath (src/base/paths.ts) against an oracle that is not fleet: the kernel itself. A tree of directories and
// symbolic links (to directories elsewhere, to files, dangling) is made, spellings of paths into it are generated
// (relative and absolute, `.`, `..` after real directories and after links, missing components), and for each the file
// the kernel opens for the spelling as given (stat from the working directory) must be the file kernelPath names — or
// both must be missing. path.resolve, which removes `dir/..` by text, is shown to disagree on some of them, so the
// corpus reaches the case that matters.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { kernelPath } from '../../src/base/paths.js';

/** dev:ino of what the kernel opens for this spelling (relative to the working directory), or 'missing'. */
function identity(path: string): string {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return 'missing';
  }
}

/** A small deterministic generator (the corpus is the same on every run; a failure names its seed and spelling). */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('kernelPath: the file the kernel opens for a path as the user spelled it', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'kpath-')));
  // work/ is the working directory; elsewhere/deep/ is what work/link points at; every directory has a kube.yaml of
  // its own, so opening the wrong one is seen.
  for (const d of ['work/sub', 'elsewhere/deep/inner', 'other']) mkdirSync(join(root, d), { recursive: true });
  for (const d of ['', 'work', 'work/sub', 'elsewhere', 'elsewhere/deep', 'elsewhere/deep/inner', 'other'])
    writeFileSync(join(root, d, 'kube.yaml'), d);
  symlinkSync(join(root, 'elsewhere/deep'), join(root, 'work/link')); // a link to a directory elsewhere
  symlinkSync('../../other', join(root, 'work/sub/rel')); // a relative link to a directory
  symlinkSync(join(root, 'elsewhere/kube.yaml'), join(root, 'work/file-link.yaml')); // a link to a file
  symlinkSync(join(root, 'nowhere'), join(root, 'work/dangling')); // a dangling link
  const cwd = join(root, 'work');
  const parts = ['.', '..', 'sub', 'link', 'rel', 'inner', 'deep', 'missing', 'dangling', 'work', 'elsewhere'];
  const ends = ['kube.yaml', 'file-link.yaml', 'nosuch.yaml'];

  it('names the same file as the kernel for 4,000 generated spellings, where path.resolve disagrees on some', () => {
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      const next = rng(20261128);
      let disagreements = 0;
      for (let i = 0; i < 4000; i++) {
        const n = Math.floor(next() * 5);
        const segs = Array.from({ length: n }, () => parts[Math.floor(next() * parts.length)]);
        segs.push(ends[Math.floor(next() * ends.length)]);
        const spelled = next() < 0.3 ? join(cwd, '') + '/' + segs.join('/') : segs.join('/');
        const kernel = identity(spelled);
        const ours = kernelPath(spelled);
        assert.equal(identity(ours), kernel, `spelling ${spelled}: kernelPath gave ${ours}`);
        if (identity(resolve(spelled)) !== kernel) disagreements++;
      }
      assert.ok(disagreements > 50, `path.resolve disagreed with the kernel on only ${disagreements} spellings`);
    } finally {
      process.chdir(previous);
    }
  });

  it('keeps a path without `..` as path.resolve does, and a final link as a link (fleet writes through it)', () => {
    assert.equal(kernelPath('kube.yaml', cwd), join(cwd, 'kube.yaml'));
    assert.equal(kernelPath('./sub/./kube.yaml', cwd), join(cwd, 'sub/kube.yaml'));
    assert.equal(kernelPath('file-link.yaml', cwd), join(cwd, 'file-link.yaml'));
    assert.equal(kernelPath('link/../kube.yaml', cwd), join(root, 'elsewhere/kube.yaml'));
    assert.equal(kernelPath('sub/rel/../kube.yaml', cwd), join(root, 'kube.yaml'));
    // Nothing for the kernel to follow: left as spelled, so opening it fails as it does for kubectl.
    assert.equal(kernelPath('missing/../kube.yaml', cwd), `${cwd}/missing/../kube.yaml`);
  });
});
