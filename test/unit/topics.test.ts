// `fleet --help` lists topics by their package.json description: each must name every command the topic holds, so
// that help never describes a topic as less than it is (issue 21, item 5: creds once read "generate and list" only).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const pjson = JSON.parse(readFileSync(`${REPO}/package.json`, 'utf8'));
const topics = pjson.oclif.topics as Record<string, { description: string }>;

/**
 * The commands of a topic that help lists: the files of src/commands/<topic>/ (each `<topic> <verb>`), hidden ones left
 * out, and index.ts, which is the command named like the directory (`fleet autocomplete`), not one of a topic.
 */
const commandsOf = (topic: string) =>
  readdirSync(`${REPO}/src/commands/${topic}`)
    .filter(
      (f) =>
        f.endsWith('.ts') &&
        f !== 'index.ts' &&
        !/^\s*static hidden = true/m.test(readFileSync(`${REPO}/src/commands/${topic}/${f}`, 'utf8')),
    )
    .map((f) => f.replace(/\.ts$/, ''));

describe('topic descriptions', () => {
  it('every topic directory has a description, and every description a topic', () => {
    // A directory of hidden commands only (autocomplete: fleet's additions to the plugin's topic) is no topic of fleet's.
    const dirs = readdirSync(`${REPO}/src/commands`, { withFileTypes: true })
      .filter((d) => d.isDirectory() && commandsOf(d.name).length > 0)
      .map((d) => d.name);
    assert.deepEqual(Object.keys(topics).sort(), dirs.sort());
  });

  for (const [topic, { description }] of Object.entries(topics)) {
    it(`${topic}: the description names each of its commands`, () => {
      // Words in parentheses only describe (wi's "a hub ServiceAccount token trusted by targets" once hid that the topic
      // line left out wi token): a command is named outside them.
      const named = description.replace(/\([^)]*\)/g, ' ');
      const words = new Set(named.toLowerCase().match(/[a-z][a-z-]*[a-z]/g) ?? []);
      const missing = commandsOf(topic).filter((verb) => !words.has(verb));
      assert.deepEqual(missing, [], `"${description}" does not name ${missing.map((v) => `${topic} ${v}`).join(', ')}`);
    });
  }

  it('fleet --help shows those descriptions', async () => {
    const res = await runFleet(['--help'], { cwd: REPO });
    assert.equal(res.code, 0, res.stderr);
    const flat = res.stdout.replace(/\s+/g, ' ');
    for (const { description } of Object.values(topics))
      assert.ok(flat.includes(description), `fleet --help lacks "${description}"`);
  });
});
