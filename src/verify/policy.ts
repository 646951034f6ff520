import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

import { Ajv, type ErrorObject } from 'ajv';
import semver from 'semver';
import yaml from 'js-yaml';

import { parseLifetime } from '../base/duration.js';
import { ConfigError } from '../base/errors.js';
import { fileError } from '../base/files.js';
import { nearest } from '../config/fields.js';
import { skipToYamlContent } from '../base/yaml.js';
import { parseAccessQuery, type AccessQuery } from '../access/can-i.js';
import type { RiskCode } from '../access/risk.js';
import { matchesSelector, parseSelector } from '../fleet/selector.js';

/**
 * The verify policy: what `fleet clusters verify` checks, for every cluster and per label selector. The file is YAML
 * validated against the JSON Schema shipped in the package (schemas/verify-policy.schema.json, the one editors use), then
 * checked for what a schema cannot say (a regular expression that compiles, a selector, a version range). Every problem
 * is one line naming the file, the line and the field.
 */
export const POLICY_API_VERSION = 'fleet/v1alpha1';
export const POLICY_KIND = 'VerifyPolicy';
export const SCHEMA_URL = new URL('../../schemas/verify-policy.schema.json', import.meta.url);

export type Severity = 'fail' | 'warn' | 'allow';

export interface PermissionSpec {
  verb: string;
  resource?: string;
  subresource?: string;
  name?: string;
  namespace?: string;
  nonResourceURL?: string;
}

/** The checks' settings as written in the file (every field optional). */
export interface CheckSettings {
  tls?: { allowInsecure?: boolean };
  identity?: { username?: string; pattern?: string; groups?: string[] };
  permissions?: PermissionSpec[];
  forbiddenPower?: {
    systemMasters?: Severity;
    clusterAdmin?: Severity;
    risks?: RiskCode[];
    riskSeverity?: 'fail' | 'warn';
    namespaces?: string[];
  };
  credentials?: { minLifetime?: string; warnLifetime?: string };
  version?: { range: string };
}

export interface PolicyRule {
  name?: string;
  selector: string;
  checks: CheckSettings;
}

export interface Policy {
  /** The file it came from; undefined for the built-in defaults. */
  file?: string;
  checks: CheckSettings;
  rules: PolicyRule[];
}

/** A required permission, parsed once: the query `auth can-i` asks, and how to name it in messages. */
export interface RequiredPermission {
  spec: PermissionSpec;
  query: AccessQuery;
  namespace: string;
  text: string;
}

/** The settings in force for one cluster, after defaults, `checks` and matching rules. */
export interface EffectivePolicy {
  allowInsecure: boolean;
  identity?: { username?: string; pattern?: RegExp; patternText?: string; groups: string[] };
  permissions: RequiredPermission[];
  systemMasters: Severity;
  clusterAdmin: Severity;
  risks: RiskCode[];
  riskSeverity: 'fail' | 'warn';
  riskNamespaces: string[];
  minLifetimeMs: number;
  minLifetime: string;
  warnLifetimeMs?: number;
  warnLifetime?: string;
  versionRange?: string;
  /** Names (or selectors) of the rules that matched, for messages. */
  rules: string[];
}

/**
 * What is checked without a policy: reachable, TLS verified, authenticated, a credential that lasts the run, warn on
 * system:masters. The lifetimes judge stored credentials (a credential an exec plugin renews must only be valid now):
 * 30m covers a verify-then-deploy job (helm's --wait alone defaults to 5m) and passes a freshly minted CI token (`kubectl
 * create token` gives 1h); 7d warns in time to renew a long-lived certificate or token by hand (docs/verify.md).
 */
export const DEFAULT_POLICY: Policy = { checks: {}, rules: [] };
export const DEFAULT_MIN_LIFETIME = '30m';
export const DEFAULT_WARN_LIFETIME = '7d';

let validator: ReturnType<Ajv['compile']> | undefined;
let policySchema: Record<string, unknown> | undefined;
function schemaValidator(): ReturnType<Ajv['compile']> {
  if (!validator) {
    const schema = JSON.parse(readFileSync(SCHEMA_URL, 'utf8')) as Record<string, unknown>;
    validator = new Ajv({ allErrors: false, strict: true }).compile(schema);
    policySchema = schema;
  }
  return validator;
}

/** Reads and validates a policy file; a ConfigError (exit 2) with `file:line: field: problem` when it is not valid. */
export async function loadPolicy(file: string): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw fileError(`--policy ${file}`, error, 'a policy file');
  }
  return parsePolicy(text, file);
}

export function parsePolicy(text: string, file: string): Policy {
  const frames: Frame[] = [];
  let value: unknown;
  try {
    // The core schema (YAML 1.2's, as a policy is written for): a date or `<<` stays text, as the schema expects.
    value = yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA, listener: recordFrames(frames) });
  } catch (error) {
    if (!(error instanceof yaml.YAMLException)) throw error;
    throw new ConfigError(`${file}${error.mark ? `:${error.mark.line + 1}` : ''}: not valid YAML: ${error.reason}`, {
      cause: error,
    });
  }
  if (value === null || value === undefined)
    throw new ConfigError(
      `${file}: the policy is empty (expected apiVersion: ${POLICY_API_VERSION}, kind: ${POLICY_KIND})`,
    );

  const problem = (path: Array<string | number>, message: string, key = false): ConfigError => {
    const offset = offsetOf(text, frames, value, path, key);
    const field = fieldPath(path) || 'the policy';
    return new ConfigError(`${offset === undefined ? file : `${file}:${lineAt(text, offset)}`}: ${field}: ${message}`);
  };

  // Another kind of file given as --policy (a kubeconfig, a fleet.yaml, a manifest) is named as such, before its first
  // field is called unknown.
  const { kind, apiVersion } = value as { kind?: unknown; apiVersion?: unknown };
  if (typeof kind === 'string' && kind !== POLICY_KIND && apiVersion !== POLICY_API_VERSION)
    throw new ConfigError(
      `${file}: not a ${POLICY_KIND} but a ${kind} (expected apiVersion: ${POLICY_API_VERSION}, kind: ${POLICY_KIND})`,
    );

  const validate = schemaValidator();
  if (!validate(value)) {
    const { path, message, key } = describeSchemaError(validate.errors![0]);
    throw problem(path, message, key);
  }
  const policy = value as { checks?: CheckSettings; rules?: PolicyRule[] };
  const checkSettings = (settings: CheckSettings | undefined, base: Array<string | number>) => {
    if (!settings) return;
    const pattern = settings.identity?.pattern;
    if (pattern !== undefined) {
      try {
        new RegExp(pattern);
      } catch (error) {
        throw problem([...base, 'identity', 'pattern'], `not a valid regular expression: ${(error as Error).message}`);
      }
    }
    settings.permissions?.forEach((p, i) => {
      const where = [...base, 'permissions', i];
      if ((p.resource === undefined) === (p.nonResourceURL === undefined))
        throw problem(where, 'give exactly one of resource and nonResourceURL');
      try {
        toRequired(p);
      } catch (error) {
        throw problem(where, (error as Error).message);
      }
    });
    for (const key of ['minLifetime', 'warnLifetime'] as const) {
      const v = settings.credentials?.[key];
      if (v === undefined) continue;
      let ms: number;
      try {
        ms = lifetimeMs(v);
      } catch (error) {
        throw problem([...base, 'credentials', key], (error as Error).message.replace(/^lifetime: /, ''));
      }
      if (ms === 0) throw problem([...base, 'credentials', key], 'must be more than 0');
    }
    const range = settings.version?.range;
    if (range !== undefined && semver.validRange(range) === null) {
      throw problem([...base, 'version', 'range'], `not a valid version range: "${range}" (e.g. ">=1.30 <1.36")`);
    }
  };
  checkSettings(policy.checks, ['checks']);
  policy.rules?.forEach((rule, i) => {
    try {
      parseSelector(rule.selector);
    } catch (error) {
      throw problem(['rules', i, 'selector'], (error as Error).message.replace(/^--selector: /, ''));
    }
    checkSettings(rule.checks, ['rules', i, 'checks']);
  });
  return { file, checks: policy.checks ?? {}, rules: policy.rules ?? [] };
}

/** The settings for a cluster with these labels: the defaults, then `checks`, then each matching rule in file order. */
export function effectivePolicy(policy: Policy, labels: Record<string, string>): EffectivePolicy {
  const out: EffectivePolicy = {
    allowInsecure: false,
    permissions: [],
    systemMasters: 'warn',
    clusterAdmin: 'allow',
    risks: [],
    riskSeverity: 'fail',
    riskNamespaces: ['default'],
    minLifetime: DEFAULT_MIN_LIFETIME,
    minLifetimeMs: lifetimeMs(DEFAULT_MIN_LIFETIME),
    warnLifetime: DEFAULT_WARN_LIFETIME,
    warnLifetimeMs: lifetimeMs(DEFAULT_WARN_LIFETIME),
    rules: [],
  };
  const apply = (s: CheckSettings) => {
    if (s.tls?.allowInsecure !== undefined) out.allowInsecure = s.tls.allowInsecure;
    if (s.identity) {
      out.identity = {
        username: s.identity.username,
        // The whole username must match, as a reader of `pattern: system:serviceaccount:ci:.*` expects.
        pattern: s.identity.pattern === undefined ? undefined : new RegExp(`^(?:${s.identity.pattern})$`),
        patternText: s.identity.pattern,
        groups: s.identity.groups ?? [],
      };
    }
    if (s.permissions) out.permissions.push(...s.permissions.map(toRequired));
    const f = s.forbiddenPower;
    if (f?.systemMasters) out.systemMasters = f.systemMasters;
    if (f?.clusterAdmin) out.clusterAdmin = f.clusterAdmin;
    if (f?.risks) out.risks = [...new Set([...out.risks, ...f.risks])];
    if (f?.riskSeverity) out.riskSeverity = f.riskSeverity;
    if (f?.namespaces) out.riskNamespaces = [...f.namespaces];
    if (s.credentials?.minLifetime) {
      out.minLifetime = s.credentials.minLifetime;
      out.minLifetimeMs = lifetimeMs(s.credentials.minLifetime);
    }
    if (s.credentials?.warnLifetime) {
      out.warnLifetime = s.credentials.warnLifetime;
      out.warnLifetimeMs = lifetimeMs(s.credentials.warnLifetime);
    }
    if (s.version) out.versionRange = s.version.range;
  };
  apply(policy.checks);
  for (const rule of policy.rules) {
    if (!matchesSelector(parseSelector(rule.selector), labels)) continue;
    out.rules.push(rule.name ?? rule.selector);
    apply(rule.checks);
  }
  return out;
}

function toRequired(p: PermissionSpec): RequiredPermission {
  const query = p.nonResourceURL
    ? parseAccessQuery({ verb: p.verb, resource: p.nonResourceURL })
    : parseAccessQuery({ verb: p.verb, resource: p.resource!, name: p.name, subresource: p.subresource });
  const namespace = p.namespace ?? '';
  const target =
    p.nonResourceURL ?? `${p.resource}${p.subresource ? `/${p.subresource}` : ''}${p.name ? ` ${p.name}` : ''}`;
  const text = `${p.verb} ${target}${p.nonResourceURL ? '' : namespace ? ` in namespace ${namespace}` : ' (all namespaces)'}`;
  return { spec: p, query, namespace, text };
}

/** "24h", "7d", "1h30m", "1y" in milliseconds: a lifetime, read as every lifetime is (base/duration.ts). */
export function lifetimeMs(text: string): number {
  return parseLifetime(text, 'lifetime');
}

/** `rules[0].checks.permissions[1].verb` */
function fieldPath(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

interface SchemaNode {
  $ref?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** The schema of the value at an instance path (following `$ref`s and list items): the fields known there. */
function schemaAt(path: Array<string | number>): SchemaNode | undefined {
  const resolve = (n: SchemaNode | undefined): SchemaNode | undefined => {
    for (let i = 0; n?.$ref?.startsWith('#/') && i < 10; i++) {
      let at: unknown = policySchema;
      for (const part of n.$ref.slice(2).split('/')) at = (at as Record<string, unknown> | undefined)?.[part];
      n = at as SchemaNode | undefined;
    }
    return n;
  };
  let at = resolve(policySchema);
  for (const p of path) at = resolve(typeof p === 'number' ? at?.items : at?.properties?.[p]);
  return at;
}

/** Ajv's first error as a path into the document and a short message in the words of the file's author. */
function describeSchemaError(e: ErrorObject): { path: Array<string | number>; message: string; key?: boolean } {
  const path: Array<string | number> = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const near = nearest(field, Object.keys(schemaAt(path)?.properties ?? {}));
      return {
        path: [...path, field],
        message: `unknown field${near ? ` (did you mean "${near}"?)` : ''}`,
        key: true,
      };
    }
    case 'required':
      return { path: [...path], message: `${String(params.missingProperty)} is required` };
    case 'const':
      return { path, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'enum':
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}` };
    case 'type':
      return {
        path,
        message: `must be ${params.type === 'object' ? 'a mapping' : params.type === 'array' ? 'a list' : `a ${String(params.type)}`}`,
      };
    case 'minLength':
    case 'minItems':
      return { path, message: 'must not be empty' };
    case 'pattern':
      return {
        path,
        message: path.includes('nonResourceURL') ? 'must start with /' : 'must be a duration such as 24h, 7d or 90m',
      };
    default:
      return { path, message: e.message ?? e.keyword };
  }
}

/**
 * Where each YAML node was read, from js-yaml's listener: it opens a frame where it starts composing a node (before the
 * spaces that lead to it) and closes it with the node's value. Nodes are found again by value: a mapping or a list by
 * identity, a scalar by its text among the frames of its own mapping or list (not those of a nested one).
 */
interface Frame {
  start: number;
  end: number;
  result: unknown;
}

function recordFrames(
  frames: Frame[],
): (event: 'open' | 'close', state: { position: number; result: unknown }) => void {
  const open: Frame[] = [];
  return (event, state) => {
    if (event === 'open') {
      const frame = { start: state.position, end: state.position, result: undefined };
      open.push(frame);
      frames.push(frame);
    } else {
      const frame = open.pop()!;
      frame.end = state.position;
      frame.result = state.result;
    }
  };
}

const isContainer = (v: unknown): v is object => typeof v === 'object' && v !== null;

/** The offset of the node at a path (its key when `key`), or of the nearest ancestor found. */
function offsetOf(
  text: string,
  frames: Frame[],
  root: unknown,
  path: Array<string | number>,
  key: boolean,
): number | undefined {
  const frameOf = (v: object) => frames.find((f) => f.result === v);
  const contentStart = (f: Frame) => skipToYamlContent(text, f.start);
  let container = root;
  let frame = isContainer(root) ? frameOf(root) : frames[0];
  for (let i = 0; i < path.length && frame && isContainer(container); i++) {
    const step = path[i];
    const child = (container as Record<string | number, unknown>)[step];
    if (isContainer(child) && !(key && i === path.length - 1)) {
      const found = frameOf(child);
      if (!found) break;
      [container, frame] = [child, found];
      continue;
    }
    // The frames of this mapping or list itself: inside it, outside the mappings and lists it holds.
    const outer = frame;
    const nested = Object.values(container)
      .filter(isContainer)
      .map(frameOf)
      .filter((f): f is Frame => f !== undefined);
    const own = frames.filter(
      (f) =>
        f.start >= outer.start &&
        f.end <= outer.end &&
        f !== outer &&
        !nested.some((n) => f.start >= n.start && f.end <= n.end),
    );
    if (Array.isArray(container)) {
      // A list item is found by its place: the distinct places items start, its own scalars' and its nested nodes'.
      const starts = [...new Set([...own, ...nested].map((f) => contentStart(f)))].sort((a, b) => a - b);
      return starts[step as number] ?? contentStart(outer);
    }
    const keyFrame = own.find((f) => f.result === step);
    if (!keyFrame) return contentStart(outer);
    if (key || i === path.length - 1) {
      const valueFrame = key ? undefined : own.find((f) => f.start >= keyFrame.end && Object.is(f.result, child));
      return contentStart(valueFrame ?? keyFrame);
    }
    return contentStart(keyFrame);
  }
  return frame && contentStart(frame);
}

/** The 1-based line of an offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
