// How fast `fleet creds rotate` is on the sandbox: N token credentials (multicluster-runtime Secrets on the hub, one
// ServiceAccount, each its own anchor) are made with `fleet creds generate`, then rotated in one run by name with
// --concurrency C. Reports the wall time of the run, rotations per minute, and the median time of each step.
//   npm run sandbox -- up; npm run build; FLEET_TEST_CONTROL_PLANE=.sandbox/state.json npx tsx bench/creds-rotate.ts [--secrets N] [--concurrency C]
import {spawn, spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? dflt : Number(process.argv[i + 1])
}
const N = arg('secrets', 100)
const C = arg('concurrency', 8)
const FLEET = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const statePath = process.env.FLEET_TEST_CONTROL_PLANE
if (!statePath) throw new Error('set FLEET_TEST_CONTROL_PLANE to a sandbox state.json (npm run sandbox -- up)')
const state = JSON.parse(readFileSync(statePath, 'utf8'))
const hub = state.servers.find((s: any) => s.name === "hub")
const member = state.servers.find((s: any) => s.name === "member-1")
const kubectl: string = state.binaries.kubectl
const tag = `bench-rot-${Date.now().toString(36)}`
const env = {...process.env, CI: 'true', NO_COLOR: '1', KUBECONFIG: ''}

function fleet(args: string[]): Promise<{code: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [FLEET, ...args], {env})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({code: code ?? -1, stdout, stderr}))
  })
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor(s.length / 2)] : NaN
}

async function main() {
  spawnSync(kubectl, ['--kubeconfig', hub.kubeconfig, 'create', 'namespace', tag], {stdio: 'ignore'})
  
  const cluster: string = member.context
  const t0 = Date.now()
  const names = Array.from({length: N}, (_, i) => `s${i}`)
  for (let i = 0; i < names.length; i += 4) {
    const res = await Promise.all(
      names.slice(i, i + 4).map((n) =>
        fleet(['creds', 'generate', '--kubeconfig', member.kubeconfig, '-c', cluster, '--hub-kubeconfig', hub.kubeconfig, '--service-account', `${tag}/bench`,
          '--role', 'pod-lister', '--create-namespace', '--duration', '2h', '--secret', `${tag}/${n}`, '--format', 'multicluster-runtime', '-o', 'json']),
      ),
    )
    for (const r of res) if (r.code !== 0) throw new Error(`generate failed: ${r.stderr}`)
  }
  console.log(`generated ${N} credentials in ${((Date.now() - t0) / 1000).toFixed(1)}s`)
  const t1 = Date.now()
  const r = await fleet(['creds', 'rotate', '--kubeconfig', member.kubeconfig, '--hub-kubeconfig', hub.kubeconfig, '--concurrency', String(C), ...names.map((n) => `${tag}/${n}`), '-o', 'json'])
  const wall = (Date.now() - t1) / 1000
  const items = JSON.parse(r.stdout).items as Array<{status: string; durationMs: number; steps: Array<{step: string; ms: number}>}>
  const rotated = items.filter((i) => i.status === 'rotated').length
  console.log(`rotate: exit ${r.code}, ${rotated}/${N} rotated in ${wall.toFixed(1)}s with --concurrency ${C}: ${((rotated / wall) * 60).toFixed(0)} rotations/minute`)
  console.log(`per rotation: median ${median(items.map((i) => i.durationMs))}ms, steps ${median(items.map((i) => i.steps.length))}`)
  const steps = [...new Set(items.flatMap((i) => i.steps.map((s) => s.step)))]
  for (const s of steps) console.log(`  ${s.padEnd(16)} median ${median(items.flatMap((i) => i.steps.filter((x) => x.step === s).map((x) => x.ms)))}ms`)
  spawnSync(kubectl, ['--kubeconfig', hub.kubeconfig, 'delete', 'namespace', tag, '--wait=false'], {stdio: 'ignore'})
  spawnSync(kubectl, ['--kubeconfig', member.kubeconfig, 'delete', 'namespace', tag, '--wait=false'], {stdio: 'ignore'})
}

await main()
