// An extra kube-apiserver joined to a running control plane (same etcd with its own prefix, same server and client
// CAs, its own ServiceAccount issuer), started with the AuthenticationConfiguration a test gives it. For tests of
// workload identity that need an API server configured in one particular (often broken) way: a fresh member set up from
// what `fleet wi setup` prints, a member trusting a misspelt issuer, a second hub whose discovery is private.
// It is recorded in the control plane's processes.json, so `sandbox down` and the test run's teardown stop it even if
// the test that started it dies; stop() ends it earlier.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { loadControlPlane, uniqueName } from './fixture.js';
import { apiRequest } from './http.js';
import { writeKubeconfig } from './kubeconfig.js';
import { makeLeaf, makeSigningKey } from './pki.js';
import { killGroups, spawnDetached, tail, waitReaped } from './procs.js';
import { processesFile, readProcesses, writeJsonAtomic, type ProcessRecord, type ServerState } from './state.js';

export interface ExtraApiserverOptions {
  /** Name of the server, its kubeconfig context and etcd prefix; default a unique `extra-*` name. */
  name?: string;
  /** The AuthenticationConfiguration (YAML text or an object), or a function of the server's own URL (known before it
   * starts, for audiences). Omit to start without --authentication-config (a server that trusts no other issuer). */
  authenticationConfig?: string | object | ((self: { url: string }) => string | object);
  readyTimeoutMs?: number;
  /** More kube-apiserver flags, after fleet's own (e.g. `--service-account-max-token-expiration=2h`, to see a server
   * issue a shorter token than asked). */
  extraArgs?: string[];
  /** kube-controller-manager controllers to run beside it (e.g. `serviceaccount-token-controller`, which fills a legacy
   * `kubernetes.io/service-account-token` Secret), signing with the server's own ServiceAccount key. Omit for none. */
  controllers?: string[];
}

export interface ExtraApiserver extends ServerState {
  /** Replaces the AuthenticationConfiguration file (kube-apiserver 1.30+ reloads it at its next check, about a minute). */
  writeAuthenticationConfig(config: string | object): void;
  /** Stops the server, replaces the file and starts it again on the same port and etcd prefix (seconds, not a minute). */
  restartWithAuthenticationConfig(config: string | object): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const asYaml = (c: string | object) => (typeof c === 'string' ? c : yaml.dump(c, { lineWidth: -1 }));

export async function startExtraApiserver(o: ExtraApiserverOptions = {}): Promise<ExtraApiserver> {
  const cp = loadControlPlane();
  const name = o.name ?? uniqueName('extra');
  const dir = join(cp.dir, 'extra', name);
  if (existsSync(dir)) throw new Error(`an extra apiserver named ${name} was already started from ${cp.dir}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Older state files have no serverCa.keyFile; the harness always writes the key beside the certificate.
  const serverCaKey = (cp.serverCa as { keyFile?: string }).keyFile ?? cp.serverCa.certFile.replace(/\.crt$/, '.key');
  const serverCa = { certFile: cp.serverCa.certFile, keyFile: serverCaKey };
  const [serving, sa] = await Promise.all([
    makeLeaf({
      ca: serverCa,
      dir,
      base: 'serving',
      cn: `kube-apiserver-${name}`,
      usage: 'server',
      ips: ['127.0.0.1'],
      dnsNames: ['localhost'],
    }),
    makeSigningKey(dir, 'sa'),
  ]);
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const kubeconfig = writeKubeconfig({
    path: join(dir, `${name}.kubeconfig`),
    server: url,
    caFile: serverCa.certFile,
    context: name,
    userName: `${name}-admin`,
    user: { certFile: cp.admin.certFile, keyFile: cp.admin.keyFile },
  });
  const authFile = join(dir, 'authentication-config.yaml');
  // kube-apiserver 1.34 notices a changed file at its next periodic check: measured 57-62 s (bench/wi-extra-apiserver.ts).
  const writeAuth = (c: string | object) => writeFileSync(authFile, asYaml(c));
  const config =
    typeof o.authenticationConfig === 'function' ? o.authenticationConfig({ url }) : o.authenticationConfig;
  if (config !== undefined) writeAuth(config);

  const logFile = join(dir, 'apiserver.log');
  const args = [
    `--etcd-servers=${cp.etcd.url}`,
    `--etcd-prefix=/extra-${name}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${serving.certFile}`,
    `--tls-private-key-file=${serving.keyFile}`,
    `--client-ca-file=${cp.clientCa.certFile}`,
    `--service-account-issuer=${url}`,
    `--service-account-jwks-uri=${url}/openid/v1/jwks`,
    `--service-account-key-file=${sa.publicKeyFile}`,
    `--service-account-signing-key-file=${sa.keyFile}`,
    '--authorization-mode=RBAC',
    '--anonymous-auth=true',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--endpoint-reconciler-type=none',
    // No controller manager runs for it unless `controllers` asks for one; the ServiceAccount admission plugin, which
    // waits for default ServiceAccounts the serviceaccount controller makes, stays off either way.
    '--disable-admission-plugins=ServiceAccount',
    `--cert-dir=${join(dir, 'certs')}`,
    ...(config !== undefined ? [`--authentication-config=${authFile}`] : []),
    ...(o.extraArgs ?? []),
  ];
  const bin = cp.binaries.kubeApiserver;
  const pids: number[] = [];
  let record: ProcessRecord | undefined;
  let kcm: ProcessRecord | undefined;
  let exited: string | undefined;

  const forget = (pid: number) => {
    const book = readProcesses(cp.dir);
    if (book) {
      book.processes = book.processes.filter((p) => p.pid !== pid);
      writeJsonAtomic(processesFile(cp.dir), book);
    }
  };
  const stopControllers = async () => {
    if (!kcm) return;
    const r = kcm;
    kcm = undefined;
    await killGroups([r]);
    await waitReaped([r.pid]);
    forget(r.pid);
  };
  const stopServer = async () => {
    if (!record) return;
    const r = record;
    record = undefined;
    await killGroups([r]);
    await waitReaped([r.pid]);
    forget(r.pid);
  };
  const stop = async () => {
    await stopControllers();
    await stopServer();
  };

  const launch = async () => {
    exited = undefined;
    const started = await spawnDetached(bin, args, logFile, (pid) => {
      record = { name: `${name}-apiserver`, pid, bin, log: logFile };
      const book = readProcesses(cp.dir) ?? { ownerPid: null, processes: [] };
      book.processes.push(record);
      writeJsonAtomic(processesFile(cp.dir), book);
    });
    pids.splice(0, 1, started.pid);
    void started.exited.then(({ code, signal }) => {
      if (record?.pid === started.pid) exited = signal ?? `code ${code}`;
    });
    const deadline = Date.now() + (o.readyTimeoutMs ?? 90_000);
    for (;;) {
      if (exited)
        throw new Error(
          `extra apiserver ${name} exited during start-up (${String(exited)}); last lines of ${logFile}:\n${tail(logFile)}`,
        );
      const r = await apiRequest({
        url,
        path: '/readyz',
        caFile: serverCa.certFile,
        certFile: cp.admin.certFile,
        keyFile: cp.admin.keyFile,
        timeoutMs: 3000,
      }).catch(() => undefined);
      if (r?.status === 200) return;
      if (Date.now() > deadline) {
        await stopServer();
        throw new Error(`extra apiserver ${name} not ready in time; last lines of ${logFile}:\n${tail(logFile)}`);
      }
      await sleep(250);
    }
  };
  await launch();
  let kcmLogFile = '';
  if (o.controllers && o.controllers.length > 0) {
    // The same flags as the control plane's own controller managers, with this server's key (it signs legacy tokens,
    // which this server verifies with the matching public key).
    const kcmBin = cp.binaries.kubeControllerManager;
    const kcmLog = join(dir, 'controller-manager.log');
    kcmLogFile = kcmLog;
    const started = await spawnDetached(
      kcmBin,
      [
        `--kubeconfig=${kubeconfig}`,
        `--service-account-private-key-file=${sa.keyFile}`,
        `--root-ca-file=${serverCa.certFile}`,
        '--leader-elect=false',
        `--controllers=${o.controllers.join(',')}`,
        '--secure-port=0',
      ],
      kcmLog,
      (pid) => {
        kcm = { name: `${name}-controller-manager`, pid, bin: kcmBin, log: kcmLog };
        const book = readProcesses(cp.dir) ?? { ownerPid: null, processes: [] };
        book.processes.push(kcm);
        writeJsonAtomic(processesFile(cp.dir), book);
      },
    );
    pids.push(started.pid);
  }

  return {
    name,
    role: 'member',
    url,
    port,
    issuer: url,
    kubeconfig,
    context: name,
    caFile: serverCa.certFile,
    etcdPrefix: `/extra-${name}`,
    serviceAccountPublicKeyFile: sa.publicKeyFile,
    ...(config !== undefined ? { authenticationConfigFile: authFile } : {}),
    pids,
    logs: { apiserver: logFile, controllerManager: kcmLogFile },
    tokenUsers: [],
    writeAuthenticationConfig: (c) => {
      if (config === undefined)
        throw new Error(`${name} was started without --authentication-config; it cannot load one later`);
      writeAuth(c);
    },
    restartWithAuthenticationConfig: async (c) => {
      if (config === undefined) throw new Error(`${name} was started without --authentication-config`);
      // The controller manager, if any, keeps running and reconnects.
      await stopServer();
      writeAuth(c);
      await launch();
    },
    stop,
  };
}

/** The hub's ServiceAccount signing key, for tests that need a token the hub's key signed but the hub would not issue
 * (one already expired: TokenRequest's minimum lifetime is 10 minutes). */
export function hubSigningKeyPem(): string {
  const cp = loadControlPlane();
  return readFileSync(cp.hub.serviceAccountPublicKeyFile.replace(/\.pub$/, '.key'), 'utf8');
}
