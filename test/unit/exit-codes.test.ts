// Exit codes and error lines as README "Exit codes and errors" documents them (issue 21, item 3): a configuration error
// exits 2 in every command, also when it is one cluster's result; every output format prints one `error:` line on
// stderr per failed item, JSON and YAML included.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { runFleet } from '../support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'fleet-exit-codes-'));
const TOKEN = 'exit-code-test-token-0123456789';

// A context that names a cluster the file does not define (the README's own example of a configuration error).
const broken = join(root, 'broken.yaml');
writeFileSync(
  broken,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [],
    users: [{ name: 'u', user: { token: TOKEN } }],
    contexts: [{ name: 'broken', context: { cluster: 'nowhere', user: 'u' } }],
    'current-context': 'broken',
  }),
  { mode: 0o600 },
);
const reason = `context "broken" refers to cluster "nowhere", which is not defined`;

const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('error: '));

describe('a context that points at a missing cluster exits 2 in every command', () => {
  const commands = [
    ['auth', 'whoami'],
    ['auth', 'can-i', 'get', 'pods'],
    ['auth', 'rules'],
    ['clusters', 'inspect'],
  ];
  for (const command of commands) {
    it(command.join(' '), async () => {
      for (const format of ['table', 'json']) {
        const res = await runFleet([...command, '--kubeconfig', broken, '-o', format], { env: { HOME: root } });
        assert.equal(res.code, 2, `${command.join(' ')} -o ${format}: exit ${res.code}\n${res.stderr}`);
        assert.ok(
          res.stderr.includes(reason) || res.stdout.includes(JSON.stringify(reason).slice(1, -1)),
          `${command.join(' ')}: the reason is said\n${res.stderr}`,
        );
        assert.ok(!res.stdout.includes(TOKEN) && !res.stderr.includes(TOKEN), 'the token was printed');
      }
    });
  }
});

describe('clusters verify reports a broken entry as its failed provider-ready check', () => {
  // verify's exit codes (docs/verify.md): 1 when a check fails, 2 for a bad policy or usage. A broken context is the
  // provider-ready check of that cluster, reported beside the clusters that pass, with the reason.
  it('exit 1, provider-ready fails with the reason, the other checks are skipped', async () => {
    const res = await runFleet(['clusters', 'verify', '--kubeconfig', broken, '-o', 'json'], { env: { HOME: root } });
    assert.equal(res.code, 1, res.stderr);
    const [item] = res.json().items;
    assert.equal(item.checks[0].name, 'provider-ready');
    assert.equal(item.checks[0].status, 'fail');
    assert.ok(item.checks[0].message.includes(reason), item.checks[0].message);
  });
});

describe('every format prints one stderr line per failed item', () => {
  // Two kubeconfig files as creds generate writes them (its extension), for a cluster fleet does not know: rotating
  // either fails, each an item of its own. (A file fleet did not write refuses the whole run instead: papercuts.test.ts.)
  const files = ['first', 'second'].map((n) => {
    const path = join(root, `${n}.kubeconfig`);
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [{ name: 'c', cluster: { server: `https://${n}.example:6443` } }],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      extensions: [
        {
          name: 'fleet.dev/credential',
          extension: { method: 'token', identity: `system:serviceaccount:team:${n}`, cluster: `gone-${n}` },
        },
      ],
    };
    writeFileSync(path, JSON.stringify(doc), { mode: 0o600 });
    return path;
  });

  for (const format of ['table', 'wide', 'json', 'yaml', 'name']) {
    it(`creds rotate -o ${format}: one error line per failed credential`, async () => {
      const res = await runFleet(['creds', 'rotate', '--file', files[0], '--file', files[1], '-o', format], {
        env: { HOME: root },
      });
      assert.notEqual(res.code, 0, res.stderr);
      const lines = errorLines(res.stderr);
      assert.equal(lines.length, 2, `-o ${format}: ${res.stderr}`);
      for (const [i, file] of files.entries())
        assert.match(
          lines[i],
          new RegExp(
            `^error: ${file}: no cluster to rotate on matches server https://${['first', 'second'][i]}\\.example:6443`,
          ),
        );
    });

    it(`creds list -o ${format}: one error line for a hub that cannot be read`, async () => {
      const res = await runFleet(['creds', 'list', '--hub-kubeconfig', broken, '--kubeconfig', broken, '-o', format], {
        env: { HOME: root },
      });
      assert.equal(res.code, 2, `-o ${format}: ${res.stderr}`);
      const lines = errorLines(res.stderr);
      assert.equal(lines.length, 1, `-o ${format}: ${res.stderr}`);
      assert.match(lines[0], new RegExp(`^error: hub ${broken}: .*${reason}`));
    });
  }
});
