#!/usr/bin/env node
// Fails when a module in src/ imports from a floor above its own (see docs/architecture.md). Every import must point
// down or sideways within its floor; a folder not listed here is an error too, so a new folder gets a floor on purpose.
// Usage: node scripts/check-layers.mjs   (exit 1 and one line per upward import)
import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const src = join(root, 'src')

// Lowest first. Folders on one floor may import each other (they are peers); nothing may import a higher floor.
export const FLOORS = [
  ['base'],
  ['kubeconfig', 'config'],
  ['kube'],
  ['providers'],
  ['fleet'],
  ['clusters', 'access', 'creds', 'workload-identity', 'verify'],
  ['cli'],
  ['commands', 'hooks'],
  ['entry'],
]
const floorOf = new Map(FLOORS.flatMap((folders, i) => folders.map((f) => [f, i])))

function files(dir) {
  return readdirSync(dir, {recursive: true, withFileTypes: true})
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath ?? e.path, e.name))
}

const topFolder = (file) => relative(src, file).split('/')[0]
const problems = []
for (const file of files(src)) {
  const from = topFolder(file)
  if (!floorOf.has(from)) {
    problems.push(`${relative(root, file)}: folder src/${from} has no floor in scripts/check-layers.mjs`)
    continue
  }
  const text = readFileSync(file, 'utf8')
  for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), m[1])
    const to = topFolder(target)
    if (!floorOf.has(to)) continue
    if (floorOf.get(to) > floorOf.get(from)) {
      const line = text.slice(0, m.index).split('\n').length
      problems.push(`${relative(root, file)}:${line}: src/${from} (floor ${floorOf.get(from)}) imports ${m[1]} from src/${to} (floor ${floorOf.get(to)}), a floor above`)
    }
  }
}
for (const p of problems) console.error(p)
if (problems.length > 0) {
  console.error(`${problems.length} upward import${problems.length === 1 ? '' : 's'}; see docs/architecture.md`)
  process.exit(1)
}
console.log('layers: every import points down')
