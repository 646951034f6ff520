// Approved invocations for tests: what the trust policy hands the exec runner and runProcess (src/base/invocation.ts),
// made the way src/ makes them (TrustPolicy.approve for an exec plugin, resolveProgram for a program), never by hand.
import { approveInvocation, type Invocation } from '../../src/base/invocation.js';
import { type ProcessResult, type RunProcessOptions, runProcess } from '../../src/base/subprocess.js';
import { resolveProgram } from '../../src/kubeconfig/kuberc.js';
import type { ResolvedContext } from '../../src/kubeconfig/loading-rules.js';
import { type ApprovedExec, TrustPolicy } from '../../src/kubeconfig/trust.js';
import type { ClusterEntry, ExecConfig } from '../../src/kubeconfig/types.js';

/** The user's own exec plugin (no kuberc, no origin) as TrustPolicy.approve approves it, in `env` (default process.env). */
export async function approvedExec(
  exec: ExecConfig,
  env: NodeJS.ProcessEnv = process.env,
  cluster: ClusterEntry = {},
): Promise<ApprovedExec> {
  return approvedContext(
    { contextName: 'test', clusterName: 'test', cluster, user: { exec }, contextFile: 'test', clusterFile: 'test' },
    env,
  );
}

/** A context's exec plugin as TrustPolicy.approve approves it (strict: no kuberc, no allowlist); a refusal throws. */
export async function approvedContext(
  ctx: ResolvedContext,
  env: NodeJS.ProcessEnv = process.env,
  configure?: (policy: TrustPolicy) => void,
): Promise<ApprovedExec> {
  const policy = new TrustPolicy({ env, loadKuberc: async () => undefined });
  // What a fleet.yaml would allow (TrustPolicy.allow), for a test whose data needs an entry.
  configure?.(policy);
  const a = await policy.approve(ctx);
  if (a.refusal) throw new Error(`refused: ${a.refusal.message}`);
  if (!a.plugin) throw new Error('no exec plugin in the context');
  return a.plugin;
}

/** A program resolved as fleet resolves one (Go's exec rules), approved to run with these arguments and environment. */
export function invocation(command: string, o: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): Invocation {
  const env = o.env ?? process.env;
  const r = resolveProgram(command, env, process.cwd());
  // An unresolvable program is still handed to the spawn (as an absolute path), so its start fails as the test expects.
  const program = r.program ?? (command.startsWith('/') ? command : `${process.cwd()}/${command}`);
  return approveInvocation(program, { argv0: command, args: o.args ?? [], env });
}

/** runProcess of `invocation(command, ...)`: the tests of the spawner name programs as they used to. */
export function runCommand(
  command: string,
  options: RunProcessOptions & { args?: string[]; env?: NodeJS.ProcessEnv },
): Promise<ProcessResult> {
  const { args, env, ...rest } = options;
  return runProcess(invocation(command, { args, env }), rest);
}
