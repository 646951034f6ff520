// The generated corpus of the differential cache test (issue 38, items 4 and 8): calls of `fleet kubeconfig credential`
// as kubectl makes them, each with a cache directory in some state (a valid entry, one spoiled in one of many ways, a
// link, a FIFO, a directory, an oversized file, an entry already handed to this parent, ...). The same case is laid out
// twice, once for each reader, and test/unit/credential-reader.test.ts requires the same answer and the same files left.
import { createHash } from 'node:crypto';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';

import {
  CredentialCache,
  ENTRY_MAX_BYTES,
  credentialCacheDir,
  credentialFingerprint,
} from '../../src/export/credential-cache.js';
import { type CredentialFlags, credentialIdentity } from '../../src/export/credential-fast.js';
import { readExecRequest } from '../../src/export/exec-info.js';

export const CALLER = 4242;
const V1 = 'client.authentication.k8s.io/v1';

export interface CacheCase {
  flags: CredentialFlags;
  /** Exact argv after `kubeconfig credential` (usually the flags; sometimes not the exported form). */
  args: string[];
  /** KUBERNETES_EXEC_INFO, or undefined. */
  execInfo?: string;
  /** The one the entry is keyed by (a valid request, also when execInfo is spoiled, so a file is there to find). */
  keyInfo: string;
  /** What is at the entry's path. */
  file: FileCase;
  /** Handover files there before the call: callers of the entry id. */
  handedBefore: number[];
  caller: number;
}

export type FileCase =
  | { kind: 'none' }
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'sparse'; size: number }
  | { kind: 'link'; bytes: Buffer }
  | { kind: 'fifo' }
  | { kind: 'dir' }
  /** A valid entry of exactly ENTRY_MAX_BYTES (+ over) bytes: a long token, made when laid out (not per generation). */
  | { kind: 'bound'; cluster: string; expires: string; over: number };

const entryText = (e: Record<string, unknown>) => JSON.stringify(e);
const hex = (n: number, seed: string) => createHash('sha256').update(seed).digest('hex').slice(0, n);

// Strings with what JSON spells in more than one way, or not at all in UTF-8: quotes, controls, U+2028, astral, ...
const oddString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    'tok-a',
    'a"b\\c',
    '\u2028\u2029',
    '\u0000\u001f\u007f',
    '\b\f\n\r\t',
    'é日本😀',
    '\ud800',
    'x\udc00y',
    '<>&',
    '\uFEFF',
  ),
);
const token = fc.oneof(fc.constantFrom('tok-corpus-7f3a9c', 'eyJhbGciOiJSUzI1NiJ9.e30.sig'), oddString);
const future = fc
  .integer({ min: 60, max: 86_400 })
  .map((s) => new Date(Math.floor(Date.now() / 1000 + s) * 1000).toISOString().replace('.000Z', 'Z'));
const past = fc
  .integer({ min: 60, max: 86_400 })
  .map((s) => new Date(Math.floor(Date.now() / 1000 - s) * 1000).toISOString().replace('.000Z', 'Z'));
const expires = fc.oneof(
  { weight: 6, arbitrary: future },
  { weight: 1, arbitrary: past },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '2099-02-30T00:00:00Z',
      '2099-01-01T24:00:00Z',
      '2099-12-31T23:59:60Z',
      '2099-01-01T00:00:00.000Z',
      '2099-01-01T00:00:00+00:00',
      '2099-1-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      'soon',
      '',
    ),
  },
);
const credential = fc.oneof(
  { weight: 4, arbitrary: fc.record({ token }) },
  { weight: 2, arbitrary: fc.record({ clientCertificateData: token, clientKeyData: token }) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        token: fc.option(token, { nil: undefined }),
        clientCertificateData: fc.option(token, { nil: undefined }),
        clientKeyData: fc.option(token, { nil: undefined }),
      },
      { requiredKeys: [] },
    ),
  },
);

const flagsArb: fc.Arbitrary<CredentialFlags> = fc.record(
  {
    cluster: fc.oneof(
      fc.constantFrom('secrets#eu-1', 'kc "a" <x>&y é+ctx', 'c\u2028d', ''),
      fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.startsWith('-')),
    ),
    provider: fc.constantFrom('secrets', 'file'),
    'fleet-config': fc.constant('/etc/fleet/fleet.yaml'),
    kubeconfig: fc.constantFrom('/home/u/.kube/hub.yaml', '/tmp/dir with space/ä.yaml:/tmp/b&c.yaml'),
    context: fc.constant('hub'),
  },
  { requiredKeys: ['cluster'] },
);

const clusterInfo = fc.record(
  {
    server: fc.constantFrom('https://10.0.0.1:6443', 'https://Api.Example.com/', 'https://h:443'),
    'certificate-authority-data': fc.constantFrom('LS0tLS1CRUdJTi<>&==', 'Zm9v', ''),
    'insecure-skip-tls-verify': fc.boolean(),
    'tls-server-name': fc.constantFrom('kubernetes', 'k\u2028'),
  },
  { requiredKeys: ['server'] },
);
const goodInfo = fc
  .tuple(fc.constantFrom(V1, 'client.authentication.k8s.io/v1beta1'), clusterInfo)
  .map(([apiVersion, cluster]) =>
    JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false, cluster } }),
  );
const badInfo = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    '',
    '{',
    JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } }),
    JSON.stringify({ apiVersion: V1, kind: 'ExecCredential' }),
  ),
  fc
    .constantFrom<unknown>(42, null, ['https://10.0.0.1:6443'], {}, '', true)
    .map((server) => JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', spec: { cluster: { server } } })),
  fc.constant(
    JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', spec: { cluster: { Server: 'https://10.0.0.1:6443' } } }),
  ),
  fc.constant(
    JSON.stringify({ apiVersion: V1, Kind: 'ExecCredential', spec: { cluster: { server: 'https://10.0.0.1:6443' } } }),
  ),
  fc.constant(
    JSON.stringify({
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': 5 } },
    }),
  ),
  fc.constant(
    JSON.stringify({
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { cluster: { server: 'https://10.0.0.1:6443', 'insecure-skip-tls-verify': 'yes' } },
    }),
  ),
);

/** A valid entry's value for the case's cluster (or another's), as fleet writes it. */
const entryValue = (cluster: string) =>
  fc.record(
    {
      v: fc.constant(2),
      cluster: fc.oneof(
        { weight: 9, arbitrary: fc.constant(cluster) },
        { weight: 1, arbitrary: fc.constant(`${cluster}x`) },
      ),
      expires,
      id: fc.constantFrom(hex(32, 'a'), hex(32, 'b')),
      credential: fc.option(credential, { nil: undefined, freq: 8 }),
      suspect: fc.option(fc.constantFrom(hex(64, 's'), credentialFingerprint({ token: 'tok-corpus-7f3a9c' })), {
        nil: undefined,
        freq: 3,
      }),
    },
    { requiredKeys: ['v', 'cluster', 'expires', 'id'] },
  );

/** Ways to spoil an entry's text: each is one a lax reader might still take. */
type Spoil = (text: string, value: Record<string, unknown>) => string;
const spoils: fc.Arbitrary<Spoil> = fc.constantFrom<Spoil>(
  (t) => t.slice(0, Math.max(0, t.length - 1 - (t.length % 7))),
  (t) => t.slice(0, Math.floor(t.length / 2)),
  (t) => `${t}\n`,
  (t) => `${t} `,
  (t) => ` ${t}`,
  (t) => `${t}x`,
  (t) => `${t}{}`,
  (t) => `${t}\u0000`,
  (t) => `\uFEFF${t}`,
  (t) => t.replace('"v":', '"V":'),
  (t) => t.replace('"cluster":', '"Cluster":'),
  (t) => t.replace('"credential":', '"Credential":'),
  (t) => t.replace('"token":', '"TOKEN":'),
  (t) => t.replace('"expires":', '"EXPIRES":'),
  (t) => t.replace('{"v":2,', '{"v":2,"v":2,'),
  (t) => t.replace('{"v":2,', '{"v":2,"cluster":"other",'),
  (t, v) =>
    t.replace('"credential":', `"credential":${JSON.stringify(v.credential ?? { token: 'dup' })},"credential":`),
  (t) => t.replace('{"v":2,', '{"v":2,"extra":1,'),
  (t) => t.replace('{"v":2,', '{"v":2,"handedTo":[],'),
  (t) => t.replace('"v":2', '"v":1'),
  (t) => t.replace('"v":2', '"v":3'),
  (t) => t.replace('"v":2', '"v":"2"'),
  (t) => t.replace('"v":2', '"v":2.0'),
  (t) => t.replace('"v":2', '"v":2e0'),
  (t) => t.replace('"v":2', '"v":-0'),
  (t) => t.replace(',', ', '),
  (t) => t.replace(':', ' :'),
  (t) => t.replace(/"id":"[0-9a-f]+"/, '"id":"ABC"'),
  (t) => t.replace(/"id":"[0-9a-f]/, '"id":"\\u0061'),
  (t) => t.replace(/"cluster":"/, '"cluster":"\\u0041'),
  (t) => t.replace(/"cluster":"[^"]*"/, '"cluster":null'),
  (t) => t.replace(/"cluster":"[^"]*"/, '"cluster":7'),
  (t) => t.replace(/"expires":"[^"]*"/, '"expires":1'),
  (t) => t.replace(/"token":"/, '"token":"\\/'),
  (t) => t.replace(/"token":"[^"]*"/, '"token":""'),
  (t) => t.replace(/"token":"[^"]*"/, '"token":null'),
  (t) => t.replace(/"token":"[^"]*"/, '"token":["x"]'),
  (t) => t.replace('"credential":{', '"credential":{"expirationTimestamp":"2099-01-01T00:00:00Z",'),
  (t) => t.replace(/,"credential":\{[^}]*\}/, ',"credential":{}'),
  (t) => t.replace(/,"credential":\{[^}]*\}/, ',"credential":null'),
  (t) => t.replace(/"suspect":"[0-9a-f]+"/, '"suspect":"xyz"'),
  (t) => t.replace('}', ',"suspect":null}'),
  (t) => `[${t}]`,
  (t) => JSON.stringify(t),
  (t) => t.replace(/"token":"([^"]*)"/, '"token":"$1\\ud800"'),
  (t) => t.replace(/é/g, '\\u00e9'),
  (t) => t.replace(/\u2028/g, '\\u2028'),
  (t) => t.replace(/\//g, '\\/'),
);

const bytesOf = (t: string) => Buffer.from(t, 'utf8');

/** The cases: a call and the state of the cache it finds. */
export const cacheCase: fc.Arbitrary<CacheCase> = fc
  .record({
    flags: flagsArb,
    good: goodInfo,
    // One call in six with a KUBERNETES_EXEC_INFO fleet refuses.
    bad: fc.oneof(
      { weight: 5, arbitrary: fc.constant(false as const) },
      { weight: 1, arbitrary: badInfo.map((info) => ({ info })) },
    ),
    argsSpoil: fc.nat(19),
    caller: fc.constantFrom(CALLER, 1, 31337),
  })
  .chain(({ flags, good, bad, argsSpoil, caller }) => {
    const args = Object.entries(flags).flatMap(([n, v]) => [`--${n}`, v]);
    const spoiledArgs =
      argsSpoil === 0
        ? [...args, '--extra', 'x']
        : argsSpoil === 1
          ? [...args, '--cluster', 'again']
          : argsSpoil === 2
            ? [`--cluster=${flags.cluster}`]
            : args;
    const value = entryValue(flags.cluster!);
    const file: fc.Arbitrary<FileCase> = fc.oneof(
      { weight: 2, arbitrary: fc.constant<FileCase>({ kind: 'none' }) },
      { weight: 24, arbitrary: value.map((v): FileCase => ({ kind: 'bytes', bytes: bytesOf(entryText(v)) })) },
      {
        weight: 16,
        arbitrary: fc
          .tuple(value, spoils)
          .map(([v, s]): FileCase => ({ kind: 'bytes', bytes: bytesOf(s(entryText(v), v)) })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            value,
            fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80])),
          )
          .map(([v, junk]): FileCase => {
            const t = bytesOf(entryText({ ...v, credential: { token: 'X' } }));
            const at = t.indexOf('X');
            return { kind: 'bytes', bytes: Buffer.concat([t.subarray(0, at), junk, t.subarray(at + 1)]) };
          }),
      },
      { weight: 2, arbitrary: value.map((v): FileCase => ({ kind: 'link', bytes: bytesOf(entryText(v)) })) },
      { weight: 2, arbitrary: fc.constant<FileCase>({ kind: 'fifo' }) },
      { weight: 2, arbitrary: fc.constant<FileCase>({ kind: 'dir' }) },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(ENTRY_MAX_BYTES + 1, 4 * ENTRY_MAX_BYTES, 300_000_000)
          .map((size): FileCase => ({ kind: 'sparse', size })),
      },
      // At the bound and one past it, with a valid entry's text (a long token).
      {
        weight: 1,
        arbitrary: fc
          .tuple(future, fc.constantFrom(0, 1))
          .map(([expires, over]): FileCase => ({ kind: 'bound', cluster: flags.cluster!, expires, over })),
      },
    );
    return fc.record({
      flags: fc.constant(flags),
      args: fc.constant(spoiledArgs),
      execInfo: fc.constant(bad === false ? good : bad.info),
      keyInfo: fc.constant(good),
      file,
      handedBefore: fc.subarray([CALLER, 1, 31337, 7], { maxLength: 2 }),
      caller: fc.constant(caller),
    });
  });

let lastBound: { key: string; bytes: Buffer } | undefined;
/** The entry text of a 'bound' case: a long token padding it to the size (made once for the two layouts of a case). */
function boundEntry(f: Extract<FileCase, { kind: 'bound' }>): Buffer {
  const key = `${f.cluster}\0${f.expires}\0${f.over}`;
  if (lastBound?.key !== key) {
    const base = entryText({
      v: 2,
      cluster: f.cluster,
      expires: f.expires,
      id: hex(32, 'a'),
      credential: { token: '' },
    });
    const pad = ENTRY_MAX_BYTES + f.over - Buffer.byteLength(base);
    lastBound = {
      key,
      bytes: bytesOf(
        entryText({
          v: 2,
          cluster: f.cluster,
          expires: f.expires,
          id: hex(32, 'a'),
          credential: { token: 'T'.repeat(pad) },
        }),
      ),
    };
  }
  return lastBound.bytes;
}

/** Lays the case out under `root` (its own directory): returns the environment of the call. */
export function layOut(c: CacheCase, root: string, shared: { fifo: string; planted: string }): Record<string, string> {
  const env: Record<string, string> = { XDG_CACHE_HOME: join(root, 'cache'), HOME: root };
  if (c.execInfo !== undefined) env.KUBERNETES_EXEC_INFO = c.execInfo;
  const dir = credentialCacheDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = new CredentialCache(credentialIdentity(c.flags, readExecRequest(c.keyInfo).cluster), dir).path;
  const file = c.file;
  if (file.kind === 'bytes') writeFileSync(path, file.bytes, { mode: 0o600 });
  else if (file.kind === 'bound') writeFileSync(path, boundEntry(file), { mode: 0o600 });
  else if (file.kind === 'sparse') {
    writeFileSync(path, '', { mode: 0o600 });
    truncateSync(path, file.size);
  } else if (file.kind === 'link') {
    writeFileSync(shared.planted, file.bytes, { mode: 0o600 });
    symlinkSync(shared.planted, path);
  } else if (file.kind === 'fifo') linkSync(shared.fifo, path);
  else if (file.kind === 'dir') mkdirSync(path);
  for (const id of [hex(32, 'a')])
    for (const who of c.handedBefore)
      writeFileSync(`${path.slice(0, -'.json'.length)}.handed-${id}-${who}`, '', { mode: 0o600 });
  return env;
}

/** What the cache directory holds after a call: every name, its type, and a file's bytes (by hash when large). */
export function cacheSnapshot(root: string): string {
  const dir = join(root, 'cache/fleet/credentials');
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) return `${name} -> ${readlinkSync(p)}`;
      if (st.isFIFO()) return `${name} fifo`;
      if (st.isDirectory()) return `${name} dir`;
      // A sparse file past the bound: its size says it (reading 300 MB per case would be the test's whole budget).
      const bytes =
        st.size > 2 * ENTRY_MAX_BYTES
          ? `${st.size} bytes`
          : st.size > 4096
            ? `${st.size}:${createHash('sha256').update(readFileSync(p)).digest('hex')}`
            : readFileSync(p).toString('base64');
      return `${name} ${(st.mode & 0o777).toString(8)} ${bytes}`;
    })
    .join('\n');
}
