/** The exec credential API: the version fleet writes, and the versions client-go (and fleet as a plugin) answers. */
export const EXEC_API_VERSION = 'client.authentication.k8s.io/v1';
export const EXEC_API_VERSIONS: readonly string[] = [EXEC_API_VERSION, 'client.authentication.k8s.io/v1beta1'];
/** The cluster extension whose `extension` client-go hands an exec plugin as `spec.cluster.config` (with provideClusterInfo). */
export const EXEC_CLUSTER_CONFIG_EXTENSION = 'client.authentication.k8s.io/exec';

/**
 * Kubeconfig entries as they appear in the v1 YAML (field names kept verbatim). Only the fields fleet reads are typed;
 * every entry is the parsed object itself, so fields fleet does not know survive a load/save round trip.
 */
export interface ExecEnvVar {
  name: string;
  value: string;
}

export interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: ExecEnvVar[] | null;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  [key: string]: unknown;
}

export interface NamedExtension {
  name: string;
  extension: unknown;
}

export interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  extensions?: NamedExtension[];
  [key: string]: unknown;
}

export interface UserEntry {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  'auth-provider'?: { name?: string; config?: Record<string, string> };
  exec?: ExecConfig;
  as?: string;
  extensions?: NamedExtension[];
  [key: string]: unknown;
}

export interface ContextEntry {
  cluster?: string;
  user?: string;
  namespace?: string;
  extensions?: NamedExtension[];
  [key: string]: unknown;
}

/** The whole document. Unknown top-level keys are kept. */
export interface KubeconfigDoc {
  apiVersion?: string;
  kind?: string;
  preferences?: Record<string, unknown>;
  clusters?: Array<{ name: string; cluster: ClusterEntry }> | null;
  users?: Array<{ name: string; user: UserEntry }> | null;
  contexts?: Array<{ name: string; context: ContextEntry }> | null;
  'current-context'?: string;
  extensions?: NamedExtension[];
  [key: string]: unknown;
}

/**
 * Where a kubeconfig fleet uses came from, and so how far it is trusted (docs/security.md).
 *
 * A kubeconfig the user gave fleet (--kubeconfig, KUBECONFIG, ~/.kube/config, a file provider, kind's output, a
 * credential fleet itself just minted against the user's own cluster entry) is the user's: it may run the exec plugin it
 * names and read the files it names, as with kubectl, subject only to the user's kuberc. A kubeconfig read from a
 * cluster (a hub Secret of any format, a ClusterProfile, an Argo CD cluster Secret) is data written by whoever may write
 * that object: it never chooses a program to run nor a local file to read, unless the operator allowed that command (or
 * file) in the fleet configuration, or the command in the kuberc's Allowlist. `origin` is set on every context built from
 * data and absent on the user's.
 */
export interface ContextOrigin {
  /** The object the kubeconfig was read from, as messages name it: `Secret fleet-system/prod key kubeconfig`. */
  object: string;
  /** The provider that read it (its allowlists apply); absent for commands that read a hub themselves (creds, wi). */
  provider?: string;
  /** The exec command was chosen by the user, not by the data: a ClusterProfile access-provider file, fleet's wi token. */
  commandFromUser?: boolean;
  /** Environment variables the data added to that command (a ClusterProfile's additional-envs extension). */
  dataEnv?: string[];
}
