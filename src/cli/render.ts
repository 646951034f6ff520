import type { ChalkInstance } from 'chalk';
import yaml from 'js-yaml';

import { escapeTerminal } from '../base/terminal.js';
import type { ErrorInfo } from '../base/errors.js';
import { scrub, scrubValue } from '../kubeconfig/redact.js';
import type { OutputFormat } from './parse.js';
import { type MetricFamily, formatMetrics } from './prometheus.js';
import { type Column, renderTable } from './table.js';
import { forTerminal } from './terminal.js';
import { outputWidth } from './width.js';

/** A per-cluster outcome as render() reports it: any item with `cluster` and `error` (a ClusterItem) will do. */
export interface Failure {
  /** The cluster it is about; absent when the message names its subject itself (a provider that could not list). */
  cluster?: string;
  error?: ErrorInfo;
}

/**
 * What a command hands to `render`: the rows of its table and how to print them; the JSON/YAML is the whole result.
 * render() prints everything, stdout and stderr, through the scrubber, the same way for every command.
 */
export interface View<Row> {
  rows: Row[];
  columns: Column<Row>[];
  /** -o name: the name of a row (default: its first column), one line per row. */
  name?: (row: Row) => string;
  /**
   * -o name: exactly these lines instead of one per row, for commands whose rows are not clusters (inspect's fields)
   * or that name a subset (the clusters that said yes).
   */
  names?: string[];
  /** Lines printed on stderr after the table (human output only), e.g. warnings. */
  notes?: string[];
  /**
   * Per-cluster failures: one `error: <cluster>: <message>` line each on stderr, in every format (JSON and YAML keep
   * them in the document too). Items without an error are skipped, so a command passes its items as they are.
   */
  failures?: Failure[];
  /** -o prometheus: the metrics, for the commands that declare `static metrics = true`. */
  metrics?: MetricFamily[];
  /** -o prometheus: exposition text a command rendered itself (fleet exporter --once, with prom-client), instead of `metrics`. */
  exposition?: string;
}

/** What the renderer needs from its command: the chosen format, the colours, and oclif's stdout line (quiet in JSON mode). */
export interface RenderTarget {
  format: () => OutputFormat;
  chalk: () => ChalkInstance;
  stdoutLine: (text: string) => void;
  /** Before anything is printed: the live progress line is erased (src/cli/progress.ts), so the two never mix. */
  beforePrint?: () => void;
}

/**
 * Rendering, the part of the base command that prints: the five result formats (table/wide, JSON via oclif, JSONL,
 * YAML, name, and prometheus where a command has metrics), the error document of the machine formats, and every stderr
 * line. Everything passes the scrubber on its way out.
 *
 * Strings from servers and from data are escaped for the terminal (src/base/terminal.ts) in every human format, one
 * place each: table and wide cells in renderTable (before colour is applied, so only chalk's own sequences remain),
 * -o name per line here, notes and `error:` lines in stderr() (every stderr line, in every format, -o json included:
 * stderr is always read by a person). JSON, JSONL and YAML on stdout carry the data exactly, and -o prometheus writes
 * label values escaped as its text format defines (src/cli/prometheus.ts), for a program to read back.
 */
export class Renderer {
  constructor(private readonly target: RenderTarget) {}

  /** Whether the items already went out one by one as the clusters answered (-o jsonl over a fleet run). */
  streamed = false;

  /** JSON (-o json): the whole document, scrubbed. */
  json(value: unknown): void {
    process.stdout.write(JSON.stringify(scrubValue(value), null, 2) + '\n');
  }

  /** -o jsonl: one item as one line of JSON, scrubbed. */
  jsonLine(item: unknown): void {
    process.stdout.write(JSON.stringify(scrubValue(item)) + '\n');
  }

  /**
   * Text a command composed itself on stdout (a YAML document it shows, e.g. a plan): scrubbed, then every control
   * character escaped except LF. Its line breaks are the command's layout and stay; the data inside must be escaped
   * where it enters (js-yaml already writes a string's CR, TAB, ESC and C1 characters as escapes and its line breaks as
   * the document's own lines), because here a line break of the data cannot be told from the command's.
   */
  composed(message: string): string {
    return escapeTerminal(scrub(message), { keepNewlines: true });
  }

  /** stdout text whose data was escaped where it entered (a table's cells, -o name's lines): scrubbed only. */
  private print(text: string): void {
    this.target.stdoutLine(scrub(text));
  }

  /**
   * One line on stderr, scrubbed, then escaped for the terminal: the only way a command writes there. A stderr line is
   * one line by fleet's rule (notes, warnings, `error: <cluster>: <message>`, the request log), so any control
   * character in it, a line break included, came from data: a server's message cannot forge a second line or reach
   * the terminal as an escape sequence, in any output format.
   */
  stderr(line: string): void {
    this.target.beforePrint?.();
    process.stderr.write(escapeTerminal(scrub(line)) + '\n');
  }

  /**
   * Prints a result in the chosen format (JSON is printed by oclif from the return value of run), then its failures.
   * `shortNames` (full cluster name to short) is for the table's cluster columns only (renderTable).
   */
  render<Row>(result: unknown, view: View<Row>, shortNames?: ReadonlyMap<string, string>): void {
    const format = this.target.format();
    this.target.beforePrint?.();
    switch (format) {
      case 'json':
        break;
      case 'jsonl':
        // Streamed by overClusters as each cluster answered; otherwise each item now (or the whole result, if it has none).
        if (!this.streamed) for (const item of (result as { items?: unknown[] }).items ?? [result]) this.jsonLine(item);
        break;
      case 'yaml':
        process.stdout.write(
          yaml.dump(scrubValue(JSON.parse(JSON.stringify(result))), { noRefs: true, lineWidth: -1 }),
        );
        break;
      case 'prometheus':
        process.stdout.write(scrub(view.exposition ?? formatMetrics(view.metrics ?? [])));
        break;
      case 'name':
        // One line per name: a CR or LF inside a name is escaped, so it cannot make a second name.
        for (const line of view.names ??
          view.rows.map((row) => (view.name ? view.name(row) : String(view.columns[0].get(row)))))
          this.print(forTerminal(line));
        break;
      default: {
        if (view.rows.length > 0)
          this.print(
            renderTable(view.rows, view.columns, {
              wide: format === 'wide',
              chalk: this.target.chalk(),
              shortNames,
              // The default table fits the terminal (src/cli/width.ts); -o wide shows every value whole.
              maxWidth: format === 'table' ? outputWidth() : undefined,
            }),
          );
        for (const note of view.notes ?? []) this.stderr(note);
      }
    }
    for (const f of view.failures ?? [])
      if (f.error) this.stderr(`error: ${f.cluster === undefined ? '' : `${f.cluster}: `}${f.error.message}`);
  }

  /**
   * The command's error as the machine formats carry it on stdout ({error: {kind, message}}), so a reader of JSON, JSONL
   * or YAML gets a document either way; the human formats have only the stderr line.
   */
  errorDocument(error: { kind: string; message: string }, jsonEnabled: boolean): void {
    const format = this.target.format();
    if (jsonEnabled) this.json({ error });
    else if (format === 'jsonl') process.stdout.write(JSON.stringify({ error }) + '\n');
    else if (format === 'yaml') process.stdout.write(yaml.dump({ error }));
  }
}
