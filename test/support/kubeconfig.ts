// Kubeconfig files for the harness's identities. Credentials are embedded (…-data fields) so a file keeps working when
// copied or when the harness directory moves; files are written atomically with mode 0600, as fleet itself must.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

export type KubeconfigUser =
  | { token: string }
  | { certFile: string; keyFile: string }
  | { exec: { command: string; args?: string[]; env?: { name: string; value: string }[]; apiVersion?: string } };

export interface KubeconfigOptions {
  path: string;
  server: string;
  /** CA for the server's certificate; omit with insecure to skip verification. */
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
  user: KubeconfigUser;
  /** Context name; cluster and user entries are named after it. */
  context: string;
  userName?: string;
  namespace?: string;
}

const b64 = (file: string) => readFileSync(file).toString('base64');

export function kubeconfigObject(o: KubeconfigOptions): Record<string, unknown> {
  const cluster: Record<string, unknown> = { server: o.server };
  if (o.caFile) cluster['certificate-authority-data'] = b64(o.caFile);
  if (o.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  let user: Record<string, unknown>;
  if ('token' in o.user) user = { token: o.user.token };
  else if ('certFile' in o.user) {
    user = { 'client-certificate-data': b64(o.user.certFile), 'client-key-data': b64(o.user.keyFile) };
  } else {
    user = {
      exec: {
        apiVersion: o.user.exec.apiVersion ?? 'client.authentication.k8s.io/v1',
        command: o.user.exec.command,
        args: o.user.exec.args ?? [],
        env: o.user.exec.env ?? null,
        interactiveMode: 'Never',
      },
    };
  }
  const userName = o.userName ?? o.context;
  const context: Record<string, unknown> = { cluster: o.context, user: userName };
  if (o.namespace) context.namespace = o.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: o.context, cluster }],
    users: [{ name: userName, user }],
    contexts: [{ name: o.context, context }],
    'current-context': o.context,
    preferences: {},
  };
}

/** One kubeconfig (YAML) holding every cluster, user and context of the servers' own files; CURRENT is its current-context. */
export function mergedKubeconfig(servers: Array<{ kubeconfig: string }>, current: string): string {
  const docs = servers.map((s) => yaml.load(readFileSync(s.kubeconfig, 'utf8')) as any);
  return yaml.dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      preferences: {},
      clusters: docs.flatMap((d) => d.clusters),
      users: docs.flatMap((d) => d.users),
      contexts: docs.flatMap((d) => d.contexts),
      'current-context': current,
    },
    { lineWidth: -1 },
  );
}

export function writeKubeconfig(o: KubeconfigOptions): string {
  const tmp = join(dirname(o.path), `.kubeconfig.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, yaml.dump(kubeconfigObject(o), { lineWidth: -1 }), { mode: 0o600 });
  renameSync(tmp, o.path);
  return o.path;
}

/**
 * The kubeconfig a consumer Secret fleet wrote holds, whatever its format: the `kubeconfig` (multicluster-runtime,
 * cluster-inventory), `value` (Cluster API) or `Config` key, or Argo CD's `server` and `config` turned into one.
 */
export function kubeconfigInSecret(s: { data: Record<string, string> }): string {
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  if (s.data.config) {
    const c = JSON.parse(decode(s.data.config));
    return yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: decode(s.data.server), 'certificate-authority-data': c.tlsClientConfig.caData },
        },
      ],
      users: [{ name: 'u', user: { token: c.bearerToken } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    });
  }
  return decode(s.data.kubeconfig ?? s.data.value ?? s.data.Config);
}

const TOKEN_REQUEST_PLUGIN = fileURLToPath(new URL('../fixtures/plugins/token-request-plugin.mjs', import.meta.url));

/**
 * An exec user like a cloud CLI's: every run of the plugin (test/fixtures/plugins/token-request-plugin.mjs) mints a real
 * ServiceAccount token for `namespace/serviceAccount` on `server` through the TokenRequest API (asked with the admin
 * certificate; namespace and ServiceAccount created when missing) and returns it with its expirationTimestamp,
 * `seconds` (default 900, the 15 minutes EKS tokens live) from now.
 */
export function tokenRequestExecUser(
  state: { admin: { certFile: string; keyFile: string } },
  server: { url: string; caFile: string },
  o: { namespace: string; serviceAccount: string; seconds?: number },
): KubeconfigUser {
  return {
    exec: {
      command: process.execPath,
      args: [
        TOKEN_REQUEST_PLUGIN,
        '--server',
        server.url,
        '--ca',
        server.caFile,
        '--cert',
        state.admin.certFile,
        '--key',
        state.admin.keyFile,
        '--namespace',
        o.namespace,
        '--service-account',
        o.serviceAccount,
        '--seconds',
        String(o.seconds ?? 900),
      ],
    },
  };
}
