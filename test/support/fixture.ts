// What e2e test files import: the running control plane (started by scripts/test.js or `npm run sandbox -- up`, found
// through FLEET_TEST_CONTROL_PLANE) and small helpers to make identities and objects on it. kubectl here is the one built
// with the control plane, never whatever is on PATH.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeLeaf } from './pki.js';
import { writeKubeconfig, type KubeconfigOptions } from './kubeconfig.js';
import { readState, type ControlPlaneState, type ServerState, type TokenUser } from './state.js';

export type { ControlPlaneState, ServerState, TokenUser } from './state.js';
export { writeKubeconfig, type KubeconfigOptions, type KubeconfigUser } from './kubeconfig.js';
export { apiRequest, type ApiRequest, type ApiResponse } from './http.js';

export interface ControlPlaneHandle extends ControlPlaneState {
  hub: ServerState;
  members: ServerState[];
  statePath: string;
}

/** A server by name ("hub", "member-1", ...) or the object itself. */
export type ServerRef = string | ServerState;

let cached: ControlPlaneHandle | undefined;

export function loadControlPlane(): ControlPlaneHandle {
  if (cached) return cached;
  const statePath = process.env.FLEET_TEST_CONTROL_PLANE;
  if (!statePath) {
    throw new Error(
      'FLEET_TEST_CONTROL_PLANE is not set. e2e tests need a running control plane: run them with `npm run test:e2e` ' +
        '(which starts one), or start one with `npm run sandbox -- up` and set FLEET_TEST_CONTROL_PLANE=.sandbox/state.json',
    );
  }
  const state = readState(statePath);
  cached = { ...state, statePath, hub: state.servers[0], members: state.servers.slice(1) };
  return cached;
}

export function server(ref: ServerRef): ServerState {
  if (typeof ref !== 'string') return ref;
  const s = loadControlPlane().servers.find((x) => x.name === ref);
  if (!s)
    throw new Error(
      `no server ${ref} in the control plane (have ${loadControlPlane()
        .servers.map((x) => x.name)
        .join(', ')})`,
    );
  return s;
}

/** Where helpers write per-test files; inside the control plane dir so teardown removes them. */
export function scratchDir(): string {
  const dir = join(loadControlPlane().dir, 'users');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** A DNS-1123 label that no other test (or earlier run against the same sandbox) uses. */
export function uniqueName(prefix: string): string {
  const suffix = randomBytes(4).readUInt32BE().toString(36).padStart(6, '0').slice(0, 6);
  return `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 56)}-${suffix}`;
}

export interface KubectlOptions {
  stdin?: string;
  /** Run as someone else than the admin. */
  kubeconfig?: string;
  timeoutMs?: number;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl against a server as its admin (or opts.kubeconfig); resolves whatever the exit code. */
export function kubectlResult(ref: ServerRef, args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const s = server(ref);
  const bin = loadControlPlane().binaries.kubectl;
  return new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      ['--kubeconfig', opts.kubeconfig ?? s.kubeconfig, ...args],
      { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 32 << 20, env: { ...process.env, KUBECONFIG: '' } },
      (err, stdout, stderr) => {
        if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
          // A string code (ENOENT, EACCES, ERR_CHILD_PROCESS_STDIO_MAXBUFFER): the run failed, not the program.
          const failed: Error = err;
          return reject(failed);
        }
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(opts.stdin ?? '');
  });
}

/** kubectl that throws (with kubectl's stderr) on a non-zero exit; returns stdout. */
export async function kubectl(ref: ServerRef, args: string[], opts: KubectlOptions = {}): Promise<string> {
  const r = await kubectlResult(ref, args, opts);
  if (r.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} on ${server(ref).name} exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Server-side apply of one or more YAML documents as the admin. */
export function applyYaml(ref: ServerRef, yaml: string): Promise<string> {
  return kubectl(ref, ['apply', '--server-side', '--force-conflicts', '--field-manager=fleet-e2e', '-f', '-'], {
    stdin: yaml,
  });
}

export interface CertUser {
  certFile: string;
  keyFile: string;
  kubeconfigPath: string;
}

/** A client-certificate user signed by the client CA every apiserver trusts (CN = user, O = groups). The kubeconfig
 * points at `ref`, but the certificate works on every server. */
export async function createCertUser(
  ref: ServerRef,
  o: { user: string; groups?: string[]; dir?: string; days?: number },
): Promise<CertUser> {
  const s = server(ref);
  const cp = loadControlPlane();
  const dir = o.dir ?? scratchDir();
  const base = uniqueName(`cert-${o.user}`);
  const pair = await makeLeaf({
    ca: cp.clientCa,
    dir,
    base,
    cn: o.user,
    orgs: o.groups ?? [],
    usage: 'client',
    days: o.days,
  });
  const kubeconfigPath = writeKubeconfig({
    path: join(dir, `${base}@${s.name}.kubeconfig`),
    server: s.url,
    caFile: s.caFile,
    context: `${o.user}@${s.name}`,
    user: pair,
  });
  return { ...pair, kubeconfigPath };
}

/** One of the static token users (alice, bob, carol, dave) on a server, with a kubeconfig that uses the token. */
export function tokenUser(ref: ServerRef, name: string): { token: string; kubeconfigPath: string; user: TokenUser } {
  const s = server(ref);
  const user = s.tokenUsers.find((u) => u.name === name);
  if (!user)
    throw new Error(`no static token user ${name} on ${s.name} (have ${s.tokenUsers.map((u) => u.name).join(', ')})`);
  const kubeconfigPath = writeKubeconfig({
    path: join(scratchDir(), `token-${name}@${s.name}.kubeconfig`),
    server: s.url,
    caFile: s.caFile,
    context: `${name}@${s.name}`,
    user: { token: user.token },
  });
  return { token: user.token, kubeconfigPath, user };
}

/** A TokenRequest token for ns/sa, creating both if missing. With audience = a member's URL, a hub token is accepted by
 * that member as user `hub:system:serviceaccount:<ns>:<sa>`. */
export async function createServiceAccountToken(
  ref: ServerRef,
  ns: string,
  sa: string,
  o: { audience?: string; duration?: string } = {},
): Promise<string> {
  await applyYaml(
    ref,
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${sa}\n  namespace: ${ns}\n`,
  );
  const args = ['create', 'token', sa, '-n', ns];
  if (o.audience) args.push(`--audience=${o.audience}`);
  if (o.duration) args.push(`--duration=${o.duration}`);
  return (await kubectl(ref, args)).trim();
}

/** A kubeconfig for an ad-hoc identity on a server (file written with mode 0600 into the scratch dir by default). */
export function kubeconfigFor(
  ref: ServerRef,
  user: KubeconfigOptions['user'],
  o: { name?: string; path?: string; namespace?: string } = {},
): string {
  const s = server(ref);
  const name = o.name ?? uniqueName('user');
  return writeKubeconfig({
    path: o.path ?? join(scratchDir(), `${name}@${s.name}.kubeconfig`),
    server: s.url,
    caFile: s.caFile,
    context: `${name}@${s.name}`,
    user,
    namespace: o.namespace,
  });
}

/**
 * Deletes the fleet-labelled objects of these kinds whose names contain RUN (a test's uniqueName): what a test's own
 * runs made, and nothing of the tests running beside it on the same control plane (a bare `-l managed-by=fleet` delete
 * removed the RBAC a concurrent test's credential was being verified with).
 */
export async function deleteFleetObjectsOf(ref: ServerRef, kinds: string, run: string): Promise<void> {
  const r = await kubectlResult(ref, ['get', kinds, '-l', 'app.kubernetes.io/managed-by=fleet', '-o', 'name']);
  const names = r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l.slice(l.indexOf('/') + 1).includes(run));
  if (names.length > 0) await kubectlResult(ref, ['delete', ...names, '--wait=false', '--ignore-not-found']);
}
