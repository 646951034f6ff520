// Data is not code (issue 29, item 4): strings a server answers with, and names read from data, reach the terminal
// escaped in every human format (table, wide, name, notes, `error:` lines, warnings), one row per cluster whatever they
// hold, and exact in -o json and -o yaml.
//
// The real API server echoes an identity it authenticated: a client certificate whose CN (the username) and O (a group)
// hold an OSC title sequence, SGR colours, CR/LF and a bidi override is accepted as that user, and SelfSubjectReview
// answers with those bytes. The kubeconfig context is named after the user, so the cluster name is hostile too.
// (`--as` cannot carry them: an HTTP header cannot hold a control character, so fleet refuses such a value before any
// cluster is touched; tested below.) A real API server quotes names in its own Forbidden messages (Go's %q), so a
// 403 whose message holds raw escape sequences comes from a small local server, as a proxy or an aggregated API
// in front of a cluster could answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import type { AccessReviewList } from '../../src/commands/auth/can-i.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { createCertUser, loadControlPlane, scratchDir, uniqueName, writeKubeconfig } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;

// What the issue saw (a retitle, a colour, a forged row), with a bidi override, a C1 CSI and the start of a row that
// would look real if the CR/LF were obeyed. The run id keeps certificates of earlier runs apart.
const RUN = uniqueName('h').slice(-6);
const HOSTILE = `\x1b]0;pwned\x07\x1b[31mevil-${RUN}\r\nforged-row\u202egnp.exe\x9b2J`;
const HOSTILE_GROUP = `qa\x1b[5m\u2066team\u2069\n${RUN}`;
// The same as fleet shows them (src/base/terminal.ts).
const shown = (s: string) =>
  s.replace(
    /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g,
    (c) =>
      ({ '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] ??
      (c.charCodeAt(0) <= 0xff
        ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
        : `\\u${c.charCodeAt(0).toString(16)}`),
  );
const USER_SHOWN = shown(HOSTILE);
const GROUP_SHOWN = shown(HOSTILE_GROUP);

// Any C0 control, DEL, C1 control or bidi / zero-width / BOM character.
const CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** No control character in `text` but LF (the layout) and the SGR sequences listed (chalk's own, when colour is on). */
function onlyLayout(text: string, sgr: string[] = []): void {
  let rest = text;
  for (const s of sgr) rest = rest.split(s).join('');
  const bad = [...rest].find((ch) => ch !== '\n' && CONTROL.test(ch));
  assert.equal(bad, undefined, `raw control character ${JSON.stringify(bad)} in ${JSON.stringify(text)}`);
}

// chalk at level 1 (fleet's colour): yellow for the warning column, red for the error column.
const YELLOW = ['\x1b[33m', '\x1b[39m'];
const RED = ['\x1b[31m', '\x1b[39m'];

let masters: string;
let powerless: string;

before(async () => {
  // One hostile user in system:masters (whoami warns about it: a coloured cell), one with no permission at all.
  masters = (await createCertUser(hub, { user: HOSTILE, groups: ['system:masters', HOSTILE_GROUP] })).kubeconfigPath;
  powerless = (await createCertUser(hub, { user: `${HOSTILE}-nobody` })).kubeconfigPath;
});

const clusterOf = (user: string) => `${masters}+${user}@hub`;

describe('strings the API server echoes (a username and group from a client certificate)', () => {
  it('-o json and -o yaml carry them exactly; stderr is empty', async () => {
    const json = await runFleet(['auth', 'whoami', '--kubeconfig', masters, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const item = json.json<WhoAmIList>().items[0];
    assert.equal(item.user!.username, HOSTILE, 'the server echoed the bytes (so the checks below can fail)');
    assert.ok(item.user!.groups.includes(HOSTILE_GROUP));
    assert.equal(item.cluster, clusterOf(HOSTILE));
    assert.equal(json.stderr, '');
    const y = await runFleet(['auth', 'whoami', '--kubeconfig', masters, '-o', 'yaml']);
    assert.equal((yaml.load(y.stdout) as WhoAmIList).items[0].user!.username, HOSTILE);
  });

  it("table and wide, colour on (--color and FORCE_COLOR): one row, escaped, only chalk's colour codes", async () => {
    const runs: Array<[string, CliResult]> = [
      // runFleet sets NO_COLOR=1, which beats --color: cleared here so the flag decides.
      [
        'table --color',
        await runFleet(['auth', 'whoami', '--kubeconfig', masters, '--color'], { env: { NO_COLOR: '' } }),
      ],
      [
        'wide FORCE_COLOR',
        await runFleet(['auth', 'whoami', '--kubeconfig', masters, '-o', 'wide'], {
          env: { NO_COLOR: '', FORCE_COLOR: '1' },
        }),
      ],
    ];
    for (const [what, res] of runs) {
      assert.equal(res.code, 0, `${what}: ${res.stderr}`);
      const lines = res.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 2, `${what}: a header and one row, no forged row: ${JSON.stringify(res.stdout)}`);
      assert.match(lines[0], /^CLUSTER\s+USERNAME\s+UID\s+GROUPS\s/);
      assert.ok(
        // The cluster by its context name (issue 41's short names), escaped like every cell.
        lines[1].startsWith(`${shown(`${HOSTILE}@hub`)}   ${USER_SHOWN}   `),
        `${what}: ${JSON.stringify(lines[1])}`,
      );
      assert.ok(
        lines[1].includes(`system:masters,${GROUP_SHOWN},system:authenticated`),
        `${what}: ${JSON.stringify(lines[1])}`,
      );
      assert.ok(
        res.stdout.includes(`${YELLOW[0]}system-masters`),
        `${what}: the warning is coloured (the colour path ran): ${JSON.stringify(lines[1])}`,
      );
      onlyLayout(res.stdout, YELLOW);
      onlyLayout(res.stderr);
      assert.ok(!res.stdout.includes('forged-row\n') && !res.stdout.includes('\x1b]0;'));
    }
  });

  it('-o name: the username once, on one line', async () => {
    const res = await runFleet(['auth', 'whoami', '--kubeconfig', masters, '-o', 'name']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, `${USER_SHOWN}\n`);
  });

  it('a forbidden answer about that cluster: the error line names it escaped, in every format; JSON exact', async () => {
    for (const format of ['table', 'json', 'yaml', 'name']) {
      const res = await runFleet(
        ['auth', 'who-can', 'list', 'secrets', '--kubeconfig', powerless, '-o', format, '--color'],
        { env: { NO_COLOR: '' } },
      );
      assert.equal(res.code, 1, `${format}: ${res.stderr}`);
      const lines = res.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `${format}: one error line: ${JSON.stringify(res.stderr)}`);
      assert.ok(
        lines[0].startsWith(`error: ${shown(`${powerless}+${HOSTILE}-nobody@hub`)}: `),
        `${format}: ${JSON.stringify(lines[0])}`,
      );
      assert.match(lines[0], /is forbidden/);
      onlyLayout(res.stderr);
      if (format === 'json') assert.equal(res.json().items[0].cluster, `${powerless}+${HOSTILE}-nobody@hub`);
      else if (format === 'yaml')
        assert.equal(
          (yaml.load(res.stdout) as { items: Array<{ cluster: string }> }).items[0].cluster,
          `${powerless}+${HOSTILE}-nobody@hub`,
        );
      else onlyLayout(res.stdout, RED);
      if (format === 'table')
        assert.ok(
          res.stdout.includes(`${RED[0]}forbidden${RED[1]}`),
          'the error column is coloured (the colour path ran)',
        );
    }
  });
});

describe('a 403 whose message holds raw escape sequences and an echoed token', () => {
  const TOKEN = `hostile-token-${RUN}-0123456789abcdef`;
  const MESSAGE = `\x1b]0;pwned\x07\x1b[31mdenied ${TOKEN}\r\nerror: forged line\u202e`;
  let server: http.Server;
  let kubeconfig: string;

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: MESSAGE,
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    kubeconfig = writeKubeconfig({
      path: join(scratchDir(), `${uniqueName('hostile-403')}.kubeconfig`),
      server: url,
      context: 'hostile-403',
      user: { token: TOKEN },
    });
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('stderr is escaped and scrubbed under -o json too; the JSON keeps the message (token redacted)', async () => {
    for (const cmd of [
      ['auth', 'whoami'],
      ['auth', 'can-i', 'list', 'secrets'],
    ]) {
      for (const format of ['json', 'table']) {
        const res = await runFleet([...cmd, '--kubeconfig', kubeconfig, '-o', format]);
        const what = `${cmd.join(' ')} -o ${format}`;
        assert.equal(res.code, 1, `${what}: ${res.stderr}`);
        assert.ok(!res.stdout.includes(TOKEN) && !res.stderr.includes(TOKEN), `${what}: the token was printed`);
        const errors = res.stderr.split('\n').filter((l) => l.startsWith('error: '));
        assert.equal(errors.length, 1, `${what}: one error line, none forged: ${JSON.stringify(res.stderr)}`);
        assert.ok(
          errors[0].includes('\\x1b]0;pwned\\x07\\x1b[31mdenied REDACTED\\r\\nerror: forged line\\u202e'),
          `${what}: ${JSON.stringify(errors[0])}`,
        );
        onlyLayout(res.stderr);
        if (format === 'json') {
          const item = res.json<WhoAmIList | AccessReviewList>().items[0];
          assert.ok(
            item.error!.message.includes('\x1b]0;pwned\x07\x1b[31mdenied REDACTED\r\nerror: forged line\u202e'),
            `${what}: exact in JSON: ${JSON.stringify(item.error)}`,
          );
        } else onlyLayout(res.stdout, RED);
      }
    }
  });
});

describe('--as with a control character', () => {
  it('is one usage error, escaped, before any cluster is touched (an HTTP header cannot carry it)', async () => {
    for (const format of ['json', 'table']) {
      const res = await runFleet([
        'auth',
        'whoami',
        '--kubeconfig',
        masters,
        '--as',
        `\x1b]0;pwned\x07evil\r\nforged`,
        '-o',
        format,
      ]);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(res.stderr.trimEnd().split('\n').length, 1, JSON.stringify(res.stderr));
      assert.match(res.stderr, /^error: --as .*: a control character cannot be sent in an HTTP header/);
      onlyLayout(res.stderr);
    }
  });
});
