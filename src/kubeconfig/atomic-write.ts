import {randomBytes} from 'node:crypto'
import {open, rename, unlink} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

/**
 * Writes a file so that readers see either the old content or the new, never a part: a temp file beside the target
 * (same filesystem, so rename is atomic), fsync, rename, then fsync of the directory so the rename survives a crash.
 * The temp file is created with the final mode, so a credential is never readable by others even for a moment.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: {mode?: number} = {}): Promise<void> {
  const mode = options.mode ?? 0o600
  const dir = dirname(path)
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  const handle = await open(tmp, 'wx', mode)
  let renamed = false
  try {
    await handle.writeFile(data)
    // The mode argument of open is filtered by the umask; set it explicitly.
    await handle.chmod(mode)
    await handle.sync()
    await handle.close()
    await rename(tmp, path)
    renamed = true
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {})
      await unlink(tmp).catch(() => {})
    }
  }
  const dirHandle = await open(dir, 'r').catch(() => undefined)
  if (dirHandle) {
    await dirHandle.sync().catch(() => {})
    await dirHandle.close()
  }
}
