// fleet auth plugins at the command line over the user's own kubeconfigs, the way users name them (--kubeconfig with
// HOME empty, KUBECONFIG, a relative path, a symlink), with and without a kuberc: nothing runs, the verdict is kubectl's.
import assert from 'node:assert/strict'
import {existsSync} from 'node:fs'
import {mkdtemp, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'

import type {PluginList} from '../../src/commands/auth/plugins.js'
import {runFleet} from '../support/cli.js'

async function fixture() {
  const d = await mkdtemp(join(tmpdir(), 'fleet-plugins-'))
  const marker = join(d, 'ran')
  const exec = (command: string) => ({exec: {apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', command, args: ['-c', `touch ${marker}`]}})
  const kc = join(d, 'fleet.kubeconfig')
  await writeFile(kc, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'a',
    clusters: [{name: 'k', cluster: {server: 'https://k.example:6443'}}],
    users: [{name: 'sh', user: exec('/bin/sh')}, {name: 'login', user: exec('cloudco-login')}, {name: 'token', user: {token: 'not-a-plugin'}}],
    contexts: [
      {name: 'a', context: {cluster: 'k', user: 'sh'}},
      {name: 'b', context: {cluster: 'k', user: 'sh'}},
      {name: 'c', context: {cluster: 'k', user: 'login'}},
      {name: 'd', context: {cluster: 'k', user: 'token'}},
    ],
  }))
  await symlink(kc, join(d, 'link.kubeconfig'))
  const deny = join(d, 'deny.kuberc')
  await writeFile(deny, 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: DenyAll\n')
  return {d, kc, marker, deny}
}

describe('fleet auth plugins over the user’s kubeconfigs', () => {
  it('every spelling of the file gives the same answer: each command once, its clusters, from the user’s file, allowed; nothing runs', async () => {
    const {d, kc, marker} = await fixture()
    const home = await mkdtemp(join(tmpdir(), 'fleet-plugins-home-'))
    const runs = [
      await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'json'], {env: {HOME: home}}),
      await runFleet(['auth', 'plugins', '-o', 'json'], {env: {HOME: home, KUBECONFIG: kc}}),
      await runFleet(['auth', 'plugins', '--kubeconfig', 'fleet.kubeconfig', '-o', 'json'], {env: {HOME: home}, cwd: d}),
      await runFleet(['auth', 'plugins', '--kubeconfig', join(d, 'link.kubeconfig'), '-o', 'json'], {env: {HOME: home}}),
    ]
    for (const res of runs) {
      assert.equal(res.code, 0, res.stderr)
      const list = res.json<PluginList>()
      assert.equal(list.kuberc, undefined)
      assert.deepEqual(list.items.map((p) => [p.command, p.trust, p.allowed, p.clusters.length]), [['/bin/sh', 'file', true, 2], ['cloudco-login', 'file', true, 1]])
      assert.equal(list.items[0].sources.length, 1)
    }
    assert.equal(existsSync(marker), false, 'listing runs nothing')
    const names = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'name'])
    assert.equal(names.stdout, '/bin/sh\ncloudco-login\n')
  })

  it('a kuberc with DenyAll (--kuberc, KUBERC, ~/.kube/kuberc): each plugin refused naming the kuberc, exit 1; KUBECTL_KUBERC=false turns it off', async () => {
    const {kc, marker, deny} = await fixture()
    const home = await mkdtemp(join(tmpdir(), 'fleet-plugins-home-'))
    const {mkdir, copyFile} = await import('node:fs/promises')
    await mkdir(join(home, '.kube'))
    await copyFile(deny, join(home, '.kube', 'kuberc'))
    for (const [how, args, env] of [
      ['--kuberc', ['--kuberc', deny], {}],
      ['KUBERC', [], {KUBERC: deny}],
      ['default', [], {HOME: home}],
    ] as const) {
      const res = await runFleet(['auth', 'plugins', '--kubeconfig', kc, ...args, '-o', 'json'], {env})
      assert.equal(res.code, 1, how)
      const list = res.json<PluginList>()
      assert.ok(list.items.every((p) => !p.allowed), how)
      assert.match(list.items[0].reason ?? '', /"\/bin\/sh" not allowed by credentialPluginPolicy DenyAll in /, how)
      const table = await runFleet(['auth', 'plugins', '--kubeconfig', kc, ...args], {env})
      assert.match(table.stdout, /^COMMAND\s+FROM\s+CLUSTERS\s+ALLOWED\s+REASON\n\/bin\/sh\s+user file\s+.*\s+no\s+/, how)
    }
    const off = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '-o', 'json'], {env: {HOME: home, KUBECTL_KUBERC: 'false'}})
    assert.equal(off.code, 0, off.stderr)
    // And whoami on the refused context says so in one line, naming the context, the command and the kuberc; nothing runs.
    const who = await runFleet(['auth', 'whoami', '--kubeconfig', kc, '--kuberc', deny])
    assert.equal(who.code, 1)
    assert.match(who.stderr, new RegExp(`^error: .*context "a" \\(${kc}\\): plugin "/bin/sh" not allowed by credentialPluginPolicy DenyAll in ${deny}`, 'm'))
    assert.equal(existsSync(marker), false)
  })

  it('--write-kuberc needs a writable place and a command the fleet runs; --command and --dry-run need --write-kuberc', async () => {
    const {kc} = await fixture()
    const noDir = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--write-kuberc', '/nonexistent-dir/kuberc'])
    assert.deepEqual([noDir.code, noDir.stderr], [2, 'error: --write-kuberc /nonexistent-dir/kuberc: directory /nonexistent-dir does not exist\n'])
    const alone = await runFleet(['auth', 'plugins', '--kubeconfig', kc, '--dry-run'])
    assert.deepEqual([alone.code, alone.stderr], [2, 'error: --dry-run needs --write-kuberc\n'])
  })
})
