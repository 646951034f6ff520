// `fleet kubeconfig prune`'s rules (src/export/prune.ts, src/export/prune-state.ts), without a cluster: a context is
// judged over kubectl's view (every KUBECONFIG file), `unreachable` needs failures across runs for the configured
// duration and never counts one failure or a name that does not resolve, an export entry whose kubeconfig file or
// fleet configuration is gone (ENOENT) is `gone` and one whose hub could not be asked is not, the failure records are
// read as a hostile file, and applying a prune keeps CRLF line ends and a BOM. The servers here are ports nothing
// listens on and names that do not resolve; what answers is tested on the real control plane
// (test/e2e/hostile-prune-merge.test.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { FLEET_EXPORT_EXTENSION } from '../../src/kubeconfig/export-marker.js';
import { type PruneInputs, applyPrune, planPrune } from '../../src/export/prune.js';
import { FailureRecords, decodeFailureRecords, pruneStatePath } from '../../src/export/prune-state.js';
import { closedPort } from '../support/net.js';

const tmp = mkdtempSync(join(tmpdir(), 'fleet-prune-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const file = (text: string): string => {
  const path = join(tmp, `config-${++n}`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};

const DAY = 24 * 3600 * 1000;
const connector = new Connector({ timeoutMs: 5000, exec: new ExecCredentialRunner() });
const inputs = (path: string, extra: Partial<PruneInputs> = {}): PruneInputs => ({
  file: path,
  connector,
  exec: new ExecCredentialRunner(),
  concurrency: 4,
  ...extra,
});
const byContext = (items: Array<{ context: string }>) =>
  Object.fromEntries(items.map((i) => [i.context, i])) as unknown as Record<
    string,
    { action: string; reason?: string; message: string }
  >;

let refused: string;
before(async () => {
  refused = `https://127.0.0.1:${await closedPort()}`;
});

describe('prune judges over every KUBECONFIG file', () => {
  it('a context whose cluster and user are defined in the second file is not gone, and what others use stays', async () => {
    const first = file(
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- {name: shared, cluster: {server: "${refused}"}}`,
        'contexts:',
        '- {name: elsewhere, context: {cluster: in-second, user: in-second}}',
        '- {name: nowhere, context: {cluster: in-no-file}}',
        '',
      ].join('\n'),
    );
    const second = file(
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- {name: in-second, cluster: {server: "${refused}"}}`,
        'users:',
        '- {name: in-second, user: {token: t}}',
        'contexts:',
        '- {name: uses-first, context: {cluster: shared}}',
        '',
      ].join('\n'),
    );
    const plan = await planPrune(
      inputs(first, { kubeconfigPaths: [first, join(tmp, 'missing'), second], failures: FailureRecords.empty() }),
    );
    const items = byContext(plan.items);
    assert.equal(items.elsewhere.action, 'keep', items.elsewhere.message);
    assert.match(
      items.elsewhere.message,
      /connection refused; first failure recorded, removed once it has failed for 24h/,
    );
    assert.deepEqual(
      [items.nowhere.action, items.nowhere.reason, items.nowhere.message],
      ['remove', 'gone', `cluster "in-no-file" is not defined in ${first} or the other KUBECONFIG files`],
    );
    // "shared" is named by no context of the first file, and by one of the second: not an orphan in either way.
    assert.deepEqual(plan.remove, { contexts: ['nowhere'], clusters: [], users: [] });
  });

  it('a cluster of the file that only a context of another KUBECONFIG file uses is not removed with the pruned context', async () => {
    const first = file(
      `clusters:\n- {name: both, cluster: {server: "${refused}"}}\ncontexts:\n- {name: dead, context: {cluster: both, user: u}}\nusers:\n- {name: u, user: {token: t}}\n`,
    );
    const second = file(`contexts:\n- {name: other, context: {cluster: both}}\n`);
    const records = FailureRecords.empty();
    records.failed(refused, Date.now() - 2 * DAY, 'earlier');
    const plan = await planPrune(inputs(first, { kubeconfigPaths: [second, first], failures: records }));
    assert.deepEqual(plan.remove, { contexts: ['dead'], clusters: [], users: ['u'] });
  });
});

describe('unreachable only across runs, for the configured duration', () => {
  const ctxFile = (server: string) =>
    file(`clusters:\n- {name: c, cluster: {server: "${server}"}}\ncontexts:\n- {name: x, context: {cluster: c}}\n`);

  it('one failure is recorded and removes nothing; a record older than --unreachable-for removes; a younger one does not', async () => {
    const path = ctxFile(refused);
    const records = FailureRecords.empty();
    const t0 = Date.now();
    const once = await planPrune(inputs(path, { failures: records, now: () => t0 }));
    assert.deepEqual([once.items[0].action, once.remove.contexts], ['keep', []]);
    assert.deepEqual(records.get(refused), {
      since: new Date(t0).toISOString(),
      last: new Date(t0).toISOString(),
      runs: 1,
      error: `${refused}: connection refused`,
    });

    // A second run an hour later: still failing, but not for a day.
    const hour = await planPrune(inputs(path, { failures: records, now: () => t0 + 3600_000 }));
    assert.equal(hour.items[0].action, 'keep');
    assert.match(hour.items[0].message, /failing since .* \(2 runs\), removed once it has failed for 24h/);
    assert.equal(records.get(refused)!.runs, 2);

    // A day after the first failure: removed, saying since when.
    const day = await planPrune(inputs(path, { failures: records, now: () => t0 + DAY }));
    assert.deepEqual([day.items[0].action, day.items[0].reason], ['remove', 'unreachable']);
    assert.match(
      day.items[0].message,
      new RegExp(
        `connection refused; failing since ${new Date(t0).toISOString()} \\(3 runs\\), longer than --unreachable-for 24h$`,
      ),
    );

    // The duration is the user's: 7d keeps what 24h removed.
    const week = await planPrune(
      inputs(path, { failures: records, now: () => t0 + DAY + 1, unreachableForMs: 7 * DAY }),
    );
    assert.equal(week.items[0].action, 'keep');
  });

  it('never after one failure, even with --unreachable-for 0s', async () => {
    const records = FailureRecords.empty();
    const plan = await planPrune(inputs(ctxFile(refused), { failures: records, unreachableForMs: 0 }));
    assert.equal(plan.items[0].action, 'keep');
    assert.equal(records.get(refused)!.runs, 1);
  });

  it('a name that does not resolve (off the VPN) is kept and not recorded, however old its record', async () => {
    const server = 'https://nosuch.invalid:6443';
    const records = FailureRecords.empty();
    records.failed(server, Date.now() - 30 * DAY, 'earlier');
    const plan = await planPrune(inputs(ctxFile(server), { failures: records }));
    assert.equal(plan.items[0].action, 'keep');
    assert.match(
      plan.items[0].message,
      /^https:\/\/nosuch\.invalid:6443: .*: a name that does not resolve \(off the VPN\?\) is not counted as a failure$/,
    );
    assert.equal(records.get(server)!.runs, 1, 'a DNS failure is not a run of the streak');
  });
});

describe('export entries whose source is gone', () => {
  const mark = (cluster: string) => [{ name: FLEET_EXPORT_EXTENSION, extension: { cluster, provider: 'p' } }];
  /** Export entries as `kubeconfig export` writes them (marker, exec args), one cluster, user and context each. */
  const entries = (list: Array<[string, string[]]>) => {
    const section = (key: string, body: (name: string, args: string[]) => string) => [
      `${key}s:`,
      ...list.map(([name, args]) => `- {name: ${name}, ${key}: ${body(name, args)}}`),
    ];
    return [
      ...section('cluster', (name) => `{server: "${refused}", extensions: ${JSON.stringify(mark(name))}}`),
      ...section(
        'user',
        (name, args) =>
          `{exec: {apiVersion: client.authentication.k8s.io/v1, command: fleet, args: ${JSON.stringify(['kubeconfig', 'credential', ...args])}, interactiveMode: Never}, extensions: ${JSON.stringify(mark(name))}}`,
      ),
      ...section('context', (name) => `{cluster: ${name}, user: ${name}, extensions: ${JSON.stringify(mark(name))}}`),
      '',
    ].join('\n');
  };
  const entry = (name: string, args: string[]) => entries([[name, args]]);

  it('a fleet entry or an exec user that may not run is judged by /version and recorded like any other context', async () => {
    const there = file('apiVersion: v1\n');
    const text = entries([['fleet-entry', ['--cluster', `${there}+ctx`, '--provider', 'p', '--kubeconfig', there]]]);
    const path = file(
      text
        .replace(
          'users:\n',
          'users:\n- {name: plugin, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/not-allowed, interactiveMode: Never}}}\n',
        )
        .replace(/contexts:\n/, 'contexts:\n- {name: plugin, context: {cluster: fleet-entry, user: plugin}}\n'),
    );
    const once = FailureRecords.empty();
    const first = byContext((await planPrune(inputs(path, { failures: once }))).items);
    for (const name of ['fleet-entry', 'plugin']) assert.equal(first[name].action, 'keep', first[name].message);
    assert.match(
      first['fleet-entry'].message,
      /connection refused; not checked against its provider \(no provider in this run\); first failure recorded/,
    );
    assert.equal(once.get(refused)!.runs, 1);
    const old = FailureRecords.empty();
    old.failed(refused, Date.now() - 2 * DAY, 'earlier');
    const plan = await planPrune(inputs(path, { failures: old }));
    assert.deepEqual(plan.remove.contexts.sort(), ['fleet-entry', 'plugin']);
    assert.ok(plan.items.every((i) => i.reason === 'unreachable'));
  });

  it('the kubeconfig file it was exported from is gone (creds revoke deleted it): gone, with no provider asked', async () => {
    const revoked = join(tmp, 'revoked.kubeconfig');
    const path = file(entry('rev', ['--cluster', `${revoked}+ctx`, '--provider', 'p', '--kubeconfig', revoked]));
    const plan = await planPrune(inputs(path, { failures: FailureRecords.empty() }));
    assert.deepEqual(
      [plan.items[0].action, plan.items[0].reason, plan.items[0].message],
      ['remove', 'gone', `its kubeconfig file ${revoked} no longer exists`],
    );
    assert.deepEqual(plan.remove, { contexts: ['rev'], clusters: ['rev'], users: ['rev'] });
  });

  it('the fleet configuration it names is gone: gone', async () => {
    const config = join(tmp, 'gone-fleet.yaml');
    const plan = await planPrune(
      inputs(file(entry('cfg', ['--cluster', 'c', '--provider', 'p', '--fleet-config', config])), {
        failures: FailureRecords.empty(),
      }),
    );
    assert.deepEqual(
      [plan.items[0].reason, plan.items[0].message],
      ['gone', `the fleet configuration it was exported with (${config}) no longer exists`],
    );
  });

  it('a file that is there, unreadable, or a hub whose kubeconfig is gone (the hub could not be asked): kept', async () => {
    const there = file('apiVersion: v1\n');
    const locked = join(tmp, 'locked-dir');
    mkdirSync(locked);
    const hidden = join(locked, 'kubeconfig');
    writeFileSync(hidden, '');
    chmodSync(locked, 0o000);
    try {
      const hubGone = join(tmp, 'hub-gone.kubeconfig');
      const path = file(
        entries([
          ['present', ['--cluster', `${there}+ctx`, '--provider', 'p', '--kubeconfig', there]],
          ['hub', ['--cluster', 'ns/s', '--provider', 'p', '--kubeconfig', hubGone, '--context', 'hub']],
          ['eacces', ['--cluster', `${hidden}+ctx`, '--provider', 'p', '--kubeconfig', hidden]],
        ]),
      );
      const plan = await planPrune(inputs(path, { failures: FailureRecords.empty() }));
      const items = byContext(plan.items);
      for (const name of ['present', 'hub', 'eacces'])
        assert.equal(items[name].action, 'keep', `${name}: ${items[name].message}`);
    } finally {
      chmodSync(locked, 0o700);
    }
  });
});

describe('the failure records: fleet state, read as a hostile file', () => {
  it('lives under $XDG_STATE_HOME/fleet (else ~/.local/state/fleet); a relative XDG_STATE_HOME is ignored', () => {
    assert.equal(pruneStatePath({ XDG_STATE_HOME: '/s', HOME: '/h' }), '/s/fleet/prune-failures.json');
    assert.equal(pruneStatePath({ XDG_STATE_HOME: 'rel', HOME: '/h' }), '/h/.local/state/fleet/prune-failures.json');
  });

  it('is written 0600 in a 0700 directory, atomically, and read back the same', async () => {
    const path = join(tmp, 'state', 'fleet', 'prune-failures.json');
    const records = await FailureRecords.load(path);
    records.failed('https://a:6443', Date.UTC(2026, 0, 1), 'a: connection refused');
    records.failed('https://b:6443', Date.UTC(2026, 0, 1), 'b: no answer');
    records.reached('https://b:6443');
    await records.save();
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(tmp, 'state', 'fleet')).mode & 0o777, 0o700);
    const again = await FailureRecords.load(path);
    assert.equal(again.ignored, undefined);
    assert.deepEqual(again.get('https://a:6443'), {
      since: '2026-01-01T00:00:00.000Z',
      last: '2026-01-01T00:00:00.000Z',
      runs: 1,
      error: 'a: connection refused',
    });
    assert.equal(again.get('https://b:6443'), undefined);
  });

  it('a symlink, a FIFO, a directory, an oversized file or any other shape is no record (one reason), and nothing blocks', async () => {
    const dir = join(tmp, 'hostile');
    mkdirSync(dir);
    const good = JSON.stringify({
      v: 1,
      servers: { 'https://a': { since: '2026-01-01T00:00:00Z', last: '2026-01-01T00:00:00Z', runs: 3, error: 'x' } },
    });
    const target = join(dir, 'target.json');
    writeFileSync(target, good);
    symlinkSync(target, join(dir, 'link.json'));
    execFileSync('mkfifo', [join(dir, 'fifo.json')]);
    mkdirSync(join(dir, 'dir.json'));
    writeFileSync(join(dir, 'big.json'), `{"v":1,"servers":{},"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    const cases: Record<string, RegExp> = {
      'link.json': /not a regular file/,
      'fifo.json': /not a regular file/,
      'dir.json': /not a regular file/,
      'big.json': /larger than 1 MiB/,
    };
    for (const [name, why] of Object.entries(cases)) {
      const r = await FailureRecords.load(join(dir, name));
      assert.match(r.ignored ?? '', why, name);
      assert.equal(r.get('https://a'), undefined, name);
    }
    assert.equal((await FailureRecords.load(target)).get('https://a')?.runs, 3);
    assert.ok(lstatSync(join(dir, 'link.json')).isSymbolicLink());
  });

  it('decodes only the exact shape fleet writes', () => {
    const rec = { since: '2026-01-01T00:00:00Z', last: '2026-01-02T00:00:00Z', runs: 2, error: 'e' };
    assert.equal(decodeFailureRecords(JSON.stringify({ v: 1, servers: { s: rec } }))?.get('s')?.runs, 2);
    for (const bad of [
      '',
      'null',
      '[]',
      '{"v":1,"servers":{}} trailing',
      JSON.stringify({ v: 2, servers: {} }),
      JSON.stringify({ v: 1, servers: {}, extra: 1 }),
      JSON.stringify({ V: 1, servers: {} }),
      JSON.stringify({ v: 1, servers: { s: { ...rec, runs: 0 } } }),
      JSON.stringify({ v: 1, servers: { s: { ...rec, runs: 1.5 } } }),
      JSON.stringify({ v: 1, servers: { s: { ...rec, since: 'yesterday' } } }),
      JSON.stringify({ v: 1, servers: { s: { ...rec, Since: rec.since } } }),
      JSON.stringify({ v: 1, servers: { s: { ...rec, error: 1 } } }),
      JSON.stringify({ v: 1, servers: { s: null } }),
    ]) {
      assert.equal(decodeFailureRecords(bad), undefined, bad);
    }
  });
});

describe('applying a prune keeps the file as written', () => {
  it('a CRLF file stays CRLF, every line, and the backup is byte-exact', async () => {
    const lines = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: gone-cluster',
      '  cluster:',
      `    server: "${refused}"`,
      '- name: kept',
      `  cluster: {server: "${refused}"}`,
      'contexts:',
      '- name: gone',
      '  context:',
      '    cluster: missing',
      '- {name: kept, context: {cluster: kept}}',
      '- name: gone2',
      '  context: {cluster: also-missing, user: only-gone}',
      'users:',
      '- name: only-gone',
      '  user: {token: t}',
      '# the end',
      '',
    ];
    const text = lines.join('\r\n');
    const path = file(text);
    const plan = await planPrune(inputs(path, { failures: FailureRecords.empty() }));
    assert.deepEqual(plan.remove, { contexts: ['gone', 'gone2'], clusters: [], users: ['only-gone'] });
    const { backup } = await applyPrune(plan);
    const out = readFileSync(path, 'utf8');
    assert.equal(readFileSync(backup, 'utf8'), text);
    assert.doesNotMatch(out, /(^|[^\r])\n/, 'a line ends in a bare LF');
    assert.equal(
      out,
      lines
        .filter((_, i) => ![9, 10, 11, 13, 14, 16, 17].includes(i))
        .join('\r\n')
        .replace('users:\r\n', 'users:\r\n'),
    );
  });

  it('a file that starts with a UTF-8 BOM is judged and pruned, and keeps its BOM', async () => {
    const text = `\uFEFFapiVersion: v1\ncontexts:\n- {name: gone, context: {cluster: nowhere}}\n- {name: kept, context: {cluster: c}}\nclusters:\n- {name: c, cluster: {server: "${refused}"}}\n`;
    const path = file(text);
    const plan = await planPrune(inputs(path, { failures: FailureRecords.empty() }));
    assert.deepEqual(plan.remove.contexts, ['gone']);
    await applyPrune(plan);
    assert.equal(readFileSync(path, 'utf8'), text.replace('- {name: gone, context: {cluster: nowhere}}\n', ''));
  });
});
