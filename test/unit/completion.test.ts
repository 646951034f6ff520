// Shell completion in real shells (issue 21, item 5): bash and zsh run in tmux with the files `fleet autocomplete`
// writes, and the test presses Tab. Each topic and command is offered once (`fleet cl<TAB>` offered `clusters` three
// times), and -c/--cluster completes the cluster names, --context the contexts, of the kubeconfig on the line.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

import { FLEET_BIN, runFleet } from '../support/cli.js';

const run = promisify(execFile);
const socket = `fleet-completion-${process.pid}`;
const tmux = async (...args: string[]) => (await run('tmux', ['-L', socket, ...args])).stdout;
const home = mkdtempSync(join(tmpdir(), 'fleet-completion-'));
const bin = join(home, 'bin');
const kubeconfig = join(home, 'fleet.kubeconfig');
const contexts = ['alpha-one', 'beta-two'];

before(async () => {
  for (const shell of ['bash', 'zsh']) {
    try {
      execFileSync('sh', ['-c', `command -v ${shell}`]);
    } catch {
      assert.fail(`${shell} is not installed: the completion tests need it (apt-get install ${shell})`);
    }
  }
  mkdirSync(bin);
  writeFileSync(join(bin, 'fleet'), `#!/bin/sh\nexec '${process.execPath}' '${FLEET_BIN}' "$@"\n`);
  chmodSync(join(bin, 'fleet'), 0o755);
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: contexts.map((name) => ({ name, cluster: { server: 'https://127.0.0.1:1' } })),
      users: [{ name: 'u', user: { token: 'completion-test-token-0123456789' } }],
      contexts: contexts.map((name) => ({ name, context: { cluster: name, user: 'u' } })),
      'current-context': contexts[0],
    }),
    { mode: 0o600 },
  );
  const res = await runFleet(['autocomplete', 'bash'], { env: { HOME: home, XDG_CACHE_HOME: join(home, '.cache') } });
  assert.equal(res.code, 0, res.stderr);
  // A session that outlives the others: tmux's server exits with its last session, and a new one started just then fails.
  await tmux('new-session', '-d', '-s', 'keep', 'sleep 600');
});
after(async () => {
  await tmux('kill-server').catch(() => {});
});

const setup = {
  bash: `source ${join(home, '.cache/fleet/autocomplete/bash_setup')}`,
  zsh: `PS1='$ '; source ${join(home, '.cache/fleet/autocomplete/zsh_setup')}`,
};

/** Types `line` in a fresh shell, presses Tab twice, and returns the screen. */
async function complete(shell: 'bash' | 'zsh', line: string): Promise<string> {
  const session = `${shell}-${Math.random().toString(36).slice(2, 8)}`;
  const env = `env -i PATH=${bin}:/usr/bin:/bin HOME=${home} XDG_CACHE_HOME=${join(home, '.cache')} TERM=xterm`;
  const command = shell === 'bash' ? `${env} PS1='$ ' bash --norc --noprofile` : `${env} zsh -f`;
  await tmux('new-session', '-d', '-s', session, '-x', '220', '-y', '40', command);
  try {
    await tmux('send-keys', '-t', session, `${setup[shell]}; clear`, 'Enter');
    await new Promise((r) => setTimeout(r, 1500));
    await tmux('send-keys', '-t', session, line, 'Tab');
    await new Promise((r) => setTimeout(r, 2500));
    await tmux('send-keys', '-t', session, 'Tab');
    await new Promise((r) => setTimeout(r, 2500));
    return await tmux('capture-pane', '-p', '-t', session);
  } finally {
    await tmux('kill-session', '-t', session).catch(() => {});
  }
}

/**
 * How often `word` stands alone on the screen (a completion candidate, or the completed word on the line); zsh's
 * descriptions (`clusters  -- List, inspect and verify the clusters ...`) are left out.
 */
const count = (screen: string, word: string) =>
  screen
    .split('\n')
    .map((l) => l.replace(/ -- .*$/, ''))
    .join('\n')
    .split(/\s+/)
    .filter((w) => w === word).length;

for (const shell of ['bash', 'zsh'] as const) {
  describe(`completion in ${shell} (tmux)`, () => {
    it('fleet cl<TAB> completes to "fleet clusters", once', async () => {
      const screen = await complete(shell, 'fleet cl');
      assert.match(screen, /\$ fleet clusters\b/, screen);
      assert.equal(count(screen, 'clusters'), 1, screen);
    });

    it('fleet <TAB><TAB> offers each topic once', async () => {
      const screen = await complete(shell, 'fleet ');
      for (const topic of ['auth', 'clusters', 'creds', 'wi'])
        assert.ok(count(screen, topic) >= 1 && count(screen, topic) <= 2, `${topic}:\n${screen}`);
      // The one that may appear twice is the first, completed on the line by zsh's menu; no topic is a candidate twice.
      const candidates = screen.split('\n').slice(1).join('\n');
      for (const topic of ['auth', 'clusters', 'creds', 'wi'])
        assert.equal(count(candidates, topic), 1, `${topic}:\n${screen}`);
    });

    it('fleet clusters <TAB><TAB> offers each command once', async () => {
      const screen = await complete(shell, 'fleet clusters ');
      const candidates = screen.split('\n').slice(1).join('\n');
      for (const verb of ['inspect', 'list', 'verify']) assert.equal(count(candidates, verb), 1, `${verb}:\n${screen}`);
    });

    it('-c completes the cluster names of the kubeconfig on the line', async () => {
      const screen = await complete(shell, `fleet auth whoami --kubeconfig ${kubeconfig} -c `);
      for (const name of contexts) {
        assert.ok(count(screen, `${kubeconfig}+${name}`) >= 1, `${name}:\n${screen}`);
        assert.ok(count(screen, name) >= 1, `short name ${name}:\n${screen}`);
      }
    });

    it('--context completes the contexts', async () => {
      const screen = await complete(shell, `fleet clusters list --kubeconfig ${kubeconfig} --context `);
      for (const name of contexts) assert.ok(count(screen, name) >= 1, `${name}:\n${screen}`);
    });
  });
}
