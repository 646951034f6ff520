// Starts and stops a real Kubernetes control plane on loopback: one etcd, a hub kube-apiserver and N member
// kube-apiservers (distinct etcd prefixes), a kube-controller-manager for each, its own PKI, static token users, the hub
// as a trusted ServiceAccount issuer on every member, and the CRDs fleet's providers read installed on the hub.
// See docs/control-plane.md for the layout of the directory and of state.json.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { controlPlaneDir, ensureBinaries, pinnedVersions, type Binaries } from './binaries.js';
import { apiRequest } from './http.js';
import { writeKubeconfig } from './kubeconfig.js';
import { makeCa, makeLeaf, makeSigningKey, type KeyPair } from './pki.js';
import { isAlive, isOurs, killGroups, killGroupsNow, spawnDetached, tail, waitReaped, type Started } from './procs.js';
import {
  processesFile,
  readProcesses,
  STATE_VERSION,
  stateFile,
  writeJsonAtomic,
  type ControlPlaneState,
  type ProcessesFile,
  type ProcessRecord,
  type ServerState,
  type TokenUser,
} from './state.js';

const execFileP = promisify(execFile);

/** Marks a directory as ours: nothing else is ever deleted by stop/down. */
const MARKER = '.fleet-control-plane';
export const TEMP_PREFIX = 'fleet-cp-';
export const HUB_USERNAME_PREFIX = 'hub:';
const PROBE_SA = 'fleet-harness-probe';

/** The controllers fleet's features rely on: ServiceAccount token Secrets and default ServiceAccounts, namespace
 * deletion, garbage collection, CSR signing/approval/cleanup, the kube-root-ca.crt ConfigMap, and the aggregated
 * admin/edit/view ClusterRoles (empty without the aggregation controller). Names as of Kubernetes 1.34. */
export const CONTROLLERS = [
  'serviceaccount-token-controller',
  'serviceaccount-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'certificatesigningrequest-signing-controller',
  'certificatesigningrequest-approving-controller',
  'certificatesigningrequest-cleaner-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
];

/** Static token users on every apiserver; each apiserver gets its own random tokens per run. */
export const TOKEN_USERS: { name: string; groups: string[] }[] = [
  { name: 'alice', groups: [] },
  { name: 'bob', groups: ['devs'] },
  { name: 'carol', groups: ['ops'] },
  { name: 'dave', groups: ['devs', 'ops'] },
];

export interface StartOptions {
  /** Directory for PKI, logs, etcd data, kubeconfigs and state.json; default a new fleet-cp-* temp dir. */
  dir?: string;
  members?: number;
  /** Process whose death means the control plane is abandoned (see reapStale); null = detached, lives until stopped. */
  ownerPid?: number | null;
  /** Keep killing everything when this process exits, after start-up too (default: true when ownerPid is this process).
   * During start-up it always does, so an interrupted start leaves nothing behind. Signals end a Node process without
   * 'exit' handlers unless the caller turns them into process.exit(), as supervise.ts and sandbox-cli.ts do. */
  killOnExit?: boolean;
  readyTimeoutMs?: number;
  /** Keep the directory when start-up fails, to read the logs. */
  keepDirOnFailure?: boolean;
  binaries?: Binaries;
  log?: (line: string) => void;
}

export interface ControlPlane {
  state: ControlPlaneState;
  statePath: string;
  stop(opts?: { keepDir?: boolean }): Promise<StopResult>;
}

export interface StopResult {
  dir: string;
  stopped: number;
  /** Pids that survived SIGKILL (never expected). */
  leftAlive: number[];
  removed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePorts(n: number): Promise<number[]> {
  // Hold every listener open until all are bound so the kernel cannot hand out the same port twice.
  const servers = await Promise.all(
    Array.from({ length: n }, () => {
      const s = createServer();
      return new Promise<ReturnType<typeof createServer>>((res, rej) => {
        s.once('error', rej);
        s.listen(0, '127.0.0.1', () => res(s));
      });
    }),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function pollUntil<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`,
      );
    await sleep(everyMs);
  }
}

function ensureDir(dir: string): void {
  if (existsSync(dir)) {
    const entries = readdirSync(dir);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new Error(`${dir} is not empty and was not made by this harness; choose another --dir`);
    }
    const procs = readProcesses(dir);
    const alive = procs?.processes.filter(isOurs) ?? [];
    if (alive.length > 0) {
      throw new Error(
        `a control plane already runs from ${dir} (pids ${alive.map((p) => p.pid).join(', ')}); stop it first`,
      );
    }
    // A dead control plane's leftovers: start from a clean directory.
    for (const e of entries) rmSync(join(dir, e), { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, MARKER), 'Created by fleet test/support/control-plane.ts; removed by stop.\n');
}

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const log = opts.log ?? ((l: string) => process.stderr.write(`[control-plane] ${l}\n`));
  const members = opts.members ?? 2;
  if (!Number.isInteger(members) || members < 0) throw new Error(`members must be a whole number >= 0, got ${members}`);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 90_000;
  const ownerPid = opts.ownerPid === undefined ? process.pid : opts.ownerPid;

  const dir = opts.dir ? resolve(opts.dir) : mkdtempSync(join(tmpdir(), TEMP_PREFIX));
  ensureDir(dir);
  const pki = join(dir, 'pki');
  const logs = join(dir, 'logs');
  mkdirSync(pki, { mode: 0o700 });
  mkdirSync(logs);
  mkdirSync(join(dir, 'users'), { mode: 0o700 });

  const book: ProcessesFile = { ownerPid, processes: [] };
  writeJsonAtomic(processesFile(dir), book);
  const killOnExit = opts.killOnExit ?? ownerPid === process.pid;
  const exitGuard = () => {
    killGroupsNow(book.processes);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', exitGuard);

  // Any child that dies while we start is a failure now, with its log, rather than a timeout later.
  let starting = true;
  let rejectDied!: (err: Error) => void;
  const died = new Promise<never>((_, rej) => (rejectDied = rej));
  died.catch(() => {});
  const launch = async (name: string, bin: string, args: string[]): Promise<Started> => {
    const logFile = join(logs, `${name}.log`);
    const s = await spawnDetached(bin, args, logFile, (pid) => {
      book.processes.push({ name, pid, bin, log: logFile });
      writeJsonAtomic(processesFile(dir), book);
    });
    void s.exited.then(({ code, signal }) => {
      if (starting)
        rejectDied(
          new Error(
            `${name} exited during start-up (${signal ?? `code ${code}`}); last lines of ${logFile}:\n${tail(logFile)}`,
          ),
        );
    });
    return s;
  };
  const step = <T>(p: Promise<T>) => Promise.race([p, died]);

  try {
    const bins = opts.binaries ?? (await ensureBinaries((l) => log(l)));
    const pinned = pinnedVersions();
    const names = ['hub', ...Array.from({ length: members }, (_, i) => `member-${i + 1}`)];

    // --- PKI ---------------------------------------------------------------------------------------------------------
    const [serverCa, clientCa] = await Promise.all([
      makeCa(pki, 'server-ca', 'fleet-test-server-ca'),
      makeCa(pki, 'client-ca', 'fleet-test-client-ca'),
    ]);
    const admin = await makeLeaf({
      ca: clientCa,
      dir: pki,
      base: 'admin',
      cn: 'fleet-admin',
      orgs: ['system:masters'],
      usage: 'client',
    });
    const perServer = await Promise.all(
      names.map(async (name) => ({
        serving: await makeLeaf({
          ca: serverCa,
          dir: pki,
          base: `${name}-serving`,
          cn: `kube-apiserver-${name}`,
          usage: 'server',
          ips: ['127.0.0.1'],
          dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        }),
        sa: await makeSigningKey(pki, `${name}-sa`),
      })),
    );

    // --- ports, tokens, kubeconfigs ----------------------------------------------------------------------------------
    const [etcdClientPort, etcdPeerPort, ...apiPorts] = await freePorts(2 + names.length);
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const servers: ServerState[] = names.map((name, i) => {
      const port = apiPorts[i];
      const url = `https://127.0.0.1:${port}`;
      const tokenUsers: TokenUser[] = TOKEN_USERS.map((u) => ({
        // A leading letter: a token that starts with '-' would read as an option where a test passes it to a plugin.
        name: u.name,
        groups: u.groups,
        uid: `uid-${u.name}`,
        token: `t${randomBytes(24).toString('base64url')}`,
      }));
      const kubeconfig = writeKubeconfig({
        path: join(dir, `${name}.kubeconfig`),
        server: url,
        caFile: serverCa.certFile,
        context: name,
        userName: `${name}-admin`,
        user: admin,
      });
      return {
        name,
        role: i === 0 ? 'hub' : 'member',
        url,
        port,
        issuer: url,
        kubeconfig,
        context: name,
        caFile: serverCa.certFile,
        etcdPrefix: `/${name}`,
        serviceAccountPublicKeyFile: perServer[i].sa.publicKeyFile,
        ...(i === 0 ? {} : { hubTokenAudience: url, hubUsernamePrefix: HUB_USERNAME_PREFIX }),
        pids: [],
        logs: {
          apiserver: join(logs, `${name}-apiserver.log`),
          controllerManager: join(logs, `${name}-controller-manager.log`),
        },
        tokenUsers,
      };
    });
    for (const s of servers) {
      // An empty 4th column would be read as one group named "": leave it out for users without groups.
      const csv =
        s.tokenUsers
          .map((u) => [u.token, u.name, u.uid, ...(u.groups.length ? [`"${u.groups.join(',')}"`] : [])].join(','))
          .join('\n') + '\n';
      writeFileSync(join(pki, `${s.name}-tokens.csv`), csv, { mode: 0o600 });
    }
    const hub = servers[0];

    // --- etcd ----------------------------------------------------------------------------------------------------------
    log(`starting etcd on ${etcdUrl}`);
    const etcdDataDir = join(dir, 'etcd-data');
    const etcd = await launch('etcd', bins.etcd, [
      '--name=fleet-test',
      `--data-dir=${etcdDataDir}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=fleet-test=http://127.0.0.1:${etcdPeerPort}`,
      // Test data is throwaway: skipping fsync is the single biggest start-up and latency win.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await step(
      pollUntil('etcd /health', readyTimeoutMs, async () => {
        const r = await fetch(`${etcdUrl}/health`);
        return r.ok && ((await r.json()) as { health?: string }).health === 'true' ? true : undefined;
      }),
    );

    // --- apiservers ----------------------------------------------------------------------------------------------------
    const startApiserver = async (s: ServerState, i: number) => {
      const args = [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=${s.etcdPrefix}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${s.port}`,
        `--tls-cert-file=${perServer[i].serving.certFile}`,
        `--tls-private-key-file=${perServer[i].serving.keyFile}`,
        `--client-ca-file=${clientCa.certFile}`,
        `--token-auth-file=${join(pki, `${s.name}-tokens.csv`)}`,
        `--service-account-issuer=${s.issuer}`,
        `--service-account-jwks-uri=${s.issuer}/openid/v1/jwks`,
        `--service-account-key-file=${perServer[i].sa.publicKeyFile}`,
        `--service-account-signing-key-file=${perServer[i].sa.keyFile}`,
        '--authorization-mode=RBAC',
        '--anonymous-auth=true',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        // No kubelets or Endpoints for the apiserver itself: nothing would route to them anyway.
        '--endpoint-reconciler-type=none',
        `--cert-dir=${join(dir, `${s.name}-certs`)}`,
      ];
      if (s.authenticationConfigFile) args.push(`--authentication-config=${s.authenticationConfigFile}`);
      log(`starting ${s.name} kube-apiserver on ${s.url}`);
      const p = await launch(`${s.name}-apiserver`, bins.kubeApiserver, args);
      s.pids.push(p.pid);
    };
    const waitReady = (s: ServerState) =>
      step(
        pollUntil(`${s.name} /readyz`, readyTimeoutMs, async () => {
          const r = await apiRequest({
            url: s.url,
            path: '/readyz',
            caFile: serverCa.certFile,
            ...admin,
            timeoutMs: 5000,
          });
          return r.status === 200 ? true : undefined;
        }),
      );
    const startControllerManager = async (s: ServerState) => {
      const i = servers.indexOf(s);
      const p = await launch(`${s.name}-controller-manager`, bins.kubeControllerManager, [
        `--kubeconfig=${s.kubeconfig}`,
        `--service-account-private-key-file=${perServer[i].sa.keyFile}`,
        `--root-ca-file=${serverCa.certFile}`,
        // Signing with the client CA makes certificates issued through CSRs valid client certificates here.
        `--cluster-signing-cert-file=${clientCa.certFile}`,
        `--cluster-signing-key-file=${clientCa.keyFile}`,
        '--leader-elect=false',
        `--controllers=${CONTROLLERS.join(',')}`,
        // Several controller managers share one host: none of them serves HTTPS (0 turns it off).
        '--secure-port=0',
      ]);
      s.pids.push(p.pid);
    };

    await startApiserver(hub, 0);
    await waitReady(hub);
    // Members fetch the hub's OIDC discovery document and JWKS without credentials; allow that before they start so
    // their first discovery attempt succeeds instead of waiting for the 10 s retry.
    await step(
      kubectlAdmin(
        bins.kubectl,
        hub,
        ['apply', '--server-side', '--field-manager=fleet-harness', '-f', '-'],
        yaml.dump({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'fleet-harness:service-account-issuer-discovery' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'system:service-account-issuer-discovery',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
        }),
      ),
    );
    const crds = step(
      kubectlAdmin(bins.kubectl, hub, [
        'apply',
        '--server-side',
        '--field-manager=fleet-harness',
        '-f',
        join(controlPlaneDir, 'crds'),
      ]),
    );
    crds.catch(() => {}); // awaited below; until then a failure must not become an unhandled rejection
    await startControllerManager(hub);

    const hubCaPem = readFileSync(serverCa.certFile, 'utf8');
    for (const s of servers.slice(1)) {
      s.authenticationConfigFile = join(dir, `${s.name}-authentication-config.yaml`);
      writeFileSync(
        s.authenticationConfigFile,
        yaml.dump(
          {
            apiVersion: 'apiserver.config.k8s.io/v1',
            kind: 'AuthenticationConfiguration',
            jwt: [
              {
                issuer: { url: hub.issuer, audiences: [s.url], certificateAuthority: hubCaPem },
                claimMappings: { username: { claim: 'sub', prefix: HUB_USERNAME_PREFIX } },
              },
            ],
          },
          { lineWidth: -1 },
        ),
      );
    }
    await Promise.all(servers.slice(1).map((s, j) => startApiserver(s, j + 1)));
    await Promise.all(servers.slice(1).map(waitReady));
    await Promise.all(servers.slice(1).map(startControllerManager));

    await crds;
    await step(
      kubectlAdmin(bins.kubectl, hub, [
        'wait',
        '--for=condition=Established',
        '--timeout=60s',
        '-f',
        join(controlPlaneDir, 'crds'),
      ]),
    );

    // Federation check: a hub ServiceAccount token with a member's audience authenticates on that member.
    if (servers.length > 1) await step(awaitHubTrust(hub, servers.slice(1), serverCa, admin, readyTimeoutMs));

    // The controller managers are working once each apiserver has its default ServiceAccount (and the root CA map).
    await step(
      Promise.all(
        servers.map((s) =>
          pollUntil(
            `${s.name} controller-manager (default ServiceAccount, kube-root-ca.crt)`,
            readyTimeoutMs,
            async () => {
              const sa = await apiRequest({
                url: s.url,
                path: '/api/v1/namespaces/default/serviceaccounts/default',
                caFile: serverCa.certFile,
                ...admin,
              });
              const cm = await apiRequest({
                url: s.url,
                path: '/api/v1/namespaces/default/configmaps/kube-root-ca.crt',
                caFile: serverCa.certFile,
                ...admin,
              });
              return sa.status === 200 && cm.status === 200 ? true : undefined;
            },
            500,
          ),
        ),
      ),
    );

    const version = await apiRequest({ url: hub.url, path: '/version', caFile: serverCa.certFile, ...admin });
    const serverVersion = (JSON.parse(version.body) as { gitVersion: string }).gitVersion;

    const state: ControlPlaneState = {
      stateVersion: STATE_VERSION,
      dir,
      version: pinned.kubernetes,
      serverVersion,
      etcdVersion: pinned.etcd,
      binDir: bins.binDir,
      binaries: {
        etcd: bins.etcd,
        kubeApiserver: bins.kubeApiserver,
        kubeControllerManager: bins.kubeControllerManager,
        kubectl: bins.kubectl,
      },
      etcd: { url: etcdUrl, pid: etcd.pid, dataDir: etcdDataDir, log: join(logs, 'etcd.log') },
      clientCa,
      serverCa: { certFile: serverCa.certFile },
      admin: { user: 'fleet-admin', groups: ['system:masters'], ...admin },
      servers,
      startedAt: new Date(started).toISOString(),
      startSeconds: Math.round((Date.now() - started) / 100) / 10,
    };
    const statePath = stateFile(dir);
    writeJsonAtomic(statePath, state);
    starting = false;
    if (!killOnExit) process.removeListener('exit', exitGuard);
    log(`ready in ${state.startSeconds} s: ${servers.map((s) => `${s.name} ${s.url}`).join(', ')}`);
    return {
      state,
      statePath,
      stop: async (o) => {
        const r = await stopControlPlane(dir, o);
        if (killOnExit) process.removeListener('exit', exitGuard);
        return r;
      },
    };
  } catch (err) {
    starting = false;
    const keep = opts.keepDirOnFailure ?? false;
    // The reason is often only in a log (a bad flag, a port taken): show the end of each before the dir goes away.
    const message = (err as Error).message;
    const tails = book.processes
      .filter((p) => !message.includes(p.log))
      .map((p) => `--- last lines of ${p.name} ---\n${tail(p.log, 8)}`)
      .join('\n');
    await stopControlPlane(dir, { keepDir: keep }).catch(() => {});
    process.removeListener('exit', exitGuard);
    const where = keep ? ` (logs kept in ${logs})` : '';
    throw new Error(`control plane did not start: ${message}${where}${tails ? `\n${tails}` : ''}`, { cause: err });
  }
}

async function awaitHubTrust(
  hub: ServerState,
  members: ServerState[],
  serverCa: KeyPair | { certFile: string },
  admin: KeyPair,
  timeoutMs: number,
): Promise<void> {
  const base = { url: hub.url, caFile: serverCa.certFile, ...admin };
  const ns = 'kube-system';
  const created = await apiRequest({
    ...base,
    path: `/api/v1/namespaces/${ns}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PROBE_SA } },
  });
  if (created.status !== 201 && created.status !== 409)
    throw new Error(`cannot create probe ServiceAccount on hub: ${created.status} ${created.body}`);
  try {
    await Promise.all(
      members.map(async (m) => {
        const tr = await apiRequest({
          ...base,
          path: `/api/v1/namespaces/${ns}/serviceaccounts/${PROBE_SA}/token`,
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: { audiences: [m.url], expirationSeconds: 600 },
          },
        });
        if (tr.status !== 201) throw new Error(`hub TokenRequest failed: ${tr.status} ${tr.body}`);
        const token = (JSON.parse(tr.body) as { status: { token: string } }).status.token;
        const want = `${HUB_USERNAME_PREFIX}system:serviceaccount:${ns}:${PROBE_SA}`;
        await pollUntil(
          `${m.name} to accept hub ServiceAccount tokens (it retries the hub's OIDC discovery every 10 s)`,
          timeoutMs,
          async () => {
            const r = await apiRequest({
              url: m.url,
              caFile: serverCa.certFile,
              token,
              path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
              body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
            });
            if (r.status === 401) return undefined;
            if (r.status !== 201) throw new Error(`SelfSubjectReview on ${m.name}: ${r.status} ${r.body}`);
            const got = (JSON.parse(r.body) as { status: { userInfo: { username: string } } }).status.userInfo.username;
            if (got !== want) throw new Error(`${m.name} maps the hub token to ${got}, expected ${want}`);
            return true;
          },
          500,
        );
      }),
    );
  } finally {
    await apiRequest({ ...base, method: 'DELETE', path: `/api/v1/namespaces/${ns}/serviceaccounts/${PROBE_SA}` }).catch(
      () => {},
    );
  }
}

async function kubectlAdmin(kubectl: string, s: ServerState, args: string[], stdin?: string): Promise<string> {
  const child = execFileP(kubectl, ['--kubeconfig', s.kubeconfig, ...args], { maxBuffer: 16 << 20 });
  if (stdin !== undefined) child.child.stdin?.end(stdin);
  try {
    return (await child).stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`kubectl ${args.join(' ')} on ${s.name} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

/** Kills every process started from dir (control-plane components first, etcd last) and removes dir unless keepDir.
 * Refuses to delete a directory the harness did not create. */
export async function stopControlPlane(dir: string, opts: { keepDir?: boolean } = {}): Promise<StopResult> {
  dir = resolve(dir);
  const result: StopResult = { dir, stopped: 0, leftAlive: [], removed: false };
  if (!existsSync(join(dir, MARKER))) {
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw new Error(`${dir} was not made by the control-plane harness; not touching it`);
    return result;
  }
  const procs = readProcesses(dir)?.processes ?? [];
  const ours = procs.filter(isOurs);
  result.stopped = ours.length;
  const components = ours.filter((p) => p.name !== 'etcd');
  result.leftAlive.push(...(await killGroups(components)));
  result.leftAlive.push(...(await killGroups(ours.filter((p) => p.name === 'etcd'))));
  await waitReaped(ours.map((p) => p.pid));
  if (!opts.keepDir) {
    rmSync(dir, { recursive: true, force: true });
    result.removed = true;
  }
  return result;
}

/** Control planes whose owner died without stopping them (a SIGKILLed test run): stop them and remove their dirs. */
export async function reapStale(parent = tmpdir()): Promise<string[]> {
  const reaped: string[] = [];
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(TEMP_PREFIX)) continue;
    const dir = join(parent, entry);
    if (!existsSync(join(dir, MARKER))) continue;
    const procs = readProcesses(dir);
    if (!procs) {
      // Another run may be between creating the dir and writing processes.json: only an old one is abandoned.
      if (Date.now() - statSync(dir).mtimeMs < 10 * 60_000) continue;
    } else if (procs.ownerPid === null || isAlive(procs.ownerPid)) {
      continue;
    }
    await stopControlPlane(dir);
    reaped.push(dir);
  }
  return reaped;
}

export interface StatusReport {
  dir: string;
  exists: boolean;
  processes: (ProcessRecord & { alive: boolean })[];
  servers: { name: string; url: string; kubeconfig: string; ready: boolean | string }[];
}

export async function controlPlaneStatus(dir: string): Promise<StatusReport> {
  dir = resolve(dir);
  const report: StatusReport = { dir, exists: existsSync(join(dir, MARKER)), processes: [], servers: [] };
  if (!report.exists) return report;
  report.processes = (readProcesses(dir)?.processes ?? []).map((p) => ({ ...p, alive: isOurs(p) }));
  if (existsSync(stateFile(dir))) {
    const state = JSON.parse(readFileSync(stateFile(dir), 'utf8')) as ControlPlaneState;
    report.servers = await Promise.all(
      state.servers.map(async (s) => {
        let ready: boolean | string;
        try {
          const r = await apiRequest({
            url: s.url,
            path: '/readyz',
            caFile: state.serverCa.certFile,
            ...state.admin,
            timeoutMs: 3000,
          });
          ready = r.status === 200 ? true : `HTTP ${r.status}`;
        } catch (err) {
          ready = (err as Error).message;
        }
        return { name: s.name, url: s.url, kubeconfig: s.kubeconfig, ready };
      }),
    );
  }
  return report;
}
