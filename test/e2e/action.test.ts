// The GitHub Action (action.yml) run the way the runner runs a node24 action: `node <runs.main>` in the workspace, with an
// INPUT_<NAME> variable for every input the step sets and for every input with a default in action.yml, GITHUB_ACTIONS=true,
// and GITHUB_OUTPUT / GITHUB_STEP_SUMMARY naming files the runner reads afterwards. The action runs from a copy of what a
// release tag holds (the repository's tracked files and the bundle, no node_modules), as the runner downloads it. Against the real control plane: a
// passing verification, a failing one (annotations, summary, exit 1, the JUnit path as output), bad inputs (exit 2, no
// output), and no credential in anything the action printed or wrote.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import {
  createServiceAccountToken,
  kubeconfigFor,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const action = yaml.load(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, unknown>;
  runs: { using: string; main: string };
};
const BUNDLE = 'dist/bundle/fleet.mjs';
/** The bundle is a directory: its launcher (BUNDLE), the CLI and its lazily loaded chunks, the oclif manifest. */
const BUNDLE_DIR = 'dist/bundle';

/**
 * What the runner has for `uses: OWNER/fleet@TAG`: the repository's files at the release commit, which adds the bundle
 * (docs/verify.md, "Releasing the action"), and nothing installed.
 */
function releaseCheckout(): string {
  const dir = join(scratchDir(), uniqueName('action-release'));
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  const bundled = readdirSync(join(ROOT, BUNDLE_DIR), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
  for (const file of [...tracked, ...bundled]) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in this working tree
    mkdirSync(join(dir, file, '..'), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  return dir;
}

/** Every credential the tests made: nothing the action prints or writes may contain one. */
const SECRETS: string[] = [];

interface ActionRun {
  code: number;
  stdout: string;
  stderr: string;
  /** $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY after the step ('' when not written). */
  output: string;
  summary: string;
  workspace: string;
}

/** A fresh workspace (the runner's GITHUB_WORKSPACE) with the files a checkout would have put there. */
function workspace(files: Record<string, string> = {}): string {
  const ws = join(scratchDir(), uniqueName('ws'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), text, { mode: 0o600 });
  }
  mkdirSync(ws, { recursive: true });
  return ws;
}

let actionDir = '';

/** One step `uses: OWNER/fleet@TAG` with `with: inputs`, as the runner runs it. */
function runAction(
  inputs: Record<string, string>,
  ws: string,
  o: { env?: NodeJS.ProcessEnv; dir?: string } = {},
): Promise<ActionRun> {
  const runnerTemp = join(scratchDir(), uniqueName('runner-temp'));
  mkdirSync(runnerTemp);
  const output = join(runnerTemp, 'set_output');
  const summary = join(runnerTemp, 'step_summary');
  writeFileSync(output, '');
  writeFileSync(summary, '');
  const home = join(runnerTemp, 'home');
  mkdirSync(home);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home, // empty: no ~/.kube/config to fall back on
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: ws,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_TEMP: runnerTemp,
    ...o.env,
  };
  for (const name of Object.keys(inputs)) assert.ok(name in action.inputs, `action.yml has no input ${name}`);
  for (const [name, spec] of Object.entries(action.inputs)) {
    const value = inputs[name] ?? spec.default;
    if (value !== undefined) env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(o.dir ?? actionDir, action.runs.main)], {
      cwd: ws,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        output: readFileSync(output, 'utf8'),
        summary: readFileSync(summary, 'utf8'),
        workspace: ws,
      }),
    );
  });
}

/** Asserts that no credential the tests made is in the run's output, its files, or FILES. */
function assertNoSecret(run: ActionRun, files: string[] = []) {
  const texts = { stdout: run.stdout, stderr: run.stderr, GITHUB_OUTPUT: run.output, GITHUB_STEP_SUMMARY: run.summary };
  for (const f of files) if (existsSync(f)) Object.assign(texts, { [f]: readFileSync(f, 'utf8') });
  for (const secret of SECRETS)
    for (const [where, text] of Object.entries(texts))
      assert.ok(!text.includes(secret), `a credential appears in ${where}`);
}

const POLICY = `apiVersion: fleet/v1alpha1
kind: VerifyPolicy
checks:
  identity: {username: bob, groups: [devs]}
  version: {range: ">=1.30"}
`;

describe('the GitHub Action', () => {
  let bobKubeconfig = '';
  let shortLived = '';

  before(async () => {
    assert.ok(existsSync(join(ROOT, BUNDLE)), `${BUNDLE} is missing: npm run build makes it, and the action runs it`);
    actionDir = releaseCheckout();
    assert.ok(!existsSync(join(actionDir, 'node_modules')));
    const bob = tokenUser(cp.hub, 'bob');
    SECRETS.push(bob.token);
    bobKubeconfig = readFileSync(bob.kubeconfigPath, 'utf8');
    // A stored token that expires within 15 minutes fails the default 30m minimum lifetime.
    const token = await createServiceAccountToken(cp.hub, uniqueName('action'), 'deployer', { duration: '15m' });
    SECRETS.push(token);
    shortLived = readFileSync(kubeconfigFor(cp.hub, { token }), 'utf8');
  });

  it('is a node24 action whose entry point exists, with the inputs and output the docs name', () => {
    assert.equal(action.runs.using, 'node24');
    assert.ok(existsSync(join(actionDir, action.runs.main)), action.runs.main);
    assert.deepEqual(Object.keys(action.inputs).sort(), ['args', 'junit', 'kubeconfig', 'policy']);
    assert.deepEqual(Object.keys(action.outputs), ['junit']);
  });

  it('passes: exit 0, the JUnit path as output, a summary, no annotation (paths relative to the workspace)', async () => {
    const ws = workspace({ '.fleet/kubeconfig': bobKubeconfig, '.fleet/policy.yaml': POLICY });
    const run = await runAction({ kubeconfig: '.fleet/kubeconfig', policy: '.fleet/policy.yaml' }, ws);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const junit = join(ws, 'fleet-verify.xml');
    assert.equal(run.output, `junit=${junit}\n`);
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, /<testsuite [^>]*name="[^"]*bob@hub"/);
    assert.doesNotMatch(xml, /<failure/);
    assert.match(run.summary, /^## fleet clusters verify: passed$/m);
    assert.doesNotMatch(run.stdout + run.stderr, /::(error|warning)/);
    assert.match(run.stdout, /^CLUSTER +PROVIDER-READY/);
    assert.match(run.stderr, /^passed: 1 of 1 cluster passed/m);
    assert.match(
      run.stderr,
      /^fleet clusters verify --kubeconfig \S+\/\.fleet\/kubeconfig --policy \S+\/\.fleet\/policy\.yaml --junit /m,
    );
    assertNoSecret(run, [junit]);
  });

  it("as a release: fleet's executable downloaded from the release once, checked against the committed SHA-256, and run", async () => {
    // What a release tag holds beside the bundle: dist/exe/fleet-linux-x64.sha256; the executable is a release asset,
    // served here by a small local server standing for the runner's GitHub (GITHUB_SERVER_URL).
    execFileSync(process.execPath, [join(ROOT, 'scripts/executable.mjs'), '--arch', 'x64'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 600_000,
    });
    const release = releaseCheckout();
    mkdirSync(join(release, 'dist/exe'), { recursive: true });
    copyFileSync(join(ROOT, 'dist/exe/fleet-linux-x64.sha256'), join(release, 'dist/exe/fleet-linux-x64.sha256'));
    const asset = '/acme/fleet/releases/download/v9.9.9/fleet-linux-x64';
    let body = readFileSync(join(ROOT, 'dist/exe/fleet-linux-x64'));
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === asset) res.end(body);
      else res.writeHead(404).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const env = (toolCache: string, ref = 'v9.9.9') => ({
      GITHUB_SERVER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      GITHUB_ACTION_REPOSITORY: 'acme/fleet',
      GITHUB_ACTION_REF: ref,
      RUNNER_TOOL_CACHE: toolCache,
    });
    try {
      const toolCache = join(scratchDir(), uniqueName('tool-cache'));
      for (const round of [1, 2]) {
        const ws = workspace({ '.fleet/kubeconfig': bobKubeconfig, '.fleet/policy.yaml': POLICY });
        const run = await runAction({ kubeconfig: '.fleet/kubeconfig', policy: '.fleet/policy.yaml' }, ws, {
          env: env(toolCache),
          dir: release,
        });
        assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
        assert.match(
          run.stderr,
          new RegExp(`^fleet's executable: ${toolCache}/fleet/[0-9a-f]{64}/fleet-linux-x64$`, 'm'),
        );
        assert.equal(run.output, `junit=${join(ws, 'fleet-verify.xml')}\n`);
        assert.match(run.summary, /^## fleet clusters verify: passed$/m);
        assert.doesNotMatch(run.stdout + run.stderr, /::(error|warning)/);
        assert.match(run.stderr, /^passed: 1 of 1 cluster passed/m);
        assertNoSecret(run);
        assert.deepEqual(requests, [asset], `round ${round}: downloaded once, then from the tool cache`);
      }
      // No such release asset: the bundle runs, with a warning annotation.
      const missing = await runAction(
        { kubeconfig: '.fleet/kubeconfig' },
        workspace({ '.fleet/kubeconfig': bobKubeconfig }),
        { env: env(join(scratchDir(), uniqueName('tool-cache')), 'v0.0.0'), dir: release },
      );
      assert.equal(missing.code, 0, missing.stderr);
      assert.match(
        missing.stderr,
        /^::warning title=fleet action::could not download fleet's executable \(\S+ HTTP 404\); running the bundle/m,
      );
      assert.doesNotMatch(missing.stderr, /^fleet's executable:/m);
      // A download that is not the committed executable is never run: exit 2, no output.
      body = Buffer.concat([body, Buffer.from('\0')]);
      const ws = workspace({ '.fleet/kubeconfig': bobKubeconfig });
      const bad = await runAction({ kubeconfig: '.fleet/kubeconfig' }, ws, {
        env: env(join(scratchDir(), uniqueName('tool-cache'))),
        dir: release,
      });
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(
        bad.stderr,
        /^::error title=fleet action::http:\S+fleet-linux-x64: its SHA-256 is [0-9a-f]{64}, the release's dist\/exe\/fleet-linux-x64\.sha256 says [0-9a-f]{64}$/m,
      );
      assert.equal(bad.output, '');
      assert.ok(!existsSync(join(ws, 'fleet-verify.xml')));
    } finally {
      server.close();
    }
  });

  it('fails: exit 1, an ::error annotation per failed check on stderr, the summary, the JUnit report as output; args pass through', async () => {
    const ws = workspace({ 'ci/kubeconfig': shortLived });
    const run = await runAction(
      { kubeconfig: 'ci/kubeconfig', junit: 'reports/verify.xml', args: `--strict  -o 'json'` },
      ws,
    );
    assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
    const junit = join(ws, 'reports/verify.xml');
    assert.equal(run.output, `junit=${junit}\n`);
    assert.match(readFileSync(junit, 'utf8'), /<testcase [^>]*name="credential-lifetime"[^>]*>\s*<failure/);
    // stdout is fleet's JSON alone; the workflow commands are on stderr.
    const report = JSON.parse(run.stdout);
    assert.equal(report.kind, 'VerifyReport');
    assert.equal(report.ok, false);
    assert.equal(report.strict, true);
    assert.match(run.stderr, /^::error title=fleet verify%3A [^:\n]+%3A credential-lifetime::.+$/m);
    assert.match(run.summary, /^## fleet clusters verify: failed$/m);
    assert.match(run.summary, /`credential-lifetime` \(fail\)/);
    assertNoSecret(run, [junit]);
  });

  it('bad inputs: exit 2 with one error (also as an annotation), no output, and a report left by an earlier step is not named', async () => {
    const ws = workspace({ kubeconfig: bobKubeconfig, 'fleet-verify.xml': '<testsuites/>' });
    const unclosed = await runAction({ kubeconfig: 'kubeconfig', args: `-l 'env=prod` }, ws);
    assert.equal(unclosed.code, 2, unclosed.stderr);
    assert.match(unclosed.stderr, /^::error title=fleet action::input args: a ' quote is not closed/m);
    assert.match(unclosed.stderr, /^error: input args: a ' quote is not closed/m);
    assert.equal(unclosed.output, '');

    const junitInArgs = await runAction({ kubeconfig: 'kubeconfig', args: '--junit=x.xml' }, ws);
    assert.equal(junitInArgs.code, 2, junitInArgs.stderr);
    assert.match(junitInArgs.stderr, /input args: give the JUnit path with the junit input/);

    const noPolicy = await runAction({ kubeconfig: 'kubeconfig', policy: 'missing.yaml' }, ws);
    assert.equal(noPolicy.code, 2, noPolicy.stderr);
    assert.match(noPolicy.stderr, /missing\.yaml/);
    assert.equal(noPolicy.output, '');
    assert.equal(noPolicy.summary, '');
    assert.equal(readFileSync(join(ws, 'fleet-verify.xml'), 'utf8'), '<testsuites/>');
    for (const run of [unclosed, junitInArgs, noPolicy]) assertNoSecret(run);
  });
});
