import { MAX_JSON_DEPTH } from './limits.js';

/**
 * Whether a JSON text nests arrays and objects deeper than `max`: one pass over its UTF-8 bytes, counting brackets
 * outside strings (a backslash escapes the next byte inside one); no parse, no recursion. V8's JSON.parse nests as deep
 * as the text does, but what follows it and recurses (JSON.stringify for -o json, YAML output, a walk over the value)
 * runs out of stack ("Maximum call stack size exceeded"). UTF-8 never uses an ASCII byte inside a multi-byte
 * character, so the brackets and quotes seen are the text's own. A string is encoded first: one loop over a typed array
 * stays fast for the 64 MiB response bodies (a loop that also reads strings ran them about 3 times slower, measured),
 * and the copy costs less than a string loop. Exact for valid JSON, which is all that parses.
 */
export function nestedDeeperThan(text: string | Uint8Array, max: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** What parseJson throws for text nested deeper than MAX_JSON_DEPTH: its message names the limit. */
export class JsonTooDeep extends SyntaxError {
  constructor() {
    super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    this.name = 'JsonTooDeep';
  }
}

/**
 * JSON.parse for every document of data fleet decodes (a hub Secret's JSON, a program's output, KUBERNETES_EXEC_INFO,
 * a cache or state file): text nested deeper than MAX_JSON_DEPTH, the bound the HTTP layer applies to every response
 * body, is refused (JsonTooDeep) before it is parsed, so nothing later recurses over such a value. Otherwise JSON.parse,
 * with its own SyntaxError.
 */
export function parseJson(text: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw new JsonTooDeep();
  return JSON.parse(text);
}

/** The problem to name for a failed parseJson: the depth (which names the limit), else `otherwise`. */
export const jsonProblem = (error: unknown, otherwise: string): string =>
  error instanceof JsonTooDeep ? error.message : otherwise;
