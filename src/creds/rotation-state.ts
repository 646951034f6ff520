import { randomBytes } from 'node:crypto';

import { namespacedName } from '../base/names.js';
import { factKey } from './labels.js';

/**
 * The rotation's progress, recorded on the hub Secret itself so that a run killed after any step can be finished by the
 * next one (and so that `kubectl get secret -o yaml` shows where a rotation stopped). Only names and times: never a
 * secret.
 *
 *   (none) --claim--> claimed --anchor, mint, verify, replace--> replaced --revoke, confirm, finish--> (none)
 *
 * `claimed`: the new anchor's name is chosen and recorded before it exists on the cluster, so a re-run creates that
 * same anchor (never a second one) and no anchor exists that the Secret does not name. `replaced`: the Secret holds the
 * new credential; only the old anchor's deletion is left.
 */
export const ROTATION = {
  phase: 'fleet.dev/rotation-phase',
  newAnchor: 'fleet.dev/rotation-new-anchor',
  oldAnchor: 'fleet.dev/rotation-old-anchor',
  run: 'fleet.dev/rotation-run',
  started: 'fleet.dev/rotation-started',
} as const;

export type Phase = 'claimed' | 'replaced';

/** The steps in order; the failpoint names them (`after-<step>`). */
export const STEPS = ['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke', 'confirm-revoked', 'finish'] as const;
export type Step = (typeof STEPS)[number];

export interface RotationState {
  phase: Phase;
  /** Absent for a client certificate, which hangs on nothing. */
  newAnchor?: { namespace: string; name: string };
  oldAnchor?: { namespace: string; name: string };
  run: string;
  started: string;
}

export function readState(annotations: Record<string, string> | undefined): RotationState | undefined {
  const a = annotations ?? {};
  const phase = a[ROTATION.phase];
  const newAnchor = namespacedName(a[ROTATION.newAnchor]);
  if (phase !== 'claimed' && phase !== 'replaced') return undefined;
  return {
    phase,
    newAnchor,
    oldAnchor: namespacedName(a[ROTATION.oldAnchor]),
    run: a[ROTATION.run] ?? '',
    started: a[ROTATION.started] ?? '',
  };
}

/** The annotations to merge for a state; `undefined` clears them all (null values in a merge, absent in a PUT). */
/** A file keeps the rotation state under the annotation names without their prefix (`rotation-phase`, ...). */
export const fileState = (facts: Record<string, string>) =>
  readState(
    Object.fromEntries(
      Object.values(ROTATION)
        .map((k): [string, string | undefined] => [k, facts[factKey(k)]])
        .filter((e): e is [string, string] => e[1] !== undefined),
    ),
  );

export function stateAnnotations(s: RotationState): Record<string, string> {
  return {
    [ROTATION.phase]: s.phase,
    ...(s.newAnchor ? { [ROTATION.newAnchor]: `${s.newAnchor.namespace}/${s.newAnchor.name}` } : {}),
    ...(s.oldAnchor ? { [ROTATION.oldAnchor]: `${s.oldAnchor.namespace}/${s.oldAnchor.name}` } : {}),
    [ROTATION.run]: s.run,
    [ROTATION.started]: s.started,
  };
}

export function withoutState(annotations: Record<string, string>): Record<string, string> {
  const out = { ...annotations };
  for (const k of Object.values(ROTATION)) delete out[k];
  return out;
}

export const newRunId = () => `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;

/** A short random suffix: each rotation's anchor has a name of its own, so old and new coexist until the switch. */
export const anchorSuffix = () => randomBytes(3).toString('hex');

/**
 * The rotation's test hooks, off unless given. Production code never reads them from the environment: the command reads
 * FLEET_ROTATE_FAILPOINT and FLEET_ROTATE_PAUSE once (rotationHooks) and passes them in the rotation's environment
 * (RotateEnv.hooks). Documented in docs/rotation.md.
 */
export interface RotationHooks {
  /** `FLEET_ROTATE_FAILPOINT=after-<step>`: right after this step the process is killed (SIGKILL, no cleanup: a crash). */
  failAfter?: string;
  /** `FLEET_ROTATE_PAUSE=after-<step>:<ms>`: the run waits this long after the step, so a test can change the store under it. */
  pauseAfter?: { step: string; ms: number };
  /** How the failpoint ends the run; default SIGKILL of this process (a unit test observes it instead). */
  crash?: () => void;
}

/** The hooks the environment asks for (the command passes process.env, once). */
export function rotationHooks(env: Record<string, string | undefined>): RotationHooks {
  const fail = env.FLEET_ROTATE_FAILPOINT;
  const [want, ms] = (env.FLEET_ROTATE_PAUSE ?? '').split(':');
  return {
    ...(fail?.startsWith('after-') ? { failAfter: fail.slice('after-'.length) } : {}),
    ...(want.startsWith('after-') && Number(ms) > 0
      ? { pauseAfter: { step: want.slice('after-'.length), ms: Number(ms) } }
      : {}),
  };
}

/** The failpoint after a step: a crash exactly there when the hooks ask for one. */
export function failpoint(step: Step, hooks: RotationHooks | undefined): void {
  if (hooks?.failAfter !== step) return;
  if (hooks.crash) hooks.crash();
  else process.kill(process.pid, 'SIGKILL');
}

/** The pause after a step; an interrupt ends it early (a test sends SIGINT at a known step, then the run unwinds). */
export async function pausepoint(step: Step, hooks: RotationHooks | undefined, signal?: AbortSignal): Promise<void> {
  const pause = hooks?.pauseAfter;
  if (pause?.step !== step || signal?.aborted) return;
  await new Promise<void>((r) => {
    const timer = setTimeout(r, pause.ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), r()), { once: true });
  });
}
