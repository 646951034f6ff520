import { plainParseMessage } from './argv.js';

/**
 * Parsing, the part of the base command that reads the command line: which output format it names (also when oclif's
 * parse failed, for the error path) and oclif's parse errors folded into fleet's one line.
 */

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'jsonl', 'yaml', 'name', 'prometheus'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The output format named in argv, readable before (or without) a successful parse, e.g. when parsing itself failed. */
function outputInArgv(argv: string[]): string | undefined {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  let found: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--json') found = 'json';
    else if (a === '-o' || a === '--output') found = args[i + 1];
    else if (a.startsWith('--output=')) found = a.slice('--output='.length);
    else if (a.startsWith('-o=')) found = a.slice(3);
    else if (a.startsWith('-o') && a.length > 2) found = a.slice(2);
  }
  return found;
}

const isOutputFormat = (s: string | undefined): s is OutputFormat =>
  s !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(s);

/**
 * The output format. `--json` is `-o json`; when both are given the later one wins, the same rule oclif's JSON printing
 * (jsonEnabled) and the error path follow, so the chosen format is the one printed. Before a successful parse there are
 * no flags: argv alone says it.
 */
export function outputFormat(argv: string[], flags?: { json?: boolean; output?: string }): OutputFormat {
  const named = outputInArgv(argv);
  if (isOutputFormat(named)) return named;
  if (flags?.json) return 'json';
  return isOutputFormat(flags?.output) ? flags.output : 'table';
}

/** Machine output: no prompts, no progress, no colour. */
export function isMachineFormat(format: OutputFormat): boolean {
  return format === 'json' || format === 'jsonl' || format === 'yaml' || format === 'name' || format === 'prometheus';
}

/**
 * oclif's parse errors span several lines (an argument table, "See more help"); fleet's rule is one line naming what is
 * wrong, so they are folded: missing arguments by name, other messages joined.
 */
export function oneLine(err: Error & { args?: Array<{ name?: string }> }): string {
  if (/^Missing \d+ required arg/.test(err.message) && Array.isArray(err.args)) {
    const names = err.args.map((a) => (a.name ?? '').toUpperCase()).filter(Boolean);
    return `missing argument${names.length === 1 ? '' : 's'} ${names.join(', ')} (see --help)`;
  }
  return plainParseMessage(err.message)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(See more help|Note:|Alternatively)/.test(l))
    .join(': ')
    .replace(/\s+:/g, ':');
}
