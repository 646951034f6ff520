import {Chalk, type ChalkInstance} from 'chalk'

/**
 * One colour policy (chalk 5 ignores NO_COLOR): colour only when the stream is a TTY, NO_COLOR is unset, TERM is not
 * dumb and --no-color was not given; FORCE_COLOR wins over the TTY test so CI logs can opt in.
 */
export function colorEnabled(options: {flag?: boolean; stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv} = {}): boolean {
  const env = options.env ?? process.env
  if (options.flag === false) return false
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false') return true
  if (options.flag === true) return true
  if (env.TERM === 'dumb') return false
  return Boolean((options.stream ?? process.stdout).isTTY)
}

export function makeChalk(enabled: boolean): ChalkInstance {
  return new Chalk({level: enabled ? 1 : 0})
}
