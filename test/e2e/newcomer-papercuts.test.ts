// Issue 41's papercuts of the first minute that need a cluster, against the real control plane: each as a newcomer met it.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import yaml from 'js-yaml'

import {inTerminal, runFleet} from '../support/cli.js'
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

describe('creds revoke says what it waits for while the old token is still accepted', () => {
  it('at a terminal: one line naming the credential and the wait, drawn in place and erased before the table; never when piped', async () => {
    const m1 = cp.members[0]
    const ns = uniqueName('revwait')
    const dir = mkdtempSync(join(tmpdir(), 'fleet-revoke-wait-'))
    const out = (n: number) => join(dir, `c${n}.kubeconfig`)
    const generate = (n: number) =>
      runFleet(['creds', 'generate', '--kubeconfig', m1.kubeconfig, '--cluster', m1.context, '--service-account', `${ns}/ci-${n}`, '--role', 'view', '-n', ns, '--create-namespace', '--duration', '1h', '--out', out(n)], {timeoutMs: 120_000})
    for (const n of [1, 2]) {
      const gen = await generate(n)
      assert.equal(gen.code, 0, gen.stderr)
    }
    const tokens = [1, 2].map((n) => (yaml.load(readFileSync(out(n), 'utf8')) as any).users[0].user.token as string)
    const tty = await inTerminal(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', out(1)], {TERM: 'xterm', HOME: dir}, {cwd: dir})
    const ESC = '\u001B'
    const drawn = tty.indexOf(`\r${ESC}[2K${out(1)}: waiting for the API server to refuse the old credential (up to 30s)...`)
    assert.ok(drawn >= 0, JSON.stringify(tty))
    const erased = tty.indexOf(`\r${ESC}[2K`, drawn + 1)
    assert.ok(erased > drawn && erased < tty.indexOf('CREDENTIAL'), JSON.stringify(tty))
    assert.match(tty, /revoked/)
    const piped = await runFleet(['creds', 'revoke', '--kubeconfig', m1.kubeconfig, '--file', out(2)], {timeoutMs: 120_000})
    assert.equal(piped.code, 0, piped.stderr)
    assert.doesNotMatch(piped.stderr + piped.stdout, /waiting for|\u001B/)
    for (const token of tokens) assert.ok(!tty.includes(token) && !piped.stdout.includes(token) && !piped.stderr.includes(token))
  })
})
