#!/usr/bin/env node
// Builds every artifact a release publishes into one directory, and publishes them. The release workflow
// (.github/workflows/release.yml) runs the build part exactly as `npm run release -- --dry-run` runs it here, so what CI
// checks on every change is what a tag publishes.
//
//   node scripts/release.mjs --dry-run    build all, then print what would be pushed where (nothing leaves the machine)
//   node scripts/release.mjs              build all for a real release: stricter (the chart must be there, a tag must
//                                         name package.json's version, committed checksums must match the rebuild)
//   node scripts/release.mjs --publish    push what the build wrote (its plan.json), the commands the dry run printed
// Options: --out DIR (default dist/release; it is emptied, so not dist/ itself, dist/bundle/ or dist/exe/), --skip-build
// (use what `npm run build` already made), --image-tag NAME (the image's local name while it is built; default
// localhost/fleet:<version>).
//
// What DIR holds (every file but plan.json and image/ is a release asset, listed in checksums.txt):
//   fleet-linux-x64, fleet-linux-arm64                 the single executables (scripts/executable.mjs), each with
//   fleet-credential-linux-x64, -arm64                 .sha256 (sha256sum's format) and .cdx.json (CycloneDX SBOM)
//   kubectl-fleet_cli-linux-amd64.tar.gz, -arm64       the krew archives, and fleet-cli.yaml, the filled krew manifest
//   fleet-cli-<version>.tgz                            the npm package (`npm pack`), published as fleet-cli, command fleet
//   <chart>-<version>.tgz                              the Helm chart of deploy/chart (`helm package`), pushed as OCI
//   checksums.txt                                      the SHA-256 of every file above (`sha256sum -c checksums.txt`)
//   image/fleet-<version>.oci.tar                      the container image (scripts/image.sh, buildah) as an OCI archive,
//                                                      pushed as it is, so the registry's digest is the archive's
//   plan.json                                          what --publish pushes where, with sizes and digests
// Publishing needs, besides the build's tools: gh (GH_TOKEN), skopeo (logged in to the image registry), helm (logged in
// to the chart registry), npm (a token for the npm registry; --provenance needs the workflow's OIDC token). The targets
// follow GITHUB_REPOSITORY (owner/name; default from package.json's repository): the image ghcr.io/<owner>/fleet, the
// chart oci://ghcr.io/<owner>/charts, the GitHub release <owner>/<name> v<version>; FLEET_RELEASE_IMAGE_REPO and
// FLEET_RELEASE_CHART_REPO override the first two.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
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
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const die = (msg) => {
  console.error(`error: scripts/release.mjs: ${msg}`);
  process.exit(2);
};
const fail = (msg) => {
  console.error(`error: scripts/release.mjs: ${msg}`);
  process.exit(1);
};

// ---- arguments -------------------------------------------------------------------------------------------------------
let mode = 'release';
let out = join(root, 'dist/release');
let skipBuild = false;
let imageTag;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => (i + 1 < argv.length && argv[i + 1] !== '' ? argv[++i] : die(`${a} needs a value`));
  if (a === '--dry-run' || a === '--publish') {
    if (mode !== 'release') die(`${a}: only one of --dry-run and --publish`);
    mode = a.slice(2);
  } else if (a === '--out') out = resolve(value());
  else if (a === '--skip-build') skipBuild = true;
  else if (a === '--image-tag') imageTag = value();
  else if (a === '-h' || a === '--help') {
    const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    console.log(/^((?:\/\/.*\n)+)/m.exec(text.split('\n').slice(1).join('\n'))[1].replace(/^\/\/ ?/gm, ''));
    process.exit(0);
  } else die(`unknown argument ${a} (see --help)`);
}
const dryRun = mode === 'dry-run';
// The directory is emptied before a build: never the repository, a home or the root.
if (out === '/' || out === process.env.HOME || !relative(out, root).startsWith('..'))
  die(`--out ${out}: choose a directory of its own (it is emptied), not one that holds the repository`);
// Nor one the build writes or reads (dist/ itself, dist/bundle/, dist/exe/, or a directory in them): the build would
// empty it, or emptying it would remove what the release packs.
const inside = (dir, parent) => !relative(parent, dir).startsWith('..');
for (const built of ['dist/bundle', 'dist/exe'].map((d) => join(root, d)))
  if (inside(built, out) || inside(out, built))
    die(
      `--out ${out}: choose a directory of its own (it is emptied), not ${relative(root, built)}/ or one that holds it`,
    );

const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const version = pjson.version;
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const sha256File = (file) => sha256(readFileSync(file));
const size = (n) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);
const quote = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const run = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });

// ---- where a release goes --------------------------------------------------------------------------------------------
function targets() {
  const fromPackage = /github\.com[/:]([^/]+\/[^/#.]+)/.exec(
    typeof pjson.repository === 'string' ? pjson.repository : (pjson.repository?.url ?? pjson.homepage ?? ''),
  )?.[1];
  const repo = process.env.GITHUB_REPOSITORY || fromPackage || 'fleet-cli/fleet';
  // Registries take lowercase names only; GitHub owners may have capitals.
  const owner = repo.split('/')[0].toLowerCase();
  return {
    github: repo,
    image: process.env.FLEET_RELEASE_IMAGE_REPO || `ghcr.io/${owner}/fleet`,
    chart: process.env.FLEET_RELEASE_CHART_REPO || `oci://ghcr.io/${owner}/charts`,
    npm: 'https://registry.npmjs.org/',
  };
}

if (mode === 'publish') publish();
else build();

// ---- build -----------------------------------------------------------------------------------------------------------
function build() {
  const started = Date.now();
  // A tag's release must be of the version package.json names (the krew manifest, the npm package and the image's tag
  // all carry that one).
  if (process.env.GITHUB_REF_TYPE === 'tag' && process.env.GITHUB_REF_NAME !== `v${version}`)
    die(`the tag is ${process.env.GITHUB_REF_NAME}, package.json's version ${version}: tag v${version}, or bump it`);
  // The action's release commits the executables' checksums on its tag (docs/verify.md, "Releasing the action") and
  // downloads only an executable of that checksum: read them before the build empties dist/.
  const committed = committedChecksums();
  // Whether the chart can be packaged is known before anything is built: a release without it stops here.
  const chartTool = chartSource();
  if (chartTool.skipped && !dryRun) fail(`the chart is part of a release: ${chartTool.skipped}`);

  // The output directory is emptied first, so nothing of an earlier release is left in it if this build fails, and
  // made again only after the steps that rebuild dist/: `npm run build` begins with `rm -rf dist`, which took the
  // default dist/release/ with it, and every release from a checkout ended in `ENOENT: ... copyfile
  // dist/exe/fleet-linux-x64 -> dist/release/fleet-linux-x64` (issue 49).
  rmSync(out, { recursive: true, force: true });
  if (!skipBuild) run('npm', ['run', '--silent', 'build']);
  if (!existsSync(join(root, 'dist/bundle/fleet.mjs'))) die('no dist/bundle/fleet.mjs: run `npm run build` first');

  // The executables, fleet-credential, their checksums and SBOMs, the krew archives and manifest: scripts/executable.mjs.
  run(process.execPath, [join(root, 'scripts/executable.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
  // From here on nothing cleans dist/ (npm pack runs no prepack build, scripts/image.sh --skip-build and helm package
  // only read it): the release files go into a directory that stays.
  mkdirSync(join(out, 'image'), { recursive: true });
  const exe = join(root, 'dist/exe');
  for (const arch of ['x64', 'arm64']) {
    for (const f of [`fleet-linux-${arch}`, `fleet-credential-linux-${arch}`]) {
      copyFileSync(join(exe, f), join(out, f));
      copyFileSync(join(exe, `${f}.sha256`), join(out, `${f}.sha256`));
    }
    copyFileSync(join(exe, `fleet-linux-${arch}.cdx.json`), join(out, `fleet-linux-${arch}.cdx.json`));
    credentialSbom(arch);
  }
  for (const f of ['kubectl-fleet_cli-linux-amd64.tar.gz', 'kubectl-fleet_cli-linux-arm64.tar.gz'])
    copyFileSync(join(exe, f), join(out, f));
  copyFileSync(join(exe, 'krew/fleet-cli.yaml'), join(out, 'fleet-cli.yaml'));
  for (const [name, want] of Object.entries(committed)) {
    const got = readFileSync(join(out, `${name}.sha256`), 'utf8').split(/\s+/)[0];
    if (got === want) continue;
    const msg = `dist/exe/${name}.sha256 committed on this ref says ${want}, the rebuild is ${got}: the action would refuse the asset`;
    if (dryRun) console.error(`note: ${msg}`);
    else fail(msg);
  }

  const npmTarball = npmPackage();
  const image = containerImage();
  const chart = chartTool.skipped ? chartTool : helmChart(chartTool);

  // checksums.txt: every release asset, as sha256sum prints it.
  const assets = readdirSync(out, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'plan.json' && e.name !== 'checksums.txt')
    .map((e) => e.name)
    .sort();
  writeFileSync(join(out, 'checksums.txt'), assets.map((f) => `${sha256File(join(out, f))}  ${f}\n`).join(''));
  for (const f of assets.filter((a) => a.endsWith('.sha256'))) {
    const [sum, name] = readFileSync(join(out, f), 'utf8').trim().split(/\s+/);
    if (sum !== sha256File(join(out, name))) fail(`${f} does not match ${name}`);
  }
  assets.push('checksums.txt');

  const t = targets();
  const plan = {
    version,
    dryRun,
    assets: assets.map((f) => ({ file: f, size: statSync(join(out, f)).size, sha256: sha256File(join(out, f)) })),
    image: {
      archive: relative(out, image.archive),
      digest: image.digest,
      size: statSync(image.archive).size,
      name: t.image,
    },
    chart: chart.file
      ? { file: chart.file, name: `${t.chart.replace(/^oci:\/\//, '')}/${chart.name}` }
      : { skipped: chart.skipped },
    npm: { file: npmTarball, name: pjson.name },
    pushes: [
      {
        what: 'GitHub release',
        to: `https://github.com/${t.github}/releases/tag/v${version}`,
        command: [
          'gh',
          'release',
          'create',
          `v${version}`,
          '--repo',
          t.github,
          '--verify-tag',
          '--title',
          `fleet v${version}`,
          '--generate-notes',
          ...assets,
        ],
      },
      {
        what: 'container image',
        to: `${t.image}:${version}@${image.digest}`,
        command: [
          'skopeo',
          'copy',
          '--preserve-digests',
          '--digestfile',
          'image/pushed.digest',
          `oci-archive:${relative(out, image.archive)}`,
          `docker://${t.image}:${version}`,
        ],
      },
      ...(chart.file
        ? [
            {
              what: 'Helm chart',
              to: `${t.chart}/${chart.name}:${version}`,
              command: ['helm', 'push', chart.file, t.chart],
            },
          ]
        : []),
      {
        what: 'npm package',
        to: `${t.npm}${pjson.name}/v/${version}`,
        command: ['npm', 'publish', npmTarball, '--provenance', '--access', 'public', '--registry', t.npm],
      },
    ],
  };
  writeFileSync(join(out, 'plan.json'), JSON.stringify(plan, null, 2) + '\n');

  const where = relative(process.cwd(), out) || '.';
  console.log(
    `\nrelease ${version}: ${assets.length} files in ${where} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
  for (const a of plan.assets) console.log(`  ${a.sha256}  ${size(a.size).padStart(10)}  ${a.file}`);
  console.log(
    `  ${image.digest.slice('sha256:'.length)}  ${size(plan.image.size).padStart(10)}  ${plan.image.archive}`,
  );
  if (chart.skipped) console.log(`chart: skipped (${chart.skipped})`);
  console.log(
    dryRun ? '\ndry run: nothing pushed; --publish would run (in the output directory):' : '\n--publish runs:',
  );
  for (const p of plan.pushes) console.log(`  ${p.what} -> ${p.to}\n    ${p.command.map(quote).join(' ')}`);
}

/** The committed dist/exe/<name>.sha256 of this ref, for the names a release builds ({} when none are committed). */
function committedChecksums() {
  const found = {};
  for (const name of ['fleet-linux-x64', 'fleet-linux-arm64']) {
    const r = spawnSync('git', ['show', `HEAD:dist/exe/${name}.sha256`], { cwd: root, encoding: 'utf8' });
    if (r.status === 0) found[name] = r.stdout.split(/\s+/)[0];
  }
  return found;
}

// fleet-credential is Go's standard library and main.go, nothing else: its SBOM names the Go toolchain that built it,
// as the binary itself records it (`go version -m`).
function credentialSbom(arch) {
  const name = `fleet-credential-linux-${arch}`;
  const file = join(out, name);
  const info = execFileSync('go', ['version', '-m', file], { encoding: 'utf8' });
  const go = /^\S+: (go\S+)/.exec(info)?.[1] ?? die(`go version -m ${name}: no Go version in ${JSON.stringify(info)}`);
  const deps = [...info.matchAll(/^\tdep\t(\S+)\t(\S+)/gm)];
  if (deps.length > 0) die(`${name}: depends on modules (${deps.map((d) => d[1]).join(', ')}); list them in its SBOM`);
  const sum = sha256File(file);
  const serial = `${sum.slice(0, 8)}-${sum.slice(8, 12)}-4${sum.slice(13, 16)}-8${sum.slice(17, 20)}-${sum.slice(20, 32)}`;
  const sbom = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${serial}`,
    version: 1,
    metadata: {
      tools: { components: [{ type: 'application', name: 'scripts/release.mjs', version }] },
      component: {
        type: 'application',
        'bom-ref': 'fleet-credential',
        name: 'fleet-credential',
        version,
        licenses: [{ license: { id: pjson.license } }],
        hashes: [{ alg: 'SHA-256', content: sum }],
        properties: [{ name: 'fleet:platform', value: `linux-${arch}` }],
      },
    },
    components: [
      {
        type: 'library',
        'bom-ref': 'golang-stdlib',
        name: 'stdlib',
        version: go,
        description: 'the Go standard library, linked statically',
        purl: `pkg:golang/stdlib@${go}`,
        licenses: [{ license: { id: 'BSD-3-Clause' } }],
      },
    ],
    dependencies: [{ ref: 'fleet-credential', dependsOn: ['golang-stdlib'] }],
  };
  writeFileSync(`${file}.cdx.json`, JSON.stringify(sbom, null, 2) + '\n');
}

// The npm package: what `npm pack` writes from the build above (no prepack build again). Its name must be what the
// registry publishes and its bin `fleet`.
function npmPackage() {
  const json = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [{ filename }] = JSON.parse(json);
  const inside = JSON.parse(
    execFileSync('tar', ['-xzOf', join(out, filename), 'package/package.json'], { encoding: 'utf8' }),
  );
  if (inside.name !== pjson.name || inside.bin?.fleet !== './bin/run.js')
    fail(`${filename}: its package.json is ${inside.name} with bin ${JSON.stringify(inside.bin)}`);
  return filename;
}

// The image: scripts/image.sh builds it (buildah), then buildah writes it as an OCI archive, which is what is pushed.
function containerImage() {
  if (!onPath('buildah'))
    die('the image is built and archived with buildah, which is not installed (apt-get install buildah)');
  const tag = imageTag ?? `localhost/fleet:${version}`;
  const env = {
    ...process.env,
    STORAGE_DRIVER: process.env.STORAGE_DRIVER ?? 'vfs',
    BUILDAH_ISOLATION: process.env.BUILDAH_ISOLATION ?? 'chroot',
  };
  run('bash', [join(root, 'scripts/image.sh'), '--skip-build', '--engine', 'buildah', '--tag', tag], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const storage = process.env.FLEET_IMAGE_STORAGE
    ? ['--root', process.env.FLEET_IMAGE_STORAGE, '--runroot', `${process.env.FLEET_IMAGE_STORAGE}-run`]
    : [];
  const archive = join(out, 'image', `fleet-${version}.oci.tar`);
  const digestFile = join(out, 'image', 'digest');
  run(
    'buildah',
    [
      ...storage,
      'push',
      '--quiet',
      '--format',
      'oci',
      '--digestfile',
      digestFile,
      tag,
      `oci-archive:${archive}:fleet:${version}`,
    ],
    { env },
  );
  // The manifest's digest, from the archive's own index (what a registry that receives these bytes names it by).
  const index = JSON.parse(execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8' }));
  const digest = index.manifests?.[0]?.digest;
  if (!/^sha256:[0-9a-f]{64}$/.test(digest ?? '')) fail(`${archive}: no manifest digest in its index.json`);
  const pushed = readFileSync(digestFile, 'utf8').trim();
  if (pushed !== digest) fail(`${archive}: buildah says ${pushed}, its index.json ${digest}`);
  return { archive, digest };
}

// The chart of deploy/chart, packaged with this version, when the chart and a Helm v3 are here: FLEET_HELM, else the
// one test/helm/build.sh builds from helm.sh/helm/v3.
function chartSource() {
  const dir = join(root, 'deploy/chart');
  if (!existsSync(join(dir, 'Chart.yaml'))) return { skipped: 'deploy/chart not present' };
  const helm = helmBinary();
  if (!helm) return { skipped: 'no helm: set FLEET_HELM or build one with test/helm/build.sh' };
  return { dir, helm };
}
function helmChart({ dir, helm }) {
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-chart-'));
  try {
    execFileSync(helm, ['package', dir, '--version', version, '--app-version', version, '--destination', tmp], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const [file] = readdirSync(tmp);
    if (!file?.endsWith(`-${version}.tgz`)) fail(`helm package wrote ${file}, not a chart of version ${version}`);
    if (existsSync(join(out, file))) fail(`the chart's ${file} has the name of another release file`);
    renameSync(join(tmp, file), join(out, file));
    return { file, name: file.slice(0, -`-${version}.tgz`.length) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function helmBinary() {
  if (process.env.FLEET_HELM) return process.env.FLEET_HELM;
  if (!existsSync(join(root, 'test/helm/build.sh'))) return undefined;
  const printed = execFileSync('bash', [join(root, 'test/helm/build.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return printed.trim().split('\n').pop();
}

// ---- publish ---------------------------------------------------------------------------------------------------------
// Runs the pushes of plan.json in order, from the output directory. The image and chart digests go to GITHUB_OUTPUT
// (image-digest, image-name, chart-digest, chart-name) for the workflow's attestations of them.
function publish() {
  const planFile = join(out, 'plan.json');
  if (!existsSync(planFile)) die(`no ${planFile}: run the build (npm run release) first`);
  const plan = JSON.parse(readFileSync(planFile, 'utf8'));
  if (plan.dryRun) die(`${planFile} is a dry run's: build again without --dry-run`);
  if (plan.version !== version) die(`${planFile} is of ${plan.version}, package.json says ${version}`);
  // What is pushed is what was checked: every asset still has the digest the build wrote down.
  for (const a of plan.assets)
    if (sha256File(join(out, a.file)) !== a.sha256) fail(`${a.file} changed since the build wrote plan.json`);
  const outputs = [];
  for (const p of plan.pushes) {
    console.log(`${p.what} -> ${p.to}`);
    const [name, ...args] = p.command;
    // The Helm that packaged the chart pushes it (the plan says `helm`).
    const cmd = name === 'helm' ? (helmBinary() ?? die('no helm: set FLEET_HELM or add test/helm/build.sh')) : name;
    const r = spawnSync(cmd, args, { cwd: out, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    process.stdout.write(r.stdout ?? '');
    if (r.status !== 0) fail(`${p.command.join(' ')}: exit ${r.status ?? r.signal}`);
    if (p.what === 'container image') {
      const pushed = readFileSync(join(out, 'image/pushed.digest'), 'utf8').trim();
      if (pushed !== plan.image.digest)
        fail(`the registry names the image ${pushed}, the archive ${plan.image.digest}`);
      outputs.push(`image-name=${plan.image.name}`, `image-digest=${pushed}`);
    }
    if (p.what === 'Helm chart') {
      const digest = /Digest: (sha256:[0-9a-f]{64})/.exec(r.stdout)?.[1] ?? fail('helm push printed no digest');
      outputs.push(`chart-name=${plan.chart.name}`, `chart-digest=${digest}`);
    }
  }
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, outputs.map((o) => `${o}\n`).join(''));
  console.log(outputs.join('\n'));
}
