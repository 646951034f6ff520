import { Command, Interfaces } from '@oclif/core';
import type { ChalkInstance } from 'chalk';

import { colorEnabled, makeChalk } from './color.js';
import { setWarningSink } from '../base/warnings.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, UsageError } from '../base/errors.js';
import { canInteract } from './tty.js';
import { acknowledgeInterruptsWith, cancellation, watchInterrupts } from './interrupt.js';
import { ProgressBoard, progressShown } from './progress.js';
import type { Cancellation } from '../base/cancel.js';
import { misreadLevel, normalizeArgv, verboseInArgv } from './argv.js';
import type { Impersonation } from '../kube/client.js';
import { failureResult, placeFailures, selectionFailures } from '../fleet/failures.js';
import { type ClusterResult, type ClusterTask, runOverClusters } from '../fleet/runner.js';
import {
  type ImpersonationFlags,
  type SelectionFlags,
  declaresGroup,
  fleetFlags,
  globalFlags,
  impersonationFlags,
  impersonationValue,
} from './flags.js';
import { Fleet } from './fleet-run.js';
import type { ClusterRef } from '../providers/types.js';
import type { HubChoice } from '../creds/hubs.js';
import { type HubFlagValues, commandHubs } from './hubs.js';
import { type OutputFormat, isMachineFormat, outputFormat } from './parse.js';
import { Renderer, type View } from './render.js';
import { clusterRunExitCode, errorOutcome, raiseExitCode, writeErrorLines } from './exit-policy.js';

// The parts of the base command live beside it (parse.ts, render.ts, exit-policy.ts, hubs.ts); commands import these
// names from here as before.
export { OUTPUT_FORMATS, type OutputFormat, oneLine } from './parse.js';
export type { Failure, View } from './render.js';

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/**
 * The flag groups a command declares, handed to the base command as the command's own typed flags
 * (`protected flagGroups() { return {selection: this.flags, impersonation: this.flags} }`): the base reads a group's
 * values only through this, so they are checked by the compiler, never read from the flags by name.
 */
export interface FlagGroups {
  /** fleetFlags (or fleetFlagsUnsharded): --cluster, --all, --selector, --cluster-timeout, --shard, --shard-count. */
  selection?: SelectionFlags;
  /** impersonationFlags: --as, --as-group, --as-uid. */
  impersonation?: ImpersonationFlags;
}

/**
 * The base of every fleet command: global flags, the output formats, colour policy and the single error path
 * (one line on stderr, exit 2 for usage/config, 1 for failed checks, a stack trace only with --verbose).
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static enableJsonFlag = true;

  /** Whether the command prints metrics with -o prometheus (its View carries them); the others refuse that format. */
  static metrics = false;

  /**
   * Whether the command shows skipped TLS verification in its own output (clusters inspect's TLS row, clusters
   * verify's tls-verified check); the others get a warning when a credential is sent to such a cluster.
   */
  static reportsSkippedTls = false;

  /** The global flags, in every command's help under GLOBAL (src/cli/flags.ts). */
  static baseFlags = globalFlags;

  /**
   * Whether a kubeconfig context that names a missing cluster or user is a failed check of the command's own (clusters
   * verify's provider-ready, exit 1) rather than a configuration error (exit 2) of the run (src/cli/exit-policy.ts).
   */
  static brokenEntryIsCheck = false;

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;
  /** Every positional argument, for a command with variadic arguments (strict = false): oclif's args keep the first only. */
  protected positionals!: string[];
  protected chalk!: ChalkInstance;

  /**
   * The flag groups this command declares, as its own typed flags (see FlagGroups). A command that declares fleetFlags
   * or impersonationFlags returns them here; one that declares them and does not is stopped by init (an internal error,
   * found by the unit test over every command) instead of silently selecting the current context.
   */
  protected flagGroups(): FlagGroups {
    return {};
  }

  public async init(): Promise<void> {
    await super.init();
    // Warnings found below the command layer (a plain-http server) reach stderr the one way, scrubbed.
    setWarningSink((line) => this.logStderr(line));
    // SIGINT/SIGTERM kill the plugins this command started and end it with 130/143 (src/cli/interrupt.ts).
    watchInterrupts((line) => this.logStderr(line));
    // A command line that cannot be read is one line, also with -v: the stack would be the parser's, nothing of the run.
    const typed = this.argv;
    const unread = (error: unknown): never => {
      this.commandLineUnread = true;
      throw misreadLevel(typed, error) ?? error;
    };
    try {
      this.argv = normalizeArgv(typed);
    } catch (error) {
      unread(error);
    }
    const { args, argv, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    }).catch(unread);
    this.flags = flags as BaseFlags<T>;
    // The one reading of the format for the rest of the run (render, jsonEnabled, the error path, streaming).
    this.resolvedFormat = outputFormat(this.argv, this.flags);
    this.args = args as BaseArgs<T>;
    this.positionals = argv.map(String);
    this.chalk = makeChalk(colorEnabled({ flag: this.flags.color }));
    // The live line of long work, drawn by one rule (progressShown); a first Ctrl-C is told what it is finishing.
    this.progress = new ProgressBoard({ shown: progressShown({ machineOutput: this.machineOutput }) });
    acknowledgeInterruptsWith(() => this.progress.acknowledgement());
    const ctor = this.ctor as unknown as typeof BaseCommand;
    // Refused before anything is read or contacted: metrics exist only where a command defines them.
    if (this.format === 'prometheus' && !ctor.metrics) {
      throw new UsageError(
        `-o prometheus: "${this.id?.replaceAll(':', ' ') ?? 'this command'}" has no metrics (creds list, creds rotate and clusters verify have); use -o table, wide, json, yaml or name`,
      );
    }
    const groups = this.flagGroups();
    for (const [name, group, given] of [
      ['fleetFlags', fleetFlags, groups.selection],
      ['impersonationFlags', impersonationFlags, groups.impersonation],
    ] as const) {
      if (given === undefined && declaresGroup(this.ctor.flags, group))
        throw new Error(`${this.id}: declares ${name} but does not hand them to the base command (flagGroups)`);
    }
    // --as and friends are checked here, before any provider or cluster is touched.
    this.impersonation = groups.impersonation && impersonationValue(groups.impersonation);
    this.fleet = new Fleet({
      flags: this.flags,
      machineOutput: this.machineOutput,
      interactive: () => this.interactive,
      impersonation: this.impersonation,
      say: (line) => this.logStderr(line),
      progress: this.progress,
      reportsSkippedTls: ctor.reportsSkippedTls,
      // Read when the selection is first needed: a command may hand its values over in run (wi test and wi doctor).
      selection: () => this.flagGroups().selection,
    });
    // A kuberc the user named must exist and be usable before anything is read or contacted (kubectl's rule).
    await this.fleet.readNamedKuberc();
  }

  /**
   * What the command works over, composed once here: the providers, the connector, the selection and the runner's
   * options (src/cli/fleet-run.ts). Commands read it instead of getters of their own.
   */
  protected fleet!: Fleet;

  /**
   * The identity named by --as/--as-group/--as-uid (commands that declare impersonationFlags), or undefined. runOptions()
   * hands it to every cluster's client, the one place the headers are set (src/kube/client.ts).
   */
  protected impersonation?: Impersonation;

  /** The output format (src/cli/parse.ts outputFormat); before init (a parse that failed) argv alone says it. */
  protected get format(): OutputFormat {
    return this.resolvedFormat ?? outputFormat(this.argv ?? [], this.flags);
  }

  private resolvedFormat?: OutputFormat;

  /** Set when the command line could not be read (normalizeArgv or oclif's parse failed): its error has no stack to show. */
  private commandLineUnread = false;

  /**
   * The live line of this command's long work (src/cli/progress.ts): a service is handed `this.progress.port(noun)` and
   * reports to it; it is drawn only at a terminal with human output outside CI, and erased before anything is printed.
   */
  protected progress!: ProgressBoard;

  /** Machine output: no prompts, no progress, no colour. */
  protected get machineOutput(): boolean {
    return isMachineFormat(this.format);
  }

  /** Printing, every format and every stderr line (src/cli/render.ts). */
  private readonly out = new Renderer({
    format: () => this.format,
    chalk: () => this.chalk,
    stdoutLine: (text) => super.log(text),
    beforePrint: () => this.progress?.clear(),
  });

  /** The hubs of the one hub rule for this command's --hub-kubeconfig/--hub-context (src/cli/hubs.ts). */
  protected async credsHubs(f: HubFlagValues): Promise<HubChoice[]> {
    return commandHubs(this.fleet, this.flags, f);
  }

  // JSON is on for --json and for -o json, so oclif prints the returned result and suppresses this.log.
  public jsonEnabled(): boolean {
    if (!this.ctor?.enableJsonFlag) return false;
    return this.format === 'json';
  }

  public logJson(json: unknown): void {
    this.out.json(json);
  }

  /** One JSON document on one stdout line, scrubbed (a command that reports as it goes: fleet exporter's collections). */
  protected logJsonLine(item: unknown): void {
    this.out.jsonLine(item);
  }

  /** Text a command composed itself on stdout: scrubbed, every control character but LF escaped (Renderer.composed). */
  public log(message = '', ...args: unknown[]): void {
    super.log(this.out.composed(String(message)), ...args);
  }

  /**
   * Prints a result in the chosen format, then its failures (Renderer.render). A table names file clusters by the short
   * names of the clusters the run listed (nothing is listed for them); every other format keeps full names.
   */
  protected async render<Row>(result: unknown, view: View<Row>): Promise<void> {
    const table = this.format === 'table' || this.format === 'wide';
    this.out.render(result, view, table ? await this.fleet.shortNames() : undefined);
  }

  /** One line on stderr, scrubbed, then escaped for the terminal: the only way a command writes there. */
  protected logStderr(line: string): void {
    this.out.stderr(line);
  }

  protected get interactive(): boolean {
    return canInteract({ machineOutput: this.machineOutput });
  }

  /**
   * Runs `work` on every selected cluster (or on `clusters`, a command's own choice of them) with bounded concurrency; a
   * provider that could not list is one failed result in its place when the selection walked the list (--all, -l).
   * Marks the run failed if any cluster failed (src/cli/exit-policy.ts clusterRunExitCode).
   */
  protected async overClusters<R>(
    work: (task: ClusterTask) => Promise<R>,
    item?: (result: ClusterResult<R>) => unknown,
    clusters?: ClusterRef[],
  ): Promise<ClusterResult<R>[]> {
    const provider = this.fleet.provider;
    const refs = clusters ?? (await this.fleet.selected());
    const failures = await selectionFailures(provider, this.fleet.selection);
    const options = this.fleet.runOptions();
    // -o jsonl with a command that can say what one result's item is: each line goes out as that cluster answers, so
    // a reader of a 10,000-cluster run starts before the last cluster does (in the order they finish; providers that
    // could not list come first).
    if (this.format === 'jsonl' && item) {
      this.out.streamed = true;
      for (const f of failures) this.out.jsonLine(item(failureResult<R>(f)));
      options.onResult = (r) => this.out.jsonLine(item(r as ClusterResult<R>));
    }
    const ran = await runOverClusters(refs, work, options);
    const results =
      failures.length > 0 ? placeFailures(await provider.list(), refs, ran, failures, (f) => failureResult<R>(f)) : ran;
    const code = clusterRunExitCode(
      refs,
      ran,
      results,
      (this.ctor as unknown as typeof BaseCommand).brokenEntryIsCheck,
    );
    if (code !== 0) this.markFailed(code);
    return results;
  }

  /**
   * For a command that makes things: the first SIGINT/SIGTERM cancels this (the service undoes its work and throws
   * Interrupted, exit 130/143) instead of ending the process at once.
   */
  protected cancellation(): Cancellation {
    return cancellation();
  }

  /**
   * Marks the run as failed (exit 1, or `code`) while still printing the result; a higher code already set stays
   * (src/cli/exit-policy.ts raiseExitCode). The only way a command sets its exit code.
   */
  protected markFailed(code = EXIT_FAILED): void {
    raiseExitCode(code);
  }

  /** After run, whatever its outcome: the live line is gone (a service that threw mid-count left it drawn). */
  protected async finally(err: Error | undefined): Promise<unknown> {
    this.progress?.close();
    return super.finally(err);
  }

  protected async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // oclif's own exit (this.exit) and help/version flow through untouched.
    if (err.constructor?.name === 'ExitError') throw err;
    // Whatever was in progress is over: its line goes before the error's.
    this.progress?.close();
    // Ctrl-C at a prompt (the wizard): the terminal is in raw mode, so it arrives as the prompt's error, not as SIGINT.
    // Nothing was made yet and the person pressed it on purpose: exit 130, as a shell reports a Ctrl-C, and print
    // nothing (the prompt's own "User force closed the prompt" message included).
    if (err.name === 'ExitPromptError') this.exit(EXIT_INTERRUPTED);
    const visibleFlags = Object.entries({ ...(this.ctor as typeof BaseCommand).baseFlags, ...this.ctor.flags })
      .filter(([, f]) => !f.hidden)
      .map(([name]) => name);
    const outcome = errorOutcome(err, visibleFlags);
    this.out.errorDocument({ kind: outcome.kind, message: outcome.message }, this.jsonEnabled());
    writeErrorLines(err, outcome, verboseInArgv(this.argv) && !this.commandLineUnread);
    this.exit(outcome.code);
    return undefined;
  }
}
