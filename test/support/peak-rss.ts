// Runs the fleet CLI as runFleet does and measures its peak resident memory: GNU time's maximum RSS (the kernel's
// ru_maxrss of the child) when /usr/bin/time is there, else VmHWM from /proc/<pid>/status, read every 5 ms while it runs.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FLEET_BIN, fleetTestEnv } from './cli.js';

export interface MeasuredRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak RSS of the fleet process, in MB (10^6 bytes). */
  peakRssMb: number;
  how: 'time -f %M' | 'VmHWM';
  wallMs: number;
  /** CPU time (user + sys) of the fleet process in ms, from GNU time (NaN without it). */
  cpuMs: number;
}

const TIME = '/usr/bin/time';

export function runFleetMeasured(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-rss-'));
  const out = join(dir, 'maxrss');
  const useTime = existsSync(TIME);
  const argv = useTime
    ? [TIME, '-f', '%M %U %S', '-o', out, process.execPath, FLEET_BIN, ...args]
    : [process.execPath, FLEET_BIN, ...args];
  const fullEnv = fleetTestEnv(env);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: fullEnv,
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    let hwmKb = 0;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const poll = useTime
      ? undefined
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (m) hwmKb = Math.max(hwmKb, Number(m[1]));
          } catch {
            // Gone between two polls.
          }
        }, 5);
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      // GNU time's last line: peak RSS in KB, user and system seconds.
      const [kb, user, sys] = useTime
        ? readFileSync(out, 'utf8').trim().split('\n').pop()!.split(' ').map(Number)
        : [hwmKb, Number.NaN, Number.NaN];
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        peakRssMb: Math.round((kb * 1024) / 1e6),
        how: useTime ? 'time -f %M' : 'VmHWM',
        wallMs: Math.round(performance.now() - started),
        cpuMs: Math.round((user + sys) * 1000),
      });
    });
  });
}
