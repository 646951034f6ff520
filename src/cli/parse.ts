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

/** What oclif's parse errors carry of the command's definitions (CLIParseError.parse.input). */
interface ParseInput {
  parse?: { input?: { flags?: Record<string, { summary?: string; description?: string }> } };
}

/**
 * oclif's parse errors span several lines (an argument table, "See more help"); fleet's rule is one line naming what is
 * wrong, so they are folded: missing arguments by name, missing flags in one sentence with what each names, other
 * messages joined (a list of separate errors with "; ", a header and its detail with ": ").
 */
export function oneLine(err: Error & { args?: Array<{ name?: string }> } & ParseInput): string {
  if (/^Missing \d+ required arg/.test(err.message) && Array.isArray(err.args)) {
    const names = err.args.map((a) => (a.name ?? '').toUpperCase()).filter(Boolean);
    return `missing argument${names.length === 1 ? '' : 's'} ${names.join(', ')} (see --help)`;
  }
  const list = /^The following errors? occurred/m.test(err.message);
  const lines = plainParseMessage(err.message)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(See more help|Note:|Alternatively)/.test(l));
  const missing = lines.flatMap((l) => /^Missing required flag ([\w-]+)$/.exec(l)?.[1] ?? []);
  const rest = lines.filter((l) => !/^Missing required flag /.test(l));
  return [...(missing.length > 0 ? [missingFlags(missing, err.parse?.input?.flags ?? {})] : []), ...rest]
    .join(list ? '; ' : ': ')
    .replace(/\s+:/g, ':');
}

/**
 * `missing --target (the cluster that should accept the token) and --service-account (the hub ServiceAccount,
 * NAMESPACE/NAME); see --help`: the flags in the command's order, each with the first sentence of its help.
 */
function missingFlags(names: string[], flags: Record<string, { summary?: string; description?: string }>): string {
  const order = Object.keys(flags);
  const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : order.length);
  const named = [...new Set(names)]
    .sort((a, b) => rank(a) - rank(b))
    .map((n) => {
      const help = (flags[n]?.summary ?? flags[n]?.description ?? '').split(/\.(?:\s|$)/)[0].trim();
      const what = /^[A-Z][a-z]/.test(help) ? help[0].toLowerCase() + help.slice(1) : help;
      return what === '' ? `--${n}` : `--${n} (${what})`;
    });
  const all = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  return `missing ${all}; see --help`;
}
