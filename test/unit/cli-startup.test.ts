// The start-up path (bin/run.js): `--version` is answered without loading oclif, so it must print exactly what oclif
// would; `npm run build` writes the oclif manifest so no start-up has to import every command to build it.
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {readFileSync, readdirSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, it} from 'node:test'
import {Config} from '@oclif/core'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('start-up', () => {
  it('fleet --version prints what oclif prints (its user agent)', async () => {
    const config = await Config.load({root})
    const res = spawnSync(process.execPath, [join(root, 'bin/run.js'), '--version'], {encoding: 'utf8'})
    assert.equal(res.status, 0, res.stderr)
    assert.equal(res.stdout, `${config.userAgent}\n`)
  })

  it('the build wrote an oclif manifest naming every command in dist/commands, with their flags', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as {version: string; commands: Record<string, {flags: object}>}
    const dir = join(root, 'dist/commands')
    const walk = (d: string): string[] => readdirSync(d, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.js') ? [join(d, e.name)] : []))
    const ids = walk(dir).map((f) => relative(dir, f).replace(/\.js$/, '').split('/').join(':')).sort()
    assert.deepEqual(Object.keys(manifest.commands).sort(), ids)
    assert.equal(manifest.version, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
    assert.ok(Object.values(manifest.commands).every((c) => 'all' in c.flags || Object.keys(c.flags).length > 0))
  })
})
