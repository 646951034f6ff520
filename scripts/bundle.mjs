#!/usr/bin/env node
// Builds dist/bundle/ from dist/ (run after tsc by `npm run build`): everything `fleet` needs at run time, with no
// node_modules beside it (docs/decisions.md, "One bundle").
//   cli.cjs               the CLI in one file: esbuild's bundle of src/entry/main.ts, every command and every
//                         dependency; each command (and so each heavy module it imports) is evaluated only when it runs
//   fleet.mjs             the launcher: `--version` answered without the bundle, and help a run before printed through
//                         oclif in the same setting; otherwise cli.cjs compiled with V8's code cache, taken after a
//                         run (see "the launcher" below), and run
//   help-fast.cjs         oclif's own code for help's width and colour, which the launcher's help cache is keyed by
//   commands.cjs          what oclif's explicit command strategy imports: the table the launcher's cli.cjs exports
//   cli.cjs.LEGAL.txt     the licence comments esbuild collected from the bundled packages
//   package.json          fleet's oclif configuration (explicit strategy: no directory scan), without `plugins`: the
//                         help and autocomplete commands are bundled as fleet's own
//   oclif.manifest.json   every command's flags and help, so help and lookup never load a command
//   schemas/              the JSON schemas fleet reads at run time
// Usage: node scripts/bundle.mjs
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/bundle');
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

// ---- the command table: fleet's commands from dist/commands, the plugins' from their manifests ----------------------
const loaders = {};
const commandsDir = join(root, 'dist/commands');
const walk = (d) =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.js') ? [join(d, e.name)] : [],
  );
for (const file of walk(commandsDir)) {
  const id = relative(commandsDir, file)
    .replace(/\.js$/, '')
    .split('/')
    .filter((p, i, all) => !(p === 'index' && i === all.length - 1))
    .join(':');
  loaders[id] = file;
}
const REPLACED = new Set(['autocomplete', 'autocomplete:create', 'help']);
for (const plugin of pjson.oclif.plugins ?? []) {
  const dir = join(root, 'node_modules', plugin);
  const manifest = JSON.parse(readFileSync(join(dir, 'oclif.manifest.json'), 'utf8'));
  for (const [id, cmd] of Object.entries(manifest.commands)) {
    // fleet's own autocomplete, autocomplete:create and help extend the plugin's (src/commands/) and take their place.
    if (loaders[id] && REPLACED.has(id)) continue;
    if (loaders[id]) throw new Error(`${plugin} and fleet both define the command ${id}`);
    loaders[id] = join(dir, ...cmd.relativePath);
  }
}
// Each loader takes the module's default export (fleet's commands) or its only command class (the plugins').
const table = Object.entries(loaders)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([id, file]) => `  ${JSON.stringify(id)}: () => import(${JSON.stringify(file)}).then(commandOf),`)
  .join('\n');
const entry = `import {COMMANDS, COMMAND_NOT_FOUND, helpTheme, loadAll, run} from ${JSON.stringify(join(root, 'dist/entry/main.js'))}
const commandOf = (m) => m.default ?? Object.values(m).find((v) => typeof v === 'function' && typeof v.run === 'function')
const LOADERS = {
${table}
}
export {COMMANDS, COMMAND_NOT_FOUND, helpTheme}
export const main = () => run(LOADERS, import.meta.url)
export const loadAllCommands = () => loadAll(LOADERS)
`;

/**
 * Two patterns in dist/ that esbuild would otherwise leave pointing outside the bundle:
 * - `createRequire(import.meta.url)('pkg')` (a package loaded only when needed, e.g. cli-table3) becomes `require('pkg')`,
 *   which esbuild bundles and still evaluates on first use.
 * - `new URL('<path>', import.meta.url)` naming a file of the package outside dist/ (schemas/...): the file is copied
 *   into dist/bundle/ at the same path from the package root, and the URL points there.
 */
function keepLazyAndAssets() {
  return {
    name: 'fleet-lazy-require-and-assets',
    setup(b) {
      b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
        let text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        text = text.replace(/createRequire\(import\.meta\.url\)\(('[^']+')\)/g, 'require($1)');
        text = text.replace(/new URL\('([^']+)', import\.meta\.url\)/g, (whole, rel) => {
          const file = join(dirname(args.path), rel);
          const inPackage = relative(root, file);
          if (inPackage.startsWith('..') || inPackage.startsWith('dist/')) return whole;
          mkdirSync(dirname(join(out, inPackage)), { recursive: true });
          cpSync(file, join(out, inPackage));
          return `new URL(${JSON.stringify(`./${inPackage}`)}, import.meta.url)`;
        });
        return { contents: text, loader: 'js' };
      });
    },
  };
}

/**
 * Two edits to @oclif/core (4.14.0) that change no behaviour of the bundle and that profiles of every start-up showed
 * (docs/decisions.md, "What is left at start-up"). Each must match exactly once, so an oclif upgrade that moves the
 * code fails the build instead of silently dropping the edit.
 * - lib/index.js calls checkNodeVersion() at import: it loads semver (~5 ms of evaluation) to compare Node's version with
 *   oclif's `engines`, read with require('<oclif>/package.json'), which is not in dist/bundle/; the require throws, the
 *   function swallows it, and nothing is ever checked. fleet's own `engines` (>=22) is the stricter floor anyway.
 * - lib/config/plugin.js sorts the manifest's commands with localeCompare, whose first call builds an ICU collator:
 *   ~8 ms CPU at every start. For ids made of lowercase letters, `-` and `:` (all of fleet's) ICU's root order is the
 *   code-unit order (checked over random such strings), so those are compared by code unit and any other by
 *   localeCompare, as before.
 * - lib/logger.js makes a `debug` instance for every namespace oclif logs under, and logs while loading its config, so
 *   the debug package (which reads DEBUG once, when it loads, and brings supports-color and tty) was evaluated at every
 *   start (~5 ms). Its instances are now made on the first message when DEBUG is set, and messages are dropped without
 *   it, as debug drops them: nothing in oclif or fleet calls debug.enable().
 * - lib/util/os.js's getPlatform(), run by every Config.load, imports wsl-utils dynamically for the one value it
 *   re-exports from is-wsl: a chunk of its own, linked at every start (~4 ms). It requires is-wsl (the same package and
 *   version) instead, which esbuild bundles into oclif's chunk; the value is the same.
 */
function oclifStartupEdits() {
  const edits = [
    { file: /[\\/]@oclif[\\/]core[\\/]lib[\\/]index\.js$/, from: '\ncheckNodeVersion();\n', to: '\n' },
    {
      file: /[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/,
      from: '.sort((a, b) => a.id.localeCompare(b.id));',
      to: '.sort((a, b) => (/^[a-z:-]*$/.test(a.id) && /^[a-z:-]*$/.test(b.id) ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.id.localeCompare(b.id)));',
    },
    {
      file: /[\\/]@oclif[\\/]core[\\/]lib[\\/]logger\.js$/,
      from: '    const debug = (0, debug_1.default)(namespace);\n',
      to: '    let real;\n    const debug = (...args) => (real === undefined && !process.env.DEBUG ? undefined : (real ??= (0, debug_1.default)(namespace))(...args));\n',
    },
    {
      file: /[\\/]@oclif[\\/]core[\\/]lib[\\/]util[\\/]os\.js$/,
      from: "return (await import('wsl-utils')).isWsl ? 'wsl'",
      to: "return require('is-wsl').default ? 'wsl'",
    },
  ];
  // Packages oclif requires at the top of a module but uses only inside functions that fleet's common paths (help,
  // a command that succeeds) never call, or call late: finding commands by glob (tinyglobby, which brings fdir and
  // picomatch; the explicit strategy never globs), matching plugin names (minimatch), the spinner's frames, reading
  // an rc file (lilconfig), templates (ejs), the error and help formatters, reading flags from stdin (node:readline),
  // performance marks, made only with OCLIF_PERFORMANCE (node:perf_hooks), and debug (see above); node:child_process,
  // which util/os.js uses only to ask Windows for its shell, and whose loading (with net, dgram, streams) cost ~5 ms. Each such `require` becomes an object
  // that loads the package on its first property read (oclif reads these only as `x_1.name` or `x_1.default`,
  // checked when this was written), so a run that never uses one never evaluates it.
  const lazy = [
    'node:child_process',
    'node:readline',
    'node:perf_hooks',
    'debug',
    'tinyglobby',
    'minimatch',
    'cli-spinners',
    'lilconfig',
    'ejs',
    'clean-stack',
    'indent-string',
    'wrap-ansi',
    'string-width',
    'widest-line',
  ];
  const requireOf = new RegExp(`^const (\\w+) = (__importDefault\\()?require\\("(${lazy.join('|')})"\\)\\)?;$`, 'gm');
  const lazyHelper =
    '\nfunction __fleetLazy(load) { let m; return new Proxy({}, {get: (_, k) => (m ??= load())[k]}) }\n';
  return {
    name: 'fleet-oclif-startup-edits',
    setup(b) {
      b.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, (args) => {
        let text = readFileSync(args.path, 'utf8');
        for (const edit of edits.filter((e) => e.file.test(args.path))) {
          if (text.split(edit.from).length !== 2)
            throw new Error(
              `scripts/bundle.mjs: ${args.path} no longer holds ${JSON.stringify(edit.from)} once; check the edit`,
            );
          text = text.replace(edit.from, edit.to);
          edit.applied = true;
        }
        let lazied = false;
        text = text.replace(requireOf, (whole, name, importDefault, pkg) => {
          // Only a binding read as `name.property` can be deferred; anything else keeps the eager require.
          if (new RegExp(`\\b${name}\\b(?!\\.\\w)`).test(text.replace(whole, ''))) return whole;
          lazied = true;
          return `const ${name} = __fleetLazy(() => ${importDefault ? '__importDefault(' : ''}require("${pkg}")${importDefault ? ')' : ''});`;
        });
        return { contents: lazied ? text + lazyHelper : text, loader: 'js' };
      });
      b.onEnd(() => {
        const missed = edits.filter((e) => !e.applied).map((e) => e.file);
        if (missed.length > 0)
          throw new Error(`scripts/bundle.mjs: no file matched ${missed.join(', ')}; check the oclif edits`);
      });
    },
  };
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const built = await build({
  stdin: { contents: entry, resolveDir: root, sourcefile: 'fleet-bundle-entry.js', loader: 'js' },
  bundle: true,
  platform: 'node',
  // One CommonJS file, run by the launcher through vm.Script so that V8's code cache can be taken after a run (an ES
  // module's cannot). Without splitting, esbuild wraps every module reached by a dynamic import in a function that
  // runs on the first import: a command's modules are compiled and evaluated only when it runs. Being CommonJS, the
  // bundle also reaches Node's built-ins through require(), which builds no ES module facade for them (an ESM import
  // of node:http read its lazy exports and loaded the bundled undici; of node:process, every Node option).
  format: 'cjs',
  target: 'node22',
  outfile: join(out, 'cli.cjs'),
  // The launcher passes the bundle's file URL in: a CommonJS module has no import.meta.
  define: { 'import.meta.url': '__fleetUrl' },
  plugins: [keepLazyAndAssets(), oclifStartupEdits()],
  // oclif requires typescript only to read a tsconfig.json in development; dist/bundle/ has none.
  external: ['typescript'],
  minify: !process.env.FLEET_BUNDLE_NOMINIFY,
  // Error and class names stay readable in messages and stack traces.
  keepNames: true,
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
});
// esbuild's metafile (what each package adds: https://esbuild.github.io/analyze/), beside the bundle and not in it:
// scripts/executable.mjs lists the bundled packages in the executable's SBOM from it. FLEET_BUNDLE_META=FILE: there.
writeFileSync(process.env.FLEET_BUNDLE_META || join(root, 'dist/bundle.meta.json'), JSON.stringify(built.metafile));
// `kubeconfig credential` from the cache, for the launcher to answer before the CLI loads (kubectl's hot path):
// src/export/credential-fast.ts and the little it imports, as one ES module.
await build({
  entryPoints: [join(root, 'dist/export/credential-fast.js')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  outfile: join(out, 'credential-fast.mjs'),
  minify: !process.env.FLEET_BUNDLE_NOMINIFY,
  logLevel: 'warning',
});

// What decides how oclif's help looks, for the launcher's help cache (see "the launcher" below): oclif's own modules
// that compute the width help wraps to (screen.js: OCLIF_COLUMNS, or the terminal's columns, or 80 off a terminal)
// and whether and how it colours (ux/supports-color.js, which the theme asks, and ansis, which writes the sequences;
// probed by what it writes for a bold and a 24-bit colour). The same files cli.cjs bundles, so the launcher's key and
// oclif's rendering are computed by the same code from the same process state. CommonJS, so Node's built-ins come
// through require() (no ES module facade).
{
  const core = join(root, 'node_modules/@oclif/core');
  await build({
    stdin: {
      contents: `const {stdtermwidth} = require(${JSON.stringify(join(core, 'lib/screen.js'))})
const {supportsColor} = require(${JSON.stringify(join(core, 'lib/ux/supports-color.js'))})
const ansisModule = require('ansis')
const ansis = ansisModule.default ?? ansisModule
module.exports = {width: stdtermwidth, colour: [supportsColor(), ansis.bold('x'), ansis.hex('#123456')('x')]}
`,
      resolveDir: join(core, 'lib'),
      sourcefile: 'fleet-help-probe.js',
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    outfile: join(out, 'help-fast.cjs'),
    minify: !process.env.FLEET_BUNDLE_NOMINIFY,
    logLevel: 'warning',
  });
}

// The launcher reads cli.cjs as latin1, exact only for ASCII; V8 then holds it as a one-byte string (one other character
// makes the whole 2.5 MB string two-byte: ~4 ms more to read, and more to hash and scan). esbuild escapes non-ASCII
// characters in strings, templates and identifiers; it leaves them in regular expression literals (U+009B, the C1
// CSI, in ansi-regex). \uXXXX means the same character in an identifier, a string, a regular expression and a
// comment; after a backslash it would not, so that case fails the build (as does anything outside the BMP).
{
  const file = join(out, 'cli.cjs');
  const text = readFileSync(file, 'utf8');
  const ascii = text.replace(/[^\x00-\x7f]/g, (ch, at) => {
    const code = ch.charCodeAt(0);
    if (code > 0xffff || text[at - 1] === '\\')
      throw new Error(
        `scripts/bundle.mjs: cli.cjs holds U+${code.toString(16)} where \\u cannot stand for it (${JSON.stringify(text.slice(at - 40, at))}); check the bundle`,
      );
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
  if (ascii !== text) writeFileSync(file, ascii);
}
// A dynamic import() of a Node built-in left in cli.cjs goes through the launcher's importModuleDynamically, which
// Node flags as experimental with a warning on stderr at run time (creds list printed one). Import built-ins statically.
{
  const left = readFileSync(join(out, 'cli.cjs'), 'latin1').match(/\bimport\((["'])node:[^"']+\1\)/g);
  if (left)
    throw new Error(
      `scripts/bundle.mjs: cli.cjs imports ${left.join(', ')} dynamically; import Node's built-ins statically`,
    );
}
// The bundle and package.json's oclif section (topic descriptions live there, not in cli.cjs): a topic's new words
// must not be answered from a help cache entry of the old ones.
const bundleHash = createHash('sha256')
  .update(readFileSync(join(out, 'cli.cjs')))
  .update(JSON.stringify(pjson.oclif ?? {}))
  .digest('hex')
  .slice(0, 16);

// ---- oclif's configuration beside the bundle ---------------------------------------------------------------------
// The package is published as fleet-cli (npm's `fleet` is another package), but the program is `fleet`: oclif names the
// root plugin, and `fleet --version` (`fleet/0.1.0 linux-x64 ...`), after the package.json it reads here, so this one
// carries the command's name.
const programName = pjson.oclif.bin;
const { plugins: _plugins, commands: _commands, hooks = {}, ...oclif } = pjson.oclif;
const target = './commands.cjs';
writeFileSync(
  join(out, 'package.json'),
  JSON.stringify(
    {
      name: programName,
      version: pjson.version,
      description: pjson.description,
      license: pjson.license,
      type: 'module',
      oclif: {
        ...oclif,
        commands: { strategy: 'explicit', target, identifier: 'COMMANDS' },
        hooks: Object.fromEntries(
          Object.keys(hooks).map((h) => [
            h,
            { target, identifier: h === 'command_not_found' ? 'COMMAND_NOT_FOUND' : unknownHook(h) },
          ]),
        ),
      },
    },
    null,
    2,
  ) + '\n',
);
function unknownHook(h) {
  throw new Error(`package.json names an oclif hook "${h}" that scripts/bundle.mjs does not export from the bundle`);
}

// ---- the launcher --------------------------------------------------------------------------------------------------
// What oclif's explicit strategy imports: the bundle the launcher has already run (never a second copy of it).
writeFileSync(
  join(out, 'commands.cjs'),
  "// Written by scripts/bundle.mjs: the command table of the cli.cjs that fleet.mjs loaded.\nmodule.exports = globalThis[Symbol.for('fleet.bundle')]\n",
);
// The wrapper around cli.cjs, on its first line so that line numbers in stack traces stay those of the file.
const WRAP = ['(function (exports, require, module, __filename, __dirname, __fleetUrl) {', '\n})'];
const writeLauncher = ({ helpSubjects, topicsOnly }) =>
  writeFileSync(
    join(out, 'fleet.mjs'),
    `#!/usr/bin/env node
// fleet's launcher, written by scripts/bundle.mjs. \`fleet --version\` is answered without the bundle, with what oclif
// would print (its user agent); WSL, which oclif names as a platform of its own, goes the long way. Built-ins come from
// process.getBuiltinModule (22.3+) where there is one: an ES module import of them builds a facade, measurable against
// \`node -e ""\`, which is what \`--version\` is compared with.
//
// Anything else runs cli.cjs, the whole CLI in one file, compiled by vm.Script with V8's code cache. Node's own compile
// cache (module.enableCompileCache) stores what V8 compiled before a module ran, which is its top level only: every
// function a command runs was compiled again at every start. Here the cache is taken when the process exits, so it
// holds the functions the run compiled; a command the cache has not seen yet (its id is recorded beside it) takes a
// new one on its way out, which keeps what the old one held, so after a few commands the cache holds them all.
// Rules for the cache, whose contents V8 runs as code: it lives in FLEET_CODE_CACHE (empty: none) or in
// <tmpdir>/fleet-code-cache-<uid>; it is read only from a directory of this user's that no one else may write to, and
// only for this very bundle (the build's hash of cli.cjs is in its name) and Node (version, architecture). V8 refuses
// a cache taken with other flags; then, or when it cannot be read or written, fleet runs exactly as without one.
//
// Help (\`--help\`, \`-h\`, \`help\`, a topic alone, or no arguments) is answered from the same directory, without the
// bundle, with the bytes oclif printed the first time it was asked the same thing in the same setting: a run that
// renders help through oclif keeps what it wrote to stdout, and if it wrote nothing to stderr and exits 0, stores it
// in help-<bundle hash>-<hash of the key>.txt, the whole key on the first line. The key is everything oclif's help
// depends on: this bundle, Node's version, the platform and architecture (the root help's VERSION), the width oclif
// wraps to and whether and how it colours (help-fast.cjs: oclif's own code for both), HOME, XDG_CONFIG_HOME, DEBUG and
// every FLEET_ and OCLIF_ variable (where oclif looks for a theme, what it logs, what fleet reads), and argv exactly.
// oclif's theme file is named in the entry, and a run where it exists goes to oclif (a themed run stores nothing).
// Read only from the code cache's directory under its rules, and only a regular file of this user's; anything else
// (another shape of argv, an unknown command, a corrupt or foreign entry) goes to oclif as before.
const builtin = (name) => process.getBuiltinModule?.(name) ?? import(name).then((m) => m.default)
const fs = await builtin('node:fs')
const {existsSync, readFileSync} = fs
const {arch, platform, release, tmpdir} = await builtin('node:os')
const {join} = await builtin('node:path')

const argv = process.argv.slice(2)
// package.json's engines, said once per run on an older Node (npm only warns at install, and only if it checks): fleet
// is tested on 22 and newer; an older one is told so on stderr (FLEET_NODE_VERSION_OK=1 silences it).
const minimum = ${JSON.stringify(Number(/^>=(\d+)$/.exec(pjson.engines.node)[1]))}
if (Number(process.versions.node.split('.')[0]) < minimum && process.env.FLEET_NODE_VERSION_OK !== '1') {
  process.stderr.write(\`warning: fleet needs Node.js \${minimum} or newer; this is \${process.version} (\${process.execPath}), on which it is not tested: install Node \${minimum}+, or use fleet's single executable, which carries its own Node\\n\`)
}
const wsl = () => {
  try {
    return platform() === 'linux' && (/microsoft/i.test(release()) || /microsoft/i.test(readFileSync('/proc/version', 'utf8')) ||
      existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL'))
  } catch {
    return true
  }
}
// The exec entries of \`fleet kubeconfig export\`: a cached credential is printed from credential-fast.mjs alone; a miss,
// or anything not in the exported form, goes on to the CLI.
const fromCache = async () =>
  argv[0] === 'kubeconfig' && argv[1] === 'credential' &&
  (await import('./credential-fast.mjs')).answerFromCache(argv.slice(2), process.env, (text) => process.stdout.write(text))
// The directory of both caches, and the rule for reading from it: ours and no one else's, a directory (not a link)
// owned by this user that group and others cannot write to.
const uid = process.getuid?.()
const cacheDir = process.env.FLEET_CODE_CACHE ?? join(tmpdir(), \`fleet-code-cache-\${uid ?? 'user'}\`)
const ownDir = () => {
  const st = fs.lstatSync(cacheDir)
  return st.isDirectory() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0
}
// Written whole under another name, then renamed: a reader sees the old file or the new one, never a part.
const saveFile = (file, bytes) => {
  try {
    fs.mkdirSync(cacheDir, {recursive: true, mode: 0o700})
    if (!ownDir()) return
    const tmp = \`\${file}.\${process.pid}.tmp\`
    fs.writeFileSync(tmp, bytes, {mode: 0o600, flag: 'wx'})
    fs.renameSync(tmp, file)
  } catch {}
}
const HELP_FLAGS = new Set(${JSON.stringify(['--help', ...(pjson.oclif.additionalHelpFlags ?? [])])})
const helpSubjects = new Set(${JSON.stringify(helpSubjects)})
const topicsOnly = new Set(${JSON.stringify(topicsOnly)})
const helpShaped = () => {
  const subject = (words) => words.length <= 3 && words.every((w) => /^[a-z][a-z0-9-]*$/.test(w)) && (words.length === 0 || helpSubjects.has(words.join(':')))
  if (argv.length === 0) return true
  if (HELP_FLAGS.has(argv[argv.length - 1])) return subject(argv.slice(0, -1))
  if (argv[0] === 'help') return subject(argv.slice(1))
  return subject(argv) && topicsOnly.has(argv.join(':'))
}
const helpEntry = () => {
  if (!cacheDir || !helpShaped() || wsl()) return undefined
  const probe = (process.getBuiltinModule?.('node:module') ?? {createRequire: () => () => ({})}).createRequire(import.meta.url)('./help-fast.cjs')
  if (probe.width === undefined) return undefined
  const env = Object.keys(process.env).filter((k) => /^(FLEET_|OCLIF_)/.test(k) || ['HOME', 'XDG_CONFIG_HOME', 'DEBUG'].includes(k)).sort().map((k) => [k, process.env[k]])
  const key = JSON.stringify([${JSON.stringify(bundleHash)}, process.version, process.arch, platform(), probe.width, probe.colour, env, argv])
  return {key, file: join(cacheDir, \`help-${bundleHash}-\${hash64(key)}.txt\`)}
}
// 64 bits of a fast non-cryptographic hash (two 32-bit multiplicative streams): the entry's name, and a check of its
// text against a file cut short or changed by something other than this launcher. Not a defence against a writer:
// the directory's rule is that (node:crypto alone would cost more than the rest of the answer).
const hash64 = (data) => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < data.length; i++) {
    const c = typeof data === 'string' ? data.charCodeAt(i) : data[i]
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0')
}
const fromHelpCache = (help) => {
  try {
    if (!help || !ownDir()) return false
    const st = fs.lstatSync(help.file)
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return false
    const bytes = fs.readFileSync(help.file)
    const nl = bytes.indexOf(10)
    const [key, theme, sum] = JSON.parse(bytes.subarray(0, nl).toString())
    const text = bytes.subarray(nl + 1)
    if (nl < 0 || key !== help.key || typeof theme !== 'string' || sum !== hash64(text) || existsSync(theme)) return false
    process.stdout.write(text)
    return true
  } catch {
    return false
  }
}
let help
if (argv.length === 1 && argv[0] === '--version' && !wsl()) {
  process.stdout.write(\`${programName}/${pjson.version} \${platform()}-\${arch() === 'ia32' ? 'x86' : arch()} node-\${process.version}\\n\`)
} else if (fromHelpCache(help = helpEntry())) {
  // Answered.
} else if (await fromCache()) {
  // Answered.
} else {
  const {fileURLToPath} = await builtin('node:url')
  const vm = await builtin('node:vm')
  // V8 grows the old generation by a factor it picks from the allocation rate, up to 4x at a time, so a run over
  // thousands of clusters (fast allocation, most of it short-lived) reserved far more heap than it kept: 10,000
  // clusters peaked at 435 MB RSS with 150 MB in use. A fixed 1.6x keeps the peak near 310 MB for the same CPU (issue 23's
  // limit is 400 MB). Set before the bundle is compiled, so the code cache is taken and checked under the same flags.
  ;(await builtin('node:v8')).setFlagsFromString('--heap-growing-percent=60')
  const url = new URL('./cli.cjs', import.meta.url)
  const filename = fileURLToPath(url)
  const cache = codeCache()
  const script = new vm.Script(${JSON.stringify(WRAP[0])} + fs.readFileSync(filename, 'latin1') + ${JSON.stringify(WRAP[1])}, {
    filename,
    cachedData: cache.data,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  // The command as typed (\`clusters list -c x\` → clusters:list; \`--help\` alone → --help); a word that names no
  // command (a typo) takes no new cache. A command's help (\`clusters list --help\`) runs oclif's help, not the
  // command, so it is recorded as --help: recorded as clusters:list, it kept the command's own first run from taking
  // the cache, and every later \`clusters list\` compiled what it ran again (a newcomer reads the help first).
  const known = new Set(${JSON.stringify(Object.keys(loaders).sort())})
  const words = []
  for (const a of argv) {
    if (a.startsWith('-') || words.length === 2) break
    words.push(a)
  }
  const dashes = argv.indexOf('--')
  const asksHelp = (dashes === -1 ? argv : argv.slice(0, dashes)).some((a) => HELP_FLAGS.has(a))
  const id = asksHelp ? '--help' : words.length === 0 ? (argv[0] ?? '') : [words.join(':'), words[0]].find((w) => known.has(w))
  if (cache.dir && id !== undefined && (!cache.data || script.cachedDataRejected || (!cache.ids.includes(id) && cache.ids.length < 64))) {
    process.once('exit', (code) => {
      if (code < 128) cache.save(script.createCachedData(), script.cachedDataRejected || !cache.data ? [id] : [...cache.ids, id])
    })
  }
  const module = {exports: {}}
  script.runInThisContext()(module.exports, (await builtin('node:module')).createRequire(filename), module, filename, join(filename, '..'), url.href)
  globalThis[Symbol.for('fleet.bundle')] = module.exports
  if (help) {
    // What oclif prints for this help, kept for the next run in the same setting if it is the whole answer (above).
    const printed = []
    let spoiled = false
    const {stdout, stderr} = process
    const write = stdout.write
    const writeErr = stderr.write
    stdout.write = function (chunk, encoding, ...rest) {
      printed.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk))
      return write.call(this, chunk, encoding, ...rest)
    }
    stderr.write = function (...args) {
      spoiled = true
      return writeErr.apply(this, args)
    }
    process.once('exit', (code) => {
      const theme = module.exports.helpTheme?.()
      if (code !== 0 || spoiled || printed.length === 0 || !theme || theme.themed) return
      const text = Buffer.concat(printed)
      saveFile(help.file, Buffer.concat([Buffer.from(JSON.stringify([help.key, theme.file, hash64(text)]) + '\\n'), text]))
    })
  }
  await module.exports.main()

  function codeCache() {
    const dir = cacheDir
    if (!dir) return {ids: []}
    const file = join(dir, \`cli-${bundleHash}-\${process.version}-\${process.arch}.v8\`)
    const cache = {dir, ids: [], save: (data, ids) => saveFile(file, Buffer.concat([Buffer.from(JSON.stringify(ids) + '\\n'), data]))}
    try {
      if (!ownDir()) return cache
      const bytes = fs.readFileSync(file)
      const nl = bytes.indexOf(10)
      cache.ids = JSON.parse(bytes.subarray(0, nl).toString())
      cache.data = bytes.subarray(nl + 1)
    } catch {}
    return cache
  }
}
`,
    { mode: 0o755 },
  );

// ---- the manifest: every command loaded once, here, so that no start-up has to ---------------------------------------
// cli.cjs run the launcher's way (without a code cache), so commands.cjs finds it.
{
  const filename = join(out, 'cli.cjs');
  const module = { exports: {} };
  new vm.Script(WRAP[0] + readFileSync(filename, 'latin1') + WRAP[1], {
    filename,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  }).runInThisContext()(module.exports, createRequire(filename), module, filename, out, pathToFileURL(filename).href);
  globalThis[Symbol.for('fleet.bundle')] = module.exports;
  await module.exports.loadAllCommands();
}
const { Plugin } = await import('@oclif/core');
const plugin = new Plugin({
  isRoot: true,
  root: out,
  ignoreManifest: true,
  errorOnManifestCreate: true,
  respectNoCacheDefault: true,
});
await plugin.load();
const ids = Object.keys(plugin.manifest.commands);
const missing = Object.keys(loaders).filter((id) => !ids.includes(id));
if (missing.length > 0) throw new Error(`the manifest lacks ${missing.join(', ')}`);
writeFileSync(join(out, 'oclif.manifest.json'), JSON.stringify(plugin.manifest, null, 2) + '\n');
// The launcher, with what its help cache may answer: every command whose help is the same whenever it is asked (oclif
// loads a command with dynamic help to compute its flags' defaults, which could read anything), and the topics.
{
  const commands = Object.values(plugin.manifest.commands);
  const helpSubjects = commands.filter((c) => !c.hasDynamicHelp).map((c) => c.id);
  const prefixes = commands.flatMap((c) =>
    c.id
      .split(':')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join(':')),
  );
  const topicsOnly = [...new Set([...prefixes, ...Object.keys(pjson.oclif.topics ?? {})])]
    .filter((t) => !ids.includes(t))
    .sort();
  writeLauncher({ helpSubjects: [...helpSubjects, ...topicsOnly].sort(), topicsOnly });
}
const kb = (f) => `${(statSync(join(out, f)).size / 1024).toFixed(0)} KiB`;
console.log(`dist/bundle: cli.cjs ${kb('cli.cjs')}, ${ids.length} commands`);
