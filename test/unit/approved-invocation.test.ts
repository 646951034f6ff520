// Issue 38, item 1: one approval, one invocation. The trust policy returns the exact program that will run (an absolute
// path resolved once), its arguments and its environment; the runner starts that and never the name again. Hub data
// may not name a program by a relative path, may not rely on a relative PATH directory (Go's ErrDot), may set only
// variables whose names are identifiers and choose nothing that runs, and may name only files that resolve inside an
// allowed place. Each case plants a program that would leave a marker, and checks it never ran.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Invocation, approveInvocation } from '../../src/base/invocation.js';
import { Connector } from '../../src/kube/connector.js';
import { ExecCredentialRunner } from '../../src/kube/exec-credential.js';
import { contextFromKubeconfigText } from '../../src/kubeconfig/from-text.js';
import { loadMerged, resolveContext } from '../../src/kubeconfig/loading-rules.js';
import { TrustPolicy, dataEnvProblem } from '../../src/kubeconfig/trust.js';
import type { ContextOrigin } from '../../src/kubeconfig/types.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-approved-')));
const trusted = join(dir, 'trusted-bin');
// fleet's working directory: a checked-out repository holding its own `mytok`.
const checkout = join(dir, 'checkout');
const marker = join(dir, 'cwd-mytok-ran');
const TOKEN = 'trusted-token-aaaaaaaaaaaa';
const startDir = process.cwd();

const credential = (token: string) =>
  JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } });

before(() => {
  mkdirSync(trusted);
  mkdirSync(join(checkout, 'x'), { recursive: true });
  writeFileSync(join(trusted, 'mytok'), `#!/bin/sh\necho '${credential(TOKEN)}'\n`);
  chmodSync(join(trusted, 'mytok'), 0o755);
  writeFileSync(
    join(checkout, 'mytok'),
    `#!/bin/sh\ntouch ${marker}\necho '${credential('evil-token-aaaaaaaaaaaaa')}'\n`,
  );
  chmodSync(join(checkout, 'mytok'), 0o755);
  process.chdir(checkout);
});

after(() => process.chdir(startDir));

const ORIGIN: ContextOrigin = { object: 'Secret fleet-system/evil key kubeconfig', provider: 'secrets' };

function dataContext(
  exec: Record<string, unknown>,
  cluster: Record<string, unknown> = {},
  user: Record<string, unknown> = {},
) {
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', ...cluster } }],
    users: [
      {
        name: 'u',
        user: {
          ...(Object.keys(exec).length
            ? { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', ...exec } }
            : {}),
          ...user,
        },
      },
    ],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
  return contextFromKubeconfigText(text, ORIGIN.object, ORIGIN);
}

/** The variables the entry for mytok lets hub data set (issue 46: by name, per command, nothing by default). */
const MYTOK_ENV = ['OK_VAR', 'REGION', 'TOKEN_HINT'];

/** mytok allowed for hub data in fleet.yaml with MYTOK_ENV; PATH as given (the trusted directory by default). */
function policy(path = `${trusted}:/usr/bin:/bin`, files: string[] = []): TrustPolicy {
  const p = new TrustPolicy({ loadKuberc: async () => undefined, env: { PATH: path } });
  p.configPath = '/etc/fleet.yaml';
  p.allow(undefined, {
    credentialPluginAllowlist: [{ command: 'mytok', env: MYTOK_ENV }],
    localFileAllowlist: files,
    where: '/etc/fleet.yaml',
  });
  return p;
}

describe('an approved invocation', () => {
  it('is made only by approveInvocation, with an absolute program; nothing else can build one', () => {
    assert.throws(
      () => new Invocation(Symbol('approved invocation'), '/bin/true', 'true', [], {}),
      /only by approveInvocation/,
    );
    assert.throws(() => approveInvocation('bin/true', { env: {} }), /not an absolute path/);
    const inv = approveInvocation('/bin/true', { argv0: 'true', args: ['a'], env: { A: '1', B: undefined } });
    assert.deepEqual([inv.program, inv.argv0, inv.args, inv.env], ['/bin/true', 'true', ['a'], { A: '1' }]);
    assert.ok(Object.isFrozen(inv) && Object.isFrozen(inv.args) && Object.isFrozen(inv.env));
  });

  it('of an allowed bare name is the file PATH names, resolved once; the working directory’s file of that name never runs', async () => {
    const a = await policy().approve(dataContext({ command: 'mytok' }), checkout);
    assert.equal(a.refusal, undefined);
    assert.equal(a.plugin?.invocation?.program, join(trusted, 'mytok'));
    assert.equal(a.plugin?.invocation?.argv0, 'mytok');
    const cred = await new ExecCredentialRunner().get(a.plugin, a.context.cluster);
    assert.equal(cred.token, TOKEN);
    assert.equal(existsSync(marker), false);
  });
});

describe('hub data naming a program by a relative path is refused, whatever the allowlist says', () => {
  for (const command of ['./mytok', 'x/../mytok', './././mytok', 'x/mytok', `${trusted}/../trusted-bin/mytok`]) {
    it(`${command}: one line naming the object and the command; the connector refuses it too, and nothing runs`, async () => {
      const p = policy();
      const ctx = dataContext({ command });
      const a = await p.approve(ctx, checkout);
      assert.equal(a.refusal?.kind, 'plugin');
      assert.equal(
        a.refusal?.message,
        `${ORIGIN.object}: exec plugin ${JSON.stringify(command)} is named by hub data with a relative path or "..", which would run a file of fleet's working directory; hub data may name a plugin only by absolute path or bare name`,
      );
      const exec = new ExecCredentialRunner();
      await assert.rejects(
        new Connector({ timeoutMs: 1000, exec, trust: p }).context(ctx, 'evil'),
        (e: Error) => e.message === a.refusal?.message,
      );
      assert.equal(exec.runs, 0);
      assert.equal(existsSync(marker), false);
    });
  }

  it('PATH=.:$PATH with an allowed bare name: ErrDot, as Go refuses it, and the working directory’s mytok never runs', async () => {
    const p = policy(`.:${trusted}:/usr/bin:/bin`);
    const a = await p.approve(dataContext({ command: 'mytok' }), checkout);
    assert.equal(
      a.refusal?.message,
      `${ORIGIN.object}: exec plugin "mytok": mytok was found as mytok in a relative PATH directory, which Go refuses (ErrDot); hub data's plugins run only from absolute PATH directories`,
    );
    // An empty PATH entry is the working directory too.
    assert.match(
      (await policy(`:${trusted}`).approve(dataContext({ command: 'mytok' }), checkout)).refusal?.message ?? '',
      /ErrDot/,
    );
    assert.equal(existsSync(marker), false);
  });
});

describe("the user's own kubeconfig keeps kubectl's rules", () => {
  it('a relative command with a slash is resolved against the kubeconfig file’s directory; a bare name through PATH', async () => {
    const kdir = join(dir, 'kube');
    mkdirSync(join(kdir, 'bin'), { recursive: true });
    writeFileSync(join(kdir, 'bin', 'mytok'), `#!/bin/sh\necho '${credential(TOKEN)}'\n`);
    chmodSync(join(kdir, 'bin', 'mytok'), 0o755);
    const file = join(kdir, 'config');
    const user = (command: string) => ({
      name: command,
      user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', command } },
    });
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [user('./bin/mytok'), user('mytok')],
        contexts: [
          { name: 'rel', context: { cluster: 'c', user: './bin/mytok' } },
          { name: 'bare', context: { cluster: 'c', user: 'mytok' } },
        ],
      }),
    );
    const merged = await loadMerged([file], { explicit: true });
    const p = new TrustPolicy({ loadKuberc: async () => undefined, env: { PATH: `${trusted}:/usr/bin:/bin` } });
    assert.equal(
      (await p.approve(resolveContext(merged, 'rel'), checkout)).plugin?.invocation?.program,
      join(kdir, 'bin', 'mytok'),
    );
    assert.equal(
      (await p.approve(resolveContext(merged, 'bare'), checkout)).plugin?.invocation?.program,
      join(trusted, 'mytok'),
    );
    // With PATH=.: the user's own plugin is not refused by the policy, but it does not run either (as kubectl: ErrDot).
    const dot = await new TrustPolicy({ loadKuberc: async () => undefined, env: { PATH: '.' } }).approve(
      resolveContext(merged, 'bare'),
      checkout,
    );
    assert.equal(dot.refusal, undefined);
    await assert.rejects(
      new ExecCredentialRunner().get(dot.plugin!, {}),
      /exec plugin mytok: mytok was found as mytok in a relative PATH directory, which Go refuses \(ErrDot\)/,
    );
    assert.equal(existsSync(marker), false);
  });
});

describe('environment hub data sets for a plugin: identifiers only, none that chooses what runs', () => {
  const refusedLine = (shown: string, why: string) =>
    `${ORIGIN.object}: hub data sets ${shown} for exec plugin "mytok", which hub data may never set (it ${why})`;
  const cases: Array<[string, string, string]> = [
    [
      'BASH_ENV=$(touch x)',
      'the variable "BASH_ENV=$(touch x)"',
      'is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*',
    ],
    ['BASH_FUNC_date%%', 'the variable "BASH_FUNC_date%%"', 'is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*'],
    ['SHELLOPTS', 'SHELLOPTS', 'chooses what runs'],
    ['PS4', 'PS4', 'chooses what runs'],
    ['BASHOPTS', 'BASHOPTS', 'chooses what runs'],
    ['PROMPT_COMMAND', 'PROMPT_COMMAND', 'chooses what runs'],
    ['ld_preload', 'ld_preload', 'chooses what runs'],
    ['PYTHONWARNINGS', 'PYTHONWARNINGS', 'chooses what runs'],
    ['NAME\nX', 'the variable "NAME\\nX"', 'is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*'],
  ];
  for (const [name, shown, why] of cases) {
    it(`${JSON.stringify(name)} refuses the cluster with one line naming it`, async () => {
      const a = await policy().approve(
        dataContext({
          command: 'mytok',
          env: [
            { name: 'OK_VAR', value: '1' },
            { name, value: 'x' },
          ],
        }),
        checkout,
      );
      assert.equal(a.refusal?.kind, 'config');
      assert.equal(a.refusal?.message, refusedLine(shown, why));
      assert.equal(a.refusal?.message.includes('\n'), false);
    });
  }

  it('a value holding a NUL is refused; any other value is passed as it is, never evaluated', async () => {
    const nul = await policy().approve(
      dataContext({ command: 'mytok', env: [{ name: 'TOKEN_HINT', value: 'a\u0000b' }] }),
      checkout,
    );
    assert.equal(
      nul.refusal?.message,
      `${ORIGIN.object}: hub data sets TOKEN_HINT for exec plugin "mytok" to a value holding a NUL byte, which no environment can carry`,
    );
    const ok = await policy().approve(
      dataContext({ command: 'mytok', env: [{ name: 'REGION', value: '$(touch x); `id`' }] }),
      checkout,
    );
    assert.equal(ok.plugin?.invocation?.env.REGION, '$(touch x); `id`');
    assert.equal(ok.plugin?.invocation?.env.PATH, `${trusted}:/usr/bin:/bin`);
  });

  it('an ordinary variable the entry does not name is refused, naming it and the entry to add it to (no default list)', async () => {
    for (const name of ['CLOUDSDK_CONFIG', 'HOME', 'HTTPS_PROXY', 'SSL_CERT_FILE', 'AWS_CONFIG_FILE']) {
      const a = await policy().approve(
        dataContext({
          command: 'mytok',
          env: [
            { name: 'REGION', value: 'eu' },
            { name, value: '-c id' },
          ],
        }),
        checkout,
      );
      assert.equal(a.plugin, undefined, `${name} never reaches a plugin`);
      assert.equal(
        a.refusal?.message,
        `${ORIGIN.object}: hub data sets ${name} for exec plugin "mytok", and no credentialPluginAllowlist entry for that command allows it (variables reach a plugin from hub data only by name, per command; a kuberc cannot allow any); to allow it, add env: [${name}] to the entry for mytok in /etc/fleet.yaml`,
      );
      assert.equal(a.refusal?.message.includes('-c id'), false, 'the value is never shown');
    }
  });

  it('a ClusterProfile’s additional-envs are judged by the same rule (the command is the user’s)', async () => {
    const profile: ContextOrigin = {
      object: 'ClusterProfile inv/m',
      provider: 'inv',
      commandFromUser: true,
      dataEnv: ['BASH_FUNC_date%%'],
    };
    const ctx = {
      ...dataContext({
        command: 'mytok',
        env: [
          { name: 'FROM_FILE', value: '1' },
          { name: 'BASH_FUNC_date%%', value: '() { id; }' },
        ],
      }),
      origin: profile,
    };
    const a = await new TrustPolicy({ loadKuberc: async () => undefined, env: { PATH: trusted } }).approve(
      ctx,
      checkout,
    );
    assert.equal(
      a.refusal?.message,
      'ClusterProfile inv/m: hub data sets the variable "BASH_FUNC_date%%" for exec plugin "mytok", which hub data may never set (it is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*)',
    );
    assert.equal(dataEnvProblem('FROM_FILE'), undefined);
  });
});

describe('local files hub data names: resolved once, checked where they lead', () => {
  it('a link in an allowed directory that leads out of it is refused; one that stays inside is read from where it leads', async () => {
    const allowed = join(dir, 'allowed');
    mkdirSync(allowed);
    writeFileSync(join(dir, 'secret.pem'), 'outside');
    writeFileSync(join(allowed, 'real.pem'), 'inside');
    symlinkSync(join(dir, 'secret.pem'), join(allowed, 'escape.pem'));
    symlinkSync('real.pem', join(allowed, 'inner.pem'));
    const p = policy(undefined, [`${allowed}/`]);
    const escape = await p.approve(
      dataContext({}, {}, { token: 't', 'client-certificate': join(allowed, 'escape.pem') }),
      checkout,
    );
    assert.equal(
      escape.refusal?.message,
      `${ORIGIN.object}: client-certificate names the local file ${JSON.stringify(join(allowed, 'escape.pem'))}, which resolves to ${JSON.stringify(join(dir, 'secret.pem'))}, outside every localFileAllowlist entry (a link out of an allowed directory)`,
    );
    const inner = await p.approve(dataContext({}, { 'certificate-authority': join(allowed, 'inner.pem') }), checkout);
    assert.equal(inner.refusal, undefined);
    assert.equal(inner.context?.cluster['certificate-authority'], join(allowed, 'real.pem'));
    // Written with .. out of the directory: refused as written, before anything is resolved.
    const dots = await p.approve(dataContext({}, {}, { tokenFile: `${allowed}/../secret.pem` }), checkout);
    assert.match(dots.refusal?.message ?? '', /tokenFile names the local file .*hub data may not read local files/);
  });
});

describe("the kind provider's command: the user's, resolved once as Go's exec would", () => {
  it('a kind found only through a relative PATH entry is ErrDot (exit 2, one line), and the working directory’s kind never runs', async () => {
    const { KindProvider } = await import('../../src/providers/kind.js');
    const kindMarker = join(dir, 'cwd-kind-ran');
    writeFileSync(join(checkout, 'kind'), `#!/bin/sh\ntouch ${kindMarker}\n`);
    chmodSync(join(checkout, 'kind'), 0o755);
    const p = new KindProvider('kind', { env: { PATH: '.:/nonexistent' } });
    await assert.rejects(p.list(), (e: Error & { exitCode?: number }) => {
      assert.match(
        e.message,
        /the "kind" command: kind was found as kind in a relative PATH directory, which Go refuses \(ErrDot\)/,
      );
      assert.equal(e.message.includes('\n'), false);
      return true;
    });
    assert.equal(existsSync(kindMarker), false);
  });
});
