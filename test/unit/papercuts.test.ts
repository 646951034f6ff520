// Issue 32's papercuts a newcomer hit that need no cluster, each at the command line with HOME empty: what help offers,
// and what fleet says when there is no kubeconfig or no such context.
import assert from 'node:assert/strict'
import {mkdir, mkdtemp, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'

import {runFleet} from '../support/cli.js'

const flat = (text: string) => text.replace(/\s+/g, ' ')

describe('help says what each command takes', () => {
  it('wi token --help offers neither -o prometheus nor --concurrency (it prints one ExecCredential from one hub)', async () => {
    const res = await runFleet(['wi', 'token', '--help'])
    assert.equal(res.code, 0, res.stderr)
    assert.doesNotMatch(res.stdout, /prometheus/)
    assert.doesNotMatch(res.stdout, /--concurrency/)
    assert.doesNotMatch(res.stdout, /--output/)
    // Still the hub's flags, and -o json still works as it did (refused formats are refused in run).
    assert.match(res.stdout, /--hub-kubeconfig/)
    const yaml = await runFleet(['wi', 'token', '-o', 'yaml', '--service-account', 'a/b'])
    assert.deepEqual([yaml.code, yaml.stderr], [2, 'error: -o yaml: fleet wi token prints the ExecCredential, which is JSON\n'])
  })

  it('creds rotate --help: --shard-count splits the Secrets of --all, not clusters', async () => {
    const res = await runFleet(['creds', 'rotate', '--help'])
    assert.equal(res.code, 0, res.stderr)
    const help = flat(res.stdout)
    const from = help.indexOf('--shard-count=<value>')
    assert.ok(from >= 0, help)
    const entry = help.slice(from, help.indexOf('GLOBAL FLAGS', from))
    assert.match(entry, /Secrets/, entry)
    assert.doesNotMatch(entry, /cluster/, entry)
  })
})
