// Benchmarks, reported as ratios against a reference measured in the same run on the same machine (never as absolute
// thresholds in tests). Reference: kubectl (built from the pinned Kubernetes module) doing the same job.
//   npm run bench [-- --contexts N --runs R]
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? dflt : Number(process.argv[i + 1])
}
const CONTEXTS = arg('contexts', 300)
const RUNS = arg('runs', 7)
const FLEET = fileURLToPath(new URL('../bin/run.js', import.meta.url))

function kubectlPath(): string | undefined {
  if (process.env.TEST_ASSET_KUBECTL) return process.env.TEST_ASSET_KUBECTL
  try {
    const dir = execFileSync('bash', [fileURLToPath(new URL('../test/control-plane/build.sh', import.meta.url))], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim().split('\n').pop()!
    if (existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl')
  } catch {}
  return undefined
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function time(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const samples: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    const r = spawnSync(cmd, args, {env: {...process.env, ...env}, stdio: ['ignore', 'ignore', 'pipe']})
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`)
    samples.push(performance.now() - t)
  }
  return median(samples)
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
const kubectl = kubectlPath()
const rows: Array<{case: string; ms: number; ratio?: number}> = []
const ref = kubectl ? time(kubectl, ['config', 'get-contexts'], {KUBECONFIG}) : undefined
if (ref !== undefined) rows.push({case: `reference: kubectl config get-contexts (${CONTEXTS} files)`, ms: ref, ratio: 1})
const base = time(process.execPath, ['-e', ''], {})
rows.push({case: 'node -e "" (process start floor)', ms: base, ratio: ref ? base / ref : undefined})
for (const [name, args, env] of [
  ['fleet clusters list (KUBECONFIG list)', ['clusters', 'list'], {KUBECONFIG}],
  ['fleet clusters list -o json (KUBECONFIG list)', ['clusters', 'list', '-o', 'json'], {KUBECONFIG}],
  ['fleet clusters list --kubeconfig DIR', ['clusters', 'list', '--kubeconfig', dir], {KUBECONFIG: ''}],
  ['fleet --help', ['--help'], {}],
] as const) {
  const ms = time(process.execPath, [FLEET, ...args], env as NodeJS.ProcessEnv)
  rows.push({case: name, ms, ratio: ref ? ms / ref : undefined})
}
console.log(`median of ${RUNS} runs, ${CONTEXTS} contexts; ratio = time / reference`)
for (const r of rows) console.log(`${r.case.padEnd(52)} ${r.ms.toFixed(0).padStart(6)} ms   ${r.ratio === undefined ? '' : `x${r.ratio.toFixed(2)}`}`)
