import {Command, Flags, Interfaces} from '@oclif/core'
import type {ChalkInstance} from 'chalk'
import yaml from 'js-yaml'

import {scrub, scrubValue} from '../kubeconfig/redact.js'
import {colorEnabled, makeChalk} from './color.js'
import {formatDuration} from '../base/duration.js'
import {DEFAULT_REQUEST_TIMEOUT_MS} from '../base/limits.js'
import {setWarningSink} from '../base/warnings.js'
import {escapeTerminal} from '../base/terminal.js'
import {forTerminal} from './terminal.js'
import {EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, type ErrorInfo, FleetError, UsageError, toErrorInfo} from '../base/errors.js'
import {type Column, renderTable} from './table.js'
import {canInteract} from './tty.js'
import {cancellation, watchInterrupts} from './interrupt.js'
import type {Cancellation} from '../base/cancel.js'
import {normalizeArgv, plainParseMessage, verboseInArgv} from './argv.js'
import type {Impersonation} from '../kube/client.js'
import {failureResult, placeFailures, selectionFailures} from '../fleet/failures.js'
import {type ClusterResult, type ClusterTask, runOverClusters} from '../fleet/runner.js'
import {impersonationValue} from './flags.js'
import {Fleet} from './fleet-run.js'
import {type MetricFamily, formatMetrics} from './prometheus.js'
import {PROVIDER_TYPES} from '../config/fleet-config.js'
import type {ClusterRef} from '../providers/types.js'
import {type HubChoice, type HubFlags, credsHubs} from '../creds/hubs.js'
import {checkReadableFile} from '../base/files.js'

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'jsonl', 'yaml', 'name', 'prometheus'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/** The output format named in argv, readable before (or without) a successful parse, e.g. when parsing itself failed. */
function outputInArgv(argv: string[]): string | undefined {
  const end = argv.indexOf('--')
  const args = end === -1 ? argv : argv.slice(0, end)
  let found: string | undefined
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '--json') found = 'json'
    else if (a === '-o' || a === '--output') found = args[i + 1]
    else if (a.startsWith('--output=')) found = a.slice('--output='.length)
    else if (a.startsWith('-o=')) found = a.slice(3)
    else if (a.startsWith('-o') && a.length > 2) found = a.slice(2)
  }
  return found
}

/**
 * oclif's parse errors span several lines (an argument table, "See more help"); fleet's rule is one line naming what is
 * wrong, so they are folded: missing arguments by name, other messages joined.
 */
export function oneLine(err: Error & {args?: Array<{name?: string}>}): string {
  if (/^Missing \d+ required arg/.test(err.message) && Array.isArray(err.args)) {
    const names = err.args.map((a) => (a.name ?? '').toUpperCase()).filter(Boolean)
    return `missing argument${names.length === 1 ? '' : 's'} ${names.join(', ')} (see --help)`
  }
  return plainParseMessage(err.message)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(See more help|Note:|Alternatively)/.test(l))
    .join(': ')
    .replace(/\s+:/g, ':')
}

/** A per-cluster outcome as render() reports it: any item with `cluster` and `error` (a ClusterItem) will do. */
export interface Failure {
  /** The cluster it is about; absent when the message names its subject itself (a provider that could not list). */
  cluster?: string
  error?: ErrorInfo
}

/**
 * What a command hands to `render`: the rows of its table and how to print them; the JSON/YAML is the whole result.
 * render() prints everything, stdout and stderr, through the scrubber, the same way for every command.
 */
export interface View<Row> {
  rows: Row[]
  columns: Column<Row>[]
  /** -o name: the name of a row (default: its first column), one line per row. */
  name?: (row: Row) => string
  /**
   * -o name: exactly these lines instead of one per row, for commands whose rows are not clusters (inspect's fields)
   * or that name a subset (the clusters that said yes).
   */
  names?: string[]
  /** Lines printed on stderr after the table (human output only), e.g. warnings. */
  notes?: string[]
  /**
   * Per-cluster failures: one `error: <cluster>: <message>` line each on stderr, in every format (JSON and YAML keep
   * them in the document too). Items without an error are skipped, so a command passes its items as they are.
   */
  failures?: Failure[]
  /** -o prometheus: the metrics, for the commands that declare `static metrics = true`. */
  metrics?: MetricFamily[]
}

/**
 * The base of every fleet command: global flags, the output formats, colour policy and the single error path
 * (one line on stderr, exit 2 for usage/config, 1 for failed checks, a stack trace only with --verbose).
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static enableJsonFlag = true

  /** Whether the command prints metrics with -o prometheus (its View carries them); the others refuse that format. */
  static metrics = false

  /**
   * Whether the command shows skipped TLS verification in its own output (clusters inspect's TLS row, clusters
   * verify's tls-verified check); the others get a warning when a credential is sent to such a cluster.
   */
  static reportsSkippedTls = false

  static baseFlags = {
    kubeconfig: Flags.string({
      description: 'Kubeconfig file or directory, or a ":"-separated list (files merge like KUBECONFIG; each file in a directory stands alone).',
      helpGroup: 'GLOBAL',
    }),
    context: Flags.string({description: 'Kubeconfig context to use.', helpGroup: 'GLOBAL'}),
    'fleet-config': Flags.string({
      description: 'Fleet configuration file naming the providers (default: ./fleet.yaml, then $XDG_CONFIG_HOME/fleet/config.yaml).',
      env: 'FLEET_CONFIG',
      helpGroup: 'GLOBAL',
    }),
    kuberc: Flags.string({
      description: "kubectl's preferences file, whose credentialPluginPolicy decides which exec plugins may run (default: $KUBERC, then ~/.kube/kuberc; KUBECTL_KUBERC=false: none).",
      helpGroup: 'GLOBAL',
    }),
    provider: Flags.string({
      description: `Only this provider: a name from the fleet configuration, or a provider type (${PROVIDER_TYPES.join(', ')}).`,
      helpGroup: 'GLOBAL',
    }),
    output: Flags.string({
      char: 'o',
      description: 'Output format (jsonl: one JSON item per line, over many clusters each as its cluster answers; prometheus: metrics, on creds list, creds rotate and clusters verify only).',
      options: [...OUTPUT_FORMATS],
      helpGroup: 'GLOBAL',
    }),
    color: Flags.boolean({
      allowNo: true,
      description: 'Colour the output: --color, --no-color, --color=true|false (default: when stdout is a terminal and NO_COLOR is unset; FORCE_COLOR=0 turns it off).',
      helpGroup: 'GLOBAL',
    }),
    'request-timeout': Flags.string({
      description: 'Time limit for each request to a cluster (e.g. 10s, 1m; 0 for none).',
      default: formatDuration(DEFAULT_REQUEST_TIMEOUT_MS),
      helpGroup: 'GLOBAL',
    }),
    concurrency: Flags.integer({
      description: 'How many clusters to talk to at once.',
      default: 16,
      min: 1,
      helpGroup: 'GLOBAL',
    }),
    verbose: Flags.boolean({char: 'v', description: 'Print more detail, and stack traces on errors. -v N also sets --verbosity N, as kubectl.', helpGroup: 'GLOBAL'}),
    verbosity: Flags.integer({
      description: 'Log level like kubectl -v: 6 logs each request (method, URL, status, time) on stderr, 7 adds request headers, 8 response headers; credentials are masked.',
      min: 0,
      helpGroup: 'GLOBAL',
    }),
  }

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>
  protected chalk!: ChalkInstance

  public async init(): Promise<void> {
    await super.init()
    // Warnings found below the command layer (a plain-http server) reach stderr the one way, scrubbed.
    setWarningSink((line) => this.logStderr(line))
    // SIGINT/SIGTERM kill the plugins this command started and end it with 130/143 (src/cli/interrupt.ts).
    watchInterrupts((line) => this.logStderr(line))
    this.argv = normalizeArgv(this.argv)
    const {args, flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    // The one reading of the format for the rest of the run (render, jsonEnabled, the error path, streaming).
    this.resolvedFormat = this.readFormat()
    this.args = args as BaseArgs<T>
    this.chalk = makeChalk(colorEnabled({flag: this.flags.color}))
    // Refused before anything is read or contacted: metrics exist only where a command defines them.
    if (this.format === 'prometheus' && !(this.ctor as unknown as typeof BaseCommand).metrics) {
      throw new UsageError(`-o prometheus: "${this.id?.replaceAll(':', ' ') ?? 'this command'}" has no metrics (creds list, creds rotate and clusters verify have); use -o table, wide, json, yaml or name`)
    }
    // --as and friends are checked here, before any provider or cluster is touched.
    this.impersonation = impersonationValue(this.flags)
    this.fleet = new Fleet({
      flags: this.flags,
      machineOutput: this.machineOutput,
      interactive: () => this.interactive,
      impersonation: this.impersonation,
      say: (line) => this.logStderr(line),
      reportsSkippedTls: (this.ctor as unknown as typeof BaseCommand).reportsSkippedTls,
    })
  }

  /**
   * What the command works over, composed once here: the providers, the connector, the selection and the runner's
   * options (src/cli/fleet-run.ts). Commands read it instead of getters of their own.
   */
  protected fleet!: Fleet

  /**
   * The identity named by --as/--as-group/--as-uid (commands that declare impersonationFlags), or undefined. runOptions()
   * hands it to every cluster's client, the one place the headers are set (src/kube/client.ts).
   */
  protected impersonation?: Impersonation

  /**
   * The output format. `--json` is `-o json`; when both are given the later one wins, the same rule oclif's JSON printing
   * (jsonEnabled) and the error path follow, so the chosen format is the one printed.
   */
  protected get format(): OutputFormat {
    // Before init (a parse that failed) there are no flags yet: argv alone says it.
    return this.resolvedFormat ?? this.readFormat()
  }

  private resolvedFormat?: OutputFormat

  private readFormat(): OutputFormat {
    const named = outputInArgv(this.argv ?? [])
    if (named !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(named)) return named as OutputFormat
    if (this.flags?.json) return 'json'
    return (this.flags?.output as OutputFormat | undefined) ?? 'table'
  }

  /** Machine output: no prompts, no progress, no colour. */
  protected get machineOutput(): boolean {
    return this.format === 'json' || this.format === 'jsonl' || this.format === 'yaml' || this.format === 'name' || this.format === 'prometheus'
  }

  /** The inputs of the one hub rule (creds/hubs.ts): --hub-kubeconfig/--hub-context, the fleet configuration, the loading rules. */
  protected hubFlags(f: {'hub-kubeconfig'?: string; 'hub-context'?: string}): HubFlags {
    return {
      hubKubeconfig: f['hub-kubeconfig'],
      hubContext: f['hub-context'],
      kubeconfig: this.fleet.kubeconfigPaths,
      context: this.flags.context,
      provider: this.flags.provider,
      fleetConfig: this.flags['fleet-config'],
      trust: this.fleet.trust,
    }
  }

  /**
   * The hubs of the one hub rule (creds/hubs.ts credsHubs) for this command's flags, each --hub-kubeconfig file checked
   * first: missing, a directory or unreadable is one line naming the flag and the path, before any hub is asked.
   */
  protected async credsHubs(f: {'hub-kubeconfig'?: string; 'hub-context'?: string}): Promise<HubChoice[]> {
    for (const file of f['hub-kubeconfig']?.split(':').filter(Boolean) ?? []) {
      await checkReadableFile(file, `--hub-kubeconfig ${file}`, 'a kubeconfig file')
    }
    return credsHubs(this.hubFlags(f))
  }

  // JSON is on for --json and for -o json, so oclif prints the returned result and suppresses this.log.
  public jsonEnabled(): boolean {
    if (!this.ctor?.enableJsonFlag) return false
    return this.format === 'json'
  }

  public logJson(json: unknown): void {
    process.stdout.write(JSON.stringify(scrubValue(json), null, 2) + '\n')
  }

  /**
   * Text a command composed itself on stdout (a YAML document it shows, e.g. a plan): scrubbed, then every control
   * character escaped except LF. Its line breaks are the command's layout and stay; the data inside must be escaped
   * where it enters (js-yaml already writes a string's CR, TAB, ESC and C1 characters as escapes and its line breaks as
   * the document's own lines), because here a line break of the data cannot be told from the command's.
   */
  public log(message = '', ...args: unknown[]): void {
    super.log(escapeTerminal(scrub(String(message)), {keepNewlines: true}), ...args)
  }

  /** stdout text whose data was escaped where it entered (a table's cells, -o name's lines): scrubbed only. */
  private print(text: string): void {
    super.log(scrub(text))
  }

  /**
   * Prints a result in the chosen format (JSON is printed by oclif from the return value of run), then its failures.
   *
   * Strings from servers and from data are escaped for the terminal (src/base/terminal.ts) in every human format, one
   * place each: table and wide cells in renderTable (before colour is applied, so only chalk's own sequences remain),
   * -o name per line here, notes and `error:` lines in logStderr (every stderr line, in every format, -o json included:
   * stderr is always read by a person). JSON, JSONL and YAML on stdout carry the data exactly, and -o prometheus writes
   * label values escaped as its text format defines (src/cli/prometheus.ts), for a program to read back.
   */
  protected render<Row>(result: unknown, view: View<Row>): void {
    switch (this.format) {
      case 'json':
        break
      case 'jsonl':
        // Streamed by overClusters as each cluster answered; otherwise each item now (or the whole result, if it has none).
        if (!this.streamed) for (const item of (result as {items?: unknown[]}).items ?? [result]) this.jsonLine(item)
        break
      case 'yaml':
        process.stdout.write(yaml.dump(scrubValue(JSON.parse(JSON.stringify(result))), {noRefs: true, lineWidth: -1}))
        break
      case 'prometheus':
        process.stdout.write(scrub(formatMetrics(view.metrics ?? [])))
        break
      case 'name':
        // One line per name: a CR or LF inside a name is escaped, so it cannot make a second name.
        for (const line of view.names ?? view.rows.map((row) => (view.name ? view.name(row) : String(view.columns[0].get(row))))) this.print(forTerminal(line))
        break
      default: {
        if (view.rows.length > 0) this.print(renderTable(view.rows, view.columns, {wide: this.format === 'wide', chalk: this.chalk}))
        for (const note of view.notes ?? []) this.logStderr(note)
      }
    }
    for (const f of view.failures ?? []) if (f.error) this.logStderr(`error: ${f.cluster === undefined ? '' : `${f.cluster}: `}${f.error.message}`)
  }

  /** -o jsonl: one item as one line of JSON, scrubbed. */
  private jsonLine(item: unknown): void {
    process.stdout.write(JSON.stringify(scrubValue(item)) + '\n')
  }

  /** Whether overClusters already printed the items (-o jsonl with a command that maps each result as it comes). */
  private streamed = false

  /**
   * One line on stderr, scrubbed, then escaped for the terminal: the only way a command writes there. A stderr line is
   * one line by fleet's rule (notes, warnings, `error: <cluster>: <message>`, the request log), so any control
   * character in it, a line break included, came from data: a server's message cannot forge a second line or reach
   * the terminal as an escape sequence, in any output format.
   */
  protected logStderr(line: string): void {
    process.stderr.write(escapeTerminal(scrub(line)) + '\n')
  }

  protected get interactive(): boolean {
    return canInteract({machineOutput: this.machineOutput})
  }

  /**
   * Runs `work` on every selected cluster (or on `clusters`, a command's own choice of them) with bounded concurrency; a
   * provider that could not list is one failed result in its place when the selection walked the list (--all, -l).
   * Marks the run failed if any cluster failed.
   */
  protected async overClusters<R>(work: (task: ClusterTask) => Promise<R>, item?: (result: ClusterResult<R>) => unknown, clusters?: ClusterRef[]): Promise<ClusterResult<R>[]> {
    const provider = this.fleet.provider
    const refs = clusters ?? (await this.fleet.selected())
    const failures = await selectionFailures(provider, this.fleet.selection)
    const options = this.fleet.runOptions()
    // -o jsonl with a command that can say what one result's item is: each line goes out as that cluster answers, so
    // a reader of a 10,000-cluster run starts before the last cluster does (in the order they finish; providers that
    // could not list come first).
    if (this.format === 'jsonl' && item) {
      this.streamed = true
      for (const f of failures) this.jsonLine(item(failureResult<R>(f)))
      options.onResult = (r) => this.jsonLine(item(r as ClusterResult<R>))
    }
    const ran = await runOverClusters(refs, work, options)
    const results = failures.length > 0 ? placeFailures(await provider.list(), refs, ran, failures, (f) => failureResult<R>(f)) : ran
    if (results.some((r) => !r.ok)) this.markFailed()
    // A kubeconfig context that names a missing cluster or user, an unreadable certificate file: the user's configuration
    // is wrong, exit 2 in every command, also when it is one cluster's result among others (README "Exit codes and
    // errors"). A broken entry of a hub's inventory (a Secret without its key) is that cluster's failure, and a provider
    // that could not list is reported beside the clusters: both stay exit 1.
    const kubeconfigContexts = new Set(refs.filter((r) => r.source.kind === 'kubeconfig-file').map((r) => r.name))
    if (ran.some((r) => (r.error?.kind === 'config' || r.error?.kind === 'usage') && kubeconfigContexts.has(r.cluster))) this.markFailed(EXIT_USAGE)
    return results
  }

  /**
   * For a command that makes things: the first SIGINT/SIGTERM cancels this (the service undoes its work and throws
   * Interrupted, exit 130/143) instead of ending the process at once.
   */
  protected cancellation(): Cancellation {
    return cancellation()
  }

  /**
   * Marks the run as failed (exit 1, or `code`) while still printing the result. A code already set that is higher
   * stays: a configuration error (2) is not hidden by a failed check found after it.
   */
  protected markFailed(code = EXIT_FAILED): void {
    const current = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0)
    if (!(current > code)) process.exitCode = code
  }

  protected async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    // oclif's own exit (this.exit) and help/version flow through untouched.
    if (err.constructor?.name === 'ExitError') throw err
    // Ctrl-C at a prompt (the wizard): the terminal is in raw mode, so it arrives as the prompt's error, not as SIGINT.
    // Nothing was made yet and the person pressed it on purpose: exit 130, as a shell reports a Ctrl-C, and print
    // nothing (the prompt's own "User force closed the prompt" message included).
    if (err.name === 'ExitPromptError') this.exit(EXIT_INTERRUPTED)
    const isFleet = err instanceof FleetError
    const code = isFleet ? err.exitCode : (err.oclif?.exit ?? 1)
    const info = isFleet ? toErrorInfo(err) : {kind: code === 2 ? 'usage' : 'internal', message: err.message}
    const message = scrub(isFleet ? info.message.split('\n')[0] : oneLine(err))
    if (this.jsonEnabled()) this.logJson({error: {kind: info.kind, message}})
    else if (this.format === 'jsonl') process.stdout.write(JSON.stringify({error: {kind: info.kind, message}}) + '\n')
    else if (this.format === 'yaml') process.stdout.write(yaml.dump({error: {kind: info.kind, message}}))
    const verbose = verboseInArgv(this.argv)
    // stdout above is exact (JSON, YAML); this line is for a person, in every format: escaped like every stderr line.
    process.stderr.write(`error: ${escapeTerminal(message)}\n`)
    // A stack trace is lines by nature (its frames); the message at its top is data and may hold anything else.
    if (verbose && err.stack) process.stderr.write(escapeTerminal(scrub(err.stack), {keepNewlines: true}) + '\n')
    if (!isFleet && !err.oclif && !verbose) process.stderr.write('(run with --verbose for details)\n')
    this.exit(code)
    return undefined
  }
}
