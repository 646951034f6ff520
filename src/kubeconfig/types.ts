/**
 * Kubeconfig entries as they appear in the v1 YAML (field names kept verbatim). Only the fields fleet reads are typed;
 * every entry is the parsed object itself, so fields fleet does not know survive a load/save round trip.
 */
export interface ExecEnvVar {
  name: string
  value: string
}

export interface ExecConfig {
  apiVersion?: string
  command?: string
  args?: string[]
  env?: ExecEnvVar[] | null
  installHint?: string
  provideClusterInfo?: boolean
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always'
  [key: string]: unknown
}

export interface NamedExtension {
  name: string
  extension: unknown
}

export interface ClusterEntry {
  server?: string
  'certificate-authority'?: string
  'certificate-authority-data'?: string
  'insecure-skip-tls-verify'?: boolean
  'tls-server-name'?: string
  'proxy-url'?: string
  'disable-compression'?: boolean
  extensions?: NamedExtension[]
  [key: string]: unknown
}

export interface UserEntry {
  'client-certificate'?: string
  'client-certificate-data'?: string
  'client-key'?: string
  'client-key-data'?: string
  token?: string
  tokenFile?: string
  username?: string
  password?: string
  'auth-provider'?: {name?: string; config?: Record<string, string>}
  exec?: ExecConfig
  as?: string
  extensions?: NamedExtension[]
  [key: string]: unknown
}

export interface ContextEntry {
  cluster?: string
  user?: string
  namespace?: string
  extensions?: NamedExtension[]
  [key: string]: unknown
}


/** The whole document. Unknown top-level keys are kept. */
export interface KubeconfigDoc {
  apiVersion?: string
  kind?: string
  preferences?: Record<string, unknown>
  clusters?: Array<{name: string; cluster: ClusterEntry}> | null
  users?: Array<{name: string; user: UserEntry}> | null
  contexts?: Array<{name: string; context: ContextEntry}> | null
  'current-context'?: string
  extensions?: NamedExtension[]
  [key: string]: unknown
}
