// Holds a control plane for the lifetime of its parent (scripts/test.js): starts it, prints
//   FLEET_CONTROL_PLANE_READY <state.json path>
// on stdout, and tears it down when stdin closes, which happens however the parent ends, SIGKILL included, or on
// SIGINT/SIGTERM/SIGHUP. A separate process because a parent cannot clean up after its own SIGKILL.
//
//   node --import tsx test/support/supervise.ts [--members N] [--dir D] [--keep]
// --keep (or FLEET_KEEP_CONTROL_PLANE=1) keeps the directory (logs, PKI) after the processes are stopped.
import { parseArgs } from 'node:util';
import { reapStale, startControlPlane, type ControlPlane } from './control-plane.js';

const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '2' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const keepDir = values.keep || process.env.FLEET_KEEP_CONTROL_PLANE === '1';
const log = (l: string) => process.stderr.write(`[control-plane] ${l}\n`);

let cp: ControlPlane | undefined;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (cp) {
      const r = await cp.stop({ keepDir });
      log(`stopped ${r.stopped} processes${r.removed ? `, removed ${r.dir}` : `, kept ${r.dir}`}`);
      if (r.leftAlive.length > 0) log(`WARNING: still alive after SIGKILL: ${r.leftAlive.join(', ')}`);
    }
    // Before cp exists the start is still running: exiting lets the exit guard SIGKILL whatever was spawned so far.
    process.exit(code);
  }
  return new Promise<never>(() => {});
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => void shutdown(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const)[sig]));
}
process.stdin.on('end', () => void shutdown(0));
process.stdin.on('error', () => void shutdown(0));
process.stdin.resume();

try {
  const reaped = await reapStale();
  for (const d of reaped) log(`removed an abandoned control plane: ${d}`);
  cp = await startControlPlane({
    members: Number(values.members),
    dir: values.dir,
    ownerPid: process.pid,
    killOnExit: true,
    log,
  });
  process.stdout.write(`FLEET_CONTROL_PLANE_READY ${cp.statePath}\n`);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
