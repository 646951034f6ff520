// The creds generate wizard in a real terminal: tmux runs fleet on a pseudo-terminal (no CI, human output), the test
// answers each prompt with send-keys once capture-pane shows it, and checks the credential made and the equivalent
// command line printed. Without a terminal the same command is a one-line usage error (creds.test.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN, runFleet } from '../support/cli.js';
import { kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const m1 = cp.members[0];
const run = uniqueName('wizard');
const socket = `fleet-${run}`;
const session = 'wizard';

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const pane = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);

async function waitFor(text: string | RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = pane();
    if (typeof text === 'string' ? screen.includes(text) : text.test(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${text}; the screen:\n${screen}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function answer(prompt: string, ...keys: string[]) {
  await waitFor(prompt);
  tmux('send-keys', '-t', session, ...keys);
}

after(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await kubectlResult(m1, ['delete', 'namespace', run, '--wait=false']);
});

describe('fleet creds generate wizard (tmux)', () => {
  it('asks for what is missing at a terminal, prints the equivalent command, and makes a working credential', async () => {
    const out = join(scratchDir(), `${run}.kubeconfig`);
    const env = [
      'env',
      '-u',
      'CI',
      'KUBECONFIG=',
      'NO_COLOR=1',
      `HOME=${scratchDir()}`,
      'XDG_CONFIG_HOME=/nonexistent-fleet-test-config',
    ];
    const command = [...env, process.execPath, FLEET_BIN, 'creds', 'generate', '--kubeconfig', m1.kubeconfig]
      .map((a) => `'${a}'`)
      .join(' ');
    tmux('new-session', '-d', '-s', session, '-x', '220', '-y', '60', `${command}; echo FLEET-EXIT=$?; sleep 120`);
    await answer('? Cluster', 'Enter');
    await answer('? Method', 'Enter');
    await answer('? ServiceAccount', `${run}/wizard`, 'Enter');
    await answer('? Access preset', 'Down', 'Down', 'Down', 'Down', 'Down', 'Enter'); // pod-lister
    await answer('? Namespaces', run, 'Enter');
    await answer('? Create namespaces', 'y', 'Enter');
    await answer('? Duration', 'C-u', '30m', 'Enter');
    await answer('? Destination', 'Enter');
    await answer('? File', out, 'Enter');
    const screen = await waitFor(/FLEET-EXIT=\d+/, 60_000);
    assert.match(screen, /FLEET-EXIT=0/, screen);
    const equivalent = screen.split('Equivalent command:')[1]?.trim().split('\n')[0] ?? '';
    assert.match(
      equivalent,
      new RegExp(
        `^fleet creds generate --kubeconfig ${m1.kubeconfig} --cluster ${m1.kubeconfig}\\+${m1.context} --service-account ${run}/wizard --role pod-lister --method token --duration 30m --out ${out} -n ${run} --create-namespace$`,
      ),
    );
    assert.match(screen, /verify granted\s+pass: may get pods in/);
    assert.ok(existsSync(out));
    const token = (yaml.load(readFileSync(out, 'utf8')) as any).users[0].user.token as string;
    assert.ok(token && !screen.includes(token), 'the token appears on the terminal');
    const who = await runFleet(['auth', 'whoami', '--kubeconfig', out, '-o', 'json']);
    assert.equal(who.json().items[0].user.username, `system:serviceaccount:${run}:wizard`);
  });
});
