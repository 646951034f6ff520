import { ConfigError } from '../base/errors.js';
import { editDistance } from '../base/text.js';

/**
 * Reads fields of a parsed YAML/JSON document with one-line errors that name the file and the field path, so a typo in
 * a configuration file is found without reading code: `fleet.yaml: providers[1].namespace: must be a string`.
 */
export class Fields {
  /**
   * `opaque`: the document is data that may hold secrets (an exec provider program's output), so a value of the wrong
   * type is named by its type, never quoted (an `env` of `["AWS_SECRET_ACCESS_KEY=..."]` must not end up in a reason).
   */
  constructor(
    readonly file: string,
    readonly path: string,
    readonly value: Record<string, unknown>,
    readonly opaque = false,
  ) {}

  static root(file: string, value: unknown, what: string): Fields {
    if (value === undefined || value === null) value = {};
    if (!isMapping(value)) throw new ConfigError(`${file}: ${what} must be a mapping`);
    return new Fields(file, '', value);
  }

  fieldPath(key: string | number): string {
    if (typeof key === 'number') return `${this.path}[${key}]`;
    return this.path ? `${this.path}.${key}` : key;
  }

  error(key: string | number | undefined, problem: string): ConfigError {
    const where = key === undefined ? this.path : this.fieldPath(key);
    return new ConfigError(`${this.file}: ${where ? `${where}: ` : ''}${problem}`);
  }

  /** Rejects keys nobody reads: a misspelt setting is an error, not a silent default. */
  only(keys: string[]): void {
    for (const key of Object.keys(this.value)) {
      if (keys.includes(key)) continue;
      const near = nearest(key, keys);
      throw this.error(key, `unknown field${near ? ` (did you mean "${near}"?)` : ` (known: ${keys.join(', ')})`}`);
    }
  }

  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  string(key: string): string | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw this.error(key, `must be a string, got ${describe(v, this.opaque)}`);
    if (v.trim() === '') throw this.error(key, 'must not be empty');
    return v;
  }

  requiredString(key: string): string {
    const v = this.string(key);
    if (v === undefined) throw this.error(key, 'is required');
    return v;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    if (!allowed.includes(v as T)) throw this.error(key, `must be one of ${allowed.join(', ')}; got "${v}"`);
    return v as T;
  }

  boolean(key: string): boolean | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw this.error(key, `must be true or false, got ${describe(v, this.opaque)}`);
    return v;
  }

  /** A string or a list of strings (kubeconfig paths may be given either way). */
  strings(key: string): string[] | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list))
      throw this.error(key, `must be a string or a list of strings, got ${describe(v, this.opaque)}`);
    return list.map((item, i) => {
      if (typeof item !== 'string' || item.trim() === '') throw this.error(key, `item ${i} must be a non-empty string`);
      return item;
    });
  }

  mapping(key: string): Fields | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (!isMapping(v)) throw this.error(key, `must be a mapping, got ${describe(v, this.opaque)}`);
    return new Fields(this.file, this.fieldPath(key), v, this.opaque);
  }

  list(key: string): Fields[] {
    const v = this.value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw this.error(key, `must be a list, got ${describe(v, this.opaque)}`);
    return v.map((item, i) => {
      const path = `${this.fieldPath(key)}[${i}]`;
      if (!isMapping(item))
        throw new ConfigError(`${this.file}: ${path}: must be a mapping, got ${describe(item, this.opaque)}`);
      return new Fields(this.file, path, item, this.opaque);
    });
  }
}

/** The known key a misspelt one most likely meant (a few edits away), if any. */
/** The known name closest to a misspelt one, if close enough to be meant (fleet.yaml's and a policy's fields). */
export function nearest(key: string, known: string[]): string | undefined {
  const scored = known
    .map((k) => ({ k, d: editDistance(key.toLowerCase(), k.toLowerCase()) }))
    .sort((a, b) => a.d - b.d);
  return scored[0] && scored[0].d <= Math.max(2, Math.floor(key.length / 3)) ? scored[0].k : undefined;
}

export function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a wrong value is: its type, and (unless `opaque`) the value, which helps find it in a configuration file. */
function describe(v: unknown, opaque = false): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'a mapping';
  if (opaque) return `a ${typeof v}`;
  return `${typeof v} ${JSON.stringify(v)}`;
}
