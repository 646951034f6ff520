// The action's `args` input as a list of arguments (action/main.mjs). Its own file so that a unit test can import it.

/**
 * The `args` input as arguments: split on white space; '...' and "..." keep spaces (and each other's quote) inside one
 * argument; a backslash outside single quotes keeps the next character as it is. No variables, globs or commands: this
 * is not a shell.
 */
export function splitArgs(text) {
  const out = [];
  let cur = '';
  let started = false;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = '';
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (ch === '\\' && i + 1 < text.length) {
      cur += text[++i];
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) out.push(cur);
      cur = '';
      started = false;
    } else {
      cur += ch;
      started = true;
    }
  }
  if (quote) throw new Error(`input args: a ${quote} quote is not closed: ${text}`);
  if (started) out.push(cur);
  return out;
}
