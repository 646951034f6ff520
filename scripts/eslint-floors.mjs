// The floor rules of docs/architecture.md that read code rather than the import graph, as ESLint rules over the syntax
// tree (scripts/check-layers.mjs keeps floors, cycles, programs and REST paths):
// - fleet/output-in-cli: only cli/ writes to stdout or stderr (process.stdout, process.stderr, console.*); a command
//   builds a View and render() prints it, scrubbed;
// - fleet/read-in-base, fleet/yaml-in-base, fleet/json-in-base: only base/ reads files (readFile*), parses YAML
//   (js-yaml's load/loadAll) or JSON.parse's text that is not a response body or a plugin's stdout; everything else goes
//   through src/base/files.ts and src/base/yaml.ts, which hold the one wording and the one set of limits.
// Read as syntax, a name in a comment or a string is not a use, and `yaml.dump` (writing) is not `yaml.load`.
// Each exception is one block in FLOOR_EXCEPTIONS below, the rules it turns off for one file and why. Shrink the list:
// a new reader of a user's file belongs in base/.

/** @param {import('estree').Node} node */
const propertyName = (node) =>
  node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier'
    ? node.property.name
    : undefined;
const isIdentifier = (node, name) => node?.type === 'Identifier' && node.name === name;

const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);
const READERS = new Set(['readFile', 'readFileSync']);
const YAML_LOADERS = new Set(['load', 'loadAll']);
// A response body (`res.body`, `body`) or a plugin's `stdout` is not a user's file; anything else parsed is.
const NOT_A_FILE = /^(?:[\w.]*\.)?body\b|^stdout\b/;

const outputInCli = {
  meta: {
    type: 'problem',
    docs: { description: 'only src/cli/ writes to stdout or stderr' },
    messages: {
      output: '{{what}} outside src/cli/: build a View and call render() (or add an exception with its reason)',
    },
    schema: [],
  },
  create(context) {
    return {
      MemberExpression(node) {
        const name = propertyName(node);
        if (isIdentifier(node.object, 'process') && (name === 'stdout' || name === 'stderr'))
          context.report({ node, messageId: 'output', data: { what: `process.${name}` } });
        else if (isIdentifier(node.object, 'console') && name)
          context.report({ node, messageId: 'output', data: { what: `console.${name}` } });
      },
    };
  },
};

const readInBase = {
  meta: {
    type: 'problem',
    docs: { description: 'only src/base/ reads files' },
    messages: { read: 'reads a file: use readRequired/readOptional (src/base/files.ts)' },
    schema: [],
  },
  create(context) {
    return {
      ImportSpecifier(node) {
        if (FS_MODULES.has(node.parent.source.value) && READERS.has(node.imported.name))
          context.report({ node, messageId: 'read' });
      },
      MemberExpression(node) {
        if (READERS.has(propertyName(node))) context.report({ node, messageId: 'read' });
      },
    };
  },
};

const yamlInBase = {
  meta: {
    type: 'problem',
    docs: { description: 'only src/base/ parses YAML' },
    messages: { yaml: 'parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)' },
    schema: [],
  },
  create(context) {
    // The names js-yaml's default or namespace import has in this file: `<name>.load(...)` parses.
    const modules = new Set();
    return {
      ImportDeclaration(node) {
        if (node.source.value !== 'js-yaml') return;
        for (const s of node.specifiers) {
          if (s.type === 'ImportSpecifier' && YAML_LOADERS.has(s.imported.name))
            context.report({ node: s, messageId: 'yaml' });
          else if (s.type !== 'ImportSpecifier') modules.add(s.local.name);
        }
      },
      CallExpression(node) {
        const callee = node.callee;
        if (YAML_LOADERS.has(propertyName(callee)) && callee.object.type === 'Identifier') {
          if (modules.has(callee.object.name) || callee.object.name === 'yaml')
            context.report({ node, messageId: 'yaml' });
        }
      },
    };
  },
};

const jsonInBase = {
  meta: {
    type: 'problem',
    docs: { description: "JSON.parse outside src/base/ reads only a response body or a plugin's stdout" },
    messages: { json: 'JSON.parse of something other than a response body: a user file is read in src/base/' },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        if (!isIdentifier(node.callee.object, 'JSON') || propertyName(node.callee) !== 'parse') return;
        const arg = node.arguments[0];
        if (arg && NOT_A_FILE.test(context.sourceCode.getText(arg))) return;
        context.report({ node, messageId: 'json' });
      },
    };
  },
};

export const plugin = {
  meta: { name: 'fleet-floors' },
  rules: {
    'output-in-cli': outputInCli,
    'read-in-base': readInBase,
    'yaml-in-base': yamlInBase,
    'json-in-base': jsonInBase,
  },
};

const off = (...rules) => Object.fromEntries(rules.map((r) => [`fleet/${r}`, 'off']));

// [files, rules turned off, why]: one line of reason per exception.
export const FLOOR_EXCEPTIONS = [
  [['src/entry/**'], ['output-in-cli'], 'the entry point: oclif and Node start here, before any command exists'],
  [
    ['src/hooks/command-not-found.ts'],
    ['output-in-cli'],
    'runs before any command exists, so there is no render(); one error line, no secrets',
  ],
  [
    ['src/base/warnings.ts'],
    ['output-in-cli'],
    'the default sink of warnOnce; the CLI replaces it with its scrubbed stderr (setWarningSink)',
  ],
  [
    ['src/kube/exec-credential.ts'],
    ['output-in-cli'],
    "an exec plugin's own stderr, passed through scrubbed, as client-go does",
  ],
  [
    ['src/commands/wi/token.ts', 'src/commands/kubeconfig/credential.ts'],
    ['output-in-cli'],
    'the ExecCredential kubectl reads on stdout (fleet wi token; the exec entry kubeconfig export writes): raw on purpose, nothing else on stdout',
  ],
  [
    ['src/commands/creds/generate.ts'],
    ['output-in-cli'],
    '--out -: the kubeconfig raw on stdout, the one place fleet prints a secret on request',
  ],
  [
    ['src/kubeconfig/parse.ts'],
    ['yaml-in-base', 'json-in-base'],
    "the kubeconfig loader: client-go's rules (JSON fast path, duplicate keys, first document) need the parser itself",
  ],
  [['src/kubeconfig/credentials.ts'], ['json-in-base'], "a JWT's claims (jwtClaims)"],
  [
    ['src/providers/hub/access-providers.ts'],
    ['json-in-base'],
    "a ClusterProfile's access-provider config (a field of an object on the hub, not a file)",
  ],
  [
    ['src/providers/hub/argocd.ts'],
    ['json-in-base'],
    "an Argo CD cluster Secret's `config` key (hub data; its shape checked field by field as Go decodes it)",
  ],
  [['src/cli/render.ts'], ['json-in-base'], 'JSON.parse(JSON.stringify(result)): a plain copy before -o yaml, no file'],
  [
    ['src/cli/completion.ts'],
    ['read-in-base'],
    "the user's .zshrc-side completion file, rewritten in place (not parsed)",
  ],
  [
    ['src/verify/policy.ts'],
    ['read-in-base', 'yaml-in-base', 'json-in-base'],
    "the shipped policy JSON schema; the user's policy file with its schema errors and line numbers (js-yaml's listener gives the positions)",
  ],
  [
    ['src/workload-identity/auth-config.ts'],
    ['yaml-in-base'],
    'an AuthenticationConfiguration with its own wording (`FILE: not valid YAML: ...`), kept as is',
  ],
  [
    ['src/workload-identity/consumers.ts'],
    ['read-in-base'],
    '--out: an existing file checked before overwriting, with its own wording (raw message for EISDIR)',
  ],
  [['src/workload-identity/plugin.ts'], ['json-in-base'], "the hub plugin's JSON config (a Secret's data), not a file"],
  [
    ['src/creds/rotation-store.ts'],
    ['read-in-base', 'yaml-in-base'],
    "kubeconfig files fleet wrote (its own wording) and their lock file's pid",
  ],
  [
    ['src/creds/codecs/codec.ts'],
    ['yaml-in-base'],
    'the kubeconfig a consumer Secret fleet wrote holds (a Secret, not a file)',
  ],
  [['src/creds/codecs/argocd.ts'], ['json-in-base'], "an Argo CD cluster Secret's config JSON (a Secret, not a file)"],
  [
    ['src/export/credential-cache.ts'],
    ['json-in-base'],
    "fleet's own credential cache file (0600, written by the same code); one that does not parse is no entry",
  ],
  [
    ['src/export/prune-state.ts'],
    ['json-in-base'],
    "fleet's own prune failure records (0600, written by the same code, read through base/files.ts); one that does not decode strictly is no record",
  ],
  [
    ['src/export/exec-info.ts'],
    ['json-in-base'],
    'KUBERNETES_EXEC_INFO, the JSON client-go hands an exec plugin in its environment',
  ],
  [
    ['src/creds/rules-file.ts'],
    ['yaml-in-base'],
    '--rules FILE: errors name FILE:LINE for each rule, the YAML error too (`FILE:LINE: not valid YAML: ...`)',
  ],
  [
    ['src/creds/revoke.ts'],
    ['read-in-base'],
    '--file: a missing file is `not-found` (already revoked), other failures keep their own wording',
  ],
];

/** The flat-config blocks: the rules over src/ (cli/ may print, base/ may read), then one block per exception. */
export const floorsConfig = [
  {
    files: ['src/**/*.ts'],
    plugins: { fleet: plugin },
    rules: {
      'fleet/output-in-cli': 'error',
      'fleet/read-in-base': 'error',
      'fleet/yaml-in-base': 'error',
      'fleet/json-in-base': 'error',
    },
  },
  { files: ['src/cli/**/*.ts'], rules: off('output-in-cli') },
  { files: ['src/base/**/*.ts'], rules: off('read-in-base', 'yaml-in-base', 'json-in-base') },
  ...FLOOR_EXCEPTIONS.map(([files, rules, why]) => ({ name: `floor exception: ${why}`, files, rules: off(...rules) })),
];
