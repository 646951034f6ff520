// Certificates and keys for the control plane, made with the openssl CLI (OpenSSL 3: `req -x509 -CA` signs in one step).
// TLS and client keys are ECDSA P-256 because they are instant to generate; ServiceAccount signing keys are RSA 2048 so
// tokens are RS256 like on most real clusters.
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const OPENSSL = process.env.FLEET_OPENSSL ?? 'openssl';

export interface KeyPair {
  certFile: string;
  keyFile: string;
}

// Our own minimal config, so the distribution's openssl.cnf (default extensions, policies) does not change the output.
function opensslConfig(dir: string): string {
  const file = join(dir, '.openssl.cnf');
  if (!existsSync(file)) writeFileSync(file, '[req]\ndistinguished_name = dn\n[dn]\n');
  return file;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run(OPENSSL, args, { maxBuffer: 1 << 20 });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

const escapeRdn = (v: string) => v.replace(/[\\/=+]/g, (c) => `\\${c}`);

export function subject(cn: string, orgs: string[] = []): string {
  return `/CN=${escapeRdn(cn)}` + orgs.map((o) => `/O=${escapeRdn(o)}`).join('');
}

export async function makeCa(dir: string, base: string, cn: string): Promise<KeyPair> {
  const pair = { certFile: join(dir, `${base}.crt`), keyFile: join(dir, `${base}.key`) };
  await openssl([
    'req',
    '-config',
    opensslConfig(dir),
    '-x509',
    '-new',
    '-nodes',
    '-utf8',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-keyout',
    pair.keyFile,
    '-out',
    pair.certFile,
    '-days',
    '3650',
    '-subj',
    subject(cn),
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    '-addext',
    'subjectKeyIdentifier=hash',
  ]);
  return pair;
}

export interface LeafOptions {
  ca: KeyPair;
  dir: string;
  base: string;
  cn: string;
  orgs?: string[];
  usage: 'server' | 'client';
  /** Server certificates: IP and DNS subject alternative names. */
  ips?: string[];
  dnsNames?: string[];
  days?: number;
}

export async function makeLeaf(o: LeafOptions): Promise<KeyPair> {
  const pair = { certFile: join(o.dir, `${o.base}.crt`), keyFile: join(o.dir, `${o.base}.key`) };
  const san = [...(o.ips ?? []).map((ip) => `IP:${ip}`), ...(o.dnsNames ?? []).map((d) => `DNS:${d}`)];
  await openssl([
    'req',
    '-config',
    opensslConfig(o.dir),
    '-x509',
    '-new',
    '-nodes',
    '-utf8',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-CA',
    o.ca.certFile,
    '-CAkey',
    o.ca.keyFile,
    '-keyout',
    pair.keyFile,
    '-out',
    pair.certFile,
    '-days',
    String(o.days ?? 365),
    '-subj',
    subject(o.cn, o.orgs),
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'keyUsage=critical,digitalSignature',
    '-addext',
    `extendedKeyUsage=${o.usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
    ...(san.length > 0 ? ['-addext', `subjectAltName=${san.join(',')}`] : []),
  ]);
  return pair;
}

/** RSA key for signing ServiceAccount tokens, plus its public half for verifiers. */
export async function makeSigningKey(dir: string, base: string): Promise<{ keyFile: string; publicKeyFile: string }> {
  const keyFile = join(dir, `${base}.key`);
  const publicKeyFile = join(dir, `${base}.pub`);
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', keyFile]);
  await openssl(['pkey', '-in', keyFile, '-pubout', '-out', publicKeyFile]);
  return { keyFile, publicKeyFile };
}
