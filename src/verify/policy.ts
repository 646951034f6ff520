import {readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'

import {Ajv, type ErrorObject} from 'ajv'
import semver from 'semver'
import {LineCounter, type Node, isMap, isScalar, isSeq, parseDocument} from 'yaml'

import {parseLifetime} from '../base/duration.js'
import {ConfigError} from '../base/errors.js'
import {fileError} from '../base/files.js'
import {parseAccessQuery, type AccessQuery} from '../access/can-i.js'
import type {RiskCode} from '../access/risk.js'
import {matchesSelector, parseSelector} from '../fleet/selector.js'

/**
 * The verify policy: what `fleet clusters verify` checks, for every cluster and per label selector. The file is YAML
 * validated against the JSON Schema shipped in the package (schemas/verify-policy.schema.json, the one editors use), then
 * checked for what a schema cannot say (a regular expression that compiles, a selector, a version range). Every problem
 * is one line naming the file, the line and the field.
 */
export const POLICY_API_VERSION = 'fleet/v1alpha1'
export const POLICY_KIND = 'VerifyPolicy'
export const SCHEMA_URL = new URL('../../schemas/verify-policy.schema.json', import.meta.url)

export type Severity = 'fail' | 'warn' | 'allow'

export interface PermissionSpec {
  verb: string
  resource?: string
  subresource?: string
  name?: string
  namespace?: string
  nonResourceURL?: string
}

/** The checks' settings as written in the file (every field optional). */
export interface CheckSettings {
  tls?: {allowInsecure?: boolean}
  identity?: {username?: string; pattern?: string; groups?: string[]}
  permissions?: PermissionSpec[]
  forbiddenPower?: {systemMasters?: Severity; clusterAdmin?: Severity; risks?: RiskCode[]; riskSeverity?: 'fail' | 'warn'; namespaces?: string[]}
  credentials?: {minLifetime?: string; warnLifetime?: string}
  version?: {range: string}
}

export interface PolicyRule {
  name?: string
  selector: string
  checks: CheckSettings
}

export interface Policy {
  /** The file it came from; undefined for the built-in defaults. */
  file?: string
  checks: CheckSettings
  rules: PolicyRule[]
}

/** A required permission, parsed once: the query `auth can-i` asks, and how to name it in messages. */
export interface RequiredPermission {
  spec: PermissionSpec
  query: AccessQuery
  namespace: string
  text: string
}

/** The settings in force for one cluster, after defaults, `checks` and matching rules. */
export interface EffectivePolicy {
  allowInsecure: boolean
  identity?: {username?: string; pattern?: RegExp; patternText?: string; groups: string[]}
  permissions: RequiredPermission[]
  systemMasters: Severity
  clusterAdmin: Severity
  risks: RiskCode[]
  riskSeverity: 'fail' | 'warn'
  riskNamespaces: string[]
  minLifetimeMs: number
  minLifetime: string
  warnLifetimeMs?: number
  warnLifetime?: string
  versionRange?: string
  /** Names (or selectors) of the rules that matched, for messages. */
  rules: string[]
}

/**
 * What is checked without a policy: reachable, TLS verified, authenticated, a credential that lasts the run, warn on
 * system:masters. The lifetimes judge stored credentials (a credential an exec plugin renews must only be valid now):
 * 30m covers a verify-then-deploy job (helm's --wait alone defaults to 5m) and passes a freshly minted CI token (`kubectl
 * create token` gives 1h); 7d warns in time to renew a long-lived certificate or token by hand (docs/verify.md).
 */
export const DEFAULT_POLICY: Policy = {checks: {}, rules: []}
export const DEFAULT_MIN_LIFETIME = '30m'
export const DEFAULT_WARN_LIFETIME = '7d'

let validator: ReturnType<Ajv['compile']> | undefined
function schemaValidator(): ReturnType<Ajv['compile']> {
  if (!validator) {
    const schema = JSON.parse(readFileSync(SCHEMA_URL, 'utf8'))
    validator = new Ajv({allErrors: false, strict: true}).compile(schema)
  }
  return validator
}

/** Reads and validates a policy file; a ConfigError (exit 2) with `file:line: field: problem` when it is not valid. */
export async function loadPolicy(file: string): Promise<Policy> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw fileError(`--policy ${file}`, error, 'a policy file')
  }
  return parsePolicy(text, file)
}

export function parsePolicy(text: string, file: string): Policy {
  const lines = new LineCounter()
  const doc = parseDocument(text, {lineCounter: lines, prettyErrors: false, uniqueKeys: true})
  const at = (offset: number | undefined) => (offset === undefined ? file : `${file}:${lines.linePos(offset).line}`)
  if (doc.errors.length > 0) {
    const e = doc.errors[0]
    throw new ConfigError(`${at(e.pos[0])}: not valid YAML: ${e.message.split('\n')[0]}`)
  }
  const value = doc.toJS() as unknown
  if (value === null || value === undefined) throw new ConfigError(`${file}: the policy is empty (expected apiVersion: ${POLICY_API_VERSION}, kind: ${POLICY_KIND})`)

  const problem = (path: Array<string | number>, message: string, key = false): ConfigError => {
    const node = nodeAt(doc.contents, path, key)
    const field = fieldPath(path) || 'the policy'
    return new ConfigError(`${at(node?.range?.[0])}: ${field}: ${message}`)
  }

  const validate = schemaValidator()
  if (!validate(value)) {
    const {path, message, key} = describeSchemaError(validate.errors![0])
    throw problem(path, message, key)
  }
  const policy = value as {checks?: CheckSettings; rules?: PolicyRule[]}
  const checkSettings = (settings: CheckSettings | undefined, base: Array<string | number>) => {
    if (!settings) return
    const pattern = settings.identity?.pattern
    if (pattern !== undefined) {
      try {
        new RegExp(pattern)
      } catch (error) {
        throw problem([...base, 'identity', 'pattern'], `not a valid regular expression: ${(error as Error).message}`)
      }
    }
    settings.permissions?.forEach((p, i) => {
      const where = [...base, 'permissions', i]
      if ((p.resource === undefined) === (p.nonResourceURL === undefined)) throw problem(where, 'give exactly one of resource and nonResourceURL')
      try {
        toRequired(p)
      } catch (error) {
        throw problem(where, (error as Error).message)
      }
    })
    for (const key of ['minLifetime', 'warnLifetime'] as const) {
      const v = settings.credentials?.[key]
      if (v === undefined) continue
      let ms: number
      try {
        ms = lifetimeMs(v)
      } catch (error) {
        throw problem([...base, 'credentials', key], (error as Error).message.replace(/^lifetime: /, ''))
      }
      if (ms === 0) throw problem([...base, 'credentials', key], 'must be more than 0')
    }
    const range = settings.version?.range
    if (range !== undefined && semver.validRange(range) === null) {
      throw problem([...base, 'version', 'range'], `not a valid version range: "${range}" (e.g. ">=1.30 <1.36")`)
    }
  }
  checkSettings(policy.checks, ['checks'])
  policy.rules?.forEach((rule, i) => {
    try {
      parseSelector(rule.selector)
    } catch (error) {
      throw problem(['rules', i, 'selector'], (error as Error).message.replace(/^--selector: /, ''))
    }
    checkSettings(rule.checks, ['rules', i, 'checks'])
  })
  return {file, checks: policy.checks ?? {}, rules: policy.rules ?? []}
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
  }
  const apply = (s: CheckSettings) => {
    if (s.tls?.allowInsecure !== undefined) out.allowInsecure = s.tls.allowInsecure
    if (s.identity) {
      out.identity = {
        username: s.identity.username,
        // The whole username must match, as a reader of `pattern: system:serviceaccount:ci:.*` expects.
        pattern: s.identity.pattern === undefined ? undefined : new RegExp(`^(?:${s.identity.pattern})$`),
        patternText: s.identity.pattern,
        groups: s.identity.groups ?? [],
      }
    }
    if (s.permissions) out.permissions.push(...s.permissions.map(toRequired))
    const f = s.forbiddenPower
    if (f?.systemMasters) out.systemMasters = f.systemMasters
    if (f?.clusterAdmin) out.clusterAdmin = f.clusterAdmin
    if (f?.risks) out.risks = [...new Set([...out.risks, ...f.risks])]
    if (f?.riskSeverity) out.riskSeverity = f.riskSeverity
    if (f?.namespaces) out.riskNamespaces = [...f.namespaces]
    if (s.credentials?.minLifetime) {
      out.minLifetime = s.credentials.minLifetime
      out.minLifetimeMs = lifetimeMs(s.credentials.minLifetime)
    }
    if (s.credentials?.warnLifetime) {
      out.warnLifetime = s.credentials.warnLifetime
      out.warnLifetimeMs = lifetimeMs(s.credentials.warnLifetime)
    }
    if (s.version) out.versionRange = s.version.range
  }
  apply(policy.checks)
  for (const rule of policy.rules) {
    if (!matchesSelector(parseSelector(rule.selector), labels)) continue
    out.rules.push(rule.name ?? rule.selector)
    apply(rule.checks)
  }
  return out
}

function toRequired(p: PermissionSpec): RequiredPermission {
  const query = p.nonResourceURL
    ? parseAccessQuery({verb: p.verb, resource: p.nonResourceURL})
    : parseAccessQuery({verb: p.verb, resource: p.resource!, name: p.name, subresource: p.subresource})
  const namespace = p.namespace ?? ''
  const target = p.nonResourceURL ?? `${p.resource}${p.subresource ? `/${p.subresource}` : ''}${p.name ? ` ${p.name}` : ''}`
  const text = `${p.verb} ${target}${p.nonResourceURL ? '' : namespace ? ` in namespace ${namespace}` : ' (all namespaces)'}`
  return {spec: p, query, namespace, text}
}

/** "24h", "7d", "1h30m", "1y" in milliseconds: a lifetime, read as every lifetime is (base/duration.ts). */
export function lifetimeMs(text: string): number {
  return parseLifetime(text, 'lifetime')
}

/** `rules[0].checks.permissions[1].verb` */
function fieldPath(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')
}

/** Ajv's first error as a path into the document and a short message in the words of the file's author. */
function describeSchemaError(e: ErrorObject): {path: Array<string | number>; message: string; key?: boolean} {
  const path: Array<string | number> = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s))
  const params = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'additionalProperties':
      return {path: [...path, String(params.additionalProperty)], message: 'unknown field', key: true}
    case 'required':
      return {path: [...path], message: `${String(params.missingProperty)} is required`}
    case 'const':
      return {path, message: `must be ${JSON.stringify(params.allowedValue)}`}
    case 'enum':
      return {path, message: `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`}
    case 'type':
      return {path, message: `must be ${params.type === 'object' ? 'a mapping' : params.type === 'array' ? 'a list' : `a ${String(params.type)}`}`}
    case 'minLength':
    case 'minItems':
      return {path, message: 'must not be empty'}
    case 'pattern':
      return {path, message: path.includes('nonResourceURL') ? 'must start with /' : 'must be a duration such as 24h, 7d or 90m'}
    default:
      return {path, message: e.message ?? e.keyword}
  }
}

/** The YAML node at a path (the key node when `key`), or the nearest ancestor that exists. */
function nodeAt(root: unknown, path: Array<string | number>, key: boolean): Node | undefined {
  let node = root as Node | undefined
  for (let i = 0; i < path.length; i++) {
    const step = path[i]
    const last = i === path.length - 1
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === step)
      if (!pair) return node
      if (last && key) return pair.key as Node
      node = (pair.value ?? pair.key) as Node
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as Node | undefined
      if (!item) return node
      node = item
    } else return node
  }
  return node
}
