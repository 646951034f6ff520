// Issue 46, item 6: `fleet kubeconfig credential` run by a client that sets no KUBERNETES_EXEC_INFO
// (@kubernetes/client-node, fabric8): the destination is the cluster every context of the client's default kubeconfig
// files (KUBECONFIG, else ~/.kube/config) that runs this very entry names, checked against the provider as kubectl's
// word is. Each case runs the real CLI over an exported file; every refusal is one line, exit 2, no token on any
// stream and no cache entry written.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { entryFlags } from '../../src/export/exec-view.js';

const TOKEN = 'view-token-0123456789abcdef';
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nnot-a-real-ca\n-----END CERTIFICATE-----\n');

/** A user's kubeconfig with a token for https://127.0.0.1:9, exported with --all into out.yaml. */
async function exported() {
  const d = mkdtempSync(join(tmpdir(), 'fleet-exec-view-'));
  const kc = join(d, 'kc.yaml');
  writeFileSync(
    kc,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'a', cluster: { server: 'https://127.0.0.1:9', 'certificate-authority-data': CA.toString('base64') } },
      ],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 'one', context: { cluster: 'a', user: 'u' } }],
      'current-context': 'one',
    }),
  );
  const out = join(d, 'out.yaml');
  const r = await runFleet(['kubeconfig', 'export', '--kubeconfig', kc, '--all', '--out', out], { cwd: d });
  assert.equal(r.code, 0, r.stderr);
  const doc = yaml.load(readFileSync(out, 'utf8')) as any;
  assert.equal(doc.users.length, 1);
  return { d, kc, out, doc, args: doc.users[0].user.exec.args as string[] };
}

function refusedCleanly(r: CliResult, message: RegExp, cache: string): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, message);
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.equal(r.stdout, '');
  assert.ok(!r.stderr.includes(TOKEN));
  const files = existsSync(join(cache, 'fleet/credentials')) ? readdirSync(join(cache, 'fleet/credentials')) : [];
  assert.deepEqual(files, [], 'no cache entry');
}

const given = (r: CliResult, apiVersion = 'client.authentication.k8s.io/v1') => {
  assert.equal(r.code, 0, r.stderr);
  const cred = JSON.parse(r.stdout);
  assert.equal(cred.apiVersion, apiVersion);
  assert.equal(cred.status.token, TOKEN);
  assert.ok(!r.stderr.includes(TOKEN));
};

/** out.yaml edited: `edit` changes the parsed document, written to a new file. */
function edited(d: string, doc: any, name: string, edit: (doc: any) => void): string {
  const copy = structuredClone(doc);
  edit(copy);
  const path = join(d, name);
  writeFileSync(path, yaml.dump(copy), { mode: 0o600 });
  return path;
}

describe('kubeconfig credential for a client that does not say where it connects (no KUBERNETES_EXEC_INFO)', () => {
  it('reads the exported entry from KUBECONFIG in every spelling, and from ~/.kube/config', async () => {
    const { d, out, args } = await exported();
    const cwd = mkdtempSync(join(tmpdir(), 'fleet-exec-view-cwd-'));
    const link = join(d, 'link.yaml');
    symlinkSync(out, link);
    for (const [label, kubeconfig, at] of [
      ['absolute', out, cwd],
      ['relative', relative(cwd, out), cwd],
      ['a symlink', link, cwd],
      ['a list with a missing file first', `${join(d, 'missing')}:${out}`, cwd],
    ] as const) {
      const r = await runFleet(args, {
        cwd: at,
        env: { XDG_CACHE_HOME: join(d, `cache-${label}`), KUBECONFIG: kubeconfig },
      });
      given(r);
    }
    const home = join(d, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), readFileSync(out));
    given(await runFleet(args, { env: { XDG_CACHE_HOME: join(d, 'cache-home'), HOME: home } }));
    // The entry's own apiVersion decides the answer's (client-node and fabric8 check it).
    const beta = edited(d, yaml.load(readFileSync(out, 'utf8')), 'beta.yaml', (doc) => {
      doc.users[0].user.exec.apiVersion = 'client.authentication.k8s.io/v1beta1';
    });
    given(
      await runFleet(args, { env: { XDG_CACHE_HOME: join(d, 'cache-beta'), KUBECONFIG: beta } }),
      'client.authentication.k8s.io/v1beta1',
    );
  });

  it('the same cache entry as kubectl: a credential the view fetched is what kubectl gets for that cluster', async () => {
    const { d, out, args } = await exported();
    const cache = join(d, 'cache');
    given(await runFleet(args, { env: { XDG_CACHE_HOME: cache, KUBECONFIG: out } }));
    const entries = readdirSync(join(cache, 'fleet/credentials')).filter((f) => f.endsWith('.json'));
    assert.equal(entries.length, 1);
    const info = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://127.0.0.1:9', 'certificate-authority-data': CA.toString('base64') } },
    });
    given(await runFleet(args, { env: { XDG_CACHE_HOME: cache, KUBERNETES_EXEC_INFO: info } }));
    assert.deepEqual(
      readdirSync(join(cache, 'fleet/credentials')).filter((f) => f.endsWith('.json')),
      entries,
      'one identity for both',
    );
  });

  it('a CA the view names by a file (relative to its kubeconfig) is the same CA; another CA, server, TLS name or skipped verification is refused', async () => {
    const { d, doc, args } = await exported();
    writeFileSync(join(d, 'ca.crt'), CA);
    const byFile = edited(d, doc, 'by-file.yaml', (x) => {
      delete x.clusters[0].cluster['certificate-authority-data'];
      x.clusters[0].cluster['certificate-authority'] = 'ca.crt';
    });
    given(await runFleet(args, { env: { XDG_CACHE_HOME: join(d, 'cache-file'), KUBECONFIG: byFile } }));
    const context = `context "${doc.contexts[0].name}" of `;
    for (const [label, edit, message] of [
      [
        'server',
        (x: any) => (x.clusters[0].cluster.server = 'https://evil.example'),
        /is connecting to https:\/\/evil\.example, but its provider names https:\/\/127\.0\.0\.1:9/,
      ],
      [
        'a spelling of the host',
        (x: any) => (x.clusters[0].cluster.server = 'https://127.1:9'),
        /is connecting to https:\/\/127\.1:9, but its provider names/,
      ],
      [
        'CA',
        (x: any) => (x.clusters[0].cluster['certificate-authority-data'] = Buffer.from('other').toString('base64')),
        /verifies https:\/\/127\.0\.0\.1:9 with another CA than its provider names/,
      ],
      [
        'insecure',
        (x: any) => {
          delete x.clusters[0].cluster['certificate-authority-data'];
          x.clusters[0].cluster['insecure-skip-tls-verify'] = true;
        },
        /skips TLS verification/,
      ],
      [
        'tls-server-name',
        (x: any) => (x.clusters[0].cluster['tls-server-name'] = 'evil'),
        /verifies the server as "evil"/,
      ],
    ] as const) {
      const file = edited(d, doc, `${label.replace(/ /g, '-')}.yaml`, edit);
      const cache = join(d, `cache-${label}`);
      const r = await runFleet(args, { env: { XDG_CACHE_HOME: cache, KUBECONFIG: file } });
      refusedCleanly(r, message, cache);
      assert.ok(r.stderr.includes(`${context}${file}`), `${label}: names the context and its file: ${r.stderr}`);
    }
  });

  it('refuses when no context of the view runs this entry, or two that do name different clusters', async () => {
    const { d, doc, kc, out, args } = await exported();
    // The user's own file only (the client loaded the exported file by a path the plugin cannot see), and nothing.
    for (const [label, env] of [
      ['another file', { KUBECONFIG: kc }],
      ['no file at all', { HOME: join(d, 'empty-home') }],
    ] as const) {
      const cache = join(d, `cache-${label}`);
      const r = await runFleet(args, { env: { XDG_CACHE_HOME: cache, ...env } });
      refusedCleanly(
        r,
        /^error: KUBERNETES_EXEC_INFO is not set \(kubectl sets it; this client does not\), and no context in the kubeconfig files it reads by default .*set KUBECONFIG to the exported file$/m,
        cache,
      );
    }
    // Another entry (another --cluster) does not count as this one.
    const otherEntry = edited(d, doc, 'other-entry.yaml', (x) => {
      const a: string[] = x.users[0].user.exec.args;
      a[a.indexOf('--cluster') + 1] = 'someone-else';
    });
    const cache1 = join(d, 'cache-other-entry');
    refusedCleanly(
      await runFleet(args, { env: { XDG_CACHE_HOME: cache1, KUBECONFIG: otherEntry } }),
      /no context in the kubeconfig files/,
      cache1,
    );
    // A second file with a copy of the entry, under another user and context name, for another server: the faithful
    // context in the first file does not make it safe (the client may use either).
    const copy = edited(d, doc, 'copy.yaml', (x) => {
      x.users[0].name = 'copied';
      x.contexts[0].name = 'copied';
      x.contexts[0].context.user = 'copied';
      x.contexts[0].context.cluster = 'elsewhere';
      x.clusters[0].name = 'elsewhere';
      x.clusters[0].cluster.server = 'https://127.0.0.1:10';
    });
    const cache2 = join(d, 'cache-two');
    const two = await runFleet(args, { env: { XDG_CACHE_HOME: cache2, KUBECONFIG: `${out}:${copy}` } });
    refusedCleanly(
      two,
      /two contexts that run this entry .* name different clusters: context ".*" of .*out\.yaml \(https:\/\/127\.0\.0\.1:9\) and context "copied" of .*copy\.yaml \(https:\/\/127\.0\.0\.1:10\)/,
      cache2,
    );
    // A context in a later file naming a cluster name the first file also defines: both entries count.
    const shadow = edited(d, doc, 'shadow.yaml', (x) => {
      x.clusters[0].cluster.server = 'https://127.0.0.1:11';
      x.users = [];
      x.contexts = [];
    });
    const cache3 = join(d, 'cache-shadow');
    refusedCleanly(
      await runFleet(args, { env: { XDG_CACHE_HOME: cache3, KUBECONFIG: `${out}:${shadow}` } }),
      /name different clusters/,
      cache3,
    );
  });

  it('a hostile view is refused in one line: a FIFO, a CA file that is a FIFO, a file that is not a kubeconfig', async () => {
    const { d, doc, args } = await exported();
    const fifo = join(d, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const caFifo = edited(d, doc, 'ca-fifo.yaml', (x) => {
      delete x.clusters[0].cluster['certificate-authority-data'];
      x.clusters[0].cluster['certificate-authority'] = fifo;
    });
    const junk = join(d, 'junk.yaml');
    writeFileSync(junk, 'clusters: 7\n');
    for (const [label, kubeconfig] of [
      ['fifo', fifo],
      ['ca-fifo', caFifo],
      ['junk', junk],
    ] as const) {
      const cache = join(d, `cache-${label}`);
      const r = await runFleet(args, { env: { XDG_CACHE_HOME: cache, KUBECONFIG: kubeconfig }, timeoutMs: 20_000 });
      refusedCleanly(r, /^error: /, cache);
    }
  });

  it('only the exported form counts as this entry', () => {
    const base = ['kubeconfig', 'credential', '--cluster', 'c', '--provider', 'p'];
    assert.deepEqual(entryFlags({ args: base }), { cluster: 'c', provider: 'p' });
    assert.deepEqual(entryFlags({ args: ['--fleet', '/bin/fleet', ...base] }), { cluster: 'c', provider: 'p' });
    assert.deepEqual(entryFlags({ args: ['/lib/run.js', ...base] }), { cluster: 'c', provider: 'p' });
    for (const args of [
      [],
      ['kubeconfig', 'credential'],
      [...base, '--extra', 'x'],
      [...base, '--cluster', 'd'],
      ['credential', ...base.slice(2)],
    ])
      assert.equal(entryFlags({ args }), undefined, args.join(' '));
    assert.equal(entryFlags({ args: 'kubeconfig credential --cluster c' as unknown as string[] }), undefined);
    assert.equal(entryFlags(undefined), undefined);
  });
});
