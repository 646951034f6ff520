// npm run sandbox -- up [--members N] [--dir D] | status [--dir D] | env [--dir D] | down [--dir D]
// The test control plane, left running for a person who wants to try fleet. Prints paths, never tokens or keys.
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './binaries.js';
import { controlPlaneStatus, startControlPlane, stopControlPlane } from './control-plane.js';
import { tokenRequestExecUser, writeKubeconfig } from './kubeconfig.js';
import { readState, stateFile } from './state.js';

const USAGE = `usage: npm run sandbox -- <command> [options]
  up [--members N] [--dir D]   start etcd, a hub and N member apiservers (default 2) in D (default .sandbox/)
  status [--dir D]             which processes run and whether each apiserver is ready
  env [--dir D]                print "export KUBECONFIG=..." for all sandbox clusters (eval "$(npm run -s sandbox -- env)")
  down [--dir D]               stop everything and remove D`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    members: { type: 'string', default: '2' },
    dir: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
const command = positionals[0];
const dir = resolve(values.dir ?? join(repoRoot, '.sandbox'));
// Short relative paths read better in the printed commands when the sandbox lives under the current directory.
const show = (p: string) => {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
};

async function up(): Promise<number> {
  const members = Number(values.members);
  const cp = await startControlPlane({ dir, members, ownerPid: null, killOnExit: false, keepDirOnFailure: true });
  const { state } = cp;
  const kubeconfigs = state.servers.map((s) => show(s.kubeconfig));
  // Ready-made kubeconfigs for the static token users, so `fleet auth whoami` has someone other than the admin to show.
  for (const s of state.servers) {
    for (const u of s.tokenUsers) {
      writeKubeconfig({
        path: join(dir, 'users', `${u.name}@${s.name}.kubeconfig`),
        server: s.url,
        caFile: s.caFile,
        context: `${u.name}@${s.name}`,
        user: { token: u.token },
      });
    }
    // A context like a cloud CLI's (EKS, GKE, AKS): an exec plugin that mints a real 15-minute token on every run.
    writeKubeconfig({
      path: join(dir, 'users', `exec-15m@${s.name}.kubeconfig`),
      server: s.url,
      caFile: s.caFile,
      context: `exec-15m@${s.name}`,
      user: tokenRequestExecUser(state, s, { namespace: 'fleet-sandbox', serviceAccount: 'exec-15m' }),
    });
  }
  const list = kubeconfigs.join(':');
  const users = state.servers[0].tokenUsers
    .map((u) => (u.groups.length ? `${u.name} (${u.groups.join(', ')})` : u.name))
    .join(', ');
  const lines = [
    `fleet sandbox is up in ${state.startSeconds} s: Kubernetes ${state.serverVersion}, hub + ${members} member${members === 1 ? '' : 's'}, in ${show(dir)}`,
    '',
    ...state.servers.map((s) => `  ${s.name.padEnd(10)} ${s.url.padEnd(24)} ${show(s.kubeconfig)}`),
    '',
    'Try fleet (build it first with `npm run build`):',
    `  node bin/run.js clusters list --kubeconfig ${list}`,
    `  KUBECONFIG=${list} node bin/run.js clusters inspect hub`,
    `  node bin/run.js clusters inspect --kubeconfig ${show(join(dir, 'users', 'bob@member-1.kubeconfig'))}   # as static token user bob`,
    '',
    'Or with kubectl of the same version:',
    `  ${show(state.binaries.kubectl)} --kubeconfig ${kubeconfigs[0]} get namespaces`,
    '',
    `Identities: admin (client certificate, system:masters) in each <server>.kubeconfig; static token users ${users}`,
    `with kubeconfigs in ${show(join(dir, 'users'))}/<user>@<server>.kubeconfig. Each member trusts hub ServiceAccount tokens whose audience`,
    `is the member's URL, as user hub:system:serviceaccount:<namespace>:<name>. exec-15m@<server>.kubeconfig beside the`,
    `token users runs an exec plugin that mints a real 15-minute ServiceAccount token, as cloud CLIs do. Logs: ${show(join(dir, 'logs'))}/.`,
    '',
    `Run the e2e tests against it:  FLEET_TEST_CONTROL_PLANE=${show(stateFile(dir))} npm run test:e2e`,
    `Stop it:                        npm run sandbox -- down${values.dir ? ` --dir ${values.dir}` : ''}`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

async function status(): Promise<number> {
  const r = await controlPlaneStatus(dir);
  if (!r.exists) {
    process.stdout.write(`no sandbox in ${show(dir)}\n`);
    return 1;
  }
  let ok = true;
  for (const p of r.processes) {
    ok &&= p.alive;
    process.stdout.write(
      `  ${p.name.padEnd(28)} pid ${String(p.pid).padEnd(8)} ${p.alive ? 'running' : 'NOT RUNNING'}   log ${show(p.log)}\n`,
    );
  }
  for (const s of r.servers) {
    ok &&= s.ready === true;
    process.stdout.write(
      `  ${s.name.padEnd(10)} ${s.url.padEnd(24)} ${s.ready === true ? 'ready' : `not ready: ${s.ready}`}   ${show(s.kubeconfig)}\n`,
    );
  }
  if (r.servers.length === 0) process.stdout.write('  (no state.json: the start did not finish)\n');
  process.stdout.write(
    ok && r.servers.length > 0
      ? 'sandbox is up\n'
      : `sandbox is broken; run: npm run sandbox -- down${values.dir ? ` --dir ${values.dir}` : ''}\n`,
  );
  return ok && r.servers.length > 0 ? 0 : 1;
}

function env(): number {
  if (!existsSync(stateFile(dir))) {
    process.stderr.write(`no sandbox in ${show(dir)}; start one with: npm run sandbox -- up\n`);
    return 1;
  }
  const state = readState(stateFile(dir));
  process.stdout.write(
    `export KUBECONFIG=${state.servers.map((s) => s.kubeconfig).join(':')}\nexport FLEET_TEST_CONTROL_PLANE=${stateFile(dir)}\n`,
  );
  return 0;
}

async function down(): Promise<number> {
  const r = await stopControlPlane(dir);
  if (!r.removed) {
    process.stdout.write(`no sandbox in ${show(dir)}\n`);
    return 0;
  }
  process.stdout.write(`stopped ${r.stopped} process${r.stopped === 1 ? '' : 'es'}, removed ${show(dir)}\n`);
  if (r.leftAlive.length > 0) {
    process.stderr.write(`still alive after SIGKILL: ${r.leftAlive.join(', ')}\n`);
    return 1;
  }
  return 0;
}

// Interrupting `up` must not leave half a control plane running: exiting runs the harness's exit guard, which kills
// whatever was started (Node skips 'exit' handlers when a signal ends the process).
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const)
  process.on(sig, () => process.exit(code));

const commands: Record<string, () => number | Promise<number>> = { up, status, env, down };
if (values.help || !command || !commands[command]) {
  process.stderr.write(USAGE + '\n');
  process.exit(values.help ? 0 : 2);
}
try {
  process.exit(await commands[command]());
} catch (err) {
  process.stderr.write(`sandbox ${command}: ${(err as Error).message}\n`);
  process.exit(1);
}
