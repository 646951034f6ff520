// Secrets a server echoes back, and credentials written into a server URL, never reach fleet's output. A real API
// server neither accepts Basic auth (removed in 1.19) nor echoes the Authorization header, so this uses the one kind of
// HTTP double the design allows: a TLS server that answers every request with the header it received.
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliResult, runFleet } from '../support/cli.js';
import { makeCa, makeLeaf } from '../support/pki.js';

const USER = 'echo-user';
const PASSWORD = 'echo-pass-' + 'w'.repeat(12);
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const TOKEN = 'echo-token-' + 'z9'.repeat(10);

let dir: string;
let server: Server;
let url: string;
let caData: string;

function kubeconfig(name: string, user: Record<string, unknown>, serverUrl = url): Promise<string> {
  const path = join(dir, `${name}.kubeconfig`);
  const doc = [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: echo, cluster: {server: "${serverUrl}", certificate-authority-data: ${caData}}}]`,
    `users: [{name: u, user: ${JSON.stringify(user)}}]`,
    'contexts: [{name: echo, context: {cluster: echo, user: u}}]',
    'current-context: echo',
  ].join('\n');
  return writeFile(path, doc, { mode: 0o600 }).then(() => path);
}

function assertClean(res: CliResult, secrets: string[], what: string): void {
  for (const s of secrets) {
    assert.ok(!res.stdout.includes(s), `${what}: stdout carries a secret\n${res.stdout}`);
    assert.ok(!res.stderr.includes(s), `${what}: stderr carries a secret\n${res.stderr}`);
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-echo-'));
  const ca = await makeCa(dir, 'ca', 'echo-ca');
  const leaf = await makeLeaf({ ca, dir, base: 'server', cn: 'echo', usage: 'server', ips: ['127.0.0.1'] });
  caData = readFileSync(ca.certFile).toString('base64');
  server = createServer({ cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) }, (req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const decoded = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : '';
    // Echoed three ways: the header as sent, decoded, and in a Status message (what fleet shows of an error).
    res.writeHead(500, { 'content-type': 'application/json', 'x-echo-authorization': auth });
    res.end(
      JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        code: 500,
        message: `debug: got Authorization: ${auth} (${decoded})`,
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => server.close());

describe('a server that echoes the credential it received', () => {
  it('Basic: the header, its base64 and the password are redacted in JSON, table and errors', async () => {
    const path = await kubeconfig('basic', { username: USER, password: PASSWORD });
    for (const args of [['-o', 'json'], ['-o', 'yaml'], []]) {
      const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, ...args]);
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stdout + res.stderr, /got Authorization: Basic REDACTED/, 'the echo is shown, redacted');
      assertClean(res, [BASIC, PASSWORD], `inspect ${args.join(' ')}`);
    }
    const whoami = await runFleet(['auth', 'whoami', '--kubeconfig', path, '-o', 'json']);
    assert.equal(whoami.code, 1);
    assertClean(whoami, [BASIC, PASSWORD], 'whoami');
  });

  it('Bearer: redacted the same way', async () => {
    const path = await kubeconfig('bearer', { token: TOKEN });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-o', 'json']);
    assert.equal(res.code, 1);
    assert.match(res.json().live.error.message, /got Authorization: Bearer REDACTED/);
    assertClean(res, [TOKEN], 'inspect bearer');
  });
});

describe('credentials written into a server URL', () => {
  const URL_PASSWORD = 'url-pass-' + 'k'.repeat(12);
  const URL_TOKEN = 'url-token-' + 'j'.repeat(12);
  const withCreds = () =>
    url.replace('https://', `https://admin:${URL_PASSWORD}@`) + `/?access_token=${URL_TOKEN}&watch=1`;

  it('are masked in clusters list (table, wide, JSON, YAML), keeping the rest of the URL', async () => {
    const path = await kubeconfig('url-list', { token: TOKEN }, withCreds());
    const masked = url.replace('https://', 'https://admin:REDACTED@') + '/?access_token=REDACTED&watch=1';
    const json = await runFleet(['clusters', 'list', '--kubeconfig', path, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json().items[0].server, masked);
    for (const args of [[], ['-o', 'wide'], ['-o', 'yaml']]) {
      const res = await runFleet(['clusters', 'list', '--kubeconfig', path, ...args]);
      assert.equal(res.code, 0, res.stderr);
      assert.ok(res.stdout.includes(masked), res.stdout);
      assertClean(res, [URL_PASSWORD, URL_TOKEN, TOKEN], `list ${args.join(' ')}`);
    }
    assertClean(json, [URL_PASSWORD, URL_TOKEN, TOKEN], 'list json');
  });

  it('are masked in errors that name the server, and in inspect', async () => {
    const path = await kubeconfig('url-inspect', { username: USER, password: PASSWORD }, withCreds());
    for (const args of [['-o', 'json'], []]) {
      const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, ...args]);
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stdout + res.stderr, /admin:REDACTED@127\.0\.0\.1/);
      assertClean(res, [URL_PASSWORD, URL_TOKEN, BASIC, PASSWORD], `inspect ${args.join(' ')}`);
    }
    const whoami = await runFleet(['auth', 'whoami', '--kubeconfig', path]);
    assert.equal(whoami.code, 1);
    assertClean(whoami, [URL_PASSWORD, URL_TOKEN, BASIC, PASSWORD], 'whoami');
  });
});

describe('scrub: echoed schemes and URL credentials', () => {
  it('redacts Basic and Bearer values, keeps prose that only names the schemes', async () => {
    const { scrub, maskUrlCredentials } = await import('../../src/kubeconfig/redact.js');
    const basic = Buffer.from('someone:hunter2-pw').toString('base64');
    assert.equal(scrub(`Authorization: Basic ${basic}`), 'Authorization: Basic REDACTED');
    assert.equal(scrub('header was Bearer abc123-never-registered-TOKEN'), 'header was Bearer REDACTED');
    for (const prose of [
      'Basic authentication is not supported',
      'a Bearer token or Bearer tokens',
      'Basic user    alice',
    ]) {
      assert.equal(scrub(prose), prose);
    }
    assert.equal(
      maskUrlCredentials('https://u:p%40ss@api.example:6443/base?x=1&token=abc&X-Amz-Signature=def'),
      'https://u:REDACTED@api.example:6443/base?x=1&token=REDACTED&X-Amz-Signature=REDACTED',
    );
    assert.equal(maskUrlCredentials('https://api.example:6443'), 'https://api.example:6443');
    // Masking twice changes nothing, and the text after a URL in a message stays.
    const once = scrub('https://u:pw-123456@h:1/?token=abc: connection refused');
    assert.equal(once, 'https://u:REDACTED@h:1/?token=REDACTED: connection refused');
    assert.equal(scrub(once), once);
  });
});

describe('-v levels log requests without credentials', () => {
  it('-v 6: method, URL and status of each request on stderr; nothing on stdout; no headers', async () => {
    const path = await kubeconfig('log6', { username: USER, password: PASSWORD });
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-v', '6', '-o', 'json']);
    assert.equal(res.code, 1);
    assert.equal(res.json().kind, 'ClusterInspection', 'the log stays off stdout');
    const port = new URL(url).port;
    assert.match(
      res.stderr,
      new RegExp(`^GET https://127\\.0\\.0\\.1:${port}/version 500 Internal Server Error in \\d+ milliseconds$`, 'm'),
    );
    assert.doesNotMatch(res.stderr, /Request headers:/);
    assertClean(res, [BASIC, PASSWORD], '-v 6');
  });

  it('-v 8: request and response headers too, Authorization masked, echoes redacted', async () => {
    const path = await kubeconfig(
      'log8',
      { username: USER, password: PASSWORD },
      url.replace('https://', `https://admin:${PASSWORD}x@`),
    );
    const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, '-v', '8']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^Request headers:$/m);
    assert.match(res.stderr, /^ {4}authorization: Basic <masked>$/m);
    assert.match(res.stderr, /^ {4}user-agent: fleet$/m);
    assert.match(res.stderr, /^Response headers:$/m);
    assert.match(res.stderr, /^ {4}x-echo-authorization: Basic REDACTED$/m);
    assertClean(res, [BASIC, PASSWORD], '-v 8');
  });

  it('without -v (or below 6) nothing is logged', async () => {
    const path = await kubeconfig('log0', { token: TOKEN });
    for (const v of [[], ['-v'], ['-v', '5']]) {
      const res = await runFleet(['clusters', 'inspect', '--kubeconfig', path, ...v, '-o', 'json']);
      assert.doesNotMatch(res.stderr, /^GET /m, v.join(' '));
    }
  });
});
