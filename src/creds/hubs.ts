import {type HubSpec, loadFleetConfig} from '../config/fleet-config.js'

/**
 * The hubs whose consumer Secrets fleet writes and lists: `--hub-kubeconfig` / `--hub-context` when given; otherwise the
 * fleet configuration's hub and every provider's own hub; otherwise the loading rules' current context.
 */
export interface HubFlags {
  kubeconfig?: string
  context?: string
  fleetConfig?: string
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** With nothing configured, use the loading rules' current context (generate) or no hub at all (list). */
  fallbackToCurrent?: boolean
}

export async function configuredHubs(f: HubFlags): Promise<HubSpec[]> {
  if (f.kubeconfig || f.context) return [{kubeconfig: f.kubeconfig?.split(':').filter(Boolean), context: f.context}]
  const config = await loadFleetConfig({path: f.fleetConfig, env: f.env, cwd: f.cwd})
  const hubs: HubSpec[] = []
  const add = (h: HubSpec | undefined) => {
    if (!h) return
    const key = JSON.stringify(h)
    if (!hubs.some((x) => JSON.stringify(x) === key)) hubs.push(h)
  }
  add(config?.hub)
  for (const p of config?.providers ?? []) if ('hub' in p && p.type !== 'namespace') add(p.hub ?? config?.hub)
  if (hubs.length === 0 && f.fallbackToCurrent) hubs.push({})
  return hubs
}
