// Commands as Options → Complete/Validate → Run (issue 32, item 3): a command's flags reach what it does through typed
// options, never read from the flags by name. The cast this replaced (cli/flags.ts fleetFlagValues) read --cluster as
// a list by name and silently dropped creds rotate's single --cluster; these tests hold the typed path.
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Config, Parser } from '@oclif/core';

import { BaseCommand, type BaseFlags, type FlagGroups } from '../../src/cli/base-command.js';
import { type SelectionFlags, fleetFlags } from '../../src/cli/flags.js';
import type { Fleet } from '../../src/cli/fleet-run.js';
import AuthCanI, { canIOptions } from '../../src/commands/auth/can-i.js';
import AuthWhoCan, { whoCanOptions } from '../../src/commands/auth/who-can.js';
import ClustersVerify, { verifyOptions } from '../../src/commands/clusters/verify.js';
import CredsGenerate, { generateOptions } from '../../src/commands/creds/generate.js';
import CredsList, { listOptions } from '../../src/commands/creds/list.js';
import CredsRevoke, { revokeOptions } from '../../src/commands/creds/revoke.js';
import CredsRotate, { rotateOptions } from '../../src/commands/creds/rotate.js';
import KubeconfigExport, { exportOptions } from '../../src/commands/kubeconfig/export.js';
import WiSetup, { setupOptions } from '../../src/commands/wi/setup.js';
import WiTest from '../../src/commands/wi/test.js';
import WiToken, { tokenOptions } from '../../src/commands/wi/token.js';
import { probeOptions } from '../../src/cli/wi-command.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** argv parsed with any command's flags and the base flags, as the base command parses it (the command's flag types). */
async function parsedFlags<F>(command: { flags: object; args?: object }, argv: string[]): Promise<F> {
  return (await parsedWithArgs<F>(command, argv)).flags;
}

/**
 * argv parsed with a command's own flags, as the base command parses it: its flags, the named arguments (VERB RESOURCE
 * [NAME] for the auth commands) and every positional argument (the NAMESPACE/NAME list of rotate and revoke).
 */
async function parsedWithArgs<F>(
  command: { flags: object; args?: object },
  argv: string[],
): Promise<{ flags: F; args: { verb: string; resource: string; name?: string }; names: string[] }> {
  const out = await Parser.parse(argv, {
    flags: { ...BaseCommand.baseFlags, ...command.flags } as never,
    args: (command.args ?? {}) as never,
    strict: false,
  });
  return { flags: out.flags as F, args: out.args as never, names: out.argv.map(String) };
}

const parsedRotate = (argv: string[]) => parsedWithArgs<BaseFlags<typeof CredsRotate>>(CredsRotate, argv);
const parsedRevoke = (argv: string[]) => parsedWithArgs<BaseFlags<typeof CredsRevoke>>(CredsRevoke, argv);

describe('creds generate options', () => {
  const generate = (argv: string[]) => parsedFlags<BaseFlags<typeof CredsGenerate>>(CredsGenerate, argv);
  const BASE = ['-c', 'member-1', '--service-account', 'team-a/reader', '--role', 'view'];

  it('a file destination: the request as generate runs it, no hub needed', async () => {
    const o = generateOptions(
      await generate([
        ...BASE,
        '-n',
        'team-a',
        '-n',
        'team-b',
        '--duration',
        '30d',
        '--out',
        'r.kubeconfig',
        '--allow-risky',
        '--dry-run',
      ]),
      'table',
    );
    assert.deepEqual(o, {
      cluster: 'member-1',
      needsHub: false,
      request: {
        identity: { kind: 'ServiceAccount', namespace: 'team-a', name: 'reader' },
        access: { preset: 'view' },
        namespaces: ['team-a', 'team-b'],
        method: 'token',
        durationSeconds: 30 * 86_400,
        destination: { kind: 'file', path: 'r.kubeconfig' },
        allowRisky: true,
        createNamespace: undefined,
        force: undefined,
        dryRun: true,
        updateProfile: undefined,
        displayName: undefined,
      },
    });
  });

  it('--secret needs a hub and a --format; its NAMESPACE/NAME and --update-profile are parsed', async () => {
    const o = generateOptions(
      await generate([
        ...BASE,
        '--secret',
        'fleet/m1',
        '--format',
        'kubeconfig-secretreader',
        '--update-profile',
        'fleet/p1',
      ]),
      'json',
    );
    assert.equal(o.needsHub, true);
    assert.deepEqual(o.request.destination, {
      kind: 'secret',
      namespace: 'fleet',
      name: 'm1',
      format: 'kubeconfig-secretreader',
      consumer: undefined,
      profile: undefined,
    });
    assert.deepEqual(o.request.updateProfile, { namespace: 'fleet', name: 'p1' });
  });

  it('cluster-api: --secret is the Cluster, whose Secret is NAME-kubeconfig', async () => {
    const o = generateOptions(await generate([...BASE, '--secret', 'fleet/prod', '--format', 'cluster-api']), 'json');
    assert.equal((o.request.destination as { name: string }).name, 'prod');
  });

  it('bad flags are one usage line each, before any cluster is asked anything', async () => {
    const refused = async (argv: string[], message: string | RegExp, format: 'table' | 'json' = 'table') => {
      const f = await generate(argv);
      assert.throws(() => generateOptions(f, format), { message, exitCode: 2 }, argv.join(' '));
    };
    await refused([...BASE, '--secret', 'fleet/m1'], /^--secret needs --format \(multicluster-runtime, .*flux\)$/);
    await refused(
      [...BASE, '--secret', 'fleet/prod-kubeconfig', '--format', 'cluster-api'],
      '--secret fleet/prod-kubeconfig with --format cluster-api names the Cluster, not its Secret: give --secret fleet/prod (the Secret is prod-kubeconfig)',
    );
    await refused(
      [...BASE, '--out', '-'],
      '--out - prints the kubeconfig on stdout; it cannot be combined with -o',
      'json',
    );
    await refused([...BASE, '--out', 'x', '--duration', 'soon'], /^--duration/);
    await refused(
      ['-c', 'm', '--service-account', 'reader', '--role', 'view', '--out', 'x'],
      '--service-account: expected NAMESPACE/NAME, got "reader"',
    );
    await refused([...BASE, '--out', 'x', '--display-name', ' '], '--display-name: must not be empty');
    await refused([...BASE, '--secret', 'm1', '--format', 'flux'], '--secret: expected NAMESPACE/NAME, got "m1"');
    await refused(['--role', 'view'], 'missing --cluster, --service-account, --out or --secret');
  });
});

describe('auth can-i and who-can options', () => {
  const canI = async (argv: string[], format: 'table' | 'json' = 'table') => {
    const p = await parsedWithArgs<BaseFlags<typeof AuthCanI>>(AuthCanI, argv);
    return canIOptions(p.flags, p.args, format);
  };
  const whoCan = async (argv: string[]) => {
    const p = await parsedWithArgs<BaseFlags<typeof AuthWhoCan>>(AuthWhoCan, argv);
    return whoCanOptions(p.flags, p.args);
  };

  it('can-i: the query, the namespace (-n, "" for --all-namespaces, none for each context\'s) and -q', async () => {
    const o = await canI(['create', 'pods', 'web-0', '-n', 'team-a', '-q']);
    assert.deepEqual(
      { namespace: o.namespace, quiet: o.quiet, verb: o.query.verb, name: o.query.name },
      { namespace: 'team-a', quiet: true, verb: 'create', name: 'web-0' },
    );
    assert.equal((await canI(['get', 'secrets', '--all-namespaces'])).namespace, '');
    assert.equal((await canI(['get', 'secrets'])).namespace, undefined);
  });

  it('can-i: -q with -o, and a query it cannot read, are one usage line', async () => {
    await assert.rejects(canI(['get', 'pods', '-q'], 'json'), {
      message: '-q/--quiet prints nothing, so it cannot be combined with -o or --json',
      exitCode: 2,
    });
    await assert.rejects(canI(['get', '/healthz', '--subresource', 'log']), {
      message: '--subresource cannot be given with a non-resource URL (/healthz)',
      exitCode: 2,
    });
    await assert.rejects(canI(['get', 'pods/web-0', 'web-1']), {
      message: 'give the name either as pods/web-0 or as NAME, not both',
      exitCode: 2,
    });
  });

  it('who-can: the query, the namespace, --all-namespaces and --no-confirm', async () => {
    const o = await whoCan(['create', 'pods/exec', '--all-namespaces', '--no-confirm']);
    assert.deepEqual(
      { namespace: o.namespace, allNamespaces: o.allNamespaces, confirm: o.confirm, subresource: o.query.subresource },
      { namespace: '', allNamespaces: true, confirm: false, subresource: 'exec' },
    );
    const fixed = await whoCan(['delete', 'secrets', '-n', 'prod']);
    assert.deepEqual(
      { namespace: fixed.namespace, allNamespaces: fixed.allNamespaces, confirm: fixed.confirm },
      { namespace: 'prod', allNamespaces: false, confirm: true },
    );
    await assert.rejects(whoCan(['get', 'pods/exec', '--subresource', 'log']), {
      message: 'give the subresource either as pods/exec or as --subresource, not both',
      exitCode: 2,
    });
  });
});

describe('clusters verify options', () => {
  const verify = (argv: string[]) => parsedFlags<BaseFlags<typeof ClustersVerify>>(ClustersVerify, argv);

  it('the built-in policy without --policy; GitHub Actions and the step summary from the environment', async () => {
    const o = await verifyOptions(await verify(['--strict']), {
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: '/tmp/summary.md',
    });
    assert.deepEqual(o, {
      policy: { checks: {}, rules: [] },
      junit: undefined,
      strict: true,
      annotations: true,
      summaryFile: '/tmp/summary.md',
    });
    assert.deepEqual(await verifyOptions(await verify([]), { GITHUB_STEP_SUMMARY: '' }), {
      policy: { checks: {}, rules: [] },
      junit: undefined,
      strict: false,
      annotations: false,
      summaryFile: undefined,
    });
  });

  it('a policy file that is missing, or a --junit path that is a directory, stops the run with exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    await assert.rejects(
      verifyOptions(await verify(['--policy', join(dir, 'nope.yaml')]), {}),
      (e: Error & { exitCode?: number }) => e.exitCode === 2 && e.message.includes('nope.yaml'),
    );
    await assert.rejects(
      verifyOptions(await verify(['--junit', dir]), {}),
      (e: Error & { exitCode?: number }) => e.exitCode === 2 && e.message.startsWith(`--junit ${dir}`),
    );
    const policy = join(dir, 'policy.yaml');
    await writeFile(policy, 'apiVersion: fleet/v1alpha1\nkind: VerifyPolicy\nchecks:\n  version: {range: ">=1.30"}\n');
    const o = await verifyOptions(await verify(['--policy', policy, '--junit', join(dir, 'out.xml')]), {});
    assert.equal(o.junit, join(dir, 'out.xml'));
    assert.deepEqual(o.policy.checks.version, { range: '>=1.30' });
  });
});

describe('wi setup options', () => {
  const setup = async (argv: string[]) =>
    setupOptions(
      await parsedFlags<BaseFlags<typeof WiSetup>>(WiSetup, [
        '--target',
        'prod-eu',
        '--service-account',
        'flux-system/reconciler',
        ...argv,
      ]),
    );

  it('the ServiceAccount, the consumer (flux by default) and --authentication-config-out, checked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const o = await setup(['--role', 'view', '--authentication-config-out', join(dir, 'auth.yaml')]);
    assert.deepEqual(o.serviceAccount, { namespace: 'flux-system', name: 'reconciler' });
    assert.equal(o.authenticationConfigOut, join(dir, 'auth.yaml'));
    assert.equal(o.consumer.name, 'flux');
    assert.equal(
      (await setup(['--consumer', 'kubeconfig', '--out', join(dir, 'prod.kubeconfig')])).consumer.name,
      'kubeconfig',
    );
  });

  it('flags that cannot work together, a bad value or an unwritable file are one usage line, before any cluster', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const refused: Array<[string[], string | RegExp]> = [
      [['--dry-run'], '--dry-run only makes sense with --apply (without --apply nothing is changed anyway)'],
      [['-n', 'apps'], '--namespace needs --role or --cluster-role (what to bind there)'],
      [['--prefix', 'hub: '], '--prefix: "hub: " contains a space'],
      [['--authentication-config-out', dir], new RegExp(`^--authentication-config-out ${dir}`)],
      [['--consumer', 'kubeconfig'], '--consumer kubeconfig needs --out FILE'],
      [['--plugin-hub-context', 'hub'], /^--plugin-hub/],
    ];
    for (const [argv, message] of refused) await assert.rejects(setup(argv), { message, exitCode: 2 }, argv.join(' '));
    await assert.rejects(
      setupOptions(
        await parsedFlags<BaseFlags<typeof WiSetup>>(WiSetup, ['--target', 't', '--service-account', 'reconciler']),
      ),
      { message: '--service-account: expected NAMESPACE/NAME, got "reconciler"', exitCode: 2 },
    );
  });
});

describe('wi token options', () => {
  const token = async (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    tokenOptions(await parsedFlags<BaseFlags<typeof WiToken>>(WiToken, argv), env);
  const execInfo = (cluster: object) =>
    JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false, cluster },
    });

  it("the request from the flags and KUBERNETES_EXEC_INFO (the target's server as audience, the exec config's settings)", async () => {
    const env = {
      KUBERNETES_EXEC_INFO: execInfo({
        server: 'https://prod-eu.example:6443',
        config: { serviceAccount: 'flux-system/reconciler', expirationSeconds: 1800 },
      }),
    };
    assert.deepEqual(await token([], env), {
      apiVersion: 'client.authentication.k8s.io/v1',
      serviceAccount: { namespace: 'flux-system', name: 'reconciler' },
      audience: 'https://prod-eu.example:6443',
      expirationSeconds: 1800,
    });
    const byHand = await token(['--service-account', 'demo/app', '--audience', 'https://x', '--expiration', '2h']);
    assert.deepEqual(
      { audience: byHand.audience, expirationSeconds: byHand.expirationSeconds, sa: byHand.serviceAccount },
      { audience: 'https://x', expirationSeconds: 7200, sa: { namespace: 'demo', name: 'app' } },
    );
  });

  it('-o other than json, a broken KUBERNETES_EXEC_INFO, a short lifetime and a flag the exec config contradicts are refused before the hub', async () => {
    await assert.rejects(token(['-o', 'yaml', '--service-account', 'a/b', '--audience', 'x']), {
      message: '-o yaml: fleet wi token prints the ExecCredential, which is JSON',
      exitCode: 2,
    });
    await assert.rejects(token(['--service-account', 'a/b'], { KUBERNETES_EXEC_INFO: '{' }), {
      message: 'KUBERNETES_EXEC_INFO: not valid JSON',
      exitCode: 2,
    });
    await assert.rejects(token(['--service-account', 'a/b', '--audience', 'x', '--expiration', '5m']), {
      message: '--expiration: at least 10m (the API server refuses shorter tokens), got 300s',
      exitCode: 2,
    });
    await assert.rejects(
      token(['--service-account', 'a/b'], {
        KUBERNETES_EXEC_INFO: execInfo({ server: 'https://s', config: { serviceAccount: 'c/d' } }),
      }),
      {
        message: /^--service-account a\/b and the cluster's exec config .* c\/d disagree: set it in one place$/,
        exitCode: 2,
      },
    );
  });
});

describe('creds list options', () => {
  const list = (argv: string[]) => parsedFlags<BaseFlags<typeof CredsList>>(CredsList, argv);

  it('--expiring-within is a lifetime (7d and 168h alike); a bad one is refused before any hub is read', async () => {
    assert.deepEqual(listOptions(await list(['--expiring-within', '7d'])), { expiringWithinMs: 7 * 86_400_000 });
    assert.deepEqual(listOptions(await list(['--expiring-within', '168h'])), { expiringWithinMs: 7 * 86_400_000 });
    assert.deepEqual(listOptions(await list([])), { expiringWithinMs: undefined });
    const bad = await list(['--expiring-within', 'soon']);
    assert.throws(
      () => listOptions(bad),
      (e: Error & { exitCode?: number }) => e.exitCode === 2 && e.message.startsWith('--expiring-within'),
    );
  });
});

describe('kubeconfig export options', () => {
  const exported = async (argv: string[]) =>
    exportOptions(await parsedFlags<BaseFlags<typeof KubeconfigExport>>(KubeconfigExport, argv));

  it('the files it writes, the command and the names, from the flags', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const o = await exported([
      '--out',
      join(dir, 'fleet.kubeconfig'),
      '--write-kuberc',
      join(dir, 'kuberc'),
      '--command',
      '/usr/local/bin/fleet',
      '--name-template',
      'fleet-{name}',
      '--dry-run',
    ]);
    assert.deepEqual(
      { out: o.out, writeKuberc: o.writeKuberc, mergeInto: o.mergeInto, runner: o.runner, dryRun: o.dryRun },
      {
        out: join(dir, 'fleet.kubeconfig'),
        writeKuberc: join(dir, 'kuberc'),
        mergeInto: undefined,
        runner: { command: '/usr/local/bin/fleet', prefix: [] },
        dryRun: true,
      },
    );
    assert.equal(
      o.name({ name: 'member-1', provider: 'capi', source: { kind: 'cluster-api' } } as never),
      'fleet-member-1',
    );
    assert.deepEqual((await exported(['--credential-reader', 'none'])).runner, { command: 'fleet', prefix: [] });
    assert.deepEqual((await exported(['--credential-reader', '/bin/true'])).runner, {
      command: '/bin/true',
      prefix: ['--fleet', 'fleet'],
    });
  });

  it('an empty or relative --command, a bad --name-template and an --out that is a directory are one usage line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    await assert.rejects(exported(['--command', ' ']), { message: '--command: empty', exitCode: 2 });
    await assert.rejects(exported(['--credential-reader', 'bin/fleet-credential']), {
      message: '--credential-reader: bin/fleet-credential is not an absolute path (or "none")',
      exitCode: 2,
    });
    await assert.rejects(exported(['--command', 'bin/fleet']), {
      message: '--command: bin/fleet is a relative path; give an absolute path, or a name looked up on PATH',
      exitCode: 2,
    });
    await assert.rejects(exported(['--name-template', '{provider}']), {
      message: '--name-template: "{provider}" names no cluster; include {id} or {name}',
      exitCode: 2,
    });
    await assert.rejects(
      exported(['--out', dir]),
      (e: Error & { exitCode?: number }) => e.exitCode === 2 && e.message.startsWith(`--out ${dir}`),
    );
  });
});

describe('wi test and wi doctor options', () => {
  const probe = async (argv: string[], authenticationConfig?: string) =>
    probeOptions(await parsedFlags<BaseFlags<typeof WiTest>>(WiTest, argv), authenticationConfig);

  it('named mode (--hub and --service-account) or plugin mode (one --target whose user runs fleet wi token)', async () => {
    const o = await probe([
      '--hub',
      'hub',
      '--service-account',
      'flux-system/reconciler',
      '--target',
      'prod-eu',
      '--can-i',
      'create deployments.apps -n tenant-a',
      '--expiration',
      '1h',
    ]);
    assert.deepEqual(o.named, { hub: 'hub', serviceAccount: { namespace: 'flux-system', name: 'reconciler' } });
    assert.equal(o.expirationSeconds, 3600);
    assert.equal(o.canI.length, 1);
    assert.equal((await probe(['--target', 'prod-eu'])).named, undefined);
  });

  it('a half-named hub, plugin mode over several targets, a bad --can-i, a short lifetime and an empty token file are one line, exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const empty = join(dir, 'token');
    await writeFile(empty, '\n');
    const refused: Array<[string[], string]> = [
      [['--hub', 'hub', '--target', 't'], 'missing --service-account NAMESPACE/NAME'],
      [
        ['--service-account', 'a/b', '--target', 't'],
        'missing --hub (the cluster whose ServiceAccount issues the token)',
      ],
      [
        ['--target', 't1', '--target', 't2'],
        'without --hub and --service-account, name exactly one --target whose user runs fleet wi token',
      ],
      [
        ['--hub', 'h', '--service-account', 'a/b', '--target', 't', '--can-i', 'get'],
        '--can-i "get": expected "VERB RESOURCE [NAME] [-n NAMESPACE]"',
      ],
      [
        ['--hub', 'h', '--service-account', 'a/b', '--target', 't', '--expiration', '1m'],
        '--expiration: at least 10m (the API server refuses shorter tokens), got 60s',
      ],
      [
        ['--hub', 'h', '--service-account', 'a/b', '--target', 't', '--token-file', empty],
        `--token-file ${empty}: the file is empty`,
      ],
      [
        ['--hub', 'h', '--service-account', 'reconciler', '--target', 't'],
        '--service-account: expected NAMESPACE/NAME, got "reconciler"',
      ],
    ];
    for (const [argv, message] of refused) await assert.rejects(probe(argv), { message, exitCode: 2 }, argv.join(' '));
  });
});

describe('creds rotate options', () => {
  it('--cluster (one cluster to mint on) reaches the options', async () => {
    const { flags, names } = await parsedRotate(['fleet-system/member-1', '--cluster', 'member-2']);
    const o = await rotateOptions(flags, names, {});
    assert.equal(o.clusterOverride, 'member-2');
    assert.deepEqual(o.targets, { names: [{ namespace: 'fleet-system', name: 'member-1' }], files: [] });
    assert.equal(o.needsHub, true);
  });

  it('every NAMESPACE/NAME argument is a target, not only the first', async () => {
    const { flags, names } = await parsedRotate(['a/one', 'b/two', 'c/three']);
    assert.deepEqual(
      (await rotateOptions(flags, names, {})).targets.names.map((n) => `${n.namespace}/${n.name}`),
      ['a/one', 'b/two', 'c/three'],
    );
  });

  it('the shard of --all is resolved in the options, from --shard-count and the Indexed Job index', async () => {
    const { flags, names } = await parsedRotate(['--all', '--shard-count', '4']);
    assert.deepEqual((await rotateOptions(flags, names, { JOB_COMPLETION_INDEX: '3' })).shard, { index: 3, count: 4 });
    const named = await parsedRotate(['a/one', '--shard', '0/2']);
    await assert.rejects(rotateOptions(named.flags, named.names, {}), {
      message: "--shard splits --all; with named Secrets or --file, name each Pod's own",
    });
  });

  it('a name that is not NAMESPACE/NAME is refused, the same words in rotate and revoke', async () => {
    const rotate = await parsedRotate(['just-a-name']);
    await assert.rejects(rotateOptions(rotate.flags, rotate.names, {}), {
      message: '"just-a-name": expected NAMESPACE/NAME of a hub Secret',
      exitCode: 2,
    });
    const revoke = await parsedRevoke(['just-a-name']);
    await assert.rejects(revokeOptions(revoke.flags, revoke.names), {
      message: '"just-a-name": expected NAMESPACE/NAME of a hub Secret',
      exitCode: 2,
    });
  });

  it('--file: a missing file is refused by rotate and left to revoke (already revoked); a directory by both', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const missing = join(dir, 'gone.kubeconfig');
    const rotate = await parsedRotate(['--file', missing]);
    await assert.rejects(rotateOptions(rotate.flags, rotate.names, {}), { exitCode: 2 });
    const revoke = await parsedRevoke(['--file', missing, '--cluster', 'member-1']);
    const o = await revokeOptions(revoke.flags, revoke.names);
    assert.deepEqual(
      { targets: o.targets, clusterOverride: o.clusterOverride },
      { targets: { names: [], files: [missing] }, clusterOverride: 'member-1' },
    );
    await mkdir(join(dir, 'sub'));
    const directory = await parsedRevoke(['--file', join(dir, 'sub')]);
    await assert.rejects(revokeOptions(directory.flags, directory.names), { exitCode: 2 });
  });
});

describe('flag groups', () => {
  it("creds rotate's flags are not a cluster selection (its --cluster is one string): the compiler says so", () => {
    const rotate = {} as BaseFlags<typeof CredsRotate>;
    // @ts-expect-error -- --cluster is a string here, a list in fleetFlags: handing these over as a selection cannot compile.
    const selection: SelectionFlags = rotate;
    assert.ok(selection);
  });

  it('every command that declares fleetFlags hands them to the base command: its --cluster values select', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-options-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const config = await Config.load(REPO);
    let checked = 0;
    for (const c of config.commands.filter((c) => c.pluginName === config.name)) {
      const cls = (await c.load()) as unknown as {
        flags?: Record<string, { multiple?: boolean }>;
        args?: Record<string, { required?: boolean }>;
      } & (new (argv: string[], config: Config) => { init(): Promise<void> });
      // The CLI's bundle has its own copy of fleetFlags, so the group is recognised by its shape: a repeatable --cluster.
      if (!(cls.flags?.cluster?.multiple && cls.flags.selector)) continue;
      const required = Object.values(cls.args ?? {})
        .filter((a) => a.required)
        .map(() => 'x');
      const cmd = new cls(
        [...required, '--kubeconfig', kubeconfig, '--cluster', 'a', '--cluster', 'b', '--selector', 'env=prod'],
        config,
      );
      await cmd.init();
      const fleet = (cmd as unknown as { fleet: Fleet }).fleet;
      assert.deepEqual(
        { clusters: fleet.selection.clusters, selector: fleet.selection.selector },
        { clusters: ['a', 'b'], selector: 'env=prod' },
        c.id,
      );
      checked++;
    }
    assert.ok(checked >= 6, `only ${checked} commands declare fleetFlags`);
  });

  it('a command that declares fleetFlags and does not hand them over is stopped at init, not run on the current context', async () => {
    class Forgetful extends BaseCommand<typeof Forgetful> {
      static flags = { ...fleetFlags };
      async run(): Promise<void> {}
    }
    class Careful extends BaseCommand<typeof Careful> {
      static flags = { ...fleetFlags };
      protected flagGroups(): FlagGroups {
        return { selection: this.flags };
      }
      async run(): Promise<void> {}
    }
    const config = await Config.load(REPO);
    await assert.rejects(
      new Forgetful(['--all'], config).init(),
      /declares fleetFlags but does not hand them to the base command/,
    );
    const careful = new Careful(['--all', '--shard', '1/3'], config);
    await careful.init();
    assert.deepEqual((careful as unknown as { fleet: Fleet }).fleet.selection.shard, { index: 1, count: 3 });
  });
});

describe('exit codes', () => {
  it('no command writes process.exitCode: every code goes through the base rule (markFailed, src/cli/exit-policy.ts)', async () => {
    const dir = join(REPO, 'src/commands');
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 20);
    for (const f of files) assert.doesNotMatch(await readFile(join(dir, f), 'utf8'), /process\.exitCode/, f);
  });
});
