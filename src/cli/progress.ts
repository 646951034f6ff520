import { escapeTerminal } from '../base/terminal.js';
import type { Progress } from '../fleet/runner.js';

/**
 * Whether a stream may receive cursor control (the `\r` + erase-line of a progress line): a terminal that is not
 * `TERM=dumb`. A dumb terminal (Emacs shell buffers, some CI consoles) prints escape codes as garbage.
 */
export function cursorControlAllowed(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/**
 * The progress line of a run over several clusters (or of what `noun` names: `creds rotate`'s credentials), on stderr,
 * only for a person at a terminal that takes cursor control: `[3/12] clusters, 1 failed`, rewritten in place and erased
 * when the last one is done so it never mixes with the output.
 */
export function progressLine({
  stream = process.stderr,
  env = process.env,
  noun = 'clusters',
}: { stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv; noun?: string } = {}): ((p: Progress) => void) | undefined {
  if (!cursorControlAllowed(stream, env)) return undefined;
  // Only numbers and fleet's own words: nothing from a server or from data is in this line, so it needs no escaping
  // (src/base/terminal.ts), and its CR and erase-line are the one cursor control fleet writes on purpose.
  return ({ done, total, failed }) => {
    if (total <= 1) return;
    stream.write(
      done >= total ? '\r\u001B[2K' : `\r\u001B[2K[${done}/${total}] ${noun}${failed > 0 ? `, ${failed} failed` : ''}`,
    );
  };
}

/**
 * A status line for one wait of several seconds (`creds revoke` waiting for the old token's 401), on stderr, only at a
 * terminal that takes cursor control: drawn in place, erased when the wait is over (undefined), so it never mixes with
 * the output. The text may name data (a Secret's name): escaped.
 */
export function statusLine({
  stream = process.stderr,
  env = process.env,
}: { stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv } = {}): ((text: string | undefined) => void) | undefined {
  if (!cursorControlAllowed(stream, env)) return undefined;
  return (text) => {
    stream.write(text === undefined ? '\r\u001B[2K' : `\r\u001B[2K${escapeTerminal(text)}...`);
  };
}
