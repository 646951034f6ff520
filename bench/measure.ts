// Timing helpers for bench/: every command runs under /usr/bin/time so one run yields wall time, CPU time (user + sys)
// and peak RSS; runs of the commands compared are interleaved, alternating their order, so all see the same machine load.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
  status: number;
}

export interface Cmd {
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  okCodes?: number[];
}

const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const TIME_FILE = join(mkdtempSync(join(tmpdir(), 'fleet-bench-time-')), 'time.txt');

export function once(c: Cmd): Sample {
  const started = performance.now();
  const [cmd, args] = TIME ? [TIME, ['-f', '%e %U %S %M', '-o', TIME_FILE, c.cmd, ...c.args]] : [c.cmd, c.args];
  const r = spawnSync(cmd, args, {
    env: { ...process.env, ...c.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 64 << 20,
  });
  const wallMs = performance.now() - started;
  const status = r.status ?? -1;
  if (!(c.okCodes ?? [0]).includes(status)) {
    throw new Error(`${c.cmd} ${c.args.join(' ')} exited with ${status}: ${String(r.stderr).slice(0, 2000)}`);
  }
  if (!TIME) return { wallMs, cpuMs: Number.NaN, rssMb: Number.NaN, status };
  const [, user, sys, rssKb] = readFileSync(TIME_FILE, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { wallMs, cpuMs: (user + sys) * 1000, rssMb: rssKb / 1024, status };
}

/**
 * CPU time (user + sys, ms) of one run, to the millisecond: /usr/bin/time prints it in hundredths of a second, too
 * coarse beside `node -e ""` (~30 ms). bash's `times` prints its children's CPU time to the millisecond, and its own
 * start is not in it. A separate run from once()'s, whose wall time has no bash in it.
 */
export function cpuOnce(c: Cmd): number {
  const r = spawnSync('bash', ['-c', '"$@" >/dev/null 2>&1; s=$?; times; exit $s', 'bash', c.cmd, ...c.args], {
    env: { ...process.env, ...c.env },
    encoding: 'utf8',
  });
  if (!(c.okCodes ?? [0]).includes(r.status ?? -1))
    throw new Error(`${c.cmd} ${c.args.join(' ')} exited with ${r.status}`);
  // Second line: the children's user and system time, e.g. "0m0.031s 0m0.004s".
  const children = r.stdout
    .trim()
    .split('\n')[1]
    ?.match(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/);
  if (!children) throw new Error(`bash times printed ${JSON.stringify(r.stdout)}`);
  const [, um, us, sm, ss] = children;
  return (Number(um) * 60 + Number(us) + Number(sm) * 60 + Number(ss)) * 1000;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface Timing {
  runs: number;
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

/**
 * Median of `runs` for each command (runs[k] may differ per command), interleaved in alternating order. preciseCpu:
 * each sample also runs the command under cpuOnce(), whose CPU time (to the millisecond) replaces /usr/bin/time's.
 */
export function timeAll(cmds: Cmd[], runs: number | number[], options: { preciseCpu?: boolean } = {}): Timing[] {
  const want = cmds.map((_, k) => (Array.isArray(runs) ? runs[k] : runs));
  const samples = cmds.map(() => [] as Sample[]);
  for (let i = 0; i < Math.max(...want); i++) {
    const order = cmds.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      if (i >= want[k]) continue;
      const sample = once(cmds[k]);
      if (options.preciseCpu) sample.cpuMs = cpuOnce(cmds[k]);
      samples[k].push(sample);
    }
  }
  return samples.map((s) => ({
    runs: s.length,
    wallMs: median(s.map((x) => x.wallMs)),
    cpuMs: median(s.map((x) => x.cpuMs)),
    rssMb: Math.max(...s.map((x) => x.rssMb)),
  }));
}

/** GIT-REF built into a scratch directory (its sources, this checkout's node_modules, its own `npm run build` steps). */
export function buildRef(root: string, ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-ref-'));
  execFileSync('bash', ['-c', `git -C "${root}" archive "${ref}" | tar -x -C "${dir}"`], { stdio: 'inherit' });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  // The ref's own build script (a manifest step, if it has one, comes with it).
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'bin/run.js');
}

export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}
