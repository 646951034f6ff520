import {randomBytes} from 'node:crypto'

import {namespacedName} from '../base/names.js'

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
} as const

export type Phase = 'claimed' | 'replaced'

/** The steps in order; the failpoint names them (`after-<step>`). */
export const STEPS = ['claim', 'anchor', 'mint', 'verify', 'replace', 'revoke', 'confirm-revoked', 'finish'] as const
export type Step = (typeof STEPS)[number]

export interface RotationState {
  phase: Phase
  /** Absent for a client certificate, which hangs on nothing. */
  newAnchor?: {namespace: string; name: string}
  oldAnchor?: {namespace: string; name: string}
  run: string
  started: string
}

export function readState(annotations: Record<string, string> | undefined): RotationState | undefined {
  const a = annotations ?? {}
  const phase = a[ROTATION.phase]
  const newAnchor = namespacedName(a[ROTATION.newAnchor])
  if (phase !== 'claimed' && phase !== 'replaced') return undefined
  return {phase, newAnchor, oldAnchor: namespacedName(a[ROTATION.oldAnchor]), run: a[ROTATION.run] ?? '', started: a[ROTATION.started] ?? ''}
}

/** The annotations to merge for a state; `undefined` clears them all (null values in a merge, absent in a PUT). */
export function stateAnnotations(s: RotationState): Record<string, string> {
  return {
    [ROTATION.phase]: s.phase,
    ...(s.newAnchor ? {[ROTATION.newAnchor]: `${s.newAnchor.namespace}/${s.newAnchor.name}`} : {}),
    ...(s.oldAnchor ? {[ROTATION.oldAnchor]: `${s.oldAnchor.namespace}/${s.oldAnchor.name}`} : {}),
    [ROTATION.run]: s.run,
    [ROTATION.started]: s.started,
  }
}

export function withoutState(annotations: Record<string, string>): Record<string, string> {
  const out = {...annotations}
  for (const k of Object.values(ROTATION)) delete out[k]
  return out
}

export const newRunId = () => `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`

/** A short random suffix: each rotation's anchor has a name of its own, so old and new coexist until the switch. */
export const anchorSuffix = () => randomBytes(3).toString('hex')

/**
 * Failpoint for crash tests: `FLEET_ROTATE_FAILPOINT=after-<step>` kills this process (SIGKILL, no cleanup, exactly a
 * crash) right after that step. Off unless the variable is set; documented in docs/rotation.md.
 */
export function failpoint(step: Step, env: NodeJS.ProcessEnv = process.env): void {
  const want = env.FLEET_ROTATE_FAILPOINT
  if (!want) return
  if (want === `after-${step}`) process.kill(process.pid, 'SIGKILL')
}

/**
 * Test hook, off unless set: `FLEET_ROTATE_PAUSE=after-<step>:<ms>` waits that long after the step, so a test can change
 * the Secret under a running rotation (what a concurrent writer does) at a known moment.
 */
export async function pausepoint(step: Step, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<void> {
  const [want, ms] = (env.FLEET_ROTATE_PAUSE ?? '').split(':')
  if (want !== `after-${step}` || !(Number(ms) > 0) || signal?.aborted) return
  // An interrupt ends the pause early (a test sends SIGINT at a known step, then the run unwinds).
  await new Promise<void>((r) => {
    const timer = setTimeout(r, Number(ms))
    signal?.addEventListener('abort', () => (clearTimeout(timer), r()), {once: true})
  })
}
