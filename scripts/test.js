#!/usr/bin/env node
// Test entry point: node scripts/test.js [unit|e2e|all] (default all).
//
// Unit tests run first. For e2e, one control plane (hub + 2 members) is started for the whole run through
// test/support/supervise.ts, and every test/e2e/**/*.test.ts file runs serially against it, finding it through
// FLEET_TEST_CONTROL_PLANE. It is torn down afterwards whatever happens: the supervisor stops it when our pipe to it
// closes, which also covers this process being SIGKILLed. With FLEET_TEST_CONTROL_PLANE already set (a sandbox), that
// control plane is used and left running.
//
// The control plane is required: if it cannot be built or started the run fails with the reason. Only FLEET_SKIP_E2E=1
// outside CI skips e2e, and says so. The last line is "N passed, N failed" (CI reads it).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] ?? 'all';
if (!['unit', 'e2e', 'all'].includes(mode)) {
  console.error(`usage: node scripts/test.js [unit|e2e|all]   (got ${mode})`);
  process.exit(2);
}
// fleet supports Node 22 and newer (package.json engines). npm scripts run the `node` devDependency (24); a bare
// `node scripts/test.js` on an older node would fail in ways that look like fleet's bugs.
if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(
    `scripts/test.js: node ${process.version} is older than fleet supports (>=22); run it through npm (npm test), which puts node_modules/.bin/node first on PATH`,
  );
  process.exit(2);
}
const inCI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';
// Per test file (node --test runs each file as one test). creds-rotate.test.ts alone needs about 285 s on an idle
// machine: each token rotation waits about 10 s for the API server's token cache to drop the revoked token (the
// confirm-revoked step), and its crash test rotates after every one of 8 steps. Under a load of 20 it ran past 5 min.
const E2E_TEST_TIMEOUT_MS = 10 * 60_000;

// Test files make their scratch directories with mkdtemp in os.tmpdir(); pointing TMPDIR of the test processes at one
// directory per run lets the run remove them all at the end, instead of leaving hundreds of fleet-* directories behind.
const runTmp = mkdtempSync(join(tmpdir(), 'fleet-test-run-'));

const totals = { passed: 0, failed: 0 };
let failedRuns = 0;
/** Children to stop if we are interrupted. */
const live = new Set();
let supervisor;
let supervisorLost = false; // it died on its own (e.g. SIGKILLed) after the control plane was ready
let controlPlaneDir;
let interrupted = false;

function testFiles(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => join(dir, f));
}

/** node --test with a human reporter on stdout and TAP in a file, whose "# pass N" / "# fail N" we count. */
function runNodeTests(label, files, extraArgs, env) {
  return new Promise((resolve) => {
    const tapDir = mkdtempSync(join(tmpdir(), 'fleet-tap-'));
    const tapFile = join(tapDir, 'results.tap');
    const args = [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tapFile}`,
      ...extraArgs,
      ...files,
    ];
    console.log(`\n=== ${label}: ${files.length} file${files.length === 1 ? '' : 's'} ===`);
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TMPDIR: runTmp, ...env },
    });
    live.add(child);
    child.on('exit', (code, signal) => {
      live.delete(child);
      let tap = '';
      try {
        tap = readFileSync(tapFile, 'utf8');
      } catch {
        // No TAP at all: the runner itself failed (counted below).
      }
      rmSync(tapDir, { recursive: true, force: true });
      const count = (key) => {
        const m = tap.match(new RegExp(`^# ${key} (\\d+)$`, 'm'));
        return m ? Number(m[1]) : 0;
      };
      const passed = count('pass');
      let failed = count('fail') + count('cancelled');
      if ((code !== 0 || signal) && failed === 0) failed = 1; // the runner failed outside any test
      totals.passed += passed;
      totals.failed += failed;
      if (code !== 0 || signal) failedRuns++;
      console.log(`=== ${label}: ${passed} passed, ${failed} failed ===`);
      resolve();
    });
  });
}

/** Starts the supervisor and resolves with the state.json path once the control plane is ready. */
function startControlPlane() {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'test/support/supervise.ts'), '--members', '2'],
      {
        cwd: root,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    supervisor = child;
    let out = '';
    let errTail = '';
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      errTail = (errTail + chunk).slice(-8000);
    });
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/^FLEET_CONTROL_PLANE_READY (.+)$/m);
      if (m) {
        controlPlaneDir = dirname(m[1].trim());
        resolve(m[1].trim());
      }
    });
    child.on('exit', (code, signal) => {
      if (supervisor === child && !child.stdin.writableEnded) supervisorLost = true;
      supervisor = undefined;
      const reason = errTail.slice(errTail.lastIndexOf('control plane did not start:')).trim();
      reject(
        new Error(
          reason.startsWith('control plane did not start:')
            ? reason
            : `the control plane supervisor exited (${signal ?? `code ${code}`}) before the control plane was ready`,
        ),
      );
    });
  });
}

function stopControlPlane() {
  const child = supervisor;
  if (!child) {
    if (supervisorLost && controlPlaneDir && existsSync(controlPlaneDir)) {
      // Nobody is left to stop what it started: do it here, with the same code.
      console.error('the control plane supervisor died; stopping its processes');
      spawnSync(
        process.execPath,
        ['--import', 'tsx', join(root, 'test/support/sandbox-cli.ts'), 'down', '--dir', controlPlaneDir],
        { cwd: root, stdio: 'inherit' },
      );
      supervisorLost = false;
    }
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.stdin.end(); // the supervisor tears down on EOF
    // A teardown that hangs must not hang CI; SIGTERM makes the supervisor stop everything and exit.
    setTimeout(() => child.kill('SIGTERM'), 60_000).unref();
  });
}

// FLEET_TEST_OTHER_NODE_LINES=1 (.ci/run sets it): the unit suite on the other supported Node lines
// (scripts/node-versions.sh) runs beside the e2e files instead of after them, at a lower CPU priority. The e2e files
// spend much of their time waiting on API servers (token caches, leases, restarts), which is CPU the unit suites can
// use: on 2 cores this takes about 5 minutes off a CI run. Its output is printed after the e2e files, and its tests
// count in the last line.
const otherLines = { child: undefined, done: undefined, log: join(runTmp, 'other-node-lines.log') };
function startOtherNodeLines() {
  if (process.env.FLEET_TEST_OTHER_NODE_LINES !== '1' || mode !== 'all') return;
  const out = openSync(otherLines.log, 'w');
  // Its own process group, so an interrupt stops the node runs under bash too.
  const child = spawn('nice', ['-n', '10', 'bash', join(root, 'scripts/node-versions.sh')], {
    cwd: root,
    stdio: ['ignore', out, out],
    detached: true,
  });
  otherLines.child = child;
  otherLines.done = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  console.log(
    `\nthe unit suite on the other Node lines runs beside the e2e files (scripts/node-versions.sh; output after them)`,
  );
}
async function finishOtherNodeLines() {
  if (!otherLines.done) return;
  const { code, signal } = await otherLines.done;
  otherLines.child = undefined;
  const log = readFileSync(otherLines.log, 'utf8');
  console.log(`\n=== the unit suite on the other Node lines (scripts/node-versions.sh) ===\n${log}`);
  for (const m of log.matchAll(/^=== unit: (\d+) passed, (\d+) failed ===$/gm)) {
    totals.passed += Number(m[1]);
    totals.failed += Number(m[2]);
  }
  if (code !== 0 || signal) {
    failedRuns++;
    if (!/^=== unit: \d+ passed, [1-9]\d* failed ===$/m.test(log)) totals.failed++; // it failed outside any test
  }
}

async function unit() {
  const files = testFiles('test/unit');
  if (files.length === 0) {
    console.log('\n=== unit: no test files in test/unit ===');
    return;
  }
  await runNodeTests('unit', files, [], {});
}

async function e2e() {
  const files = testFiles('test/e2e');
  if (process.env.FLEET_SKIP_E2E === '1') {
    if (inCI) {
      console.log('\nFLEET_SKIP_E2E=1 is ignored in CI: the e2e suite is required there.');
    } else {
      console.log(`\n=== e2e: SKIPPED because FLEET_SKIP_E2E=1 (${files.length} files not run) ===`);
      return;
    }
  }
  if (files.length === 0) {
    console.log('\n=== e2e: no test files in test/e2e ===');
    return;
  }
  let statePath = process.env.FLEET_TEST_CONTROL_PLANE;
  if (statePath) {
    if (!existsSync(statePath)) {
      console.error(
        `FLEET_TEST_CONTROL_PLANE=${statePath} does not exist; start one with \`npm run sandbox -- up\` or unset it`,
      );
      totals.failed++;
      failedRuns++;
      return;
    }
    console.log(`\nusing the running control plane ${statePath} (left running)`);
  } else {
    const started = Date.now();
    try {
      console.log('\nstarting the control plane (etcd, hub + 2 member kube-apiservers with controller managers)...');
      statePath = await startControlPlane();
    } catch (err) {
      if (interrupted) return;
      console.error(
        `\nERROR: e2e tests need a real control plane and it could not be built or started:\n  ${err.message}`,
      );
      console.error(`See docs/control-plane.md (troubleshooting). Outside CI, FLEET_SKIP_E2E=1 skips e2e explicitly.`);
      totals.failed++;
      failedRuns++;
      return;
    }
    console.log(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${statePath}`);
  }
  if (interrupted) return;
  startOtherNodeLines();
  await runNodeTests('e2e', files, ['--test-concurrency=1', `--test-timeout=${E2E_TEST_TIMEOUT_MS}`], {
    FLEET_TEST_CONTROL_PLANE: statePath,
  });
}

async function onSignal(signal) {
  if (interrupted) return;
  interrupted = true;
  console.error(`\n${signal}: stopping tests and the control plane...`);
  for (const child of live) child.kill(signal);
  if (otherLines.child)
    try {
      process.kill(-otherLines.child.pid, signal);
    } catch {}
  await stopControlPlane();
  rmSync(runTmp, { recursive: true, force: true });
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
process.on('SIGINT', () => void onSignal('SIGINT'));
process.on('SIGTERM', () => void onSignal('SIGTERM'));
process.on('SIGHUP', () => void onSignal('SIGHUP'));

try {
  if (mode !== 'e2e') await unit();
  if (mode !== 'unit' && !interrupted) await e2e();
  await finishOtherNodeLines();
} finally {
  await stopControlPlane();
  rmSync(runTmp, { recursive: true, force: true });
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed`);
process.exit(totals.failed > 0 || failedRuns > 0 ? 1 : 0);
