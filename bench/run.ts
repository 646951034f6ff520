// Benchmarks, reported as ratios against a reference measured in the same run on the same machine (never as absolute
// thresholds in tests). Reference: kubectl (built from the pinned Kubernetes module) doing the same job.
//   npm run bench [-- --contexts N --runs R] [--compare GIT-REF] [--sandbox STATE.json] [--cpu] [--only REGEX]
// --compare builds GIT-REF (git archive into a temporary directory, sharing node_modules) and times both builds on every
// case, alternating runs so both see the same machine load: a refactor is "not slower" when its column is not higher.
// --sandbox (or FLEET_TEST_CONTROL_PLANE) adds `fleet auth whoami --all` over the clusters of a running sandbox.
// --cpu compares CPU time (user + sys) instead of wall time: steadier on a machine shared with other work.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const argText = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const arg = (name: string, dflt: number) => Number(argText(name) ?? dflt)
const CONTEXTS = arg('contexts', 300)
const RUNS = arg('runs', 7)
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const FLEET = join(ROOT, 'bin/run.js')
// --compare may be given more than once; `--compare HEAD --compare OLD` times two builds made the same way (both in a
// scratch directory), which removes what the checkout's own location adds (about 10 ms here).
const COMPARE = process.argv.flatMap((a, i) => (a === '--compare' && process.argv[i + 1] ? [process.argv[i + 1]] : []))
const SANDBOX = argText('sandbox') ?? process.env.FLEET_TEST_CONTROL_PLANE

function kubectlPath(): string | undefined {
  if (process.env.TEST_ASSET_KUBECTL) return process.env.TEST_ASSET_KUBECTL
  try {
    const dir = execFileSync('bash', [join(ROOT, 'test/control-plane/build.sh')], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim().split('\n').pop()!
    if (existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl')
  } catch {}
  return undefined
}

/** GIT-REF built into a scratch directory: its sources, this checkout's node_modules, its own tsc output. */
function buildRef(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-ref-'))
  execFileSync('bash', ['-c', `git -C "${ROOT}" archive "${ref}" | tar -x -C "${dir}"`], {stdio: 'inherit'})
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], {stdio: 'inherit'})
  return join(dir, 'bin/run.js')
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

// On a shared, loaded machine wall time swings with the neighbours; the CPU time the process itself used (user + sys,
// from /usr/bin/time) does much less, so with --cpu that is what is compared.
const CPU = process.argv.includes('--cpu') && existsSync('/usr/bin/time')
const CPU_FILE = join(mkdtempSync(join(tmpdir(), 'fleet-bench-cpu-')), 'time.txt')

function once(cmd: string, args: string[], env: NodeJS.ProcessEnv, okCodes = [0]): number {
  const t = performance.now()
  const [c, a] = CPU ? ['/usr/bin/time', ['-f', '%U %S', '-o', CPU_FILE, cmd, ...args]] : [cmd, args]
  const r = spawnSync(c, a, {env: {...process.env, ...env}, stdio: ['ignore', 'ignore', 'pipe']})
  if (!okCodes.includes(r.status ?? -1)) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}: ${r.stderr}`)
  if (!CPU) return performance.now() - t
  const [user, sys] = readFileSync(CPU_FILE, 'utf8').trim().split('\n').pop()!.split(' ').map(Number)
  return (user + sys) * 1000
}

/** Median of RUNS for each command, the commands' runs interleaved, in alternating order so neither always goes first. */
function timeAll(cmds: Array<{cmd: string; args: string[]}>, env: NodeJS.ProcessEnv, okCodes?: number[]): number[] {
  const samples = cmds.map(() => [] as number[])
  for (let i = 0; i < RUNS; i++) {
    const order = cmds.map((_, k) => k)
    if (i % 2 === 1) order.reverse()
    for (const k of order) samples[k].push(once(cmds[k].cmd, cmds[k].args, env, okCodes))
  }
  return samples.map(median)
}

const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'))
const files: string[] = []
for (let i = 0; i < CONTEXTS; i++) {
  const f = join(dir, `c${i}.kubeconfig`)
  writeFileSync(f, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': `ctx-${i}`,
    clusters: [{name: `cl-${i}`, cluster: {server: `https://10.0.${i >> 8}.${i & 255}:6443`, 'insecure-skip-tls-verify': true}}],
    users: [{name: `u-${i}`, user: {token: `token-${i}-${'x'.repeat(20)}`}}],
    contexts: [{name: `ctx-${i}`, context: {cluster: `cl-${i}`, user: `u-${i}`}}],
  }))
  files.push(f)
}
const KUBECONFIG = files.join(':')
const builds: Array<{label: string; bin: string}> = [{label: 'this checkout', bin: FLEET}]
for (const ref of COMPARE) builds.push({label: ref, bin: buildRef(ref)})

const kubectl = kubectlPath()
const rows: Array<{case: string; ms: number[]; ratio?: number[]}> = []
const ref = kubectl ? timeAll([{cmd: kubectl, args: ['config', 'get-contexts']}], {KUBECONFIG})[0] : undefined
if (ref !== undefined) rows.push({case: `reference: kubectl config get-contexts (${CONTEXTS} files)`, ms: [ref]})
rows.push({case: 'node -e "" (process start floor)', ms: timeAll([{cmd: process.execPath, args: ['-e', '']}], {})})

const cases: Array<[string, string[], NodeJS.ProcessEnv, number[]?]> = [
  ['fleet --version', ['--version'], {}],
  [`fleet clusters list (KUBECONFIG list of ${CONTEXTS})`, ['clusters', 'list'], {KUBECONFIG}],
  ['fleet clusters list -o json (KUBECONFIG list)', ['clusters', 'list', '-o', 'json'], {KUBECONFIG}],
  ['fleet clusters list --kubeconfig DIR', ['clusters', 'list', '--kubeconfig', dir], {KUBECONFIG: ''}],
  ['fleet --help', ['--help'], {}],
]
if (SANDBOX) {
  const state = JSON.parse(readFileSync(SANDBOX, 'utf8')) as {servers: Array<{kubeconfig: string}>}
  const sandboxKubeconfig = state.servers.map((s) => s.kubeconfig).join(':')
  cases.push([`fleet auth whoami --all (sandbox, ${state.servers.length} clusters)`, ['auth', 'whoami', '--all'], {KUBECONFIG: sandboxKubeconfig}, [0, 1]])
}
// --only REGEX: just the cases whose name matches (more runs of fewer cases on a busy machine).
const only = argText('only')
for (const [name, args, env, okCodes] of cases.filter(([n]) => !only || new RegExp(only).test(n))) {
  const ms = timeAll(builds.map((b) => ({cmd: process.execPath, args: [b.bin, ...args]})), {HOME: dir, XDG_CONFIG_HOME: dir, ...env}, okCodes)
  rows.push({case: name, ms, ratio: ref ? ms.map((m) => m / ref) : undefined})
}
console.log(`median ${CPU ? 'CPU time (user+sys)' : 'wall time'} of ${RUNS} runs, ${CONTEXTS} contexts; ratio = time / reference${COMPARE.length > 0 ? `; columns: ${builds.map((b) => b.label).join(' | ')}` : ''}`)
for (const r of rows) {
  const cols = r.ms.map((m, k) => `${m.toFixed(0).padStart(6)} ms ${r.ratio ? `x${r.ratio[k].toFixed(2)}` : '     '}`)
  console.log(`${r.case.padEnd(56)} ${cols.join('   ')}`)
}
