// Measures the kcp harness (test/support/kcp.ts) on a running control plane: time until the shard and the front proxy
// answer /readyz, their memory (VmRSS, and the peak VmHWM) right after start and after a small workspace tree, and how
// long stop() takes. Runs twice by default (--runs N).
//   FLEET_TEST_CONTROL_PLANE=.sandbox/state.json node --import tsx bench/kcp-start.ts
import { readFileSync } from 'node:fs';
import { startKcp } from '../test/support/kcp.js';

const i = process.argv.indexOf('--runs');
const RUNS = i === -1 ? 2 : Number(process.argv[i + 1]);
const mib = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return `${Math.round(kb('VmRSS') / 1024)} MiB (peak ${Math.round(kb('VmHWM') / 1024)})`;
};
for (let run = 0; run < RUNS; run++) {
  const k = await startKcp();
  const proxy = k.proxy!;
  console.log(
    `run ${run}: shard ready ${k.shard.readySeconds.toFixed(1)} s, proxy ready ${proxy.readySeconds.toFixed(1)} s; RSS shard ${mib(k.shard.pid)}, proxy ${mib(proxy.pid)}`,
  );
  let t = performance.now();
  for (const ws of ['root:org:team-a', 'root:org:team-b', 'root:org:team-c']) await k.createWorkspace(ws);
  const treeS = (performance.now() - t) / 1000;
  console.log(
    `run ${run}: tree of 4 workspaces ${treeS.toFixed(1)} s; RSS shard ${mib(k.shard.pid)}, proxy ${mib(proxy.pid)}`,
  );
  t = performance.now();
  await k.stop();
  console.log(`run ${run}: stop ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
