#!/usr/bin/env node
// The rules of docs/architecture.md that the build checks, over every .ts file in src/:
// - layers: a module imports only from its own floor or below; a folder not listed here is an error too, so a new
//   folder gets a floor on purpose;
// - cycles: no two files import each other, directly or around a ring (type-only imports count, as for floors);
// - programs: only base/subprocess.ts starts one, and only the trust policy and the kind provider import
//   approveInvocation, the one way to make what it runs;
// - REST paths: only kube/ writes one (a string or template starting with /api or /apis, or holding /namespaces/${);
//   services name a Resource of src/kube/resources.ts and build the path with src/kube/paths.ts, which encodes it.
// Each exception is one line in an allow-list below, with its reason. Output only from cli/ and user files read only in
// base/ are ESLint rules over the syntax tree (scripts/eslint-floors.mjs, run by `npm run lint`).
// Usage: node scripts/check-layers.mjs [--root DIR]   (exit 1 and one `file:line: ...` line per problem)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const rootArg = process.argv.indexOf('--root');
const root = rootArg > 0 ? resolve(process.argv[rootArg + 1]) : join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

// Lowest first. Folders on one floor may import each other (they are peers); nothing may import a higher floor.
export const FLOORS = [
  ['base'],
  ['kubeconfig', 'config'],
  ['kube'],
  ['providers'],
  ['fleet'],
  ['clusters', 'access', 'creds', 'workload-identity', 'verify', 'export', 'exporter'],
  ['cli'],
  ['commands', 'hooks'],
  ['entry'],
];
const floorOf = new Map(FLOORS.flatMap((folders, i) => folders.map((f) => [f, i])));
// Peers that may not import each other in this direction: workload-identity/ builds on creds/ (labels, the Argo CD
// codec), so creds/ reaching into workload-identity/ would be an arrow running back up. What both need lives below.
export const ONE_WAY_PEERS = [['creds', 'workload-identity']];

// Approved invocations (docs/decisions.md, "Approved invocations"): only these files may import approveInvocation, the
// one way to make what runProcess runs, and only base/subprocess.ts may start a program (node:child_process).
const MINTERS = new Map([
  [
    'kubeconfig/trust.ts',
    "the trust policy: the one decision of what an exec plugin runs, and of a program the user's fleet.yaml names (kind, exec providers)",
  ],
]);
const SPAWNERS = new Set(['base/subprocess.ts']);

// Files (or folders, ending in /) outside kube/ that still write REST paths themselves, each with its reason.
const PATHS_ALLOWED = new Map([
  // TODO(issue 32): remove both entries when h-codec's branch (consumer codecs) lands; it moves these to kube/typed.ts.
]);
// A quote or backquote, then /api or /apis ending there or going on with / or ?; or a namespace spliced into a path.
const REST_PATH = /['"`]\/apis?(?=[/?'"`])|\/namespaces\/\$\{/g;

const allowed = (list, rel) => [...list.keys()].some((k) => (k.endsWith('/') ? rel.startsWith(k) : rel === k));

function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

const topFolder = (file) => relative(src, file).split('/')[0];
const lineOf = (text, index) => text.slice(0, index).split('\n').length;
// Comments explain code and may name what they forbid; a line that is only a comment is not code.
const isComment = (text, index) =>
  /^\s*(\/\/|\/?\*)/.test(text.slice(text.lastIndexOf('\n', index - 1) + 1, index + 1));
const problems = [];
const srcFiles = files(src).sort();
const imports = new Map(); // file -> [{target, line}]

for (const file of srcFiles) {
  const rel = relative(src, file);
  const from = topFolder(file);
  const text = readFileSync(file, 'utf8');
  const edges = [];
  imports.set(file, edges);
  for (const m of text.matchAll(/(?:from\s+|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    if (isComment(text, m.index)) continue;
    const target = resolve(dirname(file), m[1]).replace(/\.js$/, '.ts');
    edges.push({ target, line: lineOf(text, m.index) });
    const to = topFolder(target);
    if (!floorOf.has(from) || !floorOf.has(to)) continue;
    if (floorOf.get(to) > floorOf.get(from)) {
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: src/${from} (floor ${floorOf.get(from)}) imports ${m[1]} from src/${to} (floor ${floorOf.get(to)}), a floor above`,
      );
    }
    if (ONE_WAY_PEERS.some(([a, b]) => from === a && to === b)) {
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: src/${from} imports ${m[1]} from src/${to}, which builds on src/${from}; move what both need to a floor below`,
      );
    }
  }
  if (!floorOf.has(from)) problems.push(`src/${rel}: folder src/${from} has no floor in scripts/check-layers.mjs`);

  if (!MINTERS.has(rel)) {
    for (const m of text.matchAll(
      /\bimport\s*(?:type\s*)?\{[^}]*\bapproveInvocation\b[^}]*\}\s*from\s*['"][^'"]*invocation\.js['"]|\bimport\s*\*\s*as\s+\w+\s+from\s*['"][^'"]*\/invocation\.js['"]|\bimport\(\s*['"][^'"]*\/invocation\.js['"]\s*\)/g,
    )) {
      if (isComment(text, m.index)) continue;
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: imports approveInvocation: only ${[...MINTERS.keys()].map((k) => `src/${k}`).join(' and ')} may approve what runs (take an Invocation from TrustPolicy.approve)`,
      );
    }
  }
  if (!SPAWNERS.has(rel)) {
    for (const m of text.matchAll(
      /['"](?:node:)?child_process['"]|\b(?:spawn|spawnSync|execFile|execFileSync|execSync|fork)\s*\(/g,
    )) {
      if (isComment(text, m.index)) continue;
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: starts a program itself: run an approved Invocation through runProcess (src/base/subprocess.ts)`,
      );
    }
  }

  if (from !== 'kube' && !allowed(PATHS_ALLOWED, rel)) {
    for (const m of text.matchAll(REST_PATH)) {
      if (isComment(text, m.index)) continue;
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: builds a REST path by hand: name a Resource (src/kube/resources.ts) and use src/kube/typed.ts or paths.ts (or add the file to PATHS_ALLOWED with a reason)`,
      );
    }
  }
}

// Cycles: strongly connected components of the import graph (Tarjan); each ring is reported once, as a path.
{
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const rings = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { target: w } of imports.get(v) ?? []) {
      if (!imports.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const ring = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        ring.push(w);
      } while (w !== v);
      if (ring.length > 1 || (imports.get(v) ?? []).some((e) => e.target === v)) rings.push(new Set(ring));
    }
  };
  for (const f of srcFiles) if (!index.has(f)) visit(f);
  for (const ring of rings) {
    // The shortest way back to the first file (in name order) through the ring, for a message a person can follow.
    const start = [...ring].sort()[0];
    const prev = new Map([[start, null]]);
    const queue = [start];
    let end;
    while (queue.length > 0 && !end) {
      const v = queue.shift();
      for (const e of imports.get(v)) {
        if (!ring.has(e.target)) continue;
        if (e.target === start) {
          end = { from: v, line: e.line };
          break;
        }
        if (!prev.has(e.target)) {
          prev.set(e.target, { from: v, line: e.line });
          queue.push(e.target);
        }
      }
    }
    const path = [start];
    for (let v = end.from; v !== start; v = prev.get(v).from) path.splice(1, 0, v);
    const firstLine = path.length > 1 ? prev.get(path[1]).line : end.line;
    const names = [...path, start].map((f) => relative(root, f));
    problems.push(
      `${names[0]}:${firstLine}: import cycle: ${names.join(' -> ')} (move what they share into one of them or a third file)`,
    );
  }
}

for (const p of problems) console.error(p);
if (problems.length > 0) {
  console.error(`${problems.length} problem${problems.length === 1 ? '' : 's'}; see docs/architecture.md`);
  process.exit(1);
}
console.log(
  'layers: every import points down, no import cycle, REST paths only in kube/, programs start only from approved invocations',
);
