// Issue 29, item 4: files a kubeconfig names are read only if they are regular files of at most 1 MiB, and never block
// (src/base/files.ts readNamedFile); a kubeconfig itself may be a pipe but is read up to 64 MiB. Real files, FIFOs and
// devices, no doubles.
import assert from 'node:assert/strict'
import {execFileSync, spawn} from 'node:child_process'
import {mkdtemp, open, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {before, describe, it} from 'node:test'

import {ConfigError} from '../../src/base/errors.js'
import {fileProblem, readNamedFile, readOptional, readRequired, requireNamedFile} from '../../src/base/files.js'
import {MAX_CONFIG_FILE_BYTES, MAX_NAMED_FILE_BYTES} from '../../src/base/limits.js'
import {describeCredentials} from '../../src/kubeconfig/credentials.js'
import type {ResolvedContext} from '../../src/kubeconfig/loading-rules.js'
import {checkContext} from '../../src/kubeconfig/readiness.js'

let dir: string
let fifo: string

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-hostile-files-'))
  fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
})

/** What a read ends with: its size, or the one-line problem fileProblem words. */
async function outcome(read: Promise<Buffer | string | undefined>): Promise<string> {
  try {
    const v = await read
    return v === undefined ? 'absent' : `${v.length} bytes`
  } catch (error) {
    return error instanceof ConfigError ? `ConfigError: ${error.message}` : fileProblem(error)
  }
}

/** Runs `read` and fails the test if it takes longer than `ms` (a read that blocks would hang the test instead). */
async function within<T>(ms: number, read: () => Promise<T>): Promise<T> {
  const start = performance.now()
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still reading after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([read(), limit])
  } finally {
    clearTimeout(timer)
    assert.ok(performance.now() - start < ms)
  }
}

describe('readNamedFile: a file a kubeconfig names', () => {
  it('reads a regular file whole, up to exactly 1 MiB', async () => {
    const ok = join(dir, 'ca.pem')
    await writeFile(ok, Buffer.alloc(MAX_NAMED_FILE_BYTES, 'a'))
    assert.equal(await outcome(readNamedFile(ok)), `${MAX_NAMED_FILE_BYTES} bytes`)
    const small = join(dir, 'token')
    await writeFile(small, 'abc\n')
    assert.equal((await readNamedFile(small)).toString(), 'abc\n')
    const empty = join(dir, 'empty')
    await writeFile(empty, '')
    assert.equal(await outcome(readNamedFile(empty)), '0 bytes')
  })

  it('refuses one byte more than 1 MiB, and a 2 MB file, by its size', async () => {
    const over = join(dir, 'over')
    await writeFile(over, Buffer.alloc(MAX_NAMED_FILE_BYTES + 1, 'a'))
    assert.equal(await outcome(readNamedFile(over)), 'larger than 1 MiB')
    const big = join(dir, 'big')
    await writeFile(big, Buffer.alloc(2_000_000, 'a'))
    assert.equal(await outcome(requireNamedFile(big, `client-key ${big}`)), `ConfigError: client-key ${big}: larger than 1 MiB`)
  })

  it('refuses /dev/zero, /dev/null and a FIFO nobody writes to at once, without blocking', async () => {
    for (const path of ['/dev/zero', '/dev/null', fifo]) {
      assert.equal(await within(1000, () => outcome(readNamedFile(path))), 'not a regular file', path)
    }
    assert.equal(
      await within(1000, () => outcome(requireNamedFile('/dev/zero', 'certificate-authority /dev/zero'))),
      'ConfigError: certificate-authority /dev/zero: not a regular file',
    )
  })

  it('keeps the wording of a missing file and a directory', async () => {
    assert.equal(await outcome(requireNamedFile(join(dir, 'nope'), 'tokenFile x')), 'ConfigError: tokenFile x: file not found')
    assert.equal(await outcome(readNamedFile(dir)), 'is a directory')
  })

  it('reads a symlink to a regular file (a CA in /etc/ssl/certs is one), refuses one to a FIFO', async () => {
    const target = join(dir, 'target.pem')
    await writeFile(target, 'pem')
    execFileSync('ln', ['-s', target, join(dir, 'link.pem')])
    execFileSync('ln', ['-s', fifo, join(dir, 'link-fifo')])
    assert.equal(await outcome(readNamedFile(join(dir, 'link.pem'))), '3 bytes')
    assert.equal(await within(1000, () => outcome(readNamedFile(join(dir, 'link-fifo')))), 'not a regular file')
  })
})

describe('readOptional / readRequired: a kubeconfig or configuration file', () => {
  it('reads a pipe as it comes (--kubeconfig <(cmd))', async () => {
    const piped = join(dir, 'piped')
    execFileSync('mkfifo', [piped])
    // A writer that opens the FIFO and writes in two parts, a moment apart.
    const writer = spawn('sh', ['-c', `{ printf 'apiVersion: v1\\n'; sleep 0.2; printf 'kind: Config\\n'; } > ${piped}`])
    const closed = new Promise((resolve) => writer.on('close', resolve))
    assert.equal(await readOptional(piped, 'a kubeconfig file'), 'apiVersion: v1\nkind: Config\n')
    await closed
  })

  it('ends /dev/zero at 64 MiB with one line instead of reading on', async () => {
    const start = performance.now()
    assert.equal(await outcome(readOptional('/dev/zero', 'a kubeconfig file')), `ConfigError: /dev/zero: larger than ${MAX_CONFIG_FILE_BYTES / 1024 / 1024} MiB`)
    assert.equal(await outcome(readRequired('/dev/zero', '--rules /dev/zero')), 'ConfigError: --rules /dev/zero: larger than 64 MiB')
    assert.ok(performance.now() - start < 5000)
  })

  it('refuses a regular file over 64 MiB by its size, without reading it', async () => {
    const sparse = join(dir, 'sparse')
    const handle = await open(sparse, 'w')
    await handle.truncate(MAX_CONFIG_FILE_BYTES + 1)
    await handle.close()
    assert.equal(await outcome(readOptional(sparse, 'a kubeconfig file')), `ConfigError: ${sparse}: larger than 64 MiB`)
  })

  it('keeps absent and directory answers', async () => {
    assert.equal(await outcome(readOptional(join(dir, 'nope'), 'a kubeconfig file')), 'absent')
    assert.equal(await outcome(readOptional(dir, 'a kubeconfig file')), `ConfigError: ${dir}: is a directory, not a kubeconfig file`)
  })
})

describe('the kubeconfig readers use it', () => {
  const ctx = (cluster: Record<string, unknown>, user: Record<string, unknown>): ResolvedContext => ({
    contextName: 'c',
    clusterName: 'k',
    userName: 'u',
    cluster: {server: 'https://k.example:6443', ...cluster},
    user,
    contextFile: '/x',
    clusterFile: '/x',
  })

  it('readiness: a FIFO or a device as CA, client certificate, key or tokenFile is a problem naming the field and path', async () => {
    const r = await within(2000, () =>
      checkContext(ctx({'certificate-authority': '/dev/zero'}, {'client-certificate': fifo, 'client-key': fifo})),
    )
    assert.deepEqual(r.problems, [
      'certificate-authority /dev/zero: not a regular file',
      `client-certificate ${fifo}: not a regular file`,
      `client-key ${fifo}: not a regular file`,
    ])
    const t = await within(2000, () => checkContext(ctx({}, {tokenFile: fifo})))
    assert.deepEqual(t.problems, [`tokenFile ${fifo}: not a regular file`])
  })

  it('describeCredentials: the same problems, never blocking', async () => {
    const d = await within(2000, () => describeCredentials({server: 'https://k', 'certificate-authority': fifo}, {tokenFile: '/dev/zero'}))
    assert.deepEqual(d.problems, ['tokenFile /dev/zero: not a regular file', `certificate-authority ${fifo}: not a regular file`])
    const c = await within(2000, () => describeCredentials({server: 'https://k'}, {'client-certificate': fifo}))
    assert.deepEqual(c.problems, [`client-certificate ${fifo}: not a regular file`])
  })
})
