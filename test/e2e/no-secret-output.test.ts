// Secrets never printed, against the real control plane (issue 14 item 5): credentials written into a server URL, an
// exec plugin's stderr, and the request log of -v 6 / -v 8.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { closedPort } from '../support/net.js';
import { type CliResult, runFleet } from '../support/cli.js';
import {
  createCertUser,
  createServiceAccountToken,
  kubeconfigFor,
  loadControlPlane,
  tokenUser,
  uniqueName,
  writeKubeconfig,
} from '../support/fixture.js';

const cp = loadControlPlane();
const member = cp.members[0];
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));

function assertClean(res: CliResult, secrets: string[], what: string): void {
  for (const s of secrets) {
    assert.ok(!res.stdout.includes(s), `${what}: a secret on stdout\n${res.stdout}`);
    assert.ok(!res.stderr.includes(s), `${what}: a secret on stderr\n${res.stderr}`);
  }
}

describe('credentials in a server URL (real member)', () => {
  const password = `url-pass-${uniqueName('p')}`;
  const token = `url-token-${uniqueName('t')}`;
  const withCreds = (base: string) =>
    base.replace('https://', `https://fleet:${password}@`) + `/?access_token=${token}`;
  const masked = (base: string) => base.replace('https://', 'https://fleet:REDACTED@') + '/?access_token=REDACTED';

  it('the cluster is reached and listed, the URL shown with its credentials masked in every format', async () => {
    const user = await createCertUser(member, { user: uniqueName('url-user') });
    const path = writeKubeconfig({
      path: user.kubeconfigPath,
      server: withCreds(member.url),
      caFile: member.caFile,
      context: 'url',
      user,
    });
    const json = await runFleet(['clusters', 'list', '--kubeconfig', path, '--live', '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json().items[0].server, masked(member.url));
    assert.equal(json.json().items[0].ready, true);
    const inspect = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.equal(inspect.json().live.version.gitVersion, cp.version);
    assert.equal(inspect.json().server, masked(member.url));
    const outputs = [json, inspect];
    for (const args of [
      ['clusters', 'list', '-o', 'wide'],
      ['clusters', 'list', '-o', 'yaml'],
      ['clusters', 'inspect'],
      ['auth', 'whoami', '-o', 'json'],
      ['auth', 'whoami', '-v', '8'],
    ]) {
      const res = await runFleet([...args, '--kubeconfig', path]);
      assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
      outputs.push(res);
    }
    assert.ok(outputs[3].stdout.includes(masked(member.url)), outputs[3].stdout);
    for (const res of outputs) assertClean(res, [password, token], 'url');
  });

  it('errors that name the server mask it too', async () => {
    const port = await closedPort();
    const user = await createCertUser(member, { user: uniqueName('url-down') });
    const down = `https://127.0.0.1:${port}`;
    const path = writeKubeconfig({
      path: user.kubeconfigPath,
      server: withCreds(down),
      caFile: member.caFile,
      context: 'down',
      user,
    });
    for (const args of [
      ['clusters', 'inspect', '-o', 'json'],
      ['clusters', 'inspect'],
      ['auth', 'whoami'],
      ['auth', 'whoami', '-o', 'yaml'],
      ['clusters', 'list', '--live', '--strict'],
    ]) {
      const res = await runFleet([...args, '--kubeconfig', path]);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.ok(
        (res.stdout + res.stderr).includes(`${masked(down)}: connection refused`),
        `${args.join(' ')}\n${res.stdout}${res.stderr}`,
      );
      assertClean(res, [password, token], args.join(' '));
    }
  });
});

describe('exec plugin stderr (real member)', () => {
  it('reaches the user on stderr, scrubbed, and never the JSON document', async () => {
    const { token } = tokenUser(member, 'carol');
    // A real ServiceAccount JWT the plugin "logs" while it works: fleet has never seen it, its shape gives it away.
    const jwt = await createServiceAccountToken(member, uniqueName('plugin-ns'), 'logger');
    const path = kubeconfigFor(member, {
      exec: {
        command: process.execPath,
        args: [PLUGIN, '--tokens', token, '--stderr', `plugin: refreshed session ${jwt}`],
      },
    });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json().items[0].user.username, 'carol');
    assert.match(res.stderr, /^plugin: refreshed session REDACTED$/m);
    assert.ok(!res.stdout.includes('refreshed session'), 'plugin stderr is not part of the JSON document');
    assertClean(res, [token, jwt], 'plugin stderr');
  });

  it('a failing plugin: its words on stderr, scrubbed; the JSON error says only that it failed', async () => {
    const jwt = await createServiceAccountToken(member, uniqueName('plugin-ns'), 'failer');
    const path = kubeconfigFor(member, {
      exec: { command: process.execPath, args: [PLUGIN, '--fail', `login failed for ${jwt}`] },
    });
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.equal(
      res.json().items[0].error.message,
      `exec plugin ${process.execPath} exited with 3 (its messages are on stderr)`,
    );
    assert.match(res.stderr, /^login failed for REDACTED$/m);
    assertClean(res, [jwt], 'failing plugin');
  });
});

describe('-v levels (real member)', () => {
  it('-v 6 logs each request with method, URL and status; -v 8 adds headers with the token masked', async () => {
    const { token, kubeconfigPath } = tokenUser(member, 'alice');
    const six = await runFleet(['auth', 'whoami', '--kubeconfig', kubeconfigPath, '-v', '6', '-o', 'json']);
    assert.equal(six.code, 0, six.stderr);
    assert.equal(six.json().items[0].user.username, 'alice');
    const url = member.url.replace(/[.]/g, '\\.');
    assert.match(
      six.stderr,
      new RegExp(
        `^POST ${url}/apis/authentication\\.k8s\\.io/v1/selfsubjectreviews 201 Created in \\d+ milliseconds$`,
        'm',
      ),
    );
    assert.doesNotMatch(six.stderr, /^\s+authorization:/im);
    const eight = await runFleet(['auth', 'whoami', '--kubeconfig', kubeconfigPath, '-v=8']);
    assert.equal(eight.code, 0, eight.stderr);
    assert.match(eight.stderr, /^ {4}authorization: Bearer <masked>$/m);
    assert.match(eight.stderr, /^Response headers:$/m);
    assert.match(eight.stderr, /^ {4}content-type: application\/json$/m);
    assertClean(six, [token], '-v 6');
    assertClean(eight, [token], '-v 8');
  });

  it('hub requests are logged too (the log is passed down to providers)', async () => {
    const res = await runFleet([
      'clusters',
      'list',
      '--provider',
      'cluster-api',
      '--kubeconfig',
      cp.hub.kubeconfig,
      '-v',
      '6',
    ]);
    const url = cp.hub.url.replace(/[.]/g, '\\.');
    assert.match(
      res.stderr,
      new RegExp(
        `^GET ${url}/apis/cluster\\.x-k8s\\.io/v1beta2/clusters\\?limit=500 200 OK in \\d+ milliseconds$`,
        'm',
      ),
    );
  });
});
