import { ConfigError } from '../base/errors.js';
import { type ResolvedContext, mergeKubeconfigs, resolveContext } from './loading-rules.js';
import { parseKubeconfig } from './parse.js';
import { registerUserSecrets } from './redact.js';
import type { ContextOrigin } from './types.js';

/**
 * Parses a kubeconfig held somewhere other than a file (a Secret, kind's output) and resolves its current-context.
 * `where` names the source in errors. File paths inside are kept as written: relative paths have no meaningful base.
 * `origin` says whose it is: the object it was read from when it is hub data (its plugins and files are then judged by
 * TrustPolicy), or 'user' for text the user's own tools or fleet itself produced (kind's output, a credential fleet
 * minted with the user's cluster entry). Every caller decides; there is no default.
 */
export function contextFromKubeconfigText(
  text: string,
  where: string,
  origin: ContextOrigin | 'user',
  context?: string,
): ResolvedContext {
  const file = parseKubeconfig(text, where);
  for (const user of file.users.values()) registerUserSecrets(user);
  const merged = mergeKubeconfigs([file]);
  const name = context ?? merged.currentContext;
  if (!name) throw new ConfigError(`${where}: the kubeconfig sets no current-context`);
  const resolved = resolveContext(merged, name);
  // resolveContext makes paths absolute against the file's directory; a Secret has none, so use the entries verbatim.
  return {
    ...resolved,
    cluster: merged.clusters.get(resolved.clusterName)!.entry,
    user: resolved.userName ? merged.users.get(resolved.userName)!.entry : {},
    ...(origin === 'user' ? {} : { origin }),
  };
}
