// The client libraries over a kubeconfig (test/kubeconfig-consumers): client-go (build-go.sh) and the Python kubernetes
// client (build-python.sh, list-namespaces.py) load the file, run its exec entries themselves, and list namespaces
// through every context, one JSON line per context.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
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

/** One JSON line per context, as every consumer program prints it. */
export interface ConsumerLine {
  context: string;
  namespaces?: string[];
  error?: string;
}

/**
 * The clients that set no KUBERNETES_EXEC_INFO (issue 46, item 6): @kubernetes/client-node 2.0.1
 * (build-client-node.sh) and fabric8 kubernetes-client 7.9.0 (build-java.sh), each loading its own default
 * kubeconfig (KUBECONFIG in ENV, else ~/.kube/config) and listing namespaces through every context. Returns each
 * program's exit code and lines; `record` gets every output (for the tests' credential grep). Run without blocking
 * this process: a test's capture server in it must answer the clients meanwhile.
 */
export async function runDefaultLoaders(
  env: NodeJS.ProcessEnv,
  record: (what: string, out: string) => void = () => {},
): Promise<Array<{ program: string; status: number | null; lines: ConsumerLine[]; stderr: string }>> {
  const out = [];
  for (const build of [here('build-client-node.sh'), here('build-java.sh')]) {
    const program = buildScriptOutput(build);
    const c = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(program, [], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    record(program, c.stdout + c.stderr);
    const lines = c.stdout
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as ConsumerLine);
    out.push({ program, status: c.status, lines, stderr: c.stderr });
  }
  return out;
}
