import { UsageError } from '../base/errors.js';

/**
 * Spellings oclif's parser does not take, rewritten before it sees them (everything after `--` is left alone):
 *
 * - `--color=true|false` (also always/never, yes/no, 1/0): oclif booleans take no value, and `--color=false` would
 *   otherwise be read as `--color` plus a stray argument. `--color=auto` is the default and drops out.
 * - kubectl's levels: `-v 6`, `-v=6`, `-v6`, `--v=6` and `--v 6` become `--verbose --verbosity=6`. A bare `-v` stays
 *   the boolean `--verbose` (details and stack traces). The rule: a number directly after `-v` is its level; to pass a
 *   numeric argument after a bare -v, put -v last or the argument after `--`.
 */
export function normalizeArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
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
