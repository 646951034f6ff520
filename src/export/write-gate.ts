import type { Cancellation } from '../base/cancel.js';
import { type TestPause, pauseAt } from '../base/test-pause.js';
import type { WriteGate } from '../kubeconfig/atomic-write.js';

/**
 * How `kubeconfig export` decides, once, whether an interrupt stops it (docs/kubeconfig.md, "Ctrl-C"). The decision is
 * taken at the rename of the first file the run writes (--out, --merge-into, --write-kuberc, in that order), in the
 * same turn of the event loop as the rename (WriteGate.decide), so there are two outcomes and nothing between them:
 * - the signal came before: nothing is written (the temp file is removed), exit 130 (143), no summary;
 * - it came after: that file is written, so the run writes the rest, prints its summary and a warning saying the
 *   signal came after the file was written, and ends normally, as `creds generate` does for a signal after delivery.
 * Test hook (base/test-pause.ts): steps `before-write` (the temp file written, not renamed) and `after-write`.
 */
export class ExportWrites {
  /** The first file this run wrote, once written. */
  committed?: string;

  constructor(
    private readonly cancel: Cancellation,
    private readonly pause?: TestPause,
  ) {}

  /** The gate of one file's write. */
  gate(file: string): WriteGate {
    const first = () => this.committed === undefined;
    return {
      ready: async () => {
        if (first()) await pauseAt(this.pause, 'before-write', this.cancel.signal);
      },
      decide: () => {
        if (!first()) return;
        this.cancel.check();
        this.committed = file;
        // A second signal from here on ends the process at once, saying the file is kept.
        this.cancel.delivered(file, 'the file was written');
      },
      written: async () => {
        if (this.committed === file) await pauseAt(this.pause, 'after-write', this.cancel.signal);
      },
    };
  }

  /**
   * After the writes: a run that wrote nothing (a merge with no change, --dry-run) is interrupted as any other; one that
   * wrote returns the warning for a signal that came after the write (undefined when none came).
   */
  settle(): string | undefined {
    const signal = this.cancel.interrupted;
    if (!signal) return undefined;
    if (this.committed === undefined) throw signal;
    return `${signal.signalName} arrived after ${this.committed} was written: the export is complete and kept`;
  }
}
