// Entry point of the GitHub Action (action.yml, runs.using: node24): runs `fleet clusters verify` and hands back the JUnit
// report's path as the `junit` output. fleet is its single executable for the runner's platform when the action is a
// release (see executable() below), else the single-file bundle run with the Node that runs this file.
//
// No dependencies on purpose: the runner checks out the action's repository at the ref a workflow names
// (`uses: OWNER/fleet@v1`) and runs this file as it is, with no install, so everything it needs is here or in
// dist/bundle/fleet.mjs, which a release commits on its tag (docs/verify.md, "Releasing the action").
//
// The runner passes inputs as INPUT_<NAME> (upper case, spaces as _), and, for inputs the workflow left out, their
// defaults from action.yml. Annotations and the job summary are fleet's own: it writes them when GITHUB_ACTIONS=true and
// GITHUB_STEP_SUMMARY are set, which the child inherits. Nothing secret passes through here: inputs are paths and flags.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { splitArgs } from './args.mjs';

const BUNDLE = fileURLToPath(new URL('../dist/bundle/fleet.mjs', import.meta.url));

/** One line on stderr as an error annotation too, then exit 2 (the exit code fleet uses for usage errors). */
function fail(message) {
  process.stderr.write(`::error title=fleet action::${escapeData(message)}\n`);
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

/** Workflow command text: %, CR and LF escaped, as the runner expects. */
function escapeData(s) {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** An input the way the runner sets it (INPUT_<NAME>, spaces to _), trimmed as @actions/core's getInput trims it. */
function input(name) {
  return (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

/** Appends NAME=VALUE to $GITHUB_OUTPUT (the delimiter form when the value holds a line break). */
function setOutput(name, value) {
  const file = process.env.GITHUB_OUTPUT;
  if (!file) return;
  if (/[\r\n]/.test(value)) {
    const delimiter = `ghadelimiter_${randomUUID()}`;
    appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`, 'utf8');
  } else {
    appendFileSync(file, `${name}=${value}\n`, 'utf8');
  }
}

function stamp(file) {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return '';
  }
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/**
 * fleet's single executable (scripts/executable.mjs) for the runner's platform, or undefined to run the bundle. A
 * release commits dist/exe/fleet-linux-<arch>.sha256 on its tag; the executable itself (over 100 MB, more than a git
 * host takes in one file) is an asset of the release of that tag, downloaded from the runner's GitHub
 * (GITHUB_SERVER_URL) once per runner into its tool cache and run only when its SHA-256 is the committed one.
 * Without a committed checksum (a branch, a checkout) or when the download fails, the bundle runs, with a warning.
 */
async function executable() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  if (process.platform !== 'linux' || !arch) return undefined;
  const sumFile = fileURLToPath(new URL(`../dist/exe/fleet-linux-${arch}.sha256`, import.meta.url));
  if (!existsSync(sumFile)) return undefined;
  const [want, name] = readFileSync(sumFile, 'utf8').trim().split(/\s+/);
  if (!/^[0-9a-f]{64}$/.test(want) || name !== `fleet-linux-${arch}`)
    fail(`${sumFile}: not a checksum of fleet-linux-${arch}`);
  const dir = join(process.env.RUNNER_TOOL_CACHE || process.env.RUNNER_TEMP || tmpdir(), 'fleet', want);
  const file = join(dir, name);
  if (existsSync(file) && sha256(readFileSync(file)) === want) return file;
  const repo = process.env.GITHUB_ACTION_REPOSITORY;
  const ref = process.env.GITHUB_ACTION_REF;
  const server = (process.env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '');
  const url = `${server}/${repo}/releases/download/${ref}/${name}`;
  let body;
  try {
    if (!repo || !ref) throw new Error('GITHUB_ACTION_REPOSITORY or GITHUB_ACTION_REF is not set');
    const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    process.stderr.write(
      `::warning title=fleet action::${escapeData(`could not download fleet's executable (${url}: ${err.message}); running the bundle with Node ${process.version}`)}\n`,
    );
    return undefined;
  }
  // A download that is not what the release committed is never run.
  const got = sha256(body);
  if (got !== want) fail(`${url}: its SHA-256 is ${got}, the release's dist/exe/${name}.sha256 says ${want}`);
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, body, { mode: 0o755 });
  chmodSync(tmp, 0o755);
  renameSync(tmp, file);
  return file;
}

async function main() {
  if (!existsSync(BUNDLE)) {
    fail(
      `${BUNDLE} is missing: use the action from a release tag (uses: OWNER/fleet@vX), which carries the bundle; in a checkout, run npm run build first`,
    );
  }
  let extra;
  try {
    extra = splitArgs(input('args'));
  } catch (err) {
    fail(err.message);
  }
  if (extra.some((a) => a === '--junit' || a.startsWith('--junit=')))
    fail('input args: give the JUnit path with the junit input, not --junit');

  // Paths are relative to the directory the runner starts actions in: the workspace.
  const junit = resolve(input('junit') || 'fleet-verify.xml');
  const args = ['clusters', 'verify'];
  const kubeconfig = input('kubeconfig');
  if (kubeconfig) args.push('--kubeconfig', resolve(kubeconfig));
  const policy = input('policy');
  if (policy) args.push('--policy', resolve(policy));
  args.push('--junit', junit, ...extra);

  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('INPUT_')) delete env[key];
  // The report's directory is the action's to make (fleet itself refuses a --junit whose directory does not exist).
  try {
    mkdirSync(dirname(junit), { recursive: true });
  } catch (err) {
    fail(`input junit: cannot create the directory of ${junit}: ${err.code ?? err.message}`);
  }
  const before = stamp(junit);
  // On stderr, so that stdout is fleet's alone (clean JSON with -o json).
  const exe = await executable();
  const [command, argv] = exe ? [exe, args] : [process.execPath, [BUNDLE, ...args]];
  if (exe) process.stderr.write(`fleet's executable: ${exe}\n`);
  process.stderr.write(`fleet ${args.join(' ')}\n`);
  const child = spawn(command, argv, { stdio: 'inherit', env });
  // A cancelled job sends SIGINT, then SIGTERM: pass them on, so that fleet stops its work and its exec plugins.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  const code = await new Promise((done) => {
    child.on('error', (err) =>
      fail(`could not run ${[command, ...argv.slice(0, argv.length - args.length)].join(' ')}: ${err.message}`),
    );
    // Killed by a signal: 128 + its number, as a shell reports it.
    child.on('exit', (c, signal) => done(c ?? 128 + (constants.signals[signal] ?? 0)));
  });
  // The output names the report only when this run wrote it (not a file left from an earlier step).
  const after = stamp(junit);
  if (after && after !== before) setOutput('junit', junit);
  process.exitCode = code;
}

await main();
