// The floor rules ESLint checks (scripts/eslint-floors.mjs, run by `npm run lint`): output only from src/cli/, user
// files read and parsed only in src/base/. Each rule is shown to report a violation planted in a file's text, with the
// line, not to report a name in a comment or a string, to stay quiet where the floor allows it, and to find nothing in
// src/ as it is.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
// @ts-expect-error: a build script in plain JavaScript, without declarations
import { floorsConfig } from '../../scripts/eslint-floors.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Only the floor rules, without the type-checked ones: they need no TypeScript program, so planted text lints alone.
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...floorsConfig],
});

async function findings(file: string, ...lines: string[]): Promise<string[]> {
  const [result] = await eslint.lintText(lines.join('\n') + '\n', { filePath: join(root, file) });
  return result.messages.map((m) => `${m.line}: ${m.ruleId}: ${m.message}`);
}

describe('lint floors (scripts/eslint-floors.mjs)', () => {
  it('finds nothing in src/ as it is', async () => {
    const results = await eslint.lintFiles(['src/**/*.ts']);
    const problems = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line}: ${m.message}`));
    assert.deepEqual(problems, []);
    assert.ok(results.length > 150, `only ${results.length} files linted`);
  });

  it('reports process.stdout, process.stderr and console.* outside cli/, not in a comment, a string or in cli/', async () => {
    const planted = [
      "export const planted = () => process.stdout.write('x');",
      '// process.stderr is named in this comment only',
      "export const planted2 = () => console.log('y');",
      "export const planted3 = () => process.stderr.write('z');",
      "export const words = 'console.log and process.stdout in a string';",
    ];
    assert.deepEqual(await findings('src/access/whoami.ts', ...planted), [
      '1: fleet/output-in-cli: process.stdout outside src/cli/: build a View and call render() (or add an exception with its reason)',
      '3: fleet/output-in-cli: console.log outside src/cli/: build a View and call render() (or add an exception with its reason)',
      '4: fleet/output-in-cli: process.stderr outside src/cli/: build a View and call render() (or add an exception with its reason)',
    ]);
    assert.deepEqual(await findings('src/cli/table.ts', ...planted), []);
  });

  it('reports readFile, yaml.load and JSON.parse of a file outside base/; a response body, stdout and yaml.dump are fine', async () => {
    const planted = [
      "import { readFile } from 'node:fs/promises';",
      "import yaml from 'js-yaml';",
      'export async function planted(path: string, res: { body: string }, stdout: string) {',
      "  const text = await readFile(path, 'utf8');",
      '  const a = yaml.load(text);',
      '  const b: unknown = JSON.parse(text);',
      '  const c: unknown = JSON.parse(res.body);',
      '  const d: unknown = JSON.parse(stdout);',
      '  return [a, b, c, d, yaml.dump(a)];',
      '}',
    ];
    assert.deepEqual(await findings('src/access/planted.ts', ...planted), [
      '1: fleet/read-in-base: reads a file: use readRequired/readOptional (src/base/files.ts)',
      '5: fleet/yaml-in-base: parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)',
      '6: fleet/json-in-base: JSON.parse of something other than a response body: a user file is read in src/base/',
    ]);
    assert.deepEqual(await findings('src/base/planted.ts', ...planted), []);
  });

  it('reports the other spellings: fs.readFileSync, a renamed js-yaml import and an imported load', async () => {
    assert.deepEqual(
      await findings(
        'src/verify/checks2.ts',
        "import * as fs from 'node:fs';",
        "import jsyaml, { loadAll } from 'js-yaml';",
        "export const a = fs.readFileSync('x', 'utf8');",
        "export const b = jsyaml.load('a: 1');",
        "export const c = loadAll('a: 1');",
      ),
      [
        '2: fleet/yaml-in-base: parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)',
        '3: fleet/read-in-base: reads a file: use readRequired/readOptional (src/base/files.ts)',
        '4: fleet/yaml-in-base: parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)',
      ],
    );
  });

  it('keeps an exception to the file it names and the rules it turns off', async () => {
    // creds/revoke.ts may read its --file itself, but not parse YAML or print.
    assert.deepEqual(
      await findings(
        'src/creds/revoke.ts',
        "import { readFile } from 'node:fs/promises';",
        "import yaml from 'js-yaml';",
        "export const a = async () => yaml.load(await readFile('f', 'utf8'));",
        "export const b = () => console.error('x');",
      ),
      [
        '3: fleet/yaml-in-base: parses YAML itself: use loadYaml or loadYamlIfValid (src/base/yaml.ts)',
        '4: fleet/output-in-cli: console.error outside src/cli/: build a View and call render() (or add an exception with its reason)',
      ],
    );
  });
});
