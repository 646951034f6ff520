import { editDistance } from '../base/text.js';

/**
 * The name closest to what was typed, when it is near enough to be a typo of it: at most max(2, a third of the typed
 * length) edits, the nearest first and then by name. The one bound of the command line's "did you mean" (a flag, a
 * help subject; hooks/command-not-found.ts applies the same to a command).
 */
export function closestName(typed: string, names: string[]): string | undefined {
  const best = names
    .map((name) => ({ name, d: editDistance(typed, name) }))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))[0];
  return best && best.d > 0 && best.d <= Math.max(2, Math.floor(typed.length / 3)) ? best.name : undefined;
}
