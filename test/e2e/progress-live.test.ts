// The live line at a real terminal (tmux gives fleet a pty, outside CI) against the real control plane: creds rotate of
// a generated credential shows its step and the old token's 401 wait on stderr, erased at the end; nothing of it in
// -o json or off a terminal. A Ctrl-C during the wait is acknowledged at once (measured) with what the run finishes,
// and the run then ends cleanly (exit 130, the Secret holding the new credential for the next run). No token in any
// output.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN, runFleet } from '../support/cli.js';
import { kubectl, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('prog');
const hubNs = `${run}-hub`;
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const socket = `fleet-${run}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const pane = (s: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', s);
const tokens: string[] = [];
const outputs: string[] = [];
let dir: string;

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function secretToken(name: string): Promise<string> {
  const s = JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
  return (yaml.load(Buffer.from(s.data.kubeconfig, 'base64').toString('utf8')) as any).users[0].user.token as string;
}

async function generate(name: string): Promise<void> {
  const res = await runFleet([
    'creds',
    'generate',
    '--kubeconfig',
    m1.kubeconfig,
    '--cluster',
    m1.context,
    ...HUB,
    '--service-account',
    `${run}-sa/${name}`,
    '--role',
    'view',
    '-n',
    `${run}-sa`,
    '--create-namespace',
    '--duration',
    '1h',
    '--secret',
    `${hubNs}/${name}`,
    '--format',
    'multicluster-runtime',
    '-o',
    'json',
  ]);
  assert.equal(res.code, 0, res.stderr);
  tokens.push(await secretToken(name));
}

/** One request to member-1 with the token (curl, so nothing of fleet's): the API server caches it as authenticated. */
function useToken(token: string): void {
  const doc = yaml.load(execFileSync('cat', [m1.kubeconfig], { encoding: 'utf8' })) as any;
  const server = doc.clusters[0].cluster.server as string;
  execFileSync('curl', ['-sk', '-o', '/dev/null', '-H', `Authorization: Bearer ${token}`, `${server}/api`]);
}

const shell = (args: string[]) =>
  ['env', '-u', 'CI', 'KUBECONFIG=', 'NO_COLOR=1', `HOME=${dir}`, 'TERM=xterm', process.execPath, FLEET_BIN, ...args]
    .map((a) => `'${a}'`)
    .join(' ');

const rotateArgs = (name: string, extra: string[] = []) => [
  'creds',
  'rotate',
  `${hubNs}/${name}`,
  ...HUB,
  '--kubeconfig',
  m1.kubeconfig,
  ...extra,
];

describe('the live line and the Ctrl-C acknowledgement at a real terminal (tmux)', () => {
  before(async () => {
    dir = scratchDir();
    await kubectl(hub, ['create', 'namespace', hubNs]).catch(() => '');
    for (const n of ['a', 'b', 'c']) await generate(n);
  });

  after(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    for (const t of tokens) for (const o of outputs) assert.ok(!o.includes(t), 'a token in an output');
    await kubectl(hub, ['delete', 'namespace', hubNs, '--wait=false']).catch(() => '');
    await kubectl(m1, ['delete', 'namespace', `${run}-sa`, '--wait=false']).catch(() => '');
  });

  it('creds rotate: the 401 wait is a live line on stderr with its elapsed seconds, gone before the table', async () => {
    const log = join(dir, 'rotate-a.typescript');
    // script(1) records every byte the pty got, the line's CR and erase included.
    tmux(
      'new-session',
      '-d',
      '-s',
      'rot',
      '-x',
      '200',
      '-y',
      '50',
      `script -qfc ${JSON.stringify(shell(rotateArgs('a')))} ${log}; echo FLEET-EXIT=$?; sleep 120`,
    );
    const seen = await until('the 401 wait on the screen', () =>
      /waiting for the API server to refuse the old token \(up to 30s\)/.test(pane('rot')) ? pane('rot') : undefined,
    );
    outputs.push(seen);
    const screen = await until('the end', () => (/FLEET-EXIT=\d+/.test(pane('rot')) ? pane('rot') : undefined));
    outputs.push(screen);
    assert.match(screen, /FLEET-EXIT=0/);
    // Gone at the end: the final screen has the table, and no trace of the line.
    assert.match(screen, /rotated/);
    assert.doesNotMatch(screen, /waiting for the API server/);
    const bytes = execFileSync('cat', [log], { encoding: 'utf8' });
    outputs.push(bytes);
    assert.match(bytes, /\u001B\[2KSecret [^\r]*: (finding the cluster to mint on|minting the new credential)\.\.\./);
    assert.match(bytes, /refuse the old token \(up to 30s\)\.\.\. \d+s/);
    const erased = bytes.lastIndexOf('\r\u001B[2K');
    assert.ok(erased >= 0 && erased < bytes.indexOf('CREDENTIAL'), JSON.stringify(bytes.slice(-400)));
    tmux('kill-session', '-t', 'rot');
  });

  it('nothing of it with -o json, nor when stderr is not a terminal', async () => {
    const json = await runFleet(rotateArgs('b', ['-o', 'json']), { env: { CI: undefined }, timeoutMs: 120_000 });
    outputs.push(json.stdout, json.stderr);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json().items[0].status, 'rotated');
    assert.doesNotMatch(json.stdout + json.stderr, /waiting for|\u001B|\.\.\./);
  });

  it('Ctrl-C during the 401 wait: acknowledged within ~200 ms with what it finishes and for how long, then exit 130', async () => {
    // The old token used just before, as its consumer would: the API server's token cache then keeps it for up to 10 s.
    useToken(tokens[2]);
    tmux(
      'new-session',
      '-d',
      '-s',
      'intr',
      '-x',
      '250',
      '-y',
      '50',
      `${shell(rotateArgs('c'))}; echo FLEET-EXIT=$?; sleep 120`,
    );
    await until('the 401 wait', () => (/refuse the old token/.test(pane('intr')) ? true : undefined));
    const sent = Date.now();
    tmux('send-keys', '-t', 'intr', 'C-c');
    const ack = await until(
      'the acknowledgement',
      () => (/interrupt: finishing/.test(pane('intr')) ? Date.now() - sent : undefined),
      20_000,
      10,
    );
    console.log(`acknowledged ${ack} ms after the Ctrl-C (tmux capture-pane polled every 10 ms)`);
    assert.ok(ack < 500, `${ack} ms`);
    const screen = await until('the end', () => (/FLEET-EXIT=\d+/.test(pane('intr')) ? pane('intr') : undefined));
    outputs.push(screen);
    assert.match(
      screen,
      /interrupt: finishing the rotation of Secret \S+ \(its new credential is in place and its old anchor deleted; waiting for the API server to refuse the old token\), up to \d+ s; press Ctrl-C again to stop now and leave Secret \S+ holding the new credential/,
    );
    assert.match(screen, /FLEET-EXIT=130/);
    assert.doesNotMatch(screen.split('interrupt: finishing')[1], /interrupted again/);
  });
});
