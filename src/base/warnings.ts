import { escapeTerminal } from './terminal.js';

/**
 * Warnings found below the command layer (a server reached over plain http), said once per run on stderr. One place,
 * so the rendering layer can take them over later without every module learning about output.
 */
const said = new Set<string>();
// A warning may quote a server's URL or message: escaped for the terminal here too, as the CLI's sink does.
let sink: (line: string) => void = (line) => process.stderr.write(escapeTerminal(line) + '\n');

export function warnOnce(message: string): void {
  if (said.has(message)) return;
  said.add(message);
  sink(`warning: ${message}`);
}

/** Redirects warnings (the CLI scrubs them; tests collect them). */
export function setWarningSink(fn: (line: string) => void): void {
  sink = fn;
}
