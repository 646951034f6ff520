// Issue 41's papercuts of the first minute that need no cluster, each at the command line with HOME empty.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';

import { flagSuggestion } from '../../src/cli/exit-policy.js';
import { runFleet } from '../support/cli.js';

describe('a mistyped flag gets the closest flag, as a mistyped command gets the closest command', () => {
  it('--ouput: exit 2, one line naming it and suggesting --output (a base flag); -o json puts the same line in the document', async () => {
    const res = await runFleet(['clusters', 'list', '--ouput', 'json']);
    assert.deepEqual(
      [res.code, res.stderr, res.stdout],
      [2, 'error: Nonexistent flag: --ouput; did you mean --output?\n', ''],
    );
    const json = await runFleet(['auth', 'whoami', '--contxt', 'x', '-o', 'json']);
    assert.equal(json.code, 2);
    assert.equal(JSON.parse(json.stdout).error.message, 'Nonexistent flag: --contxt; did you mean --context?');
  });

  it("each of several typos gets its own suggestion (a command's own flag too); a name close to nothing gets none", async () => {
    const two = await runFleet(['clusters', 'list', '--ouput=json', '--colr']);
    assert.equal(two.stderr, 'error: Nonexistent flags: --ouput=json, --colr; did you mean --output, --color?\n');
    const own = await runFleet(['creds', 'generate', '--nmespace', 'x']);
    assert.equal(own.stderr, 'error: Nonexistent flag: --nmespace; did you mean --namespace?\n');
    const far = await runFleet(['clusters', 'list', '--zzzzzz']);
    assert.deepEqual([far.code, far.stderr], [2, 'error: Nonexistent flag: --zzzzzz\n']);
  });

  it('the rule alone: only oclif parse errors with flags, the closest by edit distance within the bound, never the flag itself', () => {
    const oclif = { exit: 2 };
    assert.equal(flagSuggestion({ oclif, flags: ['--ouput'] }, ['output', 'color']), '; did you mean --output?');
    assert.equal(flagSuggestion({ oclif, flags: ['--output'] }, ['output']), '');
    assert.equal(flagSuggestion({ flags: ['--ouput'] }, ['output']), '', 'not an oclif parse error');
    assert.equal(flagSuggestion({ oclif, flags: ['-x'] }, ['x']), '', 'short flags are not guessed');
    assert.equal(flagSuggestion({ oclif, flags: ['--ab'] }, ['xyzw']), '');
  });
});

describe('two flags that exclude each other: one sentence', () => {
  it('--role view --cluster-role view says it once (oclif reports it from each side), exit 2, before any cluster', async () => {
    const res = await runFleet([
      'creds',
      'generate',
      '--cluster',
      'x',
      '--namespace',
      'default',
      '--role',
      'view',
      '--cluster-role',
      'view',
      '--dry-run',
    ]);
    assert.deepEqual(
      [res.code, res.stderr],
      [2, 'error: --role and --cluster-role cannot be used together; use one of them\n'],
    );
  });
});

describe('plural forms agree: "1 cluster", "3 clusters", never "cluster(s)"', () => {
  it('counted() and every message of src/ (no "(s)" after a noun fleet counts)', async () => {
    const { counted } = await import('../../src/base/text.js');
    assert.deepEqual(
      [counted(0, 'cluster'), counted(1, 'cluster'), counted(2, 'warning check'), counted(2, 'entry', 'entries')],
      ['0 clusters', '1 cluster', '2 warning checks', '2 entries'],
    );
    const { readFileSync, readdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const src = join(import.meta.dirname, '..', '..', 'src');
    const offenders = (readdirSync(src, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(src, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ at: `src/${f}:${i + 1}`, line }))
          .filter(
            ({ line }) =>
              !/^\s*(\/\/|\*)/.test(line) &&
              /\b(cluster|check|object|group|secret|file|context|credential|namespace|rule|token|plugin|error|warning|item|role|binding|user|server)\(s\)/i.test(
                line,
              ),
          ),
      )
      .map(({ at }) => at);
    assert.deepEqual(offenders, []);
  });
});

describe('--rules: a verb one typo from a known one is refused before anything is made', () => {
  it('"lst" names the file, the line, the rule and "list"; exit 2 before any cluster; a custom verb and the known ones pass', async () => {
    const { parseRules } = await import('../../src/creds/rules-file.js');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const file = join(mkdtempSync(join(tmpdir(), 'rules-')), 'rules.yaml');
    writeFileSync(file, "- apiGroups: ['']\n  resources: [pods]\n  verbs: [get, lst]\n");
    // A cluster on a port nothing listens on: the rules are refused before it is asked anything.
    const kubeconfig = join(file, '..', 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: x, user: u}}]\n',
    );
    const res = await runFleet([
      'creds',
      'generate',
      '--kubeconfig',
      kubeconfig,
      '--cluster',
      'x',
      '--namespace',
      'default',
      '--rules',
      file,
      '--service-account',
      'default/ci',
      '--out',
      join(file, '..', 'out.kubeconfig'),
      '--dry-run',
    ]);
    assert.deepEqual(
      [res.code, res.stderr],
      [2, `error: ${file}:1: rules[0]: "lst" is not a verb the API server knows; did you mean "list"?\n`],
    );
    assert.throws(
      () => parseRules('- nonResourceURLs: [/healthz]\n  verbs: [gte]\n', 'r.yaml'),
      /r\.yaml:1: rules\[0\]: "gte" is not a verb the API server knows; did you mean "get"\?/,
    );
    assert.throws(
      () => parseRules("- apiGroups: ['']\n  resources: [pods]\n  verbs: [Get]\n", 'r.yaml'),
      /"Get" is not a verb.*did you mean "get"/,
    );
    const ok = parseRules(
      "- apiGroups: [metrics.example]\n  resources: [things]\n  verbs: [get, list, watch, proxy, escalate, '*']\n",
      'r.yaml',
    );
    assert.deepEqual(ok[0].verbs, ['get', 'list', 'watch', 'proxy', 'escalate', '*']);
  });
});

describe("a context whose user is missing still shows its cluster's server", () => {
  it("clusters list: SERVER is the cluster's (not <none>), READY False with the reason; a missing cluster stays <none>", async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const file = join(mkdtempSync(join(tmpdir(), 'missing-user-')), 'config');
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: []
contexts: [{name: x, context: {cluster: c, user: nobody}}, {name: y, context: {cluster: gone, user: nobody}}]
`,
    );
    const res = await runFleet(['clusters', 'list', '--kubeconfig', file, '-o', 'json'], { env: { KUBECONFIG: '' } });
    assert.equal(res.code, 0, res.stderr);
    const items = JSON.parse(res.stdout).items as Array<{
      name: string;
      server?: string;
      ready: boolean;
      reason: string;
    }>;
    const x = items.find((i) => i.name.endsWith('+x'))!;
    assert.deepEqual([x.server, x.ready], ['https://10.0.0.1:6443', false]);
    assert.match(x.reason, /refers to user "nobody", which is not defined/);
    assert.equal(items.find((i) => i.name.endsWith('+y'))!.server, undefined);
    const table = await runFleet(['clusters', 'list', '--kubeconfig', file], { env: { KUBECONFIG: '' } });
    // NAME is the context (issue 41's short names): the row of x.
    assert.match(table.stdout, /^x\s+file\s+https:\/\/10\.0\.0\.1:6443\s/m);
  });
});

describe('fleet on a Node older than it supports says so', () => {
  it("the machine's Node 20 (README: the machine's node may be 20): one warning line naming both versions; the output itself unchanged", async () => {
    const { execFileSync } = await import('node:child_process');
    const node20 = execFileSync('sh', ['-c', 'PATH=/usr/local/bin:/usr/bin:/bin command -v node'], {
      encoding: 'utf8',
    }).trim();
    const version = execFileSync(node20, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
    const major = Number(version.slice(1).split('.')[0]);
    assert.ok(major < 22, `this test needs the machine's old Node (found ${node20}, ${major})`);
    const { join } = await import('node:path');
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
    const old = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(
        node20,
        [bin, '--version'],
        { env: { ...process.env, FLEET_NODE_VERSION_OK: '' } },
        (_, stdout, stderr) => resolve({ stdout, stderr }),
      );
    });
    assert.match(
      old.stdout,
      new RegExp(`^fleet/\\d+\\.\\d+\\.\\d+ linux-\\w+ node-${version.replaceAll('.', '\\.')}\n$`),
    );
    assert.equal(
      old.stderr,
      `warning: fleet needs Node.js 22 or newer; this is ${version} (${node20}), on which it is not tested: install Node 22+, or use fleet's single executable, which carries its own Node\n`,
    );
    const quiet = await new Promise<string>((resolve) => {
      execFile(node20, [bin, '--version'], { env: { ...process.env, FLEET_NODE_VERSION_OK: '1' } }, (_, __, stderr) =>
        resolve(stderr),
      );
    });
    assert.equal(quiet, '');
    const current = await runFleet(['--version']);
    assert.equal(current.stderr, '', 'no word on a supported Node');
  });
});

describe('kubeconfig export --merge-into: Ctrl-C is decided at the rename, never after the summary', () => {
  // Real SIGINTs at known moments (FLEET_TEST_PAUSE_AT, base/test-pause.ts): the temp file written but not renamed, and
  // the file renamed. No cluster is contacted by an export of a kubeconfig file.
  async function interruptedExport(step: string, extra: string[] = []) {
    const { spawn } = await import('node:child_process');
    const { existsSync, mkdtempSync, readFileSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { FLEET_BIN, fleetTestEnv } = await import('../support/cli.js');
    const dir = mkdtempSync(join(tmpdir(), 'export-sigint-'));
    const source = join(dir, 'source');
    writeFileSync(
      source,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: one, context: {cluster: c, user: u}}]\n',
    );
    const target = join(dir, 'kube', 'config');
    const pause = join(dir, 'pause');
    const child = spawn(
      process.execPath,
      [FLEET_BIN, 'kubeconfig', 'export', '--all', '--kubeconfig', source, '--merge-into', target, ...extra],
      {
        cwd: dir,
        env: fleetTestEnv({ FLEET_TEST_PAUSE_AT: step, FLEET_TEST_PAUSE_FILE: pause }),
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const deadline = Date.now() + 30_000;
    while (!(existsSync(pause) && readFileSync(pause, 'utf8') === step)) {
      if (child.exitCode !== null || Date.now() > deadline)
        assert.fail(`fleet did not pause at ${step} (exit ${child.exitCode}): ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    const code = await done;
    const { readdirSync } = await import('node:fs');
    return {
      code,
      stdout,
      stderr,
      target,
      dirExists: existsSync(join(dir, 'kube')),
      left: existsSync(join(dir, 'kube')) ? readdirSync(join(dir, 'kube')) : [],
    };
  }

  it('SIGINT with the file not yet renamed: exit 130, no file, no temp file or lock, no summary', async () => {
    const r = await interruptedExport('before-write');
    assert.equal(r.code, 130, r.stderr);
    assert.deepEqual(r.left, []);
    assert.equal(r.dirExists, false, 'the directory the run made is removed with nothing written');
    assert.equal(r.stdout, '');
    assert.doesNotMatch(r.stderr, /added|merge-into .*:/);
    assert.match(r.stderr, /interrupted \(SIGINT\)/);
  });

  it('SIGINT with the file renamed: exit 0, the file merged, the summary and one warning that the signal came after the write', async () => {
    const r = await interruptedExport('after-write');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.left, ['config']);
    const { readFileSync } = await import('node:fs');
    assert.match(readFileSync(r.target, 'utf8'), /fleet\.dev\/export/);
    assert.match(r.stderr, /created the directory .* and a new file with fleet's 3 entries/);
    assert.match(
      r.stderr,
      new RegExp(
        `warning: SIGINT arrived after ${r.target.replaceAll('/', '\\/')} was written: the export is complete and kept\n`,
      ),
    );
    assert.doesNotMatch(r.stderr, /error:/);
    const json = await interruptedExport('after-write', ['-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.match(JSON.parse(json.stdout).warnings[0], /^SIGINT arrived after .* was written/);
  });
});

describe('auth plugins takes the selection flags every other auth command takes', () => {
  it('--all, -A, -c (full and short name) and -l select as elsewhere; --all with -c is the usual usage line', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const file = join(mkdtempSync(join(tmpdir(), 'plugins-select-')), 'config');
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users:
- {name: u1, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: kubelogin, interactiveMode: Never}}}
- {name: u2, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}}}
contexts: [{name: one, context: {cluster: c, user: u1}}, {name: two, context: {cluster: c, user: u2}}]
current-context: one
`,
    );
    const commands = async (...args: string[]) => {
      const res = await runFleet(['auth', 'plugins', '--kubeconfig', file, '-o', 'json', ...args]);
      assert.equal(res.code, 0, res.stderr);
      return (res.json().items as Array<{ command: string }>).map((i) => i.command).sort();
    };
    assert.deepEqual(await commands('--all'), ['aws', 'kubelogin']);
    assert.deepEqual(await commands('-A'), ['aws', 'kubelogin']);
    assert.deepEqual(await commands('-c', 'two'), ['aws']);
    assert.deepEqual(await commands('--cluster', `${file}+one`, '-c', 'two'), ['aws', 'kubelogin']);
    assert.deepEqual(await commands('-l', 'fleet.dev/context=one'), ['kubelogin']);
    const both = await runFleet(['auth', 'plugins', '--kubeconfig', file, '--all', '-c', 'two']);
    assert.deepEqual([both.code, both.stderr], [2, 'error: --all and --cluster cannot be used together\n']);
  });
});

describe('fleet kubeconfig credential run by hand says what it is', () => {
  it('no flags: exit 2, one line naming the missing --cluster and what the command is (the exec plugin export writes, run by kubectl)', async () => {
    const expected =
      'error: --cluster is missing: fleet kubeconfig credential is the exec credential plugin that fleet kubeconfig export writes into kubeconfig entries, run by kubectl with the arguments written there, not by hand\n';
    for (const env of [
      {},
      { KUBERNETES_EXEC_INFO: '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{}}' },
    ]) {
      const res = await runFleet(['kubeconfig', 'credential'], { env });
      assert.deepEqual([res.code, res.stderr, res.stdout], [2, expected, '']);
    }
  });
});

describe("kubeconfig export --merge-into: the summary tells fleet's entries from yours, and says what it created", () => {
  it("a path whose directory does not exist (~/.kub/config): created, and said in one line; fleet's earlier exports are counted as fleet's", async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'merge-summary-'));
    const source = join(dir, 'source');
    writeFileSync(
      source,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: u}}]\n',
    );
    const typo = join(dir, '.kub', 'config');
    const merge = (cluster: string, into: string, ...extra: string[]) =>
      runFleet(['kubeconfig', 'export', '-c', cluster, '--kubeconfig', source, '--merge-into', into, ...extra]);
    const dry = await merge('one', typo, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(
      dry.stderr,
      `--merge-into ${typo}: would create the directory ${join(dir, '.kub')} and a new file with fleet's 3 entries; current-context would be set to file/one\n`,
    );
    const made = await merge('one', typo);
    assert.equal(
      made.stderr,
      `--merge-into ${typo}: created the directory ${join(dir, '.kub')} and a new file with fleet's 3 entries; current-context set to file/one\n`,
    );

    // A kubeconfig with entries of its own (one cluster, user and context), then two exports of different clusters.
    const own = join(dir, 'config');
    writeFileSync(
      own,
      'apiVersion: v1\nkind: Config\nclusters: [{name: mine, cluster: {server: "https://127.0.0.1:2"}}]\nusers: [{name: mine, user: {token: t}}]\ncontexts: [{name: mine, context: {cluster: mine, user: mine}}]\ncurrent-context: mine\n',
    );
    assert.equal(
      (await merge('one', own)).stderr,
      `--merge-into ${own}: fleet's entries 3 added, 0 updated, 0 unchanged; 3 entries of your own left as they are\n`,
    );
    const second = await merge('two', own);
    assert.equal(
      second.stderr,
      `--merge-into ${own}: fleet's entries 3 added, 0 updated, 0 unchanged, 3 of other exports left as they are; 3 entries of your own left as they are\n`,
    );
    const again = await merge('two', own, '-o', 'json');
    const plan = again.json().merge;
    assert.deepEqual(
      [plan.unchanged.length, plan.keptFleet.length, plan.keptOwn.length, plan.kept.length],
      [3, 3, 3, 6],
    );
    assert.deepEqual(
      plan.keptOwn.map((e: { kind: string; name: string }) => `${e.kind}/${e.name}`),
      ['cluster/mine', 'user/mine', 'context/mine'],
    );
    assert.equal(
      (await merge('two', own)).stderr,
      `--merge-into ${own}: already up to date (3 of fleet's entries, 3 of other exports left as they are; 3 entries of your own left as they are)\n`,
    );
  });
});

describe('kubeconfig credential of an exported context whose source is gone: what is gone and what to do, once per parent', () => {
  it('its context removed from the file, then the file removed: one line each naming it and prune/export; the same parent again: exit 1 silently', async () => {
    const { execFile } = await import('node:child_process');
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const yaml = (await import('js-yaml')).default;
    const { FLEET_BIN, fleetTestEnv } = await import('../support/cli.js');
    const dir = mkdtempSync(join(tmpdir(), 'credential-gone-'));
    const source = join(dir, 'source');
    const text =
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: u}}]\n';
    writeFileSync(source, text);
    const out = join(dir, 'exported');
    const exp = await runFleet([
      'kubeconfig',
      'export',
      '-c',
      'two',
      '--kubeconfig',
      source,
      '--out',
      out,
      '--command',
      FLEET_BIN,
      '--credential-reader',
      'none',
    ]);
    assert.equal(exp.code, 0, exp.stderr);
    const doc = yaml.load(readFileSync(out, 'utf8')) as any;
    const args = doc.users[0].user.exec.args as string[];
    const info = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://127.0.0.1:1' } },
    });
    const q = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
    const once = [process.execPath, FLEET_BIN, ...args].map(q).join(' ');
    const twice = () =>
      new Promise<{ stdout: string; stderr: string }>((resolve) => {
        execFile(
          'sh',
          ['-c', `${once}; echo "first $?"; ${once}; echo "second $?"`],
          { env: fleetTestEnv({ KUBERNETES_EXEC_INFO: info, XDG_CACHE_HOME: join(dir, 'cache') }) },
          (_e, stdout, stderr) => resolve({ stdout, stderr }),
        );
      });
    const advice = 'fleet kubeconfig prune removes this context, fleet kubeconfig export makes it again';
    writeFileSync(source, text.replace('name: two', 'name: three'));
    assert.deepEqual(await twice(), {
      stdout: 'first 1\nsecond 1\n',
      stderr: `error: ${source}+two: ${source} no longer has its context (removed from the file); ${advice}\n`,
    });
    rmSync(source);
    // Another parent process (a new sh): said again, once.
    assert.deepEqual(await twice(), {
      stdout: 'first 1\nsecond 1\n',
      stderr: `error: ${source}+two: its kubeconfig file ${source} no longer exists (revoked by fleet creds revoke, or removed); ${advice}\n`,
    });
  });
});
