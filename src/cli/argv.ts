import { UsageError } from '../base/errors.js';

/**
 * Spellings oclif's parser does not take, rewritten before it sees them (everything after `--` is left alone):
 *
 * - `--color=true|false` (also always/never, yes/no, 1/0): oclif booleans take no value, and `--color=false` would
 *   otherwise be read as `--color` plus a stray argument. `--color=auto` is the default and drops out.
 * - kubectl's levels: `-v 6`, `-v=6`, `-v6`, `--v=6` and `--v 6` become `--verbose --verbosity=6`. A bare `-v` stays
 *   the boolean `--verbose` (details and stack traces). The rule: a number directly after `-v` is its level; to pass a
 *   numeric argument after a bare -v, put -v last or the argument after `--`.
 * - A level that is not a whole number is refused here in one line (levelError) where the spelling says it is a level:
 *   `--verbosity X`, `--verbosity=X`, `-v=X`, `--v=X`. After `-v X` the word may be an argument; when the command has
 *   no place for it, misreadLevel says it was meant as a level.
 */
export function normalizeArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const given = /^(--verbosity|--v|-v)=(.*)$/.exec(a);
    if (given && !/^\d+$/.test(given[2])) throw levelError(given[1], given[2]);
    const next = argv[i + 1];
    if (a === '--verbosity' && next !== undefined && !/^\d+$/.test(next) && !/^-[-a-zA-Z]/.test(next))
      throw levelError(a, next);
    const color = /^--colou?r=(.*)$/.exec(a);
    if (color) {
      const mode = colorMode(color[1]);
      if (mode !== undefined) out.push(mode ? '--color' : '--no-color');
      continue;
    }
    const level = /^(?:-v=?|--v=)(\d+)$/.exec(a);
    if (level) {
      out.push('--verbose', `--verbosity=${level[1]}`);
      continue;
    }
    if ((a === '-v' || a === '--v') && /^\d+$/.test(argv[i + 1] ?? '')) {
      out.push('--verbose', `--verbosity=${argv[++i]}`);
      continue;
    }
    out.push(a === '--v' ? '--verbose' : a);
  }
  return out;
}

const LEVELS = 'use a whole number from 0 (6 logs each request, 7 adds request headers, 8 response headers)';

/** `--verbosity: "abc" is not a log level; ...`: the flag as typed, the value, the levels (and -v's other meaning). */
function levelError(flag: string, value: string): UsageError {
  const bare = flag === '--verbosity' ? '' : `, or ${flag} alone for --verbose`;
  return new UsageError(`${flag}: ${JSON.stringify(value)} is not a log level; ${LEVELS}${bare}`);
}

/**
 * oclif's "Unexpected argument: abc" for `-v abc` (or `--v abc`): the word had no place as an argument, so it was meant
 * as -v's level, and the error says so (levelError). Undefined for any other error, or a stray word elsewhere.
 */
export function misreadLevel(typed: string[], error: unknown): UsageError | undefined {
  const words = (error as { args?: unknown } | undefined)?.args;
  if (!(error instanceof Error) || !/^Unexpected arguments?: /.test(error.message) || !Array.isArray(words))
    return undefined;
  const end = typed.indexOf('--');
  const args = end === -1 ? typed : typed.slice(0, end);
  for (let i = 0; i + 1 < args.length; i++) {
    if ((args[i] === '-v' || args[i] === '--v') && words.includes(args[i + 1])) return levelError(args[i], args[i + 1]);
  }
  return undefined;
}

function colorMode(value: string): boolean | undefined {
  const v = value.toLowerCase();
  if (['true', 'always', 'yes', '1', 'on'].includes(v)) return true;
  if (['false', 'never', 'no', '0', 'off'].includes(v)) return false;
  if (v === 'auto') return undefined;
  throw new UsageError(`--color: "${value}" is not true or false (also: always, never, auto)`);
}

/** Whether the command line asked for detail: -v in any spelling, or --verbose. Read from argv so it works when parsing failed. */
export function verboseInArgv(argv: string[]): boolean {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  return args.some(
    (a) =>
      a === '-v' || a === '--verbose' || a === '--v' || /^(?:-v=?|--v=)\d+$/.test(a) || a.startsWith('--verbosity'),
  );
}

/**
 * oclif's validation messages in plain words, one line each: the "The following errors occurred:" header goes, and
 * "--namespace=x cannot also be provided when using --all-namespaces" says what to do instead.
 */
export function plainParseMessage(message: string): string {
  // Two flags that exclude each other are reported by oclif once from each side: one sentence says it.
  const pairs = new Set<string>();
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => !/^The following errors? occurred:?$/.test(l))
    .flatMap((l) => {
      const both = /^--([\w-]+)(?:=\S*)? cannot also be provided when using --([\w-]+)$/.exec(l);
      if (!both) return [l];
      const [, a, b] = both;
      const pair = [a, b].sort().join('\u0000');
      if (pairs.has(pair)) return [];
      pairs.add(pair);
      return [`--${b} and --${a} cannot be used together; use one of them`];
    })
    .join('\n');
}
