// Every path a user gives on a flag (issue 21, item 3): missing, a directory, unreadable or unwritable is one line on
// stderr naming the flag and the path, exit 2, and it is found before any cluster is touched: the kubeconfig points
// at a local server that counts the connections it accepts, and none may arrive.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { FLEET_BIN, type CliResult, runFleet } from '../support/cli.js';

// Another user must be able to walk in: the unreadable and unwritable cases run fleet as nobody when the tests run as
// root. The test runner's TMPDIR is private (0700), so this directory is made in /tmp and removed at the end.
const root = mkdtempSync(join(process.getuid?.() === 0 ? '/tmp' : tmpdir(), 'fleet-path-flags-'));
chmodSync(root, 0o755);
// nobody's own HOME (oclif writes its data directory there).
const nobodyHome = join(root, 'home-nobody');
mkdirSync(nobodyHome, { mode: 0o777 });
chmodSync(nobodyHome, 0o777);
const TOKEN = 'path-flag-test-token-0123456789';
let connections = 0;
let server: net.Server;
let kubeconfig: string;

const dir = join(root, 'a-directory');
const missing = join(root, 'does-not-exist');
const noParent = join(root, 'no-such-dir', 'out.file');
const unreadable = join(root, 'unreadable.yaml');
const lockedDir = join(root, 'locked');
const unwritable = join(lockedDir, 'out.file');

before(async () => {
  server = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kubeconfig = join(root, 'kubeconfig.yaml');
  const clusters = ['one', 'two'];
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: clusters.map((name) => ({
        name,
        cluster: { server: `${url}/${name}`, 'insecure-skip-tls-verify': true },
      })),
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: clusters.map((name) => ({ name, context: { cluster: name, user: 'u' } })),
      'current-context': 'one',
    }),
    { mode: 0o644 },
  );
  mkdirSync(dir);
  writeFileSync(unreadable, 'apiVersion: v1\n', { mode: 0o000 });
  mkdirSync(lockedDir, { mode: 0o555 });
});
after(() => {
  server?.close();
  rmSync(root, { recursive: true, force: true });
});

const asRoot = process.getuid?.() === 0;

/** fleet as an unprivileged user: root reads and writes whatever it likes, so permission cases run as nobody. */
function runUnprivileged(args: string[]): Promise<CliResult> {
  if (!asRoot) return runFleet(args, { env: { HOME: root } });
  return new Promise((resolve, reject) => {
    const child = spawn(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, FLEET_BIN, ...args],
      {
        env: {
          PATH: process.env.PATH,
          CI: 'true',
          NO_COLOR: '1',
          KUBECONFIG: '',
          HOME: nobodyHome,
          XDG_CONFIG_HOME: '/nonexistent-fleet-test-config',
        },
        cwd: root,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}

interface Case {
  /** The command, with `PATH` where the path goes. */
  args: string[];
  flag: string;
}

const inputs: Case[] = [
  { args: ['clusters', 'verify', '--policy', 'PATH'], flag: '--policy' },
  {
    args: [
      'creds',
      'generate',
      '-c',
      'one',
      '--service-account',
      'ns/sa',
      '--rules',
      'PATH',
      '--out',
      join(root, 'generated.kubeconfig'),
    ],
    flag: '--rules',
  },
  { args: ['creds', 'rotate', '--file', 'PATH'], flag: '--file' },
  { args: ['creds', 'list', '--hub-kubeconfig', 'PATH'], flag: '--hub-kubeconfig' },
  {
    args: ['wi', 'test', '--hub', 'one', '--target', 'two', '--service-account', 'ns/sa', '--token-file', 'PATH'],
    flag: '--token-file',
  },
  {
    args: [
      'wi',
      'doctor',
      '--hub',
      'one',
      '--target',
      'two',
      '--service-account',
      'ns/sa',
      '--authentication-config',
      'PATH',
    ],
    flag: '--authentication-config',
  },
];
// creds revoke --file: a missing file is `not-found` (already revoked), as kubectl delete says; the rest are errors.
const revoke: Case = { args: ['creds', 'revoke', '--file', 'PATH'], flag: '--file' };

const outputs: Case[] = [
  { args: ['clusters', 'verify', '--junit', 'PATH'], flag: '--junit' },
  {
    args: ['wi', 'test', '--hub', 'one', '--target', 'two', '--service-account', 'ns/sa', '--junit', 'PATH'],
    flag: '--junit',
  },
  {
    args: ['creds', 'generate', '-c', 'one', '--service-account', 'ns/sa', '--role', 'view', '--out', 'PATH'],
    flag: '--out',
  },
  {
    args: [
      'wi',
      'setup',
      '--hub',
      'one',
      '--target',
      'two',
      '--service-account',
      'ns/sa',
      '--authentication-config-out',
      'PATH',
    ],
    flag: '--authentication-config-out',
  },
];

async function check(
  c: Case,
  path: string,
  problem: RegExp,
  options: { unprivileged?: boolean; format?: string } = {},
): Promise<void> {
  const args = [
    ...c.args.map((a) => (a === 'PATH' ? path : a)),
    '--kubeconfig',
    kubeconfig,
    '--request-timeout',
    '2s',
    ...(options.format ? ['-o', options.format] : []),
  ];
  const before = connections;
  const res = options.unprivileged ? await runUnprivileged(args) : await runFleet(args, { env: { HOME: root } });
  const what = `fleet ${args.join(' ')}`;
  assert.equal(res.code, 2, `${what}: exit ${res.code}\n${res.stdout}${res.stderr}`);
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${what}: one line on stderr, got\n${res.stderr}`);
  assert.ok(
    lines[0].startsWith(`error: ${c.flag} ${path}: `),
    `${what}: the line names the flag and the path: ${lines[0]}`,
  );
  assert.match(lines[0], problem, what);
  assert.doesNotMatch(lines[0], /\bE[A-Z]{3,}\b|\.tmp\b/, `${what}: a raw system error: ${lines[0]}`);
  assert.equal(connections, before, `${what}: a cluster was contacted before the path was checked`);
  if (!options.format) assert.equal(res.stdout, '', `${what}: nothing on stdout`);
  assert.ok(!res.stdout.includes(TOKEN) && !res.stderr.includes(TOKEN), `${what}: the token was printed`);
}

describe('paths on flags: one line naming the flag and the path, exit 2, before any cluster work', () => {
  for (const c of inputs) {
    it(`${c.args.slice(0, 2).join(' ')} ${c.flag}: missing, a directory, unreadable`, async () => {
      await check(c, missing, /: file not found$/);
      await check(c, dir, /: is a directory, not an? [a-zA-Z ]+$/);
      await check(c, unreadable, /: permission denied$/, { unprivileged: true });
    });
  }

  it('creds revoke --file: a directory, unreadable', async () => {
    await check(revoke, dir, /: is a directory, not a kubeconfig file$/);
    await check(revoke, unreadable, /: permission denied$/, { unprivileged: true });
  });

  for (const c of outputs) {
    it(`${c.args.slice(0, 2).join(' ')} ${c.flag}: a directory, a missing directory, an unwritable directory`, async () => {
      await check(c, dir, /: is a directory, not a [a-zA-Z ]+$/);
      await check(c, noParent, /: directory .*no-such-dir does not exist$/);
      await check(c, unwritable, /: directory .*locked is not writable \(permission denied\)$/, { unprivileged: true });
    });
  }

  it('--junit DIR in JSON and YAML: the same one line, and the document says the error', async () => {
    for (const format of ['json', 'yaml'])
      await check(outputs[0], dir, /: is a directory, not a file for the JUnit report$/, { format });
  });

  it('--kubeconfig that does not exist names the flag', async () => {
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', missing], { env: { HOME: root } });
    assert.equal(res.code, 2, res.stderr);
    assert.equal(res.stderr.trim(), `error: --kubeconfig ${missing}: no such kubeconfig file or directory`);
  });
});
