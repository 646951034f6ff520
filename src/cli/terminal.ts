import { escapeTerminal, needsEscape } from '../base/terminal.js';
import { scrub } from '../kubeconfig/redact.js';

/**
 * One string from a server or from data as a line of human output shows it: secrets scrubbed, then control characters
 * escaped (src/base/terminal.ts). The order matters: the scrubber finds a registered secret by its exact text, so a
 * token with a control character inside (`abc\x01def...`) is only recognised before escaping; escaped first it would be
 * `abc\x01def...` written out, which matches nothing, and print. Escaping after scrubbing cannot bring a secret back:
 * it only adds backslash sequences around what the scrubber left.
 *
 * Text with nothing to escape comes back as it is, unscrubbed: the output path scrubs whole lines and tables anyway, so
 * the common case costs one regular-expression test and nothing is scrubbed twice.
 */
export function forTerminal(text: string): string {
  return needsEscape(text) ? escapeTerminal(scrub(text)) : text;
}
