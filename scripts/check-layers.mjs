#!/usr/bin/env node
// The rules of docs/architecture.md that the build checks, over every .ts file in src/:
// - layers: a module imports only from its own floor or below; a folder not listed here is an error too, so a new
//   folder gets a floor on purpose;
// - cycles: no two files import each other, directly or around a ring (type-only imports count, as for floors);
// - output: only cli/ writes to stdout or stderr (process.stdout, process.stderr, console.*); render() prints;
// - user files: only base/ reads files and parses YAML (readFile*, js-yaml), and JSON.parse outside base/ reads only a
//   response body or a plugin's stdout; everything else goes through src/base/files.ts and src/base/yaml.ts;
// - programs: only base/subprocess.ts starts one, and only the trust policy and the kind provider import
//   approveInvocation, the one way to make what it runs;
// - REST paths: only kube/ writes one (a string or template starting with /api or /apis, or holding /namespaces/${);
//   services name a Resource of src/kube/resources.ts and build the path with src/kube/paths.ts, which encodes it.
// Each exception is one line in an allow-list below, with its reason.
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
  ['clusters', 'access', 'creds', 'workload-identity', 'verify', 'export'],
  ['cli'],
  ['commands', 'hooks'],
  ['entry'],
];
const floorOf = new Map(FLOORS.flatMap((folders, i) => folders.map((f) => [f, i])));
// Peers that may not import each other in this direction: workload-identity/ builds on creds/ (labels, the Argo CD
// codec), so creds/ reaching into workload-identity/ would be an arrow running back up. What both need lives below.
export const ONE_WAY_PEERS = [['creds', 'workload-identity']];

// Files (or folders, ending in /) under src/ that may write to stdout or stderr outside cli/, each with its reason.
const OUTPUT_ALLOWED = new Map([
  ['entry/', 'the entry point: oclif and Node start here, before any command exists'],
  ['hooks/command-not-found.ts', 'runs before any command exists, so there is no render(); one error line, no secrets'],
  ['base/warnings.ts', 'the default sink of warnOnce; the CLI replaces it with its scrubbed stderr (setWarningSink)'],
  ['kube/exec-credential.ts', "an exec plugin's own stderr, passed through scrubbed, as client-go does"],
  ['commands/wi/token.ts', 'the ExecCredential kubectl reads on stdout: raw on purpose, nothing else on stdout'],
  [
    'commands/kubeconfig/credential.ts',
    'the ExecCredential kubectl reads on stdout (the exec entry kubeconfig export writes): raw on purpose, nothing else on stdout',
  ],
  [
    'commands/creds/generate.ts',
    '--out -: the kubeconfig raw on stdout, the one place fleet prints a secret on request',
  ],
]);

// Files outside base/ that read files, parse YAML or JSON.parse text themselves, per rule (`read`, `yaml`, `json`), each
// with its reason. Shrink this list: a new reader of a user's file belongs in base/files.ts and base/yaml.ts.
const READ_ALLOWED = new Map([
  [
    'kubeconfig/parse.ts',
    {
      yaml: 1,
      json: 1,
      why: "the kubeconfig loader: client-go's rules (JSON fast path, duplicate keys, first document) need the parser itself",
    },
  ],
  ['kubeconfig/credentials.ts', { json: 1, why: "a JWT's claims (jwtClaims)" }],
  ['kube/exec-credential.ts', { json: 1, why: "an exec plugin's stdout" }],
  [
    'providers/hub/access-providers.ts',
    { json: 1, why: "a ClusterProfile's access-provider config (providers/ is being reshaped on another branch)" },
  ],
  [
    'providers/hub/argocd.ts',
    {
      json: 1,
      why: "an Argo CD cluster Secret's `config` key (hub data; its shape checked field by field as Go decodes it)",
    },
  ],
  ['cli/render.ts', { json: 1, why: 'JSON.parse(JSON.stringify(result)): a plain copy before -o yaml, no file' }],
  ['cli/completion.ts', { read: 1, why: "the user's .zshrc-side completion file, rewritten in place (not parsed)" }],
  [
    'verify/policy.ts',
    {
      read: 1,
      yaml: 1,
      json: 1,
      why: "the shipped policy JSON schema; the user's policy file with its schema errors and line numbers (js-yaml's listener gives the positions)",
    },
  ],
  [
    'workload-identity/auth-config.ts',
    { yaml: 1, why: 'an AuthenticationConfiguration with its own wording (`FILE: not valid YAML: ...`), kept as is' },
  ],
  [
    'workload-identity/consumers.ts',
    {
      read: 1,
      why: '--out: an existing file checked before overwriting, with its own wording (raw message for EISDIR)',
    },
  ],
  ['workload-identity/plugin.ts', { json: 1, why: "the hub plugin's JSON config (a Secret's data), not a file" }],
  [
    'creds/rotation-store.ts',
    { read: 1, yaml: 1, why: "kubeconfig files fleet wrote (its own wording) and their lock file's pid" },
  ],
  [
    'creds/codecs/codec.ts',
    { yaml: 1, why: 'the kubeconfig a consumer Secret fleet wrote holds (a Secret, not a file)' },
  ],
  ['creds/codecs/argocd.ts', { json: 1, why: "an Argo CD cluster Secret's config JSON (a Secret, not a file)" }],
  [
    'export/credential-cache.ts',
    {
      json: 1,
      why: "fleet's own credential cache file (0600, written by the same code); one that does not parse is no entry",
    },
  ],
  [
    'export/prune-state.ts',
    {
      json: 1,
      why: "fleet's own prune failure records (0600, written by the same code, read through base/files.ts); one that does not decode strictly is no record",
    },
  ],
  [
    'export/exec-info.ts',
    { json: 1, why: 'KUBERNETES_EXEC_INFO, the JSON client-go hands an exec plugin in its environment' },
  ],
  [
    'creds/rules-file.ts',
    {
      yaml: 1,
      why: '--rules FILE: errors name FILE:LINE for each rule, the YAML error too (`FILE:LINE: not valid YAML: ...`)',
    },
  ],
  [
    'creds/revoke.ts',
    { read: 1, why: '--file: a missing file is `not-found` (already revoked), other failures keep their own wording' },
  ],
]);
const readAllowed = (rel, rule) => Boolean(READ_ALLOWED.get(rel)?.[rule]);

// Approved invocations (docs/decisions.md, "Approved invocations"): only these files may import approveInvocation, the
// one way to make what runProcess runs, and only base/subprocess.ts may start a program (node:child_process).
const MINTERS = new Map([
  ['kubeconfig/trust.ts', 'the trust policy: the one decision of what an exec plugin runs'],
  ['providers/kind.ts', "kind's command is the user's own configuration, resolved as Go's exec would"],
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

  if (from !== 'cli' && !allowed(OUTPUT_ALLOWED, rel)) {
    for (const m of text.matchAll(/\bprocess\.(stdout|stderr)\b|\bconsole\.\w+/g)) {
      if (isComment(text, m.index)) continue;
      problems.push(
        `src/${rel}:${lineOf(text, m.index)}: ${m[0]} outside src/cli/: build a View and call render() (or add the file to OUTPUT_ALLOWED with a reason)`,
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

  if (from !== 'base') {
    const rules = [
      // Writing YAML (yaml.dump) is not reading a file; parsing it is.
      [
        'yaml',
        /\byaml\.load(All)?\(|\bimport\s*\{[^}]*\bload(All)?\b[^}]*\}\s*from\s*['"]js-yaml['"]/g,
        'parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)',
      ],
      ['read', /\breadFile(Sync)?\b/g, 'reads a file: use readRequired/readOptional (src/base/files.ts)'],
      // A response body (`res.body`) or a plugin's stdout is not a user's file; anything else is.
      [
        'json',
        /\bJSON\.parse\((?!(?:[\w.]*\.)?body\b|stdout\b)/g,
        'JSON.parse of something other than a response body: a user file is read in src/base/',
      ],
    ];
    for (const [rule, re, why] of rules) {
      if (readAllowed(rel, rule)) continue;
      for (const m of text.matchAll(re)) {
        if (isComment(text, m.index)) continue;
        problems.push(`src/${rel}:${lineOf(text, m.index)}: ${why} (or add the file to READ_ALLOWED with a reason)`);
      }
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
  'layers: every import points down, no import cycle, output only from cli/, user files read only in base/, programs start only from approved invocations',
);
