import { ConfigError } from '../base/errors.js';
import { readOptionalRegular } from '../base/files.js';
import { loadYamlIfValid } from '../base/yaml.js';
import { isFleetWritten } from '../kubeconfig/merge.js';

/**
 * What a file at `kubeconfig export --out FILE` holds that no export wrote, and would be lost if it were replaced: the
 * entries without the fleet.dev/export marker (the user's own contexts, clusters and users, an admin's client key), or,
 * for a file that is no kubeconfig at all, its bytes. Absent: the file does not exist, is empty, or every entry in it
 * is fleet's (an earlier `--out` to the same file), and may be replaced as it is.
 */
export interface ForeignContent {
  /** False: the file is not a kubeconfig at all (`bytes` says how much of something else it holds). */
  kubeconfig: boolean;
  bytes: number;
  contexts: string[];
  clusters: string[];
  /** Each user that holds a credential says which (`admin: a client key`). */
  users: string[];
}

const KUBECONFIG_KEYS = new Set([
  'apiVersion',
  'kind',
  'clusters',
  'contexts',
  'users',
  'current-context',
  'preferences',
  'extensions',
]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The credential a user entry holds, in words (never its value); undefined for a user with none. */
function credentialOf(user: unknown): string | undefined {
  if (!isRecord(user)) return undefined;
  if (user['client-key-data'] || user['client-key']) return 'a client key';
  if (user.token || user.tokenFile) return 'a token';
  if (user.password) return 'a password';
  if (user.exec) return 'an exec plugin';
  if (user['auth-provider']) return 'an auth provider';
  return undefined;
}

/** The entries of one section that carry no export marker, by name (with the user's credential, for users). */
function foreignEntries(doc: Record<string, unknown>, section: 'clusters' | 'contexts' | 'users'): string[] {
  const key = section.slice(0, -1);
  const items = Array.isArray(doc[section]) ? (doc[section] as unknown[]) : [];
  const out: string[] = [];
  for (const item of items) {
    const body = isRecord(item) ? item[key] : undefined;
    if (isFleetWritten(body)) continue;
    const name = isRecord(item) && typeof item.name === 'string' ? item.name : '(unnamed)';
    const credential = section === 'users' ? credentialOf(body) : undefined;
    out.push(credential ? `${name}: ${credential}` : name);
  }
  return out;
}

/** What `text` (a file's content) holds that fleet did not export; undefined when nothing. */
export function foreignContentOf(text: string): ForeignContent | undefined {
  if (text.trim() === '') return undefined;
  const bytes = Buffer.byteLength(text);
  const doc = loadYamlIfValid(text);
  const kubeconfig =
    isRecord(doc) &&
    Object.keys(doc).every((k) => KUBECONFIG_KEYS.has(k)) &&
    (doc.kind === undefined || doc.kind === 'Config');
  if (!kubeconfig) return { kubeconfig: false, bytes, contexts: [], clusters: [], users: [] };
  const foreign: ForeignContent = {
    kubeconfig: true,
    bytes,
    contexts: foreignEntries(doc, 'contexts'),
    clusters: foreignEntries(doc, 'clusters'),
    users: foreignEntries(doc, 'users'),
  };
  return foreign.contexts.length + foreign.clusters.length + foreign.users.length > 0 ? foreign : undefined;
}

/** The file's content read as --out would replace it (a regular file only: a FIFO is refused, never waited on). */
export async function foreignContent(path: string): Promise<ForeignContent | undefined> {
  const text = await readOptionalRegular(path, 'a kubeconfig file', `--out ${path}`);
  return text === undefined ? undefined : foreignContentOf(text);
}

const MAX_NAMES = 3;

function entries(names: string[], one: string, many: string): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.slice(0, MAX_NAMES).join(', ');
  const more = names.length > MAX_NAMES ? ` and ${names.length - MAX_NAMES} more` : '';
  return `${names.length} ${names.length === 1 ? one : many} (${shown}${more})`;
}

/** In words, for one line: `2 contexts (admin, dev), 1 cluster (kubernetes), 1 user (admin: a client key) not exported by fleet`. */
export function describeForeign(f: ForeignContent): string {
  if (!f.kubeconfig) return `${f.bytes} bytes that are not a kubeconfig, which fleet did not write`;
  const parts = [
    entries(f.contexts, 'context', 'contexts'),
    entries(f.clusters, 'cluster', 'clusters'),
    entries(f.users, 'user', 'users'),
  ].filter(Boolean);
  return `${parts.join(', ')} not exported by fleet`;
}

/**
 * Refuses `--out FILE` over a file that holds what fleet did not export (exit 2, one line naming the file, what it
 * holds, and the two ways on: `--merge-into FILE`, which keeps the user's entries, or `--force`). With `force`, what
 * would be replaced is returned, for the command to say before it writes.
 */
export async function checkOutReplace(path: string, force: boolean): Promise<ForeignContent | undefined> {
  const foreign = await foreignContent(path);
  if (!foreign || force) return foreign;
  const ways = foreign.kubeconfig
    ? `to add fleet's contexts to it use --merge-into ${path}; to replace it pass --force`
    : 'to replace it pass --force';
  throw new ConfigError(`--out ${path}: the file holds ${describeForeign(foreign)}; ${ways}`);
}
