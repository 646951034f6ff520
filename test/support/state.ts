// The shape of <dir>/state.json: the contract between the harness that starts a control plane and the tests (or people)
// that use it. Every path is absolute. The file holds test tokens, so it is written with mode 0600.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const STATE_VERSION = 1;

export interface TokenUser {
  name: string;
  token: string;
  uid: string;
  groups: string[];
}

export interface ServerState {
  name: string; // "hub", "member-1", ...
  role: 'hub' | 'member';
  url: string; // https://127.0.0.1:<port>
  port: number;
  /** --service-account-issuer of this apiserver (equal to url). */
  issuer: string;
  /** Admin kubeconfig (client certificate in system:masters), context named like the server. */
  kubeconfig: string;
  context: string;
  /** CA that signed this apiserver's serving certificate (the shared server CA). */
  caFile: string;
  etcdPrefix: string;
  /** Public key that verifies this apiserver's ServiceAccount tokens. */
  serviceAccountPublicKeyFile: string;
  /** Members only: the AuthenticationConfiguration that trusts the hub's issuer. */
  authenticationConfigFile?: string;
  /** Members only: the audience hub tokens must carry to be accepted here (the member's URL). */
  hubTokenAudience?: string;
  /** Usernames of hub ServiceAccounts on this member are this prefix + system:serviceaccount:<ns>:<name>. */
  hubUsernamePrefix?: string;
  /** [kube-apiserver pid, kube-controller-manager pid]; each is its own process group leader. */
  pids: number[];
  logs: { apiserver: string; controllerManager: string };
  tokenUsers: TokenUser[];
}

export interface ControlPlaneState {
  stateVersion: number;
  dir: string;
  /** Kubernetes version pinned in test/control-plane/go.mod (what the built binaries report). */
  version: string;
  /** gitVersion the hub actually reported on /version (differs when TEST_ASSET_* point elsewhere). */
  serverVersion: string;
  etcdVersion: string;
  binDir: string;
  binaries: { etcd: string; kubeApiserver: string; kubeControllerManager: string; kubectl: string };
  etcd: { url: string; pid: number; dataDir: string; log: string };
  clientCa: { certFile: string; keyFile: string };
  serverCa: { certFile: string };
  admin: { user: string; groups: string[]; certFile: string; keyFile: string };
  servers: ServerState[];
  startedAt: string;
  startSeconds: number;
}

/** Bookkeeping written before the first process starts and after each one, so teardown works even for a start that died
 * half-way. ownerPid is the process whose death ends the control plane (null for a detached sandbox). */
export interface ProcessRecord {
  name: string;
  pid: number;
  bin: string;
  log: string;
}
export interface ProcessesFile {
  ownerPid: number | null;
  processes: ProcessRecord[];
}

export const stateFile = (dir: string): string => join(dir, 'state.json');
export const processesFile = (dir: string): string => join(dir, 'processes.json');

export function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = join(dirname(path), `.${Date.now()}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

export function readState(path: string): ControlPlaneState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read control plane state ${path}: ${(err as Error).message}`, { cause: err });
  }
  const state = JSON.parse(text) as ControlPlaneState;
  if (state.stateVersion !== STATE_VERSION) {
    throw new Error(`${path} has state version ${state.stateVersion}, this harness reads ${STATE_VERSION}; restart it`);
  }
  return state;
}

export function readProcesses(dir: string): ProcessesFile | undefined {
  try {
    return JSON.parse(readFileSync(processesFile(dir), 'utf8')) as ProcessesFile;
  } catch {
    return undefined;
  }
}
