/**
 * Text from servers and from data, made safe to print on a terminal: the one escaping of fleet's human output (tables,
 * `-o name`, notes, error and warning lines). A Kubernetes name cannot hold a control character, but a username, a
 * Status message, an annotation or a context name from a hub Secret can hold anything: an OSC sequence retitles the
 * terminal, an SGR sequence paints what follows, a CR or LF forges a table row or an `error:` line, a bidi override
 * shows text in another order than it is. Each such character is written visibly instead:
 * - C0 controls and DEL: `\t`, `\n`, `\r` by name, the others as `\xHH` (ESC is `\x1b`, BEL `\x07`, DEL `\x7f`);
 * - C1 controls (U+0080-U+009F, e.g. the one-character CSI U+009B that some terminals obey) as `\xHH` too;
 * - the Unicode characters that reorder, hide or break text without a glyph, as `\uHHHH`: the zero-width and
 *   direction marks U+200B-U+200F, the bidi embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069, the
 *   byte order mark U+FEFF, and (the same kind) U+061C ARABIC LETTER MARK, U+2028/U+2029 (line and paragraph
 *   separators) and the invisible operators U+2060-U+2064.
 * Everything else, non-ASCII letters and emoji included, is left as it is.
 *
 * A backslash is not escaped: the output is for a person, never parsed back (the exact value is in `-o json`), and
 * doubling it would garble every Windows path and regular expression a message quotes. The price is that a literal
 * `\x1b` in the data looks the same as an escaped ESC; both are inert, which is what matters here.
 *
 * JSON and YAML output never go through this: they carry the data exactly (both already escape C0 controls).
 */

// One character class for the test (is there anything to do?) and one with /g for the work; most strings have nothing
// to escape, and for them the cost is one regular-expression test with no allocation.
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const UNSAFE_ALL = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// The same without LF, for text whose line breaks are fleet's own layout (see escapeTerminal's `keepNewlines`).
const UNSAFE_IN_LINES = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const UNSAFE_IN_LINES_ALL =
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control and invisible formatting character written visibly (see above). With `keepNewlines`, LF
 * stays a line break: for text whose lines are fleet's own layout (a YAML document fleet wrote, a stack trace), where
 * data's own line breaks were already escaped or belong to the document; everything else is escaped, CR included.
 */
export function escapeTerminal(text: string, options?: { keepNewlines?: boolean }): string {
  if (options?.keepNewlines) return UNSAFE_IN_LINES.test(text) ? text.replace(UNSAFE_IN_LINES_ALL, visible) : text;
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, visible) : text;
}

/** Whether escapeTerminal would change `text` (every character of it kept otherwise). */
export function needsEscape(text: string): boolean {
  return UNSAFE.test(text);
}
