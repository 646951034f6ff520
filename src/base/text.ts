/** Matching of names a user typed against the names that exist. */

/** Edit distance where swapping two neighbouring letters counts as one edit (the commonest typo). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** Up to three names close to `name`: by edit distance relative to length, or containing it. */
export function closeMatches(name: string, candidates: string[]): string[] {
  const lower = name.toLowerCase();
  return candidates
    .map((c) => {
      const cl = c.toLowerCase();
      const d = editDistance(lower, cl);
      const contains = cl.includes(lower) || (lower.length > 3 && lower.includes(cl));
      return { c, score: contains ? 0 : d / Math.max(lower.length, cl.length) };
    })
    .filter((x) => x.score <= 0.4)
    .sort((a, b) => a.score - b.score || a.c.localeCompare(b.c))
    .slice(0, 3)
    .map((x) => x.c);
}

/**
 * "1 cluster", "3 clusters": a count with its noun in the right number, the one spelling every message uses (never
 * "cluster(s)"). `plural` for nouns that do not take an s.
 */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
