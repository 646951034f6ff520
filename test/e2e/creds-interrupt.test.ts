// Interrupts are failures (issue 19 item 4, journey (c)): `creds generate` is run as a user runs it, in a process of its
// own, stopped at each of its steps (FLEET_TEST_PAUSE_AT, a test-only hook) and sent a real SIGINT (or SIGTERM); then it
// must exit 130 (143) with one line saying it was interrupted and rolled back, and nothing the run made may be left:
// no Namespace, ServiceAccount, Role, RoleBinding, anchor or token Secret, CSR, hub Secret or --out file. Also: --out
// into a missing directory is refused before any request; exec plugins fleet started die with it; Ctrl-C at a real
// terminal (tmux); an interrupted `creds rotate` lifts its claim or leaves what the next run finishes. Every output is
// grepped for the credentials involved.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN, runFleet, fleetTestEnv } from '../support/cli.js';
import {
  applyYaml,
  kubectl,
  kubectlResult,
  loadControlPlane,
  scratchDir,
  uniqueName,
  deleteFleetObjectsOf,
} from '../support/fixture.js';
import { isAlive } from '../support/procs.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('intr');
const hubNs = `${run}-hub`;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const PLUGIN = new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url).pathname;

interface Ran {
  what: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Every output captured here, and every credential that must never appear in one. */
const outputs: Ran[] = [];
const secrets: string[] = [];
let dir: string;
let seq = 0;

const env = fleetTestEnv;

/** fleet in a process of its own (as a user runs it), so that a test can signal it. */
function start(args: string[], extra: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [FLEET_BIN, ...args], {
    env: env(extra),
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<Ran>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const r = { what: args.join(' '), code, signal, stdout, stderr };
      outputs.push(r);
      resolve(r);
    });
  });
  return { child, done };
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs `creds generate ARGS` paused after STEP, calls `atPause` (to read what exists at that moment), sends SIGNAL and
 * returns how it ended.
 */
async function interruptAt(
  step: string,
  args: string[],
  o: { signal?: NodeJS.Signals; atPause?: () => Promise<void> } = {},
): Promise<Ran> {
  const pauseFile = join(dir, `${run}-pause-${++seq}`);
  const { child, done } = start(['creds', 'generate', ...args], {
    FLEET_TEST_PAUSE_AT: step,
    FLEET_TEST_PAUSE_FILE: pauseFile,
  });
  let ended: Ran | undefined;
  void done.then((r) => (ended = r));
  await until(`fleet to pause at ${step}`, () => {
    if (ended) throw new Error(`fleet ended (exit ${ended.code}) before pausing at ${step}: ${ended.stderr}`);
    return existsSync(pauseFile) && readFileSync(pauseFile, 'utf8') === step;
  });
  await o.atPause?.();
  child.kill(o.signal ?? 'SIGINT');
  return done;
}

const credentialId = (username: string) => createHash('sha256').update(username).digest('hex').slice(0, 16);

/** Everything fleet labels as this credential's (fleetLabels), on the member: nothing may be left but terminating namespaces. */
async function leftOnMember(username: string): Promise<string[]> {
  const sel = `fleet.dev/credential=${credentialId(username)}`;
  const objects = (
    await kubectl(m1, ['get', 'serviceaccounts,roles,rolebindings,secrets', '-A', '-l', sel, '-o', 'name'])
  ).trim();
  const cluster = (
    await kubectl(m1, ['get', 'clusterroles,clusterrolebindings,certificatesigningrequests', '-l', sel, '-o', 'name'])
  ).trim();
  const namespaces = JSON.parse(await kubectl(m1, ['get', 'namespaces', '-l', sel, '-o', 'json'])).items as Array<{
    metadata: { name: string; deletionTimestamp?: string };
  }>;
  return [
    ...objects.split('\n'),
    ...cluster.split('\n'),
    ...namespaces.filter((n) => !n.metadata.deletionTimestamp).map((n) => `namespace/${n.metadata.name}`),
  ].filter(Boolean);
}

async function hubSecretExists(name: string): Promise<boolean> {
  return (await kubectlResult(hub, ['get', 'secret', name, '-n', hubNs])).code === 0;
}

function assertInterrupted(r: Ran, step: string, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT') {
  assert.equal(r.code, signal === 'SIGINT' ? 130 : 143, `exit ${r.code}: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected: ${r.stderr}`);
  assert.equal(
    lines[0],
    `error: interrupted (${signal}) after step "${step}": rolled back, nothing this run made is left`,
  );
  assert.equal(r.stdout, '');
}

/** The admin credentials of the kubeconfigs passed to fleet: never printed either. */
function rememberKubeconfigSecrets(path: string) {
  const doc = yaml.load(readFileSync(path, 'utf8')) as { users: Array<{ user: Record<string, string> }> };
  for (const u of doc.users) {
    if (u.user.token) secrets.push(u.user.token);
    if (u.user['client-key-data'])
      secrets.push(u.user['client-key-data'], Buffer.from(u.user['client-key-data'], 'base64').toString('utf8').trim());
  }
}

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
  rememberKubeconfigSecrets(m1.kubeconfig);
  rememberKubeconfigSecrets(hub.kubeconfig);
});

after(async () => {
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await deleteFleetObjectsOf(m1, 'namespaces', run);
});

const TOKEN_STEPS = ['checked', 'namespace', 'service-account', 'role', 'binding', 'anchor', 'mint', 'verify'];

describe('creds generate: an interrupt at each step leaves nothing behind (live)', () => {
  for (const step of TOKEN_STEPS) {
    it(`token to a hub Secret, SIGINT after "${step}": exit 130, rolled back, no object and no hub Secret left`, async () => {
      const ns = `${run}-t${++seq}`;
      const username = `system:serviceaccount:${ns}-sa:agent`;
      const secret = `${ns}-mcr`;
      const r = await interruptAt(
        step,
        [
          ...MEMBER,
          ...HUB,
          '--service-account',
          `${ns}-sa/agent`,
          '--role',
          'view',
          '-n',
          ns,
          '--create-namespace',
          '--duration',
          '1h',
          '--secret',
          `${hubNs}/${secret}`,
          '--format',
          'multicluster-runtime',
        ],
        {
          atPause: async () => {
            // The run really made things before the signal (from the ServiceAccount's namespace on).
            if (step !== 'checked')
              assert.notDeepEqual(await leftOnMember(username), [], `nothing made by step ${step}`);
          },
        },
      );
      assertInterrupted(r, step);
      assert.deepEqual(await leftOnMember(username), []);
      assert.equal(await hubSecretExists(secret), false);
    });
  }

  for (const step of ['anchor', 'mint', 'verify']) {
    const signal = step === 'verify' ? 'SIGTERM' : 'SIGINT';
    it(`legacy token to a file, ${signal} after "${step}": exit ${signal === 'SIGINT' ? 130 : 143}, the token Secret is gone, no file`, async () => {
      const ns = `${run}-l${++seq}`;
      const username = `system:serviceaccount:${ns}:legacy`;
      const out = join(dir, `${ns}.kubeconfig`);
      const r = await interruptAt(
        step,
        [
          ...MEMBER,
          '--method',
          'legacy-token',
          '--service-account',
          `${ns}/legacy`,
          '--role',
          'view',
          '-n',
          ns,
          '--create-namespace',
          '--out',
          out,
        ],
        {
          signal,
          atPause: async () => {
            // The legacy token is on the cluster while the run is paused: it must not appear in any output.
            const items = JSON.parse(
              await kubectl(m1, [
                'get',
                'secrets',
                '-n',
                ns,
                '-l',
                `fleet.dev/credential=${credentialId(username)}`,
                '-o',
                'json',
              ]),
            ).items;
            assert.equal(items.length, 1);
            const token = items[0].data?.token;
            if (step !== 'anchor') assert.ok(token, 'the legacy token is issued by the time it is minted');
            if (token) secrets.push(Buffer.from(token, 'base64').toString('utf8'));
          },
        },
      );
      assertInterrupted(r, step, signal);
      assert.deepEqual(await leftOnMember(username), []);
      assert.equal(existsSync(out), false);
    });
  }

  for (const step of ['namespace', 'role', 'binding', 'mint', 'verify']) {
    it(`client certificate to a file, SIGINT after "${step}": no CSR, RBAC, namespace or file left`, async () => {
      const ns = `${run}-c${++seq}`;
      const user = `${ns}-user`;
      const out = join(dir, `${ns}.kubeconfig`);
      const r = await interruptAt(
        step,
        [
          ...MEMBER,
          '--method',
          'client-cert',
          '--user',
          user,
          '--group',
          'ci',
          '--role',
          'view',
          '-n',
          ns,
          '--create-namespace',
          '--out',
          out,
        ],
        {
          atPause: async () => {
            if (step === 'mint' || step === 'verify') {
              const csrs = (
                await kubectl(m1, [
                  'get',
                  'certificatesigningrequests',
                  '-l',
                  `fleet.dev/credential=${credentialId(user)}`,
                  '-o',
                  'name',
                ])
              ).trim();
              assert.notEqual(csrs, '', 'the CSR exists while the run is paused');
            }
          },
        },
      );
      assertInterrupted(r, step);
      assert.deepEqual(await leftOnMember(user), []);
      assert.equal(existsSync(out), false);
    });
  }

  it('a signal before anything was made (while it reads) says so: exit 130, nothing to undo', async () => {
    const ns = `${run}-r${++seq}`;
    const r = await interruptAt('checked', [
      ...MEMBER,
      '--service-account',
      `${ns}/x`,
      '--role',
      'view',
      '-n',
      ns,
      '--create-namespace',
      '--out',
      join(dir, `${ns}.kubeconfig`),
    ]);
    assertInterrupted(r, 'checked');
    assert.equal((await kubectlResult(m1, ['get', 'namespace', ns])).code, 1);
  });
});

describe('creds generate: what can be checked before touching a cluster is (live)', () => {
  it('--out into a missing directory: exit 2 naming the directory, before any request, nothing created', async () => {
    const ns = `${run}-m${++seq}`;
    const args = [
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${ns}/x`,
      '--role',
      'view',
      '-n',
      ns,
      '--create-namespace',
      '--out',
      '/missing-dir/x.kubeconfig',
    ];
    const res = await runFleet(args);
    outputs.push({ what: args.join(' '), code: res.code, signal: null, stdout: res.stdout, stderr: res.stderr });
    assert.equal(res.code, 2, res.stderr);
    assert.equal(res.stderr, 'error: --out /missing-dir/x.kubeconfig: directory /missing-dir does not exist\n');
    // Not one request: with -v 6 every request would be logged on stderr (before the error and its stack).
    const logged = await runFleet([...args, '--verbosity', '6']);
    outputs.push({
      what: `${args.join(' ')} -v 6`,
      code: logged.code,
      signal: null,
      stdout: logged.stdout,
      stderr: logged.stderr,
    });
    assert.equal(logged.code, 2);
    assert.equal(logged.stderr.split('\n')[0], res.stderr.trim());
    assert.doesNotMatch(logged.stderr, /\b(GET|POST|PATCH|PUT|DELETE) https?:/);
    assert.equal((await kubectlResult(m1, ['get', 'namespace', ns])).code, 1);
  });

  it('--out under something that is not a directory: exit 2, named', async () => {
    const file = join(dir, `${run}-plain-file`);
    writeFileSync(file, 'x');
    const res = await runFleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${run}-z/x`,
      '--role',
      'view',
      '--out',
      join(file, 'x.kubeconfig'),
    ]);
    outputs.push({ what: 'out under a file', code: res.code, signal: null, stdout: res.stdout, stderr: res.stderr });
    assert.equal(res.code, 2);
    assert.match(res.stderr, new RegExp(`^error: --out ${file}/x.kubeconfig: ${file} is not a directory\\n$`));
  });

  it('a hub that cannot be reached is found out before anything is made on the cluster', async () => {
    const ns = `${run}-h${++seq}`;
    const bad = join(dir, `${run}-unreachable-hub.kubeconfig`);
    const doc = yaml.load(readFileSync(hub.kubeconfig, 'utf8')) as any;
    for (const c of doc.clusters) c.cluster.server = 'https://127.0.0.1:1';
    writeFileSync(bad, yaml.dump(doc), { mode: 0o600 });
    const args = [
      'creds',
      'generate',
      ...MEMBER,
      '--hub-kubeconfig',
      bad,
      '--service-account',
      `${ns}/x`,
      '--role',
      'view',
      '-n',
      ns,
      '--create-namespace',
      '--secret',
      `${hubNs}/${ns}`,
      '--format',
      'multicluster-runtime',
    ];
    const res = await runFleet(args);
    outputs.push({ what: args.join(' '), code: res.code, signal: null, stdout: res.stdout, stderr: res.stderr });
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /127\.0\.0\.1:1/);
    assert.equal((await kubectlResult(m1, ['get', 'namespace', ns])).code, 1);
  });
});

describe('exec plugins die with fleet (live)', () => {
  /** A kubeconfig for member-1 whose user is a plugin that never answers; its pid and its child's pid are written down. */
  function hangingKubeconfig(tag: string) {
    const pids = join(dir, `${run}-${tag}-pids`);
    const child = join(dir, `${run}-${tag}-child`);
    const doc = yaml.load(readFileSync(m1.kubeconfig, 'utf8')) as any;
    const path = join(dir, `${run}-${tag}.kubeconfig`);
    doc.users = [
      {
        name: 'hang',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: process.execPath,
            args: [PLUGIN, '--count', pids, '--hang', child],
            interactiveMode: 'Never',
          },
        },
      },
    ];
    for (const c of doc.contexts) c.context.user = 'hang';
    writeFileSync(path, yaml.dump(doc), { mode: 0o600 });
    return { path, pids, child, context: doc.contexts[0].name as string };
  }

  for (const command of ['auth whoami', 'creds generate']) {
    it(`${command}: SIGINT while a plugin hangs kills the plugin and its child, exit 130`, async () => {
      const k = hangingKubeconfig(command.replace(' ', '-'));
      const args =
        command === 'auth whoami'
          ? ['auth', 'whoami', '--kubeconfig', k.path]
          : [
              'creds',
              'generate',
              '--kubeconfig',
              k.path,
              '--cluster',
              k.context,
              '--service-account',
              `${run}-p/x`,
              '--role',
              'view',
              '--out',
              join(dir, `${run}-p.kubeconfig`),
            ];
      const { child, done } = start(args);
      const grandchild = await until('the plugin to start its child', () =>
        existsSync(k.child) && readFileSync(k.child, 'utf8') ? Number(readFileSync(k.child, 'utf8')) : undefined,
      );
      const plugin = Number(readFileSync(k.pids, 'utf8').trim().split('\n')[0]);
      assert.ok(isAlive(plugin) && isAlive(grandchild));
      child.kill('SIGINT');
      const r = await done;
      assert.equal(r.code, 130, r.stderr);
      assert.equal(
        r.stderr,
        command === 'auth whoami'
          ? 'error: interrupted (SIGINT)\n'
          : 'error: interrupted (SIGINT) before anything was made: nothing to undo\n',
      );
      await until('the plugin and its child to be gone', () => !isAlive(plugin) && !isAlive(grandchild), 5000);
      assert.equal(existsSync(join(dir, `${run}-p.kubeconfig`)), false);
    });
  }
});

describe('Ctrl-C at a terminal (tmux)', () => {
  const socket = `fleet-${run}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const pane = (s: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', s);
  const waitFor = (s: string, text: string | RegExp) =>
    until(
      `${text} on the screen`,
      () => {
        const screen = pane(s);
        return (typeof text === 'string' ? screen.includes(text) : text.test(screen)) ? screen : undefined;
      },
      60_000,
    );

  after(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  });

  const shell = (args: string[], extra: string[] = []) =>
    [
      'env',
      '-u',
      'CI',
      'KUBECONFIG=',
      'NO_COLOR=1',
      `HOME=${dir}`,
      'XDG_CONFIG_HOME=/nonexistent-fleet-test-config',
      ...extra,
      process.execPath,
      FLEET_BIN,
      ...args,
    ]
      .map((a) => `'${a}'`)
      .join(' ');

  it('generate at a terminal, Ctrl-C after the anchor: the terminal shows one interrupted line, exit 130, nothing left', async () => {
    const ns = `${run}-tty`;
    const pauseFile = join(dir, `${run}-tty-pause`);
    const out = join(dir, `${ns}.kubeconfig`);
    const cmd = shell(
      [
        'creds',
        'generate',
        ...MEMBER,
        '--service-account',
        `${ns}/agent`,
        '--role',
        'view',
        '-n',
        ns,
        '--create-namespace',
        '--out',
        out,
      ],
      [`FLEET_TEST_PAUSE_AT=anchor`, `FLEET_TEST_PAUSE_FILE=${pauseFile}`],
    );
    tmux('new-session', '-d', '-s', 'gen', '-x', '220', '-y', '50', `${cmd}; echo FLEET-EXIT=$?; sleep 120`);
    await until('the pause', () => existsSync(pauseFile) || undefined);
    assert.notDeepEqual(await leftOnMember(`system:serviceaccount:${ns}:agent`), []);
    tmux('send-keys', '-t', 'gen', 'C-c');
    const screen = await waitFor('gen', /FLEET-EXIT=\d+/);
    outputs.push({ what: 'tmux generate', code: null, signal: null, stdout: screen, stderr: '' });
    assert.match(screen, /FLEET-EXIT=130/);
    assert.match(
      screen,
      /error: interrupted \(SIGINT\) after step "anchor": rolled back, nothing this run made is left/,
    );
    assert.deepEqual(await leftOnMember(`system:serviceaccount:${ns}:agent`), []);
    assert.equal(existsSync(out), false);
  });

  it('the wizard: Ctrl-C at a prompt ends it with exit 130 and prints nothing, nothing made', async () => {
    tmux(
      'new-session',
      '-d',
      '-s',
      'wiz',
      '-x',
      '220',
      '-y',
      '50',
      `${shell(['creds', 'generate', '--kubeconfig', m1.kubeconfig])}; echo FLEET-EXIT=$?; sleep 120`,
    );
    await waitFor('wiz', '? Cluster');
    tmux('send-keys', '-t', 'wiz', 'C-c');
    const screen = await waitFor('wiz', /FLEET-EXIT=\d+/);
    outputs.push({ what: 'tmux wizard', code: null, signal: null, stdout: screen, stderr: '' });
    assert.match(screen, /FLEET-EXIT=130/);
    // Nothing after the prompt but the shell's own line: no error line, no "User force closed the prompt".
    assert.deepEqual(
      screen
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => /^error:|force closed|interrupted \(|SIGINT/i.test(l)),
      [],
    );
  });
});

describe('creds rotate: an interrupt lifts a claim it made, or leaves what the next run finishes (live)', () => {
  const name = `${run}-rot`;
  let anchorBefore: string;
  let fingerprintBefore: string;
  const ann = async () =>
    JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json'])).metadata.annotations as Record<
      string,
      string
    >;
  const anchorsOnMember = async () =>
    (await kubectl(m1, ['get', 'secrets', '-n', `${run}-rotsa`, '-o', 'name']))
      .trim()
      .split('\n')
      .filter((l) => l.includes('fleet-anchor'))
      .sort();

  before(async () => {
    const res = await runFleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${run}-rotsa/agent`,
      '--role',
      'view',
      '-n',
      `${run}-rotsa`,
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
    outputs.push({ what: 'rotate setup', code: res.code, signal: null, stdout: res.stdout, stderr: res.stderr });
    assert.equal(res.code, 0, res.stderr);
    const s = JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
    const kc = yaml.load(Buffer.from(s.data.kubeconfig, 'base64').toString('utf8')) as any;
    secrets.push(kc.users[0].user.token);
    anchorBefore = s.metadata.annotations['fleet.dev/credential-anchor'];
    fingerprintBefore = s.metadata.annotations['fleet.dev/kubeconfig-sha256'];
  });

  async function rotateInterrupted(step: string, reached: () => Promise<boolean>): Promise<Ran> {
    const { child, done } = start(
      ['creds', 'rotate', `${hubNs}/${name}`, ...HUB, '--kubeconfig', m1.kubeconfig, '-o', 'json'],
      { FLEET_ROTATE_PAUSE: `after-${step}:60000` },
    );
    await until(`rotate to reach ${step}`, async () => (await reached()) || undefined);
    child.kill('SIGINT');
    return done;
  }

  for (const step of ['claim', 'anchor', 'mint', 'verify']) {
    it(`SIGINT after "${step}": exit 130, the claim lifted, the new anchor gone, the old credential in place`, async () => {
      const anchors = await anchorsOnMember();
      const r = await rotateInterrupted(step, async () => {
        const a = await ann();
        if (a['fleet.dev/rotation-phase'] !== 'claimed') return false;
        // After the anchor step the new anchor exists: wait for it, so the signal really comes after that step.
        return step === 'claim' || (await anchorsOnMember()).length > anchors.length;
      });
      assert.equal(r.code, 130, r.stderr);
      const item = JSON.parse(r.stdout).items[0];
      assert.equal(item.status, 'failed');
      assert.equal(item.error.kind, 'interrupted');
      assert.match(
        item.error.message,
        /^interrupted \(SIGINT\) before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted$/,
      );
      const a = await ann();
      assert.equal(a['fleet.dev/rotation-phase'], undefined);
      assert.equal(a['fleet.dev/credential-anchor'], anchorBefore);
      assert.equal(a['fleet.dev/kubeconfig-sha256'], fingerprintBefore);
      assert.deepEqual(await anchorsOnMember(), anchors);
    });
  }

  it('SIGINT after "replace": exit 130, the Secret holds the new credential, and the next run finishes the rotation', async () => {
    const r = await rotateInterrupted('replace', async () => (await ann())['fleet.dev/rotation-phase'] === 'replaced');
    assert.equal(r.code, 130, r.stderr);
    assert.match(
      JSON.parse(r.stdout).items[0].error.message,
      /after the Secret got the new credential: the next run finishes the rotation/,
    );
    const s = JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
    secrets.push((yaml.load(Buffer.from(s.data.kubeconfig, 'base64').toString('utf8')) as any).users[0].user.token);
    assert.equal(s.metadata.annotations['fleet.dev/rotation-phase'], 'replaced');
    const next = await runFleet([
      'creds',
      'rotate',
      `${hubNs}/${name}`,
      ...HUB,
      '--kubeconfig',
      m1.kubeconfig,
      '-o',
      'json',
    ]);
    outputs.push({ what: 'rotate resume', code: next.code, signal: null, stdout: next.stdout, stderr: next.stderr });
    assert.equal(next.code, 0, next.stderr);
    const item = next.json().items[0];
    assert.equal(item.resumed, 'replaced');
    assert.equal(item.status, 'rotated');
    // The resumed run minted nothing; its lifetime is the one the store's new credential was issued with.
    assert.ok(item.lifetime?.requestedSeconds > 0 && item.lifetime?.issuedSeconds > 0, JSON.stringify(item.lifetime));
    assert.equal((await ann())['fleet.dev/rotation-phase'], undefined);
    assert.equal(
      (await kubectlResult(m1, ['get', 'secret', '-n', anchorBefore.split('/')[0], anchorBefore.split('/')[1]])).code,
      1,
      'the old anchor is deleted',
    );
  });
});

describe('creds rotate --file: the same steps, so the same interrupt handling (live)', () => {
  // Files are rotated by the same state machine as Secrets (src/creds/rotate.ts over a FileStore): an interrupt before
  // the file holds the new credential puts the file back and deletes the new anchor; one after it leaves what the next
  // run finishes.
  let path: string;
  let dir: string;
  const ns = `${run}-rotfile`;
  const facts = () =>
    (yaml.load(readFileSync(path, 'utf8')) as any).extensions.find((e: any) => e.name === 'fleet.dev/credential')
      .extension as Record<string, string>;
  const token = () => (yaml.load(readFileSync(path, 'utf8')) as any).users[0].user.token as string;
  const anchorsOnMember = async () =>
    (await kubectl(m1, ['get', 'secrets', '-n', ns, '-o', 'name']))
      .trim()
      .split('\n')
      .filter((l) => l.includes('fleet-anchor'))
      .sort();

  before(async () => {
    dir = scratchDir();
    path = join(dir, 'agent.kubeconfig');
    const res = await runFleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${ns}/agent`,
      '--role',
      'view',
      '-n',
      ns,
      '--create-namespace',
      '--duration',
      '1h',
      '--out',
      path,
      '-o',
      'json',
    ]);
    outputs.push({ what: 'rotate --file setup', code: res.code, signal: null, stdout: res.stdout, stderr: res.stderr });
    assert.equal(res.code, 0, res.stderr);
    secrets.push(token());
  });

  function rotateFileInterrupted(step: string, reached: () => Promise<boolean>): Promise<Ran> {
    const { child, done } = start(['creds', 'rotate', '--file', path, '--kubeconfig', m1.kubeconfig, '-o', 'json'], {
      FLEET_ROTATE_PAUSE: `after-${step}:60000`,
    });
    return until(`rotate --file to reach ${step}`, async () => (await reached()) || undefined).then(() => {
      child.kill('SIGINT');
      return done;
    });
  }

  it('SIGINT after "mint": exit 130, the file keeps its old credential and no rotation state, the new anchor is deleted', async () => {
    const before = { token: token(), anchor: facts().anchor, anchors: await anchorsOnMember() };
    const r = await rotateFileInterrupted(
      'mint',
      async () => facts()['rotation-phase'] === 'claimed' && (await anchorsOnMember()).length > before.anchors.length,
    );
    outputs.push({ what: 'rotate --file interrupted', code: r.code, signal: null, stdout: r.stdout, stderr: r.stderr });
    assert.equal(r.code, 130, r.stderr);
    const item = JSON.parse(r.stdout).items[0];
    assert.equal(item.error.kind, 'interrupted');
    assert.match(
      item.error.message,
      /before the new credential was written: the old one is unchanged, the new anchor deleted and the claim lifted$/,
    );
    assert.ok(!item.steps.some((s: { step: string }) => s.step === 'replace'), JSON.stringify(item.steps));
    assert.equal(token(), before.token);
    assert.equal(facts().anchor, before.anchor);
    for (const k of [
      'rotation-phase',
      'rotation-new-anchor',
      'rotation-old-anchor',
      'rotation-run',
      'rotation-started',
    ])
      assert.equal(facts()[k], undefined, k);
    assert.deepEqual(await anchorsOnMember(), before.anchors);
    assert.equal(existsSync(`${path}.fleet-rotate.lock`), false, 'the lock file is removed');
  });

  it('SIGINT after "replace": exit 130, the file holds the new credential, and the next run finishes the rotation', async () => {
    const r = await rotateFileInterrupted('replace', async () => facts()['rotation-phase'] === 'replaced');
    outputs.push({
      what: 'rotate --file interrupted after replace',
      code: r.code,
      signal: null,
      stdout: r.stdout,
      stderr: r.stderr,
    });
    assert.equal(r.code, 130, r.stderr);
    const interrupted = JSON.parse(r.stdout).items[0];
    assert.match(
      interrupted.error.message,
      /after the file got the new credential: the next run finishes the rotation/,
    );
    // Every line agrees with it (issue 41: the next-run note said "the old credential is in place, claimed by this run").
    assert.equal(interrupted.unfinished.phase, 'replaced');
    assert.equal(
      interrupted.unfinished.next,
      'the file holds the new credential; the next run finishes it (deletes the old anchor)',
    );
    assert.doesNotMatch(r.stderr, /before this run changed anything|old credential is in place|claimed by this run/);
    // What the summary note reads to say the file already holds the new credential (rotationFailureNote).
    assert.ok(
      interrupted.steps.some((s: { step: string }) => s.step === 'replace'),
      JSON.stringify(interrupted.steps),
    );
    secrets.push(token());
    // generate derives a file's first anchor from its path; the claim recorded it, and the new one is the file's now.
    const oldAnchor = facts()['rotation-old-anchor'];
    assert.match(oldAnchor, new RegExp(`^${ns}/agent-fleet-anchor-`));
    assert.equal(facts().anchor, facts()['rotation-new-anchor']);
    assert.notEqual(facts().anchor, oldAnchor);
    const next = await runFleet(['creds', 'rotate', '--file', path, '--kubeconfig', m1.kubeconfig, '-o', 'json']);
    outputs.push({
      what: 'rotate --file resume',
      code: next.code,
      signal: null,
      stdout: next.stdout,
      stderr: next.stderr,
    });
    assert.equal(next.code, 0, next.stderr);
    const item = next.json().items[0];
    assert.equal(item.resumed, 'replaced');
    assert.equal(item.status, 'rotated');
    assert.equal(facts()['rotation-phase'], undefined);
    const [ons, onm] = oldAnchor.split('/');
    assert.equal((await kubectlResult(m1, ['get', 'secret', '-n', ons, onm])).code, 1, 'the old anchor is deleted');
  });
});

describe('secrets', () => {
  it('no credential involved appears in any captured output', () => {
    assert.ok(secrets.length >= 6, `only ${secrets.length} secrets collected`);
    assert.ok(outputs.length >= 20, `only ${outputs.length} outputs`);
    for (const o of outputs)
      for (const s of secrets)
        assert.ok(!o.stdout.includes(s) && !o.stderr.includes(s), `a secret appears in the output of ${o.what}`);
  });
});
