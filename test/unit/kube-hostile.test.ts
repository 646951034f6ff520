// KubeClient and the review services against small local servers that misbehave (test/support/hostile-servers.ts):
// a body too large, JSON nested too deep, answers of the wrong shape, answers that come late, redirects, a certificate
// for another host, skipped verification with a credential, a 401 to every request of an exec user. Over HTTP/2 and
// HTTP/1.1 where the two paths differ (the body is read by different code in each).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fleetFailure } from '../support/failure.js';
import { approvedContext } from '../support/approved.js';

// Read once per process (maxResponseBytes), so set before the first client: 1 MiB keeps the streams short here; the
// default (64 MiB) is what test/e2e/hostile-server.test.ts runs the CLI with.
process.env.FLEET_MAX_RESPONSE_BYTES = '1Mi';

const { accessReview } = await import('../../src/access/access-review.js');
const { rulesReview } = await import('../../src/access/rules.js');
const { selfSubjectReview } = await import('../../src/access/whoami.js');
const { ConfigError } = await import('../../src/base/errors.js');
const { MAX_JSON_DEPTH } = await import('../../src/base/limits.js');
const { setWarningSink } = await import('../../src/base/warnings.js');
const { KubeClient, nestedDeeperThan, parseResponseLimit } = await import('../../src/kube/client.js');
const { ExecCredentialRunner } = await import('../../src/kube/exec-credential.js');
const hs = await import('../support/hostile-servers.js');
type ResolvedContext = import('../../src/kubeconfig/loading-rules.js').ResolvedContext;
type UserEntry = import('../../src/kubeconfig/types.js').UserEntry;

const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-plugin.mjs', import.meta.url));
const TOKEN = 'tok-hostile-unit-3f9a1c';

let pki: Awaited<ReturnType<typeof hs.serverPki>>;
const servers: Array<{ close(): Promise<void> }> = [];
const warnings: string[] = [];

before(async () => {
  pki = await hs.serverPki();
  setWarningSink((line) => warnings.push(line));
});
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(handler: import('../support/hostile-servers.js').Handler, protocol: 'h2' | 'http/1.1' = 'h2') {
  const s = await hs.hostileServer(pki, handler, protocol);
  servers.push(s);
  return s;
}

function ctx(url: string, o: { user?: UserEntry; cluster?: Record<string, unknown> } = {}): ResolvedContext {
  return {
    contextName: 'hostile',
    clusterName: 'hostile',
    userName: 'u',
    cluster: { server: url, 'certificate-authority-data': pki.caData, ...o.cluster },
    user: o.user ?? { token: TOKEN },
    contextFile: '/k',
    clusterFile: '/k',
  };
}

// An exec user's plugin is approved as the connector approves it (TrustPolicy.approve): the client runs nothing else.
const connect = async (
  url: string,
  o: {
    timeoutMs?: number;
    user?: UserEntry;
    cluster?: Record<string, unknown>;
    reportsSkippedTls?: boolean;
    exec?: InstanceType<typeof ExecCredentialRunner>;
  } = {},
) =>
  KubeClient.connect(ctx(url, o), {
    timeoutMs: o.timeoutMs ?? 10_000,
    clusterName: 'hostile',
    exec: o.exec ?? new ExecCredentialRunner(),
    plugin: o.user?.exec ? await approvedContext(ctx(url, o)) : undefined,
    reportsSkippedTls: o.reportsSkippedTls,
  });

const failure = fleetFailure;

describe('the request time limit holds to the millisecond', () => {
  for (const protocol of ['h2', 'http/1.1'] as const) {
    it(`an answer after 80 ms: a 10 ms limit ends the request first, a 1 s limit gets the answer (${protocol})`, async () => {
      // Bounds that hold on a loaded machine: the limit must end the request before the answer comes (the old rounding up
      // to 100 ms let an 80 ms answer through), and never before the limit. Timers fire in the order they fall due, so a
      // late event loop delays both alike.
      const s = await serve(hs.answer(hs.selfSubjectReview('late'), { delayMs: 80 }), protocol);
      // Open the connection first, so the limit measures the answer, not a TLS handshake.
      await (await connect(s.url)).request('GET', '/warm').catch(() => undefined);
      const tight = await connect(s.url, { timeoutMs: 10 });
      const started = performance.now();
      const e = await failure(tight.request('GET', '/late'));
      const took = performance.now() - started;
      assert.equal(e.kind, 'timeout');
      assert.equal(e.message, `${s.url}: no answer within 10ms (--request-timeout)`);
      assert.ok(took >= 9 && took < 80, `a 10 ms limit ended the request after ${took.toFixed(1)} ms`);
      // The timeout destroyed an HTTP/1.1 request's connection: open a new one.
      if (protocol === 'http/1.1') await (await connect(s.url)).request('GET', '/warm');
      const loose = await connect(s.url, { timeoutMs: 1000 });
      assert.equal((await loose.request('GET', '/late')).status, 200);
    });
  }

  it('a limit over a tenth of a second is not rounded up to the next tenth (110 ms ends before 200, 210 before 300)', async () => {
    const s = await serve(hs.answer({}, { delayMs: 1000 }));
    await (await connect(s.url)).request('GET', '/warm', undefined).catch(() => undefined);
    for (const limit of [110, 210]) {
      const client = await connect(s.url, { timeoutMs: limit });
      const started = performance.now();
      const e = await failure(client.request('GET', '/slow'));
      const took = performance.now() - started;
      assert.equal(e.kind, 'timeout');
      const roundedUp = Math.ceil(limit / 100) * 100;
      assert.ok(
        took >= limit - 1 && took < roundedUp,
        `a ${limit} ms limit ended the request after ${took.toFixed(1)} ms`,
      );
    }
  });
});

describe('response size limit (FLEET_MAX_RESPONSE_BYTES)', () => {
  for (const protocol of ['h2', 'http/1.1'] as const) {
    it(`an endless body ends its request at the limit, over ${protocol}, and the server sees the stream ended`, async () => {
      const handler = hs.endlessBody();
      const s = await serve(handler, protocol);
      const client = await connect(s.url);
      const e = await failure(client.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}));
      assert.equal(e.kind, 'server');
      assert.equal(e.message, `${s.url}: response larger than 1 MiB (FLEET_MAX_RESPONSE_BYTES)`);
      // Ended as soon as the limit passed: the server's stream is closed early and it wrote little beyond the limit
      // (what the socket and flow-control buffers held), never the whole (endless) body.
      await waitFor(() => handler.sent.closedEarly === 1, 'the server saw its answer cut short');
      assert.ok(
        handler.sent.bytes < 24 * 1024 * 1024,
        `the server wrote ${handler.sent.bytes} bytes before the client stopped it`,
      );
      // The connection (and for HTTP/2 the session other clusters share) still serves the next request.
      const next = await connect(s.url);
      assert.equal(next.serverUrl, s.url);
    });

    it(`a body at the limit is read whole, over ${protocol}`, async () => {
      const handler = hs.endlessBody({ totalBytes: 1024 * 1024 });
      const s = await serve(handler, protocol);
      const res = await (await connect(s.url)).request('GET', '/x');
      assert.equal(res.status, 200);
      assert.equal(res.body.length, 1024 * 1024);
    });

    it(`a Content-Length over the limit is refused before the body, over ${protocol}`, async () => {
      const handler = hs.endlessBody({ totalBytes: 2 * 1024 ** 3, contentLength: true });
      const s = await serve(handler, protocol);
      const e = await failure((await connect(s.url)).request('GET', '/x'));
      assert.match(e.message, /response larger than 1 MiB \(FLEET_MAX_RESPONSE_BYTES\)$/);
    });
  }

  it('FLEET_MAX_RESPONSE_BYTES reads bytes or Ki/Mi/Gi; anything else is one ConfigError naming the variable', () => {
    assert.equal(parseResponseLimit('67108864'), 64 * 1024 * 1024);
    assert.equal(parseResponseLimit('64Mi'), 64 * 1024 * 1024);
    assert.equal(parseResponseLimit('512Ki'), 512 * 1024);
    assert.equal(parseResponseLimit('2Gi'), 2 * 1024 ** 3);
    for (const bad of ['abc', '0', '-5', '1.5Mi', '64MB', '']) {
      assert.throws(
        () => parseResponseLimit(bad),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message ===
            `FLEET_MAX_RESPONSE_BYTES: expected a positive number of bytes (e.g. 67108864 or 64Mi), got "${bad}"`,
      );
    }
  });
});

describe('nesting depth', () => {
  it('the scan counts brackets outside strings only, escapes included', () => {
    assert.equal(nestedDeeperThan(Buffer.from(hs.nestedJson(MAX_JSON_DEPTH, 'array')), MAX_JSON_DEPTH), false);
    assert.equal(nestedDeeperThan(Buffer.from(hs.nestedJson(MAX_JSON_DEPTH + 1, 'array')), MAX_JSON_DEPTH), true);
    assert.equal(nestedDeeperThan(Buffer.from(hs.nestedJson(MAX_JSON_DEPTH + 1, 'object')), MAX_JSON_DEPTH), true);
    // Brackets inside strings (an escaped quote does not end one) are text.
    const text = JSON.stringify({ a: `\\"${'['.repeat(5000)}`, b: '{'.repeat(5000) });
    assert.equal(nestedDeeperThan(Buffer.from(text), MAX_JSON_DEPTH), false);
    // Multi-byte characters next to brackets.
    assert.equal(nestedDeeperThan(Buffer.from(`["é", ${'['.repeat(3)}"ü"${']'.repeat(3)}]`), 3), true);
  });

  for (const protocol of ['h2', 'http/1.1'] as const) {
    it(`a SelfSubjectReview whose status is an array nested 200,000 deep fails, never an empty user, over ${protocol}`, async () => {
      const s = await serve(hs.answer(hs.selfSubjectReviewText(hs.nestedJson(200_000, 'array'))), protocol);
      const e = await failure(selfSubjectReview(await connect(s.url)));
      assert.equal(e.kind, 'server');
      assert.equal(e.message, `${s.url}: response nested deeper than ${MAX_JSON_DEPTH} levels`);
    });
  }

  it('an object nested 100,000 deep in extra fails the request (so -o json never meets it)', async () => {
    const status = `{"userInfo":{"username":"u","extra":{"k":${hs.nestedJson(100_000, 'object', '"v"')}}}}`;
    const s = await serve(hs.answer(hs.selfSubjectReviewText(status)));
    const e = await failure(selfSubjectReview(await connect(s.url)));
    assert.match(e.message, /response nested deeper than 1000 levels$/);
  });

  it('an error body nested too deep is refused too (every caller, not only the ones that parse a 2xx)', async () => {
    const s = await serve(hs.answer(hs.nestedJson(5000, 'array'), { status: 403 }));
    const e = await failure((await connect(s.url)).request('GET', '/api'));
    assert.match(e.message, /nested deeper/);
  });
});

describe('answers of the wrong shape are errors', () => {
  const cases: Array<[string, unknown, string]> = [
    ['status an array', [], 'status is not an object'],
    ['status a string', 'x', 'status is not an object'],
    ['no userInfo', {}, 'status.userInfo is missing'],
    ['userInfo a list', { userInfo: [] }, 'status.userInfo is not an object'],
    ['username missing', { userInfo: { groups: [] } }, 'status.userInfo.username is not a string'],
    ['username a number', { userInfo: { username: 7 } }, 'status.userInfo.username is not a string'],
    ['uid an object', { userInfo: { username: 'u', uid: {} } }, 'status.userInfo.uid is not a string'],
    [
      'groups a string',
      { userInfo: { username: 'u', groups: 'system:masters' } },
      'status.userInfo.groups is not a list of strings',
    ],
    [
      'groups with a number',
      { userInfo: { username: 'u', groups: ['a', 1] } },
      'status.userInfo.groups is not a list of strings',
    ],
    ['extra a list', { userInfo: { username: 'u', extra: [] } }, 'status.userInfo.extra is not a map of string lists'],
    [
      'extra of strings',
      { userInfo: { username: 'u', extra: { k: 'v' } } },
      'status.userInfo.extra is not a map of string lists',
    ],
  ];
  for (const [name, status, problem] of cases) {
    it(`SelfSubjectReview: ${name}`, async () => {
      const s = await serve(hs.answer({ kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', status }));
      const e = await failure(selfSubjectReview(await connect(s.url)));
      assert.equal(e.kind, 'server');
      assert.equal(e.message, `answer is not a SelfSubjectReview: ${problem}`);
    });
  }

  it('a well-formed SelfSubjectReview is read as it came', async () => {
    const s = await serve(
      hs.answer({
        kind: 'SelfSubjectReview',
        status: { userInfo: { username: 'alice', uid: 'u-1', groups: ['g'], extra: { k: ['v'] } } },
      }),
    );
    assert.deepEqual(await selfSubjectReview(await connect(s.url)), {
      username: 'alice',
      uid: 'u-1',
      groups: ['g'],
      extra: { k: ['v'] },
    });
  });

  it('SelfSubjectAccessReview: allowed must be a boolean (a string "true" is no answer, not a yes or a no)', async () => {
    const s = await serve(hs.answer({ kind: 'SelfSubjectAccessReview', status: { allowed: 'true' } }));
    const e = await failure(
      accessReview(await connect(s.url), { resource: { verb: 'get', group: '', resource: 'pods', namespace: '' } }),
    );
    assert.equal(e.message, 'answer is not a SelfSubjectAccessReview: status.allowed is not a boolean');
  });

  it('SelfSubjectRulesReview: a rule that is not an object, or verbs that are not strings', async () => {
    let s = await serve(hs.answer({ kind: 'SelfSubjectRulesReview', status: { resourceRules: ['*'] } }));
    let e = await failure(rulesReview(await connect(s.url), 'default'));
    assert.equal(e.message, 'answer is not a SelfSubjectRulesReview: status.resourceRules[0] is not an object');
    s = await serve(hs.answer({ kind: 'SelfSubjectRulesReview', status: { resourceRules: [{ verbs: [1] }] } }));
    e = await failure(rulesReview(await connect(s.url), 'default'));
    assert.equal(
      e.message,
      'answer is not a SelfSubjectRulesReview: status.resourceRules[0].verbs is not a list of strings',
    );
  });
});

describe('TLS errors name the hosts', () => {
  for (const protocol of ['h2', 'http/1.1'] as const) {
    it(`a certificate for other names says which, and the host expected (${protocol})`, async () => {
      const other = await hs.serverPki({ ips: ['127.0.0.2'], dnsNames: ['a.example'] });
      const s = await hs.hostileServer(other, hs.answer(hs.selfSubjectReview('x')), protocol);
      servers.push(s);
      const client = await KubeClient.connect(
        { ...ctx(s.url), cluster: { server: s.url, 'certificate-authority-data': other.caData } },
        { timeoutMs: 10_000, clusterName: 'hostile', exec: new ExecCredentialRunner() },
      );
      const e = await failure(client.request('GET', '/version'));
      assert.equal(e.kind, 'tls');
      assert.equal(
        e.message,
        `${s.url}: TLS verification failed: the certificate is valid for 127.0.0.2, a.example, not 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID; tls-server-name in the cluster names the host to expect)`,
      );
      // With tls-server-name naming one of the certificate's names, the same server is trusted.
      const named = await KubeClient.connect(
        {
          ...ctx(s.url),
          cluster: { server: s.url, 'certificate-authority-data': other.caData, 'tls-server-name': 'a.example' },
        },
        { timeoutMs: 10_000, clusterName: 'hostile', exec: new ExecCredentialRunner() },
      );
      assert.equal((await named.request('GET', '/version')).status, 200);
    });
  }
});

describe('TLS: a certificate with no subject alternative names', () => {
  it('is valid for no host (its common name is not used, as in Go), and says so', async () => {
    const cnOnly = await hs.serverPki({});
    const s = await hs.hostileServer(cnOnly, hs.answer(hs.selfSubjectReview('x')));
    servers.push(s);
    const client = await KubeClient.connect(
      { ...ctx(s.url), cluster: { server: s.url, 'certificate-authority-data': cnOnly.caData } },
      { timeoutMs: 10_000, clusterName: 'hostile', exec: new ExecCredentialRunner() },
    );
    const e = await failure(client.request('GET', '/version'));
    assert.equal(
      e.message,
      `${s.url}: TLS verification failed: the certificate names no host (no subject alternative names, only the common name "hostile", which is not used), not 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID)`,
    );
  });
});

describe('skipped verification is warned about when a credential is sent', () => {
  it('one warning per cluster once a credential goes out; none without one, none when the command reports it itself', async () => {
    const s = await serve(hs.answer(hs.selfSubjectReview('x')));
    const insecure = { 'insecure-skip-tls-verify': true, 'certificate-authority-data': undefined };
    warnings.length = 0;
    const first = await connect(s.url, { cluster: insecure });
    // Nothing is said before a handshake completes (a server that refuses the connection got no credential).
    assert.deepEqual(warnings, []);
    await first.request('GET', '/version');
    await first.request('GET', '/version');
    await (await connect(s.url, { cluster: insecure })).request('GET', '/version');
    assert.deepEqual(warnings, [
      `warning: cluster "hostile": insecure-skip-tls-verify is set: the server's certificate is not checked, and the credential is sent to whoever answers`,
    ]);
    warnings.length = 0;
    const anonymous = await KubeClient.connect(
      { ...ctx(s.url, { cluster: insecure }), user: {} },
      { timeoutMs: 1000, clusterName: 'anonymous', exec: new ExecCredentialRunner() },
    );
    await anonymous.request('GET', '/version');
    const inspected = await KubeClient.connect(ctx(s.url, { cluster: insecure }), {
      timeoutMs: 1000,
      clusterName: 'inspected',
      exec: new ExecCredentialRunner(),
      reportsSkippedTls: true,
    });
    await inspected.request('GET', '/version');
    assert.deepEqual(warnings, []);
  });
});

describe('redirects are refused', () => {
  for (const protocol of ['h2', 'http/1.1'] as const) {
    it(`a 302 to a SelfSubjectReview is an error; the Location is never asked, the token never sent there (${protocol})`, async () => {
      const elsewhere = await serve(hs.answer(hs.selfSubjectReview('elsewhere')));
      const s = await serve(
        hs.answer('<a href="elsewhere">Found</a>', {
          status: 302,
          headers: {
            location: `${elsewhere.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
            'content-type': 'text/html',
          },
        }),
        protocol,
      );
      const e = await failure(selfSubjectReview(await connect(s.url)));
      assert.equal(
        e.message,
        'create selfsubjectreviews.authentication.k8s.io: the server answered 302, a redirect, which fleet does not follow',
      );
      assert.equal(s.requests.length, 1);
      assert.equal(s.requests[0].headers.authorization, `Bearer ${TOKEN}`);
      assert.deepEqual(elsewhere.requests, []);
    });
  }
});

describe('a 401 to every request of an exec user', () => {
  it('runs the plugin at most twice per request, as client-go', async () => {
    const s = await serve(
      hs.answer({ kind: 'Status', status: 'Failure', message: 'Unauthorized', code: 401 }, { status: 401 }),
    );
    const dir = mkdtempSync(join(tmpdir(), 'fleet-hostile-exec-'));
    const count = join(dir, 'runs');
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: [PLUGIN, '--count', count],
      interactiveMode: 'Never',
    };
    const client = await connect(s.url, { user: { exec } as UserEntry });
    const e = await failure(selfSubjectReview(client));
    assert.equal(e.kind, 'unauthorized');
    assert.equal(readFileSync(count, 'utf8').trim().split('\n').length, 2);
    assert.equal(s.requests.length, 2);
  });
});

async function waitFor(ok: () => boolean, what: string, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
