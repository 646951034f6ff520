import {stat} from 'node:fs/promises'
import {dirname} from 'node:path'

import {ConfigError} from '../base/errors.js'
import {writeFileAtomic} from '../kubeconfig/atomic-write.js'
import {scrub} from '../kubeconfig/redact.js'

/** A report that cannot be written is a usage error found before any cluster is contacted. */
export async function checkJunitTarget(file: string): Promise<void> {
  const dir = dirname(file)
  const info = await stat(dir).catch(() => undefined)
  if (!info?.isDirectory()) throw new ConfigError(`--junit ${file}: directory ${dir} does not exist`)
}

/** Writes a JUnit report atomically, scrubbed of every registered secret (a server message could echo one). */
export async function writeJunit(file: string, xml: string): Promise<void> {
  await writeFileAtomic(file, scrub(xml), {mode: 0o644}).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`--junit ${file}: ${error.code === 'EACCES' ? 'permission denied' : error.message}`)
  })
}
