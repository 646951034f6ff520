// The release dry run (issue 40): `scripts/release.mjs --dry-run`, the build a release tag runs (.github/workflows/
// release.yml), makes every artifact in one directory: the executables and fleet-credential for x64 and arm64 with their
// .sha256 files and CycloneDX SBOMs, the krew archives and the filled manifest, the npm tarball fleet-cli, the image as
// an OCI archive (built with buildah by scripts/image.sh), the chart when deploy/chart is there, and checksums.txt. Each
// is read back here the way its consumer reads it: sha256sum -c, JSON, the krew manifest's digests, the tarball's
// package.json, the OCI layout's digests. Then cosign (built from github.com/sigstore/cosign/v2, test/cosign/build.sh)
// signs checksums.txt and two blobs with a key made for the test and verifies them, and refuses a changed file.
// No cluster is needed.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { buildScriptOutput, repoRoot } from '../support/binaries.js';

const pjson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
const VERSION = pjson.version;
const work = mkdtempSync(join(tmpdir(), 'fleet-release-'));
const OUT = join(work, 'release');
const TAG = `localhost/fleet:release-e2e-${process.pid}`;
// The image test's storage (the layers CI caches), so the base layer is not copied again.
const STORAGE =
  process.env.FLEET_IMAGE_STORAGE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'fleet/image/storage');
const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  FLEET_IMAGE_STORAGE: STORAGE,
  STORAGE_DRIVER: 'vfs',
  BUILDAH_ISOLATION: 'chroot',
};
for (const k of ['GITHUB_REF_TYPE', 'GITHUB_REF_NAME', 'GITHUB_REPOSITORY', 'GITHUB_OUTPUT']) delete ENV[k];
const hasChart = existsSync(join(repoRoot, 'deploy/chart/Chart.yaml'));

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const release = (args: string[], env: NodeJS.ProcessEnv = ENV, timeout = 1_500_000) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'scripts/release.mjs'), ...args],
      { cwd: repoRoot, env, timeout, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });

interface Plan {
  version: string;
  dryRun: boolean;
  assets: Array<{ file: string; size: number; sha256: string }>;
  image: { archive: string; digest: string; size: number; name: string };
  chart: { file?: string; name?: string; skipped?: string };
  npm: { file: string; name: string };
  pushes: Array<{ what: string; to: string; command: string[] }>;
}
let dry = { code: -1, stdout: '', stderr: '' };
let plan: Plan;

let cosign = '';

before(async () => {
  // Built first (.ci/run built it already): a synchronous build would hold up the other tests' child processes.
  cosign = buildScriptOutput(join(repoRoot, 'test/cosign/build.sh'), 3_000_000);
  // The suite built dist/ already (npm test builds first): --skip-build packs and wraps that build.
  dry = await release(['--dry-run', '--skip-build', '--out', OUT, '--image-tag', TAG]);
  assert.equal(dry.code, 0, `release --dry-run failed:\n${dry.stdout}\n${dry.stderr}`);
  plan = JSON.parse(readFileSync(join(OUT, 'plan.json'), 'utf8')) as Plan;
});
after(() => {
  spawnSync('buildah', ['--root', STORAGE, '--runroot', `${STORAGE}-run`, 'rmi', TAG], { env: ENV, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
});

describe('npm run release -- --dry-run', () => {
  const binaries = ['x64', 'arm64'].flatMap((a) => [`fleet-linux-${a}`, `fleet-credential-linux-${a}`]);
  const expected = [
    ...binaries.flatMap((b) => [b, `${b}.sha256`, `${b}.cdx.json`]),
    'kubectl-fleet_cli-linux-amd64.tar.gz',
    'kubectl-fleet_cli-linux-arm64.tar.gz',
    'fleet-cli.yaml',
    `fleet-cli-${VERSION}.tgz`,
    'checksums.txt',
  ].sort();

  it('writes every release file, each in checksums.txt, and checksum files that sha256sum -c accepts', () => {
    const files = readdirSync(OUT, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'plan.json')
      .map((e) => e.name)
      .sort();
    const chartFiles = files.filter((f) => !expected.includes(f));
    if (hasChart) assert.deepEqual(chartFiles, [plan.chart.file], 'the chart is the one file beyond the fixed set');
    else assert.deepEqual(chartFiles, []);
    assert.deepEqual(
      files.filter((f) => expected.includes(f)),
      expected,
    );
    const listed = readFileSync(join(OUT, 'checksums.txt'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('  ')[1])
      .sort();
    assert.deepEqual(
      listed,
      files.filter((f) => f !== 'checksums.txt'),
    );
    const all = spawnSync('sha256sum', ['--strict', '-c', 'checksums.txt'], { cwd: OUT, encoding: 'utf8' });
    assert.equal(all.status, 0, all.stdout + all.stderr);
    for (const b of binaries) {
      const one = spawnSync('sha256sum', ['--strict', '-c', `${b}.sha256`], { cwd: OUT, encoding: 'utf8' });
      assert.equal(one.status, 0, one.stdout + one.stderr);
      assert.equal(one.stdout, `${b}: OK\n`);
    }
    // A changed file is caught: the check above can fail.
    const copy = join(work, 'tampered');
    mkdirSync(copy);
    copyFileSync(join(OUT, 'checksums.txt'), join(copy, 'checksums.txt'));
    writeFileSync(join(copy, 'fleet-cli.yaml'), readFileSync(join(OUT, 'fleet-cli.yaml'), 'utf8') + '#\n');
    const bad = spawnSync('sha256sum', ['-c', '--ignore-missing', 'checksums.txt'], { cwd: copy, encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stdout, /^fleet-cli\.yaml: FAILED$/m);
  });

  it('builds executables that hold no path of the build (the same bundle rebuilt elsewhere gives the same bytes)', () => {
    // scripts/executable.mjs once left its temporary directory's name in the executable (the SEA blob records the main
    // script's path): a release's rebuild could then never match the checksums its tag commits.
    for (const b of binaries) {
      const bytes = readFileSync(join(OUT, b));
      for (const path of ['fleet-exe-build-', repoRoot]) assert.equal(bytes.indexOf(path), -1, `${b} holds ${path}`);
    }
  });

  it('writes CycloneDX SBOMs that parse and name the file they describe by its digest', () => {
    for (const b of binaries) {
      const sbom = JSON.parse(readFileSync(join(OUT, `${b}.cdx.json`), 'utf8')) as {
        bomFormat: string;
        specVersion: string;
        serialNumber: string;
        metadata: { component: { name: string; hashes: Array<{ alg: string; content: string }> } };
        components: Array<{ name: string; version: string; purl?: string }>;
        dependencies: Array<{ ref: string; dependsOn: string[] }>;
      };
      assert.equal(sbom.bomFormat, 'CycloneDX', b);
      assert.equal(sbom.specVersion, '1.5', b);
      assert.match(sbom.serialNumber, /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(sbom.metadata.component.hashes, [{ alg: 'SHA-256', content: sha256(join(OUT, b)) }], b);
      assert.equal(sbom.dependencies[0].dependsOn.length, sbom.components.length, b);
      if (b.startsWith('fleet-credential')) {
        // Go's standard library and nothing else, at the Go version the binary records.
        const go = /^\S+: (go\S+)/.exec(execFileSync('go', ['version', '-m', join(OUT, b)], { encoding: 'utf8' }))![1];
        assert.deepEqual(
          sbom.components.map((c) => [c.name, c.version, c.purl]),
          [['stdlib', go, `pkg:golang/stdlib@${go}`]],
        );
      } else {
        assert.ok(sbom.components.some((c) => c.name === 'node'));
        assert.ok(sbom.components.some((c) => c.name === '@oclif/core'));
      }
    }
  });

  it('fills the krew manifest with the archives it wrote beside it', () => {
    const manifest = yaml.load(readFileSync(join(OUT, 'fleet-cli.yaml'), 'utf8')) as {
      metadata: { name: string };
      spec: { version: string; platforms: Array<{ uri: string; sha256: string }> };
    };
    assert.equal(manifest.metadata.name, 'fleet-cli');
    assert.equal(manifest.spec.version, `v${VERSION}`);
    assert.equal(manifest.spec.platforms.length, 2);
    for (const p of manifest.spec.platforms) {
      const file = p.uri.split('/').pop()!;
      assert.ok(p.uri.endsWith(`/releases/download/v${VERSION}/${file}`), p.uri);
      assert.equal(p.sha256, sha256(join(OUT, file)), file);
    }
  });

  it('packs the npm package as fleet-cli, whose command is fleet', () => {
    const inside = JSON.parse(
      execFileSync('tar', ['-xzOf', join(OUT, `fleet-cli-${VERSION}.tgz`), 'package/package.json'], {
        encoding: 'utf8',
      }),
    ) as { name: string; version: string; bin: Record<string, string>; repository: { url: string } };
    assert.equal(inside.name, 'fleet-cli');
    assert.equal(inside.version, VERSION);
    assert.deepEqual(inside.bin, { fleet: './bin/run.js' });
    // npm's provenance is checked against the repository the package names.
    assert.equal(inside.repository.url, 'git+https://github.com/fleet-cli/fleet.git');
    assert.deepEqual(plan.npm, { file: `fleet-cli-${VERSION}.tgz`, name: 'fleet-cli' });
  });

  it('writes the image as an OCI archive whose digest is the one it would push', () => {
    const archive = join(OUT, plan.image.archive);
    const layout = join(work, 'oci');
    mkdirSync(layout);
    execFileSync('tar', ['-xf', archive, '-C', layout]);
    const blob = (digest: string) => join(layout, 'blobs', ...digest.split(':'));
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
      manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
    };
    assert.equal(index.manifests.length, 1);
    assert.equal(index.manifests[0].digest, plan.image.digest);
    assert.equal(`sha256:${sha256(blob(plan.image.digest))}`, plan.image.digest, 'the manifest is the digest it names');
    const manifest = JSON.parse(readFileSync(blob(plan.image.digest), 'utf8')) as {
      mediaType: string;
      config: { digest: string };
      layers: Array<{ digest: string }>;
    };
    assert.equal(manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    for (const d of [manifest.config.digest, ...manifest.layers.map((l) => l.digest)])
      assert.equal(`sha256:${sha256(blob(d))}`, d);
    const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8')) as {
      config: { User: string; Entrypoint: string[] };
    };
    assert.equal(config.config.User, '65532:65532');
    assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/fleet']);
  });

  it('prints what it would push where, and pushes none of it', () => {
    assert.equal(plan.dryRun, true);
    assert.match(dry.stdout, /^dry run: nothing pushed/m);
    const by = Object.fromEntries(plan.pushes.map((p) => [p.what, p]));
    assert.deepEqual(
      by['GitHub release'].command.slice(-plan.assets.length),
      plan.assets.map((a) => a.file),
    );
    assert.equal(by['GitHub release'].to, `https://github.com/fleet-cli/fleet/releases/tag/v${VERSION}`);
    assert.equal(by['container image'].to, `ghcr.io/fleet-cli/fleet:${VERSION}@${plan.image.digest}`);
    assert.deepEqual(by['npm package'].command.slice(0, 4), [
      'npm',
      'publish',
      `fleet-cli-${VERSION}.tgz`,
      '--provenance',
    ]);
    for (const p of plan.pushes) assert.ok(dry.stdout.includes(`${p.what} -> ${p.to}`), p.what);
    for (const a of plan.assets) assert.ok(dry.stdout.includes(`${a.sha256}`), a.file);
    if (hasChart) assert.equal(by['Helm chart'].command[0], 'helm');
    else assert.match(dry.stdout, /^chart: skipped \(deploy\/chart not present\)$/m);
  });

  it('refuses to publish a dry run, a tag of another version, and (without a chart) a real release', async () => {
    const publish = await release(['--publish', '--out', OUT]);
    assert.equal(publish.code, 2);
    assert.match(publish.stderr, /plan\.json is a dry run's: build again without --dry-run/);

    const elsewhere = join(work, 'never');
    const tag = await release(['--dry-run', '--skip-build', '--out', elsewhere], {
      ...ENV,
      GITHUB_REF_TYPE: 'tag',
      GITHUB_REF_NAME: 'v9.9.9',
    });
    assert.equal(tag.code, 2);
    assert.match(
      tag.stderr,
      new RegExp(`the tag is v9\\.9\\.9, package\\.json's version ${VERSION.replace(/\./g, '\\.')}`),
    );
    assert.ok(!existsSync(elsewhere), 'nothing written before the check');

    if (!hasChart) {
      const real = await release(['--skip-build', '--out', elsewhere]);
      assert.equal(real.code, 1);
      assert.match(real.stderr, /the chart is part of a release: deploy\/chart not present/);
      assert.ok(!existsSync(elsewhere), 'it stops before building anything');
    }
  });
});

describe('cosign signs the release files with a key and verifies them', () => {
  const keys = join(work, 'cosign');
  // The key's password: the test checks it never shows in cosign's output.
  const password = `pw-${process.pid}-${Date.now()}`;
  const cosignEnv = { ...process.env, COSIGN_PASSWORD: password, HOME: keys };
  const run = (args: string[]) =>
    spawnSync(cosign, args, { cwd: OUT, env: cosignEnv, encoding: 'utf8', timeout: 300_000 });

  before(() => {
    mkdirSync(keys);
    const gen = spawnSync(cosign, ['generate-key-pair'], { cwd: keys, env: cosignEnv, encoding: 'utf8' });
    assert.equal(gen.status, 0, gen.stderr);
    assert.ok(!`${gen.stdout}${gen.stderr}`.includes(password), 'the password is not printed');
  });

  it('sign-blob and verify-blob round trip for checksums.txt, the npm tarball and fleet-credential', () => {
    for (const f of ['checksums.txt', `fleet-cli-${VERSION}.tgz`, 'fleet-credential-linux-x64']) {
      const sig = join(keys, `${f}.sig`);
      const sign = run([
        'sign-blob',
        '--yes',
        '--key',
        join(keys, 'cosign.key'),
        '--tlog-upload=false',
        '--output-signature',
        sig,
        f,
      ]);
      assert.equal(sign.status, 0, `sign-blob ${f}:\n${sign.stderr}`);
      const out = `${sign.stdout}${sign.stderr}`;
      assert.ok(!out.includes(password), 'the password is not printed');
      assert.ok(!out.includes(readFileSync(join(keys, 'cosign.key'), 'utf8').split('\n')[1]), 'the key is not printed');
      const verify = run([
        'verify-blob',
        '--key',
        join(keys, 'cosign.pub'),
        '--signature',
        sig,
        '--insecure-ignore-tlog=true',
        f,
      ]);
      assert.equal(verify.status, 0, `verify-blob ${f}:\n${verify.stderr}`);
      assert.match(verify.stderr, /Verified OK/);
    }
  });

  it('verify-blob refuses a changed checksums.txt and another key', () => {
    const changed = join(keys, 'checksums.txt');
    writeFileSync(
      changed,
      readFileSync(join(OUT, 'checksums.txt'), 'utf8').replace(/^[0-9a-f]/, (c) => (c === '0' ? '1' : '0')),
    );
    const sig = join(keys, 'checksums.txt.sig');
    const tampered = run([
      'verify-blob',
      '--key',
      join(keys, 'cosign.pub'),
      '--signature',
      sig,
      '--insecure-ignore-tlog=true',
      changed,
    ]);
    assert.notEqual(tampered.status, 0, 'a changed checksums.txt verified');
    assert.match(tampered.stderr, /invalid signature|verification failed|failed to verify/i);

    const other = join(keys, 'other');
    mkdirSync(other);
    const gen = spawnSync(cosign, ['generate-key-pair'], { cwd: other, env: cosignEnv, encoding: 'utf8' });
    assert.equal(gen.status, 0, gen.stderr);
    const wrongKey = run([
      'verify-blob',
      '--key',
      join(other, 'cosign.pub'),
      '--signature',
      sig,
      '--insecure-ignore-tlog=true',
      'checksums.txt',
    ]);
    assert.notEqual(wrongKey.status, 0, 'another key verified the signature');
  });
});
