import type { V1PolicyRule } from '@kubernetes/client-node';
import yaml from 'js-yaml';

import { HTTP_VERBS, KNOWN_VERBS } from '../access/can-i.js';
import { ConfigError } from '../base/errors.js';
import { readRequired } from '../base/files.js';
import { editDistance } from '../base/text.js';

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1): client-node's model (it has no Date fields, so it is its own wire form). */
export type PolicyRule = V1PolicyRule;

const LIST_FIELDS = ['apiGroups', 'resources', 'verbs', 'resourceNames', 'nonResourceURLs'] as const;

/**
 * Reads `--rules FILE`: a YAML list of PolicyRules, or a mapping with `rules:` (a Role or ClusterRole, or the rules.yaml
 * of multicluster-runtime's example script). Errors name the file and the line.
 */
export async function loadRulesFile(path: string): Promise<PolicyRule[]> {
  const text = (await readRequired(path, `--rules ${path}`, 'a rules file')).toString('utf8');
  return parseRules(text, path);
}

export function parseRules(text: string, path: string): PolicyRule[] {
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch (error) {
    const e = error as { mark?: { line: number }; reason?: string };
    throw new ConfigError(
      `${path}:${(e.mark?.line ?? 0) + 1}: not valid YAML: ${e.reason ?? (error as Error).message}`,
    );
  }
  const list = Array.isArray(doc)
    ? doc
    : doc && typeof doc === 'object'
      ? (doc as { rules?: unknown }).rules
      : undefined;
  if (!Array.isArray(list))
    throw new ConfigError(`${path}:1: expected a list of RBAC rules (or a mapping with "rules:")`);
  if (list.length === 0) throw new ConfigError(`${path}:1: the rules list is empty`);
  const lines = ruleLines(text, Array.isArray(doc));
  return list.map((item, i) => checkRule(item, `${path}:${lines[i] ?? 1}: rules[${i}]`));
}

function checkRule(item: unknown, where: string): PolicyRule {
  if (!item || typeof item !== 'object' || Array.isArray(item))
    throw new ConfigError(`${where}: must be a mapping with verbs, apiGroups, resources`);
  const r = item as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!(LIST_FIELDS as readonly string[]).includes(key))
      throw new ConfigError(`${where}: unknown field "${key}" (expected ${LIST_FIELDS.join(', ')})`);
  }
  for (const key of LIST_FIELDS) {
    const v = r[key];
    if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string')))
      throw new ConfigError(`${where}: ${key} must be a list of strings`);
  }
  const rule = r as unknown as PolicyRule;
  if (!rule.verbs || rule.verbs.length === 0) throw new ConfigError(`${where}: verbs is required`);
  if (rule.nonResourceURLs?.length) {
    if (rule.resources?.length || rule.apiGroups?.length)
      throw new ConfigError(`${where}: nonResourceURLs cannot be mixed with apiGroups/resources`);
    checkVerbs(rule.verbs, HTTP_VERBS, where);
    return rule;
  }
  checkVerbs(rule.verbs, KNOWN_VERBS, where);
  if (!rule.resources?.length) throw new ConfigError(`${where}: resources is required`);
  if (!rule.apiGroups) throw new ConfigError(`${where}: apiGroups is required ("" is the core group)`);
  return rule;
}

/**
 * A verb one or two letters from a known one (`lst`) is a typo that would make a credential unable to do what it was
 * made for, and the API server accepts it silently: refused, naming the verb it resembles. A verb far from every known
 * one is kept, since aggregated APIs define their own (RBAC allows any verb).
 */
function checkVerbs(verbs: string[], known: readonly string[], where: string): void {
  for (const verb of verbs) {
    if (known.includes(verb)) continue;
    const close = known.filter((k) => k !== '*' && editDistance(verb.toLowerCase(), k) <= (k.length <= 4 ? 1 : 2));
    if (close.length > 0)
      throw new ConfigError(
        `${where}: "${verb}" is not a verb the API server knows; did you mean ${close.map((c) => `"${c}"`).join(' or ')}?`,
      );
  }
}

/**
 * The line of each list item, for error messages: js-yaml gives no positions for values, so list items are found as
 * lines starting with "- " at the indentation of the first item.
 */
function ruleLines(text: string, topLevel: boolean): number[] {
  const lines = text.split('\n');
  let start = 0;
  if (!topLevel) start = lines.findIndex((l) => /^rules\s*:/.test(l)) + 1;
  let indent: number | undefined;
  const out: number[] = [];
  for (let i = start; i < lines.length; i++) {
    const m = /^(\s*)-(\s|$)/.exec(lines[i]);
    if (!m) continue;
    indent ??= m[1].length;
    if (m[1].length === indent) out.push(i + 1);
  }
  return out;
}
