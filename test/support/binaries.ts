// Locates (building on first use) the control-plane binaries through test/control-plane/build.sh, the one place that
// knows the cache layout and the KUBEBUILDER_ASSETS / TEST_ASSET_* overrides.
import { spawn } from 'node:child_process';
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

/** Runs build.sh (a no-op when the cache is warm). Its progress goes to `log` (stderr by default). */
export function ensureBinaries(log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<Binaries> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [join(controlPlaneDir, 'build.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errTail = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      const text = c.toString();
      errTail = (errTail + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) log(`[control-plane build] ${line}`);
    });
    child.on('error', (err) => reject(new Error(`cannot run build.sh: ${err.message}`)));
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`test/control-plane/build.sh failed (exit ${code}):\n${errTail.trim()}`));
        return;
      }
      const binDir = out.trim().split('\n').pop() ?? '';
      const pick = (name: string) => {
        const p = join(binDir, name);
        if (!existsSync(p)) throw new Error(`build.sh printed ${binDir} but ${name} is not there`);
        return p;
      };
      try {
        resolvePromise({
          binDir,
          etcd: pick('etcd'),
          kubeApiserver: pick('kube-apiserver'),
          kubeControllerManager: pick('kube-controller-manager'),
          kubectl: pick('kubectl'),
          external: basename(binDir).startsWith('linked-'),
        });
      } catch (err) {
        reject(err);
      }
    });
  });
}
