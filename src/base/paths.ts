import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';

/** The user's home directory: $HOME when set (tests and sandboxes point it elsewhere), else the account's. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME || homedir();
}

/**
 * The one rule for `~` in paths fleet reads from its own files: `~` alone and `~/...` are the home directory;
 * anything else (`~user/...`, `a/~`) is not expanded. Returns undefined when the value does not start with `~`.
 */
export function expandHome(value: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (value === '~') return homeDir(env);
  if (value.startsWith('~/')) return join(homeDir(env), value.slice(2));
  return undefined;
}

/**
 * A path the user gave (a flag, KUBECONFIG, a fleet configuration's own location), made absolute so that it names the
 * file the kernel would open, as kubectl's open(2) does. Node's path.resolve removes `dir/..` by text, which is another
 * file when `dir` is a symbolic link to a directory elsewhere (`link/../kube.yaml` opens the `kube.yaml` beside the
 * link's target, not the one in the working directory). So the part up to the last `..` is resolved by the file system
 * (realpath(3): fs.realpathSync without .native also removes `..` by text), the rest by text; a path without `..` is resolved by text exactly as before, and a final symbolic link is
 * kept (fleet writes through it). When that part does not exist, the path is returned unresolved, so opening it fails as
 * it does for kubectl instead of reaching a file the kernel would not.
 */
export function kernelPath(path: string, cwd: string = process.cwd()): string {
  const abs = isAbsolute(path) ? path : `${cwd.endsWith(sep) ? cwd : cwd + sep}${path}`;
  const parts = abs.split(sep);
  const last = parts.lastIndexOf('..');
  if (last < 0) return resolve(abs);
  let head: string;
  try {
    head = realpathSync.native(parts.slice(0, last + 1).join(sep) || sep);
  } catch {
    return abs;
  }
  return resolve(head, ...parts.slice(last + 1).filter((p) => p !== ''));
}
