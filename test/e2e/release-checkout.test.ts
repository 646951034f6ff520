// The release from a checkout, as people and the release workflow run it (issue 49): in a fresh `git clone` of HEAD
// (with ../shared beside it, as the work tree has it), no --skip-build and no --out, the commands exactly as they are
// written:
//   - .github/workflows/release.yml, read with js-yaml: every job that holds no secret, no environment and no write
//     permission (the build) runs its `run:` steps in order, each as the runner runs it (bash -eo pipefail, the step's
//     env, the variables of a tag push of package.json's version); a step that uses a GitHub action is skipped and
//     named (the checkout is the clone, setup-node and setup-go are the machine's). Each job that publishes is replaced
//     by the dry run below, with no token in the environment; what it reads of the build (the artifact's path, the
//     checksums its attestation names) is checked to be there.
//   - the README's `npm run release -- --dry-run`, in the same checkout after the build job's `npm ci`.
// Both once ended in `ENOENT: copyfile dist/exe/fleet-linux-x64 -> dist/release/...`: scripts/release.mjs made
// dist/release/, then `npm run build` (`rm -rf dist`) removed it. test/e2e/release.test.ts reads every file of the
// dry run in detail (with --skip-build --out elsewhere); this file checks that the paths a release takes produce them.
// Slow (two whole builds, the image, the packages): the executables come from ~/.cache/fleet/exe (the bundle of a
// commit is the same in any directory), the image's base and layers from ~/.cache/fleet/image, Helm from
// test/helm/build.sh's cache, as in the other release tests.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { repoRoot } from '../support/binaries.js';

const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), 'fleet-release-checkout-'));
const checkout = join(work, 'main');
const logs = join(work, 'logs');
// The image's storage as the other image tests keep it (the base layer is not copied again); the release tags its image
// localhost/fleet:<version> there, removed afterwards unless it was there before.
const STORAGE =
  process.env.FLEET_IMAGE_STORAGE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'fleet/image/storage');
const IMAGE_TAG = `localhost/fleet:${VERSION}`;
const buildah = (args: string[]) =>
  spawnSync('buildah', ['--root', STORAGE, '--runroot', `${STORAGE}-run`, ...args], {
    env: { ...process.env, STORAGE_DRIVER: 'vfs' },
    stdio: 'ignore',
  });

// A user's shell: no token, no npm variables of the npm run that started the tests, nothing of this work tree on PATH
// (its node_modules/.bin: the checkout's own npm ci gives it its Node), no CI or GITHUB_* variable. The image storage
// is the one cache given by name.
const TOKENS = /^(GH_TOKEN|GITHUB_TOKEN|NODE_AUTH_TOKEN|NPM_TOKEN|ACTIONS_\w+)$/;
const userEnv: NodeJS.ProcessEnv = {};
for (const [k, v] of Object.entries(process.env))
  if (!TOKENS.test(k) && !/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'CI' && !k.startsWith('GITHUB_'))
    userEnv[k] = v;
userEnv.PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && relative(repoRoot, resolve(d)).startsWith('..'))
  .join(delimiter);
userEnv.FLEET_IMAGE_STORAGE = STORAGE;
// The runner's on a push of the tag v<version>.
const runnerEnv: NodeJS.ProcessEnv = {
  ...userEnv,
  CI: 'true',
  GITHUB_ACTIONS: 'true',
  GITHUB_EVENT_NAME: 'push',
  GITHUB_REF: `refs/tags/v${VERSION}`,
  GITHUB_REF_TYPE: 'tag',
  GITHUB_REF_NAME: `v${VERSION}`,
  GITHUB_REPOSITORY: 'fleet-cli/fleet',
  GITHUB_WORKSPACE: checkout,
};

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string | boolean | number>;
  'working-directory'?: string;
  shell?: string;
}
interface Job {
  environment?: string | { name: string };
  permissions?: Record<string, string> | string;
  steps: Step[];
}
const stepName = (s: Step) => s.name ?? s.uses?.split('@')[0] ?? s.run!.split('\n')[0];
const secretsIn = (v: unknown) => /\$\{\{\s*secrets\./.test(JSON.stringify(v ?? ''));
/** A job that publishes: it has an environment (with its secrets), a write permission, or a secret in a step. */
const publishes = (job: Job) =>
  job.environment !== undefined ||
  (typeof job.permissions === 'string'
    ? /write/.test(job.permissions)
    : Object.values(job.permissions ?? {}).some((p) => p === 'write')) ||
  job.steps.some((s) => secretsIn(s.env) || secretsIn(s.with) || secretsIn(s.run));

let stepNo = 0;
/** Runs a shell script as a runner's step does; its output goes to a log file, whose tail a failure shows. */
function runStep(label: string, script: string, env: NodeJS.ProcessEnv, cwd = checkout) {
  const log = join(logs, `${String(++stepNo).padStart(2, '0')}.log`);
  const file = join(logs, `${String(stepNo).padStart(2, '0')}.sh`);
  writeFileSync(file, script);
  const started = Date.now();
  return new Promise<{ code: number | null; out: string; seconds: number }>((done) => {
    const fd = openSync(log, 'w');
    // The runner's `shell: bash`: bash --noprofile --norc -eo pipefail {0}.
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], {
      cwd,
      env,
      stdio: ['ignore', fd, fd],
    });
    const finish = (code: number | null) => {
      closeSync(fd);
      done({ code, out: readFileSync(log, 'utf8'), seconds: Math.round((Date.now() - started) / 1000) });
    };
    child.on('error', () => finish(-1));
    child.on('close', finish);
  }).then((r) => ({ ...r, label }));
}
const tail = (out: string) => out.split('\n').slice(-40).join('\n');

const checksums = (dir: string) =>
  Object.fromEntries(
    readFileSync(join(dir, 'checksums.txt'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('  ').reverse() as [string, string]),
  );
const binaries = ['x64', 'arm64'].flatMap((a) => [`fleet-linux-${a}`, `fleet-credential-linux-${a}`]);
const fixedFiles = [
  ...binaries.flatMap((b) => [b, `${b}.sha256`, `${b}.cdx.json`]),
  'kubectl-fleet_cli-linux-amd64.tar.gz',
  'kubectl-fleet_cli-linux-arm64.tar.gz',
  'fleet-cli.yaml',
  `fleet-cli-${VERSION}.tgz`,
].sort();
interface Plan {
  version: string;
  dryRun: boolean;
  assets: Array<{ file: string; sha256: string }>;
  image: { archive: string; digest: string };
  chart: { file?: string; skipped?: string };
}

/** The release files of one build in `dir`, checked as their consumers read them; returns their SHA-256s. */
function checkRelease(dir: string, dryRun: boolean): Record<string, string> {
  assert.ok(existsSync(join(dir, 'checksums.txt')), `no ${dir}/checksums.txt`);
  const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as Plan;
  assert.equal(plan.version, VERSION);
  assert.equal(plan.dryRun, dryRun);
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'plan.json' && e.name !== 'checksums.txt')
    .map((e) => e.name)
    .sort();
  // Every executable, fleet-credential, checksum file, SBOM, krew file and the npm package; the chart is the one more
  // (a real release stops without it, so it is there whenever a real release got this far).
  assert.deepEqual(
    files.filter((f) => fixedFiles.includes(f)),
    fixedFiles,
  );
  if (!dryRun) assert.ok(plan.chart.file, 'a real release packs the chart');
  assert.deepEqual(
    files.filter((f) => !fixedFiles.includes(f)),
    plan.chart.file ? [plan.chart.file] : [],
  );
  const sums = checksums(dir);
  assert.deepEqual(Object.keys(sums).sort(), files, 'checksums.txt lists every release file');
  const all = spawnSync('sha256sum', ['--strict', '-c', 'checksums.txt'], { cwd: dir, encoding: 'utf8' });
  assert.equal(all.status, 0, all.stdout + all.stderr);
  for (const b of binaries) {
    const one = spawnSync('sha256sum', ['--strict', '-c', `${b}.sha256`], { cwd: dir, encoding: 'utf8' });
    assert.equal(one.stdout, `${b}: OK\n`, one.stderr);
  }
  assert.deepEqual(
    plan.assets.map((a) => a.file),
    [...files, 'checksums.txt'],
  );
  assert.ok(existsSync(join(dir, plan.image.archive)), `no ${plan.image.archive}`);
  // The executable runs on this machine (linux-x64), with no Node of the checkout's.
  const exe = join(dir, 'fleet-linux-x64');
  const version = spawnSync(exe, ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', TMPDIR: work } });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, new RegExp(`^fleet/${VERSION.replace(/\./g, '\\.')} linux-x64 node-v`));
  return sums;
}

const workflow = () =>
  yaml.load(readFileSync(join(checkout, '.github/workflows/release.yml'), 'utf8')) as { jobs: Record<string, Job> };
let imageWasThere = false;
let built: Record<string, string> | undefined;

before(() => {
  rmSync(logs, { recursive: true, force: true });
  mkdirSync(logs, { recursive: true });
  const clone = spawnSync('git', ['clone', '-q', repoRoot, checkout], { encoding: 'utf8' });
  assert.equal(clone.status, 0, clone.stderr);
  const shared = join(repoRoot, '../shared');
  if (existsSync(shared)) symlinkSync(realpathSync(shared), join(work, 'shared'));
  imageWasThere = buildah(['inspect', '--type', 'image', IMAGE_TAG]).status === 0;
});
after(() => {
  if (!imageWasThere) buildah(['rmi', IMAGE_TAG]);
  rmSync(work, { recursive: true, force: true });
});

describe('the release from a fresh checkout, as release.yml and the README run it', () => {
  it(
    "runs the build job's steps as release.yml writes them and hands over what the publish job reads",
    { timeout: 30 * 60_000 },
    async (t) => {
      const jobs = Object.entries(workflow().jobs);
      const building = jobs.filter(([, j]) => !publishes(j));
      assert.ok(building.length > 0, 'release.yml has a job that builds without secrets');
      assert.ok(building.some(([, j]) => j.steps.some((s) => /^npm run release$/m.test(s.run ?? ''))));
      const uploaded: string[] = [];
      for (const [id, job] of building) {
        for (const step of job.steps) {
          if (step.uses) {
            t.diagnostic(`${id}: skipped "${stepName(step)}" (a GitHub action: uses ${step.uses})`);
            if (step.uses.startsWith('actions/upload-artifact@')) uploaded.push(String(step.with?.path));
            continue;
          }
          assert.ok(step.run, `${id}: a step with neither run nor uses: ${JSON.stringify(step)}`);
          assert.ok(!step.shell || step.shell === 'bash', `${id}: "${stepName(step)}" runs with shell ${step.shell}`);
          assert.doesNotMatch(
            step.run,
            /\$\{\{/,
            `${id}: "${stepName(step)}" has an expression this test cannot evaluate`,
          );
          const env = { ...runnerEnv };
          for (const [k, v] of Object.entries(step.env ?? {})) {
            assert.doesNotMatch(String(v), /\$\{\{/, `${id}: "${stepName(step)}": env ${k} is an expression`);
            env[k] = String(v);
          }
          const r = await runStep(
            `${id}: ${stepName(step)}`,
            step.run,
            env,
            join(checkout, step['working-directory'] ?? '.'),
          );
          t.diagnostic(`${id}: ran "${stepName(step)}" in ${r.seconds} s (exit ${r.code})`);
          assert.equal(r.code, 0, `${r.label} failed (exit ${r.code}):\n${tail(r.out)}`);
        }
      }
      // upload-artifact (if-no-files-found: error) hands these over: the release directory with its files.
      assert.ok(uploaded.length > 0, 'the build job uploads its release files');
      for (const path of uploaded) {
        const dir = join(checkout, path);
        assert.ok(existsSync(dir), `the build job's artifact ${path} is not there`);
        built = checkRelease(dir, false);
      }
      // What the publish job reads of them: the artifact it downloads, the checksums its attestation names.
      for (const [id, job] of jobs.filter(([, j]) => publishes(j))) {
        for (const step of job.steps) {
          const action = step.uses?.split('@')[0];
          if (action === 'actions/download-artifact')
            assert.ok(uploaded.includes(String(step.with?.path)), `${id} downloads ${step.with?.path}, not uploaded`);
          const subjects = step.with?.['subject-checksums'];
          if (subjects) {
            assert.ok(existsSync(join(checkout, String(subjects))), `${id}: "${stepName(step)}" needs ${subjects}`);
            assert.ok(
              uploaded.some((u) => !relative(join(checkout, u), join(checkout, String(subjects))).startsWith('..')),
              `${id}: "${stepName(step)}" attests ${subjects}, which is not in the artifact`,
            );
          }
          t.diagnostic(`${id}: not run, replaced by the dry run: "${stepName(step)}"`);
        }
      }
    },
  );

  it(
    "the README's npm run release -- --dry-run builds every file into dist/release/, the release build's bytes",
    { timeout: 20 * 60_000 },
    async (t) => {
      const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
      const command =
        /`(npm run release -- --dry-run)`\s+builds\s+every\s+file\s+of\s+a\s+release\s+into\s+`([^`]+)`/.exec(readme);
      assert.ok(command, 'the README names its dry run and where it writes');
      const r = await runStep(`README: ${command[1]}`, `${command[1]}\n`, userEnv);
      t.diagnostic(`README: ran ${command[1]} in ${r.seconds} s (exit ${r.code})`);
      assert.equal(r.code, 0, `${r.label} failed (exit ${r.code}):\n${tail(r.out)}`);
      assert.match(r.out, /^dry run: nothing pushed/m);
      const sums = checkRelease(join(checkout, command[2]), true);
      // What CI's dry run checks is what a tag publishes: the same executables, byte for byte.
      if (built)
        for (const b of binaries) assert.equal(sums[b], built[b], `${b}: the dry run's differs from the release's`);
    },
  );
});
