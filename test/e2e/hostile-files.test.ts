// Issue 29, item 4 ("files and values a kubeconfig names"), through the built CLI as a user runs it: a kubeconfig whose
// certificate-authority is /dev/zero, a FIFO nobody writes to, or a 2 MB file, or whose tokenFile is a FIFO, ends at
// once with the one-line reason naming the field and the path, in little memory; /dev/zero as the kubeconfig itself
// ends at 64 MiB; SIGTERM and SIGINT end fleet while it is blocked opening a FIFO kubeconfig. Nothing here needs a
// cluster: the server is a closed port, and every answer comes before any request.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants } from 'node:os';
import { before, describe, it } from 'node:test';

import { FLEET_BIN, runFleet } from '../support/cli.js';

let dir: string;
let fifo: string;
/** A preload that writes the process's peak RSS (VmHWM, in kB) to $FLEET_TEST_HWM when it exits. */
let hwmHook: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-hostile-files-'));
  fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  writeFileSync(join(dir, 'big.pem'), Buffer.alloc(2_000_000, 'A'));
  // Read before the key (and found not to be a certificate only after both are read).
  writeFileSync(join(dir, 'cert.pem'), '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
  hwmHook = join(dir, 'hwm.cjs');
  writeFileSync(
    hwmHook,
    `process.on('exit', () => { const fs = require('node:fs'); const m = /VmHWM:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8')); fs.writeFileSync(process.env.FLEET_TEST_HWM, m ? m[1] : '') })\n`,
  );
});

function kubeconfig(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(dir, `${name}.kubeconfig`);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: name, context: { cluster: 'c', user: 'u' } }],
    'current-context': name,
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/** fleet with its peak RSS measured (kB) and its wall time (ms). */
async function measured(args: string[]) {
  const hwm = join(dir, `hwm-${Math.random().toString(36).slice(2)}`);
  const start = performance.now();
  const res = await runFleet(args, {
    env: { NODE_OPTIONS: `--require ${hwmHook}`, FLEET_TEST_HWM: hwm },
    timeoutMs: 30_000,
  });
  const ms = performance.now() - start;
  return { ...res, ms, peakKb: Number(readFileSync(hwm, 'utf8')) };
}

// Peak RSS of a run that reads nothing large is ~60-75 MB; reading /dev/zero into memory took 5.3 GB (the issue).
const PEAK_KB = 200 * 1024;

const cases = [
  {
    what: 'certificate-authority /dev/zero',
    cluster: () => ({ 'certificate-authority': '/dev/zero' }),
    user: () => ({ token: 'hostile-files-token-1' }),
    reason: () => 'certificate-authority /dev/zero: not a regular file',
  },
  {
    what: 'a FIFO as certificate-authority',
    cluster: () => ({ 'certificate-authority': fifo }),
    user: () => ({ token: 'hostile-files-token-2' }),
    reason: () => `certificate-authority ${fifo}: not a regular file`,
  },
  {
    what: 'a 2 MB certificate-authority',
    cluster: () => ({ 'certificate-authority': join(dir, 'big.pem') }),
    user: () => ({ token: 'hostile-files-token-3' }),
    reason: () => `certificate-authority ${join(dir, 'big.pem')}: larger than 1 MiB`,
  },
  {
    what: 'a FIFO as tokenFile',
    cluster: () => ({ 'insecure-skip-tls-verify': true }),
    user: () => ({ tokenFile: fifo }),
    reason: () => `tokenFile ${fifo}: not a regular file`,
  },
  {
    what: 'a FIFO as client-key',
    cluster: () => ({ 'insecure-skip-tls-verify': true }),
    user: () => ({ 'client-certificate': join(dir, 'cert.pem'), 'client-key': fifo }),
    reason: () => `client-key ${fifo}: not a regular file`,
  },
  {
    what: 'a 2 MB client-certificate',
    cluster: () => ({ 'insecure-skip-tls-verify': true }),
    user: () => ({ 'client-certificate': join(dir, 'big.pem'), 'client-key': join(dir, 'cert.pem') }),
    reason: () => `client-certificate ${join(dir, 'big.pem')}: larger than 1 MiB`,
  },
];

describe('files a kubeconfig names: regular files of at most 1 MiB, never blocking', () => {
  for (const [i, c] of cases.entries()) {
    it(`${c.what}: inspect --offline, list -o wide --strict and auth whoami end at once with the reason`, async () => {
      const path = kubeconfig(`case-${i}`, c.cluster(), c.user());
      const reason = c.reason();

      // Offline views show a cluster that is not ready with its reason (exit 0, as for a missing file; --strict: 1).
      const inspect = await measured(['clusters', 'inspect', '--offline', '--kubeconfig', path]);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.match(inspect.stdout, new RegExp(`^Ready +False \\(${escape(reason)}\\)$`, 'm'), inspect.stdout);

      const list = await measured(['clusters', 'list', '-o', 'wide', '--strict', '--kubeconfig', path]);
      assert.equal(list.code, 1, list.stderr);
      assert.match(list.stdout, new RegExp(`False +${escape(reason)} `), list.stdout);

      // A command that would connect stops before any request: one line, exit 2 (configuration).
      const whoami = await measured(['auth', 'whoami', '--kubeconfig', path]);
      assert.equal(whoami.code, 2, whoami.stderr);
      assert.equal(whoami.stderr, `error: ${path}+case-${i}: ${reason}\n`);

      for (const r of [inspect, list, whoami]) {
        assert.ok(r.ms < 5000, `took ${Math.round(r.ms)} ms`);
        assert.ok(r.peakKb > 0 && r.peakKb < PEAK_KB, `peak RSS ${r.peakKb} kB`);
        assert.ok(!/hostile-files-token/.test(r.stdout + r.stderr), 'the token was printed');
        assert.ok(!/\n\s+at /.test(r.stderr), 'a stack trace was printed');
      }
    });
  }

  it('/dev/zero as the kubeconfig itself ends at 64 MiB with one line (exit 2)', async () => {
    const r = await measured(['clusters', 'list', '--kubeconfig', '/dev/zero']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'error: /dev/zero: larger than 64 MiB\n');
    assert.ok(r.ms < 5000, `took ${Math.round(r.ms)} ms`);
    // The 64 MiB read is all it holds (the issue's CA read took 5.3 GB).
    assert.ok(r.peakKb < PEAK_KB + 64 * 1024, `peak RSS ${r.peakKb} kB`);
  });
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The threads of a process blocked opening a FIFO nobody writes to (the kernel's fifo_open waits in wait_for_partner). */
function blockedOnFifo(pid: number): boolean {
  try {
    return execFileSync('sh', ['-c', `cat /proc/${pid}/task/*/wchan 2>/dev/null; echo`], { encoding: 'utf8' }).includes(
      'wait_for_partner',
    );
  } catch {
    return false;
  }
}

describe('SIGTERM and SIGINT end fleet at any moment, blocked or not', () => {
  for (const [signal, status] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal} while opening a FIFO kubeconfig nobody writes to: gone within 2 s, status ${status}, one line`, async () => {
      const kubeconfigFifo = join(dir, `kubeconfig-${signal}`);
      execFileSync('mkfifo', [kubeconfigFifo]);
      const child = spawn(process.execPath, [FLEET_BIN, 'clusters', 'list', '--kubeconfig', kubeconfigFifo], {
        env: {
          ...process.env,
          CI: 'true',
          NO_COLOR: '1',
          KUBECONFIG: '',
          HOME: '/nonexistent-fleet-test-home',
          XDG_CONFIG_HOME: '/nonexistent-fleet-test-config',
        },
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
        child.on('exit', (code, sig) => resolve({ code, signal: sig, at: performance.now() })),
      );
      try {
        // Really blocked in the open (a thread of libuv's pool), not merely starting.
        const deadline = Date.now() + 10_000;
        while (!blockedOnFifo(child.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.ok(blockedOnFifo(child.pid!), 'fleet never blocked opening the FIFO');
        const sent = performance.now();
        child.kill(signal);
        const gone = await Promise.race([ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
        assert.ok(gone, `fleet was still alive 2 s after ${signal}`);
        assert.ok(gone.at - sent < 2000);
        // The status a shell reports: the exit code, or 128 + the signal the process died of.
        const shellStatus = gone.code ?? 128 + constants.signals[gone.signal!];
        assert.equal(shellStatus, status);
        assert.equal(stderr, `error: interrupted (${signal})\n`);
      } finally {
        child.kill('SIGKILL');
      }
    });
  }
});

describe('YAML bounds through the CLI: aliasing and nesting end at once with one line, exit 2', () => {
  const laughs = ['laughs:', '  - &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
  for (let i = 1; i <= 8; i++)
    laughs.push(
      `  - &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  const bomb = laughs.join('\n') + '\n';
  const base = 'users: [{name: u, user: {token: hostile-files-token-yaml}}]\ncurrent-context: x\n';
  const files = () => ({
    // The issue: 4.3 GB and SIGABRT after 50 s (namespace), 979 MB and `Invalid string length` (server).
    'billion laughs as a context namespace': [
      `${bomb}${base}clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: *l8}}]\n`,
      'not valid YAML: excessive aliasing',
    ],
    'billion laughs as a server': [
      `${bomb}${base}clusters: [{name: c, cluster: {server: *l8}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n`,
      'not valid YAML: excessive aliasing',
    ],
    'YAML nested 100,000 deep': [
      `${base}x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      'not valid YAML (line 3): nesting deeper than 100 levels',
    ],
    'JSON nested 100,000 deep': [
      `{"clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "extensions": [{"name": "x", "extension": ${'['.repeat(100_000)}${']'.repeat(100_000)}}]}}]}`,
      'not valid YAML: nesting deeper than 100 levels',
    ],
  });
  for (const [what, [text, problem]] of Object.entries(files())) {
    it(`${what}: clusters list -o json and -o wide`, async () => {
      const path = join(dir, `${what.replace(/\W+/g, '-')}.kubeconfig`);
      writeFileSync(path, text);
      for (const output of ['json', 'wide']) {
        const r = await measured(['clusters', 'list', '-o', output, '--kubeconfig', path]);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr, `error: ${path}: ${problem}\n`);
        assert.ok(r.ms < 5000, `took ${Math.round(r.ms)} ms`);
        assert.ok(r.peakKb < PEAK_KB, `peak RSS ${r.peakKb} kB`);
        if (output === 'json')
          assert.deepEqual(r.json(), { error: { kind: 'config', message: `${path}: ${problem}` } });
      }
    });
  }
});
