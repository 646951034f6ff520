import { ConfigError, UsageError } from '../base/errors.js';
import { readRequired } from '../base/files.js';
import { MIN_TOKEN_SECONDS } from '../base/limits.js';
import { registerSecret } from '../kubeconfig/redact.js';
import { type AuthenticationConfiguration, parseAuthenticationConfiguration } from './auth-config.js';

/** Files and values the `wi` commands read from the user, each failing with one line naming the file or flag. */
async function readUserFile(file: string, flag: string): Promise<string> {
  return (
    await readRequired(
      file,
      `${flag} ${file}`,
      flag === '--token-file' ? 'a token file' : 'an AuthenticationConfiguration file',
    )
  ).toString('utf8');
}

export async function readTokenFile(file: string): Promise<{ value: string; file: string }> {
  const value = (await readUserFile(file, '--token-file')).trim();
  registerSecret(value);
  if (value === '') throw new ConfigError(`--token-file ${file}: the file is empty`);
  return { value, file };
}

export async function readAuthenticationConfig(
  file: string,
): Promise<{ file: string; raw: string; config: AuthenticationConfiguration }> {
  const raw = await readUserFile(file, '--authentication-config');
  return { file, raw, config: parseAuthenticationConfiguration(raw, file) };
}

export function expirationSeconds(ms: number): number {
  const s = Math.round(ms / 1000);
  if (s < MIN_TOKEN_SECONDS)
    throw new UsageError(`--expiration: at least 10m (the API server refuses shorter tokens), got ${s}s`);
  return s;
}
