// Entry point of the GitHub Action (action.yml, runs.using: node24): runs `fleet clusters verify` from the single-file
// bundle with the Node that runs this file, and hands back the JUnit report's path as the `junit` output.
//
// No dependencies on purpose: the runner checks out the action's repository at the ref a workflow names
// (`uses: OWNER/fleet@v1`) and runs this file as it is, with no install, so everything it needs is here or in
// dist/bundle/fleet.mjs, which a release commits on its tag (docs/verify.md, "Releasing the action").
//
// The runner passes inputs as INPUT_<NAME> (upper case, spaces as _), and, for inputs the workflow left out, their
// defaults from action.yml. Annotations and the job summary are fleet's own: it writes them when GITHUB_ACTIONS=true and
// GITHUB_STEP_SUMMARY are set, which the child inherits. Nothing secret passes through here: inputs are paths and flags.
import {spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {appendFileSync, existsSync, mkdirSync, statSync} from 'node:fs'
import {constants} from 'node:os'
import {dirname, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import {splitArgs} from './args.mjs'

const BUNDLE = fileURLToPath(new URL('../dist/bundle/fleet.mjs', import.meta.url))

/** One line on stderr as an error annotation too, then exit 2 (the exit code fleet uses for usage errors). */
function fail(message) {
  process.stderr.write(`::error title=fleet action::${escapeData(message)}\n`)
  process.stderr.write(`error: ${message}\n`)
  process.exit(2)
}

/** Workflow command text: %, CR and LF escaped, as the runner expects. */
function escapeData(s) {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

/** An input the way the runner sets it (INPUT_<NAME>, spaces to _), trimmed as @actions/core's getInput trims it. */
function input(name) {
  return (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim()
}

/** Appends NAME=VALUE to $GITHUB_OUTPUT (the delimiter form when the value holds a line break). */
function setOutput(name, value) {
  const file = process.env.GITHUB_OUTPUT
  if (!file) return
  if (/[\r\n]/.test(value)) {
    const delimiter = `ghadelimiter_${randomUUID()}`
    appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`, 'utf8')
  } else {
    appendFileSync(file, `${name}=${value}\n`, 'utf8')
  }
}

function stamp(file) {
  try {
    const s = statSync(file)
    return `${s.ino}:${s.mtimeMs}:${s.size}`
  } catch {
    return ''
  }
}

async function main() {
  if (!existsSync(BUNDLE)) {
    fail(`${BUNDLE} is missing: use the action from a release tag (uses: OWNER/fleet@vX), which carries the bundle; in a checkout, run npm run build first`)
  }
  let extra
  try {
    extra = splitArgs(input('args'))
  } catch (err) {
    fail(err.message)
  }
  if (extra.some((a) => a === '--junit' || a.startsWith('--junit='))) fail('input args: give the JUnit path with the junit input, not --junit')

  // Paths are relative to the directory the runner starts actions in: the workspace.
  const junit = resolve(input('junit') || 'fleet-verify.xml')
  const args = ['clusters', 'verify']
  const kubeconfig = input('kubeconfig')
  if (kubeconfig) args.push('--kubeconfig', resolve(kubeconfig))
  const policy = input('policy')
  if (policy) args.push('--policy', resolve(policy))
  args.push('--junit', junit, ...extra)

  const env = {...process.env}
  for (const key of Object.keys(env)) if (key.startsWith('INPUT_')) delete env[key]
  // The report's directory is the action's to make (fleet itself refuses a --junit whose directory does not exist).
  try {
    mkdirSync(dirname(junit), {recursive: true})
  } catch (err) {
    fail(`input junit: cannot create the directory of ${junit}: ${err.code ?? err.message}`)
  }
  const before = stamp(junit)
  // On stderr, so that stdout is fleet's alone (clean JSON with -o json).
  process.stderr.write(`fleet ${args.join(' ')}\n`)
  const child = spawn(process.execPath, [BUNDLE, ...args], {stdio: 'inherit', env})
  // A cancelled job sends SIGINT, then SIGTERM: pass them on, so that fleet stops its work and its exec plugins.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  const code = await new Promise((done) => {
    child.on('error', (err) => fail(`could not run ${process.execPath} ${BUNDLE}: ${err.message}`))
    // Killed by a signal: 128 + its number, as a shell reports it.
    child.on('exit', (c, signal) => done(c ?? 128 + (constants.signals[signal] ?? 0)))
  })
  // The output names the report only when this run wrote it (not a file left from an earlier step).
  const after = stamp(junit)
  if (after && after !== before) setOutput('junit', junit)
  process.exitCode = code
}

await main()
