import {stat} from 'node:fs/promises'
import {dirname} from 'node:path'

import {ConfigError} from '../base/errors.js'
import {checkWritableFile, readOptional, writeError} from '../base/files.js'
import {withKubeconfigLock, writeFileAtomic, writeTarget} from './atomic-write.js'
import {FLEET_EXPORT_EXTENSION} from './export-marker.js'
import {ENTRY_KEY, KubeconfigEdit, type NamedItem, SECTIONS, type Section, sameItem} from './edit.js'
import type {KubeconfigDoc, NamedExtension} from './types.js'

/**
 * `fleet kubeconfig export --merge-into FILE`: the entries export wrote, added to or updated in a kubeconfig the user
 * keeps other things in (~/.kube/config). The rules (docs/kubeconfig.md, "Every tool, one kubeconfig"):
 * - only entries that carry fleet's export extension are fleet's; every other entry, comment and byte stays as it was
 *   (kubeconfig/edit.ts splices text; it never re-serialises the file);
 * - a same-named entry that is not fleet's is never overwritten: the merge stops before writing, naming the file and
 *   the entries (exit 2), and the user renames one of them;
 * - current-context is kept; it is set (to the export's, else its first context) only when the file has none;
 * - a second run with the same export changes no byte (the file is not even rewritten);
 * - the write is atomic, under kubectl's own lock file (FILE.lock, as client-go takes it), to the file a symlink names;
 *   a new file is 0600, an existing file keeps its mode.
 */


export type EntryKind = 'cluster' | 'user' | 'context'

/** One entry of the file: `{kind: context, name: prod}`. */
export interface MergeEntry {
  kind: EntryKind
  name: string
}

/** What a merge did (or, with dryRun, would do): the `-o json` of `export --merge-into`. */
export interface MergePlan {
  file: string
  /** The file did not exist and is created. */
  created: boolean
  /** Whether any byte of the file changes. */
  changed: boolean
  dryRun: boolean
  /** current-context after the merge (absent when the file has none and the export has no context). */
  currentContext?: string
  /** The merge set current-context (the file had none). */
  currentContextSet: boolean
  /** Entries of the export the file did not have. */
  added: MergeEntry[]
  /** Fleet's entries the export changed. */
  updated: MergeEntry[]
  /** Fleet's entries already as the export has them. */
  unchanged: MergeEntry[]
  /** Entries of the file the export does not name (the user's own, and fleet's from other exports): left as they are. */
  kept: MergeEntry[]
}

const KIND: Record<Section, EntryKind> = {clusters: 'cluster', users: 'user', contexts: 'context'}

/**
 * Whether an entry's body (`cluster:`, `user:`, `context:`) carries fleet's export extension. Its name alone decides
 * (whatever its value): an entry marked fleet's is fleet's to replace, and nothing else is.
 */
export function isFleetWritten(body: unknown): boolean {
  const extensions = (body as {extensions?: unknown} | null)?.extensions
  return Array.isArray(extensions) && extensions.some((e: NamedExtension | null) => e?.name === FLEET_EXPORT_EXTENSION)
}

function exportedItems(exported: KubeconfigDoc, section: Section): NamedItem[] {
  const list = exported[section]
  return Array.isArray(list) ? (list as NamedItem[]) : []
}

/**
 * The merge on text (no file touched): the new text and the plan. `where` names the file in errors. `text` undefined
 * means the file does not exist.
 */
export function mergeKubeconfigText(text: string | undefined, exported: KubeconfigDoc, where: string): {text: string; plan: Omit<MergePlan, 'dryRun'>} {
  const edit = new KubeconfigEdit(text ?? '', where)
  const plan: Omit<MergePlan, 'dryRun'> = {file: where, created: text === undefined, changed: false, currentContextSet: false, added: [], updated: [], unchanged: [], kept: []}
  const conflicts: string[] = []
  for (const section of SECTIONS) {
    const named = new Set<string>()
    for (const item of exportedItems(exported, section)) {
      if (!isFleetWritten(item[ENTRY_KEY[section]])) throw new Error(`internal: exported ${KIND[section]} "${item.name}" lacks the ${FLEET_EXPORT_EXTENSION} extension`)
      named.add(item.name)
      const entry = {kind: KIND[section], name: item.name}
      const existing = edit.item(section, item.name)
      if (!existing) {
        edit.put(section, item)
        plan.added.push(entry)
      } else if (!isFleetWritten(existing[ENTRY_KEY[section]])) {
        conflicts.push(`${KIND[section]} "${item.name}"`)
      } else if (sameItem(existing, item)) {
        plan.unchanged.push(entry)
      } else {
        edit.put(section, item)
        plan.updated.push(entry)
      }
    }
    for (const item of (edit.file.doc[section] ?? []) as NamedItem[]) if (!named.has(item.name)) plan.kept.push({kind: KIND[section], name: item.name})
  }
  if (conflicts.length > 0) {
    throw new ConfigError(
      `${where}: ${conflicts.join(', ')} ${conflicts.length === 1 ? 'exists' : 'exist'} and fleet did not write ${conflicts.length === 1 ? 'it' : 'them'} (no ${FLEET_EXPORT_EXTENSION} extension); rename ${conflicts.length === 1 ? 'it' : 'them'} in the file, or export under other names`,
    )
  }
  plan.currentContext = edit.file.currentContext
  if (!plan.currentContext) {
    const first = exported['current-context'] || exportedItems(exported, 'contexts')[0]?.name
    if (first) {
      edit.setCurrentContext(first)
      plan.currentContext = first
      plan.currentContextSet = true
    }
  }
  const out = edit.result()
  plan.changed = text === undefined || out !== text
  return {text: out, plan}
}

/**
 * Merges the export into `file` (see the module comment) and returns the plan; with `dryRun` nothing is written. A
 * file that is a symlink is written where it points, so a kubeconfig kept in a dotfiles repository stays a link.
 */
export async function mergeIntoKubeconfigFile(file: string, exported: KubeconfigDoc, options: {dryRun?: boolean; label?: string} = {}): Promise<MergePlan> {
  const label = options.label ?? file
  const target = await writeTarget(file)
  const run = async (): Promise<MergePlan> => {
    const text = await readOptional(target, 'a kubeconfig file', label)
    const {text: out, plan} = mergeKubeconfigText(text, exported, label)
    const result = {...plan, dryRun: options.dryRun === true}
    if (options.dryRun || !plan.changed) return result
    // An existing file keeps its mode (someone may have chosen 0640 for a group); a new one holds fleet's entries
    // only, which hold no secret, but it is a kubeconfig and other tools will add credentials to it: 0600.
    const mode = text === undefined ? 0o600 : (await stat(target)).mode & 0o7777
    await writeFileAtomic(target, out, {mode}).catch((error: unknown) => {
      throw writeError(label, target, error, 'a kubeconfig file')
    })
    return result
  }
  return options.dryRun ? run() : withKubeconfigLock(target, label, run)
}

/**
 * A --merge-into path checked before any cluster is touched: writable, or (a newcomer has no ~/.kube) in a directory
 * the merge will make, as kubectl makes it, whose parent exists and is writable.
 */
export async function checkMergeTarget(path: string, label: string): Promise<void> {
  const dir = dirname(path)
  const missing = await stat(dir).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  )
  await checkWritableFile(missing ? dir : path, label, missing ? 'a directory' : 'a kubeconfig file')
}
