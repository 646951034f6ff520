// The GitHub workflows (.github/workflows): actionlint, built from github.com/rhysd/actionlint (test/actionlint/build.sh),
// finds no problem in any of them and does find one in a broken copy; every action is pinned by a full commit SHA; CI
// runs .ci/run on pull requests and pushes to main; the release runs on version tags only and builds with the same
// script the dry run runs (scripts/release.mjs), attests what it publishes and publishes the npm package with provenance.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { buildScriptOutput, repoRoot } from '../support/binaries.js';

const DIR = join(repoRoot, '.github/workflows');
const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string | boolean>;
}
interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<
    string,
    { permissions?: Record<string, string>; steps: Step[]; needs?: string; environment?: string; [k: string]: unknown }
  >;
}
const load = (f: string) => yaml.load(readFileSync(join(DIR, f), 'utf8')) as Workflow;
const steps = (w: Workflow) => Object.values(w.jobs).flatMap((j) => j.steps);

let actionlint = '';
const scratch = mkdtempSync(join(tmpdir(), 'fleet-workflows-'));
before(() => {
  actionlint = buildScriptOutput(join(repoRoot, 'test/actionlint/build.sh'));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

const lint = (cwd: string, args: string[]) =>
  spawnSync(actionlint, ['-no-color', '-oneline', ...args], { cwd, encoding: 'utf8' });

describe('GitHub workflows', () => {
  it('are ci.yml and release.yml', () => {
    assert.deepEqual(files.sort(), ['ci.yml', 'release.yml']);
  });

  it('actionlint passes every workflow, and fails a broken one', () => {
    const res = lint(
      repoRoot,
      files.map((f) => join(DIR, f)),
    );
    assert.equal(res.status, 0, `actionlint:\n${res.stdout}${res.stderr}`);
    // The same checker on a copy of release.yml with a permission that does not exist and a step that does not exist:
    // it must say so, or the pass above proves nothing.
    const broken = readFileSync(join(DIR, 'release.yml'), 'utf8')
      .replace('id-token: write', 'id-tokens: write')
      .replace('steps.publish.outputs.image-digest', 'steps.publsh.outputs.image-digest');
    const dir = join(scratch, 'broken');
    mkdirSync(join(dir, '.github/workflows'), { recursive: true });
    writeFileSync(join(dir, '.github/workflows/release.yml'), broken);
    const bad = lint(dir, ['.github/workflows/release.yml']);
    assert.equal(bad.status, 1, `actionlint passed a broken workflow:\n${bad.stdout}${bad.stderr}`);
    assert.match(bad.stdout, /id-tokens/);
    assert.match(bad.stdout, /publsh/);
  });

  it('pin every action by a full commit SHA, with the version in a comment', () => {
    for (const f of files) {
      const text = readFileSync(join(DIR, f), 'utf8');
      const uses = [...text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/gm)];
      assert.ok(uses.length > 0, `${f} uses no action`);
      for (const [line, ref, rest] of uses) {
        assert.match(ref, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/, `${f}: ${line.trim()}`);
        assert.match(rest, /^ # v\d+\.\d+\.\d+$/, `${f}: ${line.trim()} names no version`);
      }
    }
  });

  it('ci.yml runs .ci/run on pull requests and pushes to main, reading nothing but the repository', () => {
    const w = load('ci.yml');
    assert.deepEqual(Object.keys(w.on).sort(), ['pull_request', 'push']);
    assert.deepEqual((w.on.push as { branches: string[] }).branches, ['main']);
    assert.deepEqual(w.permissions, { contents: 'read' });
    const runs = steps(w).flatMap((s) => (s.run ? [s.run.trim()] : []));
    assert.deepEqual(runs, ['bash .ci/run']);
    // .ci/run checks the workflows with actionlint itself.
    const ci = readFileSync(join(repoRoot, '.ci/run'), 'utf8');
    assert.match(
      ci,
      /actionlint=\$\(bash test\/actionlint\/build\.sh \| tail -1\)\n"\$actionlint" .*\.github\/workflows\/\*\.yml/,
    );
  });

  it('release.yml runs on version tags, not on the moving v0 tag of the action', () => {
    const w = load('release.yml');
    assert.deepEqual(Object.keys(w.on), ['push']);
    const patterns = (w.on.push as { tags: string[] }).tags;
    // GitHub's filter patterns: + repeats the previous character (class), * is anything but /.
    const toRegExp = (p: string) =>
      new RegExp(
        `^${p
          .replace(/[.]/g, '\\.')
          .replace(/\*/g, '[^/]*')
          .replace(/\[0-9\]\+/g, '[0-9]+')}$`,
      );
    const matches = (tag: string) => patterns.some((p) => toRegExp(p).test(tag));
    for (const tag of ['v0.1.0', 'v1.22.333', 'v0.2.0-rc.1']) assert.ok(matches(tag), `${tag} makes a release`);
    for (const tag of ['v0', 'v1', 'latest', 'v0.1']) assert.ok(!matches(tag), `${tag} must not make a release`);
  });

  it('release.yml builds in a job that can write nothing and holds no secret; another job publishes what it built', () => {
    const w = load('release.yml');
    assert.deepEqual(Object.keys(w.jobs), ['build', 'publish']);
    const { build, publish } = w.jobs;
    // The job that runs npm ci (every dependency's install scripts) and the build: a read-only token, no secret, no
    // OIDC token, no environment (whose secrets it would get).
    assert.deepEqual(build.permissions, { contents: 'read' });
    assert.equal(build.environment, undefined);
    const buildText = yaml.dump(build);
    assert.doesNotMatch(buildText, /secrets\.|id-token|NODE_AUTH_TOKEN|GH_TOKEN|GITHUB_TOKEN/);
    const buildRuns = build.steps.map((s) => s.run ?? '').join('\n');
    assert.match(buildRuns, /^npm ci --no-audit --no-fund$/m);
    assert.match(buildRuns, /^npm run release$/m, 'the build is the dry run without --dry-run');
    const upload = build.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'));
    assert.deepEqual([upload?.with?.name, upload?.with?.path], ['release', 'dist/release/']);
    // The job with the write permissions installs nothing from npm and builds nothing: it takes the build's files.
    assert.equal(publish.needs, 'build');
    assert.equal(publish.environment, 'release');
    const publishRuns = publish.steps.map((s) => s.run ?? '').join('\n');
    assert.doesNotMatch(publishRuns, /npm (ci|install|i |run build|run release$)|npm run release\s*$/m);
    assert.doesNotMatch(publishRuns, /^npm run release$/m);
    const download = publish.steps.find((s) => s.uses?.startsWith('actions/download-artifact@'));
    assert.deepEqual([download?.with?.name, download?.with?.path], ['release', 'dist/release/']);
    assert.ok(
      publish.steps.indexOf(download!) <
        publish.steps.findIndex((s) => s.uses?.startsWith('actions/attest-build-provenance@')),
      'the files are there before they are attested',
    );
    // --publish runs on built-in modules only, so that this job needs no node_modules.
    const release = readFileSync(join(repoRoot, 'scripts/release.mjs'), 'utf8');
    for (const [, from] of release.matchAll(/^import .* from '([^']+)';$/gm))
      assert.match(from, /^node:/, `scripts/release.mjs imports ${from}`);
  });

  it('release.yml builds with scripts/release.mjs, attests every file, the image and the chart, and publishes', () => {
    const w = load('release.yml');
    const job = w.jobs.publish;
    assert.deepEqual(w.permissions, { contents: 'read' });
    assert.deepEqual(job.permissions, {
      contents: 'write',
      packages: 'write',
      'id-token': 'write',
      attestations: 'write',
    });
    const all = steps(w);
    const runs = all.map((s) => s.run ?? '').join('\n');
    assert.match(runs, /^npm run release$/m, 'the build is the dry run without --dry-run');
    assert.match(runs, /^npm run release -- --publish$/m);
    const attest = all.filter((s) => s.uses?.startsWith('actions/attest-build-provenance@'));
    assert.deepEqual(
      attest.map((s) => s.with),
      [
        { 'subject-checksums': 'dist/release/checksums.txt' },
        {
          'subject-name': '${{ steps.publish.outputs.image-name }}',
          'subject-digest': '${{ steps.publish.outputs.image-digest }}',
          'push-to-registry': true,
        },
        {
          'subject-name': '${{ steps.publish.outputs.chart-name }}',
          'subject-digest': '${{ steps.publish.outputs.chart-digest }}',
          'push-to-registry': true,
        },
      ],
    );
    // The files are attested before they are published, the image and chart after their push gave the digests.
    const order = all.map((s) => s.run?.trim() ?? s.with?.['subject-checksums'] ?? s.with?.['subject-name'] ?? '');
    // A step is found by a whole line of its run (the build step runs npm ci first); never found is a failure.
    const at = (x: string) => {
      const i = order.findIndex((o) => String(o).split('\n').includes(x));
      assert.notEqual(i, -1, `no step runs ${x}`);
      return i;
    };
    assert.ok(at('npm run release') < at('dist/release/checksums.txt'));
    assert.ok(at('dist/release/checksums.txt') < at('npm run release -- --publish'));
    assert.ok(at('npm run release -- --publish') < at('${{ steps.publish.outputs.image-name }}'));
    // npm publishes fleet-cli with provenance (scripts/release.mjs's plan holds the command), to the registry setup-node
    // configured for the token.
    const node = job.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    assert.equal(node?.with?.['registry-url'], 'https://registry.npmjs.org');
    assert.match(
      readFileSync(join(repoRoot, 'scripts/release.mjs'), 'utf8'),
      /'npm', 'publish', npmTarball, '--provenance'/,
    );
  });
});
