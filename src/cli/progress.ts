import type { Count, ProgressPort, Wait } from '../base/progress.js';
import { escapeTerminal } from '../base/terminal.js';
import { scrub } from '../kubeconfig/redact.js';
import { inCI } from './tty.js';

/**
 * Whether a stream may receive cursor control (the `\r` + erase-line of a progress line): a terminal that is not
 * `TERM=dumb`. A dumb terminal (Emacs shell buffers, some CI consoles) prints escape codes as garbage.
 */
export function cursorControlAllowed(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/**
 * The one rule for "is the live line drawn": human output (not -o json, yaml, jsonl, name, prometheus), stderr a
 * terminal that takes cursor control, and not CI (CI=true: a CI log keeps every byte, and a line rewritten in place is
 * noise there). Stdout may be piped (`fleet creds rotate --all | tee log`): the line is on stderr, which a person sees.
 */
export function progressShown({
  machineOutput,
  stream = process.stderr,
  env = process.env,
}: {
  machineOutput: boolean;
  stream?: { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
}): boolean {
  return !machineOutput && cursorControlAllowed(stream, env) && !inCI(env);
}

/** A wait the board holds, with when it began. */
interface Waiting extends Wait {
  started: number;
}

const ERASE = '\r\u001B[2K';

/** How often the line is redrawn while something is in progress (only when its text changed: the elapsed seconds). */
const TICK_MS = 250;

export interface ProgressBoardOptions {
  /** Draw the live line (progressShown); the board keeps track either way, for an interrupt's acknowledgement. */
  shown: boolean;
  stream?: Pick<NodeJS.WriteStream, 'write'> & { columns?: number };
  now?: () => number;
  /** Tests: no timer (the line is redrawn only on events and `tick()`). */
  timer?: boolean;
}

/**
 * The live line of a command's long work, on stderr (src/base/progress.ts is the port services report to): the count
 * of a run over many (`[12/40] credentials, 1 failed`), what one item is doing (`hub/ns/name: minting the new
 * credential...`) or a wait of seconds with its elapsed time (`...: waiting for the API server to refuse the old token
 * (up to 30s)... 4s`). Drawn in place (CR, erase line), cut to the terminal's width so it never wraps, erased as soon
 * as nothing is in progress and before any other stderr line (which then stays above it), so it never mixes with the
 * output. Nothing is written when not `shown`, but what is in progress is still known: an interrupt's acknowledgement
 * (`acknowledgement()`) names it at a terminal or not.
 */
export class ProgressBoard {
  private readonly stream: Pick<NodeJS.WriteStream, 'write'> & { columns?: number };
  private readonly now: () => number;
  private readonly counts = new Map<string, Count>();
  private readonly doings = new Map<string, string>();
  private readonly waits = new Set<Waiting>();
  private interruptText = new Map<string, string>();
  private drawn: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: ProgressBoardOptions) {
    this.stream = o.stream ?? process.stderr;
    this.now = o.now ?? Date.now;
  }

  /**
   * A port for one service call. `noun` names what it counts (`credentials`, `clusters`); `onInterrupt` says what the
   * run does after a Ctrl-C when no wait is in progress (`a credential not yet replaced is put back as it was`).
   */
  port(noun: string, onInterrupt?: string): ProgressPort {
    if (onInterrupt) this.interruptText.set(noun, onInterrupt);
    return {
      count: (c) => {
        if (c.done >= c.total) this.counts.delete(noun);
        else this.counts.set(noun, { ...c });
        this.update();
      },
      doing: (key, text) => {
        this.doings.delete(key);
        // The latest news last: the line shows the item that moved most recently.
        if (text !== undefined) this.doings.set(key, text);
        this.update();
      },
      wait: (w) => {
        const held: Waiting = { ...w, started: this.now() };
        this.waits.add(held);
        this.update();
        return () => {
          this.waits.delete(held);
          this.update();
        };
      },
    };
  }

  /** The runner's onProgress over clusters (src/fleet/runner.ts). */
  counter(noun: string): (c: Count) => void {
    const port = this.port(noun);
    return (c) => port.count(c);
  }

  /** The text of the line now, undefined when nothing is in progress (exported for the unit tests). */
  line(): string | undefined {
    const parts: string[] = [];
    for (const [noun, c] of this.counts) {
      // One item is not counted (its own line says what it does); every item done erases the count.
      if (c.total > 1) parts.push(`[${c.done}/${c.total}] ${noun}${c.failed > 0 ? `, ${c.failed} failed` : ''}`);
    }
    const waits = [...this.waits];
    if (waits.length > 0) {
      const w = waits[0];
      const seconds = Math.floor((this.now() - w.started) / 1000);
      parts.push(
        `${w.text}${waits.length > 1 ? ` (and ${waits.length - 1} more waiting)` : ''}...${seconds >= 1 ? ` ${seconds}s` : ''}`,
      );
    } else if (this.doings.size > 0) {
      const [key, text] = [...this.doings].at(-1)!;
      parts.push(`${key}: ${text}...`);
    }
    if (parts.length === 0) return undefined;
    // Names in it come from data (a Secret's, a file's): scrubbed and escaped as every stderr line is.
    return escapeTerminal(scrub(parts.join(' · ')));
  }

  /** Redraws when the text changed (the timer's elapsed seconds). */
  tick(): void {
    this.update();
  }

  /**
   * Erases the line before another stderr line is written (Renderer.stderr); the next event or tick draws it again
   * below that line.
   */
  clear(): void {
    if (this.drawn === undefined) return;
    this.stream.write(ERASE);
    this.drawn = undefined;
  }

  /**
   * What the first Ctrl-C is told, at once, also off a terminal: what the run finishes before it stops and how long that
   * may take, and what a second Ctrl-C would leave. Undefined when nothing is in progress (the run ends at once).
   */
  acknowledgement(): string | undefined {
    const waits = [...this.waits];
    const more = (n: number) => (n > 0 ? ` and ${n} more like it` : '');
    if (waits.length > 0) {
      const now = this.now();
      const left = Math.max(
        ...waits.map((w) => (w.usually !== undefined && now < w.usually ? w.usually : w.deadline) - now),
      );
      const w = waits[0];
      return escapeTerminal(
        scrub(
          `interrupt: finishing ${w.finishing}${more(waits.length - 1)}, up to ${Math.max(1, Math.ceil(left / 1000))} s; press Ctrl-C again to stop now and leave ${w.leaves}${waits.length > 1 ? ` (and as much for the ${waits.length - 1} more)` : ''}`,
        ),
      );
    }
    const counting = [...this.counts.keys()].find((noun) => this.interruptText.has(noun));
    if (this.doings.size === 0 && counting === undefined) return undefined;
    const doing = [...this.doings];
    const what =
      doing.length === 1
        ? ` of ${doing[0][0]} (${doing[0][1]})`
        : doing.length > 1
          ? ` of ${doing.length} ${counting ?? 'items'}`
          : '';
    const then = [...this.interruptText.values()][0];
    return escapeTerminal(
      scrub(
        `interrupt: stopping after the step in progress${what}, a few seconds${then ? `: ${then}` : ''}; press Ctrl-C again to stop now`,
      ),
    );
  }

  /** The command is over (its result or its error is next): erased, and nothing drawn any more. */
  close(): void {
    this.clear();
    this.stop();
    this.closed = true;
  }

  private closed = false;

  private update(): void {
    if (!this.o.shown || this.closed) return;
    const text = this.line();
    if (text === undefined) {
      this.clear();
      this.stop();
      return;
    }
    const width = this.stream.columns;
    const fitted =
      width && width > 1 && [...text].length > width - 1 ? [...text].slice(0, width - 2).join('') + '…' : text;
    if (fitted !== this.drawn) {
      this.stream.write(ERASE + fitted);
      this.drawn = fitted;
    }
    if (this.o.timer !== false && !this.timer) {
      this.timer = setInterval(() => this.update(), TICK_MS);
      // Never what keeps the process alive.
      this.timer.unref();
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
