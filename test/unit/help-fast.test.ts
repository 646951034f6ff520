// Help without oclif (dist/bundle/fleet.mjs, written by scripts/bundle.mjs): a help the launcher has seen oclif print
// in the same setting is answered from its cache, with the same bytes. Every command's and topic's help, in every form
// (`--help`, `-h`, `help ...`, a topic alone, no arguments), is rendered by oclif (no cache at all), then by a run that
// stores it, then by a copy of the bundle without cli.cjs, which can only answer from the cache: all three must agree
// on stdout, stderr and exit code. Widths 40 to 200, off a terminal and on one (a pty through script(1)), colour on and
// off. Anything else (extra flags, unknown commands, a corrupt, foreign or themed entry) must reach oclif.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bundle = join(root, 'dist/bundle');
const scratch = mkdtempSync(join(tmpdir(), 'fleet-help-fast-test-'));
const full = join(scratch, 'full');
const fastOnly = join(scratch, 'fast-only');
after(() => rmSync(scratch, { recursive: true, force: true }));
before(() => {
  cpSync(bundle, full, { recursive: true });
  cpSync(bundle, fastOnly, { recursive: true });
  // Without the CLI itself, only the cache can answer: a run that reaches oclif fails.
  rmSync(join(fastOnly, 'cli.cjs'));
});

interface Result {
  stdout: string;
  stderr: string;
  status: number | null;
}
// A fixed environment: nothing of the caller's reaches oclif's width, colour or theme unless a case sets it.
const base = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: join(scratch, 'home'), KUBECONFIG: '' };
  return env;
};
function run(dir: string, args: string[], env: NodeJS.ProcessEnv, pty?: { cols: number }): Promise<Result> {
  const [cmd, argv] = pty
    ? [
        'script',
        [
          '-qec',
          `stty cols ${pty.cols} rows 50; exec ${[process.execPath, join(dir, 'fleet.mjs'), ...args].map((a) => `'${a}'`).join(' ')}`,
          '/dev/null',
        ],
      ]
    : [process.execPath, [join(dir, 'fleet.mjs'), ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({ stdout: Buffer.concat(out).toString('latin1'), stderr: Buffer.concat(err).toString('latin1'), status }),
    );
  });
}
/** Runs fn over items, two at a time (the machine has two cores). */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

const manifest = JSON.parse(readFileSync(join(bundle, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { hasDynamicHelp?: boolean }>;
};
const ids = Object.keys(manifest.commands);
const topics = [
  ...new Set([
    ...ids.flatMap((id) =>
      id
        .split(':')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join(':')),
    ),
    ...Object.keys(
      (JSON.parse(readFileSync(join(bundle, 'package.json'), 'utf8')) as { oclif: { topics: object } }).oclif.topics,
    ),
  ]),
].filter((t) => !ids.includes(t));
const forms: string[][] = [
  [],
  ['--help'],
  ['-h'],
  ['help'],
  ...ids.flatMap((id) => [
    [...id.split(':'), '--help'],
    [...id.split(':'), '-h'],
    ['help', ...id.split(':')],
  ]),
  ...topics.flatMap((t) => [[...t.split(':'), '--help'], ['help', ...t.split(':')], t.split(':')]),
];

/** oclif alone, then a run that may store, then the cache alone: the same bytes each time. */
async function same(args: string[], env: NodeJS.ProcessEnv, pty?: { cols: number }): Promise<void> {
  const label = `fleet ${args.join(' ')} (${JSON.stringify({ ...env, PATH: undefined, HOME: undefined })}${pty ? `, pty ${pty.cols}` : ''})`;
  const oclif = await run(full, args, { ...env, FLEET_CODE_CACHE: '' }, pty);
  assert.equal(oclif.status, 0, `${label}: ${oclif.stderr}`);
  const storing = await run(full, args, env, pty);
  assert.deepEqual(storing, oclif, `${label}: the run that stores differs from oclif`);
  const cached = await run(fastOnly, args, env, pty);
  assert.deepEqual(cached, oclif, `${label}: the cache's answer differs from oclif's`);
}

describe('help without oclif', () => {
  it('no command computes its help at run time (the cache would not know what it read)', () => {
    assert.deepEqual(
      ids.filter((id) => manifest.commands[id].hasDynamicHelp),
      [],
    );
  });

  it('every command and topic, in every form, off a terminal (80 columns, no colour) and at 120 columns in colour', async () => {
    assert.ok(ids.length > 20 && topics.length >= 5, `${ids.length} commands, ${topics.length} topics`);
    for (const setting of [{}, { OCLIF_COLUMNS: '120', FORCE_COLOR: '3' }]) {
      const cache = join(scratch, `all-${Object.keys(setting).length}`);
      await pool(forms, (args) => same(args, { ...base(), ...setting, FLEET_CODE_CACHE: cache }));
    }
  });

  it('at widths 40, 80, 120 and 200, colour off and on (16 colours and 24-bit), on a terminal and off one', async () => {
    const sample = [
      ['--help'],
      ['auth', '--help'],
      ['clusters', 'list', '--help'],
      ['help', 'creds', 'generate'],
      ['kubeconfig'],
    ];
    const cases: Array<{ args: string[]; env: NodeJS.ProcessEnv; pty?: { cols: number } }> = [];
    for (const args of sample) {
      for (const colour of [{ NO_COLOR: '1' }, { FORCE_COLOR: '1' }, { FORCE_COLOR: '3' }]) {
        for (const cols of ['40', '80', '120', '200'])
          cases.push({ args, env: { ...base(), ...colour, OCLIF_COLUMNS: cols } });
        cases.push({ args, env: { ...base(), ...colour } });
      }
      // A real terminal: its width from the pty, colour from TERM (and off with NO_COLOR).
      for (const cols of [40, 100, 200]) {
        cases.push({ args, env: { ...base(), TERM: 'xterm-256color' }, pty: { cols } });
        cases.push({ args, env: { ...base(), TERM: 'xterm-256color', NO_COLOR: '1' }, pty: { cols } });
      }
    }
    const cache = join(scratch, 'widths');
    await pool(cases, (c) => same(c.args, { ...c.env, FLEET_CODE_CACHE: cache }, c.pty));
    // The settings differ in what oclif prints, so the cache told them apart (rather than all agreeing by chance).
    const printed = new Set(
      await Promise.all(
        [{ OCLIF_COLUMNS: '40' }, { OCLIF_COLUMNS: '200' }, { FORCE_COLOR: '3' }].map(
          async (e) =>
            (await run(fastOnly, ['clusters', 'list', '--help'], { ...base(), ...e, FLEET_CODE_CACHE: cache })).stdout,
        ),
      ),
    );
    assert.equal(printed.size, 3);
  });

  it('extra flags, unknown commands and other argv go to oclif and store nothing', async () => {
    const cache = join(scratch, 'others');
    const env = { ...base(), FLEET_CODE_CACHE: cache };
    for (const args of [
      ['clusters', 'list', '--help', '-o', 'json'],
      ['clusters', 'list', '-o', 'json', '--help'],
      ['--help', 'clusters', 'list'],
      ['nosuch', '--help'],
      ['help', 'nosuch'],
      ['clusters', 'lst', '-h'],
      ['help', 'clusters', '--help'],
      ['clusters', 'list', '--', '--help'],
    ]) {
      const oclif = await run(full, args, { ...env, FLEET_CODE_CACHE: '' });
      assert.deepEqual(await run(full, args, env), oclif, args.join(' '));
      assert.deepEqual(
        readdirSync(cache).filter((f) => f.startsWith('help-')),
        [],
        `fleet ${args.join(' ')} stored help`,
      );
      assert.notEqual((await run(fastOnly, args, env)).status, 0, `fleet ${args.join(' ')} was answered without oclif`);
    }
  });

  // An entry whose text is PLANTED, with a header that matches: where the launcher must refuse it, the output is oclif's.
  function plant(cache: string, args: string[], env: NodeJS.ProcessEnv): { file: string; entry: Buffer } {
    spawnSync(process.execPath, [join(full, 'fleet.mjs'), ...args], { env: { ...env, FLEET_CODE_CACHE: cache } });
    const [name] = readdirSync(cache).filter((f) => f.startsWith('help-'));
    assert.ok(name, 'no help entry was stored');
    const file = join(cache, name);
    const bytes = readFileSync(file);
    const header = JSON.parse(bytes.subarray(0, bytes.indexOf(10)).toString()) as [string, string, string];
    const text = Buffer.from('PLANTED\n');
    // The launcher's check sum (hash64 in scripts/bundle.mjs), computed the same way.
    let h1 = 0xdeadbeef;
    let h2 = 0x41c6ce57;
    for (const c of text) {
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    header[2] = (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
    const entry = Buffer.concat([Buffer.from(JSON.stringify(header) + '\n'), text]);
    writeFileSync(file, entry, { mode: 0o600 });
    return { file, entry };
  }

  it('a corrupt entry, one for another argv, one in a directory others can write or behind a link: oclif answers', async () => {
    const args = ['auth', '--help'];
    const env = base();
    const oclif = await run(full, args, { ...env, FLEET_CODE_CACHE: '' });
    const own = join(scratch, 'planted');
    const { file, entry } = plant(own, args, env);
    // The premise: in this user's own directory a matching entry is what fleet prints (so the checks below can fail).
    assert.equal((await run(full, args, { ...env, FLEET_CODE_CACHE: own })).stdout, 'PLANTED\n');

    // Cut short, or one byte changed: refused, and replaced by oclif's.
    writeFileSync(file, entry.subarray(0, entry.length - 3));
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: own }), oclif);
    assert.deepEqual(
      await run(fastOnly, args, { ...env, FLEET_CODE_CACHE: own }),
      oclif,
      'the corrupt entry was not replaced',
    );
    writeFileSync(file, Buffer.concat([entry.subarray(0, entry.length - 2), Buffer.from('X\n')]));
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: own }), oclif);
    writeFileSync(file, 'not json\n');
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: own }), oclif);

    // Another argv's entry under this argv's name: its key differs.
    const other = join(scratch, 'other-argv');
    const planted = plant(other, ['creds', '--help'], env);
    const mine = join(scratch, 'mine');
    mkdirSync(mine, { mode: 0o700 });
    spawnSync(process.execPath, [join(full, 'fleet.mjs'), ...args], { env: { ...env, FLEET_CODE_CACHE: mine } });
    const [name] = readdirSync(mine).filter((f) => f.startsWith('help-'));
    writeFileSync(join(mine, name), planted.entry, { mode: 0o600 });
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: mine }), oclif);

    // Group- or world-writable directory, a link to a directory, a writable entry: neither read nor written.
    for (const mode of [0o777, 0o770]) {
      const open = join(scratch, `open-${mode.toString(8)}`);
      mkdirSync(open);
      chmodSync(open, mode);
      writeFileSync(
        join(
          open,
          readdirSync(own).find((f) => f.startsWith('help-'))!,
        ),
        entry,
      );
      assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: open }), oclif);
      assert.deepEqual(
        readFileSync(
          join(
            open,
            readdirSync(open).find((f) => f.startsWith('help-'))!,
          ),
        ),
        entry,
        'fleet wrote into a directory others can write',
      );
    }
    writeFileSync(file, entry, { mode: 0o600 });
    const link = join(scratch, 'link');
    symlinkSync(own, link);
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: link }), oclif);
    chmodSync(file, 0o666);
    assert.deepEqual(await run(full, args, { ...env, FLEET_CODE_CACHE: own }), oclif);
  });

  it('a user theme (oclif reads <config dir>/theme.json): oclif renders with it, and nothing stored without it is served', async () => {
    const args = ['clusters', 'list', '--help'];
    const cache = join(scratch, 'theme');
    const env = { ...base(), FORCE_COLOR: '3', FLEET_CODE_CACHE: cache };
    const plain = await run(full, args, env);
    assert.deepEqual(await run(fastOnly, args, env), plain, 'the premise: stored without a theme');
    const dir = join(scratch, 'home', '.config', 'fleet');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'theme.json'), JSON.stringify({ sectionHeader: 'red', flag: '#00ff00' }));
    try {
      const themed = await run(full, args, { ...env, FLEET_CODE_CACHE: '' });
      assert.notEqual(themed.stdout, plain.stdout, 'the theme changed nothing: this test shows nothing');
      assert.deepEqual(await run(full, args, env), themed);
      assert.deepEqual(await run(full, args, env), themed, 'a themed answer was stored and served');
      assert.notEqual((await run(fastOnly, args, env)).status, 0);
    } finally {
      rmSync(join(dir, 'theme.json'));
    }
    assert.ok(!existsSync(join(dir, 'theme.json')));
    assert.deepEqual(await run(fastOnly, args, env), plain);
  });
});
