// -o jsonl (issue 23): one JSON item per line, and over many clusters each line goes out as its cluster answers, so a
// reader (jq, a log shipper, a CI step) starts before the slowest cluster is done. Real clusters (the sandbox) plus one
// server that accepts connections and never answers.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { FLEET_BIN, runFleet } from '../support/cli.js';
import { loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigObject } from '../support/kubeconfig.js';

const cp = loadControlPlane();
let silent: Server;
let kubeconfig: string;
const tokens: string[] = [];

before(async () => {
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': '',
  };
  const add = (o: Parameters<typeof kubeconfigObject>[0]) => {
    const one = kubeconfigObject(o) as typeof merged;
    merged.clusters.push(...one.clusters);
    merged.users.push(...one.users);
    merged.contexts.push(...one.contexts);
  };
  for (const s of [cp.hub, ...cp.members]) {
    const bob = s.tokenUsers.find((u) => u.name === 'bob')!;
    tokens.push(bob.token);
    add({ path: '', server: s.url, caFile: s.caFile, context: `bob@${s.name}`, user: { token: bob.token } });
  }
  add({
    path: '',
    server: `https://127.0.0.1:${port}`,
    insecureSkipTlsVerify: true,
    context: 'silent',
    user: { token: 'silent-token-not-a-secret' },
  });
  kubeconfig = join(scratchDir(), `${uniqueName('jsonl')}.kubeconfig`);
  writeFileSync(kubeconfig, yaml.dump(merged), { mode: 0o600 });
});

after(() => silent.close());

describe('-o jsonl', () => {
  it("auth whoami --all: the answering clusters' lines arrive while the silent one is still being waited for; the lines are -o json's items", async () => {
    const child = spawn(
      process.execPath,
      [FLEET_BIN, 'auth', 'whoami', '--all', '--kubeconfig', kubeconfig, '-o', 'jsonl', '--request-timeout', '4s'],
      {
        env: { ...process.env, KUBECONFIG: '', HOME: '/nonexistent-fleet-test-home', CI: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Array<{ text: string; running: boolean }> = [];
    let buffer = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        // Whether fleet was still running when the line came: it must be, for every cluster that answered.
        lines.push({ text: buffer.slice(0, nl), running: child.exitCode === null });
        buffer = buffer.slice(nl + 1);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const took = Date.now() - started;
    assert.equal(code, 1, stderr);
    assert.equal(buffer, '', 'output does not end with a newline');
    assert.equal(lines.length, 4);
    const items = lines.map(
      (l) =>
        JSON.parse(l.text) as { cluster: string; ok: boolean; user?: { username: string }; error?: { kind: string } },
    );
    // The silent cluster last (it waits for the 4 s limit); the others before it, each while fleet still ran.
    assert.equal(items[3].cluster.endsWith('+silent'), true, JSON.stringify(items.map((i) => i.cluster)));
    assert.equal(items[3].error?.kind, 'timeout');
    for (const [i, l] of lines.slice(0, 3).entries()) {
      assert.ok(l.running, `line ${i} (${items[i].cluster}) came after fleet exited (run took ${took} ms)`);
      assert.equal(items[i].user?.username, 'bob');
    }
    assert.match(stderr, /error: .*\+silent: /);
    for (const t of tokens) assert.ok(!lines.some((l) => l.text.includes(t)) && !stderr.includes(t));

    // The same items as -o json (in the order the clusters answered instead of the provider's).
    const json = await runFleet([
      'auth',
      'whoami',
      '--all',
      '--kubeconfig',
      kubeconfig,
      '-o',
      'json',
      '--request-timeout',
      '4s',
    ]);
    const byName = (xs: Array<{ cluster: string }>) => [...xs].sort((a, b) => a.cluster.localeCompare(b.cluster));
    const strip = (xs: Array<Record<string, unknown>>) =>
      xs.map(({ error, ...rest }) => ({ ...rest, error: error ? (error as { kind: string }).kind : undefined }));
    assert.deepEqual(strip(byName(items) as never), strip(byName(json.json().items) as never));
  });

  it('clusters verify streams VerifyReport items; clusters list and a usage error print one line each', async () => {
    const verify = await runFleet([
      'clusters',
      'verify',
      '--all',
      '--kubeconfig',
      kubeconfig,
      '-o',
      'jsonl',
      '--request-timeout',
      '3s',
      '--cluster-timeout',
      '6s',
    ]);
    assert.equal(verify.code, 1, verify.stderr);
    const items = verify.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cluster: string; ok: boolean; checks: unknown[] });
    assert.equal(items.length, 4);
    assert.ok(items.every((i) => Array.isArray(i.checks) && i.checks.length > 0));
    assert.deepEqual(
      items.filter((i) => !i.ok).map((i) => i.cluster.split('+')[1]),
      ['silent'],
    );

    const list = await runFleet(['clusters', 'list', '--kubeconfig', kubeconfig, '-o', 'jsonl']);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trim().split('\n').length, 4);
    assert.ok(
      list.stdout
        .trim()
        .split('\n')
        .every((l) => typeof JSON.parse(l).name === 'string'),
    );

    const bad = await runFleet([
      'auth',
      'whoami',
      '--kubeconfig',
      join(scratchDir(), 'missing.kubeconfig'),
      '-o',
      'jsonl',
    ]);
    assert.equal(bad.code, 2);
    assert.equal(JSON.parse(bad.stdout.trim()).error.kind, 'config');
    assert.equal(bad.stdout.trim().split('\n').length, 1);
  });
});
