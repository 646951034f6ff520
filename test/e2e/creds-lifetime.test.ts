// Real lifetimes against the real control plane (issue 19, item 3): `creds generate --duration 30d` (and 720h) issues a
// token and a client certificate that live 30 days; `creds list --expiring-within 45d` exits 1 naming them and 720h
// parses; rotations ask for the lifetime generate was asked for, so a client certificate rotated twice keeps
// NotAfter - NotBefore (also for a Secret written before the lifetime was recorded); an API server that issues less
// than asked (--service-account-max-token-expiration on an extra apiserver; the CSR signer's 1-year maximum) is said in
// the output of generate and rotate, table and JSON.
// No secret made here appears in any captured output.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import { type CliResult, runFleet } from '../support/cli.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('life');
const nsSys = `${run}-sys`;
const hubNs = `${run}-hub`;
const MEMBER = ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context];
const HUB = ['--hub-kubeconfig', hub.kubeconfig];
const DAYS_30 = 30 * 86_400;

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
let dir: string;
let extra: ExtraApiserver | undefined;

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}

const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

async function hubSecret(name: string): Promise<any> {
  return JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
}

/** The kubeconfig user a Secret (or file) holds; its token or key remembered as secrets to grep for. */
function userOf(kubeconfigText: string): Record<string, string> {
  const u = (yaml.load(kubeconfigText) as any).users[0].user as Record<string, string>;
  if (u.token) secrets.add(u.token);
  if (u['client-key-data']) {
    secrets.add(u['client-key-data']);
    secrets.add(decode(u['client-key-data']).trim());
  }
  return u;
}

const secretUser = async (name: string, key = 'kubeconfig') => userOf(decode((await hubSecret(name)).data[key]));

function claims(token: string): { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

function validity(user: Record<string, string>): { notBefore: number; notAfter: number; span: number } {
  const c = new X509Certificate(decode(user['client-certificate-data']));
  const notBefore = Date.parse(c.validFrom) / 1000;
  const notAfter = Date.parse(c.validTo) / 1000;
  return { notBefore, notAfter, span: notAfter - notBefore };
}

const about = (seconds: number, expected: number, slack: number, what: string) =>
  assert.ok(Math.abs(seconds - expected) <= slack, `${what}: ${seconds}s is not about ${expected}s`);

before(async () => {
  dir = scratchDir();
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
});

after(async () => {
  await extra?.stop();
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', nsSys, '--wait=false']);
  // The cluster-wide grants this file made (named after its ServiceAccounts' namespace or its users, both carry `run`).
  const names = (
    await kubectl(m1, [
      'get',
      'clusterroles,clusterrolebindings',
      '-l',
      'app.kubernetes.io/managed-by=fleet',
      '-o',
      'name',
    ])
  )
    .split('\n')
    .filter((n) => n.includes(run));
  if (names.length > 0) await kubectlResult(m1, ['delete', ...names]);
});

describe('lifetimes of days (creds generate, list, rotate)', { concurrency: false }, () => {
  it('generate --duration 30d, token: the server issues 30 days, the output says so, the Secret records the asked lifetime', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--service-account',
      `${nsSys}/tok`,
      '--role',
      'pod-lister',
      '--create-namespace',
      '--duration',
      '30d',
      '--secret',
      `${hubNs}/tok`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json();
    assert.deepEqual(out.lifetime, { requestedSeconds: DAYS_30, issuedSeconds: DAYS_30, shortened: false });
    about(Date.parse(out.expires) / 1000, Date.now() / 1000 + DAYS_30, 120, 'expires');
    assert.deepEqual(out.warnings, []);
    const s = await hubSecret('tok');
    assert.equal(s.metadata.annotations['fleet.dev/credential-lifetime'], String(DAYS_30));
    const c = claims(userOf(decode(s.data.kubeconfig)).token);
    assert.equal(c.exp - c.iat, DAYS_30);
  });

  it('generate --duration 30d, client certificate: NotAfter is 30 days on (the signer allows a year)', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--method',
      'client-cert',
      '--user',
      `${run}-cert`,
      '--group',
      'ci',
      '--role',
      'pod-lister',
      '--duration',
      '30d',
      '--secret',
      `${hubNs}/cert`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json();
    assert.deepEqual(out.lifetime, { requestedSeconds: DAYS_30, issuedSeconds: DAYS_30, shortened: false });
    const v = validity(await secretUser('cert'));
    assert.equal(v.span, DAYS_30, 'NotAfter - NotBefore');
    about(v.notAfter, Date.now() / 1000 + DAYS_30 - 300, 120, 'NotAfter');
    assert.equal((await hubSecret('cert')).metadata.annotations['fleet.dev/credential-lifetime'], String(DAYS_30));
  });

  it('generate --duration 2y, client certificate: the signer issues its maximum (1 year, --cluster-signing-duration) and the output says so', async () => {
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--method',
      'client-cert',
      '--user',
      `${run}-long`,
      '--role',
      'pod-lister',
      '--duration',
      '2y',
      '--secret',
      `${hubNs}/long`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const out = res.json();
    assert.deepEqual(out.lifetime, {
      requestedSeconds: 2 * 365 * 86_400,
      issuedSeconds: 365 * 86_400,
      shortened: true,
    });
    assert.deepEqual(out.warnings, [
      "the server issued a lifetime of 1y, not the 2y asked for (the signer's maximum, e.g. kube-controller-manager --cluster-signing-duration); rotations ask for 2y again",
    ]);
    assert.equal(validity(await secretUser('long')).span, 365 * 86_400);
    assert.equal(
      (await hubSecret('long')).metadata.annotations['fleet.dev/credential-lifetime'],
      String(2 * 365 * 86_400),
      'the request is recorded, not the cut',
    );
  });

  it('generate --duration 720h (the documented example) to a file: 30 days, recorded in the file, shown in the table', async () => {
    const file = join(dir, `${run}-720h.kubeconfig`);
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      '--service-account',
      `${nsSys}/file`,
      '--role',
      'pod-lister',
      '--duration',
      '720h',
      '--out',
      file,
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^lifetime\s+30d$/m);
    const text = readFileSync(file, 'utf8');
    const c = claims(userOf(text).token);
    assert.equal(c.exp - c.iat, DAYS_30);
    const facts = (yaml.load(text) as any).extensions.find((e: any) => e.name === 'fleet.dev/credential').extension;
    assert.equal(facts.lifetime, String(DAYS_30));
  });

  it('creds list --expiring-within 45d exits 1 naming both; 720h parses; 7d does not mark them', async () => {
    const wide = await fleet([
      'creds',
      'list',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      '--expiring-within',
      '45d',
      '-o',
      'json',
    ]);
    assert.equal(wide.code, 1, wide.stderr);
    const expiring = (wide.json().items as any[]).filter((i) => i.expiring).map((i) => i.location as string);
    for (const name of ['tok', 'cert'])
      assert.ok(
        expiring.some((l) => l.includes(`${hubNs}/${name}`)),
        `${name} not named: ${expiring.join(', ')}`,
      );
    const table = await fleet(['creds', 'list', '--kubeconfig', m1.kubeconfig, ...HUB, '--expiring-within', '45d']);
    assert.equal(table.code, 1);
    assert.match(table.stdout, new RegExp(`${hubNs}/tok`));
    assert.match(table.stderr, /credentials? expires? within 45d/);
    const hours = await fleet([
      'creds',
      'list',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      '--expiring-within',
      '720h',
      '-o',
      'json',
    ]);
    assert.notEqual(hours.code, 2, hours.stderr);
    assert.equal(hours.json().expiringWithin, '720h');
    const week = await fleet([
      'creds',
      'list',
      '--kubeconfig',
      m1.kubeconfig,
      ...HUB,
      '--expiring-within',
      '7d',
      '-o',
      'json',
    ]);
    assert.notEqual(week.code, 2, week.stderr);
    const ours = (week.json().items as any[]).filter(
      (i) => /\/(tok|cert)$/.test(i.location) && i.location.includes(hubNs),
    );
    assert.equal(ours.length, 2);
    assert.ok(
      ours.every((i) => !i.expiring),
      JSON.stringify(ours),
    );
  });

  it('rotating the token asks for the recorded 30 days again', async () => {
    const res = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/tok`, '-o', 'json']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const item = res.json().items[0];
    assert.equal(item.status, 'rotated', JSON.stringify(item));
    assert.deepEqual(item.lifetime, { requestedSeconds: DAYS_30, issuedSeconds: DAYS_30, shortened: false });
    const c = claims((await secretUser('tok')).token);
    assert.equal(c.exp - c.iat, DAYS_30);
  });

  it('rotating a client certificate twice keeps NotAfter - NotBefore: recorded lifetime, and a Secret written before it was recorded', async () => {
    // 24h: a lifetime of 8h or more is where the signer does not add its 5-minute backdate to the span (the old drift).
    const res = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--method',
      'client-cert',
      '--user',
      `${run}-day`,
      '--role',
      'pod-lister',
      '--duration',
      '24h',
      '--secret',
      `${hubNs}/day`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const spans = [validity(await secretUser('day')).span];
    const asked: number[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/day`, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      asked.push(r.json().items[0].lifetime?.requestedSeconds);
      spans.push(validity(await secretUser('day')).span);
    }
    assert.deepEqual(spans, [86_400, 86_400, 86_400]);
    assert.deepEqual(asked, [86_400, 86_400]);

    // A Secret from before the lifetime was recorded: the lifetime is read back from the certificate, without drift.
    await kubectl(hub, ['annotate', 'secret', 'day', '-n', hubNs, 'fleet.dev/credential-lifetime-']);
    const legacy: number[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/day`, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      legacy.push(validity(await secretUser('day')).span);
    }
    assert.deepEqual(legacy, [86_400, 86_400]);
    assert.equal(
      (await hubSecret('day')).metadata.annotations['fleet.dev/credential-lifetime'],
      '86400',
      'recorded again on rotation',
    );

    // A short one (under 8h, where the span is the lifetime plus the backdate) keeps its span as well.
    const short = await fleet([
      'creds',
      'generate',
      ...MEMBER,
      ...HUB,
      '--method',
      'client-cert',
      '--user',
      `${run}-short`,
      '--role',
      'pod-lister',
      '--duration',
      '1h',
      '--secret',
      `${hubNs}/short`,
      '--format',
      'multicluster-runtime',
      '-o',
      'json',
    ]);
    assert.equal(short.code, 0, short.stderr);
    await kubectl(hub, ['annotate', 'secret', 'short', '-n', hubNs, 'fleet.dev/credential-lifetime-']);
    const shortSpans = [validity(await secretUser('short')).span];
    for (let i = 0; i < 2; i++) {
      const r = await fleet(['creds', 'rotate', '--kubeconfig', m1.kubeconfig, ...HUB, `${hubNs}/short`, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      shortSpans.push(validity(await secretUser('short')).span);
    }
    assert.deepEqual(shortSpans, [3900, 3900, 3900]);
  });
});

describe(
  'a server that issues less than asked (--service-account-max-token-expiration=2h)',
  { concurrency: false },
  () => {
    const file = () => join(dir, `${run}-capped.kubeconfig`);

    it('generate says the lifetime issued and the one asked, in JSON and as a warning in the table', async () => {
      extra = await startExtraApiserver({
        name: `${run}-cap`,
        extraArgs: ['--service-account-max-token-expiration=2h'],
      });
      const base = [
        'creds',
        'generate',
        '--kubeconfig',
        extra.kubeconfig,
        '--cluster',
        extra.context,
        '--role',
        'pod-lister',
        '--create-namespace',
        '--duration',
        '30d',
      ];
      const res = await fleet([...base, '--service-account', `${nsSys}/capped`, '--out', file(), '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const out = res.json();
      assert.deepEqual(out.lifetime, { requestedSeconds: DAYS_30, issuedSeconds: 7200, shortened: true });
      assert.deepEqual(out.warnings, [
        'the server issued a lifetime of 2h, not the 30d asked for (kube-apiserver --service-account-max-token-expiration); rotations ask for 30d again',
      ]);
      about(Date.parse(out.expires) / 1000, Date.now() / 1000 + 7200, 120, 'expires');
      const c = claims(userOf(readFileSync(file(), 'utf8')).token);
      assert.equal(c.exp - c.iat, 7200);

      const table = await fleet([
        ...base,
        '--service-account',
        `${nsSys}/capped2`,
        '--out',
        join(dir, `${run}-capped2.kubeconfig`),
      ]);
      assert.equal(table.code, 0, table.stderr);
      userOf(readFileSync(join(dir, `${run}-capped2.kubeconfig`), 'utf8'));
      assert.match(table.stdout, /^lifetime\s+2h \(asked 30d\)$/m);
      assert.match(
        table.stderr,
        /^warning: the server issued a lifetime of 2h, not the 30d asked for \(kube-apiserver --service-account-max-token-expiration\)/m,
      );
    });

    it('rotate asks for 30d again (not the 2h it got), and says what was issued', async () => {
      const res = await fleet(['creds', 'rotate', '--kubeconfig', extra!.kubeconfig, '--file', file(), '-o', 'json']);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const item = res.json().items[0];
      assert.equal(item.status, 'rotated', JSON.stringify(item));
      assert.deepEqual(item.lifetime, { requestedSeconds: DAYS_30, issuedSeconds: 7200, shortened: true });
      const text = readFileSync(file(), 'utf8');
      userOf(text);
      assert.equal(
        (yaml.load(text) as any).extensions.find((e: any) => e.name === 'fleet.dev/credential').extension.lifetime,
        String(DAYS_30),
      );

      const table = await fleet(['creds', 'rotate', '--kubeconfig', extra!.kubeconfig, '--file', file()]);
      assert.equal(table.code, 0, table.stderr + table.stdout);
      userOf(readFileSync(file(), 'utf8'));
      assert.match(table.stdout, /2h \(asked 30d\)/);
      assert.match(
        table.stderr,
        new RegExp(
          `^warning: ${file().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the server issued a lifetime of 2h, not the 30d asked for`,
          'm',
        ),
      );
    });
  },
);

describe('secrets', () => {
  it('no secret made here appears in any output', () => {
    assert.ok(secrets.size >= 8, `only ${secrets.size} secrets remembered`);
    for (const { what, res } of outputs) {
      for (const x of secrets)
        assert.ok(!res.stdout.includes(x) && !res.stderr.includes(x), `a secret in the output of fleet ${what}`);
    }
  });
});
