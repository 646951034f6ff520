// The bench's reference (bench/reference: client-go, issue 23) is only a fair yardstick if it asks what fleet asks.
// Against the sandbox's three API servers, for each command it stands in for, both request logs (fleet -v 6, the
// reference's -log) hold the same requests per cluster in the same order, and both get the same answers.
import assert from 'node:assert/strict'
import {execFileSync, spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import yaml from 'js-yaml'

import {runFleet} from '../support/cli.js'
import {loadControlPlane, scratchDir, uniqueName} from '../support/fixture.js'
import {kubeconfigObject} from '../support/kubeconfig.js'

const cp = loadControlPlane()
const root = fileURLToPath(new URL('../..', import.meta.url))
let reference: string
let kubeconfig: string
const tokens: string[] = []

before(() => {
  reference = execFileSync('bash', [join(root, 'bench/reference/build.sh')], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']}).trim().split('\n').pop()!
  // One kubeconfig, one context per API server (alice's static token on each), as the bench's fleets are written.
  const merged = {apiVersion: 'v1', kind: 'Config', clusters: [] as unknown[], users: [] as unknown[], contexts: [] as unknown[], 'current-context': ''}
  for (const s of [cp.hub, ...cp.members]) {
    const alice = s.tokenUsers.find((u) => u.name === 'alice')!
    tokens.push(alice.token)
    const one = kubeconfigObject({path: '', server: s.url, caFile: s.caFile, context: `alice@${s.name}`, user: {token: alice.token}}) as typeof merged
    merged.clusters.push(...one.clusters)
    merged.users.push(...one.users)
    merged.contexts.push(...one.contexts)
  }
  kubeconfig = join(scratchDir(), `${uniqueName('ref')}.kubeconfig`)
  writeFileSync(kubeconfig, yaml.dump(merged), {mode: 0o600})
})

/**
 * "METHOD /path content-type" per server, in order. fleet's -v 8 log has a line "METHOD https://host:port/path[?query]
 * STATUS ..." per request, then its request and response headers; the reference's has "... content-type=TYPE" on the
 * request line. The answer's content type says which document the server sent (aggregated discovery or the plain
 * group list), so the two cannot differ in what they asked for behind the same path.
 */
function requests(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>()
  let last: {server: string; index: number} | undefined
  let inResponse = false
  for (const line of log.split('\n')) {
    const m = /^(GET|POST|PUT|PATCH|DELETE) (https:\/\/[^/\s]+)(\/[^?\s]*)\S* (?:.*content-type=(\S*))?/.exec(line)
    if (m) {
      const list = out.get(m[2]) ?? []
      list.push(`${m[1]} ${m[3]}${m[4] !== undefined ? ` ${m[4]}` : ''}`)
      out.set(m[2], list)
      last = {server: m[2], index: list.length - 1}
      inResponse = false
      continue
    }
    if (/^Response headers:/.test(line)) inResponse = true
    else if (/^Request headers:/.test(line)) inResponse = false
    const ct = /^\s+content-type: (\S+)/i.exec(line)
    if (ct && inResponse && last) out.get(last.server)![last.index] += ` ${ct[1]}`
  }
  return out
}

const COMMANDS: Array<[string, string[]]> = [
  ['whoami', ['auth', 'whoami']],
  ['can-i', ['auth', 'can-i', 'create', 'selfsubjectreviews.authentication.k8s.io']],
  ['verify', ['clusters', 'verify']],
]

describe('bench/reference sends what fleet sends', () => {
  for (const [command, args] of COMMANDS) {
    it(`${command}: the same requests per cluster, in order, and the same answers`, async () => {
      const fleet = await runFleet([...args, '--all', '--kubeconfig', kubeconfig, '-o', 'json', '-v', '8'])
      assert.ok(fleet.code === 0 || (command === 'verify' && fleet.code === 1), fleet.stderr)
      const ref = spawnSync(reference, ['-command', command, '-kubeconfig', kubeconfig, '-log'], {encoding: 'utf8'})
      assert.equal(ref.status, 0, ref.stderr)
      // fleet sends can-i's two discovery GETs at once, so their order in its log varies: compared as a set, before the review.
      const settle = (m: Map<string, string[]>) => (command === 'can-i' ? new Map([...m].map(([k, v]) => [k, [...v.filter((r) => r.startsWith('GET')).sort(), ...v.filter((r) => !r.startsWith('GET'))]])) : m)
      const ours = settle(requests(fleet.stderr))
      const theirs = settle(requests(ref.stderr))
      assert.equal(ours.size, 3, `fleet's log names ${ours.size} servers:\n${fleet.stderr}`)
      // Every request carries the content type of its answer in both logs (a request without one would compare equal to
      // nothing in particular).
      for (const list of [...ours.values(), ...theirs.values()]) for (const r of list) assert.match(r, /^\S+ \S+ (application\/json|text\/plain)/, r)
      if (command === 'can-i') for (const list of ours.values()) assert.ok(list.some((r) => /^GET \/apis .*as=APIGroupDiscoveryList/.test(r)), `no aggregated discovery: ${list.join(', ')}`)
      assert.deepEqual(theirs, ours)

      const fleetItems = fleet.json().items as Array<{cluster: string; user?: {username: string}; username?: string; allowed?: boolean; version?: string}>
      const refItems = JSON.parse(ref.stdout).items as Array<{cluster: string; username?: string; allowed?: boolean; version?: string}>
      assert.equal(refItems.length, 3)
      for (const r of refItems) {
        const f = fleetItems.find((i) => i.cluster.endsWith(`+${r.cluster}`) || i.cluster === r.cluster)
        assert.ok(f, `fleet has no item for ${r.cluster}: ${fleetItems.map((i) => i.cluster).join(', ')}`)
        if (command === 'whoami') assert.equal(f.user?.username, r.username)
        if (command === 'can-i') assert.equal(f.allowed, r.allowed)
        if (command === 'verify') assert.equal(f.username, r.username)
      }
      for (const t of tokens) assert.ok(!fleet.stdout.includes(t) && !fleet.stderr.includes(t) && !ref.stdout.includes(t) && !ref.stderr.includes(t))
    })
  }
})
