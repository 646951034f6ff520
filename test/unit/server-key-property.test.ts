// The one server comparison (src/kubeconfig/server.ts) against Go's net/url as kubectl reads a server URL
// (test/server-oracle): over generated spellings of hosts (IPv4 shorthands, hex and octal parts, a 32-bit number,
// trailing dots, case, IPv6, percent-escapes), ports (none, empty, default, leading zeros), userinfo, paths, queries and
// fragments, two spellings fleet calls one server are one server for Go (never a match Go would not make), every
// spelling Go keeps and fleet recognises gets Go's own key, and the spellings WHATWG URL rewrites to 127.0.0.1 are
// other servers (Go resolves them as names).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { buildScriptOutput } from '../support/binaries.js';
import { sameServer, serverKey } from '../../src/kubeconfig/server.js';

const ORACLE = buildScriptOutput(fileURLToPath(new URL('../server-oracle/build.sh', import.meta.url)));

interface GoAnswer {
  key?: string;
  ip: boolean;
  err?: string;
}

function go(servers: string[]): GoAnswer[] {
  return JSON.parse(
    execFileSync(ORACLE, { input: JSON.stringify(servers), encoding: 'utf8', maxBuffer: 64 << 20 }),
  ) as GoAnswer[];
}

const LOOPBACK_SPELLINGS = [
  '127.1',
  '127.0.1',
  '0x7f.0.0.1',
  '0x7F.1',
  '2130706433',
  '017700000001',
  '0177.0.0.1',
  '127.0.0.1.',
  '127.000.000.001',
  '127。0。0。1',
];
/** Go decodes a host's percent-escapes (this one is 127.0.0.1 to kubectl too): fleet compares it as written, a refusal. */
const ESCAPED = '%31%32%37.0.0.1';

const hostArb = fc.oneof(
  fc.constantFrom(
    '127.0.0.1',
    'localhost',
    'api.example.com',
    '10.0.0.1',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::FFFF:7f00:1]',
  ),
  fc.constantFrom(...LOOPBACK_SPELLINGS, ESCAPED),
  fc.stringMatching(/^[a-zA-Z0-9]{1,6}(\.[a-zA-Z0-9]{1,6}){0,2}\.?$/),
  fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.constantFrom('dec', 'hex', 'oct'))
    .map(([a, b, how]) => {
      const f = (n: number) => (how === 'hex' ? `0x${n.toString(16)}` : how === 'oct' ? `0${n.toString(8)}` : `${n}`);
      return `${f(a)}.${f(b)}`;
    }),
);
const caseOf = (s: string, flips: boolean[]) =>
  [...s].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c.toLowerCase())).join('');

const serverArb = fc
  .record({
    scheme: fc.constantFrom('https', 'HTTPS', 'Https', 'http', 'ftp'),
    user: fc.constantFrom('', 'u@', 'u:p@', '@'),
    host: hostArb,
    flips: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    port: fc.constantFrom('', ':', ':443', ':80', ':6443', ':06443', ':0443', ':64430'),
    path: fc.constantFrom('', '/', '//', '/base', '/base/', '/Base', '/a%2Fb'),
    query: fc.constantFrom('', '?', '?x=1'),
    fragment: fc.constantFrom('', '#', '#f'),
  })
  .map(
    (r) =>
      `${r.scheme}://${r.user}${r.host.startsWith('[') ? r.host : caseOf(r.host, r.flips)}${r.port}${r.path}${r.query}${r.fragment}`,
  );

describe('server comparison as kubectl dials it (Go net/url oracle)', () => {
  it('equal keys are one server for Go, on 2,000 generated spellings and every pair among them', () => {
    const servers = fc.sample(serverArb, { numRuns: 2000, seed: 46 });
    servers.push(...LOOPBACK_SPELLINGS.map((h) => `https://${h}:6443`), 'https://127.0.0.1:6443');
    const answers = go(servers);
    const byKey = new Map<string, number[]>();
    servers.forEach((s, i) => byKey.set(serverKey(s), [...(byKey.get(serverKey(s)) ?? []), i]));
    let pairs = 0;
    for (const [key, group] of byKey) {
      // A spelling fleet does not recognise is compared exactly as written (raw:): equal only to itself, whatever Go
      // makes of it, so it can cause a refusal and never a match Go would not make.
      if (key.startsWith('raw:')) {
        assert.equal(new Set(group.map((i) => servers[i])).size, 1, key);
        continue;
      }
      for (const i of group) {
        // One server for fleet: Go reads it, and reads it as the first of its group.
        assert.ok(answers[i].key, `fleet reads ${servers[i]} as a server, Go does not (${answers[i].err})`);
        assert.equal(answers[i].key, answers[group[0]].key, `${servers[i]} ~ ${servers[group[0]]} for fleet, not Go`);
        pairs++;
      }
    }
    assert.ok(pairs >= servers.length / 2, `${pairs} recognised spellings of ${servers.length}`);
  });

  it("a spelling fleet recognises gets Go's own key (so same-server spellings are not refused needlessly)", () => {
    const servers = fc.sample(serverArb, { numRuns: 2000, seed: 4646 }).filter((s) => !/[?#]$|[?#]#/.test(s));
    const answers = go(servers);
    let recognised = 0;
    servers.forEach((s, i) => {
      const k = serverKey(s);
      if (k.startsWith('raw:')) return;
      recognised++;
      assert.equal(k, answers[i].key, s);
    });
    assert.ok(recognised > servers.length / 2, `${recognised} of ${servers.length}`);
  });

  it('127.1, 0x7f.0.0.1, 2130706433, a trailing dot and the other rewrites of 127.0.0.1 are other servers: Go dials them as names', () => {
    const servers = LOOPBACK_SPELLINGS.map((h) => `https://${h}:6443`);
    const answers = go(servers);
    servers.forEach((s, i) => {
      assert.equal(new URL(s).hostname, '127.0.0.1', `WHATWG URL rewrites ${s}`);
      assert.equal(sameServer(s, 'https://127.0.0.1:6443'), false, s);
      if (answers[i].key) assert.equal(answers[i].ip, false, `Go reads ${s} as an address`);
      assert.notEqual(answers[i].key, go(['https://127.0.0.1:6443'])[0].key, s);
    });
    // Go refuses a percent-escaped host, or reads it as 127.0.0.1: fleet treats it as another server either way.
    const escaped = go([`https://${ESCAPED}:6443`])[0];
    assert.ok(escaped.key === undefined || escaped.key === go(['https://127.0.0.1:6443'])[0].key, escaped.key);
    assert.equal(sameServer(`https://${ESCAPED}:6443`, 'https://127.0.0.1:6443'), false);
    for (const [a, b] of [
      ['https://127.0.0.1:443', 'https://127.0.0.1'],
      ['HTTPS://API.example.com:/', 'https://api.example.com'],
      ['https://h:6443/base//', 'https://h:6443/base'],
    ])
      assert.ok(sameServer(a, b), `${a} ~ ${b}`);
  });
});
