// The launcher's V8 code cache (dist/bundle/fleet.mjs, written by scripts/bundle.mjs): taken when a run exits, used by
// the next run of this very bundle and Node, read only from a directory of this user's that no one else can write, and
// never a reason for fleet to behave differently (a broken or foreign cache is refused by V8 and replaced).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  symlinkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bundle = join(root, 'dist/bundle');
const scratch = mkdtempSync(join(tmpdir(), 'fleet-code-cache-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function fleet(cacheDir: string, ...args: string[]) {
  const env = { ...process.env, FLEET_CODE_CACHE: cacheDir, KUBECONFIG: '', HOME: scratch, NO_COLOR: '1', CI: 'true' };
  const res = spawnSync(process.execPath, [join(bundle, 'fleet.mjs'), ...args], { encoding: 'utf8', env });
  assert.equal(res.status, 0, `fleet ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}
const list = (dir: string) =>
  fleet(dir, 'clusters', 'list', '--kubeconfig', join(root, 'examples/fleet'), '-o', 'json');
const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8')) : []);
const idsOf = (file: string) => {
  const bytes = readFileSync(file);
  return JSON.parse(bytes.subarray(0, bytes.indexOf(10)).toString()) as string[];
};

describe("the launcher's code cache", () => {
  it('cli.cjs is ASCII only (the launcher reads it as latin1)', () => {
    const bytes = readFileSync(join(bundle, 'cli.cjs'));
    const at = bytes.findIndex((b) => b > 0x7f);
    assert.equal(
      at,
      -1,
      `a byte above 0x7f at ${at}: ${bytes.subarray(Math.max(0, at - 40), at + 10).toString('latin1')}`,
    );
  });

  it('is written by the first run (0700 directory, 0600 file, named for the bundle and Node), grows with each new command, and leaves the output as it was', () => {
    const dir = join(scratch, 'first');
    const without = list('');
    assert.deepEqual(cacheFiles(dir), []);
    const first = list(dir);
    assert.equal(first, without, 'the output with a cache being written differs from the output without one');
    const files = cacheFiles(dir);
    assert.equal(files.length, 1, `cache files: ${files.join(', ')}`);
    assert.match(
      files[0],
      new RegExp(`^cli-[0-9a-f]{16}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.v8$`),
    );
    const file = join(dir, files[0]);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(idsOf(file), ['clusters:list']);
    // V8's cache holds far more than the top level once it is taken after a run.
    assert.ok(statSync(file).size > 200_000, `cache of ${statSync(file).size} bytes`);

    // The same command again: the cache is used, not rewritten.
    const mtime = statSync(file).mtimeMs;
    assert.equal(list(dir), without);
    assert.equal(statSync(file).mtimeMs, mtime, 'a command the cache already holds rewrote it');

    // Another command: taken again, with both ids; a word that names no command adds nothing.
    assert.match(fleet(dir, '--help'), /USAGE/);
    assert.deepEqual(idsOf(file), ['clusters:list', '--help']);
    spawnSync(process.execPath, [join(bundle, 'fleet.mjs'), 'clusters', 'lst'], {
      env: { ...process.env, FLEET_CODE_CACHE: dir, HOME: scratch },
    });
    assert.deepEqual(idsOf(file), ['clusters:list', '--help']);
  });

  it("a command's --help is taken as help, so the command's own first run still takes the cache (issue 41)", () => {
    const dir = join(scratch, 'help-first');
    // What a newcomer types first: the command's help, then the command.
    assert.match(fleet(dir, 'clusters', 'list', '--help'), /USAGE/);
    const [name] = cacheFiles(dir);
    const file = join(dir, name);
    assert.deepEqual(idsOf(file), ['--help']);
    const before = statSync(file).size;
    list(dir);
    assert.deepEqual(idsOf(file), ['--help', 'clusters:list']);
    assert.ok(statSync(file).size > before, 'the list added nothing to the cache');
    // After `--`, --help is an argument, not a request for help: the run is the command's.
    const other = join(scratch, 'dashes');
    spawnSync(process.execPath, [join(bundle, 'fleet.mjs'), 'kubeconfig', 'credential', '--', '--help'], {
      env: { ...process.env, FLEET_CODE_CACHE: other, HOME: scratch },
    });
    assert.deepEqual(idsOf(join(other, name)), ['kubeconfig:credential']);
  });

  it('a broken cache is refused by V8: fleet runs as without one and replaces it', () => {
    const dir = join(scratch, 'broken');
    const without = list('');
    list(dir);
    const [name] = cacheFiles(dir);
    const file = join(dir, name);
    const bytes = readFileSync(file);
    const nl = bytes.indexOf(10);
    // The header kept, the code cache itself replaced by other bytes of the same length.
    writeFileSync(file, Buffer.concat([bytes.subarray(0, nl + 1), Buffer.alloc(bytes.length - nl - 1, 0x5a)]), {
      mode: 0o600,
    });
    assert.equal(list(dir), without);
    const after = readFileSync(file);
    assert.notEqual(
      after.subarray(nl + 1, nl + 65).toString('hex'),
      Buffer.alloc(64, 0x5a).toString('hex'),
      'the broken cache was not replaced',
    );
    assert.deepEqual(idsOf(file), ['clusters:list']);
  });

  // V8 checks a code cache against the source's length, not its text: a cache taken from another program of the same
  // length runs that program's code. So a cache fleet reads must be one only this user could have written.
  it('a cache in a directory others can write to, or behind a link, is neither read nor written', () => {
    // A program of the same length as cli.cjs that differs in one string, and a cache taken from it under the name
    // fleet's launcher gives its own (the launcher is copied as it is, so the name is the same).
    const other = join(scratch, 'other-bundle');
    cpSync(bundle, other, { recursive: true });
    const source = readFileSync(join(bundle, 'cli.cjs'), 'latin1');
    // Every "ClusterList" (clusters list's kind, and the exec provider's input kind) becomes "PlantedList": the same length.
    assert.ok(source.split('"ClusterList"').length >= 2);
    writeFileSync(join(other, 'cli.cjs'), source.replaceAll('"ClusterList"', '"PlantedList"'), 'latin1');
    const planted = join(scratch, 'planted');
    const otherEnv = { ...process.env, FLEET_CODE_CACHE: planted, KUBECONFIG: '', HOME: scratch, CI: 'true' };
    const otherRun = spawnSync(
      process.execPath,
      [join(other, 'fleet.mjs'), 'clusters', 'list', '--kubeconfig', join(root, 'examples/fleet'), '-o', 'json'],
      { encoding: 'utf8', env: otherEnv },
    );
    assert.match(otherRun.stdout, /"PlantedList"/);
    const [name] = cacheFiles(planted);
    const cache = readFileSync(join(planted, name));

    // The premise: in a directory of this user's, fleet runs that cache (so the checks below can fail).
    assert.match(
      list(planted),
      /"PlantedList"/,
      'V8 refused a cache of a same-length program: this test no longer shows anything',
    );

    // Group- or world-writable: not read (fleet's own output) and not written.
    const open = join(scratch, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    writeFileSync(join(open, name), cache);
    assert.match(list(open), /"ClusterList"/);
    assert.deepEqual(readFileSync(join(open, name)), cache);
    const empty = join(scratch, 'open-empty');
    mkdirSync(empty);
    chmodSync(empty, 0o770);
    list(empty);
    assert.deepEqual(cacheFiles(empty), [], 'fleet wrote a code cache into a directory its group can write to');

    // A link to a directory: not followed.
    const link = join(scratch, 'link');
    symlinkSync(planted, link);
    assert.match(list(link), /"ClusterList"/);
  });
});
