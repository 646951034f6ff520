import { checkWritableFile, writeError } from '../base/files.js';
import { writeFileAtomic } from '../kubeconfig/atomic-write.js';
import { scrub } from '../kubeconfig/redact.js';

/** A report that cannot be written is a configuration error found before any cluster is contacted. */
export async function checkJunitTarget(file: string): Promise<void> {
  await checkWritableFile(file, `--junit ${file}`, 'a file for the JUnit report');
}

/** Writes a JUnit report atomically, scrubbed of every registered secret (a server message could echo one). */
export async function writeJunit(file: string, xml: string): Promise<void> {
  await writeFileAtomic(file, scrub(xml), { mode: 0o644 }).catch((error: unknown) => {
    throw writeError(`--junit ${file}`, file, error, 'a file for the JUnit report');
  });
}
