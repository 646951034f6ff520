import { isAbsolute } from 'node:path';

/**
 * What fleet will run, decided once (docs/decisions.md, "Approved invocations"): the absolute path of the program, the
 * name it was written as (argv[0]), its arguments and its whole environment. runProcess (src/base/subprocess.ts) takes
 * nothing else, and starts `program`, never the name again: a name looked up a second time (by the spawn, in another
 * PATH, from another directory) could run another file than the one the trust policy judged.
 *
 * Only approveInvocation makes one, and only the trust policy (src/kubeconfig/trust.ts) and the kind provider (whose
 * command is the user's own configuration) may import it: scripts/check-layers.mjs enforces that list. The constructor
 * needs a token this module keeps to itself, so no other code can build one by hand either.
 */
const MINT = Symbol('approved invocation');

export class Invocation {
  readonly program: string;
  readonly argv0: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;

  constructor(
    token: symbol,
    program: string,
    argv0: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
  ) {
    if (token !== MINT) throw new TypeError('an Invocation is made only by approveInvocation (src/base/invocation.ts)');
    this.program = program;
    this.argv0 = argv0;
    this.args = Object.freeze([...args]);
    this.env = Object.freeze({ ...env });
    Object.freeze(this);
  }

  /** The same program with one more variable (KUBERNETES_EXEC_INFO, which the runner computes per call). */
  withVariable(name: string, value: string): Invocation {
    return new Invocation(MINT, this.program, this.argv0, this.args, { ...this.env, [name]: value });
  }
}

/**
 * The one way to make an Invocation: `program` must already be resolved to an absolute path by whoever approved it.
 * Values of the environment are strings (undefined ones dropped), never evaluated.
 */
export function approveInvocation(
  program: string,
  o: { argv0?: string; args?: readonly string[]; env: NodeJS.ProcessEnv | Record<string, string> },
): Invocation {
  if (!isAbsolute(program)) throw new TypeError(`approveInvocation: ${program} is not an absolute path`);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.env)) if (typeof v === 'string') env[k] = v;
  return new Invocation(MINT, program, o.argv0 ?? program, o.args ?? [], env);
}
