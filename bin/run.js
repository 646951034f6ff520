#!/usr/bin/env node
// Start-up path: nothing here may import more than the command needs (docs/performance.md).
import {existsSync, readFileSync, statSync, unlinkSync} from 'node:fs'
import {arch, platform, release} from 'node:os'

const root = new URL('..', import.meta.url)
const argv = process.argv.slice(2)

// `fleet --version` needs no command, plugin or oclif: it prints what oclif would print (its user agent) without loading
// it. WSL, which oclif names as a platform of its own, goes the long way.
const maybeWsl = () =>
  platform() === 'linux' &&
  (/microsoft/i.test(release()) || /microsoft/i.test(readFileSync('/proc/version', {encoding: 'utf8', flag: 'r'}).toString()) ||
    existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL'))
const wsl = () => {
  try {
    return maybeWsl()
  } catch {
    return true
  }
}
if (argv.length === 1 && argv[0] === '--version' && !wsl()) {
  const {name, version} = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
  process.stdout.write(`${name}/${version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}\n`)
} else {
  // oclif trusts any oclif.manifest.json whose version matches, even when dist/ was compiled after it (help shows old
  // flags, new commands are "not found"). `npm run build` writes it after tsc; when tsc ran alone since, the manifest is
  // stale and is removed here, so oclif reads the commands themselves until the next build.
  try {
    const manifest = new URL('oclif.manifest.json', root)
    if (statSync(new URL('dist/cli/base-command.js', root)).mtimeMs > statSync(manifest).mtimeMs) unlinkSync(manifest)
  } catch {}
  const {execute} = await import('@oclif/core/execute')
  await execute({dir: import.meta.url})
}
