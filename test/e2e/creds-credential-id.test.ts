// Who holds this credential (issue 39, item 3), against a real kube-apiserver audit log: an extra API server of the test
// control plane runs with --audit-policy-file (every request at Metadata level) and --audit-log-path. Requests are made
// with credentials fleet generated (a bound token in a hub Secret, one in a kubeconfig file, a client certificate) and
// with one it rotated; the credential-id each audit event records in user.extra["authentication.kubernetes.io/
// credential-id"] is handed to `fleet creds list --credential-id`, which must name the Secret or file holding it. The
// old credential of a rotation is found nowhere. Adopted credentials too (issue 39 item 2): Secrets fleet did not write
// (an Argo CD cluster Secret with a legacy token, which the server's own token controller fills; hand-made
// multicluster-runtime Secrets with a client certificate and with a --token-auth-file static token) are traced, or shown
// to leave no credential-id, before `fleet creds adopt`, and by their bound token's JTI after it and after a rotation.
// No token, key or certificate made here appears in any output.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yaml from 'js-yaml';

import type { CredentialList } from '../../src/creds/list.js';
import type { WhoAmIList } from '../../src/commands/auth/whoami.js';
import { type CliResult, runFleet } from '../support/cli.js';
import { argocdManagerByHand } from '../support/argocd.js';
import { type ExtraApiserver, startExtraApiserver } from '../support/extra-apiserver.js';
import { applyYaml, kubectl, kubectlResult, loadControlPlane, scratchDir, uniqueName } from '../support/fixture.js';
import { kubeconfigInSecret } from '../support/kubeconfig.js';
import { makeLeaf } from '../support/pki.js';

const cp = loadControlPlane();
const hub = cp.hub;
const m1 = cp.members[0];
const run = uniqueName('credid');
const hubNs = `${run}-hub`;
const saNs = `${run}-sa`;
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';
const HUB = ['--hub-kubeconfig', hub.kubeconfig];

const staticToken = randomBytes(24).toString('hex');
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

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * A token with the same header and claims as `token` (so the same kid and jti) signed RS256 by a key of our own: what
 * anyone who once read the real token can make, and what the API server must refuse.
 */
function forgeWithOwnKey(token: string): string {
  const [header, claims] = token.split('.');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), privateKey).toString('base64url');
  return `${header}.${claims}.${signature}`;
}
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

/** A one-context kubeconfig for the audited server with this user entry. */
function kubeconfigFor(user: Record<string, string>): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'audited',
        cluster: { server: audited.url, 'certificate-authority-data': b64(readFileSync(audited.caFile, 'utf8')) },
      },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'audited', context: { cluster: 'audited', user: 'u' } }],
    'current-context': 'audited',
  });
}
const tokenKubeconfig = (token: string) => kubeconfigFor({ token });

/** A kubeconfig file (0600) of this text in the scratch directory. */
function writeFor(text: string, marker: string): Promise<string> {
  const path = join(dir, `${marker}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return Promise.resolve(path);
}

/**
 * The credential the Argo CD cluster Secret holds now, as a kubeconfig built from the Secret's own content (server,
 * config.bearerToken, config.tlsClientConfig.caData): what Argo CD connects with.
 */
async function argoKubeconfig(): Promise<string> {
  const s = JSON.parse(await kubectl(hub, ['get', 'secret', `${run}-argocd`, '-n', hubNs, '-o', 'json']));
  const config = JSON.parse(decode(s.data.config)) as { bearerToken: string; tlsClientConfig: { caData: string } };
  secrets.add(config.bearerToken);
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'argo',
        cluster: { server: decode(s.data.server), 'certificate-authority-data': config.tlsClientConfig.caData },
      },
    ],
    users: [{ name: 'argo', user: { token: config.bearerToken } }],
    contexts: [{ name: 'argo', context: { cluster: 'argo', user: 'argo' } }],
    'current-context': 'argo',
  });
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
  // One static token user, as a hand-made multicluster-runtime Secret holds one (the adoption tests below).
  const tokens = join(dir, `${run}-tokens.csv`);
  writeFileSync(tokens, `${staticToken},${run}-static,${run}-static-uid\n`, { mode: 0o600 });
  secrets.add(staticToken);
  audited = await startExtraApiserver({
    name: `${run}-audit`,
    extraArgs: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-format=json',
      `--token-auth-file=${tokens}`,
    ],
    // The token controller fills the legacy token Secret `argocd cluster add` makes (the adoption tests below).
    controllers: ['serviceaccount-token-controller'],
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

    // Adopted credentials (issue 39 items 2 and 3): a Secret fleet did not write, as `argocd cluster add` leaves it,
    // on the audited server. Its legacy token leaves no credential-id in the log; once adopted, the bound token in it
    // does, and that id names the Secret; after a rotation the new id does and the adopted one names nothing.
    const argoSa = `argocd-manager-${run}`;
    const argoSecret = `${run}-argocd`;
    const ARGO_LOCATION = `secret hub:${hubNs}/${argoSecret}`;
    let legacyToken = '';
    let adoptedId = '';

    it('an Argo CD cluster Secret fleet did not write: its legacy token is audited with no credential-id, which creds list says, and no recorded id names it', async () => {
      // What `argocd cluster add` installs (as creds-adopt.test.ts builds it), on the audited server, whose token
      // controller fills the legacy token Secret.
      legacyToken = await argocdManagerByHand(audited, argoSa);
      secrets.add(legacyToken);
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: argoSecret,
            namespace: hubNs,
            labels: { 'argocd.argoproj.io/secret-type': 'cluster' },
          },
          type: 'Opaque',
          data: {
            name: b64('audited'),
            server: b64(audited.url),
            config: b64(
              JSON.stringify({
                bearerToken: legacyToken,
                tlsClientConfig: { insecure: false, caData: b64(readFileSync(audited.caFile, 'utf8')) },
              }),
            ),
            project: b64('team-a'),
          },
        }),
      );

      // A request with the legacy token: authenticated, audited, and no credential-id recorded for it.
      const marker = `${run}-legacy0`;
      await request(await argoKubeconfig(), marker);
      const { id, username } = await recordedId(marker);
      assert.equal(username, `system:serviceaccount:kube-system:${argoSa}`);
      assert.equal(id, undefined, 'kube-apiserver 1.34 records no credential-id for a legacy token');
      const byLegacy = auditEvents().filter((e) => e.user.username === username);
      assert.ok(byLegacy.length > 0);
      assert.ok(byLegacy.every((e) => e.user.extra?.[CREDENTIAL_ID] === undefined));

      // creds list says why it has none (in JSON and in the wide table) and marks it adoptable.
      const list = await fleet(['creds', 'list', ...HUB, '-o', 'json']);
      assert.equal(list.code, 0, list.stderr);
      const item = list.json<CredentialList>().items.find((i) => i.location === ARGO_LOCATION);
      assert.ok(item, list.stdout);
      assert.equal(item.format, 'argocd');
      assert.equal(item.method, 'legacy-token');
      assert.equal(item.managedByFleet, false);
      assert.equal(item.credentialId, undefined);
      assert.equal(
        item.noCredentialId,
        'a legacy ServiceAccount token: the API server records no credential-id for it',
      );
      assert.deepEqual(item.adoptable, ['legacy', 'no expiry']);
      const wide = await fleet(['creds', 'list', ...HUB, '-o', 'wide']);
      assert.match(wide.stdout, new RegExp(`^${ARGO_LOCATION} .*none \\(legacy token\\)`, 'm'));

      // Every credential-id the log has recorded so far, asked at once: the holders of the others are named, this
      // Secret by none of them.
      const recorded = [...new Set(auditEvents().flatMap((e) => e.user.extra?.[CREDENTIAL_ID] ?? []))];
      assert.ok(recorded.length >= 4, recorded.join(' '));
      const all = await holders(
        recorded[0],
        recorded.slice(1).flatMap((r) => ['--credential-id', r]),
      );
      assert.equal(all.code, 0, all.stderr);
      const named = all.json<CredentialList>().items.map((i) => i.location);
      assert.ok(named.includes(`secret hub:${hubNs}/gen`), named.join(', '));
      assert.ok(!named.includes(ARGO_LOCATION), 'a recorded credential-id named the legacy-token Secret');
    });

    it('adopted into a bound token: a request made with the Secret content is audited with JTI=<jti>, which creds list --credential-id traces to the adopted Secret (JSON and table); the old token is refused', async () => {
      const res = await fleet([
        'creds',
        'adopt',
        ...AUDITED().slice(0, 2),
        ...HUB,
        `${hubNs}/${argoSecret}`,
        '--service-account',
        `${saNs}/argocd-view`,
        '--role',
        'view',
        '--duration',
        '30d',
        '--revoke-old',
        '--yes',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const adopted = res.json<{ items: Array<{ status: string; old: { revoked: boolean } }> }>().items[0];
      assert.equal(adopted.status, 'adopted', JSON.stringify(adopted));
      assert.equal(adopted.old.revoked, true);

      const marker = `${run}-adopted`;
      await request(await argoKubeconfig(), marker);
      const { id, username } = await recordedId(marker);
      assert.equal(username, `system:serviceaccount:${saNs}:argocd-view`);
      assert.match(id ?? '', /^JTI=[0-9a-f-]{36}$/);
      adoptedId = id!;
      // The adoption's TokenRequest issued exactly this id.
      assert.ok(
        auditEvents().some(
          (e) =>
            e.objectRef?.subresource === 'token' &&
            e.objectRef.name === 'argocd-view' &&
            e.annotations?.['authentication.kubernetes.io/issued-credential-id'] === id,
        ),
        'no TokenRequest of the adoption issued the id the request recorded',
      );

      const found = await holders(adoptedId);
      assert.equal(found.code, 0, found.stderr);
      const list = found.json<CredentialList>();
      assert.deepEqual(list.credentialIds, [adoptedId]);
      assert.deepEqual(
        list.items.map((i) => [i.location, i.source, i.format, i.method, i.managedByFleet, i.credentialId]),
        [
          [
            ARGO_LOCATION,
            { kind: 'secret', hub: 'hub', namespace: hubNs, name: argoSecret, key: 'config' },
            'argocd',
            'bound-token',
            true,
            adoptedId,
          ],
        ],
      );
      const table = await fleet(['creds', 'list', ...HUB, '--credential-id', adoptedId, '-o', 'wide']);
      assert.equal(table.code, 0, table.stderr);
      const rows = table.stdout.trim().split('\n');
      assert.equal(rows.length, 2, table.stdout);
      assert.match(rows[1], new RegExp(`^${ARGO_LOCATION} +argocd +bound-token .*${adoptedId}`));

      // --revoke-old deleted the legacy token Secret: the old token is refused (401), and that event names nobody.
      const refused = await kubectlResult(audited, ['get', 'configmaps', '-n', `${run}-legacy1`], {
        kubeconfig: await writeFor(tokenKubeconfig(legacyToken), `${run}-legacy1`),
      });
      assert.match(refused.stderr, /Unauthorized/);
    });

    it('the adopted Secret rotated: the new id traces to it, the adopted id to nothing (exit 1)', async () => {
      assert.ok(adoptedId, 'the adoption test did not run');
      const rot = await fleet([
        'creds',
        'rotate',
        ...AUDITED().slice(0, 2),
        ...HUB,
        `${hubNs}/${argoSecret}`,
        '-o',
        'json',
      ]);
      assert.equal(rot.code, 0, rot.stderr + rot.stdout);
      assert.equal(rot.json<{ items: Array<{ status: string }> }>().items[0].status, 'rotated');
      const marker = `${run}-argorot`;
      await request(await argoKubeconfig(), marker);
      const now = (await recordedId(marker)).id!;
      assert.match(now, /^JTI=/);
      assert.notEqual(now, adoptedId);

      const found = await holders(now);
      assert.equal(found.code, 0, found.stderr);
      assert.deepEqual(
        found.json<CredentialList>().items.map((i) => [i.location, i.credentialId]),
        [[ARGO_LOCATION, now]],
      );
      const gone = await holders(adoptedId);
      assert.equal(gone.code, 1, 'the adopted, since rotated credential is held by no one');
      assert.deepEqual(gone.json<CredentialList>().items, []);
      const said = await fleet(['creds', 'list', ...HUB, '--credential-id', adoptedId]);
      assert.equal(said.code, 1);
      assert.match(said.stderr, new RegExp(`no credential with credential-id ${adoptedId} in`));
    });

    it('a hand-made multicluster-runtime Secret with a client certificate: X509SHA256 traced to it before adoption; after, the bound token JTI is, and the certificate id names nothing', async () => {
      const name = `${run}-mcr`;
      const cert = await makeLeaf({
        ca: cp.clientCa,
        dir,
        base: `${run}-mcr-user`,
        cn: `${run}-mcr-user`,
        usage: 'client',
      });
      const key = readFileSync(cert.keyFile, 'utf8');
      const text = remember(
        kubeconfigFor({
          'client-certificate-data': b64(readFileSync(cert.certFile, 'utf8')),
          'client-key-data': b64(key),
        }),
      );
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
          data: { kubeconfig: b64(text) },
        }),
      );
      const location = `secret hub:${hubNs}/${name}`;
      await request(text, `${run}-mcr0`);
      const before = await recordedId(`${run}-mcr0`);
      assert.equal(before.username, `${run}-mcr-user`);
      assert.match(before.id ?? '', /^X509SHA256=[0-9a-f]{64}$/);
      const unmanaged = await holders(before.id!);
      assert.equal(unmanaged.code, 0, unmanaged.stderr);
      assert.deepEqual(
        unmanaged.json<CredentialList>().items.map((i) => [i.location, i.method, i.managedByFleet]),
        [[location, 'client-cert', false]],
      );

      const res = await fleet([
        'creds',
        'adopt',
        ...AUDITED().slice(0, 2),
        ...HUB,
        `${hubNs}/${name}`,
        '--service-account',
        `${saNs}/mcr-lister`,
        '--role',
        'pod-lister',
        '--duration',
        '2h',
        '--yes',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.equal(res.json<{ items: Array<{ status: string }> }>().items[0].status, 'adopted');
      const now = await heldKubeconfig(name);
      await request(now, `${run}-mcr1`);
      const after = await recordedId(`${run}-mcr1`);
      assert.equal(after.username, `system:serviceaccount:${saNs}:mcr-lister`);
      assert.match(after.id ?? '', /^JTI=/);
      const found = await holders(after.id!);
      assert.equal(found.code, 0, found.stderr);
      assert.deepEqual(
        found.json<CredentialList>().items.map((i) => [i.location, i.method, i.managedByFleet, i.credentialId]),
        [[location, 'bound-token', true, after.id]],
      );
      const gone = await holders(before.id!);
      assert.equal(gone.code, 1);
      assert.deepEqual(gone.json<CredentialList>().items, []);
    });

    it('a hand-made multicluster-runtime Secret with a static token: audited with no credential-id (as creds list says); adopted, its bound token JTI is traced to it', async () => {
      const name = `${run}-static`;
      const text = kubeconfigFor({ token: staticToken });
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: hubNs, labels: { 'sigs.k8s.io/multicluster-runtime-kubeconfig': 'true' } },
          data: { kubeconfig: b64(text) },
        }),
      );
      const location = `secret hub:${hubNs}/${name}`;
      await request(text, `${run}-static0`);
      const before = await recordedId(`${run}-static0`);
      assert.equal(before.username, `${run}-static`);
      assert.equal(before.id, undefined, 'kube-apiserver 1.34 records no credential-id for a --token-auth-file token');
      const list = await fleet(['creds', 'list', ...HUB, '-o', 'json']);
      assert.equal(list.code, 0, list.stderr);
      const item = list.json<CredentialList>().items.find((i) => i.location === location);
      assert.deepEqual(
        [item?.method, item?.credentialId, item?.noCredentialId],
        ['static-token', undefined, 'a static token (not a JWT): the API server records no credential-id for it'],
      );

      const res = await fleet([
        'creds',
        'adopt',
        ...AUDITED().slice(0, 2),
        ...HUB,
        `${hubNs}/${name}`,
        '--service-account',
        `${saNs}/static-lister`,
        '--role',
        'pod-lister',
        '--duration',
        '2h',
        '--yes',
        '-o',
        'json',
      ]);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.equal(res.json<{ items: Array<{ status: string }> }>().items[0].status, 'adopted');
      await request(await heldKubeconfig(name), `${run}-static1`);
      const after = await recordedId(`${run}-static1`);
      assert.equal(after.username, `system:serviceaccount:${saNs}:static-lister`);
      assert.match(after.id ?? '', /^JTI=/);
      const found = await holders(after.id!);
      assert.equal(found.code, 0, found.stderr);
      assert.deepEqual(
        found.json<CredentialList>().items.map((i) => [i.location, i.method, i.managedByFleet, i.credentialId]),
        [[location, 'bound-token', true, after.id]],
      );
    });

    it('a forged token copying a real jti into a second hub Secret: both holders flagged; --live says the server accepts the real one, and only its signature verifies against the member keys', async () => {
      await generate('real', AUDITED(), ['--service-account', `${saNs}/real`]);
      const realText = await heldKubeconfig('real');
      const doc = yaml.load(realText) as { users: Array<{ user: { token: string } }> };
      const realToken = doc.users[0].user.token;
      const forged = forgeWithOwnKey(realToken);
      secrets.add(forged);
      assert.notEqual(forged, realToken);
      // A second Secret of the same format holding the forged copy (what anyone who may write a hub Secret can make).
      const real = JSON.parse(await kubectl(hub, ['get', 'secret', 'real', '-n', hubNs, '-o', 'json'])) as {
        metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
        data: Record<string, string>;
      };
      doc.users[0].user.token = forged;
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'forged', namespace: hubNs, labels: real.metadata.labels ?? {} },
          data: Object.fromEntries(
            Object.keys(real.data).map((k) => [k, k === 'kubeconfig' ? b64(yaml.dump(doc)) : real.data[k]]),
          ),
        }),
      );
      await request(realText, `${run}-real`);
      const { id } = await recordedId(`${run}-real`);
      const jti = JSON.parse(Buffer.from(realToken.split('.')[1], 'base64url').toString('utf8')) as { jti: string };
      assert.equal(id, `JTI=${jti.jti}`);

      // Offline: two holders of one id with different tokens, each flagged with the other, and one warning.
      const offline = await holders(id);
      assert.equal(offline.code, 0, offline.stderr);
      const list = offline.json<CredentialList>();
      const locations = [`secret hub:${hubNs}/forged`, `secret hub:${hubNs}/real`];
      assert.deepEqual(
        list.items.map((i) => [i.location, i.credentialId, i.credentialIdShared]),
        [
          [locations[0], id, { otherHolders: [locations[1]] }],
          [locations[1], id, { otherHolders: [locations[0]] }],
        ],
      );
      assert.equal(list.warnings?.length, 1, JSON.stringify(list.warnings));
      assert.equal(
        list.warnings[0],
        `credential-id ${id} is claimed by 2 different tokens (${locations.join(', ')}): the API server issues one token per jti, so the others copy its jti into a token someone else signed; --live says which one the server accepts`,
      );

      // --live, with the operator's own kubeconfig for the member: the server accepts the real token and refuses the
      // copy; the member's own keys (/openid/v1/jwks, read with the operator's context) verify only the real one.
      const live = await holders(id, ['--kubeconfig', audited.kubeconfig, '--live']);
      assert.equal(live.code, 1, 'a credential the server refuses is not a success');
      const items = new Map(live.json<CredentialList>().items.map((i) => [i.location, i]));
      const r = items.get(locations[1])!;
      const f = items.get(locations[0])!;
      assert.equal(r.live?.ok, true);
      assert.equal(r.live?.credentialId, id);
      assert.equal(r.credentialIdShared?.accepted, true);
      assert.equal(r.credentialIdShared?.signature?.verifies, true, JSON.stringify(r.credentialIdShared));
      assert.match(
        r.credentialIdShared?.signature?.keys ?? '',
        /^\/openid\/v1\/jwks of https:\/\/127\.0\.0\.1:\d+ \(context /,
      );
      assert.equal(f.live?.ok, false);
      assert.equal(f.live?.error?.kind, 'unauthorized');
      assert.equal(f.credentialIdShared?.accepted, false);
      assert.equal(f.credentialIdShared?.signature?.verifies, false, JSON.stringify(f.credentialIdShared));
      assert.equal(f.credentialIdShared?.signature?.reason, 'the signature does not verify with the published key');
      const liveWarnings = live.json<CredentialList>().warnings ?? [];
      assert.equal(liveWarnings.length, 1, JSON.stringify(liveWarnings));
      assert.ok(liveWarnings[0].endsWith(`; the server accepts secret hub:${hubNs}/real`), liveWarnings[0]);
      // The table (-o wide) says it in each row's problems.
      const wide = await fleet([
        'creds',
        'list',
        ...HUB,
        '--kubeconfig',
        audited.kubeconfig,
        '--live',
        '--credential-id',
        id,
        '-o',
        'wide',
      ]);
      assert.match(
        wide.stdout,
        /the server refuses it; its signature does not verify against the keys of \/openid\/v1\/jwks/,
      );
      assert.match(wide.stdout, /the server accepts it; its signature verifies against the keys of \/openid\/v1\/jwks/);

      // The same token copied into another Secret is one credential in two places: not a shared id.
      await applyYaml(
        hub,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'forged', namespace: hubNs, labels: real.metadata.labels ?? {} },
          data: real.data,
        }),
      );
      const copied = await holders(id);
      assert.equal(copied.code, 0, copied.stderr);
      const c = copied.json<CredentialList>();
      assert.equal(c.items.length, 2);
      assert.ok(c.items.every((i) => i.credentialIdShared === undefined));
      assert.equal(c.warnings, undefined);
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
