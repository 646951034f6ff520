import { X509Certificate, createPrivateKey } from 'node:crypto';
import { sep } from 'node:path';

import { fileProblem, readNamedFile } from '../base/files.js';
import { isoSeconds, tokenExpires } from './credentials.js';
import { exportMarkerOf } from './export-marker.js';
import { exportGoneLine, recordedSource } from './export-source.js';
import type { ResolvedContext } from './loading-rules.js';
import { registerSecret, registerUrlSecrets } from './redact.js';
import { type ClusterEntry, EXEC_API_VERSION, type ExecConfig, type UserEntry } from './types.js';

/**
 * Whether a context can be used, judged offline the way kubectl judges it before any request: client-go refuses a
 * kubeconfig whose files cannot be read, whose `*-data` is not base64, whose key does not match its certificate, whose
 * exec v1 config has no interactiveMode, or whose server is not a URL. An expired client certificate or token would only
 * be refused by the server, so it is reported here too (`expired 2019-…`). The first problem is the reason shown.
 */
export interface Readiness {
  problems: string[];
  /** Usable, but worth saying (an http server sends the credential in clear). */
  warnings: string[];
}

const INTERACTIVE_MODES = ['Never', 'IfAvailable', 'Always'];
export const PROXY_SCHEMES = ['http:', 'https:', 'socks5:', 'socks5h:'];

/** What client-go's kubeconfig validation says about an exec config (checked when the file is loaded), if anything. */
export function execConfigProblem(exec: ExecConfig): string | undefined {
  if (!exec.command) return 'no command configured';
  if (!exec.apiVersion) return 'apiVersion must be specified to use an exec plugin';
  if (exec.interactiveMode === undefined || (exec.interactiveMode as string) === '') {
    if (exec.apiVersion === EXEC_API_VERSION) {
      return 'interactiveMode must be specified (Never, IfAvailable or Always) for client.authentication.k8s.io/v1';
    }
    return undefined;
  }
  if (!INTERACTIVE_MODES.includes(exec.interactiveMode))
    return `invalid interactiveMode "${exec.interactiveMode}" (Never, IfAvailable or Always)`;
  return undefined;
}

/**
 * The server as a URL, as client-go reads it: a host without a scheme means https (fleet always has TLS settings).
 * Throws a plain message when it is not a URL or not http(s).
 */
export function serverUrl(server: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    url = undefined;
  }
  // `host:6443` parses as a URL whose scheme is "host:"; client-go reads it as a host name.
  if ((!url || !/^[a-z]+:\/\//i.test(server)) && !server.includes('://')) {
    try {
      url = new URL(`https://${server}`);
    } catch {
      url = undefined;
    }
  }
  if (!url || url.hostname === '') throw new Error(`server "${server}" is not a URL`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`server "${server}": unsupported scheme "${url.protocol.replace(/:$/, '')}" (use https)`);
  return url;
}

/** `proxy-url` as client-go accepts it: http, https or socks5. */
export function proxyUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`proxy-url "${value}" is not a URL`);
  }
  if (!PROXY_SCHEMES.includes(url.protocol)) {
    throw new Error(`proxy-url: unsupported scheme "${url.protocol.replace(/:$/, '')}" (http, https or socks5)`);
  }
  registerSecret(url.password ? decodeURIComponent(url.password) : undefined);
  return url;
}

/** base64 as Go's StdEncoding reads it (whitespace-free, padded); Node's decoder would silently skip bad characters. */
export function decodeBase64(value: string, field: string): Buffer {
  const text = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new Error(`${field}: not valid base64`);
  return Buffer.from(text, 'base64');
}

function fileError(what: string, path: string, error: unknown): string {
  const why = fileProblem(error);
  // client-go does not expand ~ in kubeconfig paths: it is relative to the file, which is rarely what was meant.
  const tilde = path.includes(`${sep}~${sep}`) ? ' (kubeconfig paths do not expand ~)' : '';
  return `${what} ${path}: ${why}${tilde}`;
}

/** Reads `*-data` or the file it names; a problem is pushed and undefined returned when neither can be read. */
async function material(entry: ClusterEntry | UserEntry, key: string, problems: string[]): Promise<Buffer | undefined> {
  const data = entry[`${key}-data`];
  const file = entry[key];
  if (typeof data === 'string' && data !== '') {
    try {
      return decodeBase64(data, `${key}-data`);
    } catch (error) {
      problems.push((error as Error).message);
      return undefined;
    }
  }
  if (typeof file === 'string' && file !== '') {
    try {
      return await readNamedFile(file);
    } catch (error) {
      problems.push(fileError(key, file, error));
    }
  }
  return undefined;
}

// Parsed certificates by their PEM text: contexts of one fleet mostly share a few CAs, and parsing one took ~10 µs of
// CPU per context (24 ms over 2,000 contexts in a profile of `clusters list`). null: not a valid certificate.
const parsed = new Map<string, X509Certificate | null>();

function certificate(pem: Buffer, what: string, problems: string[]): X509Certificate | undefined {
  const key = pem.toString('latin1');
  let cert = parsed.get(key);
  if (cert === undefined) {
    try {
      cert = new X509Certificate(pem);
    } catch {
      cert = null;
    }
    parsed.set(key, cert);
  }
  if (cert === null) problems.push(`${what}: not a valid PEM certificate`);
  return cert ?? undefined;
}

export async function checkContext(ctx: ResolvedContext, now = Date.now()): Promise<Readiness> {
  const problems: string[] = [];
  const warnings: string[] = [];
  const { cluster, user } = ctx;
  // An entry fleet exported whose cluster's source is gone (a credential file `creds revoke --file` deleted): no call
  // through it can work, so it is not ready, and this is the reason shown, before anything its exec entry would say.
  // Only files are looked at (lstat); a hub Secret's absence is known only by asking the hub (clusters list --live).
  if (exportMarkerOf(user) && user.exec) {
    const gone = await exportGoneLine(recordedSource(user.exec.args ?? undefined));
    if (gone) problems.push(`exported by fleet: ${gone}`);
  }

  if (!cluster.server) problems.push(`cluster "${ctx.clusterName}" has no server`);
  else {
    try {
      const url = serverUrl(cluster.server);
      registerUrlSecrets(cluster.server);
      if (url.protocol === 'http:')
        warnings.push(
          `server ${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')} is plain http: the credential is sent in clear`,
        );
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (cluster['proxy-url']) {
    try {
      proxyUrl(cluster['proxy-url']);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  if (insecure && (cluster['certificate-authority'] || cluster['certificate-authority-data'])) {
    problems.push('certificate-authority and insecure-skip-tls-verify cannot be used together');
  }
  const ca = await material(cluster, 'certificate-authority', problems);
  if (ca && !insecure) certificate(ca, 'certificate-authority', problems);

  if (user['client-certificate'] || user['client-certificate-data'] || user['client-key'] || user['client-key-data']) {
    const before = problems.length;
    const certPem = await material(user, 'client-certificate', problems);
    const keyPem = await material(user, 'client-key', problems);
    registerSecret(keyPem?.toString('utf8'));
    if (problems.length === before) {
      if (!certPem) problems.push('client-key is set without client-certificate');
      else if (!keyPem) problems.push('client-certificate is set without client-key');
      else {
        const cert = certificate(certPem, 'client-certificate', problems);
        let key;
        try {
          key = createPrivateKey(keyPem);
        } catch {
          problems.push('client-key: not a valid PEM private key');
        }
        if (cert && key) {
          if (!cert.checkPrivateKey(key)) problems.push('client-key does not match client-certificate');
          else if (Date.parse(cert.validTo) <= now)
            problems.push(`client certificate expired ${isoSeconds(new Date(cert.validTo))}`);
        }
      }
    }
  }

  let token = user.token;
  if (!token && user.tokenFile) {
    try {
      token = (await readNamedFile(user.tokenFile)).toString('utf8').trim();
      registerSecret(token);
    } catch (error) {
      problems.push(fileError('tokenFile', user.tokenFile, error));
    }
  }
  if (token) {
    const expires = tokenExpires(token);
    if (expires && Date.parse(expires) <= now) problems.push(`token expired ${expires}`);
  }
  if ((user.token || user.tokenFile) && (user.username || user.password)) {
    problems.push('more than one authentication method (token and basic auth); only one is allowed');
  }
  if (user.exec) {
    if (user['auth-provider']) problems.push('auth-provider cannot be used together with an exec plugin');
    const execProblem = execConfigProblem(user.exec);
    if (execProblem) problems.push(`exec plugin ${user.exec.command ?? ''}: ${execProblem}`.replace('  ', ' '));
  }
  return { problems, warnings };
}
