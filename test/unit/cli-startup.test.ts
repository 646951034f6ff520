// The start-up path (bin/run.js): `--version` is answered without loading oclif, so it must print exactly what oclif
// would; `npm run build` writes the bundle (dist/bundle/) with an oclif manifest, so no start-up has to import every
// command to build it, and no start-up reads node_modules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Config } from '@oclif/core';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('start-up', () => {
  it('fleet --version prints what oclif prints (its user agent)', async () => {
    // The oclif configuration the program runs with is the bundle's (dist/bundle/package.json, named for the command,
    // `fleet`), not the npm package's (fleet-cli).
    const config = await Config.load({ root: join(root, 'dist/bundle') });
    const res = spawnSync(process.execPath, [join(root, 'bin/run.js'), '--version'], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(res.stdout, `${config.userAgent}\n`);
  });

  it("the build wrote a bundle manifest naming every command in dist/commands and the plugins' commands, with their flags", () => {
    const manifest = JSON.parse(readFileSync(join(root, 'dist/bundle/oclif.manifest.json'), 'utf8')) as {
      version: string;
      commands: Record<string, { flags: object }>;
    };
    const dir = join(root, 'dist/commands');
    const walk = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.js') ? [join(d, e.name)] : [],
      );
    // An index.js is the command named like its directory (src/commands/autocomplete/index.ts is `autocomplete`).
    const ids = walk(dir).map((f) =>
      relative(dir, f)
        .replace(/\.js$/, '')
        .replace(/\/index$/, '')
        .split('/')
        .join(':'),
    );
    // The plugins' commands; fleet's own autocomplete and autocomplete:create take the place of the plugin's.
    const plugins = ['help', 'autocomplete', 'autocomplete:create', 'autocomplete:script'].filter(
      (id) => !ids.includes(id),
    );
    assert.deepEqual(Object.keys(manifest.commands).sort(), [...ids, ...plugins].sort());
    assert.equal(manifest.version, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    // fleet's commands carry its flags; the two that replace the plugin's keep the plugin's (autocomplete:create has none).
    const replaced = new Set(['autocomplete', 'autocomplete:create']);
    assert.ok(
      ids
        .filter((id) => !replaced.has(id))
        .every((id) => 'all' in manifest.commands[id].flags || Object.keys(manifest.commands[id].flags).length > 0),
    );
  });

  it('the bundle runs with no node_modules: a copy of dist/bundle alone lists clusters and prints help', () => {
    const copy = mkdtempSync(join(tmpdir(), 'fleet-bundle-'));
    try {
      cpSync(join(root, 'dist/bundle'), copy, { recursive: true });
      const env = { ...process.env, KUBECONFIG: '', HOME: copy, NO_COLOR: '1', CI: 'true' };
      const list = spawnSync(
        process.execPath,
        [join(copy, 'fleet.mjs'), 'clusters', 'list', '--kubeconfig', join(root, 'examples/fleet'), '-o', 'json'],
        { encoding: 'utf8', cwd: copy, env },
      );
      assert.equal(list.status, 0, list.stderr);
      assert.ok((JSON.parse(list.stdout) as { items: unknown[] }).items.length > 0);
      const help = spawnSync(process.execPath, [join(copy, 'fleet.mjs'), 'clusters', 'verify', '--help'], {
        encoding: 'utf8',
        cwd: copy,
        env,
      });
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, /--policy/);
      const unknown = spawnSync(process.execPath, [join(copy, 'fleet.mjs'), 'clusters', 'lst'], {
        encoding: 'utf8',
        cwd: copy,
        env,
      });
      assert.equal(unknown.status, 2);
      assert.match(unknown.stderr, /did you mean "clusters list"/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  // node:child_process brings net, dgram and the streams with it (~5 ms of CPU at every start, docs/decisions.md "What
  // is left at start-up"): it is loaded when fleet starts a program, never by a command that starts none.
  it('--help and clusters list do not load node:child_process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-modules-'));
    try {
      const preload = join(dir, 'modules.cjs');
      writeFileSync(
        preload,
        "process.on('exit', () => require('node:fs').writeFileSync(process.env.FLEET_TEST_MODULES, JSON.stringify(process.moduleLoadList)))\n",
      );
      for (const args of [['--help'], ['clusters', 'list', '--kubeconfig', join(root, 'examples/fleet')]]) {
        const out = join(dir, 'modules.json');
        const env = { ...process.env, KUBECONFIG: '', HOME: dir, NO_COLOR: '1', CI: 'true', FLEET_TEST_MODULES: out };
        const res = spawnSync(process.execPath, ['--require', preload, join(root, 'bin/run.js'), ...args], {
          encoding: 'utf8',
          env,
        });
        assert.equal(res.status, 0, res.stderr);
        const loaded = JSON.parse(readFileSync(out, 'utf8')) as string[];
        assert.ok(loaded.includes('NativeModule fs'), 'the preload saw the run');
        assert.deepEqual(
          loaded.filter((m) => /^NativeModule (child_process|internal\/child_process)$/.test(m)),
          [],
          `fleet ${args.join(' ')}`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
