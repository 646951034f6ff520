// Ctrl-C at a creds generate wizard prompt, in a real terminal (tmux gives fleet a pty, outside CI): fleet ends with
// exit 130 and prints nothing of its own, neither an error line nor the prompt library's "User force closed the
// prompt with SIGINT" (issue 21, item 3). The clusters to choose from come from a kubeconfig file: no cluster is
// contacted before the first answer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';

import { FLEET_BIN } from '../support/cli.js';

const run = promisify(execFile);
const socket = `fleet-wizard-${process.pid}`;
const tmux = async (...args: string[]) => (await run('tmux', ['-L', socket, ...args])).stdout;
const dir = mkdtempSync(join(tmpdir(), 'fleet-wizard-'));
const kubeconfig = join(dir, 'kubeconfig.yaml');
writeFileSync(
  kubeconfig,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'one', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: { token: 'wizard-test-token-0123456789' } }],
    contexts: [{ name: 'one', context: { cluster: 'one', user: 'u' } }],
    'current-context': 'one',
  }),
  { mode: 0o600 },
);
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

after(async () => {
  await tmux('kill-server').catch(() => {});
});

async function screenUntil(session: string, pattern: RegExp): Promise<string> {
  let screen = '';
  for (let i = 0; i < 150 && !pattern.test(screen); i++) {
    await new Promise((r) => setTimeout(r, 100));
    screen = await tmux('capture-pane', '-p', '-J', '-S', '-100', '-t', session);
  }
  assert.match(screen, pattern, screen);
  return screen;
}

describe('creds generate wizard: Ctrl-C at a prompt (tmux)', () => {
  for (const [what, before, prompt] of [
    ['the first prompt (a list)', [], /\? Cluster/],
    ['a text prompt', ['Enter', 'Enter'], /\? ServiceAccount/],
  ] as const) {
    it(`${what}: exit 130, nothing printed`, async () => {
      const session = `w${before.length}`;
      const command = `env -u CI -u FORCE_COLOR NO_COLOR=1 KUBECONFIG= HOME=${q(dir)} ${q(process.execPath)} ${q(FLEET_BIN)} creds generate --kubeconfig ${q(kubeconfig)}; echo FLEET-EXIT=$?; sleep 60`;
      await tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '40', command);
      await screenUntil(session, /\? Cluster/);
      for (const key of before) {
        await tmux('send-keys', '-t', session, key);
        await new Promise((r) => setTimeout(r, 400));
      }
      await screenUntil(session, prompt);
      await tmux('send-keys', '-t', session, 'C-c');
      const screen = await screenUntil(session, /FLEET-EXIT=\d+/);
      assert.match(screen, /^FLEET-EXIT=130$/m, screen);
      const said = screen.split('\n').filter((l) => /^error:|force closed|interrupted \(|SIGINT/i.test(l.trim()));
      assert.deepEqual(said, [], screen);
    });
  }
});
