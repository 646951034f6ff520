#!/usr/bin/env node
// Builds dist/bundle/ from dist/ (run after tsc by `npm run build`): everything `fleet` needs at run time, with no
// node_modules beside it (docs/decisions.md, "One bundle").
//   fleet.mjs             the launcher: Node's compile cache on, `--version` answered without oclif, then cli.mjs
//   cli.mjs               esbuild's single-file bundle of src/entry/main.ts, every command and their dependencies;
//                         each command (and so each heavy module it imports) is evaluated only when it runs
//   cli.mjs.LEGAL.txt     the licence comments esbuild collected from the bundled packages
//   package.json          fleet's oclif configuration, pointed at cli.mjs (explicit strategy: no directory scan),
//                         without `plugins`: the help and autocomplete commands are bundled as fleet's own
//   oclif.manifest.json   every command's flags and help, so help and lookup never load a command
// Usage: node scripts/bundle.mjs
import {cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {build} from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist/bundle')
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

// ---- the command table: fleet's commands from dist/commands, the plugins' from their manifests ----------------------
const loaders = {}
const commandsDir = join(root, 'dist/commands')
const walk = (d) => readdirSync(d, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.js') ? [join(d, e.name)] : []))
for (const file of walk(commandsDir)) {
  const id = relative(commandsDir, file).replace(/\.js$/, '').split('/').filter((p, i, all) => !(p === 'index' && i === all.length - 1)).join(':')
  loaders[id] = file
}
const REPLACED = new Set(['autocomplete', 'autocomplete:create'])
for (const plugin of pjson.oclif.plugins ?? []) {
  const dir = join(root, 'node_modules', plugin)
  const manifest = JSON.parse(readFileSync(join(dir, 'oclif.manifest.json'), 'utf8'))
  for (const [id, cmd] of Object.entries(manifest.commands)) {
    // fleet's own autocomplete and autocomplete:create extend the plugin's (src/commands/autocomplete/) and take their place.
    if (loaders[id] && REPLACED.has(id)) continue
    if (loaders[id]) throw new Error(`${plugin} and fleet both define the command ${id}`)
    loaders[id] = join(dir, ...cmd.relativePath)
  }
}
// Each loader takes the module's default export (fleet's commands) or its only command class (the plugins').
const table = Object.entries(loaders)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([id, file]) => `  ${JSON.stringify(id)}: () => import(${JSON.stringify(file)}).then(commandOf),`)
  .join('\n')
const entry = `import {COMMANDS, COMMAND_NOT_FOUND, loadAll, run} from ${JSON.stringify(join(root, 'dist/entry/main.js'))}
const commandOf = (m) => m.default ?? Object.values(m).find((v) => typeof v === 'function' && typeof v.run === 'function')
const LOADERS = {
${table}
}
export {COMMANDS, COMMAND_NOT_FOUND}
export const main = () => run(LOADERS, import.meta.url)
export const loadAllCommands = () => loadAll(LOADERS)
`

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
      b.onLoad({filter: /[\\/]dist[\\/].*\.js$/}, (args) => {
        let text = readFileSync(args.path, 'utf8')
        if (!text.includes('import.meta.url')) return undefined
        text = text.replace(/createRequire\(import\.meta\.url\)\(('[^']+')\)/g, 'require($1)')
        text = text.replace(/new URL\('([^']+)', import\.meta\.url\)/g, (whole, rel) => {
          const file = join(dirname(args.path), rel)
          const inPackage = relative(root, file)
          if (inPackage.startsWith('..') || inPackage.startsWith('dist/')) return whole
          mkdirSync(dirname(join(out, inPackage)), {recursive: true})
          cpSync(file, join(out, inPackage))
          return `new URL(${JSON.stringify(`./${inPackage}`)}, import.meta.url)`
        })
        return {contents: text, loader: 'js'}
      })
    },
  }
}

/**
 * `import ... from 'node:http'` in an ES module makes Node 24 build the module's ESM facade, which reads every export,
 * including the lazy ones that load its bundled undici (checked: process.moduleLoadList then lists
 * internal/deps/undici/undici; `require('node:http')` does not): tens of milliseconds at every start of a command that
 * reaches the HTTP client. `import process from 'node:process'` (is-wsl, chalk's supports-color) reads
 * process.allowedNodeEnvironmentFlags, whose getter builds a set of every Node option (~7 ms CPU in a profile of
 * `clusters list`). Through require() the bundle gets the same objects without the facades.
 */
// Only those two: each shim is a module, and esbuild puts one shared by several commands in a chunk of its own, which
// costs a file to resolve, read and link at start-up (routing every built-in so made 17 extra chunks for `clusters
// list` and cost about what it saved).
const BUILTINS = new Set(['http', 'process'])
function facadesThroughRequire() {
  return {
    name: 'fleet-facades-through-require',
    setup(b) {
      b.onResolve({filter: /^(node:)?[a-z][a-z0-9_/]*$/}, (args) => {
        const name = args.path.replace(/^node:/, '')
        if (!BUILTINS.has(name)) return undefined
        // The shim's own require() is Node's (left external): resolving it to the shim again made module.exports the
        // shim itself, an empty object (http.request and http.Agent undefined: plain-http clusters and proxies broke).
        if (args.namespace === 'fleet-cjs-builtin') return {path: `node:${name}`, external: true}
        // Packages (the proxy agents, loaded only when a cluster names a proxy) keep their own import.
        if (args.importer.includes('/node_modules/')) return undefined
        return {path: `node:${name}`, namespace: 'fleet-cjs-builtin'}
      })
      b.onLoad({filter: /.*/, namespace: 'fleet-cjs-builtin'}, (args) => ({contents: `module.exports = require(${JSON.stringify(args.path)})`, loader: 'js'}))
    },
  }
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
    {file: /[\\/]@oclif[\\/]core[\\/]lib[\\/]index\.js$/, from: '\ncheckNodeVersion();\n', to: '\n'},
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
  ]
  // Packages oclif requires at the top of a module but uses only inside functions that fleet's common paths (help,
  // a command that succeeds) never call, or call late: finding commands by glob (tinyglobby, which brings fdir and
  // picomatch; the explicit strategy never globs), matching plugin names (minimatch), the spinner's frames, reading
  // an rc file (lilconfig), templates (ejs), the error and help formatters, reading flags from stdin (node:readline),
  // performance marks, made only with OCLIF_PERFORMANCE (node:perf_hooks), and debug (see above). Each such `require` becomes an object
  // that loads the package on its first property read (oclif reads these only as `x_1.name` or `x_1.default`,
  // checked when this was written), so a run that never uses one never evaluates it.
  const lazy = ['node:readline', 'node:perf_hooks', 'debug', 'tinyglobby', 'minimatch', 'cli-spinners', 'lilconfig', 'ejs', 'clean-stack', 'indent-string', 'wrap-ansi', 'string-width', 'widest-line']
  const requireOf = new RegExp(`^const (\\w+) = (__importDefault\\()?require\\("(${lazy.join('|')})"\\)\\)?;$`, 'gm')
  const lazyHelper = '\nfunction __fleetLazy(load) { let m; return new Proxy({}, {get: (_, k) => (m ??= load())[k]}) }\n'
  return {
    name: 'fleet-oclif-startup-edits',
    setup(b) {
      b.onLoad({filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/}, (args) => {
        let text = readFileSync(args.path, 'utf8')
        for (const edit of edits.filter((e) => e.file.test(args.path))) {
          if (text.split(edit.from).length !== 2) throw new Error(`scripts/bundle.mjs: ${args.path} no longer holds ${JSON.stringify(edit.from)} once; check the edit`)
          text = text.replace(edit.from, edit.to)
          edit.applied = true
        }
        let lazied = false
        text = text.replace(requireOf, (whole, name, importDefault, pkg) => {
          // Only a binding read as `name.property` can be deferred; anything else keeps the eager require.
          if (new RegExp(`\\b${name}\\b(?!\\.\\w)`).test(text.replace(whole, ''))) return whole
          lazied = true
          return `const ${name} = __fleetLazy(() => ${importDefault ? '__importDefault(' : ''}require("${pkg}")${importDefault ? ')' : ''});`
        })
        return {contents: lazied ? text + lazyHelper : text, loader: 'js'}
      })
      b.onEnd(() => {
        const missed = edits.filter((e) => !e.applied).map((e) => e.file)
        if (missed.length > 0) throw new Error(`scripts/bundle.mjs: no file matched ${missed.join(', ')}; check the oclif edits`)
      })
    },
  }
}

rmSync(out, {recursive: true, force: true})
mkdirSync(out, {recursive: true})
const built = await build({
  stdin: {contents: entry, resolveDir: root, sourcefile: 'fleet-bundle-entry.js', loader: 'js'},
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // Split at every dynamic import: what a command needs is read and compiled only when it runs (one file holding all of
  // it made `--help` ~40% slower in CPU time). Chunks sit beside cli.mjs, so a URL relative to any of them is the same.
  splitting: true,
  outdir: out,
  entryNames: 'cli',
  chunkNames: '[name]-[hash]',
  outExtension: {'.js': '.mjs'},
  plugins: [keepLazyAndAssets(), facadesThroughRequire(), oclifStartupEdits()],
  // The CommonJS packages (oclif, ajv, ...) call require() for Node's built-ins; an ES module has no require of its own.
  banner: {js: "import {createRequire as __fleetCreateRequire} from 'node:module';const require = __fleetCreateRequire(import.meta.url);"},
  // oclif requires typescript only to read a tsconfig.json in development; dist/bundle/ has none.
  external: ['typescript'],
  minify: !process.env.FLEET_BUNDLE_NOMINIFY,
  // Error and class names stay readable in messages and stack traces.
  keepNames: true,
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: !!process.env.FLEET_BUNDLE_META,
})
// FLEET_BUNDLE_META=FILE writes esbuild's metafile (what each package adds: https://esbuild.github.io/analyze/).
if (process.env.FLEET_BUNDLE_META) writeFileSync(process.env.FLEET_BUNDLE_META, JSON.stringify(built.metafile))

// ---- oclif's configuration beside the bundle ---------------------------------------------------------------------
const {plugins: _plugins, commands: _commands, hooks = {}, ...oclif} = pjson.oclif
const target = './cli.mjs'
writeFileSync(join(out, 'package.json'), JSON.stringify({
  name: pjson.name,
  version: pjson.version,
  description: pjson.description,
  license: pjson.license,
  type: 'module',
  oclif: {
    ...oclif,
    commands: {strategy: 'explicit', target, identifier: 'COMMANDS'},
    hooks: Object.fromEntries(Object.keys(hooks).map((h) => [h, {target, identifier: h === 'command_not_found' ? 'COMMAND_NOT_FOUND' : unknownHook(h)}])),
  },
}, null, 2) + '\n')
function unknownHook(h) {
  throw new Error(`package.json names an oclif hook "${h}" that scripts/bundle.mjs does not export from the bundle`)
}

// ---- the launcher --------------------------------------------------------------------------------------------------
writeFileSync(join(out, 'fleet.mjs'), `#!/usr/bin/env node
// fleet's launcher, written by scripts/bundle.mjs. \`fleet --version\` is answered without loading oclif, with what
// oclif would print (its user agent); WSL, which oclif names as a platform of its own, goes the long way. Anything else
// switches Node's compile cache (22.1+) on before the bundle loads, so cli.mjs is compiled once per version rather than
// at every start. Built-ins come from process.getBuiltinModule (22.3+) where there is one: an ES module import of
// them builds a facade, measurable against \`node -e ""\`, which is what \`--version\` is compared with.
const builtin = (name) => process.getBuiltinModule?.(name) ?? import(name).then((m) => m.default)
const {existsSync, readFileSync} = await builtin('node:fs')
const {arch, platform, release} = await builtin('node:os')

const argv = process.argv.slice(2)
const wsl = () => {
  try {
    return platform() === 'linux' && (/microsoft/i.test(release()) || /microsoft/i.test(readFileSync('/proc/version', 'utf8')) ||
      existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL'))
  } catch {
    return true
  }
}
if (argv.length === 1 && argv[0] === '--version' && !wsl()) {
  process.stdout.write(\`${pjson.name}/${pjson.version} \${platform()}-\${arch() === 'ia32' ? 'x86' : arch()} node-\${process.version}\\n\`)
} else {
  ;(await builtin('node:module')).enableCompileCache?.()
  const {main} = await import('./cli.mjs')
  await main()
}
`, {mode: 0o755})

// ---- the manifest: every command loaded once, here, so that no start-up has to ---------------------------------------
const bundle = await import(pathToFileURL(join(out, 'cli.mjs')).href)
await bundle.loadAllCommands()
const {Plugin} = await import('@oclif/core')
const plugin = new Plugin({isRoot: true, root: out, ignoreManifest: true, errorOnManifestCreate: true, respectNoCacheDefault: true})
await plugin.load()
const ids = Object.keys(plugin.manifest.commands)
const missing = Object.keys(loaders).filter((id) => !ids.includes(id))
if (missing.length > 0) throw new Error(`the manifest lacks ${missing.join(', ')}`)
writeFileSync(join(out, 'oclif.manifest.json'), JSON.stringify(plugin.manifest, null, 2) + '\n')
const kb = (f) => `${(statSync(join(out, f)).size / 1024).toFixed(0)} KiB`
if (existsSync(join(out, 'cli.mjs'))) console.log(`dist/bundle: cli.mjs ${kb('cli.mjs')}, ${ids.length} commands`)
