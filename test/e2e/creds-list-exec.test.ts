// `creds list` over the credentials an exec provider's program prints (docs/creds.md "list", docs/providers.md "exec"),
// on the control plane: a ServiceAccount token and a client certificate in the kubeconfigs of its ClusterList, a static
// token, and exec credentials (one the fleet.yaml allows, one it refuses). Each is listed as held by the program
// (`source.kind: exec`, format `cluster-list`), not fleet's, adoptable for what it is but replaced at its source, with
// the credential-id the API server records for it (computed here independently, and checked by --live against the
// server's own answer); the plugins are described, never run; no token or key reaches any output format.
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import type { CredentialItem, CredentialList } from '../../src/creds/list.js';
import { runFleet } from '../support/cli.js';
import { markerPlugin } from '../support/conformance.js';
import {
  createCertUser,
  createServiceAccountToken,
  loadControlPlane,
  scratchDir,
  tokenUser,
  uniqueName,
} from '../support/fixture.js';

const cp = loadControlPlane();
const m1 = cp.members[0];
const PROGRAM = fileURLToPath(new URL('../fixtures/providers/cluster-list.mjs', import.meta.url));
const run = uniqueName('credsexec');
const dir = join(scratchDir(), run);
mkdirSync(dir, { recursive: true, mode: 0o700 });
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const HELD = 'held by the program: replace it at its source (creds adopt writes only Secrets)';

function kubeconfig(name: string, user: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: m1.url, 'certificate-authority-data': b64(readFileSync(m1.caFile)) } }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  });
}

describe('creds list: the credentials an exec provider program prints', () => {
  it('lists each as held by the program, with its credential-id, adoptable at its source; prints no secret and runs no plugin', async () => {
    const token = await createServiceAccountToken(m1, run, 'inventory-reader');
    const cert = await createCertUser(m1, { user: `${run}-cert`, dir });
    const certPem = readFileSync(cert.certFile, 'utf8');
    const keyPem = readFileSync(cert.keyFile, 'utf8');
    const staticToken = tokenUser(m1, 'alice').token;
    const refused = markerPlugin(dir, 'refused');
    const allowed = markerPlugin(dir, 'allowed');
    // The ids as kube-apiserver writes them, computed here from the credentials themselves.
    const jti = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { jti: string }).jti;
    const tokenId = `JTI=${jti}`;
    const certId = `X509SHA256=${createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex')}`;

    const server = { server: m1.url, certificateAuthorityData: b64(readFileSync(m1.caFile)) };
    const listFile = join(dir, 'clusters.json');
    writeFileSync(
      listFile,
      JSON.stringify({
        apiVersion: 'fleet.dev/v1alpha1',
        kind: 'ClusterList',
        clusters: [
          { name: 'sa', kubeconfig: kubeconfig('sa', { token }) },
          {
            name: 'cert',
            kubeconfig: kubeconfig('cert', {
              'client-certificate-data': b64(certPem),
              'client-key-data': b64(keyPem),
            }),
          },
          { name: 'static', kubeconfig: kubeconfig('static', { token: staticToken }) },
          { name: 'allowed', ...server, exec: { command: allowed.command } },
          { name: 'refused', ...server, exec: { command: refused.command } },
        ],
      }),
      { mode: 0o600 },
    );
    const config = join(dir, 'fleet.yaml');
    writeFileSync(
      config,
      [
        'providers:',
        '  - name: inventory',
        '    type: exec',
        `    command: ${PROGRAM}`,
        `    args: [${listFile}]`,
        `    credentialPluginAllowlist: [{command: ${allowed.command}}]`,
        '',
      ].join('\n'),
    );
    const fleet = async (args: string[]) => {
      const r = await runFleet([
        'creds',
        'list',
        '--fleet-config',
        config,
        '--hub-kubeconfig',
        cp.hub.kubeconfig,
        ...args,
      ]);
      const out = r.stdout + r.stderr;
      for (const [what, secret] of [
        ['the ServiceAccount token', token],
        ['the static token', staticToken],
        ['the client key', keyPem.split('\n')[1]],
        ['the client key (base64)', b64(keyPem).slice(0, 40)],
      ])
        assert.ok(!out.includes(secret), `${what} in the output of creds list ${args.join(' ')}`);
      return r;
    };

    const json = await fleet(['-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const items = json.json<CredentialList>().items.filter((i) => i.source.kind === 'exec');
    const by = new Map(items.map((i) => [i.cluster, i]));
    assert.deepEqual([...by.keys()], ['sa', 'cert', 'static', 'allowed', 'refused']);
    for (const i of items) {
      assert.deepEqual(
        [i.source, i.format, i.managedByFleet, i.server, i.location],
        [
          { kind: 'exec', provider: 'inventory', program: PROGRAM, cluster: i.cluster },
          'cluster-list',
          false,
          m1.url,
          `exec:${PROGRAM} (provider inventory, cluster ${i.cluster})`,
        ],
      );
    }
    const pick = (i: CredentialItem) => ({
      method: i.method,
      identity: i.identity,
      credentialId: i.credentialId,
      noCredentialId: i.noCredentialId,
      adoptable: i.adoptable,
      problems: i.problems,
    });
    assert.deepEqual(pick(by.get('sa')!), {
      method: 'token',
      identity: `system:serviceaccount:${run}:inventory-reader`,
      credentialId: tokenId,
      noCredentialId: undefined,
      adoptable: ['not rotated by fleet', HELD],
      problems: [],
    });
    assert.ok(by.get('sa')!.expires, 'a TokenRequest token has an expiry');
    assert.deepEqual(pick(by.get('cert')!), {
      method: 'client-cert',
      identity: `${run}-cert`,
      credentialId: certId,
      noCredentialId: undefined,
      adoptable: ['client certificate (cannot be revoked)', HELD],
      problems: [],
    });
    assert.equal(
      by.get('cert')!.expires,
      new Date(new X509Certificate(certPem).validTo).toISOString().replace(/\.000Z$/, 'Z'),
    );
    assert.deepEqual(pick(by.get('static')!), {
      method: 'static-token',
      identity: undefined,
      credentialId: undefined,
      noCredentialId: 'a static token (not a JWT): the API server records no credential-id for it',
      adoptable: ['static', 'no expiry', HELD],
      problems: [],
    });
    // Exec credentials: the command only (nothing is held, so nothing to adopt); the refused one says why.
    assert.deepEqual(pick(by.get('allowed')!), {
      method: 'exec',
      identity: allowed.command,
      credentialId: undefined,
      noCredentialId: 'minted by the exec plugin at each use: its credential-id changes with every token',
      adoptable: undefined,
      problems: [],
    });
    const r = by.get('refused')!;
    assert.deepEqual([r.method, r.identity, r.adoptable, r.problems.length], ['exec', refused.command, undefined, 1]);
    assert.match(r.problems[0], new RegExp(`exec plugin "${refused.command}" is named by hub data`));

    // The other formats: the same rows, the same secrets absent.
    const wide = await fleet(['-o', 'wide']);
    assert.equal(wide.code, 0, wide.stderr);
    const row = wide.stdout.split('\n').find((l) => l.includes('cluster static)')) ?? '';
    assert.match(row, /\sstatic-token\s.*\sstatic, no expiry, held by the program: replace it at its source/, row);
    assert.ok(wide.stdout.includes(tokenId) && wide.stdout.includes(certId), wide.stdout);
    for (const format of ['yaml', 'table', 'prometheus']) {
      const out = await fleet(['-o', format]);
      assert.equal(out.code, 0, `${format}: ${out.stderr}`);
    }
    const metrics = (await fleet(['-o', 'prometheus'])).stdout;
    assert.match(metrics, new RegExp(`fleet_credential_info\\{[^}]*source="exec"[^}]*provider="inventory"`));

    // Who holds this credential: an audit event's ids find the program's clusters.
    const holders = await fleet(['--credential-id', tokenId, '--credential-id', certId, '-o', 'json']);
    assert.equal(holders.code, 0, holders.stderr);
    assert.deepEqual(
      holders.json<CredentialList>().items.map((i) => [i.source.kind, i.cluster]),
      [
        ['exec', 'sa'],
        ['exec', 'cert'],
      ],
    );
    // --live: the server's own answer, and the id it recorded, agree with fleet's reading.
    const live = await fleet(['--credential-id', tokenId, '--credential-id', certId, '--live', '-o', 'json']);
    assert.equal(live.code, 0, live.stderr);
    assert.deepEqual(
      live.json<CredentialList>().items.map((i) => [i.cluster, i.live, i.problems]),
      [
        ['sa', { ok: true, username: `system:serviceaccount:${run}:inventory-reader`, credentialId: tokenId }, []],
        ['cert', { ok: true, username: `${run}-cert`, credentialId: certId }, []],
      ],
    );
    assert.equal(existsSync(refused.marker), false, 'the refused plugin ran');
    assert.equal(existsSync(allowed.marker), false, 'listing ran the allowed plugin');
  });
});
