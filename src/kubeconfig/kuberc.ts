// TEMPORARY stub of the kuberc module (helper branch h-kuberc replaces it at merge): only the API the trust policy uses.
export type PluginPolicyType = 'AllowAll' | 'DenyAll' | 'Allowlist'
export interface Kuberc {
  path: string
  policy: PluginPolicyType
  allowlist: string[]
}
export async function loadKuberc(_o: {flag?: string; env: NodeJS.ProcessEnv}): Promise<Kuberc | undefined> {
  return undefined
}
export function pluginAllowed(kuberc: Kuberc | undefined, command: string, _env: NodeJS.ProcessEnv): {allowed: true} | {allowed: false; reason: string} {
  if (!kuberc || kuberc.policy === 'AllowAll') return {allowed: true}
  if (kuberc.policy === 'Allowlist' && kuberc.allowlist.includes(command)) return {allowed: true}
  return {allowed: false, reason: `plugin "${command}" not allowed by credentialPluginPolicy ${kuberc.policy} in ${kuberc.path}`}
}
export async function mergeKubercAllowlist(_path: string, commands: string[], _o: {dryRun?: boolean}): Promise<{added: string[]}> {
  return {added: commands}
}
