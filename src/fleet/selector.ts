import { UsageError } from '../base/errors.js';

/** A Kubernetes label selector (equality and set-based), matched against a cluster's labels. */
type Requirement = { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | 'notexists' };

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

export function parseSelector(text: string): Requirement[] {
  const bad = (part: string) => new UsageError(`--selector: cannot parse "${part}" in "${text}"`);
  return splitTopLevel(text).map((part): Requirement => {
    let m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (m)
      return {
        key: m[1],
        op: m[2] as 'in' | 'notin',
        values: m[3]
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      };
    // Values may be anything but separators: fleet's own fields carry kubeconfig names verbatim (jane@prod-eu).
    m = /^([\w./-]+)\s*(==|=|!=)\s*([^\s,()!=]*)$/.exec(part);
    if (m) return { key: m[1], op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]] };
    m = /^(!?)([\w./-]+)$/.exec(part);
    if (m) return { key: m[2], op: m[1] ? 'notexists' : 'exists' };
    throw bad(part);
  });
}

export function matchesSelector(requirements: Requirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case 'notexists':
        return !has;
      case 'in':
        return has && r.values.includes(labels[r.key]);
      case 'notin':
        return !has || !r.values.includes(labels[r.key]);
    }
  });
}
