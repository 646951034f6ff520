// Who holds this credential (issue 39, item 3), against a real kube-apiserver audit log: an extra API server of the test
// control plane runs with --audit-policy-file (every request at Metadata level) and --audit-log-path. Requests are made
// with credentials fleet generated (a bound token in a hub Secret, one in a kubeconfig file, a client certificate) and
// with one it rotated; the credential-id each audit event records in user.extra["authentication.kubernetes.io/
// credential-id"] is handed to `fleet creds list --credential-id`, which must name the Secret or file holding it. The
// old credential of a rotation is found nowhere. No token, key or certificate made here appears in any output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { CredentialList } from '../../src/creds/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigInSecret } from '../support/kubeconfig.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('credid');
const hubNs = `${run}-hub`;
const saNs = `${run}-sa`;
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';
const HUB = ['--hub-kubeconfig', hub.kubeconfig];

const outputs: Array<{ what: string; res: CliResult }> = [];
const secrets = new Set<string>();
let dir: string;
let auditLog: string;
let audited: ExtraApiserver;

async function fleet(args: string[]): Promise<CliResult> {
  const res = await runFleet(args, { timeoutMs: 120_000 });
  outputs.push({ what: args.join(' '), res });
  return res;
}

/** The kubeconfig a hub Secret holds, its token, key and certificate remembered as secrets to grep for. */
async function heldKubeconfig(name: string): Promise<string> {
  const s = JSON.parse(await kubectl(hub, ['get', 'secret', name, '-n', hubNs, '-o', 'json']));
  return remember(kubeconfigInSecret(s));
}

function remember(text: string): string {
  const u = (yaml.load(text) as { users: Array<{ user: Record<string, string> }> }).users[0].user;
  for (const k of ['token', 'client-key-data', 'client-certificate-data']) if (u[k]) secrets.add(u[k]);
  if (u['client-key-data']) secrets.add(Buffer.from(u['client-key-data'], 'base64').toString('utf8').trim());
  return text;
}

/**
 * One request to the audited server with the credential of a kubeconfig (pointed at that server): listing ConfigMaps
 * in a namespace named for the request, so its audit event is found by objectRef.namespace. Allowed or not, the
 * request is authenticated and audited.
 */
async function request(kubeconfigText: string, marker: string): Promise<void> {
  const doc = yaml.load(kubeconfigText) as { clusters: Array<{ cluster: Record<string, unknown> }> };
  doc.clusters[0].cluster.server = audited.url;
  doc.clusters[0].cluster['certificate-authority-data'] = readFileSync(audited.caFile).toString('base64');
  const path = join(dir, `${marker}.kubeconfig`);
  writeFileSync(path, yaml.dump(doc), { mode: 0o600 });
  const r = await kubectlResult(audited, ['get', 'configmaps', '-n', marker], { kubeconfig: path });
  assert.doesNotMatch(r.stderr, /Unauthorized/, `${marker}: the credential was not accepted`);
}

interface AuditEvent {
  stage: string;
  user: { username: string; extra?: Record<string, string[]> };
  objectRef?: { namespace?: string; resource?: string; subresource?: string; name?: string };
  annotations?: Record<string, string>;
  responseStatus?: { code?: number };
}

function auditEvents(): AuditEvent[] {
  if (!existsSync(auditLog)) return [];
  return readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** The credential-id the audit log recorded for the request marked `marker` (waits for the event to be written). */
async function recordedId(marker: string): Promise<{ id: string | undefined; username: string }> {
  for (let i = 0; i < 100; i++) {
    const e = auditEvents().find((x) => x.objectRef?.namespace === marker && x.stage === 'ResponseComplete');
    if (e) return { id: e.user.extra?.[CREDENTIAL_ID]?.[0], username: e.user.username };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no audit event for ${marker} in ${auditLog}`);
}

async function holders(id: string, extra: string[] = []): Promise<CliResult> {
  return fleet(['creds', 'list', ...HUB, ...extra, '--credential-id', id, '-o', 'json']);
}

async function generate(name: string, target: string[], extra: string[]): Promise<CliResult> {
  const res = await fleet([
    'creds',
    'generate',
    ...target,
    ...HUB,
    '--role',
    'pod-lister',
    '--create-namespace',
    '--duration',
    '2h',
    '--secret',
    `${hubNs}/${name}`,
    '--format',
    'multicluster-runtime',
    ...extra,
    '-o',
    'json',
  ]);
  assert.equal(res.code, 0, res.stderr);
  return res;
}

before(async () => {
  dir = scratchDir();
  auditLog = join(dir, `${run}-audit.log`);
  const policy = join(dir, `${run}-audit-policy.yaml`);
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
  audited = await startExtraApiserver({
    name: `${run}-audit`,
    extraArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-format=json'],
  });
  await applyYaml(hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: hubNs } }));
});

after(async () => {
  await audited?.stop();
  await kubectlResult(hub, ['delete', 'namespace', hubNs, '--wait=false']);
  await kubectlResult(m1, ['delete', 'namespace', saNs, '--wait=false']);
});

describe(
  'fleet creds list --credential-id: the holder of the credential an audit event names',
  { concurrency: false },
  () => {
    const AUDITED = () => ['--kubeconfig', audited.kubeconfig, '--cluster', audited.context];

    it('a generated bound token in a hub Secret: JTI=<jti> in the audit log, traced to that Secret', async () => {
      await generate('gen', AUDITED(), ['--service-account', `${saNs}/gen`]);
      const text = await heldKubeconfig('gen');
      const marker = `${run}-gen`;
      await request(text, marker);
      const { id, username } = await recordedId(marker);
      assert.equal(username, `system:serviceaccount:${saNs}:gen`);
      assert.match(id ?? '', /^JTI=[0-9a-f-]{36}$/, 'the API server records the jti of a bound token');

      const res = await holders(id!);
      assert.equal(res.code, 0, res.stderr);
      const list = res.json<CredentialList>();
      assert.deepEqual(list.credentialIds, [id]);
      assert.deepEqual(
        list.items.map((i) => [i.location, i.source, i.method, i.credentialId]),
        [
          [
            `secret hub:${hubNs}/gen`,
            { kind: 'secret', hub: 'hub', namespace: hubNs, name: 'gen', key: 'kubeconfig' },
            'bound-token',
            id,
          ],
        ],
      );
      // The table says the same in one row; -o wide shows the id.
      const table = await fleet(['creds', 'list', ...HUB, '--credential-id', id!, '-o', 'wide']);
      assert.equal(table.code, 0, table.stderr);
      const rows = table.stdout.trim().split('\n');
      assert.equal(rows.length, 2, table.stdout);
      assert.match(rows[1], new RegExp(`^secret hub:${hubNs}/gen .*${id}`));
    });

    it('a rotated credential: the new token traced to the same Secret, the old one found nowhere', async () => {
      await generate('rot', AUDITED(), ['--service-account', `${saNs}/rot`]);
      const before = await heldKubeconfig('rot');
      await request(before, `${run}-rot0`);
      const rotate = await fleet(['creds', 'rotate', ...AUDITED().slice(0, 2), ...HUB, `${hubNs}/rot`, '-o', 'json']);
      assert.equal(rotate.code, 0, rotate.stderr + rotate.stdout);
      const afterText = await heldKubeconfig('rot');
      assert.notEqual(afterText, before);
      await request(afterText, `${run}-rot1`);
      const old = (await recordedId(`${run}-rot0`)).id!;
      const now = (await recordedId(`${run}-rot1`)).id!;
      assert.notEqual(old, now);
      // The TokenRequest of the rotation is audited with the id it issued: the one now in the Secret.
      const issued = auditEvents().filter(
        (e) =>
          e.objectRef?.subresource === 'token' &&
          e.objectRef.name === 'rot' &&
          e.annotations?.['authentication.kubernetes.io/issued-credential-id'] === now,
      );
      assert.ok(issued.length > 0, 'the rotation minted the token the Secret now holds');

      const found = await holders(now);
      assert.equal(found.code, 0, found.stderr);
      assert.deepEqual(
        found.json<CredentialList>().items.map((i) => i.location),
        [`secret hub:${hubNs}/rot`],
      );
      const gone = await holders(old);
      assert.equal(gone.code, 1, 'a credential nobody holds is not a success');
      assert.deepEqual(gone.json<CredentialList>().items, []);
      // Said in one note line (not in -o json, whose shape is the empty list and the ids asked for).
      const said = await fleet(['creds', 'list', ...HUB, '--credential-id', old]);
      assert.equal(said.code, 1);
      assert.match(
        said.stderr,
        new RegExp(`no credential with credential-id ${old} in the kubeconfig files and hub Secrets`),
      );
    });

    it('a kubeconfig file: traced to the file and context; whoami and --live report the same id from the server', async () => {
      const out = join(dir, `${run}-file.kubeconfig`);
      const res = await fleet([
        'creds',
        'generate',
        ...AUDITED(),
        '--service-account',
        `${saNs}/file`,
        '--role',
        'pod-lister',
        '--create-namespace',
        '--duration',
        '2h',
        '--out',
        out,
      ]);
      assert.equal(res.code, 0, res.stderr);
      const text = remember(readFileSync(out, 'utf8'));
      await request(text, `${run}-file`);
      const { id } = await recordedId(`${run}-file`);

      const found = await holders(id!, ['--kubeconfig', out, '--live']);
      assert.equal(found.code, 0, found.stderr);
      const items = found.json<CredentialList>().items;
      assert.equal(items.length, 1);
      assert.equal(items[0].source.kind, 'kubeconfig');
      assert.equal((items[0].source as { path: string }).path, out);
      assert.equal(items[0].live?.credentialId, id, 'the server, asked with it, records the same id');
      assert.deepEqual(items[0].problems, []);

      const who = await fleet(['auth', 'whoami', '--kubeconfig', out, '-o', 'json']);
      assert.equal(who.code, 0, who.stderr);
      assert.deepEqual(who.json<WhoAmIList>().items[0].user?.extra[CREDENTIAL_ID], [id]);
    });

    it('a client certificate fleet generated: X509SHA256=<hex> of its DER, traced to its Secret', async () => {
      // Made on member-1, whose controller manager signs with the client CA every test API server trusts, so the same
      // certificate authenticates on the audited server.
      const user = `${run}-ci`;
      await generate(
        'cert',
        ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context],
        ['--method', 'client-cert', '--user', user, '--group', 'ci', '--namespace', saNs],
      );
      const text = await heldKubeconfig('cert');
      await request(text, `${run}-cert`);
      const { id, username } = await recordedId(`${run}-cert`);
      assert.equal(username, user);
      assert.match(id ?? '', /^X509SHA256=[0-9a-f]{64}$/);

      // As an audit event shows it, and in capitals (hex is hex): the same holder.
      for (const asked of [id!, id!.replace(/=(.*)$/, (_, hex: string) => `=${hex.toUpperCase()}`)]) {
        const res = await holders(asked);
        assert.equal(res.code, 0, res.stderr);
        assert.deepEqual(
          res.json<CredentialList>().items.map((i) => [i.location, i.method, i.credentialId]),
          [[`secret hub:${hubNs}/cert`, 'client-cert', id]],
        );
      }
    });

    it('creds list shows every credential-id, and says when the audit log cannot name one (a legacy token)', async () => {
      await generate(
        'legacy',
        ['--kubeconfig', m1.kubeconfig, '--cluster', m1.context],
        ['--service-account', `${saNs}/legacy`, '--method', 'legacy-token'],
      );
      await heldKubeconfig('legacy');
      const res = await fleet(['creds', 'list', ...HUB, '-o', 'json']);
      const mine = res
        .json<CredentialList>()
        .items.filter((i) => i.source.kind === 'secret' && i.source.namespace === hubNs)
        .map((i) => [
          (i.source as { name: string }).name,
          i.method,
          i.credentialId?.replace(/=.*/, '=') ?? i.noCredentialId,
        ]);
      assert.deepEqual(mine, [
        ['cert', 'client-cert', 'X509SHA256='],
        ['gen', 'bound-token', 'JTI='],
        ['legacy', 'legacy-token', 'a legacy ServiceAccount token: the API server records no credential-id for it'],
        ['rot', 'bound-token', 'JTI='],
      ]);
      const wide = await fleet(['creds', 'list', ...HUB, '-o', 'wide']);
      assert.match(wide.stdout, new RegExp(`secret hub:${hubNs}/legacy .*none \\(legacy token\\)`));
    });

    it('a value that is not a credential-id is one usage line, exit 2, before anything is read', async () => {
      const res = await fleet(['creds', 'list', '--hub-kubeconfig', '/nonexistent/hub', '--credential-id', 'abc']);
      assert.equal(res.code, 2);
      assert.equal(
        res.stderr.trim(),
        'error: --credential-id: expected JTI=<jti> or X509SHA256=<64 hex digits> (user.extra["authentication.kubernetes.io/credential-id"] of an audit event), got "abc"',
      );
    });

    it('no secret made here appears in any output', () => {
      assert.ok(secrets.size >= 5);
      for (const { what, res } of outputs)
        for (const s of secrets) {
          assert.ok(!res.stdout.includes(s), `${what}: stdout holds a secret`);
          assert.ok(!res.stderr.includes(s), `${what}: stderr holds a secret`);
        }
    });
  },
);
