// Locates (building on first use) the control-plane binaries through test/control-plane/build.sh, the one place that
// knows the cache layout and the KUBEBUILDER_ASSETS / TEST_ASSET_* overrides.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const controlPlaneDir = join(repoRoot, 'test/control-plane');

export interface Binaries {
  binDir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  /** True when some binary came from KUBEBUILDER_ASSETS / TEST_ASSET_* rather than our own build. */
  external: boolean;
}

export function pinnedVersions(): { kubernetes: string; etcd: string } {
  const gomod = readFileSync(join(controlPlaneDir, 'go.mod'), 'utf8');
  const find = (mod: string) => {
    const m = gomod.match(new RegExp(`^\\s*${mod.replace(/[./]/g, '\\$&')}\\s+(v\\S+)`, 'm'));
    if (!m) throw new Error(`${mod} is not pinned in ${controlPlaneDir}/go.mod`);
    return m[1];
  };
  return { kubernetes: find('k8s.io/kubernetes'), etcd: find('go.etcd.io/etcd/server/v3') };
}

/**
 * Runs one of the binary build scripts (test/control-plane/build.sh, test/kcp/build.sh): a no-op when its cache is
 * warm. Progress lines go to `log` with `[label]` in front; resolves to the directory the script prints last.
 */
export function runBuildScript(script: string, label: string, log: (line: string) => void): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errTail = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      const text = c.toString();
      errTail = (errTail + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) log(`[${label}] ${line}`);
    });
    child.on('error', (err) => reject(new Error(`cannot run ${script}: ${err.message}`)));
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${script} failed (exit ${code}):\n${errTail.trim()}`));
      else resolvePromise(out.trim().split('\n').pop() ?? '');
    });
  });
}

/**
 * The same for a before() hook or a bench that can wait: runs a build script of the repository's Go helpers (their
 * progress on stderr) and returns the path it prints on its last stdout line.
 */
export function buildScriptOutput(script: string, timeoutMs = 1_200_000): string {
  return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: timeoutMs })
    .trim()
    .split('\n')
    .pop()!;
}

/** The file `name` in the directory a build script printed, which must be there. */
export function builtFile(binDir: string, name: string): string {
  const p = join(binDir, name);
  if (!existsSync(p)) throw new Error(`the build script printed ${binDir} but ${name} is not there`);
  return p;
}

/** Runs build.sh (a no-op when the cache is warm). Its progress goes to `log` (stderr by default). */
export async function ensureBinaries(
  log: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Promise<Binaries> {
  const binDir = await runBuildScript(join(controlPlaneDir, 'build.sh'), 'control-plane build', log);
  return {
    binDir,
    etcd: builtFile(binDir, 'etcd'),
    kubeApiserver: builtFile(binDir, 'kube-apiserver'),
    kubeControllerManager: builtFile(binDir, 'kube-controller-manager'),
    kubectl: builtFile(binDir, 'kubectl'),
    external: basename(binDir).startsWith('linked-'),
  };
}

/** The release tools built from their Go modules, each by its test/<tool>/build.sh into a cache outside the repository. */
export type ReleaseTool = 'helm' | 'kustomize' | 'kubeconform' | 'crane';

/**
 * The path of a release tool's binary: Helm v3 (test/helm), kustomize (test/kustomize), kubeconform (test/kubeconform)
 * or crane (test/crane), built on first use (a cold build takes minutes; .ci/run builds them before the tests), else
 * reused. From a shell: `bash test/helm/build.sh | tail -n 1`.
 */
export function releaseTool(tool: ReleaseTool): string {
  return buildScriptOutput(join(repoRoot, 'test', tool, 'build.sh'));
}
