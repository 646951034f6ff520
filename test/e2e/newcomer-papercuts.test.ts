// Issue 41's papercuts of the first minute that need a cluster, against the real control plane: each as a newcomer met it.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {runFleet} from '../support/cli.js'
import {kubectl, loadControlPlane, uniqueName} from '../support/fixture.js'

const cp = loadControlPlane()
const hub = cp.hub
const HUB = ['--hub-kubeconfig', hub.kubeconfig]

describe('creds rotate of a Secret that does not exist says so, and promises no next run', () => {
  it('a missing Secret in an existing namespace, and one in a namespace that does not exist: exit 1, "nothing to rotate"', async () => {
    const ns = uniqueName('nosuch')
    await kubectl(hub, ['create', 'namespace', ns])
    const missingNs = uniqueName('gone')
    const args = ['creds', 'rotate', `${ns}/nosuch`, `${missingNs}/nosuch`, ...HUB]
    const res = await runFleet(args, {timeoutMs: 60_000})
    assert.equal(res.code, 1, res.stderr)
    const lines = res.stderr.trim().split('\n')
    assert.deepEqual(lines.slice(0, 1), ['2 rotations failed: they do not exist'])
    assert.equal(lines.length, 3, res.stderr)
    assert.match(lines[1], new RegExp(`^error: hub ${hub.context}: Secret ${ns}/nosuch not found: nothing to rotate$`))
    assert.match(lines[2], new RegExp(`^error: Secret ${missingNs}/nosuch does not exist \\(.*not found\\): nothing to rotate$`))
    for (const line of lines) assert.doesNotMatch(line, /old credential|next run/, line)
    const json = await runFleet([...args, '-o', 'json'], {timeoutMs: 60_000})
    assert.equal(json.code, 1, json.stderr)
    assert.deepEqual(json.stderr.trim().split('\n'), lines.slice(1), 'the same error lines in JSON mode')
    const doc = JSON.parse(json.stdout)
    for (const item of doc.items) {
      assert.equal(item.status, 'failed')
      assert.equal(item.error.kind, 'not-found')
      assert.equal(item.unfinished, undefined, 'nothing is left for a next run')
    }
  })
})
