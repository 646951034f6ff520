// fleet reads kuberc and applies its credential plugin policy as kubectl 1.35 does: the same kuberc files and kubeconfig
// exec users are given to a kubectl built from the k8s.io/kubectl v0.35 module (test/kubectl-135/build.sh), which runs
// `auth whoami` against the real control plane, and to fleet's loadKuberc + pluginAllowed; each case must end the same
// way (allowed, refused by the policy, or the kuberc refused as a whole) and warn alike. The plugin is a real one
// (test/fixtures/plugins/token-request-plugin.mjs behind a `cloudco-login` wrapper): an allowed run mints a
// ServiceAccount token and whoami answers with that ServiceAccount. Commands are given by name on PATH, by absolute
// path, through a symlink on PATH, by a path relative to the kubeconfig, and as a name that is nowhere.
// The few documented differences (docs/kubeconfig.md "kuberc") are asserted as differences, not skipped.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import { setWarningSink } from '../../src/base/warnings.js';
import { loadKuberc, pluginAllowed } from '../../src/kubeconfig/kuberc.js';
import { loadMerged, resolveContext } from '../../src/kubeconfig/loading-rules.js';
import { runFleet } from '../support/cli.js';
import { loadControlPlane, scratchDir, uniqueName, writeKubeconfig } from '../support/fixture.js';
import { buildScriptOutput } from '../support/binaries.js';

const cp = loadControlPlane();
const hub = cp.hub;
const BUILD = fileURLToPath(new URL('../kubectl-135/build.sh', import.meta.url));
const PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-request-plugin.mjs', import.meta.url));
const ns = uniqueName('kuberc');
const sa = 'cloudco';
const USER = `system:serviceaccount:${ns}:${sa}`;
const V1BETA1 = 'apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n';

type Outcome = 'allowed' | 'refused' | 'kuberc refused';
type Command = 'name' | 'absolute' | 'symlink' | 'relative' | 'missing';
interface Case {
  name: string;
  command: Command;
  /** The kuberc text and where it is put: ~/.kube/kuberc, KUBERC, or --kuberc. */
  kuberc?: { at: 'default' | 'KUBERC' | 'flag'; text: string };
  /** A second file, for precedence cases: put at the other place. */
  also?: { at: 'default' | 'KUBERC'; text: string };
  env?: Record<string, string>;
  /** A deliberate difference: what each side does and why (docs/kubeconfig.md). */
  differs?: { kubectl: Outcome; fleet: Outcome; why: string; warned?: { kubectl: boolean; fleet: boolean } };
}

interface Seen {
  outcome: Outcome;
  warned: boolean;
  detail: string;
}

let work: string;
let bin: string;
let links: string;
let kubectl135: string;
const kubeconfigs = {} as Record<Command, string>;
const pathFor = (c: Command) => (c === 'symlink' ? `${links}:${bin}:/usr/bin:/bin` : `${bin}:/usr/bin:/bin`);
let cwd: string;
const warnings: string[] = [];

const deny = `${V1BETA1}credentialPluginPolicy: DenyAll\n`;
const allowlist = (...names: string[]) =>
  `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n${names.map((n) => `- name: ${n}\n`).join('')}`;

function cases(): Case[] {
  const commands: Command[] = ['name', 'absolute', 'symlink', 'relative', 'missing'];
  const policies: Array<[string, string | undefined]> = [
    ['no kuberc', undefined],
    ['AllowAll', `${V1BETA1}credentialPluginPolicy: AllowAll\n`],
    ['DenyAll', deny],
    ['Allowlist by name', allowlist('cloudco-login')],
    ['Allowlist by full path', allowlist(`${bin}/cloudco-login`)],
    ['Allowlist by the symlink path', allowlist(`${links}/cloudco-login`)],
    ['Allowlist by a relative path', allowlist('bin/cloudco-login')],
    ['Allowlist of other plugins', allowlist('other-login', '/usr/local/bin/cloudco-login')],
  ];
  const out: Case[] = [];
  for (const [name, text] of policies) {
    for (const command of commands)
      out.push({ name, command, kuberc: text === undefined ? undefined : { at: 'default', text } });
  }
  const one = (c: Omit<Case, 'command'>): Case => ({ command: 'name', ...c });
  out.push(
    one({
      name: 'v1alpha1 with DenyAll (ignored)',
      kuberc: {
        at: 'default',
        text: 'apiVersion: kubectl.config.k8s.io/v1alpha1\nkind: Preference\ncredentialPluginPolicy: DenyAll\n',
      },
    }),
    one({ name: 'unknown field beside DenyAll', kuberc: { at: 'flag', text: `${deny}colour: blue\n` } }),
    one({
      name: 'entry with name and command alike',
      kuberc: {
        at: 'flag',
        text: `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- {name: cloudco-login, command: cloudco-login}\n`,
      },
    }),
    one({
      name: 'entry spelled command: only',
      kuberc: {
        at: 'flag',
        text: `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: cloudco-login\n`,
      },
      differs: {
        kubectl: 'kuberc refused',
        fleet: 'allowed',
        why: '1.35 knows only name:, 1.36 renamed it command:; fleet reads both as 1.36 does',
      },
    }),
    one({ name: 'non-normalised entry', kuberc: { at: 'flag', text: allowlist('./bin/cloudco-login') } }),
    one({
      name: 'Allowlist with an empty list',
      kuberc: { at: 'default', text: `${V1BETA1}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: []\n` },
    }),
    one({
      name: 'Allowlist with no list',
      kuberc: { at: 'default', text: `${V1BETA1}credentialPluginPolicy: Allowlist\n` },
    }),
    one({
      name: 'AllowAll with a list',
      kuberc: {
        at: 'default',
        text: `${V1BETA1}credentialPluginPolicy: AllowAll\ncredentialPluginAllowlist: [{name: x}]\n`,
      },
    }),
    one({ name: 'unknown policy', kuberc: { at: 'default', text: `${V1BETA1}credentialPluginPolicy: denyall\n` } }),
    one({
      name: 'policy of the wrong type, default file',
      kuberc: { at: 'default', text: `${V1BETA1}credentialPluginPolicy: 5\n` },
    }),
    one({
      name: 'policy of the wrong type, KUBERC',
      kuberc: { at: 'KUBERC', text: `${V1BETA1}credentialPluginPolicy: 5\n` },
    }),
    one({ name: 'not YAML, default file', kuberc: { at: 'default', text: '{credentialPluginPolicy: DenyAll\n' } }),
    one({ name: 'not YAML, --kuberc', kuberc: { at: 'flag', text: '{credentialPluginPolicy: DenyAll\n' } }),
    one({
      name: 'second document is the Preference',
      kuberc: { at: 'default', text: `apiVersion: v1\nkind: Config\n---\n${deny}` },
    }),
    one({
      name: 'policy key given twice',
      kuberc: { at: 'default', text: `${V1BETA1}credentialPluginPolicy: AllowAll\ncredentialPluginPolicy: DenyAll\n` },
      differs: {
        kubectl: 'refused',
        fleet: 'kuberc refused',
        why: 'kubectl keeps the last value with a warning; fleet refuses the file',
        warned: { kubectl: true, fleet: false },
      },
    }),
    one({ name: 'KUBECTL_KUBERC=false', kuberc: { at: 'default', text: deny }, env: { KUBECTL_KUBERC: 'false' } }),
    one({
      name: 'KUBECTL_KUBERC=false and --kuberc',
      kuberc: { at: 'flag', text: deny },
      env: { KUBECTL_KUBERC: 'false' },
    }),
    one({ name: 'KUBERC=off', kuberc: { at: 'default', text: deny }, env: { KUBERC: 'off' } }),
    one({ name: 'KUBERC=off and --kuberc', kuberc: { at: 'flag', text: deny }, env: { KUBERC: 'off' } }),
    one({
      name: 'KUBERC over the default file',
      kuberc: { at: 'KUBERC', text: deny },
      also: { at: 'default', text: allowlist('cloudco-login') },
    }),
    one({
      name: '--kuberc over KUBERC',
      kuberc: { at: 'flag', text: allowlist('cloudco-login') },
      also: { at: 'KUBERC', text: deny },
    }),
    {
      name: 'listed name that is nowhere (allowed verbatim; the run fails)',
      command: 'missing',
      kuberc: { at: 'default', text: allowlist('cloudco-missing') },
    },
    one({
      name: 'relative PATH entry, Allowlist by full path',
      kuberc: { at: 'default', text: allowlist(`${bin}/cloudco-login`) },
      env: { PATH: 'bin:/usr/bin:/bin' },
    }),
    one({
      name: 'relative PATH entry, Allowlist by name (Go then refuses to run it)',
      kuberc: { at: 'default', text: allowlist('cloudco-login') },
      env: { PATH: 'bin:/usr/bin:/bin' },
    }),
    one({
      name: 'KUBERC names a missing file',
      kuberc: { at: 'KUBERC', text: '' },
      env: { KUBERC: '/nonexistent/kuberc' },
    }),
  );
  return out;
}

/** The files and environment of one case, in a directory of its own (its HOME). */
function prepare(c: Case, i: number): { env: NodeJS.ProcessEnv; flag?: string; home: string } {
  const dir = join(work, 'cases', String(i));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  const env: NodeJS.ProcessEnv = { HOME: home, PATH: pathFor(c.command) };
  let flag: string | undefined;
  const put = (at: 'default' | 'KUBERC' | 'flag', text: string) => {
    const path = at === 'default' ? join(home, '.kube', 'kuberc') : join(dir, `${at}.kuberc`);
    writeFileSync(path, text);
    if (at === 'KUBERC') env.KUBERC = path;
    if (at === 'flag') flag = path;
  };
  if (c.kuberc) put(c.kuberc.at, c.kuberc.text);
  if (c.also) put(c.also.at, c.also.text);
  Object.assign(env, c.env);
  return { env, flag, home };
}

function runKubectl(c: Case, env: NodeJS.ProcessEnv, flag?: string): Promise<Seen> {
  const args = [
    '--kubeconfig',
    kubeconfigs[c.command],
    ...(flag ? ['--kuberc', flag] : []),
    'auth',
    'whoami',
    '-o',
    'jsonpath={.status.userInfo.username}',
  ];
  return new Promise((resolve, reject) => {
    execFile(kubectl135, args, { env, cwd: work, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
        // A string code (ENOENT, EACCES, ERR_CHILD_PROCESS_STDIO_MAXBUFFER): the run failed, not the program.
        const failed: Error = error;
        return reject(failed);
      }
      const warned = /kuberc: (ignoring strict decoding error|no preferences loaded)/.test(stderr);
      const detail = stderr.replace(/\s+/g, ' ').trim() || stdout;
      if (/error occurred while applying preferences|unknown flag: --kuberc/.test(stderr))
        return resolve({ outcome: 'kuberc refused', warned, detail });
      if (
        /not allowed: policy set to|is not permitted by the credential plugin allowlist|cannot be resolved for credential plugin allowlist check/.test(
          stderr,
        )
      ) {
        return resolve({ outcome: 'refused', warned, detail });
      }
      // Allowed: the plugin ran and its token named the ServiceAccount, or the policy let it through and exec could not
      // start it (a name that is nowhere; Go's ErrDot for a program found through a relative PATH entry).
      if (!error && stdout === USER) return resolve({ outcome: 'allowed', warned, detail: `whoami: ${stdout}` });
      // client-go words every *exec.Error so, the ErrDot of a program found through a relative PATH entry included.
      if (/exec: executable cloudco-(missing|login) not found/.test(stderr))
        return resolve({ outcome: 'allowed', warned, detail });
      reject(
        new Error(
          `kubectl 1.35 on case ${c.name} (${c.command}): unexpected exit ${error?.code ?? 0}: ${stderr}${stdout}`,
        ),
      );
    });
  });
}

async function runFleetSide(c: Case, env: NodeJS.ProcessEnv, flag?: string): Promise<Seen> {
  warnings.length = 0;
  const merged = await loadMerged([kubeconfigs[c.command]], { explicit: true });
  const command = resolveContext(merged, merged.currentContext!).user.exec!.command!;
  try {
    const kuberc = await loadKuberc({ flag, env });
    const decision = pluginAllowed(kuberc, command, env);
    if (!decision.allowed) {
      assert.match(
        decision.reason,
        new RegExp(
          `^plugin "${command.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" not allowed by credentialPluginPolicy \\w+ in ${kuberc!.path}`,
        ),
      );
      return { outcome: 'refused', warned: warnings.length > 0, detail: decision.reason };
    }
    return { outcome: 'allowed', warned: warnings.length > 0, detail: warnings.join(' ') };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    assert.doesNotMatch(error.message, /\n/);
    return { outcome: 'kuberc refused', warned: warnings.length > 0, detail: error.message };
  }
}

/**
 * The fleet CLI itself on the same case: `auth whoami` with the case's HOME, KUBERC, KUBECTL_KUBERC and --kuberc. The
 * verdict reaches the user as kubectl's does: the plugin ran (the server named its ServiceAccount), a refusal naming the
 * context, the command and the kuberc (exit 1), or the kuberc refused as a whole (one line, exit 2).
 */
async function runFleetCli(c: Case, env: NodeJS.ProcessEnv, flag?: string): Promise<Seen> {
  const res = await runFleet(
    ['auth', 'whoami', '--kubeconfig', kubeconfigs[c.command], ...(flag ? ['--kuberc', flag] : []), '-o', 'json'],
    { env, cwd: work },
  );
  const detail = res.stderr.replace(/\s+/g, ' ').trim();
  const warned = /warning: .*kuberc/i.test(res.stderr);
  if (res.code === 2) {
    assert.equal(
      res.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('error:')).length,
      1,
      detail,
    );
    return { outcome: 'kuberc refused', warned, detail };
  }
  if (
    res.code === 0 &&
    res.json<{ items: Array<{ user?: { username?: string } }> }>().items[0]?.user?.username === USER
  )
    return { outcome: 'allowed', warned, detail: 'whoami ok' };
  if (/not allowed by credentialPluginPolicy/.test(res.stderr)) {
    assert.match(res.stderr, new RegExp(`context "kuberc-${c.command}"`), 'the refusal names the context');
    return { outcome: 'refused', warned, detail };
  }
  // The policy let it through and the program could not be started (a name that is nowhere on PATH, or found through a
  // relative PATH entry, which Go refuses as kubectl does: before issue 38 fleet ran that file, here it says ErrDot).
  if (/executable not found|in a relative PATH directory, which Go refuses \(ErrDot\)/.test(res.stderr))
    return { outcome: 'allowed', warned, detail };
  throw new Error(`fleet on case ${c.name} (${c.command}): unexpected exit ${res.code}: ${res.stderr}${res.stdout}`);
}

describe('kuberc: fleet against kubectl 1.35 on the same files', () => {
  before(async () => {
    const start = Date.now();
    kubectl135 = buildScriptOutput(BUILD);
    const version = execFileSync(kubectl135, ['version', '--client'], { encoding: 'utf8' });
    assert.match(version, /Client Version: v1\.35\./);
    console.log(`kubectl 1.35 ready after ${Date.now() - start} ms: ${kubectl135}`);

    work = join(scratchDir(), uniqueName('kuberc'));
    bin = join(work, 'bin');
    links = join(work, 'links');
    mkdirSync(bin, { recursive: true });
    mkdirSync(links);
    writeFileSync(join(bin, 'cloudco-login'), `#!/bin/sh\nexec '${process.execPath}' '${PLUGIN}' "$@"\n`);
    chmodSync(join(bin, 'cloudco-login'), 0o755);
    // A shim directory's link to the same program: runs the same file, but is another path to the allowlist.
    symlinkSync(join(bin, 'cloudco-login'), join(links, 'cloudco-login'));
    const args = [
      '--server',
      hub.url,
      '--ca',
      hub.caFile,
      '--cert',
      cp.admin.certFile,
      '--key',
      cp.admin.keyFile,
      '--namespace',
      ns,
      '--service-account',
      sa,
    ];
    const commands: Record<Command, string> = {
      name: 'cloudco-login',
      absolute: join(bin, 'cloudco-login'),
      symlink: 'cloudco-login',
      // client-go (and fleet's loader) make it absolute against the kubeconfig's directory: <work>/bin/cloudco-login.
      relative: './bin/cloudco-login',
      missing: 'cloudco-missing',
    };
    for (const [key, command] of Object.entries(commands) as Array<[Command, string]>) {
      kubeconfigs[key] = writeKubeconfig({
        path: join(work, `${key}.kubeconfig`),
        server: hub.url,
        caFile: hub.caFile,
        context: `kuberc-${key}`,
        user: { exec: { command, args } },
      });
    }
    setWarningSink((line) => warnings.push(line));
    // pluginAllowed resolves relative paths against the current directory, as the exec runner does: kubectl runs here too.
    cwd = process.cwd();
    process.chdir(work);
  });
  after(() => process.chdir(cwd));

  it('decides every case as kubectl 1.35 does', { timeout: 300_000 }, async () => {
    const all = cases();
    const prepared = all.map((c, i) => prepare(c, i));
    // kubectl runs four at a time (each starts the plugin, which asks the API server for a token); fleet's side after.
    const kubectlSeen: Seen[] = new Array(all.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < all.length) {
          const i = next++;
          kubectlSeen[i] = await runKubectl(all[i], prepared[i].env, prepared[i].flag);
        }
      }),
    );
    const fleetSeen: Seen[] = [];
    for (const [i, c] of all.entries()) fleetSeen.push(await runFleetSide(c, prepared[i].env, prepared[i].flag));
    // And the CLI, which must reach the same verdict as the module it calls (the policy is applied where plugins run).
    const cliSeen: Seen[] = new Array(all.length);
    next = 0;
    await Promise.all(
      Array.from({ length: 2 }, async () => {
        while (next < all.length) {
          const i = next++;
          cliSeen[i] = await runFleetCli(all[i], prepared[i].env, prepared[i].flag);
        }
      }),
    );

    const rows = all.map((c, i) => ({
      case: c.name,
      command: c.command,
      kubectl: kubectlSeen[i].outcome + (kubectlSeen[i].warned ? ' (warned)' : ''),
      fleet: fleetSeen[i].outcome + (fleetSeen[i].warned ? ' (warned)' : ''),
      'fleet CLI': cliSeen[i].outcome,
      same: c.differs ? `no: ${c.differs.why}` : 'yes',
    }));
    console.log('\nkuberc matrix (kubectl 1.35 auth whoami vs fleet loadKuberc + pluginAllowed):');
    console.table(rows);

    const problems: string[] = [];
    for (const [i, c] of all.entries()) {
      const k = kubectlSeen[i];
      const f = fleetSeen[i];
      const want = c.differs ?? { kubectl: k.outcome, fleet: k.outcome };
      if (k.outcome !== want.kubectl || f.outcome !== want.fleet) {
        problems.push(
          `${c.name} (${c.command}): kubectl ${k.outcome} [${k.detail}], fleet ${f.outcome} [${f.detail}]${c.differs ? ' (a documented difference that no longer holds)' : ''}`,
        );
      }
      if (cliSeen[i].outcome !== f.outcome)
        problems.push(
          `${c.name} (${c.command}): fleet's module ${f.outcome}, the fleet CLI ${cliSeen[i].outcome} [${cliSeen[i].detail}]`,
        );
      const warned = c.differs?.warned ?? { kubectl: k.warned, fleet: k.warned };
      if (k.warned !== warned.kubectl || f.warned !== warned.fleet)
        problems.push(
          `${c.name} (${c.command}): kubectl ${k.warned ? 'warned' : 'did not warn'} [${k.detail}], fleet ${f.warned ? 'warned' : 'did not warn'} [${f.detail}]`,
        );
    }
    assert.deepEqual(problems, []);
    // The matrix is not vacuous: each outcome occurs on both sides, and an allowed plugin really minted the token.
    for (const outcome of ['allowed', 'refused', 'kuberc refused'] as const) {
      assert.ok(
        kubectlSeen.some((s) => s.outcome === outcome),
        `kubectl: no case ${outcome}`,
      );
      assert.ok(
        fleetSeen.some((s) => s.outcome === outcome),
        `fleet: no case ${outcome}`,
      );
    }
    assert.ok(kubectlSeen.filter((s) => s.detail === `whoami: ${USER}`).length >= 10);
  });
});
