import assert from 'node:assert/strict';
import { readFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import type { ClusterList } from '../../src/commands/clusters/list.js';
import type { VerifyReport } from '../../src/verify/report.js';
import { runFleet } from '../support/cli.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/fleet', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Every secret the example files hold; none may appear in any output. */
async function exampleSecrets(): Promise<string[]> {
  const staging = await readFile(join(EXAMPLES, 'staging.kubeconfig'), 'utf8');
  const jwt = /token: (\S+)/.exec(staging)![1];
  return [jwt, 'example-password-not-real', 'example-opaque-dev-admin-token'];
}

describe('fleet clusters list (no cluster needed)', () => {
  it('lists the example fleet with a stable JSON shape', async () => {
    const res = await runFleet(['clusters', 'list', '--kubeconfig', 'examples/fleet', '-o', 'json'], { cwd: REPO });
    assert.equal(res.code, 0, res.stderr);
    const list = res.json<ClusterList>();
    assert.equal(list.kind, 'ClusterList');
    const byName = Object.fromEntries(list.items.map((i) => [i.name, i]));
    // Sorted by name, as kubectl sorts contexts.
    assert.deepEqual(Object.keys(byName), [
      'examples/fleet/dev.kubeconfig.yaml+admin',
      'examples/fleet/dev.kubeconfig.yaml+dev',
      'examples/fleet/prod.kubeconfig+prod-eu',
      'examples/fleet/prod.kubeconfig+prod-us',
      'examples/fleet/staging.kubeconfig+admin',
      'examples/fleet/staging.kubeconfig+staging',
    ]);
    const eu = byName['examples/fleet/prod.kubeconfig+prod-eu'];
    assert.deepEqual(Object.keys(eu).sort(), [
      'auth',
      'ca',
      'context',
      'current',
      'expires',
      'labels',
      'name',
      'namespace',
      'provider',
      'ready',
      'reason',
      'server',
      'source',
    ]);
    // The prod keys were never kept (nothing key-shaped in the repository): kubectl would refuse these contexts, so
    // they are listed as not ready, on purpose, with the reason.
    assert.equal(eu.ready, false);
    assert.equal(eu.reason, `client-key ${join(EXAMPLES, 'keys/jane.key')}: file not found`);
    assert.equal(eu.namespace, 'platform');
    assert.equal(eu.labels['fleet.dev/namespace'], 'platform');
    for (const name of Object.keys(byName).filter((n) => !n.includes('prod')))
      assert.equal(byName[name].ready, true, name);
    assert.equal(eu.provider, 'file');
    assert.equal(eu.server, 'https://prod-eu.example.com:6443');
    assert.equal(eu.auth, 'client-cert');
    assert.equal(eu.ca, 'embedded');
    assert.match(eu.expires ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(eu.source, {
      kind: 'kubeconfig-file',
      path: join(EXAMPLES, 'prod.kubeconfig'),
      context: 'prod-eu',
    });
    assert.equal(byName['examples/fleet/staging.kubeconfig+staging'].auth, 'token');
    assert.equal(byName['examples/fleet/staging.kubeconfig+staging'].expires, '2036-01-01T00:00:00Z');
    assert.equal(byName['examples/fleet/staging.kubeconfig+staging'].ca, 'insecure');
    assert.equal(byName['examples/fleet/staging.kubeconfig+admin'].auth, 'basic');
    assert.equal(byName['examples/fleet/dev.kubeconfig.yaml+dev'].auth, 'exec');
    assert.equal(byName['examples/fleet/dev.kubeconfig.yaml+dev'].ca, 'file');
  });

  it('never prints a token, key or password, in any format', async () => {
    const secrets = await exampleSecrets();
    for (const args of [[], ['-o', 'wide'], ['-o', 'json'], ['-o', 'yaml'], ['-o', 'name'], ['--json']]) {
      const res = await runFleet(['clusters', 'list', '--kubeconfig', 'examples/fleet', ...args], { cwd: REPO });
      assert.equal(res.code, 0);
      for (const s of secrets)
        assert.ok(!res.stdout.includes(s) && !res.stderr.includes(s), `secret in output of ${args.join(' ')}`);
    }
    for (const name of [
      'staging',
      'examples/fleet/staging.kubeconfig+admin',
      'examples/fleet/dev.kubeconfig.yaml+admin',
    ]) {
      for (const fmt of ['table', 'json', 'yaml']) {
        const res = await runFleet(
          ['clusters', 'inspect', name, '--kubeconfig', 'examples/fleet', '--offline', '-o', fmt],
          { cwd: REPO },
        );
        assert.equal(res.code, 0, res.stderr);
        for (const s of secrets) assert.ok(!res.stdout.includes(s), `secret in inspect ${name} -o ${fmt}`);
      }
    }
  });

  it('prints names only with -o name, and a kubectl-style table by default', async () => {
    const names = await runFleet(['clusters', 'list', '--kubeconfig', 'examples/fleet/prod.kubeconfig', '-o', 'name'], {
      cwd: REPO,
    });
    assert.equal(names.stdout, 'examples/fleet/prod.kubeconfig+prod-eu\nexamples/fleet/prod.kubeconfig+prod-us\n');
    const table = await runFleet(['clusters', 'list', '--kubeconfig', 'examples/fleet/prod.kubeconfig'], { cwd: REPO });
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^CURRENT\s+NAME\s+PROVIDER\s+SERVER\s+AUTH\s+READY\s+REASON$/);
    // NAME: the context name, which -o name's full names (the identifiers) end with (issue 41's short names).
    assert.match(
      lines[1],
      /^\*\s+prod-eu\s+file\s+https:\/\/prod-eu.example.com:6443\s+client-cert\s+False\s+client-key \S+jane.key: file not found$/,
    );
    assert.ok(!table.stdout.includes('\u001B['), 'no ANSI codes when piped');
  });

  it('shows certificate and token details in inspect without the secret', async () => {
    const res = await runFleet(
      ['clusters', 'inspect', 'staging', '--kubeconfig', 'examples/fleet', '--offline', '-o', 'json'],
      { cwd: REPO },
    );
    assert.equal(res.code, 0, res.stderr);
    const r = res.json();
    assert.equal(r.kind, 'ClusterInspection');
    assert.equal(r.credentials.token.issuer, 'https://oidc.staging.example.com');
    assert.equal(r.credentials.token.subject, 'system:serviceaccount:ci:deployer');
    assert.equal(r.credentials.token.expires, '2036-01-01T00:00:00Z');
    assert.equal(r.live, undefined);
    const eu = (
      await runFleet(['clusters', 'inspect', 'prod-eu', '--kubeconfig', 'examples/fleet', '--offline', '-o', 'json'], {
        cwd: REPO,
      })
    ).json();
    assert.equal(eu.credentials.certificate.commonName, 'jane');
    assert.deepEqual(eu.credentials.certificate.organizations, ['platform-admins']);
    assert.equal(eu.credentials.certificate.issuer, 'CN=example-fleet-ca');
    const dev = (
      await runFleet(['clusters', 'inspect', 'dev', '--kubeconfig', 'examples/fleet', '--offline', '-o', 'json'], {
        cwd: REPO,
      })
    ).json();
    assert.deepEqual(dev.credentials.exec, {
      command: 'kubelogin',
      apiVersion: 'client.authentication.k8s.io/v1',
      args: 2,
      provideClusterInfo: true,
      interactiveMode: 'IfAvailable',
    });
  });
});

describe('errors: one line on stderr, exit 2, JSON error in JSON mode', () => {
  const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

  it('a missing kubeconfig file', async () => {
    const res = await runFleet(['clusters', 'list', '--kubeconfig', '/nonexistent/kc.yaml']);
    assert.equal(res.code, 2);
    assert.deepEqual(oneLine(res.stderr), [
      'error: --kubeconfig /nonexistent/kc.yaml: no such kubeconfig file or directory',
    ]);
    assert.equal(res.stdout, '');
  });

  it('malformed YAML names the file and line', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-cli-'));
    const f = join(d, 'bad.yaml');
    await writeFile(f, 'clusters:\n- name: a\n  cluster: {server: [\n');
    const res = await runFleet(['clusters', 'list', '--kubeconfig', f]);
    assert.equal(res.code, 2);
    const lines = oneLine(res.stderr);
    assert.equal(lines.length, 1);
    assert.match(lines[0], new RegExp(`^error: ${f}: not valid YAML \\(line \\d+\\)`));
  });

  it('an unknown cluster, with suggestions, also as JSON', async () => {
    const res = await runFleet(
      ['clusters', 'inspect', 'prod-ue', '--kubeconfig', 'examples/fleet', '--offline', '-o', 'json'],
      { cwd: REPO },
    );
    assert.equal(res.code, 2);
    assert.deepEqual(res.json(), {
      error: {
        kind: 'not-found',
        message: 'cluster "prod-ue" not found in examples/fleet; did you mean "prod-eu", "prod-us"?',
      },
    });
    assert.deepEqual(oneLine(res.stderr), [
      'error: cluster "prod-ue" not found in examples/fleet; did you mean "prod-eu", "prod-us"?',
    ]);
  });

  it('a context that points at a missing user, when inspected', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-cli-'));
    const f = join(d, 'kc.yaml');
    await writeFile(
      f,
      JSON.stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://x' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'ghost' } }],
      }),
    );
    const res = await runFleet(['clusters', 'inspect', 'x', '--kubeconfig', f]);
    assert.equal(res.code, 2);
    assert.deepEqual(oneLine(res.stderr), [`error: ${f}: context "x" refers to user "ghost", which is not defined`]);
    const list = await runFleet(['clusters', 'list', '--kubeconfig', f, '-o', 'json']);
    assert.equal(list.code, 0);
    assert.equal(list.json().items[0].ready, false);
  });

  it('bad flag values and unknown flags are usage errors', async () => {
    for (const args of [
      ['clusters', 'list', '-o', 'bogus'],
      ['clusters', 'list', '--nope'],
      ['clusters', 'inspect', 'x', '--request-timeout', 'soon', '--kubeconfig', 'examples/fleet'],
    ]) {
      const res = await runFleet(args, { cwd: REPO });
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(oneLine(res.stderr).length, 1, res.stderr);
      assert.match(res.stderr, /^error: /);
    }
  });

  it('multi-line parse errors are folded into one line that says what is wrong', async () => {
    const missing = await runFleet(['auth', 'can-i']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, 'error: missing arguments VERB, RESOURCE (see --help)\n');
    const bad = await runFleet(['clusters', 'list', '--concurrency', '0']);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      'error: Parsing --concurrency: Expected an integer greater than or equal to 1 but received: 0\n',
    );
  });

  it('an unknown command suggests the closest one, without prompting', async () => {
    const res = await runFleet(['clusters', 'lst']);
    assert.equal(res.code, 2);
    assert.equal(res.stderr, 'error: "clusters lst" is not a fleet command; did you mean "clusters list"?\n');
  });

  it('no current context and no name', async () => {
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', 'examples/fleet'], { cwd: REPO });
    assert.equal(res.code, 2);
    assert.match(
      res.stderr,
      /^error: no current-context is set in examples\/fleet; name a cluster or pass --context\n$/,
    );
  });
});

describe('fleet clusters verify on a context kubectl would refuse (no cluster needed)', () => {
  it('fails provider-ready with the reason clusters list gives, and skips the checks that would only repeat it', async () => {
    const res = await runFleet(
      ['clusters', 'verify', '--kubeconfig', 'examples/fleet', '-c', 'prod-eu', '-o', 'json'],
      { cwd: REPO },
    );
    assert.equal(res.code, 1, res.stderr);
    const report = res.json<VerifyReport>();
    const checks = report.items[0].checks ?? [];
    const ready = checks.find((c) => c.name === 'provider-ready')!;
    assert.equal(ready.status, 'fail');
    assert.match(ready.message, /client-key .*jane\.key: file not found/);
    assert.deepEqual(
      checks.filter((c) => c.name !== 'provider-ready').map((c) => c.status),
      Array(8).fill('skip'),
    );
    for (const secret of await exampleSecrets())
      assert.equal(res.stdout.includes(secret) || res.stderr.includes(secret), false);
  });
});
