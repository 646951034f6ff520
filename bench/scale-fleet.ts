// Builds an N-cluster fleet on a running sandbox for bench/: N ServiceAccounts in namespace fleet-bench spread round-robin
// over the hub and members, a token for each (TokenRequest), and one kubeconfig with N contexts, each its own cluster
// entry and its own user. Every EXEC_EVERY-th user is an exec plugin (a shell printing an ExecCredential) instead of an
// inline token. The kubeconfig holds tokens: it is written 0600 inside the sandbox directory, never printed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';

export const NAMESPACE = 'fleet-bench';
export const EXEC_EVERY = 10;

export interface ServerState {
  name: string;
  url: string;
  caFile: string;
  kubeconfig: string;
  context: string;
}
export interface SandboxState {
  dir: string;
  serverVersion: string;
  etcdVersion: string;
  binaries: { kubectl: string };
  admin: { certFile: string; keyFile: string };
  servers: ServerState[];
}

export function readSandbox(path: string): SandboxState {
  return JSON.parse(readFileSync(path, 'utf8')) as SandboxState;
}

/** An admin client of one sandbox API server (its client certificate), keep-alive, for setting up what a bench measures. */
export class Admin {
  private readonly agent: https.Agent;
  constructor(
    private readonly server: ServerState,
    state: SandboxState,
    maxSockets = 8,
  ) {
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets,
      ca: readFileSync(server.caFile),
      cert: readFileSync(state.admin.certFile),
      key: readFileSync(state.admin.keyFile),
    });
  }

  /** One retry when a kept-alive connection was closed by the server as the request went out (ECONNRESET). */
  async request(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; body: string }> {
    try {
      return await this.once(method, path, body, token, contentType);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
      return this.once(method, path, body, token, contentType);
    }
  }

  private once(
    method: string,
    path: string,
    body: unknown,
    token: string | undefined,
    contentType: string,
  ): Promise<{ status: number; body: string }> {
    const url = new URL(this.server.url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          hostname: url.hostname,
          port: url.port,
          path,
          method,
          agent: token ? undefined : this.agent,
          ca: token ? readFileSync(this.server.caFile) : undefined,
          headers: {
            accept: 'application/json',
            ...(payload ? { 'content-type': contentType } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  async ensure(method: string, path: string, body: unknown): Promise<void> {
    const r = await this.request(method, path, body);
    if (r.status !== 201 && r.status !== 200 && r.status !== 409)
      throw new Error(`${this.server.name}: ${method} ${path}: HTTP ${r.status}`);
  }

  close(): void {
    this.agent.destroy();
  }
}

export async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

export interface BenchFleet {
  kubeconfig: string;
  contexts: string[];
  contextsFile: string;
  execUsers: number;
  servers: number;
}

/** N contexts over the sandbox's servers (ServiceAccounts bench-0..N-1 are created once and reused). */
export async function buildFleet(state: SandboxState, n: number): Promise<BenchFleet> {
  const admins = state.servers.map((s) => new Admin(s, state));
  try {
    await Promise.all(
      admins.map((a) =>
        a.ensure('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
      ),
    );
    const tokens = await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => {
        const admin = admins[i % admins.length];
        const name = `bench-${i}`;
        await admin.ensure('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name },
        });
        const r = await admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}/token`, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 7200 },
        });
        if (r.status !== 201) throw new Error(`token for ${name}: HTTP ${r.status}`);
        return (JSON.parse(r.body) as { status: { token: string } }).status.token;
      },
    );
    const clusters = [];
    const users = [];
    const contexts = [];
    let execUsers = 0;
    for (let i = 0; i < n; i++) {
      const server = state.servers[i % state.servers.length];
      const ca = readFileSync(server.caFile).toString('base64');
      clusters.push({ name: `bench-${i}`, cluster: { server: server.url, 'certificate-authority-data': ca } });
      if (i % EXEC_EVERY === EXEC_EVERY - 1) {
        execUsers++;
        // A plugin as small as one can be: the token comes in through the environment the exec config sets.
        const script =
          'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\' "$BENCH_TOKEN"';
        users.push({
          name: `bench-${i}`,
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: '/bin/sh',
              args: ['-c', script],
              env: [{ name: 'BENCH_TOKEN', value: tokens[i] }],
              interactiveMode: 'Never',
            },
          },
        });
      } else {
        users.push({ name: `bench-${i}`, user: { token: tokens[i] } });
      }
      contexts.push({ name: `bench-${i}`, context: { cluster: `bench-${i}`, user: `bench-${i}` } });
    }
    const dir = join(state.dir, 'bench');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const kubeconfig = join(dir, `fleet-${n}.kubeconfig`);
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'bench-0',
      clusters,
      users,
      contexts,
      preferences: {},
    };
    writeFileSync(kubeconfig, JSON.stringify(doc), { mode: 0o600 });
    const contextsFile = join(dir, `fleet-${n}.contexts`);
    writeFileSync(contextsFile, contexts.map((c) => c.name).join('\n') + '\n');
    return {
      kubeconfig,
      contexts: contexts.map((c) => c.name),
      contextsFile,
      execUsers,
      servers: state.servers.length,
    };
  } finally {
    for (const a of admins) a.close();
  }
}

/**
 * One request's time on an idle, already open connection: the median of `count` SelfSubjectReviews sent one after
 * another over a keep-alive connection with a bench ServiceAccount's token (the first, which opens it, is not counted).
 */
export async function idleRequestMs(state: SandboxState, token: string, count = 30): Promise<number> {
  const server = state.servers[0];
  const url = new URL(server.url);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: readFileSync(server.caFile) });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      const req = https.request(
        {
          hostname: url.hostname,
          port: url.port,
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(performance.now() - started));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
  await one();
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await one());
  agent.destroy();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/** The token of context bench-0 in a kubeconfig buildFleet wrote (for idleRequestMs). */
export function firstToken(kubeconfig: string): string {
  const doc = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { users: Array<{ user: { token?: string } }> };
  return doc.users[0].user.token!;
}
