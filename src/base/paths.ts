import { homedir } from 'node:os';
import { join } from 'node:path';

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
