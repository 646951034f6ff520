// Issue 29, item 4: files a kubeconfig names are read only if they are regular files of at most 1 MiB, and never block
// (src/base/files.ts readNamedFile); a kubeconfig itself may be a pipe but is read up to 64 MiB. Real files, FIFOs and
// devices, no doubles.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { fileProblem, readNamedFile, readOptional, readRequired, requireNamedFile } from '../../src/base/files.js';
import { MAX_CONFIG_FILE_BYTES, MAX_NAMED_FILE_BYTES } from '../../src/base/limits.js';
import { checkDocumentBounds, loadYaml, loadYamlIfValid } from '../../src/base/yaml.js';
import { portableCluster } from '../../src/creds/kubeconfig-out.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { describeCredentials } from '../../src/kubeconfig/credentials.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { parseKubeconfig } from '../../src/kubeconfig/parse.js';
import { checkContext } from '../../src/kubeconfig/readiness.js';
import { caPemOf } from '../../src/workload-identity/connect.js';
import { approvedExec } from '../support/approved.js';

let dir: string;
let fifo: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-hostile-files-'));
  fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
});

/** What a read ends with: its size, or the one-line problem fileProblem words. */
async function outcome(read: Promise<Buffer | string | undefined>): Promise<string> {
  try {
    const v = await read;
    return v === undefined ? 'absent' : `${v.length} bytes`;
  } catch (error) {
    return error instanceof ConfigError ? `ConfigError: ${error.message}` : fileProblem(error);
  }
}

/** Runs `read` and fails the test if it takes longer than `ms` (a read that blocks would hang the test instead). */
async function within<T>(ms: number, read: () => Promise<T>): Promise<T> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still reading after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([read(), limit]);
  } finally {
    clearTimeout(timer);
    assert.ok(performance.now() - start < ms);
  }
}

describe('readNamedFile: a file a kubeconfig names', () => {
  it('reads a regular file whole, up to exactly 1 MiB', async () => {
    const ok = join(dir, 'ca.pem');
    await writeFile(ok, Buffer.alloc(MAX_NAMED_FILE_BYTES, 'a'));
    assert.equal(await outcome(readNamedFile(ok)), `${MAX_NAMED_FILE_BYTES} bytes`);
    const small = join(dir, 'token');
    await writeFile(small, 'abc\n');
    assert.equal((await readNamedFile(small)).toString(), 'abc\n');
    const empty = join(dir, 'empty');
    await writeFile(empty, '');
    assert.equal(await outcome(readNamedFile(empty)), '0 bytes');
  });

  it('refuses one byte more than 1 MiB, and a 2 MB file, by its size', async () => {
    const over = join(dir, 'over');
    await writeFile(over, Buffer.alloc(MAX_NAMED_FILE_BYTES + 1, 'a'));
    assert.equal(await outcome(readNamedFile(over)), 'larger than 1 MiB');
    const big = join(dir, 'big');
    await writeFile(big, Buffer.alloc(2_000_000, 'a'));
    assert.equal(
      await outcome(requireNamedFile(big, `client-key ${big}`)),
      `ConfigError: client-key ${big}: larger than 1 MiB`,
    );
  });

  it('refuses /dev/zero, /dev/null and a FIFO nobody writes to at once, without blocking', async () => {
    for (const path of ['/dev/zero', '/dev/null', fifo]) {
      assert.equal(await within(1000, () => outcome(readNamedFile(path))), 'not a regular file', path);
    }
    assert.equal(
      await within(1000, () => outcome(requireNamedFile('/dev/zero', 'certificate-authority /dev/zero'))),
      'ConfigError: certificate-authority /dev/zero: not a regular file',
    );
  });

  it('keeps the wording of a missing file and a directory', async () => {
    assert.equal(
      await outcome(requireNamedFile(join(dir, 'nope'), 'tokenFile x')),
      'ConfigError: tokenFile x: file not found',
    );
    assert.equal(await outcome(readNamedFile(dir)), 'is a directory');
  });

  it('reads a symlink to a regular file (a CA in /etc/ssl/certs is one), refuses one to a FIFO', async () => {
    const target = join(dir, 'target.pem');
    await writeFile(target, 'pem');
    execFileSync('ln', ['-s', target, join(dir, 'link.pem')]);
    execFileSync('ln', ['-s', fifo, join(dir, 'link-fifo')]);
    assert.equal(await outcome(readNamedFile(join(dir, 'link.pem'))), '3 bytes');
    assert.equal(await within(1000, () => outcome(readNamedFile(join(dir, 'link-fifo')))), 'not a regular file');
  });
});

describe('readOptional / readRequired: a kubeconfig or configuration file', () => {
  it('reads a pipe as it comes (--kubeconfig <(cmd))', async () => {
    const piped = join(dir, 'piped');
    execFileSync('mkfifo', [piped]);
    // A writer that opens the FIFO and writes in two parts, a moment apart.
    const writer = spawn('sh', [
      '-c',
      `{ printf 'apiVersion: v1\\n'; sleep 0.2; printf 'kind: Config\\n'; } > ${piped}`,
    ]);
    const closed = new Promise((resolve) => writer.on('close', resolve));
    assert.equal(await readOptional(piped, 'a kubeconfig file'), 'apiVersion: v1\nkind: Config\n');
    await closed;
  });

  it('ends /dev/zero at 64 MiB with one line instead of reading on', async () => {
    const start = performance.now();
    assert.equal(
      await outcome(readOptional('/dev/zero', 'a kubeconfig file')),
      `ConfigError: /dev/zero: larger than ${MAX_CONFIG_FILE_BYTES / 1024 / 1024} MiB`,
    );
    assert.equal(
      await outcome(readRequired('/dev/zero', '--rules /dev/zero')),
      'ConfigError: --rules /dev/zero: larger than 64 MiB',
    );
    assert.ok(performance.now() - start < 5000);
  });

  it('refuses a regular file over 64 MiB by its size, without reading it', async () => {
    const sparse = join(dir, 'sparse');
    const handle = await open(sparse, 'w');
    await handle.truncate(MAX_CONFIG_FILE_BYTES + 1);
    await handle.close();
    assert.equal(
      await outcome(readOptional(sparse, 'a kubeconfig file')),
      `ConfigError: ${sparse}: larger than 64 MiB`,
    );
  });

  it('keeps absent and directory answers', async () => {
    assert.equal(await outcome(readOptional(join(dir, 'nope'), 'a kubeconfig file')), 'absent');
    assert.equal(
      await outcome(readOptional(dir, 'a kubeconfig file')),
      `ConfigError: ${dir}: is a directory, not a kubeconfig file`,
    );
  });
});

describe('the kubeconfig readers use it', () => {
  const ctx = (cluster: Record<string, unknown>, user: Record<string, unknown>): ResolvedContext => ({
    contextName: 'c',
    clusterName: 'k',
    userName: 'u',
    cluster: { server: 'https://k.example:6443', ...cluster },
    user,
    contextFile: '/x',
    clusterFile: '/x',
  });

  it('readiness: a FIFO or a device as CA, client certificate, key or tokenFile is a problem naming the field and path', async () => {
    const r = await within(2000, () =>
      checkContext(ctx({ 'certificate-authority': '/dev/zero' }, { 'client-certificate': fifo, 'client-key': fifo })),
    );
    assert.deepEqual(r.problems, [
      'certificate-authority /dev/zero: not a regular file',
      `client-certificate ${fifo}: not a regular file`,
      `client-key ${fifo}: not a regular file`,
    ]);
    const t = await within(2000, () => checkContext(ctx({}, { tokenFile: fifo })));
    assert.deepEqual(t.problems, [`tokenFile ${fifo}: not a regular file`]);
  });

  it("an exec plugin's cluster info (KUBERNETES_EXEC_INFO): a FIFO or /dev/zero as the CA is refused before the plugin runs", async () => {
    const marker = join(dir, 'plugin-ran');
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'sh',
      args: ['-c', `touch ${marker}`],
      interactiveMode: 'Never' as const,
      provideClusterInfo: true,
    };
    const runner = new ExecCredentialRunner({});
    for (const ca of [fifo, '/dev/zero']) {
      await within(2000, async () =>
        assert.rejects(runner.get(await approvedExec(exec), { server: 'https://k', 'certificate-authority': ca }), {
          name: 'ConfigError',
          message: `certificate-authority ${ca}: not a regular file`,
        }),
      );
    }
    assert.equal(await outcome(readNamedFile(marker)), 'file not found', 'the plugin ran');
  });

  it('creds (a CA inlined into the kubeconfig fleet writes) and workload identity (the CA of a target) refuse them too', async () => {
    await within(2000, () =>
      assert.rejects(portableCluster(ctx({ 'certificate-authority': fifo }, {})), {
        name: 'ConfigError',
        message: `certificate-authority ${fifo}: not a regular file`,
      }),
    );
    await within(2000, () =>
      assert.rejects(caPemOf({ server: 'https://k', 'certificate-authority': '/dev/zero' }, 'member-1'), {
        name: 'ConfigError',
        message: 'member-1: certificate-authority /dev/zero: not a regular file',
      }),
    );
  });

  it('describeCredentials: the same problems, never blocking', async () => {
    const d = await within(2000, () =>
      describeCredentials({ server: 'https://k', 'certificate-authority': fifo }, { tokenFile: '/dev/zero' }),
    );
    assert.deepEqual(d.problems, [
      'tokenFile /dev/zero: not a regular file',
      `certificate-authority ${fifo}: not a regular file`,
    ]);
    const c = await within(2000, () => describeCredentials({ server: 'https://k' }, { 'client-certificate': fifo }));
    assert.deepEqual(c.problems, [`client-certificate ${fifo}: not a regular file`]);
  });
});

/** "Billion laughs": 9 levels of 9 aliases (387,420,489 strings once expanded), bound to `use` (a YAML node). */
function billionLaughs(): string {
  const lines = ['laughs:', '  - &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
  for (let i = 1; i <= 8; i++)
    lines.push(
      `  - &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return lines.join('\n') + '\n';
}

describe('YAML and JSON documents: aliasing and nesting are bounded (base/yaml.ts)', () => {
  const bomb = billionLaughs();

  it('refuses billion laughs at once, with one line', () => {
    const start = performance.now();
    assert.throws(() => loadYaml(bomb, 'f.yaml'), {
      name: 'ConfigError',
      message: 'f.yaml: not valid YAML: excessive aliasing',
    });
    assert.ok(performance.now() - start < 1000, `took ${performance.now() - start} ms`);
    // In a kubeconfig: a context's namespace, a cluster's server.
    for (const [field, text] of [
      ['namespace', `${bomb}contexts: [{name: x, context: {cluster: c, namespace: *l8}}]\n`],
      ['server', `${bomb}clusters: [{name: c, cluster: {server: *l8}}]\n`],
    ]) {
      assert.throws(() => parseKubeconfig(text, '/k'), { message: '/k: not valid YAML: excessive aliasing' }, field);
    }
  });

  it('accepts what aliases add within the budget: 2,000 users sharing one exec block', () => {
    const users = Array.from({ length: 2000 }, (_, i) => `- {name: u${i}, user: {exec: *exec}}`).join('\n');
    const text = `shared:\n  exec: &exec {apiVersion: client.authentication.k8s.io/v1, command: plugin, args: [a, b, c], interactiveMode: Never, env: [{name: A, value: b}]}\nusers:\n${users}\n`;
    assert.equal(parseKubeconfig(text, '/k').users.size, 2000);
  });

  it('counts a long string aliased many times by its length', () => {
    const text = `s: &s "${'x'.repeat(100_000)}"\nl: [${Array(2000).fill('*s').join(', ')}]\n`;
    assert.throws(() => loadYaml(text, 'f'), { message: 'f: not valid YAML: excessive aliasing' });
    // Written out, the same strings are just a large document.
    const plain = `l: [${Array(20)
      .fill(`"${'x'.repeat(100_000)}"`)
      .join(', ')}]\n`;
    assert.equal((loadYaml(plain, 'f') as { l: string[] }).l.length, 20);
  });

  it('refuses nesting deeper than 100 levels: 100,000 deep in flow and block YAML, in JSON, and through aliases', () => {
    const deep = 100_000;
    assert.throws(() => loadYaml('['.repeat(deep) + ']'.repeat(deep), 'f'), {
      message: 'f: not valid YAML (line 1): nesting deeper than 100 levels',
    });
    let block = '';
    for (let i = 0; i < 200; i++) block += `${' '.repeat(i)}a:\n`;
    assert.throws(() => loadYaml(block, 'f'), {
      message: /^f: not valid YAML \(line \d+\): nesting deeper than 100 levels$/,
    });
    // The JSON fast path (JSON.parse nests as deep as the text).
    const json = `{"clusters": [{"name": "c", "cluster": {"server": "https://k", "x": ${'['.repeat(deep)}${']'.repeat(deep)}}}]}`;
    assert.throws(() => parseKubeconfig(json, '/k.json'), {
      message: '/k.json: not valid YAML: nesting deeper than 100 levels',
    });
    // Each anchor one level deeper than the last: the parser sees depth 3, a walk of the expansion sees 150.
    const chain = ['- &a0 [x]', ...Array.from({ length: 150 }, (_, i) => `- &a${i + 1} [*a${i}]`)].join('\n');
    assert.throws(() => loadYaml(chain, 'f'), { message: 'f: not valid YAML: nesting deeper than 100 levels' });
    // 100 levels are fine.
    assert.ok(loadYaml('['.repeat(100) + ']'.repeat(100), 'f'));
    assert.ok(parseKubeconfig(`{"x": ${'['.repeat(99)}${']'.repeat(99)}}`, '/k.json'));
  });

  it('loadYamlIfValid answers undefined for the same documents', () => {
    assert.equal(loadYamlIfValid(bomb), undefined);
    assert.equal(loadYamlIfValid('['.repeat(1000) + ']'.repeat(1000)), undefined);
    assert.deepEqual(loadYamlIfValid('a: [1]'), { a: [1] });
  });

  it('walks a real 2,000-context kubeconfig cheaply', () => {
    const ca = Buffer.alloc(1100, 7).toString('base64');
    const doc = { clusters: [] as unknown[], users: [] as unknown[], contexts: [] as unknown[] };
    for (let i = 0; i < 2000; i++) {
      doc.clusters.push({
        name: `c-${i}`,
        cluster: { server: `https://10.0.${i >> 8}.${i & 255}:6443`, 'certificate-authority-data': ca },
      });
      doc.users.push({ name: `u-${i}`, user: { 'client-certificate-data': ca, 'client-key-data': ca.slice(0, 300) } });
      doc.contexts.push({ name: `ctx-${i}`, context: { cluster: `c-${i}`, user: `u-${i}`, namespace: 'default' } });
    }
    const text = JSON.stringify(doc);
    checkDocumentBounds(doc, 'k', text.length);
    const start = performance.now();
    for (let i = 0; i < 10; i++) checkDocumentBounds(doc, 'k', text.length);
    // ~1-3 ms on the 2-core CI machine (the YAML parse of the same file: ~80 ms); 25 ms leaves room for a loaded one.
    assert.ok((performance.now() - start) / 10 < 25);
  });
});
