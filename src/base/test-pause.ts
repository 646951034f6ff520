import { writeFile } from 'node:fs/promises';

/**
 * Test hook, off unless given (documented as test-only in docs/creds.md and docs/kubeconfig.md): a run told
 * `FLEET_TEST_PAUSE_AT=<step>` stops at that step, writes the step's name to the file `FLEET_TEST_PAUSE_FILE`, and waits
 * (at most 2 minutes) until it is interrupted, so that a test sends a real signal at a known moment instead of by luck.
 * Commands read the variables once (`testPauseHook`) and hand the result down; services never read the environment.
 */
export interface TestPause {
  step: string;
  file: string;
}

export function testPauseHook(env: Record<string, string | undefined>): TestPause | undefined {
  return env.FLEET_TEST_PAUSE_AT && env.FLEET_TEST_PAUSE_FILE
    ? { step: env.FLEET_TEST_PAUSE_AT, file: env.FLEET_TEST_PAUSE_FILE }
    : undefined;
}

/** Pauses when `pause` names `step` (see above) until `signal` aborts; returns at once otherwise. */
export async function pauseAt(
  pause: TestPause | undefined,
  step: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (pause?.step !== step) return;
  await writeFile(pause.file, step);
  if (signal?.aborted) return;
  await new Promise<void>((done) => {
    const timer = setTimeout(done, 120_000);
    signal?.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
}
