import { Chalk, type ChalkInstance } from 'chalk';

/**
 * One colour policy (chalk 5 ignores NO_COLOR): colour only when the stream is a TTY, NO_COLOR is unset, TERM is not
 * dumb and --no-color (--color=false) was not given. FORCE_COLOR decides over the TTY test: 0/false turns colour off at a
 * terminal, anything else turns it on so CI logs can opt in. Precedence: --no-color, NO_COLOR, --color, FORCE_COLOR.
 */
export function colorEnabled(
  options: { flag?: boolean; stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv } = {},
): boolean {
  const env = options.env ?? process.env;
  if (options.flag === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (options.flag === true) return true;
  // FORCE_COLOR as chalk and Node read it: 0 or false forces colour off (even at a terminal), any other value on.
  if (env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return true;
  if (env.TERM === 'dumb') return false;
  return Boolean((options.stream ?? process.stdout).isTTY);
}

export function makeChalk(enabled: boolean): ChalkInstance {
  return new Chalk({ level: enabled ? 1 : 0 });
}
