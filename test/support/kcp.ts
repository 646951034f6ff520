// A real kcp (a `kcp start` shard with embedded etcd, and by default a `kcp-front-proxy` in front of it) joined to the
// running control plane, for tests of fleet's kcp provider. Binaries come from test/kcp/build.sh (kcp v0.32.3).
//
// Why our own PKI and static users instead of the admin battery's kubeconfig: the front proxy decides who you are (it
// authenticates, drops privileged groups, then forwards the identity to the shard in X-Remote-* headers), so the same
// identity must be known to both, with a CA the test knows. The users:
//   admin        token, group system:kcp:admin (kcp's bootstrap policy binds it to cluster-admin in every workspace);
//                the same rights through the proxy, which does not drop that group
//   masters      token, group system:masters only: all-powerful on the shard, an ordinary user through the proxy
//   masters-cert client certificate O=system:masters: likewise
//   viewer       token, no groups; a test grants it RBAC where it needs
// Processes are recorded in the control plane's processes.json, so the test run's teardown (or `sandbox down`) stops
// them even if the test that started them dies; stop() ends them earlier.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { builtFile, repoRoot, runBuildScript } from './binaries.js';
import { loadControlPlane, uniqueName } from './fixture.js';
import { apiRequest } from './http.js';
import { writeKubeconfig, type KubeconfigUser } from './kubeconfig.js';
import { makeCa, makeLeaf, type KeyPair } from './pki.js';
import { killGroups, spawnDetached, tail, waitReaped } from './procs.js';
import { processesFile, readProcesses, writeJsonAtomic, type ProcessRecord } from './state.js';

export type KcpUserName = 'admin' | 'masters' | 'masters-cert' | 'viewer';
export type KcpVia = 'shard' | 'proxy';

export interface KcpUser {
  name: KcpUserName;
  /** Groups the user is given on authentication (before the front proxy drops any). */
  groups: string[];
  /** Token users only. */
  token?: string;
  /** masters-cert only: client certificate and key signed by the kcp client CA. */
  certFile?: string;
  keyFile?: string;
  /** Kubeconfigs pointing at `<url>/clusters/root` with the kcp server CA; `proxy` is absent without a front proxy. */
  kubeconfigs: { shard: string; proxy?: string };
}

export interface KcpEndpoint {
  url: string; // https://127.0.0.1:<port>
  port: number;
  pid: number;
  log: string;
  /** Seconds from spawning the shard until this process answered /readyz 200. */
  readySeconds: number;
}

export interface KcpBinaries {
  binDir: string;
  kcp: string;
  frontProxy: string;
}

export interface KcpOptions {
  /** Directory `<control plane dir>/kcp/<name>`, process names `<name>-kcp`, `<name>-kcp-front-proxy`; default unique. */
  name?: string;
  /** Start kcp-front-proxy in front of the shard (default true). */
  frontProxy?: boolean;
  /** Per process; a shard took ~25 s to become ready on the 2-core VM. Default 120 s. */
  readyTimeoutMs?: number;
}

export interface WorkspaceTypeRef {
  name: string;
  /** Workspace path holding the WorkspaceType, e.g. `root`. */
  path: string;
}

export interface Workspace {
  /** `root:org:team-a` */
  path: string;
  name: string;
  phase: string;
  /** spec.URL: with a front proxy, `<proxy url>/clusters/<path>`. */
  url: string;
  /** The logical cluster name (spec.cluster). */
  cluster: string;
}

export interface KcpKubectlOptions {
  /** Workspace path to talk to (`--server <url>/clusters/<workspace>`); default `root`. */
  workspace?: string;
  /** Default `proxy` when there is a front proxy, else `shard`. */
  via?: KcpVia;
  /** Default `admin`. */
  as?: KcpUserName;
  stdin?: string;
  timeoutMs?: number;
}

export interface KcpKubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kcp {
  name: string;
  dir: string;
  binaries: KcpBinaries;
  /** adminKubeconfig: what kcp's admin battery writes (`<rootDirectory>/admin.kubeconfig`: contexts base, root,
   * shard-base, system:admin; users kcp-admin and shard-admin, with tokens kcp generates). */
  shard: KcpEndpoint & { rootDirectory: string; adminKubeconfig: string };
  proxy?: KcpEndpoint;
  /** CA of both serving certificates: what every kubeconfig here trusts. */
  caFile: string;
  /** Signs client certificates both processes accept (`masters-cert`'s CA). */
  clientCa: KeyPair;
  users: Record<KcpUserName, KcpUser>;
  /** Every token of the users above and of the admin battery's kubeconfig, for tests to grep output for. */
  tokens: string[];
  /** Seconds from spawning the shard until the shard (and proxy, if any) answered /readyz 200. */
  startSeconds: number;
  /** Base URL of the shard or the proxy (no path). */
  url(via?: KcpVia): string;
  /** Writes (0600) and returns a kubeconfig for a user at `<url>/clusters/<workspace>`. */
  kubeconfig(o?: { as?: KcpUserName; via?: KcpVia; workspace?: string; path?: string; context?: string }): string;
  kubectlResult(args: string[], o?: KcpKubectlOptions): Promise<KcpKubectlResult>;
  /** Throws with kubectl's stderr on a non-zero exit; returns stdout. */
  kubectl(args: string[], o?: KcpKubectlOptions): Promise<string>;
  /** Creates the workspace (parents first, with their default types) as admin and waits until it is Ready. Idempotent. */
  createWorkspace(path: string, o?: { type?: WorkspaceTypeRef; timeoutMs?: number }): Promise<Workspace>;
  /** A workspace that stays `Initializing`: its type (made in the parent, extending root:universal) carries an
   * initializer nothing ever removes. Returns once the phase is Initializing. Parents are created Ready first. */
  createNotReadyWorkspace(path: string): Promise<Workspace>;
  /** The workspace as its parent sees it (phase may be anything). */
  getWorkspace(path: string): Promise<Workspace>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let located: Promise<KcpBinaries> | undefined;

/** Runs test/kcp/build.sh (a no-op when its cache is warm, honours FLEET_KCP_BIN_DIR) once per process. */
export function ensureKcpBinaries(
  log: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Promise<KcpBinaries> {
  located ??= runBuildScript(join(repoRoot, 'test/kcp/build.sh'), 'kcp build', log).then((binDir) => ({
    binDir,
    kcp: builtFile(binDir, 'kcp'),
    frontProxy: builtFile(binDir, 'kcp-front-proxy'),
  }));
  located.catch(() => (located = undefined));
  return located;
}

/** n distinct free loopback ports: all are held open together before any is released. */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = createServer();
      servers.push(s);
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** The failing lines of a verbose /readyz answer ("[-]poststarthook/... failed: reason withheld"). */
const failedChecks = (body: string) =>
  body
    .split('\n')
    .filter((l) => l.startsWith('[-]'))
    .join(' ')
    .slice(0, 500) || body.slice(0, 200);

// Tokens start with a letter: a token beginning with `-` was once taken for a flag by a credential plugin.
const newToken = () => `t${randomBytes(24).toString('hex')}`;

const csvField = (v: string) => (/[",\s]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** Splits `root:org:team` into parent `root:org` and name `team`. */
function splitPath(path: string): { parent: string; name: string } {
  if (!/^root(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(path)) {
    throw new Error(`workspace path ${JSON.stringify(path)} is not root:<name>[:<name>...] with DNS-1123 labels`);
  }
  const i = path.lastIndexOf(':');
  return { parent: path.slice(0, i), name: path.slice(i + 1) };
}

export async function startKcp(o: KcpOptions = {}): Promise<Kcp> {
  const cp = loadControlPlane();
  const bins = await ensureKcpBinaries();
  const name = o.name ?? uniqueName('kcp');
  const withProxy = o.frontProxy ?? true;
  const readyTimeoutMs = o.readyTimeoutMs ?? 120_000;
  const dir = join(cp.dir, 'kcp', name);
  if (existsSync(dir)) throw new Error(`a kcp named ${name} was already started from ${cp.dir}`);
  const pki = join(dir, 'pki');
  const shardRoot = join(dir, 'shard');
  const proxyRoot = join(dir, 'front-proxy');
  for (const d of [pki, shardRoot, proxyRoot]) mkdirSync(d, { recursive: true, mode: 0o700 });

  const [shardPort, etcdClientPort, etcdPeerPort, proxyPort] = await freePorts(4);
  const shardUrl = `https://127.0.0.1:${shardPort}`;
  const proxyUrl = `https://127.0.0.1:${proxyPort}`;

  const [serverCa, clientCa, requestHeaderCa] = await Promise.all([
    makeCa(pki, 'server-ca', `kcp-server-ca-${name}`),
    makeCa(pki, 'client-ca', `kcp-client-ca-${name}`),
    makeCa(pki, 'requestheader-ca', `kcp-requestheader-ca-${name}`),
  ]);
  const serving = { usage: 'server' as const, ips: ['127.0.0.1'], dnsNames: ['localhost'] };
  const [shardServing, proxyServing, proxyClient, shardAdmin, mastersCert] = await Promise.all([
    makeLeaf({ ca: serverCa, dir: pki, base: 'shard-serving', cn: 'kcp-shard', ...serving }),
    makeLeaf({ ca: serverCa, dir: pki, base: 'front-proxy-serving', cn: 'kcp-front-proxy', ...serving }),
    // The shard only believes X-Remote-* headers from a client certificate of the requestheader CA with this CN.
    makeLeaf({ ca: requestHeaderCa, dir: pki, base: 'front-proxy-client', cn: 'kcp-front-proxy', usage: 'client' }),
    // The proxy's own credentials to the shard (watching Shards, LogicalClusters): a system:masters certificate.
    makeLeaf({
      ca: clientCa,
      dir: pki,
      base: 'shard-admin',
      cn: 'kcp-shard-admin',
      orgs: ['system:masters'],
      usage: 'client',
    }),
    makeLeaf({
      ca: clientCa,
      dir: pki,
      base: 'masters-cert',
      cn: 'masters-cert',
      orgs: ['system:masters'],
      usage: 'client',
    }),
  ]);

  const tokenUsers: { name: KcpUserName; token: string; groups: string[] }[] = [
    { name: 'admin', token: newToken(), groups: ['system:kcp:admin'] },
    { name: 'masters', token: newToken(), groups: ['system:masters'] },
    { name: 'viewer', token: newToken(), groups: [] },
  ];
  const tokenFile = join(pki, 'tokens.csv');
  writeFileSync(
    tokenFile,
    tokenUsers
      .map(
        (u) =>
          [u.token, u.name, `uid-${u.name}`, ...(u.groups.length ? [u.groups.join(',')] : [])].map(csvField).join(',') +
          '\n',
      )
      .join(''),
    { mode: 0o600 },
  );

  const baseOf = (via: KcpVia) => {
    if (via === 'proxy' && !withProxy) throw new Error(`kcp ${name} was started without a front proxy`);
    return via === 'proxy' ? proxyUrl : shardUrl;
  };
  const credentialOf = (u: KcpUserName): KubeconfigUser => {
    if (u === 'masters-cert') return mastersCert;
    return { token: tokenUsers.find((t) => t.name === u)!.token };
  };
  const kubeconfigsDir = join(dir, 'kubeconfigs');
  mkdirSync(kubeconfigsDir, { mode: 0o700 });
  const kubeconfig: Kcp['kubeconfig'] = (k = {}) => {
    const as = k.as ?? 'admin';
    const via = k.via ?? (withProxy ? 'proxy' : 'shard');
    const workspace = k.workspace ?? 'root';
    const context = k.context ?? `${as}@${name}-${via}:${workspace}`;
    return writeKubeconfig({
      path:
        k.path ??
        join(
          kubeconfigsDir,
          `${as}@${via}${workspace === 'root' ? '' : `@${workspace.replace(/:/g, '_')}`}.kubeconfig`,
        ),
      server: `${baseOf(via)}/clusters/${workspace}`,
      caFile: serverCa.certFile,
      context,
      user: credentialOf(as),
    });
  };

  // The proxy's view of the root shard and of every shard (the server of the second is replaced per shard).
  const rootKubeconfig = writeKubeconfig({
    path: join(proxyRoot, 'root.kubeconfig'),
    server: shardUrl,
    caFile: serverCa.certFile,
    context: 'shard-base',
    user: shardAdmin,
  });
  const shardsKubeconfig = writeKubeconfig({
    path: join(proxyRoot, 'shards.kubeconfig'),
    server: shardUrl,
    caFile: serverCa.certFile,
    context: 'base',
    user: shardAdmin,
  });
  const mappingFile = join(proxyRoot, 'mapping.yaml');
  writeFileSync(
    mappingFile,
    yaml.dump([
      {
        path: '/clusters/',
        // The proxy routes each workspace to the baseURL of its Shard object; this backend is the fallback.
        backend: shardUrl,
        backend_server_ca: serverCa.certFile,
        proxy_client_cert: proxyClient.certFile,
        proxy_client_key: proxyClient.keyFile,
      },
    ]),
  );

  const shardLog = join(dir, 'kcp.log');
  const proxyLog = join(dir, 'kcp-front-proxy.log');
  const shardArgs = [
    'start',
    `--root-directory=${shardRoot}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${shardPort}`,
    `--embedded-etcd-client-port=${etcdClientPort}`,
    `--embedded-etcd-peer-port=${etcdPeerPort}`,
    '--batteries-included=admin,workspace-types',
    `--tls-cert-file=${shardServing.certFile}`,
    `--tls-private-key-file=${shardServing.keyFile}`,
    `--client-ca-file=${clientCa.certFile}`,
    `--token-auth-file=${tokenFile}`,
    `--requestheader-client-ca-file=${requestHeaderCa.certFile}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-allowed-names=kcp-front-proxy',
    // --shard-base-url (the Shard object's baseURL, where the proxy sends a workspace's requests) defaults to
    // https://<bind address>:<secure port>, which is right here. The external URL is what Workspace spec.URL uses.
    ...(withProxy ? [`--shard-external-url=${proxyUrl}`] : []),
  ];
  const proxyArgs = [
    `--root-directory=${proxyRoot}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${proxyPort}`,
    `--mapping-file=${mappingFile}`,
    `--root-kubeconfig=${rootKubeconfig}`,
    `--shards-kubeconfig=${shardsKubeconfig}`,
    `--client-ca-file=${clientCa.certFile}`,
    `--token-auth-file=${tokenFile}`,
    `--tls-cert-file=${proxyServing.certFile}`,
    `--tls-private-key-file=${proxyServing.keyFile}`,
  ];

  const records: ProcessRecord[] = [];
  const exited = new Map<number, string>();
  const book = (rec: ProcessRecord) => {
    records.push(rec);
    const b = readProcesses(cp.dir) ?? { ownerPid: null, processes: [] };
    b.processes.push(rec);
    writeJsonAtomic(processesFile(cp.dir), b);
  };
  const stop = async () => {
    if (records.length === 0) return;
    const mine = records.splice(0).reverse(); // proxy first, then the shard
    await killGroups(mine);
    await waitReaped(mine.map((r) => r.pid));
    const b = readProcesses(cp.dir);
    if (b) {
      const pids = new Set(mine.map((r) => r.pid));
      b.processes = b.processes.filter((p) => !pids.has(p.pid));
      writeJsonAtomic(processesFile(cp.dir), b);
    }
  };
  const launch = async (label: string, bin: string, args: string[], log: string) => {
    const started = await spawnDetached(bin, args, log, (pid) => book({ name: `${name}-${label}`, pid, bin, log }));
    void started.exited.then(({ code, signal }) => exited.set(started.pid, signal ?? `code ${code}`));
    return started.pid;
  };
  const waitReady = async (label: string, pid: number, url: string, log: string, deadline: number) => {
    for (;;) {
      const why = exited.get(pid);
      if (why)
        throw new Error(`${label} of kcp ${name} exited during start-up (${why}); last lines of ${log}:\n${tail(log)}`);
      const r = await apiRequest({
        url,
        path: '/readyz',
        caFile: serverCa.certFile,
        certFile: mastersCert.certFile,
        keyFile: mastersCert.keyFile,
        timeoutMs: 3000,
      }).catch(() => undefined);
      if (r?.status === 200) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${label} of kcp ${name} not ready in ${readyTimeoutMs / 1000} s (last /readyz: ${r ? `${r.status} ${failedChecks(r.body)}` : 'no answer'}); last lines of ${log}:\n${tail(log)}`,
        );
      }
      await sleep(500);
    }
  };

  const t0 = Date.now();
  let shardPid: number;
  let proxyPid = 0;
  let shardReady: number;
  let proxyReady = 0;
  try {
    shardPid = await launch('kcp', bins.kcp, shardArgs, shardLog);
    await waitReady('kcp shard', shardPid, shardUrl, shardLog, Date.now() + readyTimeoutMs);
    shardReady = (Date.now() - t0) / 1000;
    if (withProxy) {
      proxyPid = await launch('kcp-front-proxy', bins.frontProxy, proxyArgs, proxyLog);
      await waitReady('kcp-front-proxy', proxyPid, proxyUrl, proxyLog, Date.now() + readyTimeoutMs);
      proxyReady = (Date.now() - t0) / 1000;
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const startSeconds = (Date.now() - t0) / 1000;
  const adminKubeconfig = join(shardRoot, 'admin.kubeconfig');
  const batteryTokens = existsSync(adminKubeconfig)
    ? (
        (yaml.load(readFileSync(adminKubeconfig, 'utf8')) as { users?: { user?: { token?: string } }[] }).users ?? []
      ).flatMap((u) => (u.user?.token ? [u.user.token] : []))
    : [];

  const users = {} as Record<KcpUserName, KcpUser>;
  for (const u of [...tokenUsers, { name: 'masters-cert' as const, groups: ['system:masters'] }]) {
    users[u.name] = {
      name: u.name,
      groups: u.groups,
      ...('token' in u ? { token: u.token } : { certFile: mastersCert.certFile, keyFile: mastersCert.keyFile }),
      kubeconfigs: {
        shard: kubeconfig({ as: u.name, via: 'shard' }),
        ...(withProxy ? { proxy: kubeconfig({ as: u.name, via: 'proxy' }) } : {}),
      },
    };
  }

  const kubectlResult: Kcp['kubectlResult'] = (args, k = {}) => {
    const as = k.as ?? 'admin';
    const via = k.via ?? (withProxy ? 'proxy' : 'shard');
    const server = `${baseOf(via)}/clusters/${k.workspace ?? 'root'}`;
    const config = users[as].kubeconfigs[via]!;
    return new Promise((resolve, reject) => {
      const child = execFile(
        cp.binaries.kubectl,
        ['--kubeconfig', config, '--server', server, ...args],
        { timeout: k.timeoutMs ?? 60_000, maxBuffer: 32 << 20, env: { ...process.env, KUBECONFIG: '' } },
        (err, stdout, stderr) => {
          if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
            // A string code (ENOENT, EACCES, ERR_CHILD_PROCESS_STDIO_MAXBUFFER): the run failed, not the program.
            const failed: Error = err;
            return reject(failed);
          }
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        },
      );
      child.stdin?.end(k.stdin ?? '');
    });
  };
  const kubectl: Kcp['kubectl'] = async (args, k = {}) => {
    const r = await kubectlResult(args, k);
    if (r.code !== 0)
      throw new Error(
        `kubectl ${args.join(' ')} in ${k.workspace ?? 'root'} of kcp ${name} exited ${r.code}: ${r.stderr.trim()}`,
      );
    return r.stdout;
  };

  // Workspaces are read and written through the shard as admin: the same answer with or without a proxy.
  const getWorkspace: Kcp['getWorkspace'] = async (path) => {
    const { parent, name: ws } = splitPath(path);
    const obj = JSON.parse(
      await kubectl(['get', 'workspaces.tenancy.kcp.io', ws, '-o', 'json'], { workspace: parent, via: 'shard' }),
    ) as {
      spec?: { URL?: string; cluster?: string };
      status?: { phase?: string };
    };
    return {
      path,
      name: ws,
      phase: obj.status?.phase ?? '',
      url: obj.spec?.URL ?? '',
      cluster: obj.spec?.cluster ?? '',
    };
  };
  const applyWorkspace = async (path: string, type?: WorkspaceTypeRef) => {
    const { parent, name: ws } = splitPath(path);
    const doc = {
      apiVersion: 'tenancy.kcp.io/v1alpha1',
      kind: 'Workspace',
      metadata: { name: ws },
      spec: type ? { type } : {},
    };
    await kubectl(['apply', '--server-side', '--field-manager=fleet-e2e', '-f', '-'], {
      workspace: parent,
      via: 'shard',
      stdin: JSON.stringify(doc),
    });
  };
  const waitPhase = async (path: string, phases: string[], timeoutMs: number): Promise<Workspace> => {
    const deadline = Date.now() + timeoutMs;
    let last: Workspace | undefined;
    for (;;) {
      last = await getWorkspace(path).catch(() => last);
      if (last && phases.includes(last.phase) && last.url) return last;
      if (Date.now() > deadline) {
        throw new Error(
          `workspace ${path} of kcp ${name} not ${phases.join('/')} in ${timeoutMs / 1000} s (phase ${last?.phase || 'unknown'}); last lines of ${shardLog}:\n${tail(shardLog, 10)}`,
        );
      }
      await sleep(250);
    }
  };
  const ensureParents = async (path: string) => {
    const parts = path.split(':');
    for (let i = 2; i < parts.length; i++) {
      const p = parts.slice(0, i).join(':');
      const existing = await getWorkspace(p).catch(() => undefined);
      if (existing?.phase === 'Ready') continue;
      if (!existing) await applyWorkspace(p);
      await waitPhase(p, ['Ready'], 60_000);
    }
  };
  const createWorkspace: Kcp['createWorkspace'] = async (path, w = {}) => {
    splitPath(path);
    await ensureParents(path);
    await applyWorkspace(path, w.type);
    return waitPhase(path, ['Ready'], w.timeoutMs ?? 60_000);
  };
  const createNotReadyWorkspace: Kcp['createNotReadyWorkspace'] = async (path) => {
    const { parent } = splitPath(path);
    await ensureParents(path);
    const typeName = 'fleet-never-ready';
    // A type is allowed under root:<org> only if it extends root:universal (organization's limitAllowedChildren).
    const wt = {
      apiVersion: 'tenancy.kcp.io/v1alpha1',
      kind: 'WorkspaceType',
      metadata: { name: typeName },
      spec: { initializer: true, extend: { with: [{ name: 'universal', path: 'root' }] } },
    };
    await kubectl(['apply', '--server-side', '--field-manager=fleet-e2e', '-f', '-'], {
      workspace: parent,
      via: 'shard',
      stdin: JSON.stringify(wt),
    });
    // The WorkspaceType's admission check may not see a just-created type at once.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await applyWorkspace(path, { name: typeName, path: parent });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
    return waitPhase(path, ['Initializing'], 60_000);
  };

  return {
    name,
    dir,
    binaries: bins,
    shard: {
      url: shardUrl,
      port: shardPort,
      pid: shardPid,
      log: shardLog,
      readySeconds: shardReady,
      rootDirectory: shardRoot,
      adminKubeconfig,
    },
    ...(withProxy
      ? { proxy: { url: proxyUrl, port: proxyPort, pid: proxyPid, log: proxyLog, readySeconds: proxyReady } }
      : {}),
    caFile: serverCa.certFile,
    clientCa,
    users,
    tokens: [...tokenUsers.map((u) => u.token), ...batteryTokens],
    startSeconds,
    url: (via = withProxy ? 'proxy' : 'shard') => baseOf(via),
    kubeconfig,
    kubectlResult,
    kubectl,
    createWorkspace,
    createNotReadyWorkspace,
    getWorkspace,
    stop,
  };
}
