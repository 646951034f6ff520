// The client libraries over a kubeconfig (test/kubeconfig-consumers): client-go (build-go.sh) and the Python kubernetes
// client (build-python.sh, list-namespaces.py) load the file, run its exec entries themselves, and list namespaces
// through every context, one JSON line per context.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { buildScriptOutput } from './binaries.js';

const here = (path: string) => fileURLToPath(new URL(`../kubeconfig-consumers/${path}`, import.meta.url));

/**
 * Runs both libraries over FILE with ENV and asserts each lists exactly CONTEXTS, each with the namespaces NAMESPACES
 * among what it saw. `record` gets every program's output (for the tests' credential grep).
 */
export function assertLibrariesList(
  file: string,
  env: NodeJS.ProcessEnv,
  contexts: string[],
  namespaces: string[],
  record: (what: string, out: string) => void = () => {},
): void {
  const programs: Array<[string, string[]]> = [
    [buildScriptOutput(here('build-go.sh')), ['--kubeconfig', file]],
    [buildScriptOutput(here('build-python.sh')), [here('list-namespaces.py'), file]],
  ];
  for (const [program, args] of programs) {
    const c = spawnSync(program, args, { encoding: 'utf8', env, timeout: 180_000 });
    record(program, c.stdout + c.stderr);
    assert.equal(c.status, 0, `${program}: ${c.stdout}${c.stderr}`);
    const lines = c.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { context: string; namespaces?: string[]; error?: string });
    assert.deepEqual(
      lines.map((l) => l.context),
      [...contexts].sort(),
      program,
    );
    for (const l of lines)
      assert.ok(
        namespaces.every((n) => l.namespaces?.includes(n)),
        `${program}: ${JSON.stringify(l)}`,
      );
  }
}
