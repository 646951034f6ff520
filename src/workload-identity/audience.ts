/**
 * Audiences are compared byte for byte by the API server, but people write the same address several ways. These helpers
 * tell "equal", "equal once normalised" (and how they differ) and "different" apart, so a mismatch can be named.
 */
export type AudienceMatch = { kind: 'exact' } | { kind: 'normalised'; differences: string[] } | { kind: 'different' };

/** Lower-case scheme and host, no default port, no trailing slash: what a person means by the address. */
export function normaliseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value.trim().toLowerCase().replace(/\/+$/, '');
  }
  // URL already lower-cases scheme and host and drops the scheme's default port.
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/** How two spellings of one address differ (trailing slash, explicit :443, letter case). */
export function differences(a: string, b: string): string[] {
  const out: string[] = [];
  if (a.endsWith('/') !== b.endsWith('/')) out.push('trailing slash');
  const has443 = (s: string) => /^https:\/\/[^/]+:443(\/|$)/i.test(s);
  if (has443(a) !== has443(b)) out.push('explicit :443');
  const strip = (s: string) => s.replace(/\/+$/, '').replace(/^(https:\/\/[^/]+):443(?=\/|$)/i, '$1');
  if (strip(a) !== strip(b) && strip(a).toLowerCase() === strip(b).toLowerCase()) out.push('letter case');
  return out;
}

export function compareUrls(actual: string, expected: string): AudienceMatch {
  if (actual === expected) return { kind: 'exact' };
  if (normaliseUrl(actual) === normaliseUrl(expected))
    return { kind: 'normalised', differences: differences(actual, expected) };
  return { kind: 'different' };
}
