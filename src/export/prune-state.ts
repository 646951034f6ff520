import { lstat, mkdir } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';

import { readNamedFile } from '../base/files.js';
import { homeDir } from '../base/paths.js';
import { writeFileAtomic } from '../kubeconfig/atomic-write.js';
import { parseJson } from '../base/json.js';

/**
 * What `fleet kubeconfig prune` remembers between runs: for each API server that failed to answer, when it first failed
 * and when last, so that `unreachable` means "failed across runs for longer than --unreachable-for", never "failed
 * once" (a paused VM, a laptop off the VPN, a slow network). A server that answers anything clears its record.
 *
 * The file is fleet's own state ($XDG_STATE_HOME/fleet/prune-failures.json, else ~/.local/state/fleet/...), 0600 in a
 * 0700 directory, replaced atomically. Read as possibly hostile: a regular file only (a symlink, FIFO or directory is
 * not followed or opened), at most 1 MiB, strict shape; anything else counts as "no record", which can only keep a
 * context (a failure must be seen again, for the whole duration, before anything goes). Two prunes at once may lose one
 * run's observations (the last writer wins): again the direction that keeps contexts.
 */

/** One server's failures, as recorded. */
export interface FailureRecord {
  /** The first failure of the current streak (RFC 3339). */
  since: string;
  /** The latest one. */
  last: string;
  /** How many runs saw it fail in this streak. */
  runs: number;
  /** What the latest failure said (no secret: a transport error names the server only). */
  error: string;
}

const VERSION = 1;

/** $XDG_STATE_HOME/fleet/prune-failures.json, else ~/.local/state/fleet/prune-failures.json (a relative XDG_STATE_HOME is ignored, per the spec). */
export function pruneStatePath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homeDir(env), '.local', 'state');
  return join(base, 'fleet', 'prune-failures.json');
}

const isIso = (v: unknown): v is string => typeof v === 'string' && v.length <= 40 && Number.isFinite(Date.parse(v));

/** The records of a file's text; undefined when the text is not exactly the shape fleet writes. */
export function decodeFailureRecords(text: string): Map<string, FailureRecord> | undefined {
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const { v, servers, ...rest } = doc as Record<string, unknown>;
  if (
    v !== VERSION ||
    Object.keys(rest).length > 0 ||
    typeof servers !== 'object' ||
    servers === null ||
    Array.isArray(servers)
  )
    return undefined;
  const out = new Map<string, FailureRecord>();
  for (const [server, value] of Object.entries(servers)) {
    const r = value as Partial<FailureRecord> | null;
    if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined;
    if (Object.keys(r).some((k) => !['since', 'last', 'runs', 'error'].includes(k))) return undefined;
    if (
      !isIso(r.since) ||
      !isIso(r.last) ||
      !Number.isSafeInteger(r.runs) ||
      r.runs! < 1 ||
      typeof r.error !== 'string'
    )
      return undefined;
    out.set(server, { since: r.since, last: r.last, runs: r.runs!, error: r.error });
  }
  return out;
}

export class FailureRecords {
  private constructor(
    readonly path: string,
    private readonly records: Map<string, FailureRecord>,
    /** Why the file was not read (then every server starts without a record), for one warning line. */
    readonly ignored?: string,
  ) {}

  /** An empty set of records that is never saved (unit tests, and prune's judgement when there is no state). */
  static empty(path = ''): FailureRecords {
    return new FailureRecords(path, new Map());
  }

  static async load(path: string): Promise<FailureRecords> {
    const info = await lstat(path).catch((error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? undefined : error,
    );
    if (info === undefined) return new FailureRecords(path, new Map());
    if (info instanceof Error) return new FailureRecords(path, new Map(), `${path}: ${info.message}`);
    if (!info.isFile()) return new FailureRecords(path, new Map(), `${path}: not a regular file`);
    const text = await readNamedFile(path).then(
      (b) => b.toString('utf8'),
      (error: Error) => error,
    );
    if (text instanceof Error) return new FailureRecords(path, new Map(), `${path}: ${text.message}`);
    const records = decodeFailureRecords(text);
    return records
      ? new FailureRecords(path, records)
      : new FailureRecords(path, new Map(), `${path}: not fleet's failure records`);
  }

  get(server: string): FailureRecord | undefined {
    return this.records.get(server);
  }

  /** A failure seen at `at` (ms): a new streak, or one more run of the current one. */
  failed(server: string, at: number, error: string): FailureRecord {
    const when = new Date(at).toISOString();
    const prior = this.records.get(server);
    const record = prior
      ? { ...prior, last: when, runs: prior.runs + 1, error }
      : { since: when, last: when, runs: 1, error };
    this.records.set(server, record);
    return record;
  }

  /** The server answered: its streak is over. */
  reached(server: string): void {
    this.records.delete(server);
  }

  async save(): Promise<void> {
    if (!this.path) return;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const servers = Object.fromEntries([...this.records].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    await writeFileAtomic(this.path, `${JSON.stringify({ v: VERSION, servers }, null, 1)}\n`, {
      mode: 0o600,
      durable: false,
    });
  }
}
