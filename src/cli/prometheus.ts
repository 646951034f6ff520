/**
 * `-o prometheus`: the Prometheus text exposition format (version 0.0.4), what node_exporter's textfile collector and
 * the Pushgateway read. Only gauges: every value is a state at the time of the run (a timestamp, 0/1, seconds).
 *
 * Label values are written escaped (backslash, double quote, line feed), HELP text likewise (backslash, line feed), so
 * any value, however odd, parses back to itself. What goes into a label is chosen by the caller from fields that are
 * never secret (cluster names, locations, check names), and the whole text still goes through the scrubber.
 *
 * Like JSON, this is output for a program: a label value keeps every other character exactly (a control character is
 * valid there and a scraper reads it back as it was), so the terminal escaping of human output (src/base/terminal.ts)
 * is not applied. Its `\x1b` would be an invalid escape sequence to a Prometheus parser, not the value.
 */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`, checked when written. */
  name: string;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value as the text format writes it between double quotes. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text: backslash and line feed escaped (a double quote is literal there). */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value: integers as written, NaN and infinities in the format's own spelling. */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/**
 * The families as exposition text: HELP and TYPE once per family, then its samples. A family without samples is
 * left out (a TYPE line with nothing under it says nothing). A sample with the same labels as an earlier one of its
 * family is dropped, since Prometheus rejects a scrape that repeats a series.
 */
export function formatMetrics(families: MetricFamily[]): string {
  const lines: string[] = [];
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw new Error(`metric name ${JSON.stringify(f.name)} is not valid`);
    if (f.samples.length === 0) continue;
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`);
    const seen = new Set<string>();
    for (const s of f.samples) {
      const pairs = Object.entries(s.labels).filter(([, v]) => v !== '');
      for (const [k] of pairs)
        if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new Error(`label name ${JSON.stringify(k)} is not valid`);
      const labels = pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',');
      if (seen.has(labels)) continue;
      seen.add(labels);
      lines.push(`${f.name}${labels ? `{${labels}}` : ''} ${formatValue(s.value)}`);
    }
  }
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/** An ISO time as Unix seconds, or undefined. */
export function unixSeconds(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
