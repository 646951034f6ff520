import { rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

import { ConfigError } from '../base/errors.js';
import { checkWritableFile, readOptionalBytes, writeError } from '../base/files.js';
import { type WriteGate, withKubeconfigLock, writeFileAtomic, writeTarget } from './atomic-write.js';
import { FLEET_EXPORT_EXTENSION } from './export-marker.js';
import { ENTRY_KEY, KubeconfigEdit, type NamedItem, SECTIONS, type Section, sameItem } from './edit.js';
import type { KubeconfigDoc, NamedExtension } from './types.js';

/**
 * `fleet kubeconfig export --merge-into FILE`: the entries export wrote, added to or updated in a kubeconfig the user
 * keeps other things in (~/.kube/config). The rules (docs/kubeconfig.md, "Every tool, one kubeconfig"):
 * - only entries that carry fleet's export extension are fleet's; every other entry, comment and byte stays as it was
 *   (kubeconfig/edit.ts splices text; it never re-serialises the file);
 * - a fleet entry the user edited keeps the edits fleet does not own (see withUserFields): a context's namespace and
 *   any field or extension fleet does not write; a cluster's or user's field fleet does not write is dropped with a
 *   warning naming it, never silently;
 * - a same-named entry that is not fleet's is never overwritten: the merge stops before writing, naming the file and
 *   the entries (exit 2), and the user renames one of them;
 * - current-context is kept; it is set (to the export's, else its first context) only when the file has none;
 * - a second run with the same export changes no byte (the file is not even rewritten);
 * - the write is atomic, under kubectl's own lock file (FILE.lock, as client-go takes it), to the file a symlink names;
 *   a new file is 0600, an existing file keeps its mode.
 */

export type EntryKind = 'cluster' | 'user' | 'context';

/** One entry of the file: `{kind: context, name: prod}`. */
export interface MergeEntry {
  kind: EntryKind;
  name: string;
}

/** What a merge did (or, with dryRun, would do): the `-o json` of `export --merge-into`. */
export interface MergePlan {
  file: string;
  /** The file did not exist and is created. */
  created: boolean;
  /** The directory the file is created in did not exist either, and is created (0700), as kubectl creates it. */
  createdDirectory?: string;
  /** Whether any byte of the file changes. */
  changed: boolean;
  dryRun: boolean;
  /** current-context after the merge (absent when the file has none and the export has no context). */
  currentContext?: string;
  /** The merge set current-context (the file had none). */
  currentContextSet: boolean;
  /** Entries of the export the file did not have. */
  added: MergeEntry[];
  /** Fleet's entries the export changed. */
  updated: MergeEntry[];
  /** Fleet's entries already as the export has them. */
  unchanged: MergeEntry[];
  /** Entries of the file the export does not name (the user's own, and fleet's from other exports): left as they are. */
  kept: MergeEntry[];
  /** Of `kept`, those fleet wrote (other exports', or clusters this export did not select): left as they are. */
  keptFleet: MergeEntry[];
  /** Of `kept`, the user's own entries (no fleet.dev/export extension). */
  keptOwn: MergeEntry[];
  /** One line each: a field of a fleet entry the user set that the merge could not keep (named, never dropped silently). */
  warnings: string[];
}

const KIND: Record<Section, EntryKind> = { clusters: 'cluster', users: 'user', contexts: 'context' };

/**
 * Whether an entry's body (`cluster:`, `user:`, `context:`) carries fleet's export extension. Its name alone decides
 * (whatever its value): an entry marked fleet's is fleet's to replace, and nothing else is.
 */
export function isFleetWritten(body: unknown): boolean {
  const extensions = (body as { extensions?: unknown } | null)?.extensions;
  return Array.isArray(extensions) && extensions.some((e: NamedExtension | null) => e?.name === FLEET_EXPORT_EXTENSION);
}

/** What fleet owns in the body of each kind of entry it writes; everything else in a context is the user's. */
const CONTEXT_FIELDS_FLEET_OWNS = new Set(['cluster', 'user', 'extensions']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The exported item as it is written over a fleet entry already in the file, with the user's own edits kept:
 * - a context is the user's except its cluster, user and fleet's extension: `kubectl config set-context <entry>
 *   --namespace x` (or any field fleet does not write) survives the next export. A namespace the export carries is
 *   written only where the file's entry has none;
 * - a cluster or a user is fleet's as a whole (its server, CA and exec entry are what the provider says; a field an
 *   older export wrote must not outlive it), but a field set in the file that the export does not write is named by
 *   `dropped`, so that it is never lost silently;
 * - in every kind, extensions other than fleet's marker are the user's and kept after fleet's.
 */
function withUserFields(
  section: Section,
  existing: NamedItem,
  exported: NamedItem,
  dropped: (field: string) => void,
): NamedItem {
  const key = ENTRY_KEY[section];
  const mine = existing[key];
  const theirs = exported[key];
  if (!isRecord(mine) || !isRecord(theirs)) return exported;
  const body: Record<string, unknown> = { ...theirs };
  if (section === 'contexts') {
    for (const [field, value] of Object.entries(mine))
      if (!CONTEXT_FIELDS_FLEET_OWNS.has(field) && value !== null && value !== undefined) body[field] = value;
  } else {
    for (const [field, value] of Object.entries(mine))
      if (field !== 'extensions' && value !== null && value !== undefined && !(field in theirs)) dropped(field);
  }
  const fleetNames = new Set(
    (Array.isArray(theirs.extensions) ? theirs.extensions : []).map((e: NamedExtension | null) => e?.name),
  );
  const own = (Array.isArray(mine.extensions) ? (mine.extensions as Array<NamedExtension | null>) : []).filter(
    (e) => e && e.name !== FLEET_EXPORT_EXTENSION && !fleetNames.has(e.name),
  );
  if (own.length > 0) body.extensions = [...((theirs.extensions as unknown[] | undefined) ?? []), ...own];
  // Fields of the list item beside name and the body (rare; kubectl writes none) are the user's too.
  const outer: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(existing))
    if (field !== 'name' && field !== key && !(field in exported)) outer[field] = value;
  return { ...exported, ...outer, [key]: body };
}

function exportedItems(exported: KubeconfigDoc, section: Section): NamedItem[] {
  const list = exported[section];
  return Array.isArray(list) ? list : [];
}

/**
 * The merge on text (no file touched): the new text and the plan. `where` names the file in errors. `text` undefined
 * means the file does not exist.
 */
export function mergeKubeconfigText(
  text: string | undefined,
  exported: KubeconfigDoc,
  where: string,
): { text: string; plan: Omit<MergePlan, 'dryRun'> } {
  const edit = new KubeconfigEdit(text ?? '', where);
  const plan: Omit<MergePlan, 'dryRun'> = {
    file: where,
    created: text === undefined,
    changed: false,
    currentContextSet: false,
    added: [],
    updated: [],
    unchanged: [],
    kept: [],
    keptFleet: [],
    keptOwn: [],
    warnings: [],
  };
  const conflicts: string[] = [];
  for (const section of SECTIONS) {
    const named = new Set<string>();
    for (const item of exportedItems(exported, section)) {
      if (!isFleetWritten(item[ENTRY_KEY[section]]))
        throw new Error(
          `internal: exported ${KIND[section]} "${item.name}" lacks the ${FLEET_EXPORT_EXTENSION} extension`,
        );
      named.add(item.name);
      const entry = { kind: KIND[section], name: item.name };
      const existing = edit.item(section, item.name);
      if (!existing) {
        edit.put(section, item);
        plan.added.push(entry);
      } else if (!isFleetWritten(existing[ENTRY_KEY[section]])) {
        conflicts.push(`${KIND[section]} "${item.name}"`);
      } else {
        const merged = withUserFields(section, existing, item, (field) =>
          plan.warnings.push(
            `${where}: ${KIND[section]} "${item.name}": ${field} was set in the file; fleet writes its ${KIND[section]} entries whole, so the export replaced it (set it on a ${KIND[section]} of your own)`,
          ),
        );
        if (sameItem(existing, merged)) {
          plan.unchanged.push(entry);
        } else {
          edit.put(section, merged);
          plan.updated.push(entry);
        }
      }
    }
    for (const item of (edit.file.doc[section] ?? []) as NamedItem[]) {
      if (named.has(item.name)) continue;
      const entry = { kind: KIND[section], name: item.name };
      plan.kept.push(entry);
      (isFleetWritten(item[ENTRY_KEY[section]]) ? plan.keptFleet : plan.keptOwn).push(entry);
    }
  }
  if (conflicts.length > 0) {
    throw new ConfigError(
      `${where}: ${conflicts.join(', ')} ${conflicts.length === 1 ? 'exists' : 'exist'} and fleet did not write ${conflicts.length === 1 ? 'it' : 'them'} (no ${FLEET_EXPORT_EXTENSION} extension); rename ${conflicts.length === 1 ? 'it' : 'them'} in the file, or export under other names`,
    );
  }
  plan.currentContext = edit.file.currentContext;
  if (!plan.currentContext) {
    const first = exported['current-context'] || exportedItems(exported, 'contexts')[0]?.name;
    if (first) {
      edit.setCurrentContext(first);
      plan.currentContext = first;
      plan.currentContextSet = true;
    }
  }
  const out = edit.result();
  plan.changed = text === undefined || out !== text;
  return { text: out, plan };
}

/**
 * Merges the export into `file` (see the module comment) and returns the plan; with `dryRun` nothing is written. A
 * file that is a symlink is written where it points, so a kubeconfig kept in a dotfiles repository stays a link.
 */
export async function mergeIntoKubeconfigFile(
  file: string,
  exported: KubeconfigDoc,
  options: { dryRun?: boolean; label?: string; gate?: WriteGate } = {},
): Promise<MergePlan> {
  const label = options.label ?? file;
  const target = await writeTarget(file);
  // A new directory is made as kubectl makes it (a newcomer has no ~/.kube), and said (a typo such as ~/.kub/config
  // would otherwise pass unnoticed); a run that writes nothing removes it again.
  const dir = dirname(target);
  const dirMissing = await stat(dir).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  );
  const run = async (): Promise<MergePlan> => {
    const bytes = await readOptionalBytes(target, 'a kubeconfig file', label);
    refuseByteOrderMarks(bytes, label);
    const text = bytes?.toString('utf8');
    const { text: out, plan } = mergeKubeconfigText(text, exported, label);
    const result: MergePlan = {
      ...plan,
      ...(dirMissing ? { createdDirectory: dir } : {}),
      dryRun: options.dryRun === true,
    };
    if (options.dryRun || !plan.changed) return result;
    // An existing file keeps its mode (someone may have chosen 0640 for a group); a new one holds fleet's entries
    // only, which hold no secret, but it is a kubeconfig and other tools will add credentials to it: 0600.
    const mode = text === undefined ? 0o600 : (await stat(target)).mode & 0o7777;
    await writeFileAtomic(target, out, { mode, gate: options.gate }).catch((error: unknown) => {
      throw writeError(label, target, error, 'a kubeconfig file');
    });
    return result;
  };
  if (options.dryRun) return run();
  try {
    return await withKubeconfigLock(target, label, run);
  } catch (error) {
    // Nothing was written (an interrupt before the rename, a conflict): the directory this run made goes too.
    if (dirMissing) await rmdir(dir).catch(() => undefined);
    throw error;
  }
}

/**
 * A --merge-into path checked before any cluster is touched: writable, or (a newcomer has no ~/.kube) in a directory
 * the merge will make, as kubectl makes it, whose parent exists and is writable.
 */
export async function checkMergeTarget(path: string, label: string): Promise<void> {
  const dir = dirname(path);
  const missing = await stat(dir).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  );
  await checkWritableFile(missing ? dir : path, label, missing ? 'a directory' : 'a kubeconfig file');
  // Read once here too, so that a file the merge would refuse is refused before any cluster is touched.
  if (!missing) refuseByteOrderMarks(await readOptionalBytes(path, 'a kubeconfig file', label), label);
}

/**
 * A file whose start fleet and client-go would read differently is refused, never rewritten: a UTF-16 or UTF-32 byte
 * order mark (fleet reads UTF-8 only, so the merge turned the file into one kubectl cannot read), or a second UTF-8
 * BOM after the first (client-go's YAML reader and js-yaml skip one; the next is then part of the first key). One
 * UTF-8 BOM is what Windows editors write and both readers skip: it is kept (kubeconfig/edit.ts).
 */
export function refuseByteOrderMarks(bytes: Uint8Array | undefined, label: string): void {
  if (!bytes) return;
  const starts = (...b: number[]) => b.every((x, i) => bytes[i] === x);
  const problem =
    starts(0xff, 0xfe, 0, 0) || starts(0, 0, 0xfe, 0xff)
      ? 'a UTF-32 byte order mark'
      : starts(0xff, 0xfe) || starts(0xfe, 0xff)
        ? 'a UTF-16 byte order mark'
        : starts(0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf)
          ? 'two UTF-8 byte order marks'
          : undefined;
  if (problem)
    throw new ConfigError(
      `${label}: the file starts with ${problem}; fleet merges into UTF-8 kubeconfigs only (with at most one BOM): convert it (iconv -t UTF-8) or remove the marks; nothing was written`,
    );
}
